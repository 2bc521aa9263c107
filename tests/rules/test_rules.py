"""Rule-by-rule edge cases on the boundary (docs/rules.md), messages that name the
number to change, status semantics and the schema rules' value handling.

Each deployment is written as JSON (also valid YAML); expected values are worked by
hand in the comments.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from specgate.check.report import DeploymentReport, FileReport

Check = Callable[..., FileReport]


def claims(*deployments: dict[str, Any]) -> str:
    return json.dumps({"version": 1, "deployments": list(deployments)}, indent=2)


def dep(
    name: str = "d",
    *,
    d: int | None = None,
    rho: float | None = None,
    al: float | None = None,
    claim: float | None = None,
    enabled: bool = True,
    coherent: bool = True,
    **blocks: dict[str, Any],
) -> dict[str, Any]:
    """A deployment: ``d``/``rho`` → speculation, ``al`` → evidence, ``claim`` → claims."""
    spec: dict[str, Any] = {"enabled": enabled}
    if d is not None:
        spec["draft_length"] = d
    if rho is not None:
        spec["draft_depth_ratio"] = rho
    spec.update(blocks.pop("speculation", {}))
    evidence: dict[str, Any] = {"cache_coherence_eval": True} if coherent else {}
    if al is not None:
        evidence["accept_length"] = al
    evidence.update(blocks.pop("evidence", {}))
    out: dict[str, Any] = {"name": name, "speculation": spec}
    if evidence:
        out["evidence"] = evidence
    if claim is not None:
        out["claims"] = {"speedup": claim}
    out.update(blocks)
    return out


def only(report: FileReport) -> DeploymentReport:
    (deployment,) = report.deployments
    return deployment


FLOOR1: dict[str, Any] = {"policy": {"min_accept_length": 1}}


def codes(report: FileReport) -> list[str]:
    return sorted(f.code for f in report.all_findings())


def message(report: FileReport, code: str) -> str:
    (found,) = [f for f in report.all_findings() if f.code == code]
    return found.message


def details(report: FileReport, code: str) -> str:
    """The details of the one finding of ``code``: formulas, sources, reasoning."""
    (found,) = [f for f in report.all_findings() if f.code == code]
    return found.details


# --- SG102 accept-length-below-floor -------------------------------------------------------


def test_al_exactly_at_the_default_floor_passes(check_text: Check) -> None:
    # docs/theory.md#al-floor-and-guideline moves this expectation (v1 floor 2): D = 4, ρ 0.05:
    # break-even 1 + 0.2 = 1.2, floor 1.2 · 1.1 = 1.32; AL 1.32 is not < 1.32. The seed's 2 is now
    # SG110's guideline.
    report = check_text(claims(dep(d=4, rho=0.05, al=1.32)))
    assert "SG102" not in codes(report)
    assert only(report).metrics.accept_length_floor.value == pytest.approx(1.32)
    assert codes(check_text(claims(dep(d=4, rho=0.05, al=2)))) == []


def test_al_just_below_the_default_floor_fails(check_text: Check) -> None:
    # docs/theory.md#al-floor-and-guideline moves this expectation: 1.3199 < 1.32, no tolerance (S =
    # 1.3199 / 1.2 ≥ 1: no SG106; SG110 is left out when SG102 already fails the AL)
    report = check_text(claims(dep(d=4, rho=0.05, al=1.3199)))
    assert codes(report) == ["SG102"]
    assert "below the floor 1.32" in message(report, "SG102")


def test_al_below_the_seed_floor_is_a_guideline_warning(check_text: Check) -> None:
    # docs/theory.md#al-floor-and-guideline: AL 1.9999 at D = 4 passes the floor 1.32 but is below
    # min(2, 1 + 4/2) = 2 for a trained drafter (mechanism unknown counts as trained): SG110 warn,
    # not a fail
    report = check_text(claims(dep(d=4, rho=0.05, al=1.9999)))
    assert codes(report) == ["SG110"]
    assert only(report).status == "actionable"


def test_default_floor_at_d1(check_text: Check) -> None:
    # docs/theory.md#al-floor-and-guideline moves this expectation (v1 floor min(2, 1.5) = 1.5): D =
    # 1, ρ 0.02: floor 1.02 · 1.1 = 1.122. DeepSeek-V3 MTP AL 1.85 passes; 1.49 passes the floor but
    # is below the guideline 1.5 (SG110); 1.12 fails
    assert codes(check_text(claims(dep(d=1, rho=0.02, al=1.85)))) == []
    assert codes(check_text(claims(dep(d=1, rho=0.02, al=1.49)))) == ["SG110"]
    report = check_text(claims(dep(d=1, rho=0.02, al=1.12)))
    assert codes(report) == ["SG102"]
    assert only(report).metrics.accept_length_floor.value == pytest.approx(1.122)


def test_no_default_floor_at_d0(check_text: Check) -> None:
    # docs/theory.md#al-floor-and-guideline, docs/theory.md#edge-cases move this expectation (v1
    # floor 1): at D = 0 there is no default floor; AL 1 = 1 + D passes SG103 and SG109 needs D ≥ 1
    report = check_text(claims(dep(d=0, rho=0.02, al=1)))
    assert codes(report) == []
    metrics = only(report).metrics
    assert metrics.accept_length_floor.value is None
    # D = 0: passes 0, cost β = 1, S = AL / β = 1
    assert metrics.theoretical_speedup == 1
    assert metrics.draft_overhead == 0


def test_explicit_floor_above_one_plus_d_is_unreachable(check_text: Check) -> None:
    # D = 1: AL ≤ 2, so a floor of 3 can never be met
    report = check_text(claims(dep(d=1, rho=0.02, al=1.85, policy={"min_accept_length": 3})))
    assert codes(report) == ["SG102"]
    text = message(report, "SG102")
    assert "unreachable" in text
    assert "policy.min_accept_length" in text


def test_explicit_floor_equal_to_one_plus_d_is_not_called_unreachable(check_text: Check) -> None:
    # D = 1, floor 2 = 1 + D: reachable; AL 1.85 < 2 fails without "unreachable"
    report = check_text(claims(dep(d=1, rho=0.02, al=1.85, policy={"min_accept_length": 2})))
    assert "unreachable" not in message(report, "SG102")


def test_cli_floor_overrides_policy(check_text: Check) -> None:
    # policy 3 would fail AL 2.5; the run-wide floor 2 wins → pass
    text = claims(dep(d=4, rho=0.05, al=2.5, policy={"min_accept_length": 3}))
    assert codes(check_text(text)) == ["SG102"]
    assert codes(check_text(text, min_accept_length=2.0)) == []
    report = check_text(claims(dep(d=4, rho=0.05, al=2.5)), min_accept_length=2.6)
    assert "--min-accept-length" in message(report, "SG102")


# --- SG103 accept-length-out-of-range ------------------------------------------------------


def test_al_exactly_one_plus_d_is_sg109_not_sg103(check_text: Check) -> None:
    # docs/rules.md (SG109) moves this expectation: D = 3: AL 4 is not > 1 + D = 4, so no SG103, but
    # every draft accepted on every step is SG109
    assert codes(check_text(claims(dep(d=3, rho=0.05, al=4)))) == ["SG109"]


def test_al_just_above_one_plus_d_fails(check_text: Check) -> None:
    report = check_text(claims(dep(d=3, rho=0.05, al=4.0001)))
    assert codes(report) == ["SG103"]
    assert "1 + D = 4" in message(report, "SG103")


def test_al_exactly_one_passes_sg103(check_text: Check) -> None:
    # AL 1 is not < 1, so no SG103. docs/theory.md#al-floor-and-guideline floor (1 + 0.15) · 1.1 =
    # 1.265 > 1: SG102; docs/rules.md moves the rest: S = 1 / 1.15 = 0.8696 < 1 with ρ stated is
    # SG106
    assert codes(check_text(claims(dep(d=3, rho=0.05, al=1)))) == ["SG102", "SG106"]


def test_al_above_any_d_is_not_judged_without_d(check_text: Check) -> None:
    # D unknown: only AL < 1 is impossible
    assert codes(check_text(claims(dep(rho=0.05, al=40)))) == []


# --- SG104 claimed-speedup-over-theory -----------------------------------------------------


def test_claim_within_the_tolerance_passes(check_text: Check) -> None:
    # bound 3 / (1 + 0.25·4) = 1.5; 1.5 + 4e-5 ≤ 1.5 + 5e-5
    assert codes(check_text(claims(dep(d=4, rho=0.25, al=3, claim=1.50004)))) == []


def test_claim_over_the_tolerance_fails(check_text: Check) -> None:
    # 1.5 + 6e-5 > 1.5 + 5e-5
    report = check_text(claims(dep(d=4, rho=0.25, al=3, claim=1.50006)))
    assert codes(report) == ["SG104"]
    assert "3 / (1 + 0.25·4) = 1.5x" in message(report, "SG104")


def test_claim_written_to_four_decimals_of_a_repeating_bound_passes(check_text: Check) -> None:
    # bound 1.4 / 1.35 = 1.037037…; a claim of 1.0370 passes, 1.0371 fails
    assert codes(check_text(claims(dep(d=7, rho=0.05, al=1.4, claim=1.037, **FLOOR1)))) == []
    report = check_text(claims(dep(d=7, rho=0.05, al=1.4, claim=1.0371, **FLOOR1)))
    assert codes(report) == ["SG104"]


def test_with_d_unknown_the_bound_is_al(check_text: Check) -> None:
    # D absent: bound = AL = 2.5 whatever ρ is; 2.5 passes, 2.6 fails
    assert codes(check_text(claims(dep(rho=0.5, al=2.5, claim=2.5)))) == []
    report = check_text(claims(dep(rho=0.5, al=2.5, claim=2.6)))
    assert codes(report) == ["SG104"]
    assert "D not given" in message(report, "SG104")
    assert only(report).metrics.theoretical_speedup is None


def test_sg104_without_rho_uses_the_ceiling_and_says_so(check_text: Check) -> None:
    # docs/theory.md#which-rho rewords this: ρ neither stated nor measured: bound = ceiling AL / β =
    # 2.4 / 1; claim 2.5 fails; SG204 names the typical ρ used elsewhere
    report = check_text(claims(dep(d=3, al=2.4, claim=2.5)))
    assert codes(report) == ["SG104", "SG204"]
    assert "ceiling AL / β = 2.4 / 1 = 2.4x" in message(report, "SG104")
    assert "ρ not stated or measured" in message(report, "SG104")


def test_no_claim_or_no_al_no_sg104(check_text: Check) -> None:
    assert "SG104" not in codes(check_text(claims(dep(d=3, rho=0.05, al=2.4))))
    assert "SG104" not in codes(check_text(claims(dep(d=3, rho=0.05, claim=9))))


# --- SG101 / SG105: need speculation enabled; the others do not ----------------------------


def test_rules_judge_numbers_without_speculation_enabled(check_text: Check) -> None:
    # enabled false: no SG101/SG105, but AL 4.6 > 1 + 3 = 4 and the claim 9 > 4.6/(1 + 0.15·3)
    # = 4.6/1.45 = 3.1724 still fail
    report = check_text(claims(dep(d=3, rho=0.15, al=4.6, claim=9, enabled=False, coherent=False)))
    assert codes(report) == ["SG103", "SG104"]


def test_sg101_only_when_enabled(check_text: Check) -> None:
    assert codes(check_text(claims(dep(d=3, rho=0.05)))) == ["SG101"]
    assert codes(check_text(claims(dep(d=3, rho=0.05, enabled=False)))) == []


def test_sg105_only_when_enabled(check_text: Check) -> None:
    assert codes(check_text(claims(dep(d=3, rho=0.05, al=2.4, coherent=False)))) == ["SG105"]
    no_spec = {"name": "d", "evidence": {"accept_length": 2.4}}
    assert "SG105" not in codes(check_text(claims(no_spec)))


# --- SG201 / SG202 -------------------------------------------------------------------------


def gpt_oss(d: int) -> dict[str, Any]:
    # gpt-oss-120b: H 64, KV 8 → G 8 (SOURCES.md)
    return dep(
        d=d,
        rho=0.05,
        al=3.2,
        model={"query_heads": 64, "kv_heads": 8},
        workload={"attention_dominated": True},
    )


def test_sg201_does_not_fire_at_or_below_d_star(check_text: Check) -> None:
    # SOURCES.md: gpt-oss D = 7, G = 8: G·(1+D) = 64 is not a multiple of 128, but 7 ≤ D* = 15
    report = check_text(claims(gpt_oss(7)))
    assert codes(report) == []
    metrics = only(report).metrics
    assert metrics.tile_aligned is False
    assert metrics.attention_optimal_draft_length == 15
    # the tile-aligned D (docs/theory.md#attention-tiles: the largest D with the same tile count):
    # floor(128/8) − 1 = 15
    assert metrics.tile_aligned_draft_length == 15


def test_sg201_fires_past_d_star_and_names_the_tile_aligned_d(check_text: Check) -> None:
    # G 8, D 20 > 15: 8·21 = 168 rows, ceil(168/128) = 2 tiles; the largest D with 2 tiles is
    # floor(256/8) − 1 = 31. docs/theory.md#attention-tiles adds SG206 (2 tiles)
    report = check_text(claims(gpt_oss(20)))
    assert codes(report) == ["SG201", "SG206"]
    text = message(report, "SG201")
    assert "D* = 15" in text
    assert "168" in text
    assert "D = 31 fills 2" in text


def test_sg201_silent_when_aligned_past_d_star(check_text: Check) -> None:
    # G 8, D 31: 8·32 = 256 = 2·128, aligned; docs/theory.md#attention-tiles moves the rest: 2 full
    # tiles are SG206
    assert codes(check_text(claims(gpt_oss(31)))) == ["SG206"]


def test_sg201_needs_attention_dominated(check_text: Check) -> None:
    deployment = gpt_oss(20)
    deployment["workload"] = {"attention_dominated": False}
    assert codes(check_text(claims(deployment))) == []


def test_sg201_with_exact_fractional_g(check_text: Check) -> None:
    # G = 6.4 = 32/5: D* = floor(20) − 1 = 19; D = 20: 32/5·21 = 134.4, not whole;
    # next 1 + D′ multiple of 20 from 21 → 40 → D′ = 39
    deployment = dep(
        d=20,
        rho=0.05,
        al=3.2,
        model={"query_heads_per_kv": 6.4},
        workload={"attention_dominated": True},
    )
    # docs/theory.md#attention-tiles: 134.4 rows → 2 tiles (SG206 too); largest D with 2 tiles:
    # floor(256/6.4) − 1 = 39
    report = check_text(claims(deployment))
    assert codes(report) == ["SG201", "SG206"]
    assert "D = 39 fills 2" in message(report, "SG201")


def test_sg201_with_a_g_that_never_fills_whole_rows(check_text: Check) -> None:
    # docs/theory.md#attention-tiles moves this expectation (v1 searched for G·(1 + D′) a multiple
    # of 128 and found none): G = 1.3 = 13/10 fills whole tiles only at N = 1,280 (past any D here):
    # D* = floor(128 / 1.3) − 1 = 98 − 1 = 97; D = 120 > 97; 1.3·121 = 157.3 rows → 2 tiles;
    # the largest D with 2 tiles: floor(256 / 1.3) − 1 = 196 − 1 = 195 (1.3·196 = 254.8)
    deployment = dep(
        d=120,
        rho=0.0,
        al=3,
        model={"query_heads_per_kv": 1.3},
        workload={"attention_dominated": True},
    )
    report = check_text(claims(deployment))
    assert codes(report) == ["SG201", "SG206"]
    assert "D = 195 fills 2" in message(report, "SG201")
    assert only(report).metrics.tile_aligned_draft_length == 195


def test_sg202_suggests_d_star(check_text: Check) -> None:
    # G 8, no D: D* = 15
    deployment = {
        "name": "d",
        "model": {"query_heads_per_kv": 8},
        "speculation": {"enabled": False},
        "workload": {"attention_dominated": True},
    }
    report = check_text(claims(deployment))
    assert codes(report) == ["SG202"]
    assert "D* = floor(128/G) − 1 = 15" in message(report, "SG202")
    # D absent: the tile-aligned D is D* = 15 (docs/theory.md#edge-cases); tile_aligned is null
    assert only(report).metrics.tile_aligned is None
    assert only(report).metrics.tile_aligned_draft_length == 15


# --- SG203 draft-increase-not-justified ----------------------------------------------------


def test_sg203_fires_on_a_loss(check_text: Check) -> None:
    # 5 / 1.7 = 2.9412 → 5.2 / 2.4 = 2.1667
    deployment = dep(
        d=7, rho=0.1, al=5, evidence={"next": {"draft_length": 14, "accept_length": 5.2}}
    )
    report = check_text(claims(deployment))
    assert codes(report) == ["SG203"]
    assert "2.9412x → 2.1667x" in message(report, "SG203")


def test_sg203_equal_on_four_decimals_counts_as_no_increase(check_text: Check) -> None:
    # ρ 0: 3.00001 → 3.00004, both 3.0000 on 4 decimals
    deployment = dep(
        d=3, rho=0, al=3.00001, evidence={"next": {"draft_length": 5, "accept_length": 3.00004}}
    )
    report = check_text(claims(deployment))
    assert codes(report) == ["SG203"]
    increase = only(report).metrics.draft_increase
    assert increase is not None
    assert increase.increase is False


def test_sg203_silent_on_a_gain(check_text: Check) -> None:
    # 2.4/1.15 = 2.0870 → 3.0/1.25 = 2.4
    deployment = dep(
        d=3, rho=0.05, al=2.4, evidence={"next": {"draft_length": 5, "accept_length": 3.0}}
    )
    assert codes(check_text(claims(deployment))) == []


# --- SG204 draft-depth-ratio-assumed -------------------------------------------------------


def test_sg204_names_the_declared_class_hint(check_text: Check) -> None:
    # declared mtp → target-attached-mtp, ρ ≈ 0.02
    deployment = dep(d=1, al=1.8, speculation={"mechanism": "mtp"})
    report = check_text(claims(deployment))
    assert codes(report) == ["SG204"]
    text = message(report, "SG204")
    assert "declared class target-attached-mtp" in text
    assert "ρ ≈ 0.02" in text


def test_sg204_names_the_recommended_class_without_a_declared_one(check_text: Check) -> None:
    # no mechanism; model 8 B at low latency → parallel-draft-head, ρ ≈ 0.14
    deployment = dep(d=3, al=2.4, model={"parameters_b": 8})
    text = message(check_text(claims(deployment)), "SG204")
    assert "recommended class parallel-draft-head" in text
    assert "ρ ≈ 0.14" in text


def test_sg204_with_mechanism_other_uses_the_recommended_class(check_text: Check) -> None:
    # "other" maps to no class; unknown size counts as medium → external-small-draft, ρ ≈ 0.15
    deployment = dep(d=3, al=2.4, speculation={"mechanism": "other"})
    text = message(check_text(claims(deployment)), "SG204")
    assert "recommended class external-small-draft" in text
    assert "ρ ≈ 0.15" in text


def test_sg204_only_when_something_uses_rho(check_text: Check) -> None:
    assert codes(check_text(claims({"name": "d", "speculation": {"enabled": False}}))) == []
    claim_only = {"name": "d", "claims": {"speedup": 2}}
    assert codes(check_text(claims(claim_only))) == ["SG204"]


# --- status semantics ----------------------------------------------------------------------


def test_a_note_alone_leaves_ready(check_text: Check) -> None:
    report = check_text(claims(dep(d=3, al=2.4)))
    assert [f.severity for f in report.all_findings()] == ["note"]
    assert only(report).status == "ready"
    assert report.status == "ready"
    assert only(report).next_actions == ()


def test_an_info_makes_actionable(check_text: Check) -> None:
    deployment = {
        "name": "d",
        "model": {"query_heads_per_kv": 8},
        "workload": {"attention_dominated": True},
    }
    report = check_text(claims(deployment))
    assert [f.severity for f in report.all_findings()] == ["info"]
    assert only(report).status == "actionable"
    assert len(only(report).next_actions) == 1


def test_file_status_is_the_worst_deployment(check_text: Check) -> None:
    report = check_text(claims(dep("a", d=3, rho=0.05, al=2.4), dep("b", d=3, rho=0.05, al=1.2)))
    assert [d.status for d in report.deployments] == ["ready", "fail"]
    assert report.status == "fail"


def test_next_actions_one_per_rule_most_severe_first(check_text: Check) -> None:
    # AL 0.9 at D 3: SG103 (fail; an impossible AL is not SG102 as well), no cache
    # evidence: SG105 (warn), no ρ: SG204
    report = check_text(claims(dep(d=3, al=0.9, coherent=False)))
    assert codes(report) == ["SG103", "SG105", "SG204"]
    actions = only(report).next_actions
    assert len(actions) == 3
    assert "cache_coherence_eval" in actions[1]
    assert "draft_depth_ratio" in actions[2]


# --- schema: values and blocking -----------------------------------------------------------


def test_schema_violation_blocks_other_rules_but_metrics_are_computed(check_text: Check) -> None:
    # AL 1.2 would fail SG102 and the claim SG104; the unknown key blocks them
    deployment = dep(d=3, rho=0.05, al=1.2, claim=5, workload={"nmae": "chat"})
    report = check_text(claims(deployment))
    assert codes(report) == ["SG001"]
    assert "did you mean 'name'" in message(report, "SG001")
    # 1.2 / 1.15 = 1.0435
    assert only(report).metrics.theoretical_speedup == pytest.approx(1.0435, abs=5e-5)


def test_a_schema_violation_in_one_deployment_does_not_block_another(check_text: Check) -> None:
    bad = dep("bad", d=3, rho=0.05, al=1.2, workload={"nmae": "x"})
    good = dep("good", d=3, rho=0.05, al=1.2)
    report = check_text(claims(bad, good))
    assert [sorted(f.code for f in d.findings) for d in report.deployments] == [
        ["SG001"],
        ["SG102"],
    ]


def test_integer_written_as_float_is_accepted(check_text: Check) -> None:
    report = check_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation:\n"
        "      enabled: false\n      draft_length: 4.0\n      draft_depth_ratio: 5e-2\n"
    )
    assert codes(report) == []
    assert only(report).metrics.draft_length == 4
    # ρ·D = 0.05·4 = 0.2
    assert only(report).metrics.draft_overhead == pytest.approx(0.2)


@pytest.mark.parametrize("literal", [".nan", ".inf", "-.inf"])
def test_non_finite_yaml_numbers_are_sg001_finite(check_text: Check, literal: str) -> None:
    report = check_text(
        f"version: 1\ndeployments:\n  - name: d\n    evidence:\n      accept_length: {literal}\n"
    )
    assert codes(report) == ["SG001"]
    (finding,) = report.all_findings()
    assert "finite" in finding.message
    # "      accept_length: .nan": value at 5:22
    assert (finding.line, finding.column) == (5, 22)


def test_non_finite_json_numbers_are_sg001_finite(check_text: Check) -> None:
    text = '{"version": 1, "deployments": [{"name": "d", "claims": {"speedup": NaN}}]}'
    report = check_text(text, "c.specgate.json")
    assert codes(report) == ["SG001"]
    assert "finite" in report.all_findings()[0].message
    # '{"version": 1, "deployments": [{"name": "d", "claims": {"speedup": NaN}}]}': NaN at col 68
    assert (report.all_findings()[0].line, report.all_findings()[0].column) == (1, 68)


@pytest.mark.parametrize("literal", ["yes", "on", "True_", "'true'"])
def test_non_boolean_where_a_boolean_belongs(check_text: Check, literal: str) -> None:
    report = check_text(
        f"version: 1\ndeployments:\n  - name: d\n    speculation:\n      enabled: {literal}\n"
    )
    assert codes(report) == ["SG001"]
    assert "true or false" in report.all_findings()[0].message


def test_date_stays_a_string_and_is_a_violation_for_a_number(check_text: Check) -> None:
    report = check_text(
        "version: 1\ndeployments:\n  - name: d\n    claims:\n      speedup: 2024-01-01\n"
    )
    assert codes(report) == ["SG001"]
    assert "'2024-01-01'" in report.all_findings()[0].message


def test_version_must_be_one(check_text: Check) -> None:
    report = check_text("version: 2\ndeployments:\n  - name: d\n")
    assert codes(report) == ["SG001"]
    assert (report.findings[0].line, report.findings[0].column) == (1, 10)


def test_json_claims_file_positions(check_text: Check) -> None:
    text = (
        "{\n"
        '  "version": 1,\n'
        '  "deployments": [{\n'
        '    "name": "j",\n'
        '    "speculation": {"enabled": true, "draft_length": 4, "draft_depth_ratio": 0.05},\n'
        '    "evidence": {"accept_length": 1.3, "cache_coherence_eval": true}\n'
        "  }]\n"
        "}\n"
    )
    report = check_text(text, "c.specgate.json")
    # line 6 '    "evidence": {"accept_length": 1.3, ...': 1.3 at col 35
    assert [(f.code, f.line, f.column) for f in report.all_findings()] == [("SG102", 6, 35)]


# --- bug: an integer beyond the float range crashed the builder (exit 3) -------------------


@pytest.mark.parametrize(
    "key", ["claims: {speedup: ", "speculation: {enabled: false, draft_length: "]
)
def test_integer_beyond_float_range_is_sg001(check_text: Check, key: str) -> None:
    # 10^400 > 1.8·10^308 (the largest double): not a finite real number for the theory
    text = "version: 1\ndeployments:\n  - name: d\n    " + key + "1" + "0" * 400 + "}\n"
    report = check_text(text)
    assert codes(report) == ["SG001"]
    finding = report.all_findings()[0]
    assert "finite" in finding.message
    # the value starts right after the key text on line 4 (4 spaces of indent)
    assert (finding.line, finding.column) == (4, 5 + len(key))


def test_each_missing_required_key_is_reported_once(tmp_path: Path) -> None:
    # Regression: jsonschema emits one `required` error per missing key, each naming
    # the whole list; a file missing both top-level keys got four SG001 findings.
    from specgate.check.run import CheckOptions, check_file

    claims = tmp_path / "x.specgate.yaml"
    claims.write_text("service: gateway\n", encoding="utf-8")
    report = check_file(claims, "x.specgate.yaml", CheckOptions())
    messages = sorted(f.message for f in report.findings)
    assert messages == [
        "the file is missing required key 'deployments'",
        "the file is missing required key 'version'",
        "unknown key 'service' in the file",
    ]


# --- found by a user trial: evidence.next and model shapes that cannot exist --------------


def _single(text: str, tmp_path: Path) -> FileReport:
    from specgate.check.run import CheckOptions, check_file

    claims = tmp_path / "n.specgate.yaml"
    claims.write_text(text, encoding="utf-8")
    return check_file(claims, "n.specgate.yaml", CheckOptions())


NEXT = """\
version: 1
deployments:
  - name: d
    speculation:
      enabled: false
      draft_length: 4
      draft_depth_ratio: 0.05
    evidence:
      accept_length: 2.9
      next:
        draft_length: {next_d}
        accept_length: {next_al}
"""


def test_next_accept_length_is_judged_against_its_own_range(tmp_path: Path) -> None:
    # At the next D = 6 a step emits at most 1 + 6 = 7 tokens: AL 9 is impossible.
    report = _single(NEXT.format(next_d=6, next_al=9), tmp_path)
    assert [(f.code, f.line, f.column) for f in report.all_findings()] == [("SG103", 12, 24)]
    assert "exceeds 1 + D = 7" in report.all_findings()[0].message
    report = _single(NEXT.format(next_d=6, next_al=0.5), tmp_path)
    assert ("SG103", 12, 24) in [(f.code, f.line, f.column) for f in report.all_findings()]


@pytest.mark.parametrize("next_d", [2, 4])
def test_next_draft_length_must_be_larger(tmp_path: Path, next_d: int) -> None:
    report = _single(NEXT.format(next_d=next_d, next_al=3.0), tmp_path)
    assert [(f.code, f.line, f.column) for f in report.all_findings()] == [("SG001", 11, 23)]


def test_more_kv_heads_than_query_heads_is_a_violation(tmp_path: Path) -> None:
    text = (
        "version: 1\ndeployments:\n  - name: d\n    model:\n      query_heads: 8\n"
        "      kv_heads: 64\n"
    )
    report = _single(text, tmp_path)
    # "64" on line 6 col 17
    assert [(f.code, f.line, f.column) for f in report.all_findings()] == [("SG001", 6, 17)]


def test_percent_looking_claim_gets_a_hint(tmp_path: Path) -> None:
    text = NEXT.format(next_d=6, next_al=3.3) + "    claims:\n      speedup: 240\n"
    report = _single(text, tmp_path)
    (sg104,) = [f for f in report.all_findings() if f.code == "SG104"]
    assert "not percent" in sg104.message
