"""Helpers shared by the seam tests: paths, a clean environment, git, fixture repos."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
FIXTURES = PROJECT / "tests" / "data" / "seams"
BIN = Path(sys.executable).parent

# Variables of the surrounding shell or CI that would change what the tools do.
_DROPPED_PREFIXES = ("GITHUB_", "RUNNER_", "PRE_COMMIT", "PIP_", "SPECGATE_", "GIT_")
_DROPPED = frozenset({"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CI", "NO_COLOR", "FORCE_COLOR"})


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test process's environment without CI, pip, git or pre-commit settings,
    with a fixed git identity and no user or system git config, plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_DROPPED_PREFIXES) and key not in _DROPPED
    }
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "specgate tests",
            "GIT_AUTHOR_EMAIL": "tests@specgate.invalid",
            "GIT_COMMITTER_NAME": "specgate tests",
            "GIT_COMMITTER_EMAIL": "tests@specgate.invalid",
            "LC_ALL": "C.UTF-8",
        }
    )
    env.update(extra or {})
    return env


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` under :func:`clean_env`; returns stdout, raises on failure."""
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}:\n{done.stderr}")
    return done.stdout


def make_repo(root: Path, files: Mapping[str, str | Path]) -> Path:
    """A fresh git repository at ``root`` holding ``files`` (repo path → text, or a
    fixture file to copy), all added to the index and committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, target)
        else:
            target.write_text(content, encoding="utf-8")
    git(root, "add", "--all")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "fixtures")
    return root


def value_position(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the value in the line ``key: value`` that contains
    ``needle`` (the column of the first character after ``": "``)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number, line.index(": ", line.index(needle)) + 3
    raise AssertionError(f"{needle!r} is not in the fixture")
