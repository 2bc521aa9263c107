"""Helpers for the end-to-end tests: run the CLI in-process, from ``tests/data``, or in a
temporary git repository holding copies of the fixtures."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from specgate.cli.main import main

DATA = Path(__file__).resolve().parent.parent / "data"
ROOT = DATA.parent.parent


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``specgate`` in-process: (exit code, stdout, stderr)."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def in_data(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from ``tests/data``: claims files are ``integration/…``, real files ``real/…``."""
    monkeypatch.chdir(DATA)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    return DATA


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository whose ``data/`` holds copies of ``integration/`` and ``real/``.

    The current folder is ``data/`` (not the top level), so repository-relative paths
    (``data/real/…``) differ from the paths shown relative to the current folder.
    """
    top = tmp_path / "repo"
    (top / "data").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    for name in ("integration", "real"):
        shutil.copytree(DATA / name, top / "data" / name)
    monkeypatch.chdir(top / "data")
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    return top
