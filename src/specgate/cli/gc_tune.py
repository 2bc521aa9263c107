"""Imported first by :mod:`specgate.cli.main`, before the command's imports: raises the
cyclic collector's first threshold.

Start-up allocates hundreds of thousands of objects that live until exit (classes,
functions, the data tables), and at the default threshold (700 allocations) the
collector walks them again and again and finds no garbage. mypy does the same, as
early, for the same reason (``mypy/gctune.py`` in python/mypy at 9a2c6256:
``gc.set_threshold(200 * 1000, 30, 30)``). It cut 2.8 % of the instructions of a
one-file ``specgate check`` (``benchmarks/startup_instructions.py``). Only the command
line imports this module; a program that imports specgate's library keeps its own
collector settings.
"""

import gc
import sys

if sys.implementation.name == "cpython":
    gc.set_threshold(200_000, 30, 30)
