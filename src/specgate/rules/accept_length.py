"""Rules on the measured accept length AL and the claimed speedup (SG101–SG105)."""

from __future__ import annotations

from collections.abc import Iterator

from specgate.document import NodePath
from specgate.numbers import fmt
from specgate.rules.registry import Hit, RuleContext, rule


def _estimated(ctx: RuleContext) -> str:
    """`` (an estimate from FORMAT data)`` when the AL judged was only estimated."""
    inputs = ctx.deployment.inputs
    acceptance = inputs.acceptance if inputs else None
    if acceptance is None or not acceptance.estimate:
        return ""
    if ctx.deployment.evidence.accept_length != acceptance.accept_length:
        return ""
    return f" (an estimate from {acceptance.format} data)"


#: A claim written to 4 decimals passes when it rounds the exact bound up.
SPEEDUP_TOLERANCE = 5e-5


@rule(
    "SG101",
    "accept-length-missing",
    "fail",
    "Speculation is enabled but no measured accept length (AL) is given.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
              draft_depth_ratio: 0.05
            evidence:
              accept_length: 2.4
              cache_coherence_eval: true
    """,
)
def accept_length_missing(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** A deployment with `speculation.enabled: true` records a
    measured accept length `evidence.accept_length` (or a metrics source that yields it).

    **Why.** Every benefit of speculative decoding flows through AL, the tokens
    emitted per target step (bonus token included). Without a measured AL no
    speedup can be checked, and acceptance collapses silently in production
    (vLLM issues #8620 and #41789: heads deployed with AL ≈ 1.0).
    """
    dep = ctx.deployment
    if dep.speculation_enabled and dep.evidence.accept_length is None:
        yield Hit(
            "speculative decoding is enabled but no measured accept length "
            "(evidence.accept_length) is given",
            dep.path("speculation"),
            "Measure AL on the served workload (for vLLM: 1 + Δaccepted / Δdrafts of the "
            "vllm:spec_decode_* counters) and record it as evidence.accept_length.",
        )


@rule(
    "SG102",
    "accept-length-below-floor",
    "fail",
    "The measured accept length is below the AL floor.",
    fail_example="""
        version: 1
        deployments:
          - name: gemma-mtp
            speculation:
              enabled: true
              mechanism: mtp
              draft_length: 4
              draft_depth_ratio: 0.02
            evidence:
              accept_length: 1.03
              cache_coherence_eval: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: deepseek-mtp
            speculation:
              enabled: true
              mechanism: mtp
              draft_length: 1
              draft_depth_ratio: 0.03
            evidence:
              accept_length: 1.85
              cache_coherence_eval: true
    """,
)
def accept_length_below_floor(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** AL ≥ the AL floor. The floor is `policy.min_accept_length`
    (or `--min-accept-length`), else 2 but never above 1 + D/2 when D is known:
    at D = 1 a floor of 2 would demand 100 % acceptance, and DeepSeek-V3's MTP
    at D = 1 runs at AL ≈ 1.85 (arXiv:2412.19437 §5.4.3). The comparison is
    strict, without tolerance. An explicit floor above 1 + D is unreachable and
    the message says so.

    **Why.** A drafter whose acceptance collapsed costs draft and verification
    work for almost no extra tokens; TensorRT-LLM's CI keeps AL floors for the
    same reason (`acceptance_length.yaml`, "a collapse tripwire").
    """
    al = ctx.metrics.accept_length
    floor = ctx.metrics.accept_length_floor
    if al is None or not al < floor.value:
        return
    dep = ctx.deployment
    d = ctx.metrics.draft_length
    where = {"cli": "--min-accept-length", "policy": "policy.min_accept_length"}.get(
        floor.source,
        "the default floor" + (f" min(2, 1 + D/2) at D = {d}" if d is not None else ""),
    )
    message = f"AL {fmt(al)}{_estimated(ctx)} is below the floor {fmt(floor.value)} ({where})"
    if floor.explicit and d is not None and floor.value > 1 + d:
        message += f"; the floor is unreachable: AL can be at most 1 + D = {1 + d}"
    yield Hit(
        message,
        dep.path("evidence", "accept_length"),
        f"Raise AL to at least {fmt(floor.value)} (a drafter better matched to the served "
        "traffic and chat template), set policy.min_accept_length if this mechanism's floor "
        "should differ, or keep speculation off for this deployment.",
    )


@rule(
    "SG103",
    "accept-length-out-of-range",
    "fail",
    "The accept length is impossible: AL < 1, or AL > 1 + D.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              draft_length: 3
              draft_depth_ratio: 0.05
            evidence:
              accept_length: 4.6
              cache_coherence_eval: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              draft_length: 3
              draft_depth_ratio: 0.05
            evidence:
              accept_length: 2.9
              cache_coherence_eval: true
    """,
)
def accept_length_out_of_range(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** 1 ≤ AL, and AL ≤ 1 + D when D is known (strict
    comparisons, no tolerance); the same for the AL measured at the larger D of
    `evidence.next`.

    **Why.** Each target step emits the accepted draft tokens plus one token of
    its own, so 1 ≤ AL ≤ 1 + D (Leviathan et al. 2023, arXiv:2211.17192). An AL
    below 1 usually counts accepted drafts without the bonus token (off by
    exactly one); an AL above 1 + D comes from tree-drafting paper figures or
    from client-side chunk counting with a stream interval above 1.
    """
    dep = ctx.deployment
    yield from _accept_length_range(
        ctx.metrics.accept_length, ctx.metrics.draft_length, dep.path("evidence", "accept_length")
    )
    following = dep.evidence
    yield from _accept_length_range(
        following.next_accept_length,
        following.next_draft_length,
        dep.path("evidence", "next", "accept_length"),
    )


def _accept_length_range(al: float | None, d: int | None, path: NodePath) -> Iterator[Hit]:
    if al is None:
        return
    if al < 1:
        yield Hit(
            f"AL {fmt(al)} is below 1: every target step emits at least one token "
            "(was the bonus token left out?)",
            path,
            "Report AL as tokens per target step including the bonus token "
            "(1 + accepted drafts per step).",
        )
    elif d is not None and al > 1 + d:
        yield Hit(
            f"AL {fmt(al)} exceeds 1 + D = {1 + d}: a step cannot accept more than its "
            f"{d} draft tokens plus the bonus token",
            path,
            f"Re-measure AL at D = {d} from the engine's counters (not from stream chunks "
            "or a tree-drafting paper figure).",
        )


@rule(
    "SG104",
    "claimed-speedup-over-theory",
    "fail",
    "The claimed speedup exceeds AL / (1 + ρ·D).",
    fail_example="""
        version: 1
        deployments:
          - name: chat-70b-eagle3
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 7
              draft_depth_ratio: 0.05
            evidence:
              accept_length: 1.4
              cache_coherence_eval: true
            claims:
              speedup: 3
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-70b-eagle3
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 4
              draft_depth_ratio: 0.18
            evidence:
              accept_length: 2.9
              cache_coherence_eval: true
            claims:
              speedup: 1.67
    """,
)
def claimed_speedup_over_theory(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `claims.speedup` ≤ AL / (1 + ρ·D) + 5·10⁻⁵. The
    tolerance lets a claim written to 4 decimals pass when it rounds the exact
    bound; nothing else is forgiven. With ρ absent the theory uses ρ = 0
    (SG204 says so); with D unknown the bound is AL itself, the ceiling for any D.

    **Why.** In memory-bound decode a target step costs about the same for 1 or
    1 + D tokens, so one step plus D draft tokens yields AL tokens for
    (1 + ρ·D) step-times: speedup ≈ AL / (1 + ρ·D) (NVIDIA, "Co-designing AI
    models using speculative decoding"; Leviathan et al. 2023 eq. 1 with
    E = AL). A claim above it was measured under other conditions or copied
    from a paper (sglang#5502, vLLM#9565).
    """
    claimed = ctx.metrics.claimed_speedup
    al = ctx.metrics.accept_length
    if claimed is None or al is None:
        return
    d = ctx.metrics.draft_length
    rho = ctx.metrics.draft_depth_ratio
    dep = ctx.deployment
    if d is None:
        bound = al
        shown = f"AL = {fmt(al)}x, the ceiling for any D (D not given)"
    else:
        bound = ctx.metrics.theoretical_speedup or 0.0
        rho_text = fmt(rho) if rho is not None else "0"
        shown = f"AL/(1+ρD) = {fmt(al)}/(1+{rho_text}·{d}) = {fmt(bound)}x"
        if rho is None:
            shown += " (ρ not given, taken as 0)"
    if claimed > bound + SPEEDUP_TOLERANCE:
        hint = " (claims.speedup is a ratio: 2.4 means 2.4x, not percent)" if claimed >= 10 else ""
        yield Hit(
            f"claimed {fmt(claimed)}x exceeds {shown}{hint}{_estimated(ctx)}",
            dep.path("claims", "speedup"),
            f"Lower claims.speedup to at most {fmt(bound)} or re-measure AL and ρ on the "
            "served workload at the claimed batch size.",
        )


@rule(
    "SG105",
    "cache-coherence-missing",
    "warn",
    "Speculation is enabled without cache-coherence / rollback evidence.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              draft_length: 3
              draft_depth_ratio: 0.05
            evidence:
              accept_length: 2.4
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              draft_length: 3
              draft_depth_ratio: 0.05
            evidence:
              accept_length: 2.4
              cache_coherence_eval: true
    """,
)
def cache_coherence_missing(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With `speculation.enabled: true`,
    `evidence.cache_coherence_eval` is `true`.

    **Why.** Rejected draft tokens must be rolled back from the KV cache (and
    from prefix caches, sliding windows and state-space caches) exactly;
    otherwise outputs drift from the target model's while every speed metric
    looks fine. Speculative decoding is lossless only when that rollback is
    tested, e.g. by comparing greedy outputs with and without speculation.
    """
    dep = ctx.deployment
    if not dep.speculation_enabled or dep.evidence.cache_coherence_eval is True:
        return
    for candidate in (
        dep.path("evidence", "cache_coherence_eval"),
        dep.path("evidence"),
    ):
        if ctx.has_path(candidate):
            path = candidate
            break
    else:
        path = dep.path("speculation")
    yield Hit(
        "speculative decoding is enabled without cache-coherence / rollback evidence "
        "(evidence.cache_coherence_eval is not true)",
        path,
        "Compare greedy outputs with and without speculation (rollback of rejected "
        "tokens, prefix cache) and set evidence.cache_coherence_eval: true.",
    )
