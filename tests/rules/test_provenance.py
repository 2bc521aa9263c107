"""``evidence.provenance`` and SG405–SG409 (docs/change-gate.md#provenance-rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.git_repo import Run

CLAIMS = """\
version: 1
deployments:
  - name: chat-8b
    model:
      name: meta-llama/Llama-3.1-8B-Instruct
    speculation:
      enabled: true
      mechanism: eagle3
      draft_length: 3
      draft_depth_ratio: 0.05
    workload:
{workload}
    evidence:
      accept_length: 2.6
      cache_coherence_eval: true
      provenance:
{provenance}
{policy}"""


def write(folder: Path, provenance: str, workload: str = "name: chat", policy: str = "") -> None:
    def indent(text: str, by: int) -> str:
        return "\n".join(" " * by + line for line in text.split(";"))

    text = CLAIMS.format(
        workload=indent(workload, 6),
        provenance=indent(provenance, 8),
        policy=("    policy:\n" + indent(policy, 6) + "\n") if policy else "",
    )
    (folder / "specgate.yaml").write_text(text, encoding="utf-8")


def findings(report: Any) -> list[tuple[str, str]]:
    return [(f["code"], f["message"]) for f in report["files"][0]["deployments"][0]["findings"]]


def codes(report: Any) -> set[str]:
    return {code for code, _ in findings(report)}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    return tmp_path


@pytest.mark.parametrize(
    ("measured", "today", "fires"),
    [
        ("2025-01-01", "2025-04-01", False),  # 90 days: not more than 90
        ("2025-01-01", "2025-04-02", True),  # 91 days
        ("2025-01-01T23:30:00-02:00", "2025-04-02", False),  # 01:30Z on Jan 2: 90 days
        ("2025-01-02", "2025-01-01", True),  # after today: its own message
    ],
)
def test_sg405_age_in_whole_utc_days(
    here: Path, run_json: Run, measured: str, today: str, fires: bool
) -> None:
    write(here, f"measured_at: '{measured}'")
    _, report, _ = run_json("check", "--today", today)
    assert ("SG405" in codes(report)) is fires
    if measured == "2025-01-02":
        assert any("after today" in m for c, m in findings(report) if c == "SG405")


def test_sg405_policy_and_source_date_epoch(
    here: Path, run_json: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(here, "measured_at: 2025-01-01", policy="max_evidence_age_days: 10")
    # SOURCE_DATE_EPOCH 1736208000 = 2025-01-07T00:00:00Z: 6 days, within 10.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1736208000")
    _, report, _ = run_json("check")
    assert "SG405" not in codes(report)
    # --today wins over SOURCE_DATE_EPOCH: 2025-01-12 is 11 days.
    _, report, _ = run_json("check", "--today", "2025-01-12")
    assert "SG405" in codes(report)


@pytest.mark.parametrize("epoch", ["yesterday", "-5", "1.5"])
def test_bad_source_date_epoch_is_a_usage_error(
    here: Path, run_json: Run, monkeypatch: pytest.MonkeyPatch, epoch: str
) -> None:
    write(here, "measured_at: 2025-01-01")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    code, report, err = run_json("check")
    assert code == 2 and report is None and "SOURCE_DATE_EPOCH" in err


@pytest.mark.parametrize(
    ("provenance", "message"),
    [
        ("measured_at: '2025-02-30'", "not a calendar date"),
        ("config_digest: sha256:ABC", "config_digest"),
        ("temperature: -0.1", "temperature"),
        ("top_p: 0", "top_p"),
        ("steps: 0", "steps"),
        ("concurrency: 1.5", "concurrency"),
        ("sampled_at: 2025-01-01", "sampled_at"),
    ],
)
def test_provenance_schema(here: Path, run_json: Run, provenance: str, message: str) -> None:
    write(here, provenance)
    code, report, _ = run_json("check", "--today", "2025-01-01")
    assert code == 1
    got = [m for c, m in findings(report) if c == "SG001"]
    assert len(got) == 1, got
    assert message in got[0] or message in str(report["files"][0]["deployments"][0]["findings"])


@pytest.mark.parametrize(
    ("evidence", "served", "fires"),
    [(0, 0.7, True), (0.7, 0.7, False), (0.7000000001, 0.7, False), (0.7, None, False)],
)
def test_sg406_temperature(
    here: Path, run_json: Run, evidence: float, served: float | None, fires: bool
) -> None:
    workload = "name: chat" + (f";temperature: {served}" if served is not None else "")
    write(here, f"temperature: {evidence}", workload=workload)
    _, report, _ = run_json("check")
    assert ("SG406" in codes(report)) is fires


def test_sg407_config_digest(here: Path, run_json: Run) -> None:
    # eagle3, D 3, N 4, per_token, no draft model/engine/TP, target Llama-3.1-8B:
    # sha256 of the canonical JSON of those ten fields (worked in test_digest).
    write(here, "config_digest: sha256:a9d157d4ed66e93c")
    _, report, _ = run_json("check")
    assert "SG407" not in codes(report)
    write(here, "config_digest: sha256:0123456789abcdef")
    _, report, _ = run_json("check")
    assert "SG407" in codes(report)


@pytest.mark.parametrize(
    ("steps", "histogram", "fires"),
    [
        (399, None, True),  # sd 1 without a histogram: needs (1/0.05)² = 400
        (400, None, False),
        # {0: 50, 1: 50, 2: 50}: mean 1, Σh(j−1)² = 100, sd = √(100/149) = 0.8192,
        # needed (0.8192/0.05)² = 268.5: the histogram's own 150 steps are too few.
        (None, "{0: 50, 1: 50, 2: 50}", True),
        # {0: 100, 1: 100, 2: 100}: sd = √(200/299) = 0.8179, needed 267.6 ≤ 300.
        (None, "{0: 100, 1: 100, 2: 100}", False),
    ],
)
def test_sg408_sample_size(
    here: Path, run_json: Run, steps: int | None, histogram: str | None, fires: bool
) -> None:
    write(here, f"steps: {steps}" if steps is not None else "dataset: sharegpt")
    if histogram is not None:
        path = here / "specgate.yaml"
        text = path.read_text(encoding="utf-8").replace("      accept_length: 2.6\n", "")
        text += f"      metrics:\n        format: histogram\n        histogram: {histogram}\n"
        path.write_text(text, encoding="utf-8")
    _, report, _ = run_json("check")
    assert ("SG408" in codes(report)) is fires


@pytest.mark.parametrize(
    ("evidence", "served", "fires"),
    [(1, 2, False), (1, 3, True), (64, 16, True), (32, 64, False), (8, None, False)],
)
def test_sg409_concurrency(
    here: Path, run_json: Run, evidence: int, served: int | None, fires: bool
) -> None:
    workload = "name: chat" + (f";concurrency: {served}" if served is not None else "")
    write(here, f"concurrency: {evidence}", workload=workload)
    _, report, _ = run_json("check")
    assert ("SG409" in codes(report)) is fires


def test_counts_too_large_for_floats_give_no_standard_error() -> None:
    from specgate.theory.stats import histogram_moments, standard_error

    huge = [(0, 10**308), (1, 10**308), (2, 10**308)]
    assert histogram_moments(huge) is None
    assert standard_error(huge) is None
    assert histogram_moments([(0, 1)]) is None  # one step: no sample sd


def test_per_request_records_give_a_per_step_distribution() -> None:
    from specgate.inputs.metrics.records import read_vllm_per_request
    from specgate.theory.stats import standard_error

    # Two requests: [0: 400, 1: 300] and [2: 200, 3: 100] pool to the
    # docs/change-gate.md#standard-error base histogram {0: 400, 1: 300, 2: 200, 3: 100}: AL 2.000,
    # SE 0.0316, 1000 steps.
    text = (
        '{"speculative_decoding": {"acceptance_histogram": [400, 300, 0, 0]}}\n'
        '{"speculative_decoding": {"acceptance_histogram": [0, 0, 200, 100]}}\n'
    )
    acceptance = read_vllm_per_request(text, "records.jsonl")
    assert acceptance.histogram == ((0, 400), (1, 300), (2, 200), (3, 100))
    assert acceptance.steps == 1000
    assert acceptance.accept_length == 2.0
    assert standard_error(acceptance.histogram) == pytest.approx(0.031639, abs=1e-6)
