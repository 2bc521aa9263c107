"""Rules on what the verify cost β rests on (SG112, SG207; docs/theory.md#proven-verify-cost).

A fail rests on the proven β, a lower bound built from what is stated or measured;
the estimate may rest on assumptions (no context length, uniform expert routing, the
default all-reduce latency) and only warns: SG112 when the estimate alone puts the
speedup at risk, SG207 (a note) naming every term the step-time model left out.
"""

from collections.abc import Iterator
from typing import NamedTuple

from specgate.analysis.derived import Metrics
from specgate.analysis.verify_cost import HOST, PROVEN_HOST_OVERHEAD_SHARE, ROUTING, TERM_INPUTS
from specgate.core.findings import Severity
from specgate.core.numbers import fmt
from specgate.rules.accept_length import SPEEDUP_TOLERANCE, claim_backed_by_measurement, claim_bound
from specgate.rules.registry import Hit, RuleContext, rule

_SLACK = 1e-9


class Risk(NamedTuple):
    """What the estimate says that the proven bound does not (SG112).

    ``speedup`` is S at the estimated β and the ρ a fail may use (stated, or 0);
    ``claim`` whether the claim is above it (and within SG104's proven bound);
    ``gain`` whether S is below 1 + min_gain while the proven S is not; ``firm``
    whether either still holds at the β a warning may rest on
    (:func:`~specgate.analysis.verify_cost.warning_value`: the bottom of a
    mixture-of-experts model's range, docs/theory.md#routing-locality), so the finding
    warns; else it only informs.
    """

    speedup: float
    claim: bool
    gain: bool
    firm: bool = False
    firm_speedup: float = 0.0


def risk(m: Metrics) -> Risk | None:
    """The SG112 test, shared with SG108 and SG110 (one cause, one finding): ``None``
    when β is measured or assumed, the estimate equals the proven bound, ρ is derived
    from a measured speedup (S is the measurement), or the AL is impossible."""
    beta = m.verify_cost
    al, d = m.accept_length, m.draft_length
    if beta is None or beta.source in ("measured", "assumed") or al is None or al < 1:
        return None
    if not beta.value > beta.proven + _SLACK or (d is not None and al > 1 + d):
        return None
    if m.draft_depth_ratio_source in ("measured", "derived"):
        return None
    # an AL measured at another D: the most it can be at the served D (SG104's reading)
    upper = m.accept_length_upper if m.accept_length_upper is not None else al
    draft = m.proven_draft_depth_ratio * m.passes
    speedup = upper / (beta.value + draft)
    firm_speedup = upper / (m.warning_verify_cost_ratio + draft)
    claimed = m.claimed_speedup
    bound = claim_bound(m)
    measured = m.measured_speedup
    within = claim_backed_by_measurement(m)

    def above(s: float) -> bool:
        return (
            claimed is not None
            # a claim within the deployment's own measurement (to the precision of its
            # inputs and of the claim as written) is not at risk: SG107 judges it
            and not within
            and claimed > s + SPEEDUP_TOLERANCE
            and (bound is None or claimed <= bound + SPEEDUP_TOLERANCE)
        )

    target = 1 + m.min_gain
    proven = m.proven_speedup

    def short(s: float) -> bool:
        return (
            (d is None or d >= 1)
            and s < target
            and proven is not None
            and proven >= target
            and not (measured is not None and measured >= target)
        )

    claim, gain = above(speedup), short(speedup)
    firm = (claim and above(firm_speedup)) or (not claim and gain and short(firm_speedup))
    return Risk(speedup, claim, gain, firm, firm_speedup)


def _bound_words(m: Metrics) -> str:
    beta = m.verify_cost
    assert beta is not None
    return {
        "upper": "an upper estimate",
        "lower": "a lower estimate",
        "exact": "the step-time model's estimate",
        "capped": f"capped by the measured speedup: β ≤ AL / S = {fmt(beta.cap or 0)}",
    }.get(beta.bound, beta.bound)


@rule(
    "SG112",
    "speedup-at-risk",
    "warn",
    "The estimated verify cost β (not the proven bound) puts the speedup below 1 + min_gain "
    "or the claim above it; names the input that would settle it.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b-batch128
            model:
              parameters_b: 8.03
              layers: 32
              query_heads: 32
              kv_heads: 8
              head_dim: 128
              hidden_size: 4096
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
              draft_depth_ratio: 0.05
            workload:
              concurrency: 128
              context_length: 1000
              prefill_tokens_per_step: 0
            hardware:
              gpu: h100-sxm
              tensor_parallel: 1
              weight_bytes: 2
              kv_cache_bytes: 2
            evidence:
              accept_length: 2.8
              cache_coherence_eval: true
            claims:
              speedup: 2.0
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b-batch128
            model:
              parameters_b: 8.03
              layers: 32
              query_heads: 32
              kv_heads: 8
              head_dim: 128
              hidden_size: 4096
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
              draft_depth_ratio: 0.05
            workload:
              concurrency: 128
              context_length: 1000
              prefill_tokens_per_step: 0
            hardware:
              gpu: h100-sxm
              tensor_parallel: 1
              weight_bytes: 2
              kv_cache_bytes: 2
            evidence:
              accept_length: 2.8
              cache_coherence_eval: true
              verify_cost_ratio: 1.2
            claims:
              speedup: 2.0
    """,
)
def speedup_at_risk(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** specgate keeps two verify costs (docs/validation.md). The
    *proven* β (`metrics.proven_verify_cost_ratio`) is a lower bound built from what is
    stated or measured: a measured β; else the step-time model with
    `workload.context_length` stated, priced so that it holds for any expert routing
    and an all-reduce latency of 50 µs unless `hardware.allreduce_latency_us` is given,
    and the lowest over what is not known: the weights' and KV cache's precision when
    neither `hardware` nor the checkpoint (`model.hf_config`: `quantization_config`,
    `dtype`) nor the serving config (`--quantization`, `--kv-cache-dtype`, `--dtype`)
    states it (BF16, FP8 and INT8 W8A8, W8A16, W4A16, FP4), and every TP the heads
    allow when neither `hardware.tensor_parallel` nor the serving config states it
    (more ranks add the all-reduce latency to both steps, replicate KV heads past TP =
    KV and shrink G per rank, each of which lowers β below its TP 1 value); else 1.
    The fail rules (SG102's default floor, SG104, SG106, SG111) use it. The
    *estimate* (`metrics.verify_cost_ratio`, labelled by `metrics.verify_cost_bound`)
    adds what rests on assumptions: the roofline β without the KV cache (an upper
    bound: the KV reads only lower β while verification fits the same attention tiles),
    the uniform-routing expert reads (which real, skewed routing undercuts), the default
    10 µs all-reduce latency. SG112 fires when the estimate, with ρ stated (else 0),
    puts S = AL / (β + ρ·passes) below 1 + `policy.min_gain` or the claim above it while
    the proven bound does not, and names the inputs that would settle it (the context
    length, the expert counts, the all-reduce latency, the precision, the TP, or a
    measured β). Not when ρ is
    derived from a measured speedup (S is then the measurement), a measured speedup
    already shows the gain, or the claim is within the measured speedup (to the
    precision its inputs are written with, SG107).

    The proven bound of a modelled β allows host overhead (scheduling, sampling, kernel
    launches, the API server) both steps pay, of up to 62 % of a plain step's wall time:
    β_proven = 1 + (β − 1)·0.38 (vLLM blog 2024-09-05: vLLM v0.5.3 serving Llama-3-8B on
    one H100 spent 38 % of its time on the GPU). A claim between the estimate's bound and
    that one is this warning, not SG104's fail; a measured β already holds the overhead.

    A measured speedup caps the estimate: S_m = AL / (β + ρ·passes) with ρ ≥ 0 gives β ≤
    AL / S_m, so an estimate above it (the uniform-routing expert term, the default
    all-reduce latency) is lowered to AL / S_m (`metrics.verify_cost_bound: capped`,
    `metrics.verify_cost_cap`), ρ is derived from the measurement at the capped β, and
    other D are priced on the model's curve scaled to meet the cap (SG203, SG205).
    Example (TensorRT-LLM DeepSeek-R1 MTP 1, 8×B200): AL 1.92, 111 → 198 TPS/user
    (1.7838x): β ≤ 1.92/1.7838 = 1.0764, so the uniform-routing 1.2576 is not used and the
    claimed 1.78x is not at risk.

    **Which way the estimate points** (issue 26). A warning that a claim may not hold
    needs an upper bound on the speedup, i.e. a lower bound on β. When the estimate is
    an upper bound on β (`metrics.verify_cost_bound` `upper`: the roofline without the
    KV cache, uniform expert routing; `capped`: AL / S_m), S at it is a lower bound, and
    a claim above a lower bound is no evidence against it: the finding is a note (it
    informs and names the input that settles it; the status does not change). It warns
    when the estimate is the step-time model's own value (`exact`, every term priced;
    the published speedups of docs/validation.md sit below it on 52 of 76 points) or a
    lower bound on β (`lower`). For a mixture-of-experts model the uniform-routing β is
    the top of a range whose bottom prices the expert reads at the highest published
    routing locality (docs/theory.md#routing-locality: adjacent tokens repeat their
    experts with r = 0.384, Mixtral's Table 5); with every other term priced, the finding
    warns when the claim is out of reach, or the gain missing, at that end too, and is a
    note when only the uniform end says so. Mixtral-8x7B on an A100, one sequence,
    context 4000, D 3, AL 3, ρ 0.15: β 2.4846 (uniform) … 2.0131 (locality), S 1.0223 …
    1.2180; a claimed 1.15 is a note, 1.3 a warning.

    Fail example: Llama-3.1-8B's shapes on an H100-SXM at 128 sequences, context 1000,
    D 3, AL 2.8, ρ 0.05 claims 2.0x. The step-time model gives β = 1.3591 (`exact`) and S
    = 2.8 / (1.3591 + 0.05·3) = 1.8554x < 2.0, while the proven β 1 + 0.3591·0.38 =
    1.1365 (host overhead) allows 2.8 / 1.2865 = 2.1765x: SG112 warns, not a fail. Pass
    example: the same deployment with a measured β of 1.2: S = 2.8 / 1.35 = 2.0741x, the
    claim holds. Without the context length the roofline's β = 4·128 / 295.22 = 1.7343 is
    an upper bound (S = 2.8 / 1.8843 = 1.4860x a lower one): the same claim is a note.

    **Why.** A gate people block merges on must not cry wolf. At long context the KV
    cache keeps large batches memory-bound (MagicDec, arXiv:2408.11049, measured
    1.22-1.47x at batch 32-128 and 32k context where the roofline alone says β ≈ 4),
    and MoE routing reads fewer experts than independent tokens would. What only the
    estimate says is worth a warning and the input that settles it, never a fail.
    """
    m = ctx.metrics
    found = risk(m)
    beta = m.verify_cost
    if found is None or beta is None or not (found.claim or found.gain):
        return
    dep = ctx.deployment
    inputs = [item for item in beta.settle if item not in (ROUTING, HOST)]
    settle = ", ".join([*inputs, "a measured β as evidence.verify_cost_ratio"])
    if len(inputs) == 1:
        settle = settle.replace(", a measured", " or a measured")
    # why the two bounds differ, in one clause (newuser-r4 #10: two parentheticals)
    why: list[str] = []
    if ROUTING in beta.settle:
        local = beta.low is not None and not found.firm
        why.append(
            "the expert reads assume uniform routing, which real routing undercuts"
            + (f": at the published routing locality β is {fmt(beta.low or 0)}" if local else "")
        )
    if HOST in beta.settle:
        share = fmt(PROVEN_HOST_OVERHEAD_SHARE * 100)
        why.append(
            f"the proven bound allows host overhead of up to {share} % of a plain step, as "
            "published engine profiles found, which lowers β toward 1"
        )
    if why:
        settle += " (" + "; ".join(why) + ")"
    upper = m.accept_length_upper if m.accept_length_upper is not None else m.accept_length
    shown, speedup = beta.value, found.speedup
    estimate = f"the estimated β {fmt(shown)} ({_bound_words(m)})"
    if found.firm and m.warning_verify_cost_ratio < beta.value - _SLACK:
        # the warning rests on the routing-locality end (docs/theory.md#routing-locality)
        shown, speedup = m.warning_verify_cost_ratio, found.firm_speedup
        estimate = f"β {fmt(shown)} (routing locality; {fmt(beta.value)} at uniform routing)"
    cost = (
        f"AL / (β + ρ·passes) = {fmt(upper or 0)} / ({fmt(shown)} + "
        f"{fmt(m.proven_draft_depth_ratio)}·{m.passes}) = {fmt(speedup)}x"
    )
    proven = f"the proven bound β ≥ {fmt(beta.proven)}"
    given = ", ".join(inputs)
    action = (
        (f"Give {given}, or measure" if given else "Measure")
        + " β (the step time at N_verify tokens per sequence over one token) as "
        "evidence.verify_cost_ratio, and re-check."
    )
    severity: Severity | None = None if found.firm else "note"
    if found.claim:
        yield Hit(
            f"at {estimate} the claimed {fmt(m.claimed_speedup or 0)}x is above {cost}; "
            f"{proven} does not rule it out. Settle it with {settle}",
            dep.path("claims", "speedup"),
            action,
            severity=severity,
        )
        return
    yield Hit(
        f"at {estimate} speculation gains less than min_gain = {fmt(m.min_gain)}: {cost} < "
        f"{fmt(1 + m.min_gain)}; {proven} does not rule it out. Settle it with {settle}",
        dep.path("evidence", "accept_length"),
        action,
        severity=severity,
    )


#: SG207's details: why β moves with the batch (MagicDec, arXiv:2408.11049).
_BATCHED = (
    "with B sequences a step does B·N_verify tokens of work and turns compute-bound past "
    "n*, where β rises above 1 (MagicDec, arXiv:2408.11049; docs/theory.md#step-time-model)"
)


@rule(
    "SG207",
    "verify-cost-assumed",
    "note",
    "β was assumed (many sequences or partial hardware without hardware figures), or the "
    "step-time model left out a term for lack of an input; names each.",
    fail_example="""
        version: 1
        deployments:
          - name: llama70b-batch64
            speculation:
              enabled: true
              mechanism: draft_model
              draft_length: 5
              draft_depth_ratio: 0.05
            workload:
              concurrency: 64
            evidence:
              accept_length: 3.0
              cache_coherence_eval: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: llama70b-batch64
            model:
              parameters_b: 70.6
              layers: 80
              query_heads: 64
              kv_heads: 8
              head_dim: 128
            speculation:
              enabled: true
              mechanism: draft_model
              draft_length: 5
              draft_depth_ratio: 0.05
            workload:
              concurrency: 64
              context_length: 4000
              prefill_tokens_per_step: 0
            hardware:
              gpu: h100-sxm
            evidence:
              accept_length: 3.0
              cache_coherence_eval: true
    """,
)
def verify_cost_assumed(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The verify cost β = T(B, N_verify) / T(B, 1) is known whenever
    it matters. With `workload.concurrency` > 1 or `latency_region: throughput`
    (without `workload.concurrency`, even with hardware), or a `hardware` block naming
    a GPU figure without a usable pair, the deployment needs `hardware` (`gpu` from the
    shipped table, or `peak_tflops` with `memory_bandwidth_tbps`) or a measured
    `evidence.verify_cost_ratio`; otherwise β = 1 was assumed. When β comes from the
    step-time model (README, "What it checks"), the note names each term it left out for lack of
    an input: the KV cache (`workload.context_length`; with the context given, the
    cache's size from `model.hf_config` or the layer and head shapes, and the model's
    size), the experts of a mixture-of-experts model (`model.active_parameters_b`,
    `model.experts`, `model.experts_per_token`), the all-reduce of tensor-parallel ranks
    (`hardware.allreduce_gbps`, `model.layers`, `model.hidden_size`) and the prefill
    chunks sharing the step (`workload.prefill_tokens_per_step`, at concurrency > 1).
    A note never changes the status.

    **Prefill.** Without `workload.prefill_tokens_per_step` the model prices steps that
    carry no prefill chunk (C = 0), and the note says so; it comes with no next action,
    because C is set by how fast prompts arrive, not by a setting. An engine's token
    budget — vLLM `--max-num-batched-tokens` (with chunked prefill, on by default in
    vllm/config/scheduler.py, 0.32.0), SGLang `--chunked-prefill-size`, TensorRT-LLM
    `max_num_tokens` — caps B·N_verify + C per step; it does not say how many prefill
    tokens a step carries, so specgate does not read C from it. Measure C as the prompt
    tokens computed over the engine steps of a benchmark window: with vLLM, the deltas
    of `vllm:prompt_tokens_by_source_total{source="local_compute"}` over
    `vllm:iteration_tokens_total_count` (vllm/v1/metrics/loggers.py, 0.32.0). With the
    memory-bound β = 1 a prefill chunk can only raise β; in the compute-bound region it
    lowers it toward 1.

    **Why.** At one sequence a decode step is memory-bound and verifying N_verify
    tokens costs about one step (β = 1). With B sequences the step does B·N_verify
    tokens of work and turns compute-bound past n* = peak FLOP/s × bytes per weight /
    (2 × bandwidth) tokens (295 on an H100-SXM in BF16); the KV cache, expert reads,
    all-reduce and prefill chunks move β further (MagicDec, arXiv:2408.11049; Cascade,
    arXiv:2506.20675; Sarathi-Serve, arXiv:2403.02310). n-gram speculation that paid at
    one user lost at hundreds (vLLM#19254, vLLM#17984).
    """
    cost = ctx.metrics.verify_cost
    if cost is None or (cost.source != "assumed" and not cost.left_out):
        return
    dep = ctx.deployment
    for candidate in (dep.path("workload"), dep.path("hardware")):
        if ctx.has_path(candidate):
            path = candidate
            break
    else:
        path = dep.path("speculation")
    if cost.source == "assumed":
        hw = dep.hardware
        wanted = []  # only what the file does not record yet
        if dep.workload.concurrency is None:
            wanted.append("workload.concurrency")
        if hw.gpu is None and (hw.peak_tflops is None or hw.memory_bandwidth_tbps is None):
            wanted.append(
                "hardware (gpu: one of the shipped table, or peak_tflops with "
                "memory_bandwidth_tbps)"
            )
        yield Hit(
            f"β = 1 assumed: {cost.assumed_because}; the theory treats verification as free",
            path,
            (f"Set {' and '.join(wanted)}, or measure" if wanted else "Measure")
            + " β (the step time at N_verify tokens per sequence over one token) as "
            "evidence.verify_cost_ratio.",
            details=_BATCHED,
        )
        return
    if not cost.left_out or cost.source == "measured":
        return
    terms = "; ".join(f"{term} ({TERM_INPUTS[term]})" for term in cost.left_out)
    # The prefill chunks sharing a step depend on how fast prompts arrive, not on a
    # setting: no next action asks for them (the doc says how to measure them).
    actionable = [term for term in cost.left_out if term != "prefill"]
    inputs = ", ".join(dict.fromkeys(TERM_INPUTS[term] for term in actionable))
    what = {
        "exact": "the step-time model's estimate",
        "upper": "an upper estimate of the step-time model",
        "lower": "a lower estimate of the step-time model",
        "capped": "the step-time estimate capped by the measured speedup",
    }.get(cost.bound, "the step-time model's estimate")
    # SG112 names the same inputs when it fires: one cause, one next action
    found = risk(ctx.metrics)
    shared = found is not None and (found.claim or found.gain)
    yield Hit(
        f"β = {fmt(cost.value)}, {what}, leaves out {terms}",
        path,
        f"Give {inputs}, or measure β at the served concurrency as evidence.verify_cost_ratio."
        if actionable and not shared
        else "",
        details=_BATCHED,
    )
