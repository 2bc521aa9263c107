"""Sampling error of a measured accept length (docs/change-gate.md#standard-error,
README.md#record-evidence).

A histogram h (h_j = verification steps that accepted j drafts) gives
AL = 1 + Σ j·h_j / Σ h_j and the standard error of that mean,
SE = s / √n, where s is the sample standard deviation (n − 1) of the accepted
count per step and n = Σ h_j the number of steps. Steps are treated as
independent draws, which they are not quite (consecutive steps of one request
share a context), so SE is a lower bound on the real uncertainty.

Worked example (docs/change-gate.md#standard-error): base {0: 400, 1: 300, 2: 200, 3: 100} gives
AL 2.000, SE 0.0316; head {0: 500, 1: 300, 2: 150, 3: 50} gives AL 1.750,
SE 0.0281; z = (1.750 − 2.000) / √(0.0316² + 0.0281²) = −5.91.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

Histogram = Iterable[tuple[int, int]]


def histogram_moments(histogram: Histogram) -> tuple[int, float, float] | None:
    """(steps n, mean accepted count, sample sd) of a sparse histogram of
    ``(accepted_count, steps)`` pairs; ``None`` with fewer than 2 steps, or counts
    too large for floating point (no standard error is better than a wrong one)."""
    pairs = [(j, h) for j, h in histogram if h > 0]
    try:
        steps = sum(float(h) for _, h in pairs)
        if steps < 2:
            return None
        mean = sum(j * float(h) for j, h in pairs) / steps
        squares = sum(float(h) * (j - mean) ** 2 for j, h in pairs)
        sd = math.sqrt(squares / (steps - 1))
    except OverflowError:
        return None
    if not all(math.isfinite(x) for x in (steps, mean, sd)):
        return None
    return int(steps), mean, sd


def standard_error(histogram: Histogram) -> float | None:
    """SE of AL from a histogram (tokens per step); ``None`` without 2 steps."""
    moments = histogram_moments(histogram)
    if moments is None:
        return None
    steps, _, sd = moments
    return sd / math.sqrt(steps)


def sufficient_standard_error(histogram: Histogram, target: float = 0.05) -> float | None:
    """SE of AL from a histogram when the sample is large enough for it to mean
    something: at least :func:`steps_needed` (sd / ``target``)² steps, i.e. SE ≤
    ``target`` tokens (SG408's standard); ``None`` for a smaller sample, which then
    claims no noise (a change bringing 4 steps must not make a drop insignificant)."""
    moments = histogram_moments(histogram)
    if moments is None:
        return None
    steps, _, sd = moments
    if steps < steps_needed(sd, target):
        return None
    return sd / math.sqrt(steps)


def z_score(head: float, base: float, se_head: float, se_base: float) -> float | None:
    """z = (AL_head − AL_base) / √(SE_head² + SE_base²).

    Both SE 0: −inf when AL fell, +inf when it rose, ``None`` when equal (no
    evidence of change either way).
    """
    spread = math.sqrt(se_head**2 + se_base**2)
    if spread == 0:
        if head < base:
            return -math.inf
        return math.inf if head > base else None
    return (head - base) / spread


def steps_needed(sd: float, margin: float = 0.05) -> float:
    """Steps for SE ≤ ``margin`` tokens: (sd / margin)²; sd 1 gives 400 (SG408)."""
    return (sd / margin) ** 2
