"""Shared helpers for the core tests: check a claims text or file in-process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from specgate.check.report import FileReport
from specgate.check.run import CheckOptions, check_file

DATA = Path(__file__).resolve().parent.parent / "data" / "core"


@pytest.fixture
def check_text(tmp_path: Path) -> Callable[..., FileReport]:
    """Write ``text`` to ``tmp_path/name`` and check it; returns the file report."""

    def run(text: str, name: str = "c.specgate.yaml", **options: float) -> FileReport:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return check_file(path, name, CheckOptions(**options))

    return run
