"""Metrics derived from one deployment by the theory (the JSON report's ``metrics``).

This module decides which inputs the theory uses (DESIGN.md §8): the draft
passes, the verify cost β and its source, the ρ of §8.2 and its source, the AL
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
from specgate.core.vocabulary import SINGLE_PASS_MECHANISMS, DraftPasses
from specgate.model.deployment import Deployment, SpeculationBlock
from specgate.theory import formulas as theory
from specgate.theory.gpus import gpu_table

if TYPE_CHECKING:
    from specgate.inputs.types import EngineConfig

#: ``policy.min_gain`` default: the default floor asks for a 10 % gain over break-even.
DEFAULT_MIN_GAIN = 0.10
#: ``policy.retune_gain`` default: SG205 suggests another D from a 5 % gain.
DEFAULT_RETUNE_GAIN = 0.05

VerifyCostSource = Literal["memory-bound", "roofline", "measured", "assumed"]
RatioSource = Literal["stated", "measured", "typical"]


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


class VerifyCost(NamedTuple):
    """β at the deployment's concurrency and how it was obtained.

    ``at(n)`` is β for ``n`` verify tokens: a roofline β is recomputed at each N,
    a measured or assumed β is reused (DESIGN.md §8.9). ``assumed_because`` says
    why SG207 fires (``None`` when it does not).
    """

    value: float
    source: VerifyCostSource
    at: Callable[[int], float]
    assumed_because: str | None = None
    concurrency: int | None = None
    n_star: float | None = None


class Metrics(NamedTuple):
    """Numbers the report shows for a deployment; see DESIGN.md §4 and §8.8 for units."""

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
    draft_increase: theory.DraftIncrease | None
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
    optimal_draft_length: theory.OptimalDraftLength | None = None
    # What the rules need beyond the report:
    proven_draft_depth_ratio: float = 0.0
    proven_speedup: float | None = None
    typical_draft_depth_ratio: float = 0.0
    min_gain: float = DEFAULT_MIN_GAIN
    retune_gain: float = DEFAULT_RETUNE_GAIN

    @property
    def verify_cost_ratio(self) -> float:
        """β (1 when not computed)."""
        return self.verify_cost.value if self.verify_cost else 1.0


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


def verify_cost(deployment: Deployment, verify_tokens: int | None) -> VerifyCost:
    """β of §8.1: measured, else roofline from ``hardware`` at ``workload.concurrency``,
    else 1 (memory-bound at one sequence; ``assumed`` when the deployment runs many
    sequences, or names hardware without a usable pair)."""
    measured = deployment.evidence.verify_cost_ratio
    if measured is not None:
        return VerifyCost(measured, "measured", lambda _n: measured)
    workload = deployment.workload
    hardware = deployment.hardware
    concurrency = workload.concurrency
    if concurrency is None and workload.latency_region == "throughput":
        return _assumed(
            "workload.latency_region is throughput but workload.concurrency is not given"
        )
    peak, bandwidth = hardware.peak_tflops, hardware.memory_bandwidth_tbps
    if hardware.gpu is not None:
        row = gpu_table()[hardware.gpu]
        peak = peak if peak is not None else row.peak_tflops
        bandwidth = bandwidth if bandwidth is not None else row.memory_bandwidth_tbps
    batch = concurrency or 1
    if peak is None or bandwidth is None:
        if hardware.names_roofline:
            return _assumed(
                "hardware gives no usable pair of peak_tflops and memory_bandwidth_tbps (or gpu)"
            )
        if batch > 1:
            return _assumed(f"workload.concurrency {batch} without hardware or a measured β")
        return VerifyCost(1.0, "memory-bound", lambda _n: 1.0)
    weight_bytes = hardware.weight_bytes or theory.DEFAULT_WEIGHT_BYTES
    n_star = theory.compute_bound_tokens(peak, bandwidth, weight_bytes)

    def at(n: int) -> float:
        return theory.roofline_verify_cost(batch, n, n_star)

    return VerifyCost(at(verify_tokens or 1), "roofline", at, concurrency=batch, n_star=n_star)


def _assumed(reason: str) -> VerifyCost:
    return VerifyCost(1.0, "assumed", lambda _n: 1.0, assumed_because=reason)


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
    """The measured per-position profile m_1 … m_L, or ``()`` (DESIGN.md §8.6, §8.9).

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


def _tile_rows(deployment: Deployment) -> int:
    rows = deployment.hardware.attention_tile_rows
    if rows is not None:
        return rows
    return theory.MLA_TILE_ROWS if deployment.model.mla else theory.TILE_ROWS


class _Ratio(NamedTuple):
    value: float
    source: RatioSource
    typical: float

    @property
    def proven(self) -> float:
        """ρ for fail decisions: stated or measured, else 0 (DESIGN.md §8.2–§8.3)."""
        return self.value if self.source in ("stated", "measured") else 0.0


def _draft_depth_ratio(
    deployment: Deployment, measured: float | None, beta: float, passes: int
) -> _Ratio:
    """ρ of §8.2: stated, else measured from a measured speedup, else the class's typical ρ."""
    spec = deployment.speculation
    al, d = deployment.evidence.accept_length, spec.draft_length
    cls = mechanisms.declared(deployment) or mechanisms.recommend(deployment)
    typical = cls.draft_depth_ratio_hint
    if spec.draft_depth_ratio is not None:
        return _Ratio(spec.draft_depth_ratio, "stated", typical)
    if al is not None and measured is not None and d is not None and d >= 1:
        rho = theory.measured_draft_depth_ratio(al, measured, beta, passes)
        if rho is not None:
            return _Ratio(rho, "measured", typical)
    return _Ratio(typical, "typical", typical)


class _Tiles(NamedTuple):
    d_star: int | None = None
    aligned: bool | None = None
    aligned_d: int | None = None
    tiles: int | None = None
    aligned_n: int | None = None


def _tiles(deployment: Deployment, rows: int, verify: int | None) -> _Tiles:
    """D*, tile count and alignment of §8.4 (exact arithmetic on G)."""
    g = deployment.model.query_heads_per_kv
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
    """§8.3: none at D = 0; β·(1 + min_gain) with D unknown; else break-even × (1 + min_gain)."""
    if d is None:
        return beta * (1.0 + min_gain)
    if d < 1:
        return None
    return theory.default_accept_length_floor(proven_cost, min_gain, d)


def compute(deployment: Deployment, floor_override: float | None = None) -> Metrics:
    """All derived metrics of ``deployment`` (DESIGN.md §8)."""
    spec = deployment.speculation
    evidence = deployment.evidence
    al = evidence.accept_length
    d = spec.draft_length
    engine = deployment.inputs.engine if deployment.inputs else None
    kind = draft_passes(spec, engine)
    passes = theory.pass_count(d, kind) if d is not None else 0
    verify = spec.verify_tokens
    if d is not None and (verify is None or verify < d + 1):
        verify = d + 1  # a chain; a stated N below 1 + D is SG001 (or a D from another file)
    beta = verify_cost(deployment, verify)
    measured = measured_speedup(deployment)
    ratio = _draft_depth_ratio(deployment, measured, beta.value, passes)
    rho = ratio.value

    def cost_at(n_verify: int, length: int) -> float:
        return theory.step_cost(beta.at(n_verify), rho, theory.pass_count(length, kind))

    cost = theory.step_cost(beta.value, rho, passes)
    proven_cost = theory.step_cost(beta.value, ratio.proven, passes)
    # An AL below 1 is impossible (SG103): no speedup is computed from it, so no
    # negative or sub-plain "speedup" is printed and no second rule repeats the cause.
    possible = al is not None and al >= 1
    speedup = theory.speedup(al, cost) if al is not None and possible and d is not None else None

    increase = None
    if speedup is not None and d is not None and evidence.has_next:
        next_d = evidence.next_draft_length or 0
        next_n = evidence.next_verify_tokens or next_d + 1
        increase = theory.draft_increase(
            speedup, theory.speedup(evidence.next_accept_length or 0.0, cost_at(next_n, next_d))
        )

    optimal = None
    rates = profile(deployment)
    if rates and al is not None and d is not None and d >= 1:

        def at_length(length: int) -> float:
            n = verify if length == d and verify is not None else length + 1
            return cost_at(n, length)

        # S(D) and S(D_opt) from one source: the profile's own AL(D) when it covers D
        # (a stated AL that misses 1 + Σm is SG305's finding, not a gain to retune for).
        al_at_d = 1.0 + math.fsum(rates[:d]) if len(rates) >= d else al
        optimal = theory.optimal_draft_length(theory.speedup_curve(rates, d, al_at_d, at_length))

    rows = _tile_rows(deployment)
    tiles = _tiles(deployment, rows, verify)
    min_gain = _min_gain(deployment)
    return Metrics(
        accept_length=al,
        draft_length=d,
        draft_depth_ratio=rho,
        draft_overhead=theory.draft_overhead(rho, passes) if d is not None else None,
        theoretical_speedup=speedup,
        claimed_speedup=deployment.claimed_speedup,
        query_heads_per_kv=deployment.model.query_heads_per_kv,
        attention_optimal_draft_length=tiles.d_star,
        verify_tokens=verify,
        tile_aligned=tiles.aligned,
        tile_aligned_draft_length=tiles.aligned_d,
        accept_length_floor=accept_length_floor(
            deployment, floor_override, _default_floor(d, beta.value, proven_cost, min_gain)
        ),
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
        proven_speedup=theory.speedup(al, proven_cost) if al is not None and possible else None,
        typical_draft_depth_ratio=ratio.typical,
        min_gain=min_gain,
        retune_gain=deployment.retune_gain
        if deployment.retune_gain is not None
        else DEFAULT_RETUNE_GAIN,
    )


def _min_gain(deployment: Deployment) -> float:
    return deployment.min_gain if deployment.min_gain is not None else DEFAULT_MIN_GAIN
