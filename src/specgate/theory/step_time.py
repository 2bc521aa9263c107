"""What one target step costs (docs/theory.md#step-time-model): weights, experts, KV cache,
attention FLOPs, all-reduce and prefill tokens sharing the step, per GPU, in seconds.

No thresholds and no messages: pure functions of numbers with units and sources. No
loop runs over a number read from a file (token counts enter as exponents and
products, never as loop bounds).

    T(B, N)     = T_lin(B·N + C) + T_attn(B, N) + T_comm(B·N + C)      β = T(B, N) / T(B, 1)
    T_lin(x)    = max(b_w·P_read(x) / (t·BW), 2·P_act·x / (t·F_c))
    P_read(x)   = P (dense);  P_s + P_e·(1 − (1 − k/E)^x) (MoE, uniform independent routing),
                  P_e = (P − P_act) / (1 − k/E),  P_s = P − P_e
    T_attn(B,N) = max(tiles(N)·B·c̄·K_gpu / BW,  B·N·c̄·A_tok / (t·F_c))
    K_tok       = 2·L·KV·d_h·b_kv (MHA/GQA);  L·(d_c + d_r)·b_kv (MLA)
    K_gpu       = K_tok·ceil(KV/t)/KV (GQA under TP);  K_tok (MLA under TP: the latent is
                  on every rank);  K_tok/t (attention data-parallel: each rank holds 1/t of
                  the sequences)
    A_tok       = 4·L·H·d_h (MHA/GQA);  2·L·H·(2·d_c + d_r) (MLA, absorbed)
    T_comm(x)   = 2·L·[t_ar + 2(t − 1)/t · x·h·2 / bw_ar]   (t > 1 and bw_ar known, else 0)

Symbols: B sequences decoding at once, N verify tokens per sequence, C prefill tokens
sharing the step, c̄ mean tokens in each decoding sequence's KV cache, t tensor-parallel
ranks, b_w bytes per weight, b_kv bytes per KV element, F_c the dense peak at the compute
dtype (FLOP/s), BW memory bandwidth (B/s), bw_ar the per-GPU one-direction all-reduce bus
bandwidth (B/s), t_ar the latency of one all-reduce (s; not α, the acceptance rate),
P / P_act total / active parameters, E / k
routed experts / experts per token, L layers, H query heads, KV KV heads, d_h head dim,
d_c / d_r MLA latent / rope dims, h hidden size, M attention tile rows, tiles(N) =
ceil(G·N / M) with G the query heads per KV head on one rank.

P counts the input embedding, which a decode step gathers (B rows) rather than streams:
b_w·P overstates the bytes read by V·h·b_w (6.5 % of Llama-3.1-8B). docs/theory.md#step-time-model's
worked numbers use P (16.06 GB for Llama-3.1-8B), so it is kept; it makes the KV share κ a
little smaller, i.e. β a little larger.

Sources:
- Roofline (Williams, Waterman, Patterson 2009, CACM 52(4)): a step takes the longer of
  its memory traffic over bandwidth and its FLOPs over the peak.
- MagicDec (Chen et al. 2024, arXiv:2408.11049): at large batch and long context the KV
  cache read dominates the step and keeps verification memory-bound.
- MoE expert reads under uniform routing: 1 − (1 − k/E)^x is the expected share of a
  layer's experts that x independently, uniformly routed tokens touch (Cascade,
  arXiv:2506.20675; MoESD, arXiv:2505.19645). Real routing is skewed and correlated
  and reads fewer distinct experts, so this term can only overstate the reads.
- MoE expert reads under routing locality (the other end of the range): adjacent tokens
  repeat their experts far above chance (Jiang et al. 2024, arXiv:2401.04088, §5, Table 5;
  docs/theory.md#routing-locality, :mod:`specgate.theory.routing`).
- Attention tiles: NVIDIA, "Co-designing AI models using speculative decoding" (128-row
  tiles, G·N rows per KV head); FlashMLA's 64-row blocks for MLA (deepseek-ai/FlashMLA).
- MLA absorbed attention: DeepSeek-V2 (arXiv:2405.04434) §2.1.3: queries attend to the
  d_c-dim latent plus the d_r-dim rope key; the latent is cached once per token and layer.
- Ring all-reduce: each rank sends and receives 2(t − 1)/t of the message (Patarasuk &
  Yuan 2009, J. Parallel Distrib. Comput. 69(2)); two all-reduces per layer under
  Megatron-style tensor parallelism (Shoeybi et al. 2019, arXiv:1909.08053).
- Prefill tokens sharing a decode step: Sarathi-Serve (Agrawal et al. 2024,
  arXiv:2403.02310), chunked prefill.
"""

import math
from fractions import Fraction
from typing import Literal, NamedTuple

#: Bytes per activation element sent by the all-reduce (BF16 activations).
ACTIVATION_BYTES = 2.0

Routing = Literal["uniform", "local", "any"]
"""How expert reads are priced: ``uniform`` is docs/theory.md#step-time-model's expected reads under
uniform independent routing (the top of the estimate's range); ``local`` the expected reads
when adjacent tokens of a sequence share experts at the highest published rate (the bottom
of the range, docs/theory.md#routing-locality, :mod:`specgate.theory.routing`); ``any``
prices the weight term so that β is a lower bound whatever the routing (see
:func:`verify_cost_ratio`)."""


class Shape(NamedTuple):
    """The target model as docs/theory.md#step-time-model prices it (counts in parameters, not
    billions).

    ``None`` means not known; a term that needs an unknown number is left out (the
    caller says so). ``kv_bytes_per_token`` (K_tok in bytes, all layers) wins over the
    shapes. ``query_heads_per_kv`` is G as given (per rank) when H and KV are unknown.
    """

    parameters: float
    active_parameters: float
    experts: int | None = None
    experts_per_token: int | None = None
    layers: int | None = None
    query_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    hidden_size: int | None = None
    kv_lora_rank: int | None = None
    rope_head_dim: int | None = None
    kv_bytes_per_token: float | None = None
    query_heads_per_kv: Fraction | None = None

    @property
    def mla(self) -> bool:
        """Multi-latent attention: a ``kv_lora_rank`` is known."""
        return self.kv_lora_rank is not None

    @property
    def moe(self) -> bool:
        """Routed experts with fewer active than total (0 < k < E) and P_act < P."""
        e, k = self.experts, self.experts_per_token
        return (
            e is not None
            and k is not None
            and 0 < k < e
            and self.active_parameters < self.parameters
        )


class Machine(NamedTuple):
    """One GPU of the deployment and how the model is split over GPUs.

    Attributes:
        memory_bandwidth: BW, bytes/s.
        peak_flops: F_c, dense FLOP/s at the compute dtype; ``None`` leaves the compute
            terms out (a memory-only step: its β is a lower bound of the full one).
        tensor_parallel: t, ranks the weights and heads are split over.
        weight_bytes: b_w, bytes per weight (2 for BF16, 1 for FP8).
        kv_cache_bytes: b_kv, bytes per KV cache element.
        allreduce_bandwidth: bw_ar, bytes/s per GPU and direction; ``None`` leaves the
            bandwidth part of T_comm out.
        allreduce_latency: t_ar, seconds per all-reduce; ``None`` with no bandwidth
            either leaves T_comm out.
        tile_rows: M, rows of one attention tile.
        attention_data_parallel: attention runs data-parallel (every rank holds all
            heads of its share of the sequences).
    """

    memory_bandwidth: float
    peak_flops: float | None = None
    tensor_parallel: int = 1
    weight_bytes: float = 2.0
    kv_cache_bytes: float = 2.0
    allreduce_bandwidth: float | None = None
    allreduce_latency: float | None = None
    tile_rows: int = 128
    attention_data_parallel: bool = False


class Workload(NamedTuple):
    """``batch`` B sequences decoding; ``context`` c̄ tokens (``None``: the KV term is
    left out); ``prefill`` C tokens of prefill chunks sharing the step."""

    batch: int
    context: float | None = None
    prefill: int = 0


class StepTime(NamedTuple):
    """T(B, N) and its parts, seconds; ``read_parameters`` P_read (parameters);
    ``tiles`` the attention tiles (``None`` when G is unknown)."""

    total: float
    linear: float
    attention: float
    allreduce: float
    read_parameters: float
    tiles: int | None


def kv_bytes_per_token(shape: Shape, kv_cache_bytes: float = 2.0) -> float | None:
    """K_tok: bytes of KV cache per token over all layers.

    2·L·KV·d_h·b_kv for MHA/GQA (a key and a value per KV head); L·(d_c + d_r)·b_kv for
    MLA (one latent and one rope key per layer, DeepSeek-V2 §2.1.3). Llama-3.1-8B (L 32,
    KV 8, d_h 128, BF16): 131,072 B; DeepSeek-V3 (L 61, d_c 512, d_r 64): 70,272 B.
    ``None`` when a needed number is unknown; ``shape.kv_bytes_per_token`` wins.
    """
    if shape.kv_bytes_per_token is not None:
        return shape.kv_bytes_per_token
    layers = shape.layers
    if layers is None:
        return None
    if shape.mla:
        assert shape.kv_lora_rank is not None
        if shape.rope_head_dim is None:
            return None
        return layers * (shape.kv_lora_rank + shape.rope_head_dim) * kv_cache_bytes
    kv = shape.kv_heads if shape.kv_heads is not None else shape.query_heads
    if kv is None or shape.head_dim is None:
        return None
    return 2.0 * layers * kv * shape.head_dim * kv_cache_bytes


def kv_bytes_per_gpu(
    shape: Shape, per_token: float, tensor_parallel: int, data_parallel: bool = False
) -> float:
    """K_gpu: the KV bytes per cached token that one GPU reads.

    GQA under TP: K_tok·ceil(KV/t)/KV (KV heads split, replicated when t > KV:
    Llama-3.1-405B, KV 8 at t 16: K_tok/8, not /16). MLA under TP: K_tok (the latent is
    on every rank). Attention data-parallel: K_tok/t (each rank holds 1/t of the
    sequences). KV unknown: K_tok/t.
    """
    t = max(tensor_parallel, 1)
    if data_parallel:
        return per_token / t
    if shape.mla:
        return per_token
    kv = shape.kv_heads if shape.kv_heads is not None else shape.query_heads
    if kv is None:
        return per_token / t
    return per_token * math.ceil(kv / t) / kv


def attention_flops_per_token(shape: Shape) -> float | None:
    """A_tok: attention FLOPs per query token and cached token, all layers.

    4·L·H·d_h for MHA/GQA (QKᵀ and PV, two FLOPs per multiply-add); 2·L·H·(2·d_c + d_r)
    for absorbed MLA. Llama-3.1-8B: 524,288; DeepSeek-V3: 16,990,208. ``None`` when a
    needed number is unknown.
    """
    layers, heads = shape.layers, shape.query_heads
    if layers is None or heads is None:
        return None
    if shape.mla:
        assert shape.kv_lora_rank is not None
        if shape.rope_head_dim is None:
            return None
        return 2.0 * layers * heads * (2 * shape.kv_lora_rank + shape.rope_head_dim)
    if shape.head_dim is None:
        return None
    return 4.0 * layers * heads * shape.head_dim


def expert_split(shape: Shape) -> tuple[float, float]:
    """(P_s, P_e): parameters every token reads and the routed experts' parameters.

    P_e = (P − P_act) / (1 − k/E) and P_s = P − P_e (docs/theory.md#step-time-model); (P, 0) for a
    dense model. Mixtral-8x7B (46.7 B, 12.9 B, k 2 of 8): P_e = 33.8 / 0.75 = 45.0667 B,
    P_s = 1.6333 B.
    """
    if not shape.moe:
        return shape.parameters, 0.0
    assert shape.experts is not None
    assert shape.experts_per_token is not None
    share = shape.experts_per_token / shape.experts
    routed = (shape.parameters - shape.active_parameters) / (1.0 - share)
    return shape.parameters - routed, routed


def read_parameters(shape: Shape, tokens: float, routing: Routing = "uniform") -> float:
    """P_read(x): parameters a step over ``tokens`` x tokens reads from memory.

    ``uniform``: P_s + P_e·(1 − (1 − k/E)^x), the expected distinct experts under
    uniform independent routing (Mixtral, x = 4: 1.6333 + 45.0667·0.68359 = 32.4406 B).
    ``any``: P_s + P_e·min(1, k·x/E), the most any routing can read (each token reads k
    experts). ``local``: the x tokens as one sequence under the published locality
    (:func:`local_read_parameters`). Dense: P. Tokens below 1 count as 1.
    """
    shared, routed = expert_split(shape)
    if routed == 0.0:
        return shape.parameters
    assert shape.experts is not None
    assert shape.experts_per_token is not None
    share = shape.experts_per_token / shape.experts
    x = max(float(tokens), 1.0)
    if routing == "any":
        return shared + routed * min(1.0, share * x)
    if routing == "local":
        return local_read_parameters(shape, 1, x)
    return shared + routed * -math.expm1(x * math.log1p(-share))


def local_read_parameters(
    shape: Shape, sequences: float, tokens_per_sequence: float, prefill: float = 0.0
) -> float:
    """P_read under routing locality: P_s + P_e·(1 − m), m the share of experts no token
    reads when each of B sequences of n tokens (and C prefill tokens, one sequence)
    repeats the previous token's experts at the highest published rate r
    (docs/theory.md#routing-locality; :func:`specgate.theory.routing.missed_share`).
    Mixtral-8x7B, one sequence of 4 tokens, r = 0.384: m = 0.75·0.846³ = 0.45413, P_read
    = 1.6333 + 45.0667·0.54587 = 26.2341 B (uniform: 32.4406 B). Dense: P."""
    from specgate.theory.routing import highest_repeat, missed_share

    shared, routed = expert_split(shape)
    if routed == 0.0:
        return shape.parameters
    assert shape.experts is not None
    assert shape.experts_per_token is not None
    missed = missed_share(
        shape.experts, shape.experts_per_token, sequences, tokens_per_sequence,
        highest_repeat().repeat_rate, prefill=prefill,
    )
    return shared + routed * (1.0 - missed)


def query_heads_per_kv_rank(
    shape: Shape, tensor_parallel: int, data_parallel: bool = False
) -> Fraction | None:
    """G on one rank: (H/t) / ceil(KV/t) for GQA (H/KV at t = 1; DP attention keeps all
    heads), H/t for MLA (one latent KV head per rank); ``shape.query_heads_per_kv`` when
    H is unknown. Qwen2-57B-A14B (H 28, KV 4) at t 2: 14 / 2 = 7."""
    heads = shape.query_heads
    if heads is None:
        return shape.query_heads_per_kv
    t = 1 if data_parallel else max(tensor_parallel, 1)
    if shape.mla:
        return Fraction(heads, t)
    kv = shape.kv_heads if shape.kv_heads is not None else heads
    return Fraction(heads, t) / math.ceil(kv / t)


def attention_tiles(query_heads_per_kv: Fraction, verify_tokens: int, tile_rows: int) -> int:
    """tiles(N) = ceil(G·N / M) (docs/theory.md#attention-tiles)."""
    return math.ceil(query_heads_per_kv * verify_tokens / tile_rows)


def allreduce_time(shape: Shape, machine: Machine, tokens: float) -> float:
    """T_comm(x) = 2·L·[t_ar + 2(t − 1)/t · x·h·2 / bw_ar], seconds.

    Two ring all-reduces per layer of x tokens' BF16 activations (h values each). Left
    out (0) at t = 1, with L unknown, or with neither t_ar nor bw_ar given; a part whose
    input is unknown (h, bw_ar or t_ar) is left out alone. Llama-3.1-70B on 4 × L40S (L 80,
    h 8192, bw_ar 32 GB/s, t_ar 10 µs), x = 16: 160·(10 + 12.288) µs = 3.5661 ms.
    """
    t = machine.tensor_parallel
    layers = shape.layers
    if t <= 1 or layers is None:
        return 0.0
    latency = machine.allreduce_latency or 0.0
    bandwidth = 0.0
    if machine.allreduce_bandwidth is not None and shape.hidden_size is not None:
        message = tokens * shape.hidden_size * ACTIVATION_BYTES
        bandwidth = 2.0 * (t - 1) / t * message / machine.allreduce_bandwidth
    return 2.0 * layers * (latency + bandwidth)


def step_time(
    shape: Shape,
    machine: Machine,
    workload: Workload,
    verify_tokens: int,
    *,
    routing: Routing = "uniform",
    read_at: float | None = None,
) -> StepTime:
    """T(B, N): one target step verifying ``verify_tokens`` N tokens per sequence.

    Args:
        shape, machine, workload: the model, the GPU and split, B / c̄ / C.
        verify_tokens: N (1 for a plain decode step).
        routing: how expert reads are priced (:func:`read_parameters`).
        read_at: when given, the weight term reads P_read at this many tokens whatever
            N is (the flat weight term of the routing-free lower bound).

    Returns:
        the total and its parts, in seconds. The KV term needs c̄, K_tok and B; the
        compute terms need F_c; T_comm needs t > 1 and L (see :func:`allreduce_time`).
    """
    t = max(machine.tensor_parallel, 1)
    bandwidth = machine.memory_bandwidth
    peak = machine.peak_flops
    tokens = workload.batch * verify_tokens + workload.prefill
    if routing == "local" and read_at is None:
        read = local_read_parameters(shape, workload.batch, verify_tokens, workload.prefill)
    else:
        read = read_parameters(shape, tokens if read_at is None else read_at, routing)
    linear = machine.weight_bytes * read / (t * bandwidth)
    if peak is not None:
        linear = max(linear, 2.0 * shape.active_parameters * tokens / (t * peak))
    attention = 0.0
    tiles = None
    g = query_heads_per_kv_rank(shape, t, machine.attention_data_parallel)
    if g is not None:
        tiles = attention_tiles(g, verify_tokens, machine.tile_rows)
    per_token = kv_bytes_per_token(shape, machine.kv_cache_bytes)
    if workload.context is not None and per_token is not None:
        per_gpu = kv_bytes_per_gpu(shape, per_token, t, machine.attention_data_parallel)
        reads = tiles if tiles is not None else 1
        attention = reads * workload.batch * workload.context * per_gpu / bandwidth
        flops = attention_flops_per_token(shape)
        if peak is not None and flops is not None:
            compute = workload.batch * verify_tokens * workload.context * flops / (t * peak)
            attention = max(attention, compute)
    comm = allreduce_time(shape, machine, tokens)
    return StepTime(linear + attention + comm, linear, attention, comm, read, tiles)


def verify_cost_ratio(
    shape: Shape,
    machine: Machine,
    workload: Workload,
    verify_tokens: int,
    *,
    routing: Routing = "uniform",
) -> float:
    """β = T(B, N) / T(B, 1), dimensionless, ≥ 1 (docs/theory.md#step-time-model).

    ``routing="uniform"`` is docs/theory.md#step-time-model's estimate. ``routing="any"`` is a lower
    bound on β whatever the routing: the weight term of both steps reads P_s + P_e·min(1, k·(B + C)
    /E), the most the plain step can read. That holds because the verify step reads
    every expert the plain step reads (its tokens include the plain step's), and β only
    falls as a term shared by both steps grows. For a dense model both are the same.

    Worked numbers (docs/theory.md#step-time-model): Llama-3.1-8B on A100, B 128, c̄ 32,000, N 5:
    (4.1826 + 33.4291) / (1 + 33.4291) = 1.0924; Mixtral-8x7B, B 1, N 4: 32.4406 /
    12.9 = 2.5148 (uniform), 1 (any).
    """
    read_at = None
    if routing == "any":
        read_at = float(workload.batch + workload.prefill)
    numerator = step_time(shape, machine, workload, verify_tokens, routing=routing, read_at=read_at)
    denominator = step_time(shape, machine, workload, 1, routing=routing, read_at=read_at)
    if not denominator.total > 0:
        return 1.0
    return max(numerator.total / denominator.total, 1.0)


def kv_to_weight_ratio(shape: Shape, machine: Machine, workload: Workload) -> float | None:
    """κ: KV cache bytes over weight bytes one GPU reads in a plain step (N = 1).

    κ = tiles(1)·B·c̄·K_gpu / (b_w·P_read(B + C) / t); B·c̄·K_tok / (b_w·P) on one GPU
    with one tile. Llama-3.1-8B, B 128, c̄ 32,000: 536,870,912,000 / 16.06e9 = 33.43
    (docs/theory.md#step-time-model). ``None`` without c̄ or K_tok.
    """
    plain = step_time(shape, machine, workload, 1)
    per_token = kv_bytes_per_token(shape, machine.kv_cache_bytes)
    if workload.context is None or per_token is None:
        return None
    t = max(machine.tensor_parallel, 1)
    per_gpu = kv_bytes_per_gpu(shape, per_token, t, machine.attention_data_parallel)
    tiles = plain.tiles if plain.tiles is not None else 1
    weights = machine.weight_bytes * plain.read_parameters / t
    return tiles * workload.batch * workload.context * per_gpu / weights


def expert_read_ratio(shape: Shape, workload: Workload, verify_tokens: int) -> float | None:
    """P_read(B·N + C) / P_read(B + C) under uniform routing: how many times the expert
    weights a verify step reads those of a plain step (Mixtral-8x7B, B 1, N 4: 2.5148).
    ``None`` for a dense model."""
    if not shape.moe:
        return None
    verify = workload.batch * verify_tokens + workload.prefill
    plain = workload.batch + workload.prefill
    return read_parameters(shape, verify) / read_parameters(shape, plain)
