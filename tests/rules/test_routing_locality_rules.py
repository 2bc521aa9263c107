"""Warnings rest on the routing-locality end of a mixture-of-experts β range, never on an
upper-bound β (issue 26; docs/theory.md#routing-locality). Every number is worked by hand
in the comment beside it.

Mixtral-8x7B's published sizes (46.7 B total, 12.9 B active, 2 of 8 experts) on an A100,
one sequence, context 4000, D 3 (N 4, G 4: one attention tile in both steps):
K_tok = 2·32·8·128·2 = 131,072 B, the KV read 4000·131,072 = 0.524288 GB a step;
weights (BF16) 25.8 GB plain; verify 64.88125 GB uniform (32.440625 B), 52.468484 GB at
the published locality (26.234242 B, tests/theory/test_routing.py). The step is memory-bound
(4 tokens ≪ n* 153), so β uniform = 65.405538/26.324288 = 2.4846 and β locality =
52.992772/26.324288 = 2.0131. The proven β prices the weights for any routing: 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.rules.test_rules import claims, dep, only

from specgate.check.report import FileReport

Check = Callable[..., FileReport]
MIXTRAL = {"parameters_b": 46.7, "active_parameters_b": 12.9, "experts": 8,
           "experts_per_token": 2, "layers": 32, "query_heads": 32, "kv_heads": 8,
           "head_dim": 128}
HARDWARE = {"gpu": "a100-80gb", "tensor_parallel": 1, "weight_bytes": 2, "kv_cache_bytes": 2}


def mixtral(check_text: Check, **kwargs: Any) -> FileReport:
    return check_text(claims(dep(d=3, model=MIXTRAL, workload={"context_length": 4000},
                                 hardware=HARDWARE, **kwargs)))


def severities(report: FileReport) -> dict[str, str]:
    return {f.code: f.severity for f in only(report).findings}


def test_the_range_of_beta(check_text: Check) -> None:
    m = only(mixtral(check_text, rho=0.15, al=3.0)).metrics
    beta = m.verify_cost
    assert beta.value == pytest.approx(2.4846, abs=5e-5)
    assert beta.bound == "upper"
    assert beta.low == pytest.approx(2.0131, abs=5e-5)
    assert beta.low_bound == "exact"
    assert beta.proven == 1.0
    assert m.warning_verify_cost_ratio == pytest.approx(2.0131, abs=5e-5)


def test_a_claim_only_the_uniform_end_rules_out_is_a_note(check_text: Check) -> None:
    # AL 3, ρ 0.15 stated, 3 passes: S uniform = 3/(2.4846 + 0.45) = 1.0223, S locality =
    # 3/(2.0131 + 0.45) = 1.2180, proven ceiling 3/1.45 = 2.0690. A claimed 1.15 is above
    # the uniform end's S only: an upper-bound β informs (note).
    report = mixtral(check_text, rho=0.15, al=3.0, claim=1.15)
    assert severities(report)["SG112"] == "note"
    (found,) = [f for f in only(report).findings if f.code == "SG112"]
    assert "at the published routing locality β is 2.0131" in found.details


def test_a_claim_above_the_locality_end_warns(check_text: Check) -> None:
    # a claimed 1.3 > 1.2180, the speedup at the locality end: SG112 warns (no fail: ≤ 2.0690)
    report = mixtral(check_text, rho=0.15, al=3.0, claim=1.3)
    assert severities(report)["SG112"] == "warn"
    assert "SG104" not in severities(report)
    # the message states the β it rests on: 3 / (2.0131 + 0.45) = 1.218
    (found,) = [f for f in only(report).findings if f.code == "SG112"]
    assert found.message.startswith(
        "at β 2.0131 (routing locality; 2.4846 at uniform routing) the claimed 1.3x is above "
        "AL / (β + ρ·passes) = 3 / (2.0131 + 0.15·3) = 1.218x"
    )


def test_no_gain_at_both_ends_warns(check_text: Check) -> None:
    # AL 2: S uniform 2/2.9346 = 0.6815, S locality 2/2.4631 = 0.8120, both < 1.1, while the
    # proven 2/1.45 = 1.3793 ≥ 1.1: SG112 warns (was a note while the estimate was upper).
    report = mixtral(check_text, rho=0.15, al=2.0)
    assert severities(report)["SG112"] == "warn"


def test_sg108_prices_the_typical_rho_at_the_locality_end(check_text: Check) -> None:
    # ρ not stated: the typical ρ of EAGLE-3 (parallel draft heads) is 0.14, 3 passes 0.42.
    # At the uniform end AL 3 allows 3/(2.4846 + 0.42) = 1.0329; at the locality end
    # 3/(2.0131 + 0.42) = 1.2330. A claimed 1.2 is within the locality end's bound: SG108 does
    # not warn (it did at the uniform end), and SG112 (ρ 0 for it: 3/2.4846 = 1.2074 ≥ 1.2)
    # says nothing either.
    report = mixtral(check_text, al=3.0, claim=1.2, speculation={"mechanism": "eagle3"})
    assert only(report).metrics.typical_draft_depth_ratio == pytest.approx(0.14)
    assert not {"SG108", "SG112"} & set(severities(report))
    # a claimed 1.25 > 1.2330 warns, the bound priced at the locality end; SG112 (ρ 0) is
    # above only its uniform end (1.2074 < 1.25 ≤ 3/2.0131 = 1.4903): a note beside it
    report = mixtral(check_text, al=3.0, claim=1.25, speculation={"mechanism": "eagle3"})
    assert severities(report)["SG108"] == "warn"
    assert severities(report)["SG112"] == "note"
    (found,) = [f for f in only(report).findings if f.code == "SG108"]
    assert "(2.0131 + 0.14·3) = 1.233x" in found.message


def test_sg108_never_warns_on_an_upper_bound_beta_without_the_locality_end(
    check_text: Check,
) -> None:
    # No context: the KV term is left out, both ends are upper bounds (β uniform 2.5148,
    # locality 2.0337, memory reads only), so SG108 prices at the proven β 1: 3/(1 + 0.42) =
    # 2.1127 ≥ a claimed 1.5 (at the uniform end 3/2.9348 = 1.0222 it warned).
    report = check_text(claims(dep(d=3, al=3.0, claim=1.5, model=MIXTRAL,
                                   speculation={"mechanism": "eagle3"},
                                   workload={"concurrency": 1}, hardware=HARDWARE)))
    m = only(report).metrics
    assert m.verify_cost.value == pytest.approx(2.5148, abs=5e-5)
    assert m.verify_cost.low == pytest.approx(2.0337, abs=5e-5)
    assert m.verify_cost.low_bound == "upper"
    assert m.warning_verify_cost_ratio == 1.0
    assert "SG108" not in severities(report)
    assert severities(report).get("SG112") in (None, "note")


def test_sg110_prices_its_typical_floor_at_the_proven_beta_when_both_ends_are_upper(
    check_text: Check,
) -> None:
    # No context (both ends upper). AL 2.1 ≥ the guideline min(2, 1 + 3/2) = 2. The typical
    # floor at the proven β 1: (1 + 0.14·3)·1.1 = 1.562 ≤ 2.1: no SG110 (at the uniform end it
    # was (2.5148 + 0.42)·1.1 = 3.2283 > 2.1, a warning resting on an upper-bound β).
    report = check_text(claims(dep(d=3, al=2.1, model=MIXTRAL,
                                   speculation={"mechanism": "eagle3"},
                                   workload={"concurrency": 1}, hardware=HARDWARE)))
    assert "SG110" not in severities(report)
    assert severities(report).get("SG112") in (None, "note")


def test_which_beta_a_warning_rests_on() -> None:
    from specgate.analysis.verify_cost import VerifyCost, warning_value

    def flat(_n: int) -> float:
        return 2.0

    # the model's own value or a lower bound: the estimate itself
    assert warning_value(VerifyCost(2.0, "roofline", flat, bound="exact", proven=1.2)) == 2.0
    assert warning_value(VerifyCost(2.0, "roofline", flat, bound="lower", proven=1.2)) == 2.0
    # an upper bound with a priced locality end: that end
    assert warning_value(VerifyCost(2.0, "roofline", flat, bound="upper", proven=1.2,
                                    low=1.5, low_bound="exact")) == 1.5
    # capped by a measured speedup: the locality end, never below the proven bound
    assert warning_value(VerifyCost(2.0, "roofline", flat, bound="capped", proven=1.6,
                                    low=1.5, low_bound="exact")) == 1.6
    # an upper bound whose locality end is upper too, or a dense model: the proven bound
    assert warning_value(VerifyCost(2.0, "roofline", flat, bound="upper", proven=1.2,
                                    low=1.5, low_bound="upper")) == 1.2
    assert warning_value(VerifyCost(2.0, "roofline", flat, bound="upper", proven=1.2)) == 1.2
