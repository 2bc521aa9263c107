"""Regression tests for bugs found while wiring referenced files end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.checker import CheckOptions, check_file

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(autouse=True)
def _in_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)


def codes(path: str) -> list[tuple[str, str | None, int | None, int | None]]:
    report = check_file(Path(path), path, CheckOptions())
    assert report.error is None, report.error
    return [(f.code, f.file, f.line, f.column) for d in report.deployments for f in d.findings]


def test_claims_draft_length_that_differs_from_the_engine_is_judged_as_its_own_chain() -> None:
    path = "integration/fixes/claims-d-differs-from-engine.specgate.yaml"
    report = check_file(Path(path), path, CheckOptions())
    (deployment,) = report.deployments
    m = deployment.metrics
    assert m.draft_length == 31
    assert m.verify_tokens == 32  # 31 + 1, not the recipe's 7 + 1 = 8
    assert m.tile_aligned is True  # G·32 = 8·32 = 256 = 2·128
    found = [f.code for f in deployment.findings]
    assert "SG301" in found
    assert "SG201" not in found


def test_speculation_profile_inconsistency_points_at_the_rates_line() -> None:
    # bench/speculation_profile-rising.json, line 6: '  "marginal_accept_rates": [0.6, 0.7, 0.2],'
    # (a list: the finding sits on its key, column 3), not line 7 (mean_accept_length).
    assert ("SG305", "integration/bench/speculation_profile-rising.json", 6, 3) in codes(
        "integration/rules/sg305-fail.specgate.yaml"
    )
