"""Seconds the Action spends installing specgate: pip, uv, and the cached environment.

Run: ``.venv/bin/python benchmarks/action_install.py [--repeat N] [--python PATH] [--uv PATH]``.

It runs the install commands of the Action with bash, in a runner-like environment
(``RUNNER_TEMP``, ``GITHUB_ACTION_PATH`` = this checkout, ``GITHUB_OUTPUT``), and prints
the median wall time of (one warm-up run of each first):

- **0.1**: the 0.1 install step, verbatim in :data:`BEFORE` (a venv with pip, then
  ``python -m pip install "$GITHUB_ACTION_PATH"``);
- **pip, cold**: action.yml's ``env`` and ``install`` steps with ``cache-hit`` empty and
  no uv on PATH, so the step's pip branch runs (the install of the release before uv:
  ``venv --without-pip`` + the setup-python interpreter's ``pip --python``), with an
  empty pip cache each run (a fresh hosted runner: every wheel downloaded);
- **uv, cold**: the same steps with uv on PATH (what ``astral-sh/setup-uv`` leaves), an
  empty uv cache each run; the ratio **uv, cold / pip, cold** is the cold start the
  Action gains (setup-uv's own download of the uv binary, a few seconds' fraction on a
  hosted runner, is not run here);
- **pip, warm** and **uv, warm**: both with their download caches kept between runs;
- **cache hit**: ``cache-hit`` = ``true`` and the environment restored in place (what
  actions/cache leaves on a warm runner).

The restore itself (actions/cache downloading the environment's tarball) does not
happen here; GitHub's hosted runners restore a cache of this size (the environment
without pip, a few MB) in about a second, which is not measured.
The interpreter is ``--python`` (default: the one this venv was made from, standing
in for setup-python's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

#: The install step of specgate 0.1's action.yml, as it was.
BEFORE = """\
set -euo pipefail
venv="$RUNNER_TEMP/specgate-venv"
rm -rf -- "$venv"
"$SPECGATE_PYTHON" -m venv "$venv"
if [ -f "$venv/bin/python" ]; then
  python="$venv/bin/python"
else
  python="$venv/Scripts/python.exe"  # Windows runners
fi
"$python" -m pip install --disable-pip-version-check --no-input "$GITHUB_ACTION_PATH"
echo "python=$python" >> "$GITHUB_OUTPUT"
"""


def _step(step_id: str) -> str:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    for step in action["runs"]["steps"]:
        if step.get("id") == step_id:
            return str(step["run"])
    raise SystemExit(f"action.yml has no step {step_id!r}")


def _bash(script: str, env: dict[str, str], cwd: Path) -> dict[str, str]:
    """Run ``script`` as the runner runs ``shell: bash``; returns its step outputs."""
    outputs = cwd / "github_output"
    outputs.write_text("", encoding="utf-8")
    full = {**env, "GITHUB_OUTPUT": str(outputs)}
    path = cwd / "step.sh"
    path.write_text(script, encoding="utf-8")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)],
        cwd=cwd,
        env=full,
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"the step failed ({done.returncode}):\n{done.stderr}")
    pairs = (line.split("=", 1) for line in outputs.read_text("utf-8").splitlines() if "=" in line)
    return dict(pairs)


def _after(env: dict[str, str], cwd: Path, *, hit: bool, cold: bool = False) -> None:
    if cold:  # an empty download cache for this run
        caches = Path(tempfile.mkdtemp(dir=cwd))
        env = {**env, "PIP_CACHE_DIR": str(caches / "pip"), "UV_CACHE_DIR": str(caches / "uv")}
    located = _bash(_step("env"), env, cwd)
    _bash(
        _step("install"),
        {**env, "SPECGATE_VENV": located["venv"], "SPECGATE_CACHE_HIT": "true" if hit else ""},
        cwd,
    )


def _median(run: object, repeat: int) -> float:
    assert callable(run)
    run()  # warm-up: fills pip's cache (and, for a hit, builds the environment)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3)")
    parser.add_argument(
        "--python",
        default=getattr(sys, "_base_executable", sys.executable),
        help="the interpreter setup-python would provide",
    )
    parser.add_argument(
        "--uv", default=shutil.which("uv"), help="the uv setup-uv would provide (default: on PATH)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        runner_temp = work / "runner_temp"
        runner_temp.mkdir()
        action_path = work / "action"
        shutil.copytree(
            ROOT,
            action_path,
            ignore=shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "*.egg-info"),
        )
        if not args.uv:
            raise SystemExit("no uv found: pass --uv PATH (pip install uv)")
        plain_path = os.pathsep.join(
            p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "uv").exists()
        )
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))},
            "PATH": plain_path,
            "PYTHONUTF8": "1",
            "RUNNER_TEMP": str(runner_temp),
            "RUNNER_OS": "Linux",
            "GITHUB_ACTION_PATH": str(action_path),
            "SPECGATE_PYTHON": args.python,
        }
        with_uv = {**env, "PATH": str(Path(args.uv).parent) + os.pathsep + plain_path}
        times = {
            "0.1 (venv + pip install)": _median(
                lambda: _bash(BEFORE, env, runner_temp), args.repeat
            ),
            "pip, cold": _median(
                lambda: _after(env, runner_temp, hit=False, cold=True), args.repeat
            ),
            "uv, cold": _median(
                lambda: _after(with_uv, runner_temp, hit=False, cold=True), args.repeat
            ),
            "pip, warm": _median(lambda: _after(env, runner_temp, hit=False), args.repeat),
            "uv, warm": _median(lambda: _after(with_uv, runner_temp, hit=False), args.repeat),
            "cache hit (warm runner)": _median(
                lambda: _after(with_uv, runner_temp, hit=True), args.repeat
            ),
        }
    print(f"{'install step':<34} {'median s':>9}")
    for name, seconds in times.items():
        print(f"{name:<34} {seconds:>9.2f}")
    print(
        f"uv, cold / pip, cold: {times['uv, cold'] / times['pip, cold']:.3f} (target <= 0.35); "
        f"uv, warm / pip, warm: {times['uv, warm'] / times['pip, warm']:.3f}; "
        f"cache hit / pip, cold: {times['cache hit (warm runner)'] / times['pip, cold']:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
