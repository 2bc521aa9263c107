"""Helpers for the hostile-repository tests (docs/trust.md#hostile-repositories)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

BASE = """\
version: 1
deployments:
  - name: dep
    speculation:
      enabled: true
      mechanism: eagle3
      draft_length: 3
      draft_depth_ratio: 0.05
    evidence:
      accept_length: 2.4
      cache_coherence_eval: true
"""

FORMATS = ("text", "json", "github", "sarif")


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> dict:  # type: ignore[type-arg]
        return json.loads(self.out)  # type: ignore[no-any-return]


def run(
    args: list[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    stdin: bytes | None = None,
) -> Result:
    """``specgate ARGS`` in a child process (both channels, real exit code)."""
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "specgate", *args],
        cwd=cwd,
        capture_output=True,
        env=full,
        timeout=timeout,
        check=False,
        input=stdin,
    )
    return Result(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty repository root (a ``.git`` folder is what specgate looks for)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def with_engine(reference: str, *, drop_draft_length: bool = False) -> str:
    """BASE with ``engine: vllm`` and an ``engine_config`` line (YAML text as given)."""
    text = BASE.replace(
        "      mechanism: eagle3\n", f"      engine: vllm\n      engine_config: {reference}\n"
    )
    if drop_draft_length:
        text = text.replace("      draft_length: 3\n", "")
    return text


class InProcess:
    """``specgate ARGS`` through :func:`specgate.cli.main.main` in this process (fast)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
        self.monkeypatch = monkeypatch
        self.capsys = capsys
        for name in (
            "GITHUB_STEP_SUMMARY",
            "GITHUB_OUTPUT",
            "GITHUB_SERVER_URL",
            "GITHUB_REPOSITORY",
            "GITHUB_SHA",
            "GITHUB_ACTION_REPOSITORY",
            "GITHUB_ACTION_REF",
        ):
            monkeypatch.delenv(name, raising=False)

    def __call__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Result:
        from specgate.cli.main import main

        self.monkeypatch.chdir(cwd)
        for name, value in (env or {}).items():
            self.monkeypatch.setenv(name, value)
        self.capsys.readouterr()
        code = main(args)
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)


@pytest.fixture
def sg(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> InProcess:
    return InProcess(monkeypatch, capsys)
