"""Metrics derived from one deployment by the theory (the JSON report's ``metrics``).

A metric that cannot be computed is ``None``: no AL or D ⇒ no theoretical
speedup; no G ⇒ no D*, alignment or next aligned D; no D ⇒ ``tile_aligned``
is ``None`` (the next aligned D then starts from D*).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from specgate import theory
from specgate.model import Deployment


@dataclass(frozen=True)
class AcceptLengthFloor:
    """The AL floor in force and where it came from (``default``, ``policy``, ``cli``)."""

    value: float
    source: str

    @property
    def explicit(self) -> bool:
        """Set by the user (policy or CLI) rather than the default."""
        return self.source != "default"


@dataclass(frozen=True)
class Metrics:
    """Numbers the report shows for a deployment; see DESIGN.md §4 for units."""

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


def accept_length_floor(deployment: Deployment, override: float | None) -> AcceptLengthFloor:
    """CLI ``--min-accept-length`` beats ``policy.min_accept_length`` beats the default."""
    if override is not None:
        return AcceptLengthFloor(override, "cli")
    if deployment.min_accept_length is not None:
        return AcceptLengthFloor(deployment.min_accept_length, "policy")
    draft_length = deployment.speculation.draft_length
    return AcceptLengthFloor(theory.default_accept_length_floor(draft_length), "default")


def compute(deployment: Deployment, floor_override: float | None = None) -> Metrics:
    """All derived metrics of ``deployment`` (ρ absent counts as 0 in the theory)."""
    spec = deployment.speculation
    al = deployment.evidence.accept_length
    d = spec.draft_length
    rho = spec.draft_depth_ratio
    g = deployment.model.query_heads_per_kv

    speedup = None
    overhead = None
    if d is not None:
        overhead = theory.draft_overhead(rho, d)
        if al is not None:
            speedup = theory.theoretical_speedup(al, d, rho or 0.0)

    d_star = aligned = next_aligned = None
    verify = None
    if d is not None:
        verify = spec.verify_tokens if spec.verify_tokens is not None else d + 1
    if g is not None:
        d_star = theory.attention_optimal_draft_length(g)
        if verify is not None:
            aligned = theory.is_tile_aligned(g, verify)
        next_aligned = theory.next_aligned_draft_length(g, d if d is not None else d_star)

    increase = None
    evidence = deployment.evidence
    if (
        al is not None
        and d is not None
        and evidence.next_accept_length is not None
        and evidence.next_draft_length is not None
    ):
        increase = theory.draft_increase(
            al, d, evidence.next_accept_length, evidence.next_draft_length, rho or 0.0
        )

    return Metrics(
        accept_length=al,
        draft_length=d,
        draft_depth_ratio=rho,
        draft_overhead=overhead,
        theoretical_speedup=speedup,
        claimed_speedup=deployment.claimed_speedup,
        query_heads_per_kv=g,
        attention_optimal_draft_length=d_star,
        verify_tokens=verify,
        tile_aligned=aligned,
        tile_aligned_draft_length=next_aligned,
        accept_length_floor=accept_length_floor(deployment, floor_override),
        draft_increase=increase,
        next_draft_length=evidence.next_draft_length,
    )
