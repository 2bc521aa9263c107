"""Rules on the draft length D and the draft depth ratio ρ (SG201–SG204)."""

from __future__ import annotations

from collections.abc import Iterator

from specgate.numbers import fmt
from specgate.rules.registry import Hit, RuleContext, rule


@rule(
    "SG201",
    "draft-length-tile-misaligned",
    "warn",
    "Attention-dominated decode with D past D* and G·(1+D) not a multiple of 128.",
    fail_example="""
        version: 1
        deployments:
          - name: long-context-8b
            model:
              query_heads: 32
              kv_heads: 8
            speculation:
              enabled: true
              draft_length: 40
              draft_depth_ratio: 0.01
            workload:
              attention_dominated: true
            evidence:
              accept_length: 3.1
              cache_coherence_eval: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: long-context-8b
            model:
              query_heads: 32
              kv_heads: 8
            speculation:
              enabled: true
              draft_length: 31
              draft_depth_ratio: 0.01
            workload:
              attention_dominated: true
            evidence:
              accept_length: 3.1
              cache_coherence_eval: true
    """,
)
def draft_length_tile_misaligned(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When `workload.attention_dominated` is true and G is
    known: if D > D* = floor(128/G) − 1, then G·(1 + D) must be a multiple of
    128 (for tree drafting, G·N_verify). Arithmetic is exact (G = H/KV as a
    fraction). The message names the next aligned D: the smallest D′ ≥ D with
    G·(1 + D′) a multiple of 128 (128 values are tried).

    **Why.** Verifying 1 + D tokens against one KV head turns a one-row
    matrix-vector product into a G·(1 + D)-row tile. Tensor-core tiles hold 128
    rows, so up to D* the extra rows are nearly free; past D*, a partly filled
    extra tile costs as much as a full one (NVIDIA, "Co-designing AI models
    using speculative decoding").
    """
    m = ctx.metrics
    g, d, d_star = m.query_heads_per_kv, m.draft_length, m.attention_optimal_draft_length
    if (
        not ctx.deployment.workload.attention_dominated
        or g is None
        or d is None
        or d_star is None
        or d <= d_star
        or m.tile_aligned is not False
    ):
        return
    rows = g * (m.verify_tokens or d + 1)
    term = "G·(1+D)" if m.verify_tokens in (None, d + 1) else "G·N_verify"
    target = m.tile_aligned_draft_length
    suggestion = (
        f"the next aligned D is {target}" if target is not None else "no D within 128 steps aligns"
    )
    yield Hit(
        f"D = {d} is past D* = {d_star} for G = {fmt(g)}, and {term} = {fmt(rows)} is not a "
        f"multiple of 128; {suggestion}",
        ctx.deployment.path("speculation", "draft_length"),
        f"Set speculation.draft_length to D* = {d_star}"
        + (f" or to the next aligned D = {target}" if target is not None else "")
        + ", and re-measure AL there.",
    )


@rule(
    "SG202",
    "attention-draft-length-suggestion",
    "info",
    "Attention-dominated decode with G known and no D: suggests D* = floor(128/G) − 1.",
    fail_example="""
        version: 1
        deployments:
          - name: long-context-70b
            model:
              query_heads_per_kv: 8
            speculation:
              enabled: false
            workload:
              attention_dominated: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: long-context-70b
            model:
              query_heads_per_kv: 8
            speculation:
              enabled: false
              draft_length: 15
            workload:
              attention_dominated: true
    """,
)
def attention_draft_length_suggestion(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When `workload.attention_dominated` is true, G is known
    and `speculation.draft_length` is not given, it suggests D* = floor(128/G) − 1
    (never below 0).

    **Why.** For attention-dominated decode (long contexts, small batches) the
    verification of 1 + D tokens per KV head is nearly free while G·(1 + D) ≤
    128, which makes D* the natural first draft length to measure (NVIDIA,
    "Co-designing AI models using speculative decoding": D = 128/G − 1).
    """
    m = ctx.metrics
    if (
        ctx.deployment.workload.attention_dominated
        and m.query_heads_per_kv is not None
        and m.draft_length is None
        and m.attention_optimal_draft_length is not None
    ):
        d_star = m.attention_optimal_draft_length
        yield Hit(
            f"no draft length given; for attention-dominated decode at G = "
            f"{fmt(m.query_heads_per_kv)} the attention-optimal draft length is "
            f"D* = floor(128/G) − 1 = {d_star}",
            ctx.deployment.path("speculation"),
            f"Measure AL at D = {d_star} and record it as speculation.draft_length.",
        )


@rule(
    "SG203",
    "draft-increase-not-justified",
    "warn",
    "The larger D in evidence.next gives no higher speedup than the current D.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              draft_length: 7
              draft_depth_ratio: 0.1
            evidence:
              accept_length: 5
              cache_coherence_eval: true
              next:
                draft_length: 14
                accept_length: 5.2
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
              next:
                draft_length: 5
                accept_length: 3.0
    """,
)
def draft_increase_not_justified(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When `evidence.next` records AL measured at a larger D,
    the speedup AL/(1+ρD) there must beat the current one on 4-decimal values
    (same ρ, ρ = 0 when absent).

    **Why.** Raising D adds only the marginal acceptance of the new positions
    to AL, while draft cost grows linearly in D: raise D only while AL gains
    beat draft cost (NVIDIA, "Co-designing AI models using speculative
    decoding"). Example: AL 5 → 5.2 for D 7 → 14 at ρ = 0.1 gives
    2.9412 → 2.1667, a loss.
    """
    increase = ctx.metrics.draft_increase
    ev = ctx.deployment.evidence
    if increase is None or increase.increase:
        return
    d = ctx.metrics.draft_length
    yield Hit(
        f"raising D {d} → {ev.next_draft_length} (AL {fmt(ctx.metrics.accept_length or 0)} → "
        f"{fmt(ev.next_accept_length or 0)}) changes the speedup "
        f"{fmt(increase.current_speedup)}x → {fmt(increase.next_speedup)}x: the AL gain "
        "does not beat the draft cost",
        ctx.deployment.path("evidence", "next"),
        f"Keep D = {d}; raise D only when the measured AL at the larger D gives a higher "
        "AL/(1+ρD).",
    )


@rule(
    "SG204",
    "draft-depth-ratio-assumed",
    "note",
    "ρ is not given: the theory used ρ = 0 (names the mechanism class's ρ hint).",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
            evidence:
              accept_length: 2.4
              cache_coherence_eval: true
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
def draft_depth_ratio_assumed(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `speculation.draft_depth_ratio` (ρ) is given whenever
    speculation is enabled or D, AL or a claimed speedup is given. Otherwise the
    theory used ρ = 0, the most generous bound, and this note names the typical
    ρ of the declared mechanism's class (else of the recommended class). A note
    never changes the status.

    **Why.** ρ, the cost of one draft token relative to one target step
    (Leviathan et al.'s c), decides whether an AL pays: speedup > 1 needs
    ρ < (AL − 1)/D. With ρ = 0 the speedup bound is AL itself.
    """
    dep = ctx.deployment
    m = ctx.metrics
    if m.draft_depth_ratio is not None:
        return
    if not (
        dep.speculation_enabled
        or m.draft_length is not None
        or m.accept_length is not None
        or m.claimed_speedup is not None
    ):
        return
    cls = ctx.declared or ctx.recommended
    which = "declared" if ctx.declared else "recommended"
    yield Hit(
        f"draft depth ratio ρ not given: the theory used ρ = 0; the {which} class "
        f"{cls.name} typically has ρ ≈ {fmt(cls.draft_depth_ratio_hint)}",
        dep.path("speculation"),
        "Measure ρ (draft time per token / target step time) and record it as "
        "speculation.draft_depth_ratio.",
    )
