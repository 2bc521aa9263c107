"""Which verify cost β the theory uses (docs/theory.md#cost-model, docs/theory.md#step-time-model,
docs/theory.md#proven-verify-cost).

Two numbers, because a fail must rest on what is stated or measured while an
estimate may rest on assumptions:

- the **estimate** (``VerifyCost.value``, JSON ``verify_cost_ratio``): a measured β;
  else docs/theory.md#step-time-model's step-time model with every term its inputs allow (uniform
  expert routing, the default all-reduce latency); else 1. ``bound`` says how it relates to
  the truth: ``exact``, ``upper`` (a term that can only lower β is left out, or the
  uniform-routing expert term, which can only overstate, is in), ``lower`` (the KV
  term is left out while verification needs more attention tiles than a plain step,
  so it would raise β), ``measured`` or ``assumed``.
- the **proven** bound (``VerifyCost.proven``, JSON ``proven_verify_cost_ratio``), a
  lower bound on the true β that fails rest on: a measured β (extended to other N as
  below); else docs/theory.md#step-time-model with the context length stated, priced so that it
  holds for any expert routing and any plausible all-reduce latency; else 1.

Refinements of the proven bound (docs/theory.md#proven-verify-cost), decided with the project lead
on the theory research's evidence (docs/validation.md):

1. The uniform-routing expert term 1 − (1 − k/E)^x is the *most* distinct experts
   independent tokens read on average; skewed and correlated routing reads fewer
   (TensorRT-LLM PR #5146: Llama-4-Maverick at concurrency 4 measured 1.67x where that
   term alone caps S at 1.27). So it stays in the estimate only. The proven bound
   prices both steps' weight reads at the most the plain step can read, P_s + P_e·
   min(1, k·(B + C)/E): the verify step reads at least the plain step's experts, and β
   falls as a term both steps share grows, so this holds for any routing.
2. The all-reduce latency t_ar adds the same 2·L·t_ar to both steps, so a larger t_ar lowers
   β. The estimate uses the documented 10 µs (docs/claims-file.md#hardware); the proven bound uses
   the stated ``hardware.allreduce_latency_us``, else :data:`PROVEN_ALLREDUCE_LATENCY_US` (50 µs:
   five times NCCL's small-message all-reduce latency within an NVLink node, about 10
   µs, and above what PCIe and two-node rings reach for the few-kB messages of a
   decode step; a larger t_ar only lowers the bound further towards 1). Without L the
   bound cannot price the all-reduce at t > 1 and falls back to 1.
3. A measured β_m at N_m extends to other N by the chord β(N) = 1 + (β_m − 1)(N − 1)
   /(N_m − 1) only where the step time is convex in N: a dense model whose attention
   tile count does not change between the points (``G`` unknown counts as no change,
   as the tile rule needs G). Across a tile boundary, or for a mixture-of-experts
   model (expert reads are concave in the tokens), the bound is flat: β(N) ≥ β_m
   above N_m, β(N) ≤ β_m below (the step time only grows with N).
4. What docs/theory.md#step-time-inputs defaults (TP 1 when neither the claims file nor the serving
   config states it; BF16 weights and KV cache when neither the claims file, the
   checkpoint nor the serving config declares a precision) is used for the estimate
   only. The TP 1 β is no lower bound for other TPs: more ranks add 2·L·t_ar to both
   steps, replicate KV heads past TP = KV (MLA: the latent on every rank) so the KV
   share of a step grows, and shrink G per rank so fewer tiles are read; each lowers
   β (Llama-3.1-8B, B 128, c̄ 32,000 on A100: 1.0924 at TP 1, 1.02155 at TP 32). The
   all-reduce's bandwidth part raises β with TP, so TP 1 is no upper bound either.
   The proven bound therefore takes the lowest β over every TP the heads allow
   (:func:`~specgate.model.step_inputs.split_ranks`) and over the serving precisions
   (:mod:`specgate.analysis.precision`), leaving the bandwidth part out.
5. Each term of docs/theory.md#step-time-model is a lower bound on its part of the step time, so the
modelled
   β = T_v / T_p is a ratio of two lower bounds, not a bound. What the model leaves
   out and both steps pay at least once per step (scheduling, sampling, kernel
   launches, the API server: a host overhead O, at least as large for the verify step
   as for the plain one) lowers the true β to (T_v + O)/(T_p + O) = 1 + (β − 1)·(1 − h),
   h = O/(T_p + O) the overhead's share of a plain step. The proven bound of a
   *modelled* β takes h at :data:`PROVEN_HOST_OVERHEAD_SHARE` (0.62, the largest share
   a published engine profile shows); a measured β already contains the overhead and
   is kept as measured. β = 1 stays 1, so docs/theory.md#cost-model's worked numbers are unchanged.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, NamedTuple

from specgate.model.step_inputs import (
    active_parameters,
    query_heads_per_kv,
    split_ranks,
    tensor_parallel,
    total_parameters,
)
from specgate.theory import formulas as theory

if TYPE_CHECKING:
    from specgate.analysis.precision import Precision
    from specgate.model.deployment import Deployment
    from specgate.theory import step_time as steps
    from specgate.theory.gpus import Gpu
    from specgate.theory.step_time import Machine, Shape, Workload
else:  # a record's field types are evaluated when its class is made; a quoted one
    # costs a compile() (the first one ~1 ms), so these stand in for what is not imported
    Gpu = Machine = Precision = Shape = Workload = object

VerifyCostSource = Literal["memory-bound", "roofline", "measured", "assumed"]
Bound = Literal["exact", "upper", "lower", "measured", "assumed", "capped"]

#: t_ar (the all-reduce latency) of the estimate when ``hardware.allreduce_latency_us``
#: is not stated (docs/theory.md#step-time-model).
DEFAULT_ALLREDUCE_LATENCY_US = 10.0
#: t_ar of the proven bound when not stated (module docstring, deviation 2).
PROVEN_ALLREDUCE_LATENCY_US = 50.0
_SLACK = 1e-9
#: The settle entry of the uniform-routing expert term: only a measured β settles it.
ROUTING = "routing"
#: The settle entry of the host overhead the proven bound allows: only a measured β.
HOST = "host"
#: The largest share of a plain decode step's wall time that published engine profiles
#: found outside the GPU work the step-time model prices (module docstring, deviation
#: 5): vLLM v0.5.3, Llama-3-8B on one H100, "only 38% of the time was spent on the
#: actual GPU execution" (HTTP API server 33 %, scheduling and input preparation 29 %;
#: vLLM blog "vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction",
#: 2024-09-05). Newer engines overlap most of it with the GPU; the bound takes the worst.
PROVEN_HOST_OVERHEAD_SHARE = 0.62

#: What each left-out term is called, and the inputs that would put it in.
TERM_INPUTS = {
    "KV cache": "workload.context_length",
    "KV cache size": "model.hf_config, or model.layers with model.kv_heads and model.head_dim "
    "(or model.kv_bytes_per_token)",
    "model size": "model.parameters_b or model.hf_config",
    "experts": "model.active_parameters_b, model.experts and model.experts_per_token "
    "(or model.hf_config)",
    "all-reduce": "hardware.allreduce_gbps",
    "all-reduce layers": "model.layers and model.hidden_size (or model.hf_config)",
    "prefill": "workload.prefill_tokens_per_step",
}


class VerifyCost(NamedTuple):
    """β at the deployment's concurrency, how it was obtained and what it rests on.

    Attributes:
        value: the estimate at the deployment's N_verify; ``at(n)`` the estimate for
            ``n`` verify tokens (a model β is recomputed at each N, a measured one
            extended as the module docstring says).
        source: ``memory-bound`` | ``roofline`` | ``measured`` | ``assumed``
        (docs/reports.md#json-report). assumed_because: why β = 1 was assumed (SG207), else
        ``None``. bound: how the estimate relates to the true β (module docstring).
        proven: the lower bound fails rest on, at the deployment's N_verify.
        left_out: docs/theory.md#step-time-model terms left out for lack of an input (SG207 names
        them). settle: inputs that would close the gap between the estimate and the proven
            bound (SG112 names them); ``()`` when they are equal.
        kv_to_weight_ratio: κ of a plain step (KV bytes over weight bytes read).
        expert_read_ratio: expert weights read by the verify step over a plain one.
        precision: b_w, the compute dtype and b_kv the step-time model used and where
            each was read (``None`` when no step was modelled).
        cap: AL / S_measured when the deployment's measured speedup capped the
            estimate (``bound`` is then ``capped``; :func:`capped_by_measurement`).
        low: for a mixture-of-experts model, the bottom of the estimate's range: β
            with the expert reads of the highest published routing locality
            (docs/theory.md#routing-locality; ``value`` is the top, uniform routing);
            ``low_bound`` how it relates to the truth, as ``bound`` but without the
            routing (``exact`` when every other term is priced). ``None`` otherwise.
    """

    value: float
    source: VerifyCostSource
    at: Callable[[int], float]
    assumed_because: str | None = None
    concurrency: int | None = None
    n_star: float | None = None
    bound: Bound = "exact"
    proven: float = 1.0
    left_out: tuple[str, ...] = ()
    settle: tuple[str, ...] = ()
    kv_to_weight_ratio: float | None = None
    expert_read_ratio: float | None = None
    precision: Precision | None = None
    cap: float | None = None
    low: float | None = None
    low_bound: Bound | None = None


def capped_by_measurement(
    cost: VerifyCost, accept_length: float | None, measured_speedup: float | None
) -> VerifyCost:
    """The estimate capped by the deployment's own measured speedup.

    A measured S_m at AL bounds the whole step cost: S_m = AL / (β + ρ·passes) with
    ρ·passes ≥ 0, so β ≤ AL / S_m. A model estimate above it (the uniform-routing
    expert term, the default all-reduce latency, the roofline without the KV cache) is
    ruled out by the measurement and is lowered to max(AL / S_m, proven) with ``bound``
    ``capped`` and ``cap`` = AL / S_m. Other N are scaled alike: β(n) = 1 + (β_est(n) −
    1)·(β_cap − 1)/(β_est − 1), which keeps the model's shape in N and meets the cap at
    the deployment's N_verify. A measured or assumed β, an impossible AL (< 1) or no
    measurement leaves ``cost`` as it is; the proven bound never moves (a cap below it
    is SG111's contradiction, not a lower β).

    Example (review real.md, TensorRT-LLM DeepSeek-R1 MTP 1): AL 1.92, 198/111 =
    1.7838x: β ≤ 1.92/1.7838 = 1.0764, so the uniform-routing estimate 1.2576 becomes
    1.0764.
    """
    if (
        measured_speedup is None
        or accept_length is None
        or accept_length < 1
        or not measured_speedup > 0
        or cost.source in ("measured", "assumed")
    ):
        return cost
    cap = accept_length / measured_speedup
    if not cost.value > cap + _SLACK:
        return cost
    value = max(cap, cost.proven)
    estimate, excess = cost.at, cost.value - 1.0
    scale = (value - 1.0) / excess if excess > _SLACK else 0.0

    def at(n: int) -> float:
        return max(1.0, 1.0 + (estimate(n) - 1.0) * scale)

    low = None if cost.low is None else min(cost.low, value)
    return cost._replace(value=value, at=at, bound="capped", cap=cap, low=low)


def warning_value(cost: VerifyCost) -> float:
    """The β a warning may rest on (issue 26; docs/theory.md#routing-locality).

    A warning that a claim may not hold needs an upper bound on the speedup, i.e. a
    β that does not overstate. The estimate serves when it is the model's own value
    (``exact``), a lower bound (``lower``), measured or assumed. When it is an upper
    bound (``upper``, ``capped``) the warning takes the bottom of a mixture-of-experts
    model's range (``low``, the published routing locality) when that is the model's own
    value or a lower bound, else the proven bound: an upper-bound β only informs.

    Example (docs/theory.md#routing-locality): Mixtral-8x7B on an A100, one sequence, N 4,
    context 4000: the estimate 2.4846 (uniform routing, ``upper``), the warning's β 2.0131
    (the locality end, every other term priced). Without the context both ends are upper
    (2.5148 and 2.0337) and the warning's β is the proven 1.
    """
    if cost.bound not in ("upper", "capped"):
        return cost.value
    if cost.low is not None and cost.low_bound in ("exact", "lower"):
        return max(cost.low, cost.proven)
    return cost.proven


def _flat(value: float) -> Callable[[int], float]:
    return lambda _n: value


def assumed(reason: str) -> VerifyCost:
    """β = 1 assumed, and why (SG207)."""
    return VerifyCost(1.0, "assumed", _flat(1.0), assumed_because=reason, bound="assumed")


def is_moe(deployment: "Deployment") -> bool:
    """The target routes tokens to experts: ``model.moe``, expert counts, or a model
    config with routed experts."""
    model = deployment.model
    shape = deployment.inputs.model if deployment.inputs else None
    return (
        model.moe is True
        or (model.experts or 0) > 1
        or (shape is not None and (shape.routed_experts or 0) > 1)
    )


def tile_rows(deployment: "Deployment") -> int:
    """M: ``hardware.attention_tile_rows``, else 64 with MLA, else 128
    (docs/theory.md#attention-tiles)."""
    rows = deployment.hardware.attention_tile_rows
    if rows is not None:
        return rows
    return theory.MLA_TILE_ROWS if deployment.model.mla else theory.TILE_ROWS


def measured_points(deployment: "Deployment", verify_tokens: int | None) -> list[tuple[int, float]]:
    """The measured (N, β) points: ``evidence.verify_cost_ratio_at`` and
    ``evidence.verify_cost_ratio`` at the deployment's N_verify (which wins at its N),
    with (1, 1) first; ``[]`` when nothing is measured."""
    evidence = deployment.evidence
    points = dict(evidence.verify_cost_ratio_at)
    if evidence.verify_cost_ratio is not None:
        points[verify_tokens if verify_tokens is not None else 0] = evidence.verify_cost_ratio
    if not points:
        return []
    points[1] = points.get(1, 1.0)
    return sorted(points.items())


class MeasuredCurve(NamedTuple):
    """A measured β at some N, extended to other N (module docstring, deviation 3).

    ``estimate(n)`` is an upper bound between and below the points and a lower bound
    above the last (what SG205 and SG203 need); ``lower(n)`` a lower bound everywhere.
    ``points`` start with (1, 1) and are sorted by N; a point at N = 0 (a β measured
    with N_verify unknown) makes the curve flat.
    """

    points: tuple[tuple[int, float], ...]
    convex: Callable[[int, int], bool]

    def _segment(self, n: int) -> tuple[int, int] | None:
        """Indices (i, i + 1) of the points around ``n``, or None outside them."""
        for i in range(len(self.points) - 1):
            if self.points[i][0] < n < self.points[i + 1][0]:
                return i, i + 1
        return None

    def _extend(self, i: int, n: int) -> float | None:
        """The segment ending at point i, extended to n (a convex lower bound)."""
        if i < 1:
            return None
        (a, beta_a), (b, beta_b) = self.points[i - 1], self.points[i]
        if not (self.convex(a, b) and self.convex(b, n)):
            return None
        return beta_b + (beta_b - beta_a) * (n - b) / (b - a)

    def estimate(self, n: int) -> float:
        """β(n): the point itself, the chord between points (or the next point's β
        where the chord is not sound), or the last segment extended past the end."""
        known = dict(self.points)
        if n in known:
            return known[n]
        if self.points[0][0] == 0:
            return self.points[0][1]  # measured at an unknown N: reused as is (v2)
        around = self._segment(n)
        if around is not None:
            (a, beta_a), (b, beta_b) = self.points[around[0]], self.points[around[1]]
            if self.convex(a, b):
                return beta_a + (beta_b - beta_a) * (n - a) / (b - a)
            return beta_b
        last = len(self.points) - 1
        extended = self._extend(last, n) if n > self.points[last][0] else None
        return self.points[last][1] if extended is None else extended

    def lower(self, n: int) -> float:
        """A lower bound on β(n): the point below n, raised to its segment's extension."""
        known = dict(self.points)
        if n in known:
            return known[n]
        if self.points[0][0] == 0:
            return self.points[0][1] if n >= 1 else 1.0
        below = max((i for i, (m, _b) in enumerate(self.points) if m < n), default=0)
        extended = self._extend(below, n)
        base = self.points[below][1]
        return base if extended is None else max(base, extended)


def measured_curve(deployment: "Deployment", points: list[tuple[int, float]]) -> MeasuredCurve:
    """The curve through ``points``, convex between two N when the model is dense and
    the tile count is the same at both (G unknown: assumed the same)."""
    g = query_heads_per_kv(deployment).value
    rows = tile_rows(deployment)
    moe = is_moe(deployment)

    def convex(a: int, b: int) -> bool:
        if moe:
            return False
        if g is None:
            return True
        return theory.attention_tiles(g, max(a, 1), rows) == theory.attention_tiles(
            g, max(b, 1), rows
        )

    return MeasuredCurve(tuple(points), convex)


class _Plan(NamedTuple):
    """The inputs of docs/theory.md#step-time-model for one deployment, and what is missing."""

    shape: Shape
    machine: Machine
    workload: Workload
    left_out: tuple[str, ...]
    sized: bool
    proven_machine: Machine | None
    proven_blocked: str | None
    precision: Precision
    row: Gpu | None
    tensor_parallel_known: bool


def _shape(deployment: "Deployment") -> "tuple[steps.Shape, bool, list[str]]":
    """The step-time shape, whether the model's size is known, and missing terms."""
    from specgate.theory import step_time as steps

    model = deployment.model
    model_shape = deployment.inputs.model if deployment.inputs else None
    total, _ = total_parameters(deployment)
    active, _ = active_parameters(deployment)
    missing: list[str] = []
    sized = total is not None
    parameters = total if total is not None else 1.0
    experts, top_k = model.experts, model.experts_per_token
    if is_moe(deployment) and (active is None or experts is None or top_k is None or not sized):
        missing.append("experts")
        experts = top_k = None
    heads = model.query_heads
    kv = model.kv_heads
    if model_shape is not None:
        heads = heads if heads is not None else model_shape.query_heads
        kv = kv if kv is not None else model_shape.kv_heads
    shape = steps.Shape(
        parameters=parameters,
        active_parameters=active if active is not None and sized else parameters,
        experts=experts,
        experts_per_token=top_k,
        layers=model.layers,
        query_heads=heads,
        kv_heads=kv,
        head_dim=model.head_dim,
        hidden_size=model.hidden_size,
        kv_lora_rank=model.kv_lora_rank,
        rope_head_dim=model.rope_head_dim,
        kv_bytes_per_token=model.kv_bytes_per_token,
        query_heads_per_kv=model.query_heads_per_kv,
    )
    return shape, sized, missing


def _plan(deployment: "Deployment", row: "Gpu | None", batch: int) -> _Plan:
    from specgate.theory import step_time as steps

    hardware = deployment.hardware
    workload = deployment.workload
    shape, sized, missing = _shape(deployment)
    engine = deployment.inputs.engine if deployment.inputs else None
    from specgate.analysis.precision import peak_tflops
    from specgate.analysis.precision import resolve as resolve_precision

    stated_t = tensor_parallel(deployment)
    t = stated_t or 1
    precision = resolve_precision(deployment, row)
    peak = peak_tflops(precision, deployment, row)
    bandwidth = hardware.memory_bandwidth_tbps
    if bandwidth is None and row is not None:
        bandwidth = row.memory_bandwidth_tbps
    allreduce = hardware.allreduce_gbps
    if allreduce is None and row is not None:
        allreduce = row.allreduce_gbps
    timed = bandwidth is not None
    context = workload.context_length
    if context is not None and not sized:
        missing.append("model size")
        context = None
    if (
        context is not None
        and steps.kv_bytes_per_token(shape, precision.kv_cache_bytes) is None
    ):
        missing.append("KV cache size")
        context = None
    comm = t > 1 and timed and sized
    # Without hardware (one sequence, memory-bound) no all-reduce can be priced, and
    # v2's β = 1 stands; with hardware a tensor-parallel step names what it lacks.
    if comm and (shape.layers is None or (allreduce is not None and shape.hidden_size is None)):
        missing.append("all-reduce layers")
        comm = False
    elif comm and allreduce is None:
        missing.append("all-reduce")
    prefill = workload.prefill_tokens_per_step
    if prefill is None and timed and (batch > 1 or workload.latency_region == "throughput"):
        missing.append("prefill")
    latency = hardware.allreduce_latency_us
    # The estimate prices the all-reduce only with bw_ar known (docs/theory.md#step-time-model: else
    # 0 and a note); the proven bound keeps its latency part, which can only lower β.
    estimate_comm = comm and allreduce is not None
    machine = steps.Machine(
        memory_bandwidth=(bandwidth or 1.0) * 1e12,
        peak_flops=None if peak is None or not timed else peak * 1e12,
        tensor_parallel=t,
        weight_bytes=precision.weight_bytes,
        kv_cache_bytes=precision.kv_cache_bytes,
        allreduce_bandwidth=None if allreduce is None or not comm else allreduce * 1e9,
        allreduce_latency=(DEFAULT_ALLREDUCE_LATENCY_US if latency is None else latency) * 1e-6
        if estimate_comm
        else None,
        tile_rows=tile_rows(deployment),
        attention_data_parallel=engine.attention_data_parallel if engine else False,
    )
    blocked = None
    proven_machine = None
    if t > 1 and not comm:
        if not timed:
            blocked = "hardware (gpu, or peak_tflops with memory_bandwidth_tbps)"
        elif not sized:
            blocked = TERM_INPUTS["model size"]
        else:
            blocked = TERM_INPUTS["all-reduce layers"]
    else:
        proven_latency = PROVEN_ALLREDUCE_LATENCY_US if latency is None else latency
        proven_machine = machine._replace(
            allreduce_latency=proven_latency * 1e-6 if comm else None,
            peak_flops=None if "experts" in missing else machine.peak_flops,
        )
    return _Plan(
        shape,
        machine,
        steps.Workload(batch, context, prefill or 0),
        tuple(missing),
        sized,
        proven_machine,
        blocked,
        precision,
        row,
        stated_t is not None,
    )


def verify_cost(deployment: "Deployment", verify_tokens: int | None) -> VerifyCost:
    """β of docs/theory.md#proven-verify-cost for ``deployment`` verifying ``verify_tokens`` tokens
    per sequence.

    Measured (``evidence.verify_cost_ratio`` / ``verify_cost_ratio_at``); else the
    step-time model with ``hardware`` (source ``roofline``), or with memory reads only
    at one sequence and no hardware (``memory-bound``: v2's β = 1 when no v3 input
    is given); else 1 (``assumed`` when many sequences decode at once, or hardware is
    partial). ``proven`` as the module docstring says.
    """
    n_verify = verify_tokens or 1
    points = measured_points(deployment, verify_tokens)
    if points:
        curve = measured_curve(deployment, points)
        return VerifyCost(
            curve.estimate(n_verify),
            "measured",
            curve.estimate,
            bound="measured",
            proven=curve.lower(n_verify),
        )
    workload = deployment.workload
    hardware = deployment.hardware
    if workload.concurrency is None and workload.latency_region == "throughput":
        return assumed(
            "workload.latency_region is throughput but workload.concurrency is not given"
        )
    row = None
    if hardware.gpu is not None:
        from specgate.theory.gpus import gpu_table

        row = gpu_table()[hardware.gpu]
    has_pair = row is not None or (
        hardware.peak_tflops is not None and hardware.memory_bandwidth_tbps is not None
    )
    batch = workload.concurrency or 1
    if not has_pair:
        if hardware.names_roofline:
            return assumed(
                "hardware gives no usable pair of peak_tflops and memory_bandwidth_tbps (or gpu)"
            )
        if batch > 1:
            return assumed(f"workload.concurrency {batch} without hardware or a measured β")
        model = deployment.model
        if workload.context_length is None and (
            model.experts is None or model.experts_per_token is None
        ):
            return _memory_bound(deployment, n_verify)
    plan = _plan(deployment, row if has_pair else None, batch)
    # one sequence, no hardware: memory reads only (docs/theory.md#cost-model's memory-bound)
    if not has_pair:
        plan = plan._replace(machine=plan.machine._replace(peak_flops=None))
        if plan.proven_machine is not None:
            plan = plan._replace(proven_machine=plan.machine)
    return _modelled(deployment, plan, n_verify, "roofline" if has_pair else "memory-bound")


def _one(_n: int) -> float:
    return 1.0


_MEMORY_EXACT = VerifyCost(1.0, "memory-bound", _one, concurrency=1, bound="exact")
_MEMORY_LOWER = VerifyCost(1.0, "memory-bound", _one, concurrency=1, bound="lower")


def _memory_bound(deployment: "Deployment", n_verify: int) -> VerifyCost:
    """One sequence, no hardware, no context length and no expert counts:
    docs/theory.md#cost-model's memory-bound β = 1 (v2), labelled ``lower`` when the truth can only
    be higher (a mixture-of-experts model priced as dense, or more attention tiles than a plain
    step), else ``exact``."""
    g = query_heads_per_kv(deployment).value
    more_tiles = False
    if g is not None and n_verify > 1:  # ceil(G·N/M) > ceil(G/M), in integers
        rows = tile_rows(deployment) * g.denominator
        more_tiles = -(-g.numerator * n_verify // rows) > -(-g.numerator // rows)
    return _MEMORY_LOWER if more_tiles or is_moe(deployment) else _MEMORY_EXACT


def _modelled(
    deployment: "Deployment", plan: _Plan, n_verify: int, source: VerifyCostSource
) -> VerifyCost:
    from specgate.theory import step_time as steps

    shape, machine, work = plan.shape, plan.machine, plan.workload
    left_out = list(plan.left_out)
    experts_missing = "experts" in left_out
    g = steps.query_heads_per_kv_rank(
        shape, machine.tensor_parallel, machine.attention_data_parallel
    )

    def tile_ratio(n: int) -> float:
        if g is None:
            return 1.0
        return steps.attention_tiles(g, n, machine.tile_rows) / steps.attention_tiles(
            g, 1, machine.tile_rows
        )

    def judged(n: int, routing: "steps.Routing" = "uniform") -> tuple[float, Bound]:
        value = steps.verify_cost_ratio(shape, machine, work, n, routing=routing)
        up = False
        down = experts_missing  # priced as dense: the expert reads only raise β
        if shape.moe and routing == "uniform":
            flat = steps.verify_cost_ratio(shape, machine, work, n, routing="any")
            up = value > flat + _SLACK
        if work.context is None:
            ratio = tile_ratio(n)
            if value > ratio + _SLACK:
                up = True
            elif value < ratio - _SLACK:
                down = True
                if up:  # both: the larger is an upper bound on either
                    value, down = ratio, False
        return value, "upper" if up else ("lower" if down else "exact")

    value, bound = judged(n_verify)
    low: float | None = None
    low_bound: Bound | None = None
    if shape.moe:  # the locality end of the range (docs/theory.md#routing-locality)
        low, low_bound = judged(n_verify, "local")
    # Without hardware at one sequence, v2's memory-bound β = 1 stands quietly (extra
    # attention tiles are SG206's finding); the terms left out are named (SG207) once a
    # step is modelled: hardware given, or the expert counts.
    modelled = source == "roofline" or shape.moe
    if not modelled:
        left_out = []
    elif (
        work.context is None
        and bound != "exact"
        and not {"model size", "KV cache size"} & set(left_out)
    ):
        left_out.insert(0, "KV cache")
    proven, settle = _proven(deployment, plan, n_verify, value)
    return VerifyCost(
        value,
        source,
        lambda n: judged(n)[0],
        concurrency=work.batch,
        n_star=None
        if machine.peak_flops is None
        else machine.peak_flops * machine.weight_bytes / (2.0 * machine.memory_bandwidth),
        bound=bound,
        proven=proven,
        left_out=tuple(left_out),
        settle=settle,
        kv_to_weight_ratio=steps.kv_to_weight_ratio(shape, machine, work),
        expert_read_ratio=steps.expert_read_ratio(shape, work, n_verify),
        precision=plan.precision,
        low=low,
        low_bound=low_bound,
    )


def with_host_overhead(beta: float, share: float = PROVEN_HOST_OVERHEAD_SHARE) -> float:
    """A modelled β with a host overhead of ``share`` of the plain step's wall time paid
    by both steps: 1 + (β − 1)·(1 − share) (module docstring, deviation 5); β ≤ 1 is
    returned as is.

    Example (review newuser.md defect 7): 8B at 256 sequences on an H100, modelled β
    1.0362: 1 + 0.0362·0.38 = 1.0138.
    """
    if not beta > 1:
        return beta
    return 1.0 + (beta - 1.0) * (1.0 - share)


def _proven(
    deployment: "Deployment", plan: _Plan, n_verify: int, estimate: float
) -> tuple[float, tuple[str, ...]]:
    """The lower bound of docs/theory.md#proven-verify-cost and the inputs that would close its gap
    to the estimate."""
    settle: list[str] = []
    work = plan.workload
    if deployment.workload.context_length is None:
        settle.append("workload.context_length")
    settle.extend(TERM_INPUTS[t] for t in plan.left_out if t in ("model size", "KV cache size"))
    if plan.shape.moe:
        settle.append(ROUTING)
    if "experts" in plan.left_out:
        settle.append(TERM_INPUTS["experts"])
    if plan.proven_blocked is not None:
        settle.append(plan.proven_blocked)
    if (
        plan.machine.allreduce_latency is not None
        and deployment.hardware.allreduce_latency_us is None
    ):
        settle.append("hardware.allreduce_latency_us")
    proven = 1.0
    if work.context is not None and plan.proven_machine is not None:
        modelled, more = _proven_over_unknowns(deployment, plan, n_verify)
        settle.extend(more)
        proven = with_host_overhead(modelled)
        if proven < modelled - _SLACK:
            settle.append(HOST)
    proven = min(proven, max(estimate, 1.0))
    if not estimate > proven + _SLACK:
        return proven, ()
    return proven, tuple(dict.fromkeys(settle))


#: The input that settles an unknown TP (SG112 names it; docs/theory.md#step-time-inputs's default
#: of 1 is a guess a fail must not rest on).
SETTLE_TP = "hardware.tensor_parallel (or the serving config's tensor_parallel_size)"


def _proven_over_unknowns(
    deployment: "Deployment", plan: _Plan, n_verify: int
) -> tuple[float, list[str]]:
    """The proven β: the lowest routing-free β over what is not known (module
    docstring, deviation 4) and the inputs that would settle it (those that lowered it).

    The precision ranges over :func:`~specgate.analysis.precision.proven_candidates`.
    An unknown TP ranges over every split of the heads the engines accept
    (:func:`~specgate.model.step_inputs.split_ranks`): more ranks add the all-reduce
    latency to both steps, replicate KV heads past TP = KV (MLA: the latent on every
    rank) and shrink the per-rank G, each of which can lower β below its TP 1 value.
    A TP above 1 is priced with the latency of the proven bound and without the
    all-reduce's bandwidth part (which only raises β), so it needs L and hardware;
    without them no TP above 1 can be priced and the bound is 1.
    """
    from specgate.analysis.precision import proven_candidates
    from specgate.theory import step_time as steps

    machine = plan.proven_machine
    assert machine is not None
    shape, work = plan.shape, plan.workload
    pairs, kvs, settle = proven_candidates(plan.precision, deployment, plan.row)
    timed = plan.row is not None or deployment.hardware.memory_bandwidth_tbps is not None

    def beta(m: "steps.Machine") -> float:
        return steps.verify_cost_ratio(shape, m, work, n_verify, routing="any")

    def over_precision(m: "steps.Machine") -> float:
        low = beta(m)
        for weight_bytes, peak in pairs:
            for kv in kvs:
                flops = None if m.peak_flops is None or peak is None else peak * 1e12
                low = min(low, beta(m._replace(
                    weight_bytes=weight_bytes, peak_flops=flops, kv_cache_bytes=kv)))
        return low

    primary = beta(machine)
    proven = over_precision(machine)
    found: list[str] = [] if not proven < primary - _SLACK else settle
    if plan.tensor_parallel_known:
        return proven, found
    ranks = split_ranks(shape.query_heads, shape.kv_heads, shape.mla)
    if ranks == ():
        return proven, found  # one query head: nothing to split
    latency = deployment.hardware.allreduce_latency_us
    alpha = (PROVEN_ALLREDUCE_LATENCY_US if latency is None else latency) * 1e-6
    if ranks is None or shape.layers is None or not timed:
        return 1.0, [*found, SETTLE_TP]
    low = proven
    for t in ranks:
        split = machine._replace(
            tensor_parallel=t, allreduce_latency=alpha, allreduce_bandwidth=None
        )
        low = min(low, over_precision(split))
    if low < proven - _SLACK:
        found = [*found, SETTLE_TP]
    return low, found
