"""Measured acceptance readers: real published files and hand-made edge cases.

Every expected value is worked by hand in the comment beside it (real-file oracles
are also listed in tests/data/real/SOURCES-measured.md).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from specgate.core.errors import InputError, UnusableMeasurement
from specgate.inputs.metrics.read import (
    METRICS_MAX_BYTES,
    MetricsSpec,
    acceptance_profile_problems,
    read_acceptance,
)
from specgate.inputs.types import Acceptance
from specgate.load.document import Span
from specgate.load.read import parse_text

REAL = Path(__file__).resolve().parent.parent / "data" / "real"


def real(fmt: str, path: str, **extra: object) -> Acceptance:
    spec = MetricsSpec(format=fmt, path=path, **extra)  # type: ignore[arg-type]
    return read_acceptance(spec, base_dir=REAL, shown_base="real", root=REAL)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the claims file's folder at ``deploy/``."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy").mkdir()
    return tmp_path


def run(repo: Path, fmt: str, files: dict[str, str], **block: object) -> Acceptance:
    for name, text in files.items():
        target = repo / "deploy" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    spec = MetricsSpec(format=fmt, **block)  # type: ignore[arg-type]
    return read_acceptance(spec, base_dir=repo / "deploy", shown_base="deploy")


def claims(text: str, *, draft_length: int | None = None) -> MetricsSpec:
    doc = parse_text(text, "specgate.yaml", json_syntax=False)
    return MetricsSpec.from_document(doc, ("evidence", "metrics"), draft_length=draft_length)


def inline(text: str, *, draft_length: int | None = None) -> Acceptance:
    spec = claims(text, draft_length=draft_length)
    return read_acceptance(spec, base_dir=Path("."), shown_base="")


# --- vllm-prometheus -----------------------------------------------------------------------

HEAD = "# TYPE vllm:spec_decode_{0} counter\n"


def prom(
    drafts: float | None = 100,
    tokens: float | None = 300,
    accepted: float | None = 150,
    per_pos: dict[int, float] | None = None,
    engine: str = "0",
) -> str:
    labels = f'engine="{engine}",model_name="m"'
    out = ""
    for name, value in (
        ("num_drafts", drafts),
        ("num_draft_tokens", tokens),
        ("num_accepted_tokens", accepted),
    ):
        if value is not None:
            out += HEAD.format(name) + f"vllm:spec_decode_{name}_total{{{labels}}} {value}\n"
    if per_pos:
        out += HEAD.format("num_accepted_tokens_per_pos")
        for pos, value in per_pos.items():
            out += (
                f"vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},"
                f'position="{pos}"}} {value}\n'
            )
    return out


def test_prometheus_real_gemma_incomplete_per_position() -> None:
    result = real("vllm-prometheus", "vllm/measured/gemma4-31b-mtp-vllm_0_21_metrics.prom")
    # 1 + 863/240 = 4.5958; D = 960/240 = 4
    assert result.accept_length == pytest.approx(4.595833, abs=1e-6)
    assert result.formula == "1 + 863/240"
    assert result.draft_length == 4
    # only position 0 present (226/240): incomplete, so no marginal vector
    assert result.marginal == ()
    assert result.note is not None
    assert "positions 0, not 0..3" in result.note
    assert "cumulative" in result.note
    assert result.acceptance_rate == pytest.approx(863 / 960)
    assert result.path == "real/vllm/measured/gemma4-31b-mtp-vllm_0_21_metrics.prom"
    assert result.spans["accept_length"] == Span(9, 1)  # the accepted-tokens sample
    assert result.spans["draft_length"] == Span(6, 1)  # the draft-tokens sample


def test_prometheus_complete_per_position(repo: Path) -> None:
    text = prom(per_pos={0: 70, 1: 50, 2: 30})
    result = run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    # 1 + 150/100 = 2.5; D = 300/100 = 3; marginals 70/100, 50/100, 30/100 (sum 1.5)
    assert result.accept_length == 2.5
    assert result.draft_length == 3
    assert result.marginal == (0.7, 0.5, 0.3)


def test_prometheus_count_past_d_is_impossible(repo: Path) -> None:
    # D = 300/100 = 3 (positions 0..2), yet 5 steps "accepted" the draft at position 3:
    # no step drafts a fourth token at D = 3. Line 11: three TYPE+sample pairs, the
    # per-position TYPE line, positions 0, 1, 2, then 3.
    text = prom(per_pos={0: 70, 1: 50, 2: 30, 3: 5})
    with pytest.raises(InputError) as err:
        run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    assert err.value.reason == (
        "impossible counters: 5 steps accepted the draft at position 3, but the scrape "
        "drafted 3 tokens per step (positions 0..2) in deploy/m.prom"
    )
    assert (err.value.file, err.value.line) == ("deploy/m.prom", 11)


def test_prometheus_zero_count_past_d_is_dropped(repo: Path) -> None:
    # A zero at position 3 agrees with D = 3: the profile 0.7, 0.5, 0.3 stands.
    text = prom(per_pos={0: 70, 1: 50, 2: 30, 3: 0})
    result = run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    assert (result.draft_length, result.marginal) == (3, (0.7, 0.5, 0.3))


@pytest.mark.parametrize("label", ["-1", "abc", "1.5", "²"])
def test_prometheus_malformed_position_is_an_input_error(repo: Path, label: str) -> None:
    # one malformed counter must not quietly drop the whole profile (and with it SG305)
    text = prom(per_pos={0: 70, 1: 50, 2: 30}) + (
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="m",'
        f'position="{label}"}} 0\n'
    )
    with pytest.raises(InputError) as err:
        run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    assert err.value.reason == (
        f"vllm:spec_decode_num_accepted_tokens_per_pos_total has position {label!r} in "
        "deploy/m.prom: positions are the draft indexes 0, 1, …"
    )
    assert err.value.line == 11


def test_prometheus_sums_label_sets(repo: Path) -> None:
    text = prom(100, 300, 150, engine="0") + prom(50, 150, 100, engine="1").replace(
        "# TYPE vllm:spec_decode_num_drafts counter\n", ""
    ).replace("# TYPE vllm:spec_decode_num_draft_tokens counter\n", "").replace(
        "# TYPE vllm:spec_decode_num_accepted_tokens counter\n", ""
    )
    result = run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    # 1 + (150 + 100)/(100 + 50) = 1 + 250/150 = 2.6667; D = 450/150 = 3
    assert result.formula == "1 + 250/150"
    assert result.accept_length == pytest.approx(1 + 250 / 150)
    assert result.draft_length == 3


def test_prometheus_baseline_delta(repo: Path) -> None:
    files = {"before.prom": prom(100, 300, 150), "after.prom": prom(300, 900, 550)}
    result = run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")
    # Δaccepted = 400, Δdrafts = 200: 1 + 400/200 = 3.0; D = 600/200 = 3
    assert result.accept_length == 3.0
    assert result.formula == "1 + 400/200"
    assert result.draft_length == 3
    assert result.note is not None
    assert "deploy/before.prom to deploy/after.prom" in result.note


def test_prometheus_per_position_missing_from_baseline_is_not_used(repo: Path) -> None:
    before = prom(100, 400, 150)  # no per-position counters
    after = prom(116, 464, 166, per_pos={0: 16, 1: 11, 2: 7, 3: 4})
    files = {"before.prom": before, "after.prom": after}
    result = run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")
    # Δdrafts = 16, Δtokens = 64 (D = 64/16 = 4), Δaccepted = 16: AL = 1 + 16/16 = 2.0.
    # The per-position counts are not deltas (no baseline value), so 16/16, 11/16, 7/16,
    # 4/16 = [1, 0.6875, 0.4375, 0.25] (1 + Σ = 3.375 ≠ 2.0) must not be reported.
    assert result.accept_length == 2.0
    assert result.formula == "1 + 16/16"
    assert result.draft_length == 4
    assert result.marginal == ()
    assert result.note is not None
    assert "per-position counters are not in both scrapes (missing from deploy/before.prom)" in (
        result.note
    )


def test_prometheus_per_position_in_both_scrapes_is_a_delta(repo: Path) -> None:
    before = prom(100, 400, 150, per_pos={0: 70, 1: 45, 2: 25, 3: 10})
    after = prom(116, 464, 166, per_pos={0: 80, 1: 50, 2: 26, 3: 10})
    files = {"before.prom": before, "after.prom": after}
    result = run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")
    # Δper_pos = 10, 5, 1, 0 over Δdrafts 16: 0.625, 0.3125, 0.0625, 0 (Σ = 1 = Δaccepted/16)
    assert result.marginal == (0.625, 0.3125, 0.0625, 0.0)
    assert result.accept_length == 2.0


def _two_models() -> str:
    a = prom(100, 300, 150).replace('model_name="m"', 'model_name="a"')
    b = prom(200, 1000, 500).replace('model_name="m"', 'model_name="b"')
    return a + "".join(line + "\n" for line in b.splitlines() if not line.startswith("#"))


def test_prometheus_several_models_is_an_error(repo: Path) -> None:
    with pytest.raises(InputError) as err:
        run(repo, "vllm-prometheus", {"m.prom": _two_models()}, path="m.prom")
    assert err.value.reason == (
        "several models in one scrape: model_name=a, model_name=b; choose one with "
        "`labels: {model_name: …}` in evidence.metrics (only series that differ in engine "
        "are summed)"
    )
    assert (err.value.file, err.value.line) == ("deploy/m.prom", 2)  # a's drafts sample


def test_prometheus_labels_select_a_model(repo: Path) -> None:
    files = {"m.prom": _two_models()}
    a = run(repo, "vllm-prometheus", files, path="m.prom", labels={"model_name": "a"})
    # a alone: 1 + 150/100 = 2.5, D = 300/100 = 3
    assert (a.formula, a.accept_length, a.draft_length) == ("1 + 150/100", 2.5, 3)
    b = run(repo, "vllm-prometheus", files, path="m.prom", labels={"model_name": "b"})
    # b alone: 1 + 500/200 = 3.5, D = 1000/200 = 5
    assert (b.formula, b.accept_length, b.draft_length) == ("1 + 500/200", 3.5, 5)
    with pytest.raises(InputError) as err:
        run(repo, "vllm-prometheus", files, path="m.prom", labels={"model_name": "c"})
    assert err.value.reason == (
        "no vLLM spec-decode series with labels model_name=c in deploy/m.prom; "
        "label sets present: model_name=a, model_name=b"
    )


def test_prometheus_other_differing_label_is_not_summed(repo: Path) -> None:
    # A scraper's `instance` label: two servers of one model name are not one server's
    # engines, so they are not summed either.
    one = prom(100, 300, 150).replace('engine="0"', 'engine="0",instance="x"')
    two = prom(50, 150, 100).replace('engine="0"', 'engine="0",instance="y"')
    text = one + "".join(line + "\n" for line in two.splitlines() if not line.startswith("#"))
    with pytest.raises(InputError, match="several models in one scrape: instance=x, instance=y"):
        run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    y = run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom", labels={"instance": "y"})
    assert y.formula == "1 + 100/50"  # 1 + 100/50 = 3.0


def test_prometheus_engines_are_summed_with_a_note(repo: Path) -> None:
    text = prom(100, 300, 150, engine="0") + "".join(
        line + "\n"
        for line in prom(50, 150, 100, engine="1").splitlines()
        if not line.startswith("#")
    )
    result = run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    assert result.formula == "1 + 250/150"  # (150 + 100)/(100 + 50)
    assert result.note is not None and "summed over engine=0, engine=1" in result.note


def test_metrics_labels_block() -> None:
    spec = claims(
        "evidence:\n  metrics:\n    format: vllm-prometheus\n    path: m.prom\n"
        "    labels: {model_name: a}\n"
    )
    assert spec.labels == {"model_name": "a"}
    with pytest.raises(InputError) as err:
        claims("evidence:\n  metrics:\n    format: vllm-log\n    path: v.log\n    labels: {a: b}\n")
    assert (err.value.reason, err.value.line) == ("labels applies only to vllm-prometheus", 5)
    with pytest.raises(InputError, match=r"labels\.engine must be a string, not 0"):
        claims(
            "evidence:\n  metrics:\n    format: vllm-prometheus\n    path: m.prom\n"
            "    labels: {engine: 0}\n"
        )


def test_prometheus_ignores_created_samples_and_other_metrics(repo: Path) -> None:
    text = (
        prom()
        + 'vllm:spec_decode_num_drafts_created{engine="0",model_name="m"} 1.7e9\n'
        + 'vllm:request_success_total{engine="0"} 5.0\n'
    )
    assert run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom").accept_length == 2.5


def test_prometheus_variable_draft_length_uses_per_position(repo: Path) -> None:
    # n-gram: 25 tokens over 10 drafts (2.5, not whole); per-position 0..2 ⇒ k = 3
    text = prom(10, 25, 12, per_pos={0: 6, 1: 4, 2: 2})
    result = run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    assert result.accept_length == pytest.approx(2.2)  # 1 + 12/10
    assert result.draft_length == 3
    assert result.marginal == (0.6, 0.4, 0.2)


def test_prometheus_gapped_per_position_is_not_used(repo: Path) -> None:
    text = prom(per_pos={0: 70, 2: 30})
    result = run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    assert result.marginal == ()
    assert result.draft_length == 3


def test_prometheus_counter_reset(repo: Path) -> None:
    files = {"before.prom": prom(300, 900, 550), "after.prom": prom(100, 300, 150)}
    with pytest.raises(InputError, match="counter reset") as info:
        run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")
    # The drafts counter fell first (300 → 100); in after.prom it is the sample on line 2
    # (line 1 is its "# TYPE" comment), column 1.
    assert (info.value.file, info.value.line, info.value.column) == ("deploy/after.prom", 2, 1)
    assert info.value.reason == (
        'counter reset between scrapes: vllm:spec_decode_num_drafts_total{engine="0",'
        'model_name="m"} fell from 300 to 100'
    )


def test_prometheus_counter_reset_line_matches_the_label_set(repo: Path) -> None:
    # Two engines; only engine 1's accepted counter falls (90 → 80). after.prom lines:
    # 1 TYPE drafts, 2 drafts e0, 3 drafts e1, 4 TYPE tokens, 5-6 tokens, 7 TYPE accepted,
    # 8 accepted e0, 9 accepted e1 ⇒ line 9.
    def two(accepted_1: int) -> str:
        out = ""
        for name, values in (
            ("num_drafts", (10, 10)),
            ("num_draft_tokens", (30, 30)),
            ("num_accepted_tokens", (15, accepted_1)),
        ):
            out += HEAD.format(name)
            for engine, value in enumerate(values):
                labels = f'engine="{engine}",model_name="m"'
                out += f"vllm:spec_decode_{name}_total{{{labels}}} {value}\n"
        return out

    files = {"before.prom": two(90), "after.prom": two(80)}
    with pytest.raises(InputError, match="fell from 90 to 80") as info:
        run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")
    assert info.value.line == 9


def test_prometheus_vanished_series_is_a_reset(repo: Path) -> None:
    files = {"before.prom": prom(engine="7"), "after.prom": prom(engine="0")}
    with pytest.raises(InputError, match="restarted"):
        run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")


def test_prometheus_zero_drafts(repo: Path) -> None:
    with pytest.raises(InputError, match="zero drafts") as info:
        run(repo, "vllm-prometheus", {"m.prom": prom(0, 0, 0)}, path="m.prom")
    assert info.value.line == 2
    files = {"before.prom": prom(), "after.prom": prom()}
    with pytest.raises(InputError, match="zero drafts"):
        run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")


def test_prometheus_missing_counters(repo: Path) -> None:
    text = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n"
    with pytest.raises(InputError, match="no vLLM spec-decode counters"):
        run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")
    with pytest.raises(InputError, match="missing"):
        run(repo, "vllm-prometheus", {"n.prom": prom(accepted=None)}, path="n.prom")
    files = {"before.prom": text, "after.prom": prom()}
    with pytest.raises(InputError, match="baseline"):
        run(repo, "vllm-prometheus", files, path="after.prom", baseline_path="before.prom")


def test_prometheus_v0_needs_k(repo: Path) -> None:
    text = (
        "vllm:spec_decode_num_emitted_tokens_total 10616\n"
        "vllm:spec_decode_num_draft_tokens_total 13311\n"
        "vllm:spec_decode_num_accepted_tokens_total 8547\n"
    )
    # V0: 10616 / (13311/3) = 10616/4437 = 2.3926 (not 1 + 8547/4437 = 2.9263)
    result = run(repo, "vllm-prometheus", {"v0.prom": text}, path="v0.prom", draft_length=3)
    assert result.accept_length == pytest.approx(2.392608, abs=1e-6)
    assert result.formula == "10616/(13311/3)"
    with pytest.raises(InputError, match="draft_length"):
        run(repo, "vllm-prometheus", {}, path="v0.prom")


def test_prometheus_malformed(repo: Path) -> None:
    with pytest.raises(InputError, match="not Prometheus") as info:
        run(
            repo,
            "vllm-prometheus",
            {"m.prom": "vllm:spec_decode_num_drafts_total {\n"},
            path="m.prom",
        )
    assert info.value.line == 1


def test_prometheus_format_on_a_log_names_the_first_bad_line(repo: Path) -> None:
    # A vLLM log given as vllm-prometheus: line 1 is a comment to the Prometheus parser,
    # line 2 the first line it refuses (no Python "could not convert" text).
    text = (
        "# server log\n"
        "INFO 06-06 12:00:01 [loggers.py:123] SpecDecoding metrics: Mean acceptance "
        "length: 2.40\n"
    )
    with pytest.raises(InputError) as info:
        run(repo, "vllm-prometheus", {"v.log": text}, path="v.log")
    assert (info.value.file, info.value.line) == ("deploy/v.log", 2)
    assert info.value.reason == (
        "not Prometheus text exposition format (line 2: "
        # A line over 60 characters is cut to 57 + "...": "INFO 06-06 12:00:01 " (20) +
        # "[loggers.py:123] " (17) + "SpecDecoding metrics" (20) = 57.
        "'INFO 06-06 12:00:01 [loggers.py:123] SpecDecoding metrics...')"
    )


def test_prometheus_repeated_sample(repo: Path) -> None:
    text = prom() + 'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 5\n'
    with pytest.raises(InputError, match="is repeated"):
        run(repo, "vllm-prometheus", {"m.prom": text}, path="m.prom")


# --- vllm-log ------------------------------------------------------------------------------


def test_vllm_log_real_pr24127() -> None:
    result = real("vllm-log", "vllm/measured/vllm-pr24127-ngram-k5-specdecoding.log")
    # 5 rates ⇒ k = 5; 295/5 = 59 drafts; 1 + 262/59 = 5.4407 (log prints 5.44)
    assert result.accept_length == pytest.approx(5.440678, abs=1e-6)
    assert result.formula == "1 + 262/59"
    assert result.draft_length == 5
    assert result.marginal == (0.983, 0.949, 0.915, 0.881, 0.712)
    assert not result.estimate
    assert result.acceptance_rate == pytest.approx(262 / 295)


def test_vllm_log_real_issue19254_pooled() -> None:
    result = real("vllm-log", "vllm/measured/vllm-issue19254-ngram-k3-qwen3-32b.log")
    # 1 + (150 + 725)/(387/3 + 1488/3) = 1 + 875/625 = 2.4 (not the mean 2.31 of 2.16, 2.46)
    assert result.accept_length == pytest.approx(2.4)
    assert result.formula == "1 + 875/625"
    assert result.draft_length == 3
    # pooled marginal m1 = (0.543·129 + 0.615·496)/625 = 0.60014
    assert result.marginal[0] == pytest.approx(0.60014, abs=1e-5)
    assert result.spans["accept_length"] == Span(2, 1)


def test_vllm_log_real_issue9539_v0() -> None:
    result = real("vllm-log", "vllm/measured/vllm-issue9539-v0-speculative-metrics.log")
    # V0: 10616/(13311/3) = 10616/4437 = 2.3926 (= 0.598 × 4 = 2.392)
    assert result.accept_length == pytest.approx(2.392608, abs=1e-6)
    assert result.formula == "10616/(13311/3)"
    assert result.draft_length == 3
    assert result.acceptance_rate == pytest.approx(8547 / 13311)


V1 = (
    "SpecDecoding metrics: Draft acceptance rate: 50.0%, Mean acceptance length: {m}, "
    "Accepted: {a} tokens, Drafted: {d} tokens, Per-position acceptance rate: {r}"
)


def test_vllm_log_prefixes_and_pooling(repo: Path) -> None:
    text = "\n".join(
        [
            "vllm-1  | (EngineCore_0 pid=12) INFO 01-02 03:04:05 [metrics.py:96] "
            + V1.format(m="2.00", a=40, d=120, r="0.600, 0.300, 0.100"),
            "2025-01-02T03:04:15Z vllm-1 | INFO something unrelated",
            "[pod/vllm-abc] " + V1.format(m="3.00", a=120, d=180, r="0.900, 0.700, 0.400"),
            "",
        ]
    )
    result = run(repo, "vllm-log", {"v.log": text}, path="v.log")
    # drafts 120/3 + 180/3 = 40 + 60 = 100; 1 + (40 + 120)/100 = 2.6
    assert result.accept_length == pytest.approx(2.6)
    assert result.formula == "1 + 160/100"
    # m1 = (0.6·40 + 0.9·60)/100 = 0.78
    assert result.marginal[0] == pytest.approx(0.78)


def test_vllm_log_without_rates_needs_k(repo: Path) -> None:
    line = "INFO SpecDecoding metrics: Accepted: 50 tokens, Drafted: 200 tokens\n"
    # k = 4 from the caller: 200/4 = 50 drafts; 1 + 50/50 = 2.0
    result = run(repo, "vllm-log", {"v.log": line}, path="v.log", draft_length=4)
    assert result.accept_length == 2.0
    assert result.draft_length is None  # the data does not state k
    with pytest.raises(InputError, match="D is needed") as info:
        run(repo, "vllm-log", {}, path="v.log")
    assert info.value.line == 1


def test_vllm_log_without_rates_k_from_the_printed_mean(repo: Path) -> None:
    """F31: vLLM V1 lines with only Accepted/Drafted and the printed mean. On every
    line mean = 1 + Accepted·k/Drafted holds for k = 3 only: 1 + 150·3/387 = 2.1628
    (printed 2.16), 1 + 725·3/1488 = 2.4617 (printed 2.46); k = 5 would give 2.94 and
    3.44. So AL = 1 + 875/(1875/3) = 1 + 875/625 = 2.4, measured at D = 3, whatever
    draft_length the caller (the claims file) says."""
    text = (
        "INFO 06-06 14:20:34 [metrics.py:86] SpecDecoding metrics: Mean acceptance length: "
        "2.16, Accepted: 150 tokens, Drafted: 387 tokens\n"
        "INFO 06-06 14:20:44 [metrics.py:86] SpecDecoding metrics: Mean acceptance length: "
        "2.46, Accepted: 725 tokens, Drafted: 1488 tokens\n"
    )
    for given in (None, 3, 5):
        result = run(repo, "vllm-log", {"v.log": text}, path="v.log", draft_length=given)
        assert result.accept_length == pytest.approx(2.4)
        assert result.draft_length == 3
        assert result.steps == 625
    # mean 2.00 with Accepted 50, Drafted 200: k = 200·1/50 = 4
    line = (
        "INFO SpecDecoding metrics: Mean acceptance length: 2.00, Accepted: 50 tokens, "
        "Drafted: 200 tokens\n"
    )
    assert run(repo, "vllm-log", {"v.log": line}, path="v.log").draft_length == 4


def test_vllm_log_variable_length_drafts_use_the_printed_mean(repo: Path) -> None:
    line = V1.format(m="2.0", a=20, d=25, r="0.5, 0.3, 0.2") + "\n"
    result = run(repo, "vllm-log", {"v.log": line}, path="v.log")
    # 1 + 20/(25/3) = 3.4 contradicts vLLM's own "Mean acceptance length: 2.0" (and
    # 1 + 0.5 + 0.3 + 0.2 = 2.0): drafts were shorter than k, so Drafted/k undercounts
    # them. vLLM's printed value wins (issue 8: AL 13 where vLLM prints 2.50).
    assert result.accept_length == pytest.approx(2.0)
    assert result.note is not None
    assert "shorter than D" in result.note


def test_vllm_log_variable_length_pooled_from_printed_means(repo: Path) -> None:
    text = (
        V1.format(m="2.50", a=30, d=40, r="0.6, 0.5, 0.4")
        + "\n"
        + V1.format(m="1.50", a=10, d=40, r="0.5, 0.3, 0.2")
        + "\n"
    )
    result = run(repo, "vllm-log", {"v.log": text}, path="v.log")
    # drafts = 30/1.5 + 10/0.5 = 40 (2 tokens a draft on both lines, within k 3); AL =
    # 1 + 40/40 = 2.0, an estimate (2-decimal means). The line once read "2.00" beside
    # Accepted 10, Drafted 40: 10 drafts of 4 tokens at k 3, an impossible line.
    assert result.accept_length == pytest.approx(1 + 40 / 40)
    assert result.estimate


@pytest.mark.parametrize(("mean", "ok"), [("3.90", False), ("2.95", True), ("1.48", False),
                                          ("1.49", True), ("2.46", True)])  # fmt: skip
def test_vllm_log_printed_mean_outside_what_the_counts_allow(
    repo: Path, mean: str, ok: bool
) -> None:
    """hostile-r4 defect 11 (verify-r4): Accepted 725, Drafted 1488 at k 4 allow drafts of
    1 … 4 tokens, so AL in 1 + 725/1488 = 1.4872 … 1 + 725·4/1488 = 2.9489 (± 0.006 for
    the printed 2 decimals). 3.90 was read as AL 3.9, ready; it is an impossible line."""
    line = V1.format(m=mean, a=725, d=1488, r="0.615, 0.464, 0.383, 0.2") + "\n"
    if ok:
        assert run(repo, "vllm-log", {"v.log": line}, path="v.log").accept_length > 1
    else:
        impossible = "impossible beside Accepted 725 and Drafted 1488"
        with pytest.raises(InputError, match=impossible) as e:
            run(repo, "vllm-log", {"v.log": line}, path="v.log")
        # a value no run can print: SG316 fails at line 1 (issue 24), through the streamed
        # reader as through the per-line one
        assert isinstance(e.value, UnusableMeasurement) and e.value.severity == "fail"
        assert e.value.line == 1


def test_vllm_log_mean_beside_an_outside_d_is_not_called_impossible(repo: Path) -> None:
    """Without per-position rates, k is the D given from outside; a mean above 1 + A·D/T
    then says that D is not the one measured (2.30 beside 725 / 1488 allows at most
    1 + 725·2/1488 = 1.9745 at D 2, and implies no whole k: (2.30 − 1)·1488/725 = 2.668),
    so the line is no impossible log and is read."""
    line = (
        "INFO 06-06 14:20:34 [metrics.py:86] SpecDecoding metrics: Draft acceptance rate: "
        "48.7%, Mean acceptance length: 2.30, Accepted: 725 tokens, Drafted: 1488 tokens\n"
    )
    result = run(repo, "vllm-log", {"v.log": line}, path="v.log", draft_length=2)
    assert result.accept_length > 1


@pytest.mark.parametrize("copies", [1, 2, 5])
def test_vllm_log_repeated_line_is_not_an_estimate(repo: Path, copies: int) -> None:
    """hostile r4 attacks/21: vLLM's line 'Mean acceptance length: 2.46, Accepted: 725,
    Drafted: 1488' at D 4 (1 + 725/372 = 2.949 disagrees with 2.46: drafts were shorter
    than D). Once, vLLM's printed 2.46 is AL; the same interval logged again pools to
    the same 2.46 (every line's drafts = 725 / 1.46), so repeating a line may not turn
    AL into an estimate (which once softened every fail)."""
    line = V1.format(m="2.46", a=725, d=1488, r="0.615, 0.464, 0.383, 0.2") + "\n"
    result = run(repo, "vllm-log", {"v.log": line * copies}, path="v.log")
    assert result.accept_length == pytest.approx(2.46)
    assert not result.estimate


def test_vllm_log_k_disagreement(repo: Path) -> None:
    text = (
        V1.format(m="2", a=10, d=30, r="0.5, 0.3, 0.2")
        + "\n"
        + V1.format(m="2", a=10, d=40, r="0.5, 0.3, 0.2, 0.1")
        + "\n"
    )
    with pytest.raises(InputError, match="disagree on D"):
        run(repo, "vllm-log", {"v.log": text}, path="v.log")


def test_vllm_log_zero_drafted(repo: Path) -> None:
    line = V1.format(m="0", a=0, d=0, r="0.0, 0.0") + "\n"
    with pytest.raises(InputError, match="zero drafted"):
        run(repo, "vllm-log", {"v.log": line}, path="v.log")


V0 = (
    "INFO metrics.py:367] Speculative metrics: Draft acceptance rate: 0.5, System efficiency: "
    "0.6, Number of speculative tokens: 3, Number of accepted tokens: {a}, Number of draft "
    "tokens: {d}, Number of emitted tokens: {e}."
)


def test_vllm_log_v0_running_totals(repo: Path) -> None:
    text = V0.format(a=150, d=300, e=250) + "\n" + V0.format(a=310, d=600, e=520) + "\n"
    result = run(repo, "vllm-log", {"v.log": text}, path="v.log")
    # cumulative: the last line only, 520/(600/3) = 2.6 (summing lines would give 770/300)
    assert result.accept_length == pytest.approx(2.6)
    assert result.formula == "520/(600/3)"


def test_vllm_log_v0_restart_starts_a_new_run(repo: Path) -> None:
    text = V0.format(a=310, d=600, e=520) + "\n" + V0.format(a=70, d=150, e=120) + "\n"
    result = run(repo, "vllm-log", {"v.log": text}, path="v.log")
    # runs end at (600, 520) and (150, 120): (520 + 120)/((600 + 150)/3) = 640/250 = 2.56
    assert result.accept_length == pytest.approx(2.56)
    assert result.note is not None
    assert "2 runs" in result.note


def test_vllm_log_mixed_v0_v1(repo: Path) -> None:
    text = V0.format(a=1, d=3, e=2) + "\n" + V1.format(m="2", a=10, d=30, r="0.5, 0.3, 0.2")
    with pytest.raises(InputError, match="mixes"):
        run(repo, "vllm-log", {"v.log": text}, path="v.log")


def test_vllm_log_only_printed_means(repo: Path) -> None:
    text = (
        "INFO SpecDecoding metrics: Draft acceptance rate: 40.0%, "
        "Mean acceptance length: 2.20\n"
        "INFO SpecDecoding metrics: Draft acceptance rate: 50.0%, "
        "Mean acceptance length: 2.60\n"
    )
    result = run(repo, "vllm-log", {"v.log": text}, path="v.log")
    assert result.accept_length == pytest.approx(2.4)  # (2.2 + 2.6)/2, unweighted
    assert result.note is not None
    assert "unweighted" in result.note


def test_vllm_log_nothing(repo: Path) -> None:
    with pytest.raises(InputError, match="no vLLM spec-decode metrics lines"):
        run(repo, "vllm-log", {"v.log": "INFO Avg prompt throughput: 1 tokens/s\n"}, path="v.log")


# --- sglang-log ----------------------------------------------------------------------------


def test_sglang_log_real_issue11948() -> None:
    result = real("sglang-log", "sglang/measured/sglang-issue11948-eagle3-qwen3-8b-decode.log")
    # (2.17 + 1.95 + 1.80 + 2.05 + 1.80)/5 = 9.77/5 = 1.954, intervals unweighted
    assert result.accept_length == pytest.approx(1.954)
    assert result.formula == "(2.17 + 1.95 + 1.80 + 2.05 + 1.80)/5"
    assert result.note is not None
    assert "unweighted" in result.note
    assert result.spans["accept_length"].line == 2  # line 1 is a Prefill line


def test_sglang_log_many_intervals(repo: Path) -> None:
    text = "".join(
        f"[TP0] Decode batch. #running-req: 1, accept len: {v}, \n" for v in ("2.00", "3.00") * 5
    )
    result = run(repo, "sglang-log", {"s.log": text}, path="s.log")
    assert result.accept_length == pytest.approx(2.5)  # (5·2 + 5·3)/10
    assert result.formula == "25/10"


def test_sglang_log_without_speculation(repo: Path) -> None:
    text = "[TP0] Decode batch. #running-req: 1, #token: 108, gen throughput (token/s): 50\n"
    with pytest.raises(InputError, match="accept len"):
        run(repo, "sglang-log", {"s.log": text}, path="s.log")


# --- llamacpp-log --------------------------------------------------------------------------


def test_llamacpp_log_real_pr24536() -> None:
    result = real("llamacpp-log", "llama.cpp/measured/llama.cpp-pr24536-eagle3-spec-metrics.log")
    # 1 + 167/87 = 2.9195 (printed 2.92); 1 + 0.805 + 0.632 + 0.483 = 2.920
    assert result.accept_length == pytest.approx(2.919540, abs=1e-6)
    assert result.formula == "1 + 167/87"
    assert result.marginal == (0.805, 0.632, 0.483)
    assert result.draft_length == 3
    assert result.acceptance_rate == pytest.approx(167 / 259)
    assert result.spans["accept_length"].line == 6


STATS = (
    "I statistics draft: #calls(b,g,a) = 1 2 3, #gen drafts = {g}, #acc drafts = 1, "
    "#gen tokens = {t}, #acc tokens = {a}"
)


def test_llamacpp_log_running_totals_per_slot(repo: Path) -> None:
    text = "\n".join(
        [
            "srv slot print_timing: id  1 | task 0 | eval time = 1 ms",
            STATS.format(g=10, t=40, a=20),
            "srv slot print_timing: id  1 | task 5 | eval time = 1 ms",
            STATS.format(g=30, t=120, a=50),
            "srv slot print_timing: id  2 | task 6 | eval time = 1 ms",
            STATS.format(g=5, t=20, a=5),
        ]
    )
    result = run(repo, "llamacpp-log", {"l.log": text}, path="l.log")
    # slot 1 last line (30, 50) + slot 2 (5, 5): 1 + 55/35 = 2.5714
    assert result.formula == "1 + 55/35"
    assert result.accept_length == pytest.approx(1 + 55 / 35)
    assert result.acceptance_rate == pytest.approx(55 / 140)


def test_llamacpp_log_rate_only(repo: Path) -> None:
    text = (
        "slot print_timing: id 0 | task 0 | draft acceptance rate = 0.5 (10 accepted / 20 "
        "generated)\n"
    )
    with pytest.raises(InputError, match="rate alone gives no AL"):
        run(repo, "llamacpp-log", {"l.log": text}, path="l.log")


def test_llamacpp_log_zero_drafts(repo: Path) -> None:
    with pytest.raises(InputError, match="zero drafts"):
        run(repo, "llamacpp-log", {"l.log": STATS.format(g=0, t=0, a=0)}, path="l.log")


# --- llamacpp-timings ----------------------------------------------------------------------


def test_llamacpp_timings_real_pr12603() -> None:
    result = real(
        "llamacpp-timings", "llama.cpp/measured/llama.cpp-pr12603-timings-draft-stats.json"
    )
    # r = 65/347 = 0.1873; AL only estimated: 200/(200 − 65) = 200/135 = 1.4815
    assert result.estimate
    assert result.accept_length == pytest.approx(1.481481, abs=1e-6)
    assert result.formula == "200/(200 - 65)"
    assert result.acceptance_rate == pytest.approx(0.187320, abs=1e-6)


def test_llamacpp_timings_inside_a_response(repo: Path) -> None:
    text = json.dumps(
        {"content": "x", "timings": {"predicted_n": 100, "draft_n": 80, "draft_n_accepted": 60}}
    )
    result = run(repo, "llamacpp-timings", {"r.json": text}, path="r.json")
    assert result.accept_length == pytest.approx(2.5)  # 100/(100 − 60)


@pytest.mark.parametrize(
    ("timings", "message"),
    [
        ({"predicted_n": 100}, "draft_n"),
        ({"predicted_n": 100, "draft_n": 0, "draft_n_accepted": 0}, "zero drafts"),
        ({"predicted_n": 10, "draft_n": 30, "draft_n_accepted": 10}, "must exceed"),
        ({"draft_n": 30, "draft_n_accepted": 10}, "predicted_n"),
    ],
)
def test_llamacpp_timings_errors(repo: Path, timings: dict[str, int], message: str) -> None:
    with pytest.raises(InputError, match=message):
        run(repo, "llamacpp-timings", {"t.json": json.dumps(timings)}, path="t.json")


# --- vllm-per-request ----------------------------------------------------------------------


def test_per_request_dense_histogram(repo: Path) -> None:
    record = {
        "choices": [],
        "metrics": {
            "speculative_decoding": {
                "acceptance_histogram": [2, 3, 5],
                "mean_acceptance_length": 2.3,
            }
        },
    }
    result = run(repo, "vllm-per-request", {"r.json": json.dumps(record)}, path="r.json")
    # steps 2 + 3 + 5 = 10; accepted 0·2 + 1·3 + 2·5 = 13: 1 + 13/10 = 2.3; D = 3 − 1 = 2
    assert result.accept_length == pytest.approx(2.3)
    assert result.formula == "1 + 13/10"
    assert result.draft_length == 2
    assert result.marginal == pytest.approx((0.8, 0.5))  # (3 + 5)/10, 5/10


def test_per_request_sparse_histogram(repo: Path) -> None:
    record = {
        "speculative_decoding": {"acceptance_histogram": {"0": 2, "2": 5}, "num_spec_tokens": 3}
    }
    result = run(repo, "vllm-per-request", {"r.json": json.dumps(record)}, path="r.json")
    # steps 7; accepted 2·5 = 10: 1 + 10/7 = 2.4286
    assert result.accept_length == pytest.approx(1 + 10 / 7)
    assert result.draft_length == 3
    assert result.marginal == pytest.approx((5 / 7, 5 / 7, 0.0))


def test_per_request_json_lines_pooled(repo: Path) -> None:
    lines = [
        {
            "metrics": {
                "speculative_decoding": {"num_spec_steps": 10, "num_accepted_draft_tokens": 15}
            }
        },
        {
            "metrics": {
                "speculative_decoding": {"num_spec_steps": 30, "mean_acceptance_length": 2.0}
            }
        },
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    result = run(repo, "vllm-per-request", {"r.jsonl": text}, path="r.jsonl")
    # 15 + (2.0 − 1)·30 = 45 accepted over 40 steps: 1 + 45/40 = 2.125 (mean of ALs: 2.25)
    assert result.accept_length == pytest.approx(2.125)


def test_per_request_lone_mean(repo: Path) -> None:
    text = json.dumps({"speculative_decoding": {"mean_acceptance_length": 2.75}})
    assert run(repo, "vllm-per-request", {"r.json": text}, path="r.json").accept_length == 2.75


def test_per_request_null_block_and_empty_block(repo: Path) -> None:
    null = json.dumps({"metrics": {"speculative_decoding": None}})
    with pytest.raises(InputError, match="no speculative_decoding block"):
        run(repo, "vllm-per-request", {"r.json": null}, path="r.json")
    empty = json.dumps({"speculative_decoding": {"draft_acceptance_rate": 0.5}})
    with pytest.raises(InputError, match="has no acceptance_histogram"):
        run(repo, "vllm-per-request", {"e.json": empty}, path="e.json")


def test_per_request_bad_histogram_key(repo: Path) -> None:
    text = '{\n "speculative_decoding": {\n  "acceptance_histogram": {"x": 1}\n }\n}\n'
    with pytest.raises(InputError, match="not an accepted-draft count") as info:
        run(repo, "vllm-per-request", {"r.json": text}, path="r.json")
    assert info.value.line == 3


def test_per_request_bucket_above_num_spec_tokens(repo: Path) -> None:
    # num_spec_tokens 3 in the record: 5 accepted drafts is impossible; at the histogram
    # key's line (3) of the record.
    text = (
        '{\n "speculative_decoding": {\n  "acceptance_histogram": {"0": 10, "5": 3},\n'
        '  "num_spec_tokens": 3\n }\n}\n'
    )
    with pytest.raises(InputError) as info:
        run(repo, "vllm-per-request", {"r.json": text}, path="r.json")
    assert info.value.reason == "accepted count 5 exceeds D = 3 (num_spec_tokens)"
    assert (info.value.file, info.value.line) == ("deploy/r.json", 3)


def test_per_request_bucket_above_deployment_d_records_the_least_d(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "r.json").write_text(
        json.dumps({"speculative_decoding": {"acceptance_histogram": {"0": 10, "5": 3}}})
    )
    # D = 3 comes from the deployment; the record does not state its k. A step that
    # accepted 5 drafts was drafting at D ≥ 5: no error, the bound is recorded (SG309).
    spec = claims(
        "evidence:\n  metrics:\n    format: vllm-per-request\n    path: r.json\n",
        draft_length=3,
    )
    result = read_acceptance(spec, base_dir=tmp_path, shown_base="")
    # steps 10 + 3 = 13; accepted 5·3 = 15 ⇒ AL = 1 + 15/13
    assert result.formula == "1 + 15/13"
    assert result.draft_length is None
    assert result.min_draft_length == 5


# --- sglang-server-info --------------------------------------------------------------------


def test_sglang_server_info(repo: Path) -> None:
    top = json.dumps({"avg_spec_accept_length": 3.42})
    assert run(repo, "sglang-server-info", {"a.json": top}, path="a.json").accept_length == 3.42
    nested = json.dumps(
        {
            "version": "0.5",
            "internal_states": [{"avg_spec_accept_length": 2.5}, {"avg_spec_accept_length": 3.1}],
        }
    )
    # One entry per data-parallel rank: every rank counts, (2.5 + 3.1) / 2 = 2.8; no
    # step counts per rank, so the mean is labelled an estimate.
    result = run(repo, "sglang-server-info", {"b.json": nested}, path="b.json")
    assert result.accept_length == pytest.approx(2.8)
    assert result.estimate
    assert result.note is not None
    assert "all 2 data-parallel ranks" in result.note
    with pytest.raises(InputError, match="no avg_spec_accept_length"):
        run(
            repo,
            "sglang-server-info",
            {"c.json": json.dumps({"internal_states": [{}]})},
            path="c.json",
        )


# --- trtllm-iteration-stats ----------------------------------------------------------------

ITERATIONS = [
    {
        "iter": 1,
        "specDecodingStats": {
            "numAcceptedTokens": 30,
            "numRequestsWithDraftTokens": 10,
            "numDraftTokens": 40,
            "acceptanceLength": 4.0,
        },
    },
    {
        "iter": 2,
        "specDecodingStats": {
            "numAcceptedTokens": 18,
            "numRequestsWithDraftTokens": 10,
            "numDraftTokens": 40,
            "acceptanceLength": 2.8,
        },
    },
    {"iter": 3},
]


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(ITERATIONS, indent=1),
        "\n".join(json.dumps(item) for item in ITERATIONS),
        json.dumps([json.dumps(item) for item in ITERATIONS]),
    ],
    ids=["json-list", "json-lines", "json-strings"],
)
def test_trtllm_iteration_stats(repo: Path, text: str) -> None:
    result = run(repo, "trtllm-iteration-stats", {"it.json": text}, path="it.json")
    # (30 + 18 + 10 + 10)/(10 + 10) = 68/20 = 3.4; D = 80/20 = 4; r = 48/80 = 0.6
    assert result.accept_length == pytest.approx(3.4)
    assert result.formula == "(48 + 20)/20"
    assert result.draft_length == 4
    assert result.acceptance_rate == pytest.approx(0.6)


def test_trtllm_without_drafts(repo: Path) -> None:
    with pytest.raises(InputError, match="no specDecodingStats"):
        run(repo, "trtllm-iteration-stats", {"a.json": json.dumps([{"iter": 1}])}, path="a.json")
    zero = [{"specDecodingStats": {"numAcceptedTokens": 0, "numRequestsWithDraftTokens": 0}}]
    with pytest.raises(InputError, match="zero requests"):
        run(repo, "trtllm-iteration-stats", {"b.json": json.dumps(zero)}, path="b.json")


def test_trtllm_bad_json_lines(repo: Path) -> None:
    text = json.dumps(ITERATIONS[0]) + "\n{oops\n"
    with pytest.raises(InputError, match="JSON Lines") as info:
        run(repo, "trtllm-iteration-stats", {"a.jsonl": text}, path="a.jsonl")
    assert info.value.line == 2


# --- speculation-profile -------------------------------------------------------------------

PROFILE = {
    "schema_version": "1.0",
    "measured": True,
    "method": "eagle3",
    "num_speculative_tokens": 3,
    "conditional_accept_rates": [0.7, 0.714286, 0.6],
    "marginal_accept_rates": [0.7, 0.5, 0.3],
    "mean_accept_length": 2.5,
    "mean_accept_length_per_request": 2.56,
}


def test_speculation_profile(repo: Path) -> None:
    result = run(
        repo, "speculation-profile", {"p.json": json.dumps(PROFILE, indent=1)}, path="p.json"
    )
    assert result.accept_length == 2.5
    assert result.draft_length == 3
    assert result.marginal == (0.7, 0.5, 0.3)
    assert result.note is not None
    assert "per-request mean 2.56" in result.note
    assert acceptance_profile_problems(result.marginal, result.accept_length) == []  # 1 + 1.5


def test_speculation_profile_conditional_only(repo: Path) -> None:
    profile = {**PROFILE, "marginal_accept_rates": None, "conditional_accept_rates": [0.8, 0.5]}
    result = run(repo, "speculation-profile", {"p.json": json.dumps(profile)}, path="p.json")
    assert result.marginal == pytest.approx((0.8, 0.4))  # 0.8, 0.8·0.5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"measured": False, "mean_accept_length": None}, "stub"),
        ({"schema_version": "2.0"}, "schema_version"),
        ({"mean_accept_length": "2.5"}, "finite number"),
    ],
)
def test_speculation_profile_errors(repo: Path, change: dict[str, object], message: str) -> None:
    text = json.dumps({**PROFILE, **change})
    with pytest.raises(InputError, match=message):
        run(repo, "speculation-profile", {"p.json": text}, path="p.json")


# --- inline formats ------------------------------------------------------------------------


def block(body: str) -> str:
    return "version: 1\nevidence:\n  metrics:\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").split("\n")
    )


def test_per_position_published_minicpm() -> None:
    # vLLM PR #24243: marginals sum to 1.47, AL 2.47 as printed
    result = inline(block("format: per-position\nmarginal: [0.58, 0.34, 0.22, 0.15, 0.11, 0.07]"))
    assert result.accept_length == pytest.approx(2.47)
    assert result.draft_length == 6
    assert result.path is None
    assert acceptance_profile_problems(result.marginal, 2.47) == []


def test_per_position_conditional() -> None:
    result = inline(block("format: per-position\nconditional: [0.8, 0.5, 0.5]"))
    # marginals 0.8, 0.4, 0.2: AL = 1 + 1.4 = 2.4
    assert result.marginal == pytest.approx((0.8, 0.4, 0.2))
    assert result.accept_length == pytest.approx(2.4)


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ("format: per-position", "exactly one", 3),
        ("format: per-position\nmarginal: [0.5]\nconditional: [0.5]", "exactly one", 3),
        ("format: per-position\nmarginal: []", "non-empty", 5),
        ("format: per-position\nmarginal: [0.5, high]", "finite number", 5),
    ],
)
def test_per_position_errors(body: str, message: str, line: int) -> None:
    with pytest.raises(InputError, match=message) as info:
        inline(block(body))
    assert info.value.file == "specgate.yaml"
    assert info.value.line == line


def test_histogram_sparse_and_dense() -> None:
    # 0·2 + 1·3 + 2·5 = 13 over 10 steps: 1 + 13/10 = 2.3
    sparse = inline(block("format: histogram\nhistogram: {0: 2, 1: 3, 2: 5}"))
    assert sparse.accept_length == pytest.approx(2.3)
    assert sparse.formula == "1 + 13/10"
    assert sparse.draft_length is None
    dense = inline(block("format: histogram\nhistogram: [2, 3, 5]"))
    assert dense.accept_length == pytest.approx(2.3)
    assert dense.draft_length == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("format: histogram", "histogram needs"),
        ("format: histogram\nhistogram: {0: 0}", "zero steps"),
        ("format: histogram\nhistogram: {one: 3}", "accepted-draft count"),
        ("format: histogram\nhistogram: {1: 2.5}", "whole count"),
    ],
)
def test_histogram_errors(body: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        inline(block(body))


def test_histogram_bucket_above_d_records_the_least_d() -> None:
    # D = 3 (the block's draft_length), but 3 steps accepted 5 drafts: measured at D ≥ 5.
    # The file parses; rule SG309 judges the mismatch. AL = 1 + 5·3/(10 + 3) = 1 + 15/13.
    result = inline(block('format: histogram\ndraft_length: 3\nhistogram: {"0": 10, "5": 3}'))
    assert result.formula == "1 + 15/13"
    assert result.draft_length is None  # a sparse histogram states no D
    assert result.min_draft_length == 5
    # A dense list states its D (length − 1 = 4) and the bound: index 4 holds 2 steps.
    dense = inline(block("format: histogram\nhistogram: [1, 1, 1, 1, 2]"), draft_length=3)
    assert (dense.draft_length, dense.min_draft_length) == (4, 4)
    # Empty buckets do not count: the largest count with steps is 3 in [1, 1, 1, 1, 0].
    # AL = 1 + (1·1 + 2·1 + 3·1)/4 = 1 + 6/4 = 2.5
    ok = inline(block("format: histogram\nhistogram: [1, 1, 1, 1, 0]"), draft_length=3)
    assert (ok.accept_length, ok.min_draft_length) == (2.5, 3)


def test_iid_rate() -> None:
    # (1 − 0.8^5)/(1 − 0.8) = (1 − 0.32768)/0.2 = 3.3616
    result = inline(block("format: iid-rate\nalpha: 0.8\ndraft_length: 4"))
    assert result.accept_length == pytest.approx(3.3616)
    assert result.estimate
    assert result.marginal == pytest.approx((0.8, 0.64, 0.512, 0.4096))
    # D from the caller; α = 1 ⇒ every draft accepted ⇒ D + 1
    assert inline(block("format: iid-rate\nalpha: 1"), draft_length=3).accept_length == 4.0
    with pytest.raises(InputError, match="needs draft_length"):
        inline(block("format: iid-rate\nalpha: 0.8"))
    with pytest.raises(InputError, match="alpha in"):
        inline(block("format: iid-rate\nalpha: 1.5\ndraft_length: 2"))


# --- SG305 profile problems ----------------------------------------------------------------


def test_profile_problems() -> None:
    assert acceptance_profile_problems([0.7, 0.5, 0.3], None) == []
    rising = acceptance_profile_problems([0.5, 0.6], None)
    assert len(rising) == 1
    assert "rises from 0.5 at position 1 to 0.6 at position 2" in rising[0]
    outside = acceptance_profile_problems([1.2, -0.1], None)
    assert len(outside) == 2
    assert all("outside [0, 1]" in problem for problem in outside)
    # 1 + 0.5 + 0.3 = 1.8 vs 2.0: gap 0.2 > 0.02
    assert len(acceptance_profile_problems([0.5, 0.3], 2.0)) == 1
    assert acceptance_profile_problems([0.5, 0.3], 1.81) == []  # gap 0.01
    assert acceptance_profile_problems([0.5, 0.3], 1.82) == []  # gap 0.02, the limit itself
    # the gemma scrape's lone position-0 marginal 226/240 cannot reproduce AL 4.5958
    assert len(acceptance_profile_problems([226 / 240], 1 + 863 / 240)) == 1
    assert acceptance_profile_problems([float("nan")], 1.0) != []


# --- the spec block and paths --------------------------------------------------------------


def test_spec_from_claims_file() -> None:
    spec = claims(
        block("format: vllm-prometheus\npath: m.prom\nbaseline_path: b.prom\ndraft_length: 5"),
        draft_length=3,
    )
    assert (spec.format, spec.path, spec.baseline_path) == ("vllm-prometheus", "m.prom", "b.prom")
    assert spec.draft_length == 5  # the block's own value wins over the caller's


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ("format: vllm-csv\npath: x", "unknown metrics format", 4),
        ("format: vllm-log", "needs path", 3),
        ("format: vllm-log\npath: [a]", "path must be a string", 5),
        ("format: vllm-log\npath: a.log\nbaseline_path: b.log", "only to vllm-prometheus", 6),
        ("format: iid-rate\nalpha: 0.5\ndraft_length: 0", "integer ≥ 1", 6),
    ],
)
def test_spec_errors(body: str, message: str, line: int) -> None:
    with pytest.raises(InputError, match=message) as info:
        claims(block(body))
    assert info.value.line == line


def test_spec_block_not_a_mapping() -> None:
    with pytest.raises(InputError, match="must be a mapping"):
        claims("evidence:\n  metrics: vllm\n")


def test_paths_stay_in_the_repository(repo: Path) -> None:
    (repo / "outside.log").write_text("x")  # inside the repo, outside deploy/: allowed
    outside_repo = repo.parent / f"{repo.name}-elsewhere.log"
    outside_repo.write_text("x")
    spec = claims(block(f"format: sglang-log\npath: ../../{outside_repo.name}"))
    with pytest.raises(InputError, match="leaves the repository") as info:
        read_acceptance(spec, base_dir=repo / "deploy", shown_base="deploy")
    assert (info.value.file, info.value.line) == ("specgate.yaml", 5)
    (repo / "deploy" / "link.log").symlink_to(outside_repo)
    with pytest.raises(InputError, match="leaves the repository"):
        run(repo, "sglang-log", {}, path="link.log")
    with pytest.raises(InputError, match="must be relative"):
        run(repo, "sglang-log", {}, path=str(outside_repo))
    with pytest.raises(InputError, match="does not exist"):
        run(repo, "sglang-log", {}, path="missing.log")
    with pytest.raises(InputError, match="does not exist"):
        run(repo, "vllm-prometheus", {"a.prom": prom()}, path="a.prom", baseline_path="b.prom")


def test_shown_path_is_normalised(repo: Path) -> None:
    (repo / "bench").mkdir()
    (repo / "bench" / "s.log").write_text("Decode batch. accept len: 2.00\n")
    result = run(repo, "sglang-log", {}, path="../bench/s.log")
    assert result.path == "bench/s.log"


def test_file_limits(repo: Path) -> None:
    # Referenced metrics and logs have their own limit, 256 MiB (a few hours of server
    # log); a sparse file one byte over it is refused before anything is read.
    with (repo / "deploy" / "big.log").open("wb") as handle:
        handle.truncate(METRICS_MAX_BYTES + 1)
    with pytest.raises(InputError, match="larger than 256 MiB"):
        run(repo, "sglang-log", {}, path="big.log")
    # A 2 MiB log (over the 1 MiB claims-file limit) is read.
    line = "[2025-01-01 00:00:00] Decode batch. #running-req: 1, accept len: 2.50\n"
    padding = "x" * 1000 + "\n"
    text = padding * 2100 + line
    assert run(repo, "sglang-log", {"ok.log": text}, path="ok.log").accept_length == 2.5
    # Only the lines the format's labels select are decoded: a bad byte on one of them
    # is an error at its line; elsewhere it is never read.
    (repo / "deploy" / "bin.log").write_bytes(b"\xff\xfe\nDecode batch. \xff accept len: 2.5\n")
    with pytest.raises(InputError, match="UTF-8") as info:
        run(repo, "sglang-log", {}, path="bin.log")
    assert info.value.line == 2


def test_log_parsing_is_linear(repo: Path) -> None:
    # near-1 MiB lines built to make backtracking regexes explode
    hostile = {
        "v.log": "Per-position acceptance rate: " + "0, " * 300_000 + "x\n",
        "s.log": "Decode batch. accept len: " + "1." * 400_000 + "\n",
        "l.log": "statistics " + " " * 500_000 + "#gen drafts = " + "9" * 400_000 + "\n",
    }
    start = time.perf_counter()
    with pytest.raises(InputError, match="no vLLM spec-decode metrics lines"):
        run(repo, "vllm-log", {"v.log": hostile["v.log"]}, path="v.log")
    # "accept len: 1.1.1…" is no number: an input error at its line (issue 18: a number
    # read in part, 2.46 from "2.46.1", is a misread, not a measurement)
    with pytest.raises(InputError, match=r"s\.log:1:27: accept len: '1\.1\.1.*is not a number"):
        run(repo, "sglang-log", {"s.log": hostile["s.log"]}, path="s.log")
    with pytest.raises(InputError, match=r"no llama\.cpp speculative 'statistics' line"):
        run(repo, "llamacpp-log", {"l.log": hostile["l.log"]}, path="l.log")
    assert time.perf_counter() - start < 5.0
