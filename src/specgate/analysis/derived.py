"""Metrics derived from one deployment by the theory (the JSON report's ``metrics``).

This module decides which inputs the theory uses (docs/theory.md#cost-model): the draft
passes, the verify cost β and its source, the ρ of docs/theory.md#which-rho and its source, the AL
floor, the attention tiles and the optimal draft length. It holds no
thresholds and no messages: rules judge what it computes.

A metric that cannot be computed is ``None``: no AL or D ⇒ no theoretical
speedup; no G ⇒ no D*, tiles or alignment; no D ⇒ ``tile_aligned`` is ``None``
and ``tile_aligned_draft_length`` is D*.
"""

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Literal, NamedTuple

from specgate.analysis import mechanisms
from specgate.analysis.verify_cost import (
    VerifyCost,
    capped_by_measurement,
    tile_rows,
    verify_cost,
    warning_value,
)
from specgate.core.vocabulary import SINGLE_PASS_MECHANISMS, DraftPasses
from specgate.model.deployment import Deployment, SpeculationBlock
from specgate.model.step_inputs import Grouping, query_heads_per_kv
from specgate.theory import formulas as theory

if TYPE_CHECKING:
    from specgate.inputs.types import EngineConfig
    from specgate.theory.draft_choice import DraftIncrease, OptimalDraftLength
else:  # Metrics' field types are evaluated when the class is made: these stand in for
    # the draft-length choices, imported only for evidence.next or an acceptance profile
    DraftIncrease = OptimalDraftLength = object

#: ``policy.min_gain`` default: the default floor asks for a 10 % gain over break-even.
DEFAULT_MIN_GAIN = 0.10
#: ``policy.retune_gain`` default: SG205 suggests another D from a 5 % gain.
DEFAULT_RETUNE_GAIN = 0.05

RatioSource = Literal["stated", "measured", "derived", "typical"]


def fewest_draft_passes(
    passes: int, accept_length: float | None, *, at_most: bool, kind: DraftPasses
) -> float:
    """The cheapest reading of the draft passes per step (docs/theory.md#d-is-a-maximum).

    With D only a maximum (``at_most``: adaptive drafting, the n-gram that may propose
    fewer, llama.cpp's ``--draft-p-min``, a confidence cut-off) and one pass per draft
    token, a step drafts at least what it accepts and one pass finds out it drafts
    nothing: the mean passes per step lie in [max(1, AL − 1), D]. This is the low end,
    never above ``passes`` (D); ``accept_length`` ``None`` (the AL at the served D is not
    known) reads as 1. Else ``passes`` itself. n-gram D 8, AL 2.0: max(1, 1.0) = 1."""
    if not at_most or kind != "per_token" or passes <= 1:
        return float(passes)
    al = accept_length if accept_length is not None else 1.0
    return min(float(passes), max(1.0, al - 1.0))


def may_draft_fewer(spec: SpeculationBlock) -> bool:
    """Whether a step may draft fewer than D: D is a maximum, or moves during the run
    (a step still drafts at least what it accepts, docs/theory.md#d-is-a-maximum)."""
    return spec.draft_length_is_max or spec.draft_length_moves is not None


def draft_passes(
    speculation: SpeculationBlock, engine: "EngineConfig | None" = None
) -> DraftPasses:
    """Whether the drafter runs one forward per draft token or one for all.

    ``speculation.draft_passes`` as written, else the engine config's (when its
    reader states one), else the mechanism's default: ``single`` for DFlash and
    PARD, ``per_token`` for everything else (Medusa included, so v1 files keep
    their meaning; the docs recommend ``single`` for Medusa heads).
    """
    if speculation.draft_passes is not None:
        return speculation.draft_passes
    if engine is not None and engine.draft_passes is not None:
        return engine.draft_passes
    return "single" if speculation.mechanism in SINGLE_PASS_MECHANISMS else "per_token"


class AcceptLengthFloor(NamedTuple):
    """The AL floor in force and where it came from (``default``, ``policy``, ``cli``).

    ``value`` is ``None`` when there is no floor (the default at D = 0).
    """

    value: float | None
    source: str

    @property
    def explicit(self) -> bool:
        """Set by the user (policy or CLI) rather than the default."""
        return self.source != "default"


class Metrics(NamedTuple):
    """Numbers the report shows for a deployment; see docs/reports.md#json-report for units."""

    accept_length: float | None
    draft_length: int | None
    draft_depth_ratio: float | None
    draft_overhead: float | None
    theoretical_speedup: float | None
    claimed_speedup: float | None
    query_heads_per_kv: Fraction | None
    attention_optimal_draft_length: int | None
    verify_tokens: int | None
    tile_aligned: bool | None
    tile_aligned_draft_length: int | None
    accept_length_floor: AcceptLengthFloor
    draft_increase: DraftIncrease | None
    next_draft_length: int | None = None
    draft_passes: DraftPasses = "per_token"
    passes: int = 0
    verify_cost: VerifyCost | None = None
    draft_depth_ratio_source: RatioSource | None = None
    break_even_accept_length: float | None = None
    speedup_ceiling: float | None = None
    measured_speedup: float | None = None
    attention_tiles: int | None = None
    attention_tile_rows: int = theory.TILE_ROWS
    tile_aligned_verify_tokens: int | None = None
    optimal_draft_length: OptimalDraftLength | None = None
    #: which G ``query_heads_per_kv`` is (per rank at a known TP, else the model's)
    grouping: Grouping = Grouping(None)
    # What the rules need beyond the report:
    proven_draft_depth_ratio: float = 0.0
    proven_speedup: float | None = None
    typical_draft_depth_ratio: float = 0.0
    min_gain: float = DEFAULT_MIN_GAIN
    retune_gain: float = DEFAULT_RETUNE_GAIN
    draft_depth_ratio_range: tuple[float, float] | None = None
    evidence_stale: bool = False
    proven_cost: float | None = None
    measured_speedup_range: tuple[float, float] | None = None
    #: The lowest speedup ``claims.speedup`` can be a rounding of
    #: (:func:`claimed_speedup_low`); the claim itself when it is taken as exact.
    claimed_speedup_low: float | None = None
    #: Whether ``claims.speedup`` as written can be a rounding of a value at or below the
    #: measured speedup as written (:func:`claim_rounds_measurement`): SG107's note.
    claim_rounds_measurement: bool = False
    #: The most AL can be at the served D (AL itself unless the evidence is stale;
    #: :func:`specgate.theory.formulas.accept_length_upper_bound`): what fails use.
    accept_length_upper: float | None = None
    #: The D the AL was measured at when stale and known, and how it is known
    #: (``"evidence"``: the measurement states it; else the base revision's REF).
    accept_length_measured_at: int | None = None
    accept_length_measured_by: str | None = None
    #: The base revision's REF when ρ is the base's (the head keeps the base's measured
    #: speedup while its AL moved: the speedup was measured with the base's AL, so ρ is
    #: not re-fitted to the pair; new-user defect 6), else ``None``.
    draft_depth_ratio_from: str | None = None
    #: The draft passes per step the fails price: ``passes``, or with D only a maximum
    #: and ρ stated the fewest a step can take, max(1, AL − 1)
    #: (:func:`fewest_draft_passes`, docs/theory.md#d-is-a-maximum).
    fail_passes: float = 0.0
    #: With ``fail_passes`` below ``passes``: the proven S and the default AL floor priced
    #: at ``passes`` (every step drafting D), what only a warning may rest on; else ``None``.
    speedup_at_d: float | None = None
    accept_length_floor_at_d: float | None = None

    @property
    def verify_cost_ratio(self) -> float:
        """β, the estimate (1 when not computed)."""
        return self.verify_cost.value if self.verify_cost else 1.0

    @property
    def warning_verify_cost_ratio(self) -> float:
        """β for warnings: :func:`~specgate.analysis.verify_cost.warning_value` (1 when
        not computed)."""
        return warning_value(self.verify_cost) if self.verify_cost else 1.0

    @property
    def proven_verify_cost_ratio(self) -> float:
        """β for fails: the lower bound of docs/theory.md#proven-verify-cost (1 when not
        computed)."""
        return self.verify_cost.proven if self.verify_cost else 1.0


def measured_speedup(deployment: Deployment) -> float | None:
    """``evidence.measured_speedup``, else speculative / baseline tokens per second."""
    evidence = deployment.evidence
    if evidence.measured_speedup is not None:
        return evidence.measured_speedup
    base, spec = evidence.baseline_tokens_per_s, evidence.speculative_tokens_per_s
    if base is not None and spec is not None:
        ratio = spec / base
        return ratio if math.isfinite(ratio) and ratio > 0 else None
    return None


def measured_speedup_range(deployment: Deployment) -> tuple[float, float] | None:
    """The measured speedup with the precision of its inputs as written: S ± half a
    unit of its last digit, or (spec − h_s) / (base + h_b) … (spec + h_s) / (base − h_b)
    for a throughput pair; ``None`` without a measurement or when the precision is not
    known (the value is then exact).

    Review real.md defect 3: 253 and 111 TPS/user give 252.5 / 111.5 = 2.2646 …
    253.5 / 110.5 = 2.2941, so the source's "2.28x" lies inside the measurement.
    """
    evidence = deployment.evidence
    speedup_unit, base_unit, spec_unit = evidence.printed_half_units
    measured = measured_speedup(deployment)
    if measured is None:
        return None
    if evidence.measured_speedup is not None:
        if speedup_unit is None:
            return None
        return (max(0.0, measured - speedup_unit), measured + speedup_unit)
    base, spec = evidence.baseline_tokens_per_s, evidence.speculative_tokens_per_s
    if base is None or spec is None or base_unit is None or spec_unit is None:
        return None
    if not base - base_unit > 0:
        return None
    low, high = max(0.0, spec - spec_unit) / (base + base_unit), (spec + spec_unit) / (
        base - base_unit
    )
    return (low, high) if math.isfinite(high) else None


#: A claim is read as a rounding only when written with at least two significant
#: digits: half a unit of its last digit at most this share of it ("1.6" → 3.1 %,
#: "10" → 5 %; "2" → 25 % is a round number, not a rounding of 1.6).
_ROUNDING_SHARE = 0.05


def claimed_speedup_low(deployment: Deployment) -> float | None:
    """The lowest speedup that ``claims.speedup`` as written is a rounding of: the claim
    less half a unit of its last digit (``1.84`` → 1.835), when it is written with two or
    more significant digits; else the claim (``2`` is not a rounding of 1.6); ``None``
    without a claim.

    Review real-r4 defect 3 (sudoingX/qwen38-mtp PR #11): 116.3 → 63.3 tok/s, published
    "+84%" = 1.84x; 116.3/63.3 = 1.8373 rounds to 1.84 at two decimals, so claim 1.84
    is the source's own rounding (1.835 ≤ 1.8395, the measurement's upper end).
    """
    claimed, unit = deployment.claimed_speedup, deployment.claimed_half_unit
    if claimed is None or unit is None or not unit <= _ROUNDING_SHARE * claimed:
        return claimed
    return claimed - unit


def _exact(value: float) -> Fraction:
    """The decimal a float was read from, exactly (``1.6`` → 8/5, not the binary float)."""
    return Fraction(repr(value))


def claim_rounds_measurement(deployment: Deployment) -> bool:
    """Whether ``claims.speedup`` as written can be a rounding of a speedup at or below the
    measured one as written (docs/theory.md#measured-speedup-precision): a number written
    with last-digit unit 2u stands for [x − u, x + u) (round half up: the upper end rounds
    up to the next digit), so the claim can be such a rounding iff its lowest value
    c − u_c lies below the measurement's upper end m + u_m (excluded), or at or below an
    exact measurement. Exact rational arithmetic on the decimals as written, so a boundary
    is never decided by binary rounding.

    Measured "1.6" is [1.55, 1.65); claimed "1.7" is [1.65, 1.75): 1.65 < 1.65 is false,
    so 1.7 is no rounding of 1.6 (trial-a defect 1). Measured "1.65" is [1.645, 1.655):
    1.65 < 1.655, so 1.7 is (1.65 rounds half up to 1.7). The one test of SG107 and of
    SG112 (:mod:`specgate.rules.estimate_risk`), for ``check`` and ``doctor`` alike.
    """
    claimed = deployment.claimed_speedup
    measured = measured_speedup(deployment)
    if claimed is None or measured is None:
        return False
    lowest = _exact(claimed)
    unit = deployment.claimed_half_unit
    if unit is not None and unit <= _ROUNDING_SHARE * claimed:  # as claimed_speedup_low
        lowest -= _exact(unit)
    evidence = deployment.evidence
    speedup_unit, base_unit, spec_unit = evidence.printed_half_units
    if evidence.measured_speedup is not None:
        if speedup_unit is None:
            return lowest <= _exact(measured)
        return lowest < _exact(measured) + _exact(speedup_unit)
    base, spec = evidence.baseline_tokens_per_s, evidence.speculative_tokens_per_s
    if base is None or spec is None:  # not reached: measured_speedup() read the pair
        return False
    if base_unit is None or spec_unit is None or not base > base_unit:
        return lowest <= _exact(spec) / _exact(base)
    return lowest < (_exact(spec) + _exact(spec_unit)) / (_exact(base) - _exact(base_unit))


def accept_length_floor(
    deployment: Deployment, override: float | None, default: float | None
) -> AcceptLengthFloor:
    """CLI ``--min-accept-length`` beats ``policy.min_accept_length`` beats the default."""
    if override is not None:
        return AcceptLengthFloor(override, "cli")
    if deployment.min_accept_length is not None:
        return AcceptLengthFloor(deployment.min_accept_length, "policy")
    return AcceptLengthFloor(default, "default")


def profile(deployment: Deployment) -> tuple[float, ...]:
    """The measured per-position profile m_1 … m_L, or ``()`` (docs/theory.md#optimal-draft-length,
    docs/theory.md#edge-cases).

    From referenced or inline acceptance data that is a measurement (never
    ``iid-rate`` or an estimate; the doctor's ``--per-position`` is inline data). A
    profile with a value outside [0, 1] is SG305's business and is not used here.
    """
    inputs = deployment.inputs
    acceptance = inputs.acceptance if inputs else None
    rates: tuple[float, ...] = ()
    if acceptance is not None and not acceptance.estimate and acceptance.format != "iid-rate":
        rates = acceptance.marginal
    if not all(math.isfinite(m) and 0.0 <= m <= 1.0 for m in rates):
        return ()
    return rates


class _Ratio(NamedTuple):
    value: float
    source: RatioSource
    typical: float
    proven_value: float = 0.0
    range: tuple[float, float] | None = None

    @property
    def proven(self) -> float:
        """ρ for fail decisions: stated or derived from a measurement, else 0
        (docs/theory.md#which-rho, docs/theory.md#al-floor-and-guideline)."""
        return self.proven_value if self.source in ("stated", "measured", "derived") else 0.0


def _draft_depth_ratio(
    deployment: Deployment,
    measured: float | None,
    beta: VerifyCost,
    *,
    passes: int,
    kind: DraftPasses,
    stale: tuple[bool, int | None],
) -> _Ratio:
    """ρ of docs/theory.md#which-rho: stated; else derived from a measured speedup and AL, ρ = (AL /
    S − β) / passes (``derived``: docs/theory.md#which-rho, "measured" is kept for a measured ρ);
    else the class's typical ρ.

    Derived at the D the evidence was measured at (a config-only change of D keeps the
    drafter's ρ, docs/theory.md#which-rho); not derived when that D is unknown. With D only a
    maximum (adaptive drafting) the passes per step lie between max(1, AL − 1) (a step
    drafts at least what it accepts, and one pass finds out it drafts nothing) and D,
    so ρ is a range; ``value`` is its low end (every step drafting D). A D that moves
    during the run may average more passes than D: the range then starts at 0."""
    spec = deployment.speculation
    al, d = deployment.evidence.accept_length, spec.draft_length
    cls = mechanisms.declared(deployment) or mechanisms.recommend(deployment)
    typical = cls.draft_depth_ratio_hint
    if spec.draft_depth_ratio is not None:
        return _Ratio(spec.draft_depth_ratio, "stated", typical, spec.draft_depth_ratio)
    is_stale, measured_at = stale
    if al is None or measured is None or d is None or d < 1:
        return _Ratio(typical, "typical", typical)
    beta_at, proven_beta, count = beta.value, beta.proven, passes
    if is_stale:
        if measured_at is None or measured_at < 1:
            return _Ratio(typical, "typical", typical)
        beta_at = proven_beta = beta.at(measured_at + 1)
        count = theory.pass_count(measured_at, kind)
    rho = theory.measured_draft_depth_ratio(al, measured, beta_at, count)
    if rho is None:
        return _Ratio(typical, "typical", typical)
    proven = theory.measured_draft_depth_ratio(al, measured, proven_beta, count)
    span = None
    if may_draft_fewer(spec) and kind == "per_token" and (count > 1 or spec.draft_length_moves):
        fewest = fewest_draft_passes(count, al, at_most=True, kind=kind)
        # a D that moves may average more passes than its starting value: no low end
        span = (0.0 if spec.draft_length_moves else rho, rho * count / fewest)
    return _Ratio(rho, "derived", typical, rho if proven is None else proven, span)


def _stale(
    deployment: Deployment, d: int | None, measured_at: int | None = None
) -> tuple[bool, int | None]:
    """Whether the acceptance evidence was measured at another D than the deployment's
    (SG309's condition, or ``measured_at``: the D the AL is known to belong to from
    elsewhere, the base revision's under ``--baseline``), and that D when known
    (docs/trust.md#nothing-stale-drives-advice: nothing stale drives advice)."""
    inputs = deployment.inputs
    acceptance = inputs.acceptance if inputs else None
    if d is None:
        return False, None
    if acceptance is not None and acceptance.draft_length is not None:
        return acceptance.draft_length != d, acceptance.draft_length
    least = acceptance.min_draft_length if acceptance is not None else None
    if least is not None and least > d:
        return True, measured_at if measured_at is not None and measured_at >= least else None
    if measured_at is not None and measured_at != d:
        return True, measured_at
    return False, None


def _accept_length_upper(
    deployment: Deployment,
    al: float | None,
    d: int | None,
    verify: int | None,
    stale: tuple[bool, int | None],
) -> float | None:
    """AL, or with evidence measured at another D the most AL can be at the served D
    (newuser review defect 3: an AL measured at a shorter chain is a lower bound there,
    never the fail's upper one)."""
    if al is None or d is None or not stale[0]:
        return al
    measured_at = stale[1]
    if measured_at is None:
        acceptance = deployment.inputs.acceptance if deployment.inputs else None
        measured_at = acceptance.min_draft_length if acceptance is not None else None
    spec = deployment.speculation
    chain = not spec.tree_level_nodes and (verify is None or verify <= d + 1)
    return theory.accept_length_upper_bound(al, measured_at, d, chain=chain)


def _measured_by(deployment: Deployment, at: int, known: tuple[int, str] | None) -> str:
    """``"evidence"`` when the measurement states the D it was taken at, else the
    REF whose D it is."""
    acceptance = deployment.inputs.acceptance if deployment.inputs else None
    if acceptance is not None and acceptance.draft_length == at:
        return "evidence"
    return known[1] if known is not None else "evidence"


class _Tiles(NamedTuple):
    d_star: int | None = None
    aligned: bool | None = None
    aligned_d: int | None = None
    tiles: int | None = None
    aligned_n: int | None = None


def _tiles(deployment: Deployment, rows: int, verify: int | None) -> _Tiles:
    """D*, tile count and alignment of docs/theory.md#attention-tiles (exact arithmetic on G)."""
    g = query_heads_per_kv(deployment).value
    if g is None:
        return _Tiles()
    d_star = theory.attention_optimal_draft_length(g, rows)
    if deployment.speculation.draft_length is None or verify is None:
        return _Tiles(d_star=d_star, aligned_d=d_star)
    tiles = theory.attention_tiles(g, verify, rows)
    return _Tiles(
        d_star=d_star,
        aligned=theory.is_tile_aligned(g, verify, rows),
        aligned_d=theory.tile_aligned_draft_length(g, tiles, rows),
        tiles=tiles,
        aligned_n=theory.tile_aligned_verify_tokens(g, tiles, rows),
    )


def _default_floor(d: int | None, beta: float, proven_cost: float, min_gain: float) -> float | None:
    """docs/theory.md#al-floor-and-guideline: none at D = 0; β·(1 + min_gain) with D unknown; else
    break-even × (1 + min_gain)."""
    if d is None:
        return beta * (1.0 + min_gain)
    if d < 1:
        return None
    return theory.default_accept_length_floor(proven_cost, min_gain, d)


def _verify_tokens(spec: SpeculationBlock, d: int | None) -> int | None:
    """N_verify: stated, else 1 + Σ ``tree_level_nodes``, else 1 + D (a chain); a stated
    N below 1 + D is SG001 (or a D from another file) and counts as a chain."""
    verify = spec.verify_tokens
    if verify is None and spec.tree_level_nodes:
        verify = 1 + sum(spec.tree_level_nodes)
    if d is not None and (verify is None or verify < d + 1):
        verify = d + 1
    return verify


def _depth_tokens(spec: SpeculationBlock, d: int, verify: int | None) -> Callable[[int], int]:
    """N_d, the verify tokens of the draft truncated at depth ``length``
    (docs/theory.md#proven-verify-cost): 1 + Σ_{i≤d} nodes_i with ``tree_level_nodes``; the whole
    tree's N_verify for a tree without them (an upper bound on its cost, never a chain); 1 + d for a
    chain. At the deployment's own depth, its N_verify."""
    levels = spec.tree_level_nodes
    tree = verify is not None and verify > d + 1

    def tokens(length: int) -> int:
        if length == d and verify is not None:
            return verify
        if levels and len(levels) >= length:
            return 1 + sum(levels[:length])
        if tree and verify is not None:
            return verify
        return length + 1

    return tokens


def _robust_increase(speedups: list[tuple[float, float]]) -> DraftIncrease | None:
    """One verdict over every ρ of a range, from S at D and at the larger D at each ρ:
    an increase if any ρ gives one (SG203 then stays quiet); else the result closest to
    an increase."""
    from specgate.theory.draft_choice import draft_increase

    results = [draft_increase(current, larger) for current, larger in speedups]
    if not results:
        return None
    rising = [r for r in results if r.increase]
    pool = rising or results
    return max(pool, key=lambda r: r.delta_speedup)


def _robust_optimum(
    rates: tuple[float, ...], d: int, al_at_d: float, prices: list[Callable[[int], float]]
) -> OptimalDraftLength | None:
    """One D_opt over every ρ of a range (``prices``: cost(d) at each ρ): the smallest
    gain when all agree on the D, else the result at the low end with no gain (SG205
    then stays quiet)."""
    from specgate.theory.draft_choice import optimal_draft_length, speedup_curve

    results = [optimal_draft_length(speedup_curve(rates, d, al_at_d, p)) for p in prices]
    found = [r for r in results if r is not None]
    if not found:
        return None
    if len({r.draft_length for r in found}) == 1:
        return min(found, key=lambda r: r.gain)
    first = found[0]
    return first._replace(gain=0.0)


def compute(
    deployment: Deployment,
    floor_override: float | None = None,
    *,
    measured_at: tuple[int, str] | None = None,
    base_ratio: tuple[float, float, str] | None = None,
) -> Metrics:
    """All derived metrics of ``deployment`` (docs/theory.md#cost-model,
    docs/theory.md#step-time-model).

    ``measured_at``: the D the AL is known to have been measured at and where that is
    known from (the base revision's D when the head keeps the base's AL and evidence
    unchanged, ``check --baseline``); with the evidence stating no D of its own, an AL
    at another D than the served one is then stale and the fails use its upper bound
    at the served D (:func:`specgate.theory.formulas.accept_length_upper_bound`).

    ``base_ratio``: ρ, its proven value and the REF, when the head keeps the base
    revision's measured speedup while its AL moved
    (:meth:`specgate.model.base_view.BaseView.ratio_for`): that speedup was measured with
    the base's AL, so ρ is the base's and not re-fitted to the head's AL (AL 2.8 → 2.1
    at a measured 1.95x, β 1, D 3: ρ 0.1453 stays, S = 2.1 / 1.4359 = 1.4625, not 1.95)."""
    spec = deployment.speculation
    evidence = deployment.evidence
    al = evidence.accept_length
    d = spec.draft_length
    engine = deployment.inputs.engine if deployment.inputs else None
    kind = draft_passes(spec, engine)
    passes = theory.pass_count(d, kind) if d is not None else 0
    verify = _verify_tokens(spec, d)
    beta = verify_cost(deployment, verify)
    grouping = query_heads_per_kv(deployment)
    measured = measured_speedup(deployment)
    stale = _stale(deployment, d, measured_at[0] if measured_at is not None else None)
    kept = base_ratio is not None and spec.draft_depth_ratio is None
    if not stale[0] and not kept and (d is None or al is None or al <= 1 + d):
        # The deployment's own measurement caps the estimate (β ≤ AL / S_measured); a
        # speedup kept from the base revision was not measured with this AL.
        beta = capped_by_measurement(beta, al, measured)
    if kept and base_ratio is not None:
        cls = mechanisms.declared(deployment) or mechanisms.recommend(deployment)
        ratio = _Ratio(base_ratio[0], "derived", cls.draft_depth_ratio_hint, base_ratio[1])
    else:
        ratio = _draft_depth_ratio(
            deployment, measured, beta, passes=passes, kind=kind, stale=stale
        )
    rho = ratio.value
    rhos = [rho] if ratio.range is None else list(ratio.range)

    def cost_at(n_verify: int, length: int, r: float = rho) -> float:
        return theory.step_cost(beta.at(n_verify), r, theory.pass_count(length, kind))

    cost = theory.step_cost(beta.value, rho, passes)
    # A fail prices the fewest passes a step can take when D is only a maximum
    # (docs/theory.md#d-is-a-maximum); a derived ρ already prices the measured cost.
    fail_passes = fewest_draft_passes(
        passes,
        None if stale[0] else al,
        at_most=may_draft_fewer(spec) and ratio.source == "stated",
        kind=kind,
    )
    proven_cost = theory.step_cost(beta.proven, ratio.proven, fail_passes)
    cost_at_d = (
        theory.step_cost(beta.proven, ratio.proven, passes) if fail_passes < passes else None
    )
    # An AL below 1 is impossible (SG103): no speedup is computed from it, so no
    # negative or sub-plain "speedup" is printed and no second rule repeats the cause.
    possible = al is not None and al >= 1
    al_upper = _accept_length_upper(deployment, al, d, verify, stale)
    speedup = theory.speedup(al, cost) if al is not None and possible and d is not None else None

    # Advice that re-prices another D (SG203, SG205) never rests on evidence measured
    # at another D than the deployment's (SG309 says it is stale;
    # docs/trust.md#nothing-stale-drives-advice).
    increase = None
    if (
        speedup is not None
        and al is not None
        and d is not None
        and evidence.has_next
        and not stale[0]
    ):
        next_d = evidence.next_draft_length or 0
        next_n = evidence.next_verify_tokens or next_d + 1
        next_al = evidence.next_accept_length or 0.0
        increase = _robust_increase(
            [
                (
                    theory.speedup(al, theory.step_cost(beta.value, r, passes)),
                    theory.speedup(next_al, cost_at(next_n, next_d, r)),
                )
                for r in rhos
            ]
        )

    optimal = None
    rates = profile(deployment)
    if rates and al is not None and d is not None and d >= 1 and not stale[0]:
        tokens = _depth_tokens(spec, d, verify)
        # S(D) and S(D_opt) from one source: the profile's own AL(D) when it covers D
        # (a stated AL that misses 1 + Σm is SG305's finding, not a gain to retune for).
        al_at_d = 1.0 + math.fsum(rates[:d]) if len(rates) >= d else al

        def priced(r: float) -> Callable[[int], float]:
            return lambda length: cost_at(tokens(length), length, r)

        optimal = _robust_optimum(rates, d, al_at_d, [priced(r) for r in rhos])

    rows = tile_rows(deployment)
    tiles = _tiles(deployment, rows, verify)
    min_gain = _min_gain(deployment)
    metrics = Metrics(
        accept_length=al,
        draft_length=d,
        draft_depth_ratio=rho,
        draft_overhead=theory.draft_overhead(rho, passes) if d is not None else None,
        theoretical_speedup=speedup,
        claimed_speedup=deployment.claimed_speedup,
        query_heads_per_kv=grouping.value,
        grouping=grouping,
        attention_optimal_draft_length=tiles.d_star,
        verify_tokens=verify,
        tile_aligned=tiles.aligned,
        tile_aligned_draft_length=tiles.aligned_d,
        accept_length_floor=accept_length_floor(
            deployment, floor_override, _default_floor(d, beta.proven, proven_cost, min_gain)
        ),
        fail_passes=fail_passes,
        speedup_at_d=theory.speedup(al_upper, cost_at_d)
        if cost_at_d is not None and al_upper is not None and possible
        else None,
        accept_length_floor_at_d=None
        if cost_at_d is None
        else _default_floor(d, beta.proven, cost_at_d, min_gain),
        draft_increase=increase,
        next_draft_length=evidence.next_draft_length,
        draft_passes=kind,
        passes=passes,
        verify_cost=beta,
        draft_depth_ratio_source=ratio.source,
        break_even_accept_length=cost,
        speedup_ceiling=theory.speedup(al, beta.value) if al is not None and possible else None,
        measured_speedup=measured,
        attention_tiles=tiles.tiles,
        attention_tile_rows=rows,
        tile_aligned_verify_tokens=tiles.aligned_n,
        optimal_draft_length=optimal,
        proven_draft_depth_ratio=ratio.proven,
        proven_speedup=theory.speedup(al_upper, proven_cost)
        if al_upper is not None and possible
        else None,
        accept_length_upper=al_upper,
        accept_length_measured_at=stale[1] if stale[0] else None,
        accept_length_measured_by=None
        if not stale[0] or stale[1] is None
        else _measured_by(deployment, stale[1], measured_at),
        draft_depth_ratio_from=base_ratio[2] if kept and base_ratio is not None else None,
        typical_draft_depth_ratio=ratio.typical,
        min_gain=min_gain,
        retune_gain=deployment.retune_gain
        if deployment.retune_gain is not None
        else DEFAULT_RETUNE_GAIN,
        draft_depth_ratio_range=ratio.range,
        evidence_stale=stale[0],
        proven_cost=proven_cost,
        measured_speedup_range=measured_speedup_range(deployment),
        claimed_speedup_low=claimed_speedup_low(deployment),
        claim_rounds_measurement=claim_rounds_measurement(deployment),
    )
    if deployment.speculation.enabled is not True and ratio.source == "typical":
        # A deployment that does not speculate gets no mechanism numbers (the class's
        # typical ρ, and the reporters print no recommendation); what it states stays.
        metrics = metrics._replace(
            draft_depth_ratio=None, draft_depth_ratio_source=None, draft_overhead=None
        )
    return metrics


def _min_gain(deployment: Deployment) -> float:
    return deployment.min_gain if deployment.min_gain is not None else DEFAULT_MIN_GAIN


def _all_finite(value: object) -> bool:
    """Whether every float in ``value`` (records and tuples nested) is finite."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, tuple):
            stack.extend(item)  # a record's fields are its items
    return True


def non_finite(metrics: Metrics) -> list[tuple[str, float]]:
    """Every number of ``metrics`` (nested records and tuples included) that is NaN or
    infinite, as (dotted name, value): the rules compare with these numbers and every
    comparison with NaN is false, so a non-finite metric would pass every rule
    (docs/trust.md#bounded-work). Empty for any deployment whose numbers are within the schema's
    bounds; the check is what holds when a bound is missing somewhere."""
    if _all_finite(metrics):  # the common case: no names built
        return []
    found: list[tuple[str, float]] = []
    stack: list[tuple[str, object]] = [("", metrics)]
    while stack:
        name, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                found.append((name, value))
        elif isinstance(value, tuple):
            fields = getattr(value, "_fields", None)
            if fields is not None:
                prefix = f"{name}." if name else ""
                stack.extend((f"{prefix}{f}", getattr(value, f)) for f in fields)
            else:
                stack.extend((f"{name}[{i}]", item) for i, item in enumerate(value))
    return sorted(found)
