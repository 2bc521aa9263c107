"""Real git repositories built by a test (the change gate, measure, provenance): ``Repo``,
``git`` and the ``repo`` and ``run_json`` fixtures (offered to every test by
``tests/conftest.py``)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


class Repo:
    """A git repository in a temporary folder; ``write`` then ``commit``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            target = self.root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))

    def commit(self, message: str = "change") -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--no-gpg-sign", "-m", message)
        return git(self.root, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    made = Repo(tmp_path / "repo")
    monkeypatch.chdir(made.root)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "SOURCE_DATE_EPOCH"):
        monkeypatch.delenv(name, raising=False)
    return made


Run = Callable[..., tuple[int, Any, str]]


@pytest.fixture
def run_json(capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``specgate ARGS --format json``: (exit code, parsed report or None, stderr)."""

    def run(*args: str) -> tuple[int, Any, str]:
        code = main([*args, "--format", "json"])
        out, err = capsys.readouterr()
        return code, (json.loads(out) if out.strip() else None), err

    return run
