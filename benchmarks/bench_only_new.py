"""What ``--only-new`` costs on top of ``--baseline``: the rules run a second time, on
the base revision's copy of each claims file that ``--baseline`` already reads.

Run: ``.venv/bin/python benchmarks/bench_only_new.py [--repeat N] [--files N]``.

A git repository in a temporary folder holds the project's examples (claims files that
read vLLM, SGLang and TensorRT-LLM serving configs, model configs and metrics) copied
``--files`` times over (each copy under its own folder), committed twice: the head
changes one claim in every copy. ``specgate check --baseline HEAD~1`` and ``specgate
check --baseline HEAD~1 --only-new`` run interleaved (one warm-up each), and the median
wall times are compared — target ≤ 2× (the base's files are read once, by
``--baseline``; the rules are cheap beside reading).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TARGET = 2.0


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _make_repo(root: Path, copies: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for index in range(copies):
        shutil.copytree(EXAMPLES, repo / f"copy{index:03d}")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    for claims in sorted(repo.glob("copy*/*/*.specgate.yaml")):
        text = claims.read_text(encoding="utf-8")
        claims.write_text(text.replace("version: 1\n", "version: 1\n# reviewed\n", 1), "utf-8")
    _git(repo, "commit", "-q", "-am", "head")
    return repo


def _time(repo: Path, args: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "specgate", "check", *args, "--format", "json"],
        cwd=repo,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode("utf-8", "replace"))
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--files", type=int, default=20, help="copies of examples/")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="specgate-bench-") as temp:
        repo = _make_repo(Path(temp), args.files)
        claims = len(list(repo.glob("copy*/*/*.specgate.yaml")))
        plain = ["--baseline", "HEAD~1"]
        only_new = [*plain, "--only-new"]
        for command in (plain, only_new):
            _time(repo, command)  # warm-up
        times: dict[str, list[float]] = {"plain": [], "only_new": []}
        for _ in range(args.repeat):
            times["plain"].append(_time(repo, plain))
            times["only_new"].append(_time(repo, only_new))
    base = statistics.median(times["plain"])
    ours = statistics.median(times["only_new"])
    ratio = ours / base
    print(f"{claims} claims files, median of {args.repeat}")
    print(f"check --baseline HEAD~1             {base:8.3f} s")
    print(f"check --baseline HEAD~1 --only-new  {ours:8.3f} s")
    verdict = "ok" if ratio <= TARGET else "OVER"
    print(f"ratio {ratio:.2f} (target <= {TARGET:g}) {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
