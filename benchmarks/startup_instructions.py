"""Start-up cost of ``specgate check`` on one claims file, in instructions, against the
library floor (``library_floor.py``; issue 23: target ≤ 1.3×).

Wall time on a busy machine wanders by tens of percent; the number of instructions a
run executes barely moves, so this counts them with callgrind (valgrind must be
installed). Each command runs under ``valgrind --tool=callgrind
--callgrind-out-file=/dev/null`` once per fixed ``PYTHONHASHSEED`` (string hashing
changes dict and set layouts, so each seed is a slightly different run), and the
median of the "Collected" totals is compared. The sources are byte-compiled first,
as an installed tool's are, so no run counts writing ``.pyc`` files.

Both commands run from the repository root on the same file, as a user types them:
``specgate check examples/passing/llama4-maverick-eagle3.specgate.yaml`` (the console
script of this interpreter, with this checkout's ``src`` first on the path) and
``python benchmarks/library_floor.py check`` on the same path.

Run: ``.venv/bin/python benchmarks/startup_instructions.py [--seeds 0,1,2] [FILE]``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = Path("examples") / "passing" / "llama4-maverick-eagle3.specgate.yaml"
FLOOR = ROOT / "benchmarks" / "library_floor.py"
TARGET = 1.3
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)


def instructions(command: list[str], seed: int) -> int:
    """The instructions one run of ``command`` executes, as callgrind counts them."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = str(seed)
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            *command,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"no callgrind total for {command}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2", help="PYTHONHASHSEED values, comma-separated")
    parser.add_argument("file", nargs="?", default=str(EXAMPLE), help="claims file (from the root)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    seeds = [int(seed) for seed in args.seeds.split(",")]
    compileall.compile_dir(ROOT / "src", quiet=1)
    specgate = str(Path(sys.executable).parent / "specgate")
    commands = {
        "library floor": [sys.executable, str(FLOOR), "check", args.file],
        "specgate check": [specgate, "check", args.file],
    }
    medians: dict[str, float] = {}
    for name, command in commands.items():
        counts = [instructions(command, seed) for seed in seeds]
        medians[name] = statistics.median(counts)
        shown = ", ".join(f"{count / 1e6:.1f}M" for count in counts)
        print(f"{name:15} median {medians[name] / 1e6:7.1f}M instructions  ({shown})")
    ratio = medians["specgate check"] / medians["library floor"]
    verdict = "meets" if ratio <= TARGET else "misses"
    print(f"ratio {ratio:.3f}× ({verdict} the ≤ {TARGET}× target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
