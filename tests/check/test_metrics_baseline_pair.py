"""A before/after pair of Prometheus scrapes (``evidence.metrics`` with
``baseline_path``, the one format that takes a pair, docs/claims-file.md#referenced-files)
gives one window per series only when the series is in both scrapes. A series with a
count in the after scrape and none in the before one is SG316 (warn, a form specgate
does not read, docs/engines.md#metrics-not-read) at its sample in the after scrape, and
no value is taken from the pair; a series in neither is not given, as with one scrape.
Values are Prometheus counter deltas worked by hand; lines and columns counted by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.inputs.test_metrics import prom

from specgate.check.run import CheckOptions, check_file
from specgate.core.errors import UnusableMeasurement
from specgate.inputs.metrics.read import MetricsSpec, read_acceptance
from specgate.inputs.types import Acceptance


def _read(tmp_path: Path, before: str, after: str) -> Acceptance:
    (tmp_path / ".git").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "before.prom").write_text(before, "utf-8")
    (tmp_path / "bench" / "after.prom").write_text(after, "utf-8")
    spec = MetricsSpec(format="vllm-prometheus", path="after.prom", baseline_path="before.prom")
    return read_acceptance(spec, base_dir=tmp_path / "bench", shown_base="bench")


def test_draft_tokens_missing_from_before_gives_no_d(tmp_path: Path) -> None:
    # Before: drafts 200, accepted 300, no draft-tokens counter. after − 0 = 4000 over
    # Δdrafts 800 would be D = 5 (the trial's false SG309 at D = 4). after.prom lines:
    # 1 TYPE drafts, 2 drafts, 3 TYPE draft tokens, 4 draft tokens ⇒ 4:1.
    with pytest.raises(UnusableMeasurement) as info:
        _read(tmp_path, prom(200, None, 300), prom(1000, 4000, 2100))
    err = info.value
    assert (err.file, err.line, err.column, err.severity) == ("bench/after.prom", 4, 1, "warn")
    assert err.reason.startswith(
        'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} is in '
        "bench/after.prom but not in bench/before.prom: the pair gives no window for it"
    )


def test_drafts_missing_from_before_gives_no_al(tmp_path: Path) -> None:
    # Before lacks drafts: AL = 1 + 1800/1000 = 2.8 would divide a delta by a whole
    # total. after.prom's drafts sample is line 2.
    with pytest.raises(UnusableMeasurement) as info:
        _read(tmp_path, prom(None, 800, 300), prom(1000, 4000, 2100))
    assert (info.value.line, info.value.column, info.value.severity) == (2, 1, "warn")
    assert "num_drafts_total" in info.value.reason


def test_a_series_in_neither_scrape_is_not_given(tmp_path: Path) -> None:
    # No draft-tokens counter in either: AL = 1 + (2100 − 300)/(1000 − 200) = 1 + 1800/800
    # = 3.25, D not given (as with one scrape that lacks it).
    found = _read(tmp_path, prom(200, None, 300), prom(1000, None, 2100))
    assert found.formula == "1 + 1800/800"
    assert found.accept_length == 3.25
    assert found.draft_length is None


def test_a_series_gone_from_after_is_located_in_the_before_scrape(tmp_path: Path) -> None:
    # before.prom's draft-tokens sample is line 4; after.prom has none: a reset, at 4:1
    # of the before scrape (the only file holding that series).
    with pytest.raises(UnusableMeasurement) as info:
        _read(tmp_path, prom(200, 800, 300), prom(1000, None, 2100))
    err = info.value
    assert (err.file, err.line, err.column, err.severity) == ("bench/before.prom", 4, 1, "warn")
    assert "restarted" in err.reason


def test_a_series_at_zero_after_and_absent_before_is_a_zero_delta(tmp_path: Path) -> None:
    # A counter is never below 0, so 0 after means 0 events in the window: engine 1's
    # zeros add nothing. AL = 1 + (2100 − 300)/(1000 − 200) = 3.25; D = 3200/800 = 4.
    after = prom(1000, 4000, 2100) + prom(0, 0, 0, engine="1").replace(
        "# TYPE vllm:spec_decode_num_drafts counter\n", ""
    ).replace("# TYPE vllm:spec_decode_num_draft_tokens counter\n", "").replace(
        "# TYPE vllm:spec_decode_num_accepted_tokens counter\n", ""
    )
    found = _read(tmp_path, prom(200, 800, 300), after)
    assert (found.formula, found.accept_length, found.draft_length) == ("1 + 1800/800", 3.25, 4)


CLAIMS = """\
version: 1
deployments:
  - name: pair
    speculation: {enabled: true, mechanism: ngram, draft_length: 4}
    evidence:
      metrics: {format: vllm-prometheus, path: bench/after.prom, baseline_path: bench/before.prom}
"""


def test_the_trial_pair_is_sg316_not_a_false_sg309(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "before.prom").write_text(prom(200, None, 300), "utf-8")
    (tmp_path / "bench" / "after.prom").write_text(prom(1000, 4000, 2100), "utf-8")
    (tmp_path / "specgate.yaml").write_text(CLAIMS, "utf-8")
    monkeypatch.chdir(tmp_path)
    report = check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    codes = {f.code: f for f in deployment.findings}
    assert "SG309" not in codes  # D = 5 was after − 0, never measured
    sg316 = codes["SG316"]
    assert (sg316.file, sg316.line, sg316.column, sg316.severity) == (
        "bench/after.prom", 4, 1, "warn",
    )


def test_only_counters_are_paired(tmp_path: Path) -> None:
    # A `_created` sample (a start time, written only by OpenMetrics) in the before scrape
    # and not in a text-format after scrape, and a gauge that falls (vLLM 0.7's
    # draft acceptance rate, 0.7 → 0.6), say nothing of a restart (second trial: read as a
    # counter reset, so SG316 and then SG101 fail). The counters give AL = 1 + (2100 −
    # 300)/(1000 − 200) = 1 + 1800/800 = 3.25 and D = (4000 − 800)/800 = 4.
    extra = (
        "# TYPE vllm:spec_decode_draft_acceptance_rate gauge\n"
        'vllm:spec_decode_draft_acceptance_rate{{engine="0",model_name="m"}} {rate}\n'
    )
    created = 'vllm:spec_decode_num_drafts_created{engine="0",model_name="m"} 1.7e9\n'
    before = prom(200, 800, 300) + extra.format(rate=0.7) + created
    after = prom(1000, 4000, 2100) + extra.format(rate=0.6)
    found = _read(tmp_path, before, after)
    assert found.formula == "1 + 1800/800"
    assert found.accept_length == 3.25
