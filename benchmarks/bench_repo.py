"""Time of ``specgate check`` over a 50-file repository, two source trees in one run
(issue 24: "the time a check of a 50-file repository takes before and after").

Run: ``.venv/bin/python benchmarks/bench_repo.py --before OTHER_CHECKOUT [--after .]
[--repeat 10]``. It copies into a scratch git repository the project's ``examples/``
and the first seven published-config folders of ``tests/data/published-2026-12/`` (51
files, 18 claims files: vLLM recipes, Ascend, Truss; serving configs, model configs,
shell launchers), commits them, then runs ``python -m specgate check`` at the repository
root with each tree's ``src`` first on ``PYTHONPATH``, alternating the two so both see
the same machine load. Prints the fastest CPU time (user + system of the child: less
sensitive to other load than wall time) and wall time of each, the runs least disturbed by
other work, and after / before. Both trees are byte-compiled first, as an installed
tool is. Both trees' exit codes are printed too: a check that
stops early is not faster, it is wrong.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import children_cpu

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "tests" / "data" / "published-2026-12"


def build(into: Path) -> int:
    """Fill ``into`` with the repository and commit it; returns its file count."""
    shutil.copytree(ROOT / "examples", into / "examples")
    for folder in sorted(p for p in PUBLISHED.iterdir() if p.is_dir())[:7]:
        shutil.copytree(folder, into / f"pub-{folder.name}")
    git = ["git", "-C", str(into), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "bench"], check=True)
    return sum(1 for p in into.rglob("*") if p.is_file() and ".git" not in p.parts)



def run(tree: Path, repo: Path) -> tuple[float, float, int]:
    """One ``specgate check`` of ``repo`` with ``tree``'s sources: (CPU seconds, wall
    seconds, exit code)."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "specgate", "check"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return children_cpu() - cpu, time.perf_counter() - start, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--after", type=Path, default=ROOT, help="this checkout by default")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "repo"
        repo.mkdir()
        files = build(repo)
        trees = {"before": args.before.resolve(), "after": args.after.resolve()}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        wall: dict[str, list[float]] = {name: [] for name in trees}
        codes: dict[str, int] = {}
        for tree in trees.values():
            # Byte-compiled as an installed tool is (PYTHONDONTWRITEBYTECODE may be set).
            compileall.compile_dir(tree / "src", quiet=1)
            run(tree, repo)  # warm-up: fill the page cache
        for _ in range(args.repeat):
            for name, tree in trees.items():
                used, seconds, codes[name] = run(tree, repo)
                cpu[name].append(used)
                wall[name].append(seconds)
    print(f"repository: {files} files")
    for name in trees:
        print(
            f"{name + ':':8}CPU {min(cpu[name]):.3f} s, wall {min(wall[name]):.3f} s"
            f" (exit {codes[name]})"
        )
    print(
        f"after / before: CPU {min(cpu['after']) / min(cpu['before']):.3f},"
        f" wall {min(wall['after']) / min(wall['before']):.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
