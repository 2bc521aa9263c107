"""Defects found by the two reviewers on inputs specgate had not seen (reviews real.md
and newuser.md), each as a kind: every expected value is worked by hand in the test's
docstring or taken from the published source named there."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rules.test_rules import claims, codes, dep, details, message, only

from specgate.check.report import FileReport

Check = Callable[..., FileReport]
REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "hf-config" / "config"
LLAMA8 = REAL / "meta-llama--Meta-Llama-3.1-8B_config.json"


def severity(report: FileReport, code: str) -> str:
    (found,) = [f for f in report.all_findings() if f.code == code]
    return found.severity


# --- newuser defect 16: head counts that do not divide -------------------------------------


@pytest.mark.parametrize(("heads", "kv"), [(7, 3), (28, 8), (10, 4)])
def test_head_counts_that_do_not_divide_are_a_schema_finding(
    check_text: Check, heads: int, kv: int
) -> None:
    """7/3, 28/8 and 10/4 leave a remainder (7 = 2·3 + 1, 28 = 3·8 + 4, 10 = 2·4 + 2): no
    grouped-query model has them, so SG001 at model.kv_heads and no fractional G."""
    report = check_text(claims(dep(d=5, rho=0.05, al=2, model={"query_heads": heads,
                                                                "kv_heads": kv})))
    assert codes(report) == ["SG001"]
    assert f"model.query_heads {heads} is not a multiple of model.kv_heads {kv}" in message(
        report, "SG001"
    )
    assert only(report).metrics.query_heads_per_kv is None


def test_head_counts_that_divide_still_give_g(check_text: Check) -> None:
    """32 / 8 = 4 exactly."""
    report = check_text(claims(dep(d=3, rho=0.05, al=2, model={"query_heads": 32,
                                                                "kv_heads": 8})))
    assert "SG001" not in codes(report)
    assert only(report).metrics.query_heads_per_kv == 4


# --- newuser defect 4: an estimated AL warns, never fails ----------------------------------


def test_iid_rate_al_over_the_claim_warns(check_text: Check) -> None:
    """newuser try/misc.specgate.yaml `iid`: α 0.607, D 4: 0.607⁵ = 0.082403, AL =
    (1 − 0.082403)/(1 − 0.607) = 0.917597/0.393 = 2.3349; S = 2.3349/(1 + 0.1·4) =
    1.6678 < claimed 1.7 → SG104, a warning: the AL is the i.i.d. model's, not a
    measurement."""
    report = check_text(claims(dep(
        d=4, rho=0.1, claim=1.7, speculation={"mechanism": "draft_model"},
        evidence={"metrics": {"format": "iid-rate", "alpha": 0.607}},
    )))
    assert only(report).metrics.accept_length == pytest.approx(2.3349, abs=5e-5)
    assert severity(report, "SG104") == "warn"
    assert "1.6678x" in message(report, "SG104")
    assert only(report).status != "fail"


def test_iid_rate_al_below_the_floor_and_a_loss_warn(check_text: Check) -> None:
    """α 0.3, D 4, ρ 0.4 stated: AL = (1 − 0.3⁵)/(0.7) = (1 − 0.00243)/0.7 = 1.4251;
    break-even 1 + 0.4·4 = 2.6, floor 2.86 > AL → SG102; S = 1.4251/2.6 = 0.5481 < 1 →
    SG106. Both rest on the estimated AL: warnings."""
    report = check_text(claims(dep(
        d=4, rho=0.4, speculation={"mechanism": "draft_model"},
        evidence={"metrics": {"format": "iid-rate", "alpha": 0.3}},
    )))
    assert only(report).metrics.accept_length == pytest.approx(1.4251, abs=5e-5)
    assert severity(report, "SG102") == "warn"
    assert severity(report, "SG106") == "warn"
    assert only(report).status != "fail"


def test_a_measured_al_still_fails(check_text: Check) -> None:
    """The same claim over a stated (measured) AL 2.3349: 2.3349/1.4 = 1.6678 < 1.7 → fail."""
    report = check_text(claims(dep(d=4, rho=0.1, al=2.3349, claim=1.7)))
    assert severity(report, "SG104") == "fail"


# --- newuser defect 6: the counted parameters choose the class; none when disabled ---------


def with_config(tmp_path: Path, source: Path) -> str:
    (tmp_path / ".git").mkdir(exist_ok=True)
    shutil.copyfile(source, tmp_path / source.name)
    return source.name


def test_counted_parameters_choose_parallel_draft_head(check_text: Check, tmp_path: Path) -> None:
    """Llama-3.1-8B's config counts 8,030,261,248 parameters (the JSON's
    inputs.model.parameters) ≤ 10 B: small; at the default low latency
    docs/theory.md#mechanism-recommendation's row is parallel-draft-head (ρ ≈ 0.14,
    docs/validation.md), as with parameters_b: 8.03 stated."""
    config = with_config(tmp_path, LLAMA8)
    report = check_text(claims(dep(d=3, al=2.7, model={"hf_config": config},
                                   speculation={"mechanism": "eagle3"})))
    assert only(report).recommended.name == "parallel-draft-head"
    assert only(report).metrics.typical_draft_depth_ratio == pytest.approx(0.14)


def test_disabled_deployment_gets_no_mechanism_numbers(check_text: Check) -> None:
    """speculation off: no typical ρ (0.15 of the default class was shown before)."""
    report = check_text(claims(dep(enabled=False)))
    m = only(report).metrics
    assert m.draft_depth_ratio is None
    assert m.draft_depth_ratio_source is None


# --- real defect 4: the measured speedup caps an estimated β ------------------------------

DEEPSEEK = REAL / "deepseek-ai--DeepSeek-V3_config.json"


def trtllm_r1(check_text: Check, tmp_path: Path, d: int, al: float, evidence: dict[str, object],
              *, claim: float) -> FileReport:
    """TensorRT-LLM blog1 @01c4ece9 ("Autoregressive MTP Layers"): DeepSeek-R1 (the
    DeepSeek-V3 config), 8×B200 TP8, batch 1, ISL 1k / OSL 2k."""
    config = with_config(tmp_path, DEEPSEEK)
    return check_text(claims(dep(
        d=d, al=al, claim=claim, model={"hf_config": config}, speculation={"mechanism": "mtp"},
        workload={"concurrency": 1, "context_length": 2048},
        hardware={"gpu": "b200", "tensor_parallel": 8}, evidence=evidence,
    )))


def test_mtp1_measured_speedup_caps_the_uniform_routing_beta(
    check_text: Check, tmp_path: Path
) -> None:
    """real.md 08: MTP 1, AL 1.92, 111 → 198 TPS/user: S = 198/111 = 1.7838, so β + ρ·1 ≤
    AL/S = 1.92·111/198 = 213.12/198 = 1.0764: the uniform-routing estimate (1.2576 in
    the review) is capped there, ρ derived from the measurement = (1.0764 − 1.0764)/1 = 0,
    S = the measurement; the claimed 1.78 ≤ 1.7838: no SG112 ("speedup at risk")."""
    report = trtllm_r1(check_text, tmp_path, 1, 1.92, {"throughput": {
        "baseline_tokens_per_s": 111, "speculative_tokens_per_s": 198}}, claim=1.78)
    m = only(report).metrics
    assert m.verify_cost.bound == "capped"
    assert m.verify_cost.cap == pytest.approx(1.0764, abs=5e-5)
    assert m.verify_cost_ratio == pytest.approx(1.0764, abs=5e-5)
    assert m.draft_depth_ratio_source == "derived"
    assert m.draft_depth_ratio == pytest.approx(0.0, abs=1e-12)
    assert m.theoretical_speedup == pytest.approx(1.7838, abs=5e-5)
    assert not {"SG112", "SG104", "SG107", "SG102"} & set(codes(report))
    assert "β capped at AL / S = 1.0764" in message(report, "SG204")


def test_mtp3_relaxed_cap_and_derived_rho(check_text: Check, tmp_path: Path) -> None:
    """real.md 07: AL 3.10, measured 2.33x (blog2): β ≤ 3.10/2.33 = 1.3305 (estimate 1.749
    in the review); claim 2.33 = the measurement: no SG112, no SG107."""
    report = trtllm_r1(check_text, tmp_path, 3, 3.10, {"measured_speedup": 2.33}, claim=2.33)
    m = only(report).metrics
    assert m.verify_cost_ratio == pytest.approx(1.3305, abs=5e-5)
    assert m.verify_cost.bound == "capped"
    assert not {"SG112", "SG107", "SG104"} & set(codes(report))


def test_mtp3_strict_prices_d4_at_the_capped_beta(check_text: Check, tmp_path: Path) -> None:
    """real.md 06: AL 2.82, 111 → 253: β ≤ 2.82·111/253 = 313.02/253 = 1.2372 (estimate
    1.749); S(3) = 2.82/1.2372 = 2.2793 = 253/111. SG203 prices D 4 (AL 2.99) on the
    capped curve, which rises with N like the model's: S(4) < S(3), as published (MTP 4:
    2.21x < 2.28x); before, both were priced at the uncapped 1.749 (1.5589x → 1.4439x)."""
    report = trtllm_r1(check_text, tmp_path, 3, 2.82, {
        "throughput": {"baseline_tokens_per_s": 111, "speculative_tokens_per_s": 253},
        "next": {"draft_length": 4, "accept_length": 2.99}}, claim=2.27)
    m = only(report).metrics
    assert m.verify_cost_ratio == pytest.approx(1.2372, abs=5e-5)
    assert m.theoretical_speedup == pytest.approx(2.2793, abs=5e-5)
    assert "SG203" in codes(report)
    assert "2.2793x → " in message(report, "SG203")
    increase = m.draft_increase
    assert increase is not None and not increase.increase
    assert "SG112" not in codes(report)


def test_no_cap_without_a_measurement_and_none_below_the_estimate(
    check_text: Check, tmp_path: Path
) -> None:
    """No measured speedup: the estimate stays (bound upper, uniform routing). A measured
    speedup that allows more than the estimate (AL 1.92 at 1.2x: AL/S = 1.6 > the
    estimate) leaves it as it is."""
    report = trtllm_r1(check_text, tmp_path, 1, 1.92, {}, claim=1.5)
    assert only(report).metrics.verify_cost.bound == "upper"
    estimate = only(report).metrics.verify_cost_ratio
    assert estimate < 1.92 / 1.2
    report = trtllm_r1(check_text, tmp_path, 1, 1.92, {"measured_speedup": 1.2}, claim=1.2)
    m = only(report).metrics
    assert m.verify_cost.bound == "upper" and m.verify_cost.cap is None
    assert m.verify_cost_ratio == pytest.approx(estimate)


# --- real defect 3: a claim within the precision of the measurement ------------------------

R1_TEXT = """\
version: 1
deployments:
  - name: r1
    speculation: {{enabled: true, mechanism: mtp, draft_length: 3}}
    evidence:
      accept_length: 2.82
      cache_coherence_eval: true
{evidence}
    claims:
      speedup: {claim}
"""
PAIR = """\
      throughput:
        baseline_tokens_per_s: {base}
        speculative_tokens_per_s: {spec}"""


def test_claim_equal_to_the_sources_rounding_is_a_note(check_text: Check) -> None:
    """real.md 06: 253/111 = 2.2793; with each integer ±0.5 the ratio lies in 252.5/111.5
    = 2.2646 … 253.5/110.5 = 2.2941, so the published 2.28x is the source's rounding:
    a note, no fail."""
    report = check_text(R1_TEXT.format(evidence=PAIR.format(base=111, spec=253), claim="2.28"))
    assert severity(report, "SG107") == "note"
    assert "2.2646x … 2.2941x" in message(report, "SG107")
    assert only(report).status != "fail"


def test_claim_above_the_precision_still_fails(check_text: Check) -> None:
    """2.30 > 253.5/110.5 = 2.2941: a real excess, fail."""
    report = check_text(R1_TEXT.format(evidence=PAIR.format(base=111, spec=253), claim="2.30"))
    assert severity(report, "SG107") == "fail"
    assert "below 2.2941x" in message(report, "SG107")


def test_more_digits_narrow_the_interval(check_text: Check) -> None:
    """111.0 and 253.0 are ±0.05: 252.95/111.05 = 2.2778 … 253.05/110.95 = 2.2808, so 2.28
    is still within; 2.29 (2.285 … 2.295) > 2.2808 fails. Written 2.2793 (±0.00005, at most
    2.27935): 2.29 fails, while 2.28 is 2.2793 rounded to two decimals (2.275 ≤ 2.27935), a
    note (real-r4 defect 3: the claim is written with a precision too)."""
    report = check_text(R1_TEXT.format(evidence=PAIR.format(base="111.0", spec="253.0"),
                                       claim="2.28"))
    assert severity(report, "SG107") == "note"
    assert "2.2778x … 2.2808x" in message(report, "SG107")
    report = check_text(R1_TEXT.format(evidence=PAIR.format(base="111.0", spec="253.0"),
                                       claim="2.29"))
    assert severity(report, "SG107") == "fail"
    report = check_text(R1_TEXT.format(evidence="      measured_speedup: 2.2793", claim="2.29"))
    assert severity(report, "SG107") == "fail"
    report = check_text(R1_TEXT.format(evidence="      measured_speedup: 2.2793", claim="2.28"))
    assert severity(report, "SG107") == "note"


def test_a_claim_that_is_the_published_rounding_is_a_note(check_text: Check) -> None:
    """real-r4 06, sudoingX/qwen38-mtp PR #11 (MTP k 4): 63.3 → 116.3 tok/s, published
    "+84%". 116.3/63.3 = 1.8373; as written 116.25/63.35 = 1.8350 … 116.35/63.25 = 1.8395;
    the claim 1.84 stands for 1.835 … 1.845, and 1.835 ≤ 1.8395: a note. 1.85 (1.845 >
    1.8395) fails."""
    pair = PAIR.format(base="63.3", spec="116.3")
    report = check_text(R1_TEXT.format(evidence=pair, claim="1.84"))
    assert severity(report, "SG107") == "note"
    assert only(report).status != "fail"
    report = check_text(R1_TEXT.format(evidence=pair, claim="1.85"))
    assert severity(report, "SG107") == "fail"


@pytest.mark.parametrize(("measured", "claim", "expected"), [
    ("1.6", "2", "fail"),  # "2" is a round number (±0.5 is 25 % of it), not a rounding
    ("1.525", "1.6", "fail"),  # 1.6 stands for 1.55 … 1.65; 1.55 > 1.525 + ½·10⁻³
    ("1.56", "1.6", "note"),  # 1.56 rounds to 1.6 at one decimal
    ("9.6", "10", "note"),  # two significant digits: 9.5 … 10.5, and 9.65 ≥ 9.5
    ("8.9", "10", "fail"),  # 9.5 > 8.95
])
def test_a_claims_own_rounding_needs_two_significant_digits(
    check_text: Check, measured: str, claim: str, expected: str
) -> None:
    """The claim is read as a rounding only when half a unit of its last digit is at most
    5 % of it (two or more significant digits)."""
    report = check_text(R1_TEXT.format(evidence=f"      measured_speedup: {measured}", claim=claim))
    assert severity(report, "SG107") == expected


def test_stated_speedup_rounded_to_two_decimals(check_text: Check) -> None:
    """measured_speedup 2.3 is ±0.05: a claimed 2.33 is within 2.25 … 2.35 (a note); 2.36
    fails."""
    report = check_text(R1_TEXT.format(evidence="      measured_speedup: 2.3", claim="2.33"))
    assert severity(report, "SG107") == "note"
    report = check_text(R1_TEXT.format(evidence="      measured_speedup: 2.3", claim="2.36"))
    assert severity(report, "SG107") == "fail"


@pytest.mark.parametrize(("text", "unit"), [
    ("253", 0.5), ("2.28", 0.005), ("2.50", 0.005), ("2.5e3", 50.0), ("1_000", 0.5),
    ("-0.25", 0.005), ("1.", 0.5), ("0x1F", None), (".inf", None), ("'2.5'", None),
    # hostile-r4 defect 5: a unit past the largest float is unknown, not an OverflowError
    ("1e308", 0.5e308), ("1e309", None), ("1e400", None), ("1.5e309", 0.5e308),
])
def test_half_unit_of_the_last_digit(text: str, unit: float | None) -> None:
    """Half a unit of the last printed digit: 10⁰/2, 10⁻²/2, 10⁻²/2, 10^(3−1)/2 …"""
    from specgate.core.numbers import half_unit

    found = half_unit(text)
    assert found == (None if unit is None else pytest.approx(unit))


# --- newuser defect 3: AL measured at another D -------------------------------------------


def stale(d: int, claim: float, rate: float = 0.5, at: int = 3,
          **blocks: dict[str, object]) -> str:
    return claims(dep(d=d, rho=0.06, claim=claim, evidence={"metrics": {
        "format": "draft-acceptance-rate", "rate": rate, "draft_length": at}}, **blocks))


def test_longer_chain_uses_the_upper_bound_of_al(check_text: Check) -> None:
    """AL = 1 + 0.5·3 = 2.5 measured at D 3, served D 4 (SG309 fails the stale evidence).
    The first 3 drafts are the same, m₄ ≤ m₃ ≤ (2.5 − 1)/3 = 0.5, so AL(4) ≤ 2.5 + 0.5 =
    3.0 and S ≤ 3.0/(1 + 0.06·4) = 2.4194. A claimed 2.2 is not failed by SG104 (before:
    2.5/1.24 = 2.0161 < 2.2 and "lower the claim"); a claimed 2.5 > 2.4194 is."""
    report = check_text(stale(4, 2.2))
    assert "SG309" in codes(report)
    assert "SG104" not in codes(report)
    assert only(report).metrics.accept_length_upper == pytest.approx(3.0)
    report = check_text(stale(4, 2.5))
    assert "2.4194x" in message(report, "SG104")
    assert "AL at D = 4 is at most 3" in message(report, "SG104")


def test_shorter_chain_keeps_the_measured_al_as_its_bound(check_text: Check) -> None:
    """AL 2.5 at D 3, served D 2: AL(2) ≤ AL(3) = 2.5 (and ≤ 1 + 2 = 3): S ≤ 2.5/(1 +
    0.06·2) = 2.2321; a claimed 2.3 fails SG104, 2.2 does not."""
    report = check_text(stale(2, 2.3))
    assert "2.2321x" in message(report, "SG104")
    assert "SG104" not in codes(check_text(stale(2, 2.2)))


def test_tree_at_another_depth_is_bounded_by_one_plus_d_only() -> None:
    """A tree's nodes are spread anew at another depth: only AL ≤ 1 + D holds (D 4 → 5);
    a chain grown from D 3 (AL 2.5) to D 4: 2.5 + 1·1.5/3 = 3.0; shrunk to D 2: 2.5;
    measured at an unknown D: 1 + D."""
    from specgate.theory.formulas import accept_length_upper_bound as upper

    assert upper(2.5, 3, 4, chain=False) == 5.0
    assert upper(2.5, 3, 4, chain=True) == pytest.approx(3.0)
    assert upper(2.5, 3, 2, chain=True) == 2.5
    assert upper(2.5, None, 4, chain=True) == 5.0
    assert upper(3.9, 3, 4, chain=True) == pytest.approx(4.8667, abs=5e-5)  # 3.9 + 2.9/3


# --- newuser defect 7: host overhead in the proven β ---------------------------------------


def test_small_margin_roofline_fail_becomes_a_warning(check_text: Check) -> None:
    """newuser.md defect 7's doctor case: 8B at 256 sequences, c̄ 32,000 on an H100, D 3,
    ρ 0.06, AL 2.4: the modelled β 1.0362 gave S = 2.4/1.2162 = 1.9733 < 2.0 (fail at a
    1.3 % margin). With host overhead of up to 62 % of a plain step (vLLM v0.5.3 profile,
    vLLM blog 2024-09-05: 38 % GPU time) the proven β is 1 + 0.0362·0.38 = 1.0138 and S ≤
    2.4/1.1938 = 2.0104 ≥ 2.0: SG112 warns, no fail; a claim of 2.1 > 2.0104 still fails.
    (TP 1 and BF16 stated: with either unknown the proven β is the lowest over them.)"""
    model = {"parameters_b": 8, "layers": 32, "hidden_size": 4096, "query_heads": 32,
             "kv_heads": 8, "head_dim": 128}
    workload = {"concurrency": 256, "context_length": 32000, "prefill_tokens_per_step": 0}

    def run(claim: float) -> FileReport:
        return check_text(claims(dep(d=3, rho=0.06, al=2.4, claim=claim, model=model,
                                     speculation={"mechanism": "eagle3"}, workload=workload,
                                     hardware={"gpu": "h100-sxm", "tensor_parallel": 1,
                                               "weight_bytes": 2, "compute_dtype": "bf16",
                                               "kv_cache_bytes": 2})))

    report = run(2.0)
    m = only(report).metrics
    assert m.verify_cost_ratio == pytest.approx(1.0362, abs=5e-5)
    assert m.proven_verify_cost_ratio == pytest.approx(1.0138, abs=5e-5)
    assert "SG104" not in codes(report) and "SG112" in codes(report)
    assert "host overhead" in details(report, "SG112")
    assert "2.0104x" in message(run(2.1), "SG104")


def test_section_8_1_worked_numbers_stay_exact(check_text: Check) -> None:
    """docs/theory.md#cost-model: no KV, MoE, FP8, TP or prefill inputs → β 1 (estimate and proven):
    D 4, ρ 0.05, AL 2.6: S = 2.6/1.2 = 2.1667 exactly; the host overhead moves nothing at β 1."""
    report = check_text(claims(dep(d=4, rho=0.05, al=2.6, claim=2.1667)))
    m = only(report).metrics
    assert (m.verify_cost_ratio, m.proven_verify_cost_ratio) == (1.0, 1.0)
    assert m.theoretical_speedup == pytest.approx(2.6 / 1.2)
    assert "SG104" not in codes(report)


def test_json_says_capped_and_gives_the_interval(check_text: Check, tmp_path: Path) -> None:
    """The JSON metrics carry the label and the numbers: real.md 06's cap 313.02/253 =
    1.2372, interval 2.2646 … 2.2941, and AL itself as its upper bound (not stale)."""
    from specgate.reporters.json_report import metrics_json

    report = trtllm_r1(check_text, tmp_path, 3, 2.82, {"throughput": {
        "baseline_tokens_per_s": 111, "speculative_tokens_per_s": 253}}, claim=2.28)
    out = metrics_json(only(report).metrics)
    assert out["verify_cost_bound"] == "capped"
    assert out["verify_cost_cap"] == 1.2372
    assert out["measured_speedup_range"] == [2.2646, 2.2941]
    assert out["accept_length_upper"] == 2.82


@pytest.mark.parametrize("evidence", [
    "      measured_speedup: 1e400",
    "      measured_speedup: 1e309",
    PAIR.format(base=100, spec="1e400"),
    PAIR.format(base="1e400", spec=100),
])
def test_a_measurement_past_the_largest_float_is_sg001(check_text: Check, evidence: str) -> None:
    """hostile-r4 defect 5: 1e400 written as a measured speedup or a throughput was an
    internal OverflowError (exit 3) while working out its precision; it is out of range,
    SG001 at its line (the fail of a schema violation)."""
    report = check_text(R1_TEXT.format(evidence=evidence, claim="2.28"))
    assert "SG001" in codes(report)
    assert only(report).status == "fail"
