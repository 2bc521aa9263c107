"""Timing helpers shared by the in-process benchmarks of this folder."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(work: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs of ``work``, in seconds (the least disturbed by
    whatever else the machine is doing)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)
