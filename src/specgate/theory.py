"""The theory of speculative decoding that specgate checks claims against.

No thresholds, severities or messages live here: only formulas, with units and
sources. Everything is a pure function of numbers.

Symbols (DESIGN.md §1):
- D, draft length: draft tokens proposed per target verification step (int ≥ 0).
- AL, accept length: tokens emitted per target step, bonus token included
  (real, 1 ≤ AL ≤ 1 + D).
- ρ, draft depth ratio: cost of one draft token relative to one target step
  (Leviathan et al.'s c; real ≥ 0).
- G, query heads per KV head: H / KV, an exact ratio (``fractions.Fraction``).
- α, acceptance rate: per-token acceptance probability under the i.i.d. model.

Sources:
- NVIDIA technical blog, "Co-designing AI models using speculative decoding for
  faster LLM inference": speedup ≈ AL / (1 + ρ·D) for memory-bound decode,
  D* = 128/G − 1 for attention-dominated decode, G·(1 + D) a multiple of 128
  (tensor-core tile rows), raise D only while AL gains beat draft cost.
- Leviathan, Kalman, Matias 2023, "Fast Inference from Transformers via
  Speculative Decoding", arXiv:2211.17192, Thm 3.8 and eq. 1: speedup
  E / (cD + 1) with E = (1 − α^(D+1)) / (1 − α).
- Chen et al. 2023, arXiv:2302.01318 (the same acceptance scheme).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

#: Rows of one tensor-core tile on the attention path (NVIDIA blog).
TILE_ROWS = 128
#: How many draft lengths :func:`next_aligned_draft_length` tries.
ALIGNMENT_SEARCH_STEPS = 128
#: The AL floor used when a claims file sets none (DESIGN.md §2).
DEFAULT_ACCEPT_LENGTH_FLOOR = 2.0


def theoretical_speedup(accept_length: float, draft_length: int, draft_depth_ratio: float) -> float:
    """Speedup of speculative over plain decoding at low latency: AL / (1 + ρ·D).

    Args:
        accept_length: AL, tokens per target step (bonus included), ≥ 0.
        draft_length: D, draft tokens per step, ≥ 0.
        draft_depth_ratio: ρ, cost of one draft token in target steps, ≥ 0.

    Returns:
        The ratio of tokens per unit time (dimensionless; 1.0 = no gain).

    Source: NVIDIA co-design blog; Leviathan et al. 2023 eq. 1 with E = AL.
    """
    return accept_length / (1.0 + draft_depth_ratio * draft_length)


def draft_overhead(draft_depth_ratio: float | None, draft_length: int) -> float:
    """Draft cost per target step, ρ·D (in target steps); ρ absent counts as 0."""
    return (draft_depth_ratio or 0.0) * draft_length


def as_fraction(value: float | int | Fraction) -> Fraction:
    """An exact fraction for G: ``6.4`` → 32/5 (via its shortest decimal repr).

    Raises:
        ValueError: for non-finite or non-positive values.
    """
    if isinstance(value, Fraction):
        result = value
    elif isinstance(value, int):
        result = Fraction(value)
    else:
        if not math.isfinite(value):
            raise ValueError("G must be finite")
        result = Fraction(repr(value))
    if result <= 0:
        raise ValueError("G must be positive")
    return result


def attention_optimal_draft_length(query_heads_per_kv: Fraction) -> int:
    """D* = floor(128 / G) − 1, never below 0.

    Verifying 1 + D tokens against one KV head fills G·(1 + D) rows of an
    attention tile; up to 128 rows cost about as much as one, so D* is the
    largest D whose rows still fit one tile. G = 8 → 15; G = 5 → 24; G = 32 → 3.

    Source: NVIDIA co-design blog (D = 128/G − 1).
    """
    return max(math.floor(Fraction(TILE_ROWS) / query_heads_per_kv) - 1, 0)


def tile_rows(query_heads_per_kv: Fraction, verify_tokens: int) -> Fraction:
    """Attention rows per KV head when the target scores ``verify_tokens`` tokens: G·N."""
    return query_heads_per_kv * verify_tokens


def is_tile_aligned(query_heads_per_kv: Fraction, verify_tokens: int) -> bool:
    """Whether G·N is a whole multiple of 128 (N = 1 + D for a chain), exactly."""
    rows = tile_rows(query_heads_per_kv, verify_tokens)
    return rows.denominator == 1 and rows.numerator % TILE_ROWS == 0


def next_aligned_draft_length(query_heads_per_kv: Fraction, start: int) -> int | None:
    """Smallest D′ ≥ ``start`` with G·(1 + D′) a multiple of 128.

    Tries ``ALIGNMENT_SEARCH_STEPS`` values (start … start + 127); ``None`` when
    none fits (e.g. G = 1/3). G = 8, start 14 → 15; G = 5, start 3 → 127.
    """
    for candidate in range(start, start + ALIGNMENT_SEARCH_STEPS):
        if is_tile_aligned(query_heads_per_kv, candidate + 1):
            return candidate
    return None


def iid_accept_length(acceptance_rate: float, draft_length: int) -> float:
    """Expected AL under i.i.d. acceptance: (1 − α^(D+1)) / (1 − α); D + 1 at α = 1.

    α = 0.8, D = 4 → 3.3616. Source: Leviathan et al. 2023, eq. 1.
    """
    if acceptance_rate >= 1.0:
        return float(draft_length + 1)
    return (1.0 - acceptance_rate ** (draft_length + 1)) / (1.0 - acceptance_rate)


def default_accept_length_floor(draft_length: int | None) -> float:
    """The AL floor when none is set: 2, but never above 1 + D/2 when D is known.

    For D = 1 a floor of 2 would demand 100 % acceptance (DeepSeek-V3's MTP at
    D = 1 runs at AL ≈ 1.85, arXiv:2412.19437 §5.4.3), hence the cap.
    """
    if draft_length is None:
        return DEFAULT_ACCEPT_LENGTH_FLOOR
    return min(DEFAULT_ACCEPT_LENGTH_FLOOR, 1.0 + draft_length / 2.0)


def break_even_draft_depth_ratio(accept_length: float, draft_length: int) -> float | None:
    """Largest ρ with speedup > 1: ρ < (AL − 1) / D; ``None`` for D = 0."""
    if draft_length == 0:
        return None
    return (accept_length - 1.0) / draft_length


@dataclass(frozen=True)
class DraftIncrease:
    """Speedup at the current D and at a larger D measured in ``evidence.next``."""

    current_speedup: float
    next_speedup: float
    increase: bool
    delta_speedup: float


def draft_increase(
    accept_length: float,
    draft_length: int,
    next_accept_length: float,
    next_draft_length: int,
    draft_depth_ratio: float,
) -> DraftIncrease:
    """Compare AL/(1+ρD) at the current and the next D, same ρ.

    ``increase`` is true only when the next speedup is higher on 4-decimal
    values (so a gain that rounds away is no gain). AL 5 → 5.2 for D 7 → 14 at
    ρ = 0.1: 2.9412 → 2.1667, no increase.

    Source: NVIDIA co-design blog ("raise D only while AL gains beat draft cost").
    """
    current = theoretical_speedup(accept_length, draft_length, draft_depth_ratio)
    following = theoretical_speedup(next_accept_length, next_draft_length, draft_depth_ratio)
    return DraftIncrease(
        current_speedup=current,
        next_speedup=following,
        increase=round(following, 4) > round(current, 4),
        delta_speedup=following - current,
    )


def iid_acceptance_rate(accept_length: float, draft_length: int) -> float | None:
    """The i.i.d. acceptance rate α whose expected AL at ``draft_length`` equals
    ``accept_length``: the inverse of :func:`iid_accept_length` in α ∈ [0, 1].

    Found by bisection (E(α, D) increases with α). ``None`` when AL is outside
    [1, 1 + D] or D = 0, where no α fits. AL 2.47 at D = 6 → α ≈ 0.61.
    """
    if draft_length <= 0 or not 1.0 <= accept_length <= draft_length + 1:
        return None
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if iid_accept_length(middle, draft_length) < accept_length:
            low = middle
        else:
            high = middle
    return (low + high) / 2
