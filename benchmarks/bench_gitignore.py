"""The ``.gitignore`` work budget against the real cost of matching (issue 25), as
ratios against a baseline measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_gitignore.py [--repeat N]``. Trees (each a git
repository holding one claims file at the top):

- *hostile*: a 255 KB top-level ``.gitignore`` of 38,015 short literal patterns over
  400 folders of 3 files each (the review's reproducer);
- *monorepo*: 300 folders each holding a 90-pattern ``.gitignore`` in the style of
  GitHub's Python template, plus a top-level one (what a real large repository holds);
- *baseline*: the monorepo tree without any ``.gitignore``.

Timed: ``specgate check .`` (median wall time of N runs after a warm-up) on each, and
on *hostile* under the old charge (characters only: ``TEST_COST`` set to 0). Printed:
each time, its ratio to *baseline*, and whether the run ended in the budget's input
error (exit 2). Target: *hostile* stays within the documented ~6 s bound (it ends at
the budget, exit 2) while *monorepo* completes (exit 0 or 1) far inside it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLAIMS = """\
version: 1
deployments:
  - name: chat
    model: {name: meta-llama/Llama-3.1-8B-Instruct, query_heads: 32, kv_heads: 8}
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}
    evidence: {accept_length: 2.6, cache_coherence_eval: true}
    claims: {speedup: 2.0}
"""
PYTHON_STYLE = [
    "__pycache__/", "*.py[cod]", "*$py.class", "*.so", ".Python", "build/", "develop-eggs/",
    "dist/", "downloads/", "eggs/", ".eggs/", "lib/", "lib64/", "parts/", "sdist/", "var/",
    "wheels/", "*.egg-info/", ".installed.cfg", "*.egg", "MANIFEST", "*.manifest", "*.spec",
    "pip-log.txt", "pip-delete-this-directory.txt", "htmlcov/", ".tox/", ".nox/",
    ".coverage", ".coverage.*", ".cache", "nosetests.xml", "coverage.xml", "*.cover",
    "*.py,cover", ".hypothesis/", ".pytest_cache/", "*.mo", "*.pot", "*.log",
    "local_settings.py", "db.sqlite3", "db.sqlite3-journal", "instance/", ".webassets-cache",
    ".scrapy", "docs/_build/", ".pybuilder/", "target/", ".ipynb_checkpoints", "profile_default/",
    "ipython_config.py", ".pdm.toml", "__pypackages__/", "celerybeat-schedule", "celerybeat.pid",
    "*.sage.py", ".env", ".venv", "env/", "venv/", "ENV/", "env.bak/", "venv.bak/",
    ".spyderproject", ".spyproject", ".ropeproject", "/site", ".mypy_cache/", ".dmypy.json",
    "dmypy.json", ".pyre/", ".pytype/", "cython_debug/", "*.swp", "*.swo", ".idea/",
    ".vscode/", "*.tmp", "*.bak", "*.orig", "*.rej", ".DS_Store", "Thumbs.db", "*.iml",
    "node_modules/", "coverage/", ".ruff_cache/", "*.whl", "/out", "!keep.log",
]


def _repo(root: Path) -> None:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "claims.specgate.yaml").write_text(CLAIMS, "utf-8")


def hostile(root: Path) -> None:
    _repo(root)
    lines = [f"q{i}" for i in range(38_015)]  # 251 KB: under the 256 KiB file bound
    (root / ".gitignore").write_text("\n".join(lines) + "\n", "utf-8")
    for d in range(400):
        folder = root / f"d{d}"
        folder.mkdir()
        for f in range(3):
            (folder / f"f{f}.txt").write_text("x", "utf-8")


def monorepo(root: Path, *, ignores: bool = True) -> None:
    _repo(root)
    text = "\n".join(PYTHON_STYLE) + "\n"
    if ignores:
        (root / ".gitignore").write_text(text, "utf-8")
    for d in range(300):
        folder = root / f"pkg{d}" / "src"
        folder.mkdir(parents=True)
        if ignores:
            (root / f"pkg{d}" / ".gitignore").write_text(text, "utf-8")
        for f in range(35):
            (folder / f"m{f}.py").write_text("x = 1\n", "utf-8")


def _time(root: Path, repeat: int, *, old_charge: bool = False) -> tuple[float, str]:
    prelude = "import specgate.project.gitignore as g; g.TEST_COST = 0; " if old_charge else ""
    code = prelude + "import sys; from specgate.cli.main import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "check", "."]
    subprocess.run(argv, cwd=root, capture_output=True, check=False)  # warm-up
    times, seen = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=root, capture_output=True, check=False, text=True)
        times.append(time.perf_counter() - start)
        seen = f"exit {done.returncode}" + (
            f" ({done.stderr.strip()[:90]})" if done.returncode == 2 else ""
        )
    return statistics.median(times), seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        hostile(base / "hostile")
        monorepo(base / "monorepo")
        monorepo(base / "baseline", ignores=False)
        rows = [
            ("baseline (no .gitignore)", *_time(base / "baseline", args.repeat)),
            ("monorepo (301 .gitignore)", *_time(base / "monorepo", args.repeat)),
            ("hostile (38,015 patterns)", *_time(base / "hostile", args.repeat)),
            ("hostile, old charge", *_time(base / "hostile", 1, old_charge=True)),
        ]
    baseline = rows[0][1]
    for name, seconds, seen in rows:
        print(f"{name:28} {seconds:7.2f} s  {seconds / baseline:6.1f}x baseline  {seen}")


if __name__ == "__main__":
    main()
