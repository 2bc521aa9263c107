"""The least any one-file check written in Python with specgate's libraries can cost.

A reference for ``bench.py``, not part of specgate: it imports only what a check cannot
do without (argparse for the command line, PyYAML with its libyaml parser for the claims
file, ``fractions`` for the exact G), parses ``check PATH ...`` as specgate's command line
does, composes each file with ``yaml.CSafeLoader`` and exits. Nothing is checked or
reported, so its time is the interpreter's start-up plus those imports: the floor under
the one-file ratio of ``bench.py``.

Run: ``python benchmarks/library_floor.py check FILE [FILE ...]``.
"""

from __future__ import annotations

import argparse
import fractions
import sys

import yaml


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="specgate")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check")
    check.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    for path in args.paths:
        with open(path, encoding="utf-8") as handle:
            yaml.compose(handle, Loader=yaml.CSafeLoader)
    fractions.Fraction(40, 8)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
