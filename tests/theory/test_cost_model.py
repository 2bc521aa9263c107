"""Theory v2 (docs/theory.md#cost-model): every worked number there as a test, worked by hand in the
comment beside it, plus hypothesis properties of the cost model.

Deployments are built in code (no YAML) and run through :func:`specgate.analysis.derived.compute`
so the tests pin both the formulas and the choice of inputs (β source, ρ source, passes).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specgate.analysis import derived
from specgate.inputs.metrics.inline import per_position_acceptance
from specgate.model.deployment import (
    Deployment,
    EvidenceBlock,
    HardwareBlock,
    ModelBlock,
    SpeculationBlock,
    WorkloadBlock,
)
from specgate.model.referenced import Inputs
from specgate.theory import formulas as theory
from specgate.theory.draft_choice import optimal_draft_length, speedup_curve
from specgate.theory.gpus import gpu_table


def deployment(
    *,
    d: int | None = None,
    al: float | None = None,
    rho: float | None = None,
    mechanism: str | None = None,
    verify: int | None = None,
    passes: str | None = None,
    concurrency: int | None = None,
    region: str = "low",
    hardware: HardwareBlock | None = None,
    g: Fraction | None = None,
    mla: bool = False,
    evidence: dict[str, object] | None = None,
    **extra: object,
) -> Deployment:
    return Deployment(
        position=0,
        name="d",
        model=ModelBlock(query_heads_per_kv=g, mla=mla),
        speculation=SpeculationBlock(
            present=True,
            enabled=True,
            mechanism=mechanism,
            draft_length=d,
            draft_depth_ratio=rho,
            verify_tokens=verify,
            draft_passes=passes,  # type: ignore[arg-type]
        ),
        workload=WorkloadBlock(latency_region=region, concurrency=concurrency),  # type: ignore[arg-type]
        evidence=EvidenceBlock(present=True, accept_length=al, **(evidence or {})),  # type: ignore[arg-type]
        hardware=hardware or HardwareBlock(),
        **extra,  # type: ignore[arg-type]
    )


H100 = HardwareBlock(present=True, gpu="h100-sxm")


def _profile(marginal: tuple[float, ...]) -> Inputs:
    """Inline per-position rates, as a claims file's ``per-position`` metrics give them."""
    return Inputs(acceptance=per_position_acceptance(marginal))


# --- docs/theory.md#cost-model cost model
# ------------------------------------------------------------------------


def test_h100_compute_bound_tokens() -> None:
    # n* = 989e12 · 2 / (2 · 3.35e12) = 989 / 3.35 = 295.2239 tokens
    row = gpu_table()["h100-sxm"]
    assert (row.peak_tflops, row.memory_bandwidth_tbps) == (989, 3.35)
    assert theory.compute_bound_tokens(989, 3.35) == pytest.approx(295.22, abs=5e-3)


def test_roofline_at_batch_128() -> None:
    # B = 128, chain D = 3 (N = 4), AL 2.8, ρ 0.05: β = (512 / 295.22) / max(1, 128/295.22) =
    # 1.7343 / 1; S = 2.8 / (1.7343 + 0.15) = 2.8 / 1.8843 = 1.4860
    m = derived.compute(deployment(d=3, al=2.8, rho=0.05, concurrency=128, hardware=H100))
    assert m.verify_cost is not None
    assert m.verify_cost.source == "roofline"
    assert m.verify_cost_ratio == pytest.approx(1.7343, abs=5e-5)
    assert m.break_even_accept_length == pytest.approx(1.8843, abs=5e-5)
    assert m.theoretical_speedup == pytest.approx(1.4860, abs=5e-5)


def test_roofline_at_batch_1_is_memory_bound() -> None:
    # B = 1: β = max(1, 4 / 295.22) / 1 = 1; S = 2.8 / 1.15 = 2.4348
    m = derived.compute(deployment(d=3, al=2.8, rho=0.05, concurrency=1, hardware=H100))
    assert m.verify_cost_ratio == 1
    assert m.theoretical_speedup == pytest.approx(2.4348, abs=5e-5)
    # no hardware, one sequence: memory-bound, same S (v1)
    plain = derived.compute(deployment(d=3, al=2.8, rho=0.05))
    assert plain.verify_cost is not None and plain.verify_cost.source == "memory-bound"
    assert plain.theoretical_speedup == pytest.approx(2.4348, abs=5e-5)


def test_roofline_past_n_star_in_both_numerator_and_denominator() -> None:
    # B = 1024 > n* = 295.22: β = (1024·4 / 295.22) / (1024 / 295.22) = 4 (fully compute-bound)
    assert theory.roofline_verify_cost(1024, 4, 295.22) == pytest.approx(4.0)
    # B = 100, N = 2: 200 < n*: β = 1
    assert theory.roofline_verify_cost(100, 2, 295.22) == 1


def test_explicit_hardware_numbers_and_weight_bytes() -> None:
    # peak 989, bandwidth 3.35, 1 byte per weight (FP8): n* = 989·1 / 6.7 = 147.61;
    # B = 64, N = 4: β = 256 / 147.61 = 1.7343
    hardware = HardwareBlock(present=True, peak_tflops=989, memory_bandwidth_tbps=3.35,
                             weight_bytes=1)
    m = derived.compute(deployment(d=3, al=2.8, rho=0.05, concurrency=64, hardware=hardware))
    assert m.verify_cost_ratio == pytest.approx(1.7343, abs=5e-5)


def test_tree_is_charged_by_depth_not_nodes() -> None:
    # depth 4 with 10 nodes (N = 11), AL 3.2, ρ 0.05: S = 3.2 / (1 + 0.05·4) = 2.6667, not
    # 3.2 / (1 + 0.05·10) = 2.1333
    m = derived.compute(deployment(d=4, verify=11, al=3.2, rho=0.05))
    assert m.passes == 4
    assert m.theoretical_speedup == pytest.approx(2.6667, abs=5e-5)


def test_one_pass_drafter() -> None:
    # D = 15, AL 6.1, ρ 0.15, single pass: S = 6.1 / (1 + 0.15) = 5.3043
    for dep in (
        deployment(d=15, al=6.1, rho=0.15, passes="single"),
        deployment(d=15, al=6.1, rho=0.15, mechanism="dflash"),
        deployment(d=15, al=6.1, rho=0.15, mechanism="pard"),
    ):
        m = derived.compute(dep)
        assert m.draft_passes == "single"
        assert m.theoretical_speedup == pytest.approx(5.3043, abs=5e-5)
    # Medusa stays per-token unless the file says single (v1 files keep their meaning):
    # 6.1 / (1 + 0.15·15) = 6.1 / 3.25 = 1.8769
    medusa = derived.compute(deployment(d=15, al=6.1, rho=0.15, mechanism="medusa"))
    assert medusa.draft_passes == "per_token"
    assert medusa.theoretical_speedup == pytest.approx(1.8769, abs=5e-5)


def test_draft_passes_from_one_function() -> None:
    spec = SpeculationBlock(mechanism="dflash")
    assert derived.draft_passes(spec) == "single"
    assert derived.draft_passes(SpeculationBlock(mechanism="dflash", draft_passes="per_token")) == (
        "per_token"
    )
    assert derived.draft_passes(SpeculationBlock(mechanism="eagle3")) == "per_token"


def test_d0_costs_nothing() -> None:
    # D = 0: passes 0, N_verify 1, cost β; S = AL / β; no default floor (docs/theory.md#edge-cases)
    m = derived.compute(deployment(d=0, al=1.0, rho=0.05))
    assert (m.passes, m.verify_tokens, m.draft_overhead) == (0, 1, 0)
    assert m.theoretical_speedup == 1
    assert m.accept_length_floor.value is None


def test_measured_beta_overrides_and_is_extended_to_the_next_n() -> None:
    # β measured 1.5 at B = 256 with hardware: measured wins at N_m = 4.
    # docs/theory.md#proven-verify-cost (v2 reused it at every N): above N_m the chord through (1,
    # 1) is a lower bound, β(6) = 1 + 0.5·(6 − 1)/(4 − 1) = 1.8333. D 3 → next D 5 (AL 2.8 → 3.2), ρ
    # 0.05: S(3) = 2.8 / (1.5 + 0.15) = 1.6970, S(5) = 3.2 / (1.8333 + 0.25) = 1.5360
    m = derived.compute(
        deployment(
            d=3, al=2.8, rho=0.05, concurrency=256, hardware=H100,
            evidence={"verify_cost_ratio": 1.5, "next_draft_length": 5, "next_accept_length": 3.2},
        )
    )
    assert m.verify_cost is not None and m.verify_cost.source == "measured"
    assert m.verify_cost.bound == "measured"
    assert m.proven_verify_cost_ratio == pytest.approx(1.5)
    assert m.theoretical_speedup == pytest.approx(1.6970, abs=5e-5)
    assert m.draft_increase is not None
    assert m.draft_increase.next_speedup == pytest.approx(1.5360, abs=5e-5)
    assert not m.draft_increase.increase


def test_roofline_beta_is_recomputed_at_the_next_n() -> None:
    # H100, B = 128: β(N=4) = 512 / 295.2239 = 1.7343; β(N=8) = 1024 / 295.2239 = 3.46857.
    # AL 2.8 → 3.4 at D 3 → 7, ρ 0.05: S(3) = 1.4860, S(7) = 3.4 / (3.46857 + 0.35) = 0.8904
    m = derived.compute(
        deployment(
            d=3, al=2.8, rho=0.05, concurrency=128, hardware=H100,
            evidence={"next_draft_length": 7, "next_accept_length": 3.4},
        )
    )
    assert m.draft_increase is not None
    assert m.draft_increase.next_speedup == pytest.approx(0.8904, abs=5e-5)
    assert m.draft_increase.increase is False


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"concurrency": 64}, "concurrency 64"),
        ({"region": "throughput"}, "latency_region is throughput"),
        # throughput without concurrency stays assumed even with hardware
        # (docs/theory.md#edge-cases)
        ({"region": "throughput", "hardware": H100}, "latency_region is throughput"),
        # partial hardware: a peak without bandwidth
        ({"hardware": HardwareBlock(present=True, peak_tflops=989)}, "no usable pair"),
    ],
)
def test_verify_cost_assumed(kwargs: dict[str, object], reason: str) -> None:
    m = derived.compute(deployment(d=3, al=2.8, rho=0.05, **kwargs))  # type: ignore[arg-type]
    assert m.verify_cost is not None
    assert m.verify_cost.source == "assumed"
    assert m.verify_cost_ratio == 1
    assert reason in (m.verify_cost.assumed_because or "")


def test_hardware_holding_only_tile_rows_stays_memory_bound() -> None:
    m = derived.compute(
        deployment(d=3, al=2.8, rho=0.05,
                   hardware=HardwareBlock(present=True, attention_tile_rows=64, weight_bytes=1))
    )
    assert m.verify_cost is not None and m.verify_cost.source == "memory-bound"


# --- docs/theory.md#which-rho which ρ
# ---------------------------------------------------------------------------


def test_rho_derived_from_throughput() -> None:
    # 151.1 → 320.3 tok/s at D = 3 with AL 2.830: S = 320.3 / 151.1 = 2.1198;
    # ρ = (2.830 / 2.1198 − 1) / 3 = 0.1117. docs/theory.md#which-rho: a ρ derived from a measured
    # speedup is "derived" ("measured" is kept for a measured ρ).
    m = derived.compute(
        deployment(
            d=3, al=2.830, mechanism="mtp",
            evidence={"baseline_tokens_per_s": 151.1, "speculative_tokens_per_s": 320.3},
        )
    )
    assert m.measured_speedup == pytest.approx(2.1198, abs=5e-5)
    assert m.draft_depth_ratio_source == "derived"
    assert m.draft_depth_ratio == pytest.approx(0.1117, abs=5e-5)
    # with ρ measured, S equals the measurement
    assert m.theoretical_speedup == pytest.approx(m.measured_speedup)


def test_rho_not_measured_when_negative_falls_back_to_typical() -> None:
    # AL 2, measured 2.5: (2 / 2.5 − 1) / 3 < 0 → next source: the typical ρ of mtp (0.02)
    m = derived.compute(
        deployment(d=3, al=2.0, mechanism="mtp", evidence={"measured_speedup": 2.5})
    )
    assert m.draft_depth_ratio_source == "typical"
    assert m.draft_depth_ratio == 0.02


def test_stated_rho_beats_measured() -> None:
    m = derived.compute(deployment(d=3, al=2.83, rho=0.3, evidence={"measured_speedup": 2.1}))
    assert (m.draft_depth_ratio_source, m.draft_depth_ratio) == ("stated", 0.3)


def test_rho_typical_uses_declared_class_else_recommended() -> None:
    assert derived.compute(deployment(d=3, al=2, mechanism="draft_model")).draft_depth_ratio == (
        0.15
    )
    # no mechanism, medium model, low latency: external-small-draft (0.15)
    assert derived.compute(deployment(d=3, al=2)).draft_depth_ratio == 0.15


# --- docs/theory.md#al-floor-and-guideline floors
# ----------------------------------------------------------------------------


def test_default_floor_ngram() -> None:
    # n-gram D = 8, AL 1.8, ρ 0: floor 1 · 1.1 = 1.1; S = 1.8
    m = derived.compute(deployment(d=8, al=1.8, rho=0.0, mechanism="ngram"))
    assert m.accept_length_floor.value == pytest.approx(1.1)
    assert m.theoretical_speedup == pytest.approx(1.8)


def test_default_floor_without_rho_is_at_rho_zero() -> None:
    # MTP D = 3, AL 1.09, no ρ: floor 1.1 (ρ typical never raises a fail floor)
    m = derived.compute(deployment(d=3, al=1.09, mechanism="mtp"))
    assert m.accept_length_floor.value == pytest.approx(1.1)


def test_default_floor_stated_rho() -> None:
    # ρ 0.15, D = 8: (1 + 1.2) · 1.1 = 2.42
    m = derived.compute(deployment(d=8, al=3, rho=0.15))
    assert m.accept_length_floor.value == pytest.approx(2.42)


def test_default_floor_is_capped_at_one_plus_depth() -> None:
    # ρ 0.5, D = 2: (1 + 1) · 1.1 = 2.2 > 1 + 2 = 3? no; ρ 1, D = 2: 3 · 1.1 = 3.3 → cap 3
    m = derived.compute(deployment(d=2, al=2.5, rho=1.0))
    assert m.accept_length_floor.value == 3


def test_default_floor_with_d_unknown_and_min_gain() -> None:
    # D unknown: β · (1 + min_gain) = 1 · 1.25
    m = derived.compute(deployment(al=2, rho=0.1, min_gain=0.25))
    assert m.accept_length_floor.value == pytest.approx(1.25)
    assert m.break_even_accept_length == 1


# --- docs/theory.md#attention-tiles tiles
# -----------------------------------------------------------------------------


def test_tiles_g5_d25() -> None:
    # rows 5·26 = 130 → 2 tiles; 5·27 = 135 ≤ 256: not aligned; D* 24; same-tile D 50
    m = derived.compute(deployment(d=25, al=3, rho=0.01, g=Fraction(5)))
    assert (m.attention_tiles, m.tile_aligned) == (2, False)
    assert (m.attention_optimal_draft_length, m.tile_aligned_draft_length) == (24, 50)
    assert m.tile_aligned_verify_tokens == 51


def test_tiles_g8_d31() -> None:
    # rows 8·32 = 256: 2 full tiles, aligned (8·33 = 264 > 256)
    m = derived.compute(deployment(d=31, al=3, rho=0.01, g=Fraction(8)))
    assert (m.attention_tiles, m.tile_aligned, m.tile_aligned_draft_length) == (2, True, 31)


def test_tiles_mla_g16_d3() -> None:
    # MLA: M = 64; rows 16·4 = 64, one full tile; D* = 64/16 − 1 = 3
    m = derived.compute(deployment(d=3, al=3, rho=0.01, g=Fraction(16), mla=True))
    assert (m.attention_tile_rows, m.attention_tiles, m.tile_aligned) == (64, 1, True)
    assert m.attention_optimal_draft_length == 3


def test_tiles_for_a_tree_keep_the_chain_formula() -> None:
    # G 8, depth 4 with 20 nodes: N 21, rows 168 → 2 tiles; tile-aligned D stays the chain
    # formula floor(256/8) − 1 = 31, and N = 32 verify tokens fit the same tiles
    m = derived.compute(deployment(d=4, verify=21, al=3, rho=0.01, g=Fraction(8)))
    assert (m.attention_tiles, m.tile_aligned_draft_length, m.tile_aligned_verify_tokens) == (
        2, 31, 32,
    )


def test_tiles_without_d() -> None:
    # D unknown: tile-aligned D is D* (v1), no tile count
    m = derived.compute(deployment(al=3, g=Fraction(8)))
    assert (m.attention_tiles, m.tile_aligned_draft_length, m.tile_aligned_verify_tokens) == (
        None, 15, None,
    )


# --- docs/theory.md#optimal-draft-length optimal draft length
# --------------------------------------------------------------


def test_d_opt_small_gain() -> None:
    # m = [.8,.6,.45,.3,.2,.12,.07], D 7, ρ .05: S(7) = 3.54 / 1.35 = 2.6222;
    # S(5) = 3.35 / 1.25 = 2.68 (S(4) = 3.15/1.2 = 2.625, S(6) = 3.47/1.3 = 2.6692); gain 0.0220
    m = derived.compute(
        deployment(
            d=7,
            al=3.54,
            rho=0.05,
            inputs=_profile((0.8, 0.6, 0.45, 0.3, 0.2, 0.12, 0.07)),
        )
    )
    assert m.optimal_draft_length is not None
    assert m.optimal_draft_length.draft_length == 5
    assert m.optimal_draft_length.speedup == pytest.approx(2.68, abs=5e-5)
    assert m.optimal_draft_length.gain == pytest.approx(0.0220, abs=5e-5)
    assert m.optimal_draft_length.curve[-1].speedup == pytest.approx(2.6222, abs=5e-5)


def test_d_opt_large_gain() -> None:
    # m = [.7,.4,.2,.1,.05,.02,.01], D 7, ρ 0.1: S(7) = 2.48 / 1.7 = 1.4588;
    # S(3) = 2.3 / 1.3 = 1.7692 (S(2) = 2.1/1.2 = 1.75, S(4) = 2.4/1.4 = 1.7143); gain 0.2128
    m = derived.compute(
        deployment(
            d=7,
            al=2.48,
            rho=0.1,
            inputs=_profile((0.7, 0.4, 0.2, 0.1, 0.05, 0.02, 0.01)),
        )
    )
    assert m.optimal_draft_length is not None
    assert m.optimal_draft_length.draft_length == 3
    assert m.optimal_draft_length.speedup == pytest.approx(1.7692, abs=5e-5)
    assert m.optimal_draft_length.gain == pytest.approx(0.2128, abs=5e-5)


def test_d_opt_ties_go_to_the_smaller_d() -> None:
    # ρ 0, m = [1, 0, 0]: AL(1) = AL(2) = AL(3) = 2 → S equal → D_opt 1
    curve = speedup_curve([1.0, 0.0, 0.0], 3, 2.0, lambda _d: 1.0)
    best = optimal_draft_length(curve)
    assert best is not None and best.draft_length == 1 and best.gain == 0


def test_d_opt_short_profile_uses_al_at_d() -> None:
    # profile of 2 positions, D = 5 from the config: S(1), S(2) from the profile, S(5) from AL
    curve = speedup_curve([0.5, 0.2], 5, 2.0, lambda d: 1 + 0.1 * d)
    assert [p.draft_length for p in curve] == [1, 2, 5]
    # S(1) = 1.5 / 1.1 = 1.3636; S(2) = 1.7 / 1.2 = 1.4167; S(5) = 2 / 1.5 = 1.3333
    best = optimal_draft_length(curve)
    assert best is not None and best.draft_length == 2


def test_d_opt_never_loops_over_a_huge_d() -> None:
    # D = 10**18 read from a file: the curve has the profile's 3 points plus D itself
    curve = speedup_curve([0.5, 0.3, 0.1], 10**18, 2.0, lambda _d: 1.0)
    assert len(curve) == 4


def test_iid_estimates_are_not_profiles() -> None:
    from specgate.inputs.types import Acceptance
    from specgate.model.referenced import Inputs

    estimate = Acceptance(format="iid-rate", path=None, accept_length=2.0, formula="",
                          estimate=True, marginal=(0.5, 0.25, 0.125))
    dep = deployment(d=3, al=2.0, rho=0.1)
    dep = dep._replace(inputs=Inputs(acceptance=estimate))
    assert derived.compute(dep).optimal_draft_length is None


# --- properties -----------------------------------------------------------------------------

_al = st.floats(min_value=1.0, max_value=64.0)
_rho = st.floats(min_value=0.0, max_value=2.0)
_beta = st.floats(min_value=1.0, max_value=64.0)
_d = st.integers(min_value=0, max_value=64)
_kind = st.sampled_from(["per_token", "single"])


@st.composite
def _costs(draw: st.DrawFn) -> tuple[float, float, int]:
    """(β, ρ, passes) of one deployment."""
    kind = draw(_kind)
    return draw(_beta), draw(_rho), theory.pass_count(draw(_d), kind)  # type: ignore[arg-type]


@given(_al, _al, _costs())
def test_speedup_is_monotone_in_al(a: float, b: float, costs: tuple[float, float, int]) -> None:
    low, high = sorted((a, b))
    cost = theory.step_cost(*costs)
    assert theory.speedup(low, cost) <= theory.speedup(high, cost)


@given(_al, _rho, _costs())
def test_speedup_is_antitone_in_rho(
    al: float, other: float, costs: tuple[float, float, int]
) -> None:
    beta, rho, passes = costs
    low, high = sorted((rho, other))
    assert theory.speedup(al, theory.step_cost(beta, high, passes)) <= theory.speedup(
        al, theory.step_cost(beta, low, passes)
    )


@given(_al, _beta, _costs())
def test_speedup_is_antitone_in_beta(
    al: float, other: float, costs: tuple[float, float, int]
) -> None:
    beta, rho, passes = costs
    low, high = sorted((beta, other))
    assert theory.speedup(al, theory.step_cost(high, rho, passes)) <= theory.speedup(
        al, theory.step_cost(low, rho, passes)
    )


@given(st.integers(min_value=1, max_value=4096), st.integers(min_value=1, max_value=64),
       st.integers(min_value=1, max_value=64))
def test_roofline_beta_is_at_least_one_and_grows_with_n(batch: int, n1: int, n2: int) -> None:
    low, high = sorted((n1, n2))
    assert theory.roofline_verify_cost(batch, low, 295.22) >= 1
    assert theory.roofline_verify_cost(batch, low, 295.22) <= theory.roofline_verify_cost(
        batch, high, 295.22
    )


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40),
       st.integers(min_value=1, max_value=10**9), _rho, _al)
def test_d_opt_never_exceeds_the_measured_d(rates: list[float], d: int, rho: float,
                                            al: float) -> None:
    rates = sorted(rates, reverse=True)
    curve = speedup_curve(rates, d, al, lambda length: 1 + rho * length)
    best = optimal_draft_length(curve)
    assert best is not None
    assert 1 <= best.draft_length <= d
    assert best.gain >= 0


@st.composite
def _floor_inputs(draw: st.DrawFn) -> Deployment:
    """A deployment with D ≥ 1 and any mix of stated ρ, measured speedup and min_gain."""
    return deployment(
        d=draw(st.integers(min_value=1, max_value=64)),
        al=draw(_al),
        rho=draw(st.one_of(st.none(), _rho)),
        passes=draw(_kind),
        min_gain=draw(st.floats(min_value=0.0, max_value=1.0)),
        evidence={"measured_speedup": draw(st.one_of(st.none(), st.floats(0.01, 64.0)))},
    )


@given(_floor_inputs())
def test_default_floor_is_never_below_break_even(dep: Deployment) -> None:
    # the default floor ≥ the break-even AL (with the ρ a fail rests on), unless capped at 1 + D
    m = derived.compute(dep)
    d = dep.speculation.draft_length
    assert d is not None
    floor = m.accept_length_floor.value
    assert floor is not None
    proven_cost = theory.step_cost(m.verify_cost_ratio, m.proven_draft_depth_ratio, m.passes)
    assert floor >= min(proven_cost, 1 + d) - 1e-12
    assert floor <= 1 + d
