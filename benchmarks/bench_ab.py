"""Two installs of specgate on bench.py's 10,000-file trees, interleaved in one run.

Run: ``.venv/bin/python benchmarks/bench_ab.py --before OTHER/.venv/bin/specgate
[--after .venv/bin/specgate] [--repeat 7] [--scale 1]``. Builds the plain tree (10,000
self-contained claims files) and the mixed one (a quarter referencing a shared serving
config, model config and metrics log) once, then times ``specgate check`` of each tree
with each install in turn. Prints the median CPU seconds of the child process (user +
system: less sensitive to other load on the machine than wall time) and the wall time,
and the after / before ratios. Used to hold a change to "the 10,000-file run grows by at
most 5 %" (a branch against the main it started from).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench
from timing import children_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the baseline specgate executable")
    parser.add_argument("--after", default=str(Path(sys.executable).parent / "specgate"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--scale", type=int, default=1, help="divide the file counts")
    args = parser.parse_args()
    count = 10000 // args.scale
    installs = {"before": args.before, "after": args.after}
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        trees = {
            "plain": bench._tree(work / "plain", count, referencing=0),
            "mixed": bench._tree(work / "mixed", count, referencing=count // 4),
        }
        cpu: dict[tuple[str, str], list[float]] = {}
        wall: dict[tuple[str, str], list[float]] = {}
        for exe in installs.values():  # warm-up: bytecode compiled, files cached
            for tree in trees.values():
                subprocess.run(
                    [exe, "check", str(tree)], capture_output=True, env=bench.ENV, check=False
                )
        for _ in range(args.repeat):
            for tree_name, tree in trees.items():
                for name, exe in installs.items():
                    used, start = children_cpu(), time.perf_counter()
                    done = subprocess.run(
                        [exe, "check", str(tree)], capture_output=True, env=bench.ENV, check=False
                    )
                    wall.setdefault((name, tree_name), []).append(time.perf_counter() - start)
                    cpu.setdefault((name, tree_name), []).append(children_cpu() - used)
                    if done.returncode not in (0, 1):
                        raise SystemExit(f"{exe} exited {done.returncode}")
    for tree_name in trees:
        b, a = (statistics.median(cpu[(n, tree_name)]) for n in installs)
        wb, wa = (statistics.median(wall[(n, tree_name)]) for n in installs)
        print(
            f"{tree_name:6} {count:,} files: CPU s {b:.3f} → {a:.3f} ({a / b:.3f}), "
            f"wall s {wb:.3f} → {wa:.3f} ({wa / wb:.3f}), median of {args.repeat}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
