"""Draft length choices (docs/theory.md#optimal-draft-length): whether a larger D
measured in ``evidence.next`` is worth it, and the D that maximises S over a measured
acceptance profile.

Pure functions of numbers, as in :mod:`specgate.theory.formulas`; no loop runs longer
than a list it is given. Apart from that module so a check whose claims file has
neither ``evidence.next`` nor an acceptance profile never builds these records.
"""

from collections.abc import Callable, Sequence
from typing import NamedTuple

from specgate.theory.formulas import speedup


class DraftIncrease(NamedTuple):
    """Speedup at the current D and at a larger D measured in ``evidence.next``."""

    current_speedup: float
    next_speedup: float
    increase: bool
    delta_speedup: float


def draft_increase(current_speedup: float, next_speedup: float) -> DraftIncrease:
    """Compare S(D) with S(D_next); ``increase`` only when higher on 4-decimal values.

    A gain that rounds away is no gain. AL 5 → 5.2 for D 7 → 14 at ρ = 0.1, β = 1:
    5 / 1.7 = 2.9412 → 5.2 / 2.4 = 2.1667, no increase.

    Source: NVIDIA co-design blog ("raise D only while AL gains beat draft cost").
    """
    return DraftIncrease(
        current_speedup=current_speedup,
        next_speedup=next_speedup,
        increase=round(next_speedup, 4) > round(current_speedup, 4),
        delta_speedup=next_speedup - current_speedup,
    )


class SpeedupPoint(NamedTuple):
    """S at one draft length d, from the profile's AL(d) = 1 + Σ_{i≤d} m_i."""

    draft_length: int
    accept_length: float
    speedup: float


class OptimalDraftLength(NamedTuple):
    """D_opt over the measured range, its S and gain = S(D_opt) / S(D) − 1."""

    draft_length: int
    speedup: float
    gain: float
    curve: tuple[SpeedupPoint, ...]


def speedup_curve(
    marginal: Sequence[float],
    draft_length: int,
    accept_length: float,
    cost_at: Callable[[int], float],
) -> tuple[SpeedupPoint, ...]:
    """S(d) for d = 1 … min(len(profile), D), plus d = D from AL when the profile is shorter.

    ``marginal`` is m_i = P(the first i drafts accepted), i = 1 … L; ``cost_at(d)``
    is cost(d) of docs/theory.md#cost-model. S(D) always uses the deployment's AL. The loop runs
    over the profile only (never over a D read from a file).
    """
    points: list[SpeedupPoint] = []
    total = 1.0
    for d, rate in enumerate(marginal[:draft_length], 1):
        total += rate
        al = accept_length if d == draft_length else total
        points.append(SpeedupPoint(d, al, speedup(al, cost_at(d))))
    if draft_length >= 1 and (not points or points[-1].draft_length != draft_length):
        points.append(
            SpeedupPoint(draft_length, accept_length, speedup(accept_length, cost_at(draft_length)))
        )
    return tuple(points)


def optimal_draft_length(curve: Sequence[SpeedupPoint]) -> OptimalDraftLength | None:
    """argmax_d S(d) over ``curve`` (ties → the smaller d); gain against the last point (D).

    m = [.7, .4, .2, .1, .05, .02, .01], D = 7, ρ 0.1, β 1: S(7) = 2.48 / 1.7 = 1.4588,
    D_opt = 3 with S = 2.3 / 1.3 = 1.7692, gain 0.2128 (docs/theory.md#optimal-draft-length).
    """
    if not curve:
        return None
    best = curve[0]
    for point in curve[1:]:
        if point.speedup > best.speedup:
            best = point
    current = curve[-1].speedup
    gain = best.speedup / current - 1.0 if current > 0 else 0.0
    return OptimalDraftLength(best.draft_length, best.speedup, gain, tuple(curve))
