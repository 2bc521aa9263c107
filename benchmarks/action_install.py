"""Seconds the Action spends installing specgate, before and after the cached environment.

Run: ``.venv/bin/python benchmarks/action_install.py [--repeat N] [--python PATH]``.

It runs the install commands of the Action with bash, in a runner-like environment
(``RUNNER_TEMP``, ``GITHUB_ACTION_PATH`` = this checkout, ``GITHUB_OUTPUT``), with a
warm pip cache (one warm-up run first), and prints the median wall time of:

- **before**: the 0.1 install step, verbatim in :data:`BEFORE` (a venv with pip,
  then ``python -m pip install "$GITHUB_ACTION_PATH"``);
- **after, cache miss**: action.yml's ``env`` and ``install`` steps as written today,
  with ``steps.cache.outputs.cache-hit`` empty (a first run, or the key changed);
- **after, cache hit**: the same steps with ``cache-hit`` = ``true`` and the
  environment restored in place (what actions/cache leaves on a warm runner).

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


def _after(env: dict[str, str], cwd: Path, *, hit: bool) -> None:
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
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))},
            "PYTHONUTF8": "1",
            "RUNNER_TEMP": str(runner_temp),
            "RUNNER_OS": "Linux",
            "GITHUB_ACTION_PATH": str(action_path),
            "SPECGATE_PYTHON": args.python,
        }
        before = _median(lambda: _bash(BEFORE, env, runner_temp), args.repeat)
        cold = _median(lambda: _after(env, runner_temp, hit=False), args.repeat)
        warm = _median(lambda: _after(env, runner_temp, hit=True), args.repeat)
    print(f"{'install step':<34} {'median s':>9}")
    print(f"{'before (0.1: venv + pip install)':<34} {before:>9.2f}")
    print(f"{'after, cache miss':<34} {cold:>9.2f}")
    print(f"{'after, cache hit (warm runner)':<34} {warm:>9.2f}")
    print(f"warm / before: {warm / before:.3f}; miss / before: {cold / before:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
