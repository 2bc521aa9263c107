"""Defects found by the two reviewers on inputs specgate had not seen (reviews real.md
and newuser.md), each as a kind: every expected value is worked by hand in the test's
docstring or taken from the published source named there."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rules.test_rules import claims, codes, dep, message, only

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
    inputs.model.parameters) ≤ 10 B: small; at the default low latency §3's row is
    parallel-draft-head (ρ ≈ 0.05), as with parameters_b: 8.03 stated."""
    config = with_config(tmp_path, LLAMA8)
    report = check_text(claims(dep(d=3, al=2.7, model={"hf_config": config},
                                   speculation={"mechanism": "eagle3"})))
    assert only(report).recommended.name == "parallel-draft-head"
    assert only(report).metrics.typical_draft_depth_ratio == pytest.approx(0.05)


def test_disabled_deployment_gets_no_mechanism_numbers(check_text: Check) -> None:
    """speculation off: no typical ρ (0.15 of the default class was shown before)."""
    report = check_text(claims(dep(enabled=False)))
    m = only(report).metrics
    assert m.draft_depth_ratio is None
    assert m.draft_depth_ratio_source is None
