"""Rules on the draft length D and the draft depth ratio ρ (SG201–SG204)."""

from __future__ import annotations

from collections.abc import Iterator

from specgate.analysis.derived import Metrics
from specgate.core.concise import join_details
from specgate.core.numbers import fmt
from specgate.rules.evidence import MEASURE_RHO, beta_source, cost_terms, passes_source
from specgate.rules.registry import Hit, RuleContext, rule
from specgate.theory import formulas as theory


def _is_tree(m: Metrics) -> bool:
    """A tree verifies more tokens than a chain of its depth: N_verify > 1 + D."""
    return (
        m.verify_tokens is not None
        and m.draft_length is not None
        and m.verify_tokens > m.draft_length + 1
    )


def _fewest_tiles(m: Metrics) -> int:
    """The tiles at D = 0 (one verify token): ceil(G/M); above 1 when G > M."""
    assert m.query_heads_per_kv is not None
    return theory.attention_tiles(m.query_heads_per_kv, 1, m.attention_tile_rows)


def _one_tile_verify_tokens(m: Metrics) -> int:
    """floor(M/G): the most verify tokens one tile holds (0 when G > M)."""
    assert m.query_heads_per_kv is not None
    return theory.tile_aligned_verify_tokens(m.query_heads_per_kv, 1, m.attention_tile_rows)


def _tile_count(m: Metrics) -> str:
    """The tile count with its numbers put in, for a finding's details."""
    g, n, rows = m.query_heads_per_kv, m.verify_tokens, m.attention_tile_rows
    if g is None or n is None:
        return ""
    return (
        f"tiles = ceil(G·N_verify / M) = ceil({fmt(g * n)} / {rows}) = {m.attention_tiles}: "
        "each tile of M query rows reads the KV head once (docs/theory.md#attention-tiles)"
    )


def _one_tile(m: Metrics) -> str:
    """What keeps verification in one tile, said for this deployment's shape.

    G > M: nothing does; even D = 0 needs ceil(G/M) tiles. A tree (N_verify > 1 + D):
    at most floor(M/G) verify tokens. A chain: D* = floor(M/G) − 1.
    """
    g, rows = m.query_heads_per_kv, m.attention_tile_rows
    assert g is not None
    fewest = _fewest_tiles(m)
    if fewest > 1:
        return (
            f"G = {fmt(g)} > M = {rows}, so even D = 0 needs ceil(G/M) = {fewest} tiles: "
            f"D* = 0 lowers the reads to {fewest} tiles per step but no D keeps one tile"
        )
    if _is_tree(m):
        n_one = _one_tile_verify_tokens(m)
        text = (
            f"at most floor(M/G) = {n_one} verify tokens ({n_one - 1} draft nodes) "
            "keep one tile"
        )
        if m.draft_length is not None and n_one < m.draft_length + 1:
            text += f" (a tree of depth D ≤ {n_one - 1})"
        return text
    return f"D* = {m.attention_optimal_draft_length} keeps one tile"


@rule(
    "SG201",
    "draft-length-tile-misaligned",
    "warn",
    "Attention-dominated decode with D past D* and room left in the last attention tile.",
    fail_example="""
        version: 1
        deployments:
          - name: long-context-maverick
            model:
              query_heads: 40
              kv_heads: 8
            speculation:
              enabled: true
              draft_length: 25
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
    **What it checks.** When `workload.attention_dominated` is true, G and D
    are known and D > D* = floor(M/G) − 1: D is tile aligned, meaning one more
    verify token would need another tile, G·(N_verify + 1) > M·tiles with
    tiles = ceil(G·N_verify / M). M is the tile's rows: 128, 64 for multi-latent
    attention (FlashMLA), or `hardware.attention_tile_rows`. For G dividing M
    this is "G·(1 + D) is a multiple of M". The message names D* (one tile)
    and the tile-aligned D: the largest D with the same number of tiles,
    floor(tiles·M/G) − 1, exact for fractional G. G = 5, D = 25: 130 rows, two
    tiles, so D* = 24 or D = 50. G is per GPU rank when TP is known
    (`hardware.tensor_parallel`, else the serving config's): a rank holds H/TP query
    heads and max(1, KV/TP) KV heads (vLLM's `QKVParallelLinear` replicates KV heads
    when TP > KV), so G = (H/TP)/max(1, KV/TP); Llama-3.1-70B (H 64, KV 8) has G 8 at
    TP 4 and G 4 at TP 16. The message says which G it used; with TP not stated it is
    the model's G at TP 1, the most rows any split has.

    **Why.** Verifying N_verify tokens against one KV head turns a one-row
    matrix-vector product into a G·N_verify-row tile. Up to M rows cost about
    as much as one; past D*, a partly filled extra tile costs as much as a full
    one, so the rows left empty are paid for and unused (NVIDIA, "Co-designing
    AI models using speculative decoding").
    """
    m = ctx.metrics
    g, d, d_star = m.query_heads_per_kv, m.draft_length, m.attention_optimal_draft_length
    n = m.verify_tokens
    if (
        not ctx.deployment.workload.attention_dominated
        or g is None
        or d is None
        or d_star is None
        or m.tile_aligned is not False
        or n is None
    ):
        return
    rows = g * n
    tiles = m.attention_tiles
    if _is_tree(m):
        n_one = _one_tile_verify_tokens(m)
        if n <= n_one:
            return
        aligned_n = m.tile_aligned_verify_tokens
        yield Hit(
            f"N_verify = {n} is past floor(M/G) = {n_one} for {m.grouping.describe()}: "
            f"G·N_verify = "
            f"{fmt(rows)} rows fill {tiles} tiles of {m.attention_tile_rows} with room to "
            f"spare; {_one_tile(m)}, N_verify = {aligned_n} fills {tiles}",
            ctx.deployment.path("speculation", "verify_tokens"),
            _tree_action(m, f"or to the tile-aligned N_verify = {aligned_n}, ")
            + "and re-measure AL there.",
            details=_tile_count(m),
        )
        return
    if d <= d_star:
        return
    target = m.tile_aligned_draft_length
    fewest = _fewest_tiles(m)
    first = f"D* = {d_star}" if fewest == 1 else f"D* = {d_star} ({fewest} tiles)"
    yield Hit(
        f"D = {d} is past D* = {d_star} for {m.grouping.describe()}: G·(1+D) = {fmt(rows)} "
        f"rows fill "
        f"{tiles} tiles of {m.attention_tile_rows} with room to spare; {_one_tile(m)}, "
        f"D = {target} fills {tiles}",
        ctx.deployment.path("speculation", "draft_length"),
        f"Set speculation.draft_length to {first} or to the tile-aligned D = {target}, "
        "and re-measure AL there.",
        details=_tile_count(m),
    )


def _tree_action(m: Metrics, alternative: str = "") -> str:
    """The start of a tree's next action: the one-tile N_verify (and depth, when needed)."""
    n_one = _one_tile_verify_tokens(m)
    depth = ""
    if m.draft_length is not None and n_one < m.draft_length + 1:
        depth = f" with a depth D ≤ {n_one - 1}"
    return (
        f"Set speculation.verify_tokens to {n_one} (one tile){depth} {alternative}"
        if alternative
        else f"Measure the speedup at N_verify = {n_one} (one tile){depth} "
    )


@rule(
    "SG202",
    "attention-draft-length-suggestion",
    "info",
    "Attention-dominated decode with G known and no D: suggests D* = floor(M/G) − 1.",
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
    and `speculation.draft_length` is not given, it suggests D* = floor(M/G) − 1
    (never below 0), M = 128 tile rows (64 for multi-latent attention).

    **Why.** For attention-dominated decode (long contexts, small batches) the
    verification of 1 + D tokens per KV head is nearly free while G·(1 + D) ≤
    M, which makes D* the natural first draft length to measure (NVIDIA,
    "Co-designing AI models using speculative decoding": D = 128/G − 1 for M = 128).
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
            f"no draft length given; for attention-dominated decode at "
            f"{m.grouping.describe()} the attention-optimal draft length is "
            f"D* = floor({m.attention_tile_rows}/G) − 1 = {d_star}",
            ctx.deployment.path("speculation"),
            f"Measure AL at D = {d_star} and record it as speculation.draft_length.",
            details="1 + D verify tokens times G query heads per KV head fill the M rows of "
            "one attention tile at most (docs/theory.md#attention-tiles)",
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
    the speedup S = AL / (β + ρ·passes) there must beat the current one on
    4-decimal values, with the ρ the theory uses (stated, else derived from a
    measured speedup, else the class's typical ρ) for both. A model β is
    recomputed at the larger N_verify (a chain, 1 + D_next, unless
    `evidence.next.verify_tokens` is given). A measured β_m at N_m is extended
    by the chord β(N) = 1 + (β_m − 1)(N − 1)/(N_m − 1), a lower bound above N_m
    while the step time is convex (a dense model, the same attention tile count);
    across a tile boundary or for a mixture-of-experts model it stays β_m (the
    step time only grows with N). Measured β at several N
    (`evidence.verify_cost_ratio_at`) extend their last segment. With a β that low
    the larger D's S is an upper bound, so a loss there is real (docs/validation.md).
    Not when the evidence was measured at another D than the deployment's (SG309
    says it is stale; nothing stale drives advice), and with D only a maximum and
    ρ derived from a measurement, only when the loss holds at both ends of ρ's
    range. Example: β_m 1.30 at N 4, D 3 → 7, AL 2.6 → 3.2, ρ 0.05: S(3) = 2.6 /
    1.45 = 1.7931, β(8) ≥ 1 + 0.3·7/3 = 1.70, S(7) ≤ 3.2 / 2.05 = 1.5610.

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
    al, next_al = ctx.metrics.accept_length or 0, ev.next_accept_length or 0
    why = (
        "the AL gain does not beat the draft cost"
        if next_al > al
        else "AL does not rise with D, so the longer draft only adds cost"
    )
    yield Hit(
        f"raising D {d} → {ev.next_draft_length} (AL {fmt(al)} → "
        f"{fmt(next_al)}) changes the speedup "
        f"{fmt(increase.current_speedup)}x → {fmt(increase.next_speedup)}x at ρ = "
        f"{fmt(ctx.metrics.draft_depth_ratio or 0)} ({ctx.metrics.draft_depth_ratio_source}): "
        f"{why}",
        ctx.deployment.path("evidence", "next"),
        f"Keep D = {d}; raise D only when the measured AL at the larger D gives a higher "
        "AL / (β + ρ·passes).",
        details=join_details(
            f"S at each D = AL / (β(N_verify) + ρ·passes(D)); at D {d}: {cost_terms(ctx.metrics)}",
            "docs/theory.md#optimal-draft-length",
        ),
    )


@rule(
    "SG204",
    "draft-depth-ratio-assumed",
    "note",
    "ρ is not stated: names the ρ the theory used and where it came from.",
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
    **What it checks.** `speculation.draft_depth_ratio` (ρ) is stated whenever
    speculation is enabled or D, AL or a claimed speedup is given (never with
    `speculation.enabled: false`: nothing drafts). Otherwise it
    names the ρ used and its source: `derived`, from a
    measured speedup and AL, ρ = (AL / S_measured − β) / passes (at the D the
    evidence was measured at; `measured` is kept for a measured ρ); else
    `typical`, the hint of the declared mechanism's class (else of the
    recommended class): suffix-ngram ρ ≈ 0 (n-gram/suffix lookup runs no model),
    parallel-draft-head 0.14 (EAGLE, EAGLE-3, Medusa, MLP speculators, DFlash;
    back-solved from measured speedups, docs/validation.md: Spec-Bench EAGLE median
    0.140, EAGLE-3 0.142, SGLang and TensorRT-LLM 70B ≈ 0.14), target-attached-mtp
    0.02 (DeepSeek-V3 MTP, arXiv:2412.19437) and external-small-draft 0.15 (a
    separate small draft model, PARD: about its parameter ratio). With D only a
    maximum (adaptive drafting: llama.cpp
    `--draft-p-min`, SGLang adaptive, vLLM dynamic schedules) the passes per
    step lie between max(1, AL − 1) and D, so the derivation gives a range
    (`metrics.draft_depth_ratio_range`); nothing fails on it, and SG203 and
    SG205 fire only when their advice holds at both ends. With a typical ρ the
    fail rules use ρ = 0 (SG104 the ceiling AL / β; the default floor of SG102)
    and the typical ρ only warns (SG108, SG110). A note never changes the status.
    A derived ρ under a quarter of the lowest ρ per pass published for a drafter
    that runs a model (0.038, docs/validation.md; n-gram and suffix lookups aside)
    is called implausibly low, likely a measurement artefact: a speedup and an AL
    from different runs, concurrencies or prompts give such a ρ.

    **Why.** ρ, the cost of one draft pass relative to one target step
    (Leviathan et al.'s c), decides whether an AL pays. Example: MTP at D = 3,
    151.1 → 320.3 tok/s with AL 2.830: S = 2.1198, so ρ = (2.830 / 2.1198 − 1) / 3
    = 0.1117.
    """
    dep = ctx.deployment
    m = ctx.metrics
    if dep.speculation.draft_depth_ratio is not None or dep.speculation.enabled is False:
        return  # stated; or speculation is off: no draft cost to measure
    if not (
        dep.speculation_enabled
        or m.draft_length is not None
        or m.accept_length is not None
        or m.claimed_speedup is not None
    ):
        return
    rho = fmt(m.draft_depth_ratio or 0)
    if m.draft_depth_ratio_source == "derived":
        message = (
            f"draft depth ratio ρ not stated: the theory used ρ = {rho}, derived from the "
            f"measured speedup {fmt(m.measured_speedup or 0)}x and AL "
            f"{fmt(m.accept_length or 0)}"
        )
        span = m.draft_depth_ratio_range
        if m.draft_depth_ratio_from is not None:
            message = (
                f"draft depth ratio ρ not stated: the theory used ρ = {rho}, derived at "
                f"{m.draft_depth_ratio_from}: the measured speedup "
                f"{fmt(m.measured_speedup or 0)}x is unchanged since then while AL moved"
            )
        elif span is not None:
            message = (
                f"draft depth ratio ρ not stated: derived from the measured speedup "
                f"{fmt(m.measured_speedup or 0)}x and AL {fmt(m.accept_length or 0)}, ρ lies "
                f"between {fmt(span[0])} and {fmt(span[1])}: D = {m.draft_length} is only a "
                "maximum, so the draft passes per step are unknown; nothing fails on it and "
                "advice about another D "
                "holds at both ends"
            )
        elif m.evidence_stale:
            message += " at the D the evidence was measured at"
        if _implausible_rho(ctx):
            message += ": implausibly low, likely a measurement artefact"
        cost = m.verify_cost
        if span is None and cost is not None and cost.bound == "capped":
            message += (
                f", with β capped at AL / S = {fmt(cost.cap or 0)} (the step-time estimate "
                "is above what the measurement allows, so the measured cost AL / S is "
                "shared between β and ρ·passes and ρ is its lower end)"
            )
    else:
        cls = ctx.declared or ctx.recommended
        which = "declared" if ctx.declared else "recommended"
        message = (
            f"draft depth ratio ρ not stated: the theory used ρ ≈ {rho}, typical of the "
            f"{which} class {cls.name}; SG104 and the default AL floor used ρ = 0"
        )
    # the typical ρ is a class's: an unsettled mechanism names the key that settles it
    settle = _mechanism_unsettled(ctx) if m.draft_depth_ratio_source == "typical" else ""
    details = ""
    if " (the step-time estimate is above" in message:
        message, _, why = message.partition(" (the step-time estimate is above")
        details = "the step-time estimate is above" + why.removesuffix(")")
    details = join_details(_rho_details(ctx), _implausible_rho(ctx), details)
    action = (
        f"{MEASURE_RHO}."
        if m.measured_speedup is None
        else "Measure ρ (draft time per pass / target step time) and record it as "
        "speculation.draft_depth_ratio (the ρ used is derived from the measured speedup)."
    )
    yield Hit(message, dep.path("speculation"), settle + action, details=details)


def _rho_details(ctx: RuleContext) -> str:
    """How the ρ used was obtained, with the numbers put in (SG204's details)."""
    m = ctx.metrics
    if m.draft_depth_ratio_from is not None:
        return (
            "a speedup measured with the base revision's AL prices that AL, not this one: "
            "ρ stays as fitted there, so the theory shows the AL change instead of "
            "re-fitting ρ to hide it (docs/theory.md#which-rho)"
        )
    if m.draft_depth_ratio_source == "derived" and m.draft_depth_ratio_range is None:
        al, measured = m.accept_length or 0, m.measured_speedup or 0
        cost = m.verify_cost
        beta = cost.value if cost is not None else 1.0
        return join_details(
            f"ρ = (AL / S − β) / passes = ({fmt(al)} / {fmt(measured)} − {fmt(beta)}) / "
            f"{m.passes}",
            beta_source(m),
            passes_source(m),
            "docs/theory.md#which-rho",
        )
    if m.draft_depth_ratio_source == "derived":
        return "docs/theory.md#which-rho"
    return (
        "a fail may rest only on a stated or measured ρ, never on a class hint "
        "(docs/trust.md#what-a-fail-may-rest-on; the hints: docs/theory.md#which-rho)"
    )


def _mechanism_unsettled(ctx: RuleContext) -> str:
    """The action that settles the mechanism when the engine config was read but left
    it unsettled and the claims file declares none (TGI runs the served model's
    speculator: its config settles it); else ``""``."""
    inputs = ctx.deployment.inputs
    engine = inputs.engine if inputs is not None else None
    if ctx.declared is not None or engine is None or engine.mechanism is not None:
        return ""
    if engine.engine == "tgi" and inputs is not None and inputs.model is None:
        return ("Settle the mechanism: give model.hf_config (TGI runs the speculator of the "
                "model it serves) or state speculation.mechanism. ")
    return "Settle the mechanism: state speculation.mechanism. "


#: The lowest ρ per pass published for a drafter that runs a model (docs/validation.md,
#: "implied ρ per pass": 0.038, the low end of the MTP and other heads' range; EAGLE-3
#: 0.060, draft models 0.055). n-gram and suffix lookups run no model (0.005–0.020).
_LOWEST_MODEL_DRAFT_RHO = 0.038
#: A derived ρ below a quarter of that is far below any published drafter.
_IMPLAUSIBLE_RHO = _LOWEST_MODEL_DRAFT_RHO / 4
#: Mechanisms that draft by lookup, not with a model: a ρ near 0 is what they cost.
_LOOKUPS = ("ngram", "suffix")


def _implausible_rho(ctx: RuleContext) -> str:
    """The comment a derived ρ far below any published drafter gets (``""`` for none):
    below :data:`_IMPLAUSIBLE_RHO` with a mechanism that runs a model (a lookup or an
    unknown mechanism may cost that little)."""
    m = ctx.metrics
    rho = m.draft_depth_ratio
    mechanism = ctx.deployment.speculation.mechanism
    if m.draft_depth_ratio_source != "derived" or rho is None or rho >= _IMPLAUSIBLE_RHO:
        return ""
    if mechanism is None or mechanism in _LOOKUPS:
        return ""
    return (
        f"no published drafter that runs a model costs under {fmt(_LOWEST_MODEL_DRAFT_RHO)} "
        f"a pass (docs/validation.md), and ρ {fmt(rho)} is under a quarter of that: a "
        "speedup this close to AL / β leaves almost no draft cost, as a speedup and an AL "
        "from different runs, concurrencies or prompts give"
    )


@rule(
    "SG205",
    "draft-length-not-optimal",
    "info",
    "The measured per-position profile shows another D with a clearly higher speedup.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 7
              draft_depth_ratio: 0.1
            evidence:
              cache_coherence_eval: true
              metrics:
                format: per-position
                marginal: [0.7, 0.4, 0.2, 0.1, 0.05, 0.02, 0.01]
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
              draft_depth_ratio: 0.1
            evidence:
              cache_coherence_eval: true
              metrics:
                format: per-position
                marginal: [0.7, 0.4, 0.2]
    """,
)
def draft_length_not_optimal(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With a measured per-position profile m_i = P(the first i
    drafts accepted) (vLLM per-position counters or log rates, speculation
    profiles, inline `per-position`, or a histogram), AL(d) = 1 + Σ_{i≤d} m_i
    and S(d) = AL(d) / (β(N_d) + ρ·passes(d)) for 1 ≤ d ≤ D, the measured range
    only. N_d is 1 + d for a chain; for a tree, 1 + the draft nodes on its first d
    levels (`speculation.tree_level_nodes`), else the whole tree's N_verify (an
    upper bound on the cost, never a chain: set `tree_level_nodes` to get a depth
    suggestion for a tree). A measured β is extended below its N by the chord
    through (1, 1), an upper bound while the tile count stays the same (else β_m),
    so S(d) is a lower bound. Not when the profile was measured at another D than
    the deployment's (SG309); with D only a maximum and ρ derived, only when the
    gain holds at both ends of ρ's range.
    S(D) comes from the same profile (AL(D)) when it covers D, from AL only
    when it is shorter, so a stated AL that misses 1 + Σ mᵢ (SG305) is not
    read as a gain. D_opt is the d with the highest S (ties → the smaller d); it fires when
    S(D_opt) ≥ S(D)·(1 + `policy.retune_gain`, default 0.05). Example: m = [.7,
    .4, .2, .1, .05, .02, .01], D = 7, ρ 0.1: S(7) = 1.4588, S(3) = 1.7692, a
    gain of 21 %. Estimates (`iid-rate`) are not profiles.

    **Why.** Each extra draft position adds only its marginal acceptance to AL
    while its cost is paid on every step; past the point where m_d < ρ·S, a
    longer draft loses (NVIDIA co-design blog: raise D only while AL gains beat
    draft cost).
    """
    m = ctx.metrics
    optimal = m.optimal_draft_length
    if optimal is None or m.draft_length is None or optimal.draft_length == m.draft_length:
        return
    if optimal.gain < m.retune_gain:
        return
    current = optimal.curve[-1].speedup
    yield Hit(
        f"the measured profile gives S({optimal.draft_length}) = {fmt(optimal.speedup)}x "
        f"against S({m.draft_length}) = {fmt(current)}x at D = {m.draft_length}: "
        f"D = {optimal.draft_length} is {optimal.gain * 100:.1f} % faster",
        ctx.deployment.path("speculation", "draft_length"),
        f"Set speculation.draft_length to {optimal.draft_length} and confirm the speedup "
        "with a measurement.",
        details=join_details(
            "S(d) = (1 + m₁ + … + m_d) / (β + ρ·passes(d)) over the measured per-position "
            f"rates m; {cost_terms(m)}",
            "docs/theory.md#optimal-draft-length",
        ),
    )


@rule(
    "SG206",
    "attention-tiles-multiplied",
    "info",
    "Attention-dominated decode whose verification fills more than one attention tile.",
    fail_example="""
        version: 1
        deployments:
          - name: long-context-8b
            model:
              query_heads: 64
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
    pass_example="""
        version: 1
        deployments:
          - name: long-context-8b
            model:
              query_heads: 64
              kv_heads: 8
            speculation:
              enabled: true
              draft_length: 15
              draft_depth_ratio: 0.01
            workload:
              attention_dominated: true
            evidence:
              accept_length: 3.1
              cache_coherence_eval: true
    """,
)
def attention_tiles_multiplied(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When `workload.attention_dominated` is true and G and D
    are known: tiles = ceil(G·N_verify / M) is 1 (M = 128 rows, 64 for
    multi-latent attention). G = 8, D = 31: 256 rows, two full tiles. G is per
    rank when TP is known, (H/TP)/max(1, KV/TP) (SG201): at TP 16 Llama-3.1-70B's G is
    4, and D = 31 fills one tile. The message names the G it used.

    **Why.** With more than one tile, verification reads each KV head's cache
    once per tile, so attention time grows with the tile count instead of
    staying flat; D* = floor(M/G) − 1 keeps one tile (NVIDIA, "Co-designing AI
    models using speculative decoding").
    """
    m = ctx.metrics
    tiles = m.attention_tiles
    if (
        not ctx.deployment.workload.attention_dominated
        or tiles is None
        or tiles <= 1
        or m.query_heads_per_kv is None
    ):
        return
    d_star = m.attention_optimal_draft_length
    fewest = _fewest_tiles(m)
    if fewest > 1:
        if tiles <= fewest:
            return  # already the fewest tiles any D can have (G > M)
        action = (
            f"Measure the speedup against D = 0 ({fewest} tiles, the fewest at G = "
            f"{fmt(m.query_heads_per_kv)}); keep speculation only if its AL gain pays for "
            f"{tiles - fewest} extra KV reads per step, or lower G per rank."
        )
    elif _is_tree(m):
        action = (
            _tree_action(m)
            + f"against the current N_verify = {m.verify_tokens}; keep the larger tree only "
            "if its AL gain pays for the extra KV reads."
        )
    else:
        action = (
            f"Measure the speedup at D* = {d_star} against the current D = {m.draft_length}; "
            "keep the current D only if its AL gain pays for the extra KV reads."
        )
    yield Hit(
        f"verification fills {tiles} attention tiles of {m.attention_tile_rows} rows at "
        f"{m.grouping.describe()}, G·N_verify = {fmt(m.query_heads_per_kv)}·"
        f"{m.verify_tokens}: each KV head is "
        f"read {tiles} times per step; {_one_tile(m)}",
        ctx.deployment.path("speculation", "draft_length"),
        action,
        details=_tile_count(m),
    )
