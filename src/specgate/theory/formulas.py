"""The theory of speculative decoding that specgate checks claims against.

No thresholds, severities or messages live here: only formulas, with units and
sources. Everything is a pure function of numbers; no loop runs longer than a
list it is given (a draft length read from a file never sets a loop count).

Symbols (docs/theory.md#vocabulary and docs/theory.md#cost-model):
- D, draft length: draft tokens on the longest path per verification step (the
  depth; for a chain, the draft length; int ≥ 0).
- N_verify: tokens the target scores per step: 1 + D for a chain, nodes + 1 for
  a tree (int ≥ 1 + D).
- AL, accept length: tokens emitted per target step, bonus token included
  (real, 1 ≤ AL ≤ 1 + D).
- ρ, draft depth ratio: cost of one draft forward pass relative to one target
  step at one token (Leviathan et al.'s c; real ≥ 0).
- passes: draft forward passes per step: D for per-token drafting, 1 for a
  one-pass drafter (Medusa heads, DFlash, PARD), 0 at D = 0.
- β, verify cost: T(B, N_verify) / T(B, 1), the target step's time for
  N_verify tokens per sequence over one token, at concurrency B (β ≥ 1).
- G, query heads per KV head: H / KV, an exact ratio (``fractions.Fraction``).
- M, attention tile rows: 128 (64 for multi-latent attention).
- α, acceptance rate: per-token acceptance probability under the i.i.d. model.

Sources:
- NVIDIA technical blog, "Co-designing AI models using speculative decoding for
  faster LLM inference": speedup ≈ AL / (1 + ρ·D) for memory-bound decode,
  D* = 128/G − 1 for attention-dominated decode, tiles of 128 rows, raise D
  only while AL gains beat draft cost.
- Leviathan, Kalman, Matias 2023, "Fast Inference from Transformers via
  Speculative Decoding", arXiv:2211.17192, Thm 3.8 and eq. 1: speedup
  E / (cD + 1) with E = (1 − α^(D+1)) / (1 − α); the denominator assumes a
  verification step costs what a plain step costs (β = 1) and sequential drafting.
- Roofline (Williams, Waterman, Patterson 2009, CACM 52(4)): a dense decode step
  over n tokens takes max(weight bytes / bandwidth, 2·params·n / peak FLOP/s),
  so it turns compute-bound at n* = peak·bytes-per-weight / (2·bandwidth).
- Tree verification (SpecInfer, Miao et al. 2024, arXiv:2305.09781; EAGLE-2,
  Li et al. 2024, arXiv:2406.16858): the target scores every node in one pass;
  drafting runs one forward per tree level.
- FlashMLA (deepseek-ai/FlashMLA): 64-row query blocks for multi-latent attention.
"""

import math
from fractions import Fraction
from typing import Literal

from specgate.core.vocabulary import DraftPasses

#: Rows of one tensor-core tile on the attention path (NVIDIA blog).
TILE_ROWS = 128
#: Tile rows for multi-latent attention (FlashMLA's query block).
MLA_TILE_ROWS = 64
#: The seed's AL floor, kept as a guideline for trained drafters
#: (docs/theory.md#al-floor-and-guideline).
GUIDELINE_ACCEPT_LENGTH = 2.0
#: Bytes per weight when ``hardware.weight_bytes`` is not given (BF16).
DEFAULT_WEIGHT_BYTES = 2.0


# --- cost model (docs/theory.md#cost-model)
# ------------------------------------------------------------


def pass_count(draft_length: int, draft_passes: DraftPasses) -> int:
    """Draft forward passes per step: D (``per_token``), 1 (``single``, D ≥ 1), 0 at D = 0."""
    if draft_length <= 0:
        return 0
    return draft_length if draft_passes == "per_token" else 1


def compute_bound_tokens(
    peak_tflops: float, memory_bandwidth_tbps: float, weight_bytes: float = DEFAULT_WEIGHT_BYTES
) -> float:
    """n* = peak dense FLOP/s × bytes per weight / (2 × memory bandwidth), in tokens.

    A dense decode step over n tokens reads every weight once (bytes / bandwidth)
    and does 2 FLOPs per weight and token; it turns compute-bound at n = n*.
    H100-SXM (989 TFLOP/s BF16 dense, 3.35 TB/s, 2 bytes): 989·2 / (2·3.35) = 295.22.

    Source: the roofline model (Williams et al. 2009) applied to a dense step.
    """
    return peak_tflops * weight_bytes / (2.0 * memory_bandwidth_tbps)


def roofline_verify_cost(concurrency: int, verify_tokens: int, n_star: float) -> float:
    """β = max(1, B·N_verify / n*) / max(1, B / n*), dimensionless, ≥ 1.

    The step's time is flat while memory-bound and grows linearly in tokens once
    compute-bound. H100-SXM, B = 128, N = 4: (512 / 295.22) / 1 = 1.7343. Computed in
    the equivalent form N when B ≥ n* (both terms compute-bound), else max(1, B·N / n*),
    in floats, so huge inputs give a huge β, never an overflow.
    """
    if not n_star > 0 or concurrency >= n_star:
        return float(verify_tokens)
    return max(1.0, float(concurrency) * float(verify_tokens) / n_star)


def step_cost(verify_cost: float, draft_depth_ratio: float, passes: float) -> float:
    """cost = β + ρ·passes, in plain target steps (one step at one token = 1); passes may
    be a mean per step (docs/theory.md#d-is-a-maximum)."""
    return verify_cost + draft_depth_ratio * passes


def speedup(accept_length: float, cost: float) -> float:
    """S = AL / cost: tokens per unit time over plain decoding's (1.0 = no gain).

    Source: Leviathan et al. 2023 eq. 1 with E = AL and the cost of docs/theory.md#cost-model.
    """
    return accept_length / cost


def theoretical_speedup(accept_length: float, draft_length: int, draft_depth_ratio: float) -> float:
    """The v1 form AL / (1 + ρ·D): β = 1, one draft pass per token (docs/theory.md#vocabulary)."""
    return accept_length / (1.0 + draft_depth_ratio * draft_length)


def draft_overhead(draft_depth_ratio: float | None, passes: int) -> float:
    """Draft cost per step, ρ·passes (in target steps); ρ absent counts as 0."""
    return (draft_depth_ratio or 0.0) * passes


def measured_draft_depth_ratio(
    accept_length: float, measured_speedup: float, verify_cost: float, passes: int
) -> float | None:
    """ρ = (AL / S_measured − β) / passes, or ``None`` when passes = 0 or the result < 0.

    TensorRT-LLM-style MTP, 151.1 → 320.3 tok/s at D = 3, AL 2.830:
    S = 2.1198, ρ = (2.830 / 2.1198 − 1) / 3 = 0.1117 (docs/theory.md#which-rho).
    """
    if passes <= 0 or measured_speedup <= 0:
        return None
    rho = (accept_length / measured_speedup - verify_cost) / passes
    return rho if 0 <= rho < math.inf else None


def accept_length_upper_bound(
    accept_length: float, measured_at: int | None, depth: int, *, chain: bool
) -> float:
    """The most AL can be at draft length ``depth`` given AL measured at ``measured_at``.

    Always AL ≤ 1 + depth. For chain drafting the first D positions draft the same
    tokens at any D, so the per-position acceptance m_i = P(the first i drafts are
    accepted) is the same there and non-increasing in i: a shorter chain accepts at
    most what the longer one did (AL(d) ≤ AL(D) for d ≤ D), and each added position
    accepts at most m_D ≤ (AL − 1)/D, so AL(D + k) ≤ AL + k·(AL − 1)/D. A tree's AL at
    another depth is not bounded by the measured one (the nodes are spread anew), nor
    is an AL measured at an unknown D (``measured_at`` ``None``): only 1 + depth holds.

    Example (review newuser.md defect 3): AL 2.7 at D 3, served D 4: AL(4) ≤ 2.7 + 1·
    1.7/3 = 3.2667; served D 2: AL(2) ≤ min(2.7, 3) = 2.7.
    """
    cap = 1.0 + depth
    if not chain or measured_at is None or measured_at < 1:
        return cap
    if depth <= measured_at:
        return min(accept_length, cap)
    grown = accept_length + (depth - measured_at) * max(0.0, accept_length - 1.0) / measured_at
    return min(grown, cap)


def accept_length_out_of_range(
    accept_length: float, draft_length: int | None, slack: float = 0.0
) -> Literal["below", "above"] | None:
    """Which side of 1 ≤ AL ≤ 1 + D ``accept_length`` leaves by more than ``slack``
    (``draft_length`` ``None``: only the floor); ``None`` inside. A non-finite AL is
    ``"below"``. Each target step emits its accepted drafts plus one token (Leviathan
    et al. 2023, arXiv:2211.17192). Shared by SG103 and ``specgate measure``
    (``inputs/metrics/consistency.py``)."""
    if not math.isfinite(accept_length) or accept_length < 1 - slack:
        return "below"
    if draft_length is not None and accept_length > 1 + draft_length + slack:
        return "above"
    return None


def default_accept_length_floor(break_even: float, min_gain: float, depth: int | None) -> float:
    """The default AL floor: break-even AL × (1 + min_gain), never above 1 + depth.

    N-gram, D = 8, ρ 0, β 1: 1 × 1.1 = 1.1. Stated ρ 0.15, D = 8: 2.2 × 1.1 = 2.42.
    (docs/theory.md#al-floor-and-guideline; the caller decides that D = 0 has no default floor.)
    """
    floor = break_even * (1.0 + min_gain)
    return floor if depth is None else min(floor, 1.0 + depth)


def guideline_accept_length(draft_length: int) -> float:
    """The seed's floor kept as guidance: min(2, 1 + D/2).

    For D = 1 a floor of 2 would demand 100 % acceptance (DeepSeek-V3's MTP at
    D = 1 runs at AL ≈ 1.85, arXiv:2412.19437 §5.4.3), hence the cap.
    """
    return min(GUIDELINE_ACCEPT_LENGTH, 1.0 + draft_length / 2.0)


def break_even_draft_depth_ratio(accept_length: float, draft_length: int) -> float | None:
    """Largest ρ with speedup > 1 at β = 1, one pass per token: (AL − 1) / D; ``None`` at D = 0."""
    if draft_length == 0:
        return None
    return (accept_length - 1.0) / draft_length


# --- attention tiles (docs/theory.md#attention-tiles)
# -------------------------------------------------------


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


def attention_optimal_draft_length(query_heads_per_kv: Fraction, tile_rows: int = TILE_ROWS) -> int:
    """D* = floor(M / G) − 1, never below 0: the largest chain D whose rows fit one tile.

    Verifying 1 + D tokens against one KV head fills G·(1 + D) rows of an
    attention tile; up to M rows cost about as much as one. M = 128: G = 8 → 15;
    G = 5 → 24; G = 32 → 3. MLA (M = 64), G = 16 → 3.

    Source: NVIDIA co-design blog (D = 128/G − 1); FlashMLA for M = 64.
    """
    return max(math.floor(Fraction(tile_rows) / query_heads_per_kv) - 1, 0)


def attention_rows(query_heads_per_kv: Fraction, verify_tokens: int) -> Fraction:
    """Attention rows per KV head when the target scores ``verify_tokens`` tokens: G·N."""
    return query_heads_per_kv * verify_tokens


def attention_tiles(
    query_heads_per_kv: Fraction, verify_tokens: int, tile_rows: int = TILE_ROWS
) -> int:
    """tiles = ceil(G·N_verify / M), exact. G = 5, N = 26: ceil(130 / 128) = 2."""
    return math.ceil(attention_rows(query_heads_per_kv, verify_tokens) / tile_rows)


def is_tile_aligned(
    query_heads_per_kv: Fraction, verify_tokens: int, tile_rows: int = TILE_ROWS
) -> bool:
    """One more verify token would need another tile: G·(N + 1) > M·tiles.

    For G dividing M this is v1's "G·N is a multiple of M". G = 8, N = 32: 264 > 256,
    aligned. G = 5, N = 26: 135 ≤ 256, not aligned.
    """
    tiles = attention_tiles(query_heads_per_kv, verify_tokens, tile_rows)
    return query_heads_per_kv * (verify_tokens + 1) > tile_rows * tiles


def tile_aligned_verify_tokens(query_heads_per_kv: Fraction, tiles: int, tile_rows: int) -> int:
    """The most verify tokens that fit ``tiles`` tiles: floor(tiles·M / G)."""
    return math.floor(Fraction(tiles * tile_rows) / query_heads_per_kv)


def tile_aligned_draft_length(query_heads_per_kv: Fraction, tiles: int, tile_rows: int) -> int:
    """The largest chain D with ``tiles`` tiles: floor(tiles·M / G) − 1, never below 0.

    G = 5, 2 tiles of 128 rows: floor(256 / 5) − 1 = 50 (not v1's 127).
    """
    return max(tile_aligned_verify_tokens(query_heads_per_kv, tiles, tile_rows) - 1, 0)


# --- acceptance ---------------------------------------------------------------------------


def iid_accept_length(acceptance_rate: float, draft_length: int) -> float:
    """Expected AL under i.i.d. acceptance: (1 − α^(D+1)) / (1 − α); D + 1 at α = 1.

    α = 0.8, D = 4 → 3.3616. Source: Leviathan et al. 2023, eq. 1.
    """
    if acceptance_rate >= 1.0:
        return float(draft_length + 1)
    return (1.0 - acceptance_rate ** (draft_length + 1)) / (1.0 - acceptance_rate)


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
