"""Fixtures shared across the test packages: ``check_text`` (check a claims text
in-process) and the git-repository fixtures of :mod:`tests.support.git_repo`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.git_repo import repo, run_json

from specgate.check.report import FileReport
from specgate.check.run import CheckOptions, check_file

__all__ = ["check_text", "repo", "run_json"]


@pytest.fixture
def check_text(tmp_path: Path) -> Callable[..., FileReport]:
    """Write ``text`` to ``tmp_path/name`` and check it; returns the file report."""

    def run(text: str, name: str = "c.specgate.yaml", **options: float) -> FileReport:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return check_file(path, name, CheckOptions(**options))

    return run
