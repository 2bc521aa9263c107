"""Rules on whether speculation pays (SG106–SG111, docs/theory.md#al-floor-and-guideline,
docs/rules.md and docs/theory.md#proven-verify-cost).

They compare the claim, the measured speedup and the AL with the cost model of
:mod:`specgate.theory.formulas` as :mod:`specgate.analysis.derived` applied it; thresholds live
here.
"""

from __future__ import annotations

from collections.abc import Iterator

from specgate.analysis.derived import Metrics, may_draft_fewer
from specgate.core.concise import join_details
from specgate.core.findings import Severity
from specgate.core.numbers import fmt
from specgate.load.document import NodePath
from specgate.rules.accept_length import (
    SPEEDUP_TOLERANCE,
    claim_ceiling,
    proven_ceiling,
    stale_words,
)
from specgate.rules.estimate_risk import risk
from specgate.rules.evidence import (
    MEASURE_RHO,
    accept_length_source,
    beta_source,
    priced_at_d,
    theory_details,
)
from specgate.rules.registry import Hit, RuleContext, rule
from specgate.theory import formulas as theory

#: SG109: an AL this close to 1 + D means every draft was accepted on every step.
AT_MAXIMUM_TOLERANCE = 1e-9
#: SG111: a measured speedup more than 2 % above the ceiling AL / β.
CEILING_MARGIN = 1.02


def _measured_path(ctx: RuleContext) -> NodePath:
    """Where the measured speedup was written: ``evidence.measured_speedup`` or the
    throughput pair's speculative figure."""
    dep = ctx.deployment
    if dep.evidence.measured_speedup is not None:
        return dep.path("evidence", "measured_speedup")
    candidate = dep.path("evidence", "throughput", "speculative_tokens_per_s")
    return candidate if ctx.has_path(candidate) else dep.path("evidence")


@rule(
    "SG106",
    "speculation-net-loss",
    "fail",
    "Speculation is slower than plain decoding: a claim or measurement below 1x, or S < 1 "
    "with ρ stated.",
    fail_example="""
        version: 1
        deployments:
          - name: qwen2-7b-ngram
            speculation:
              enabled: true
              mechanism: ngram
              draft_length: 5
              draft_depth_ratio: 0
            evidence:
              accept_length: 1.4
              cache_coherence_eval: true
              measured_speedup: 0.885
    """,
    pass_example="""
        version: 1
        deployments:
          - name: qwen2-7b-ngram
            speculation:
              enabled: true
              mechanism: ngram
              draft_length: 5
              draft_depth_ratio: 0
            evidence:
              accept_length: 1.4
              cache_coherence_eval: true
              measured_speedup: 1.2
    """,
)
def speculation_net_loss(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The first that applies, one finding per deployment:
    `claims.speedup` < 1; a measured speedup (`evidence.measured_speedup`, or
    `evidence.throughput` speculative / baseline tokens per second) < 1; the
    theoretical S = AL / (β + ρ·passes) < 1 with ρ stated and β the proven verify
    cost (`metrics.proven_verify_cost_ratio`; an estimate alone
    below 1 is SG112's warning), D known and AL possible (1 ≤ AL ≤ 1 + D: an
    impossible AL is SG103's). A claim below 1 may
    be a percentage gain written as a fraction (+40 % is 1.4, not 0.4): the
    message says so. When the AL is only an estimate
    (`inputs.acceptance.estimate`) the theoretical loss fails only if even AL = 1 + D
    loses, (1 + D) / (β + ρ·passes) < 1 (D 4, ρ 1.2: 5 / 5.8 = 0.8621x), and warns
    otherwise (ρ 0.5: 5 / 3 = 1.6667x). With D only a maximum the theoretical loss
    fails only at the fewest passes a step can take, max(1, AL − 1), and warns when
    only D passes lose (docs/theory.md#d-is-a-maximum): n-gram D 8, AL 1.3, ρ 0.1 gives
    1.3 / 1.8 = 0.7222x at D passes but 1.3 / 1.1 = 1.1818x at one, a warning.

    **Why.** Speculative decoding that is slower than plain decoding is the most
    expensive miss: every request pays for it (vLLM#8439 at 0.885x,
    sglang#6949 at 0.967x, llama.cpp MTP at 0.88x). A deployment that records a
    slowdown must not pass as ready.
    """
    m = ctx.metrics
    dep = ctx.deployment
    action = (
        "Turn speculation off for this deployment, or lower D / the draft cost until the "
        "measured speedup is above 1 (re-measure at the served concurrency)."
    )
    claimed = m.claimed_speedup
    if claimed is not None and claimed < 1:
        yield Hit(
            f"claims.speedup {fmt(claimed)}x is below 1: speculation is slower than plain "
            f"decoding (if you meant +{fmt(claimed * 100)} %, write {fmt(1 + claimed)})",
            dep.path("claims", "speedup"),
            f"If the claim is a gain of {fmt(claimed * 100)} %, write claims.speedup: "
            f"{fmt(1 + claimed)}; if speculation really is slower, turn it off for this "
            "deployment or lower D / the draft cost.",
            details="claims.speedup is a ratio to plain decoding (1 = no gain; "
            "docs/claims-file.md#claims)",
        )
        return
    measured = m.measured_speedup
    if measured is not None and measured < 1:
        yield Hit(
            f"the measured speedup {fmt(measured)}x is below 1: speculation is slower than "
            "plain decoding",
            _measured_path(ctx),
            action,
            details=_measured_source(ctx),
        )
        return
    al, d = m.accept_length, m.draft_length
    if al is None or al < 1 or d is None or (al > 1 + d and not m.evidence_stale):
        return  # an impossible AL (SG103) says nothing about the speed
    if m.draft_depth_ratio_source != "stated":
        return
    # with D only a maximum, a fail prices the fewest passes a step can take and the
    # loss every step drafting D would give warns (docs/theory.md#d-is-a-maximum)
    speedup, passes, at_d = m.proven_speedup, fmt(m.fail_passes), m.speedup_at_d
    severity: Severity | None = None
    details = theory_details(m, dep, "docs/theory.md#cost-model")
    if speedup is not None and not speedup < 1 and at_d is not None and at_d < 1:
        speedup, passes, severity = at_d, str(m.passes), "warn"
        details = join_details(accept_length_source(dep), priced_at_d(m))
    if speedup is not None and speedup < 1:
        upper = m.accept_length_upper if m.accept_length_upper is not None else al
        yield Hit(
            f"AL {fmt(upper)} at cost β + ρ·passes = "
            f"{fmt(m.proven_verify_cost_ratio)} + {fmt(m.draft_depth_ratio or 0)}·{passes} "
            f"gives S = {fmt(speedup)}x < 1{stale_words(m)}: speculation is slower than "
            "plain decoding",
            dep.path("evidence", "accept_length"),
            _theory_action(m),
            severity=severity,
            details=details,
        )


def _theory_action(m: Metrics) -> str:
    """The next action for a loss the theory predicts (nothing measured yet): lower the
    cost terms it names; for a tree also N_verify, and β's concurrency when β > 1."""
    levers = "D / the draft cost (ρ)"
    if m.verify_tokens is not None and m.draft_length is not None and (
        m.verify_tokens > m.draft_length + 1
    ):
        levers = "D, the tree's N_verify (speculation.verify_tokens) or the draft cost (ρ)"
    beta = ""
    if m.proven_verify_cost_ratio > 1:
        beta = f"; β {fmt(m.proven_verify_cost_ratio)} comes from the concurrency and context: "
        beta += "speculation pays less the more sequences decode at once"
    return (
        f"Turn speculation off for this deployment, or lower {levers} until S = AL / "
        f"(β + ρ·passes) is above 1{beta}; then measure the speedup at the served concurrency."
    )


@rule(
    "SG107",
    "claim-over-measurement",
    "fail",
    "The claimed speedup exceeds the measured speedup.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
            evidence:
              accept_length: 2.6
              cache_coherence_eval: true
              measured_speedup: 1.6
            claims:
              speedup: 2
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
            evidence:
              accept_length: 2.6
              cache_coherence_eval: true
              measured_speedup: 1.6
            claims:
              speedup: 1.6
    """,
)
def claim_over_measurement(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `claims.speedup` ≤ the measured speedup + 5·10⁻⁵
    (`evidence.measured_speedup`, or `evidence.throughput` speculative /
    baseline tokens per second at the same workload and concurrency), to the precision
    the measurement is written with: each number is ± half a unit of its last digit as
    written in the claims file (`253` ± 0.5, `2.30` ± 0.005), so a throughput pair's
    ratio lies in (spec − ½u)/(base + ½u) … (spec + ½u)/(base − ½u)
    (`metrics.measured_speedup_range`). The claim is a rounding too when written with
    two or more significant digits: `1.84` stands for 1.835 … 1.845 (`2` is a round
    number, not a rounding of 1.6). Rounding is half up, so a number stands for a
    half-open interval: `1.6` for 1.55 ≤ x < 1.65, `1.7` for 1.65 ≤ x < 1.75. A claim
    above the measured value is the source's own rounding — a note, never a fail — when
    the claim's lowest value lies below the measurement's upper end (at or below an exact
    measurement), computed exactly on the decimals as written: measured 1.6, claimed 1.7
    fails (1.65 is not below 1.65; 1.7 is one step up, not a rounding); measured 1.65,
    claimed 1.7 is a note (1.65 < 1.655: 1.65 rounds half up to 1.7). `specgate doctor`
    reads `--claimed-speedup` and `--measured-speedup` as written the same way. Examples:
    TensorRT-LLM's DeepSeek-R1 blog, MTP 3: 111 → 253 TPS/user, published "2.28x":
    253/111 = 2.2793, interval 252.5/111.5 = 2.2646 … 253.5/110.5 = 2.2941, so 2.28 is a
    note and 2.30 fails (2.295 > 2.2941); sudoingX/qwen38-mtp PR #11: 63.3 → 116.3
    tok/s, published "+84%": 116.3/63.3 = 1.8373, at most 1.8395, and 1.84 is a note
    (1.835 ≤ 1.8395).

    **Why.** A measurement of this deployment beats any theory and any paper: a
    claim above it advertises a speedup users will not see (a 1.2x from a
    single-user test quoted for a server at hundreds of requests, vLLM#19254).
    """
    m = ctx.metrics
    claimed, measured = m.claimed_speedup, m.measured_speedup
    if claimed is None or measured is None or not claimed > measured + SPEEDUP_TOLERANCE:
        return
    span = m.measured_speedup_range
    inputs = _measured_inputs(ctx)
    if m.claim_rounds_measurement:
        within = "" if span is None else f" ({fmt(span[0])}x … {fmt(span[1])}x)"
        yield Hit(
            f"claimed {fmt(claimed)}x rounds the measured {inputs}{fmt(measured)}x: within "
            f"the precision of the numbers as written{within}",
            ctx.deployment.path("claims", "speedup"),
            "Nothing to do; write the measurement's inputs with more digits to narrow the "
            "interval.",
            severity="note",
            details=join_details(_measured_source(ctx), _PRECISION),
        )
        return
    within = "" if span is None else f" (below {fmt(span[1])}x as its inputs are written)"
    yield Hit(
        f"claimed {fmt(claimed)}x exceeds the measured {inputs}{fmt(measured)}x{within}",
        ctx.deployment.path("claims", "speedup"),
        f"Lower claims.speedup to the measured {fmt(measured)} or re-measure at the "
        "served workload and concurrency.",
        excess=claimed / measured if measured > 0 else None,
        details=join_details(_measured_source(ctx), _PRECISION),
    )


#: How a measured speedup's precision is read (SG107's details).
_PRECISION = (
    "each number is ± half a unit of its last digit as written "
    "(docs/theory.md#measured-speedup-precision)"
)


def _measured_source(ctx: RuleContext) -> str:
    """Where the measured speedup came from, for a finding's details."""
    evidence = ctx.deployment.evidence
    if evidence.measured_speedup is not None:
        return f"S_measured {fmt(evidence.measured_speedup)} as evidence.measured_speedup states"
    base, spec = evidence.baseline_tokens_per_s, evidence.speculative_tokens_per_s
    if base is not None and spec is not None:
        return (
            f"S_measured = evidence.throughput speculative / baseline tokens per second = "
            f"{fmt(spec)} / {fmt(base)}"
        )
    return ""


def _measured_inputs(ctx: RuleContext) -> str:
    """``253/111 = `` when the measured speedup is a throughput pair, else ``""``."""
    evidence = ctx.deployment.evidence
    base, spec = evidence.baseline_tokens_per_s, evidence.speculative_tokens_per_s
    if evidence.measured_speedup is not None or base is None or spec is None:
        return ""
    return f"{fmt(spec)}/{fmt(base)} = "


@rule(
    "SG108",
    "claim-over-typical-cost",
    "warn",
    "ρ is neither stated nor measured and the claim exceeds AL / (β + ρ_typical·passes).",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b-draft-model
            speculation:
              enabled: true
              mechanism: draft_model
              draft_length: 5
            evidence:
              accept_length: 3.0
              cache_coherence_eval: true
            claims:
              speedup: 2.5
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b-draft-model
            speculation:
              enabled: true
              mechanism: draft_model
              draft_length: 5
            evidence:
              accept_length: 3.0
              cache_coherence_eval: true
            claims:
              speedup: 1.7
    """,
)
def claim_over_typical_cost(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When ρ is neither stated nor derived from a measurement
    and SG104 (the ceiling at the proven β) did not fire: `claims.speedup` ≤ AL /
    (β + ρ_typical·passes) + 5·10⁻⁵, with β the estimated verify cost
    (`metrics.verify_cost_ratio`) and ρ_typical the hint of the declared
    mechanism's class (else the recommended class; README, "What it checks").
    When that β is an upper bound (`metrics.verify_cost_bound` `upper` or
    `capped`), the bound is priced at the β a warning may rest on instead: the
    routing-locality end of a mixture-of-experts model's range when every other
    term is priced (docs/theory.md#routing-locality), else the proven β; an
    upper-bound β never makes this warning. When the estimated β alone (at ρ = 0)
    already puts the claim out of reach at that β too, SG112 warns instead (one
    cause, one finding). Example: a draft model (ρ ≈
    0.15), D = 5, AL 3: 3 / 1.75 = 1.7143, so a claimed 2.5x warns.

    **Why.** Without ρ the fail test can only use the ceiling AL / β; a claim
    near the ceiling assumes drafting is free, which no trained drafter is. A
    paper's speedup copied next to an AL measured elsewhere is the usual cause
    (vLLM#9565). It warns, not fails: the typical ρ is not this deployment's.
    """
    m = ctx.metrics
    claimed, al = m.claimed_speedup, m.accept_length
    if (
        claimed is None
        or al is None
        or m.draft_depth_ratio_source != "typical"
        or m.draft_length is None
    ):
        return
    ceiling = claim_ceiling(m) or al
    if claimed > ceiling + SPEEDUP_TOLERANCE:
        return  # SG104
    at_risk = risk(m)
    if at_risk is not None and at_risk.claim and at_risk.firm:
        return  # SG112 warns: the estimated β alone puts the claim out of reach
    # an upper-bound β only informs: the bound rests on the β a warning may use
    beta = m.warning_verify_cost_ratio
    bound = m.theoretical_speedup or 0.0
    if beta != m.verify_cost_ratio:
        bound = theory.speedup(al, theory.step_cost(beta, m.typical_draft_depth_ratio, m.passes))
    if claimed > bound + SPEEDUP_TOLERANCE:
        rho = fmt(m.typical_draft_depth_ratio)
        cls = ctx.declared or ctx.recommended
        yield Hit(
            f"claimed {fmt(claimed)}x exceeds AL / (β + ρ·passes) = {fmt(al)} / "
            f"({fmt(beta)} + {rho}·{m.passes}) = {fmt(bound)}x at the typical "
            f"ρ ≈ {rho} of {cls.name} (ρ not stated or measured)",
            ctx.deployment.path("claims", "speedup"),
            f"{MEASURE_RHO}, or lower claims.speedup to {fmt(bound)}.",
            details=join_details(
                accept_length_source(ctx.deployment),
                beta_source(m),
                f"the class hint is what a {cls.name} drafter typically costs, not this "
                "drafter's measured cost, so this warns (docs/theory.md#which-rho)",
            ),
        )


@rule(
    "SG109",
    "accept-length-at-maximum",
    "warn",
    "AL equals 1 + D: every draft was accepted on every step.",
    fail_example="""
        version: 1
        deployments:
          - name: llama2-13b-spec
            speculation:
              enabled: true
              mechanism: draft_model
              draft_length: 16
              draft_depth_ratio: 0.3
            evidence:
              accept_length: 17
              cache_coherence_eval: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: llama2-13b-spec
            speculation:
              enabled: true
              mechanism: draft_model
              draft_length: 4
              draft_depth_ratio: 0.3
            evidence:
              accept_length: 3.1
              cache_coherence_eval: true
    """,
)
def accept_length_at_maximum(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With D ≥ 1: AL is not in [1 + D − 10⁻⁹, 1 + D]
    (above 1 + D is SG103). D is the depth for tree drafting.

    **Why.** A real drafter rejects some tokens. AL = 1 + D means every draft
    was accepted on every step: the drafter is the target itself, acceptance
    is forced (a synthetic or lossy sampler), verification was bypassed, or an
    acceptance rate r = 1.0 was turned into AL = 1 + r·D while the drafter
    rarely drafted (llama.cpp#3919: "100 %" acceptance and no speedup).
    """
    m = ctx.metrics
    al, d = m.accept_length, m.draft_length
    if al is None or d is None or d < 1:
        return
    if 1 + d - AT_MAXIMUM_TOLERANCE <= al <= 1 + d:
        yield Hit(
            f"AL {fmt(al)} equals 1 + D = {1 + d}: every draft accepted on every step "
            "(drafter identical to the target, forced acceptance, or verification bypassed)",
            ctx.deployment.path("evidence", "accept_length"),
            "Check that the target verifies the drafts (lossless acceptance, a drafter other "
            "than the target) and re-measure AL from the engine's counters.",
            details=join_details(
                accept_length_source(ctx.deployment),
                "a real drafter rejects some drafts; AL = 1 + r·D from an acceptance rate "
                "r = 1.0 is the llama.cpp#3919 pattern (docs/theory.md#accept-length-range)",
            ),
        )


@rule(
    "SG110",
    "accept-length-below-guideline",
    "warn",
    "No explicit floor, and AL is below the guideline for a trained drafter or below the "
    "floor at the typical ρ.",
    fail_example="""
        version: 1
        deployments:
          - name: llama3-8b-eagle-k2
            speculation:
              enabled: true
              mechanism: eagle
              draft_length: 2
            evidence:
              accept_length: 1.89
              cache_coherence_eval: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: llama3-8b-eagle-k2
            speculation:
              enabled: true
              mechanism: eagle
              draft_length: 2
            evidence:
              accept_length: 1.89
              cache_coherence_eval: true
              measured_speedup: 1.36
    """,
)
def accept_length_below_guideline(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When no explicit floor is set (policy, CLI or
    configuration), one warning when either applies:
    (a) a trained drafter (mechanism not `ngram`/`suffix`; unknown counts as
    trained) with D ≥ 1 has AL < min(2, 1 + D/2), the seed's floor kept as
    guidance; or (b) ρ is only typical and AL is below the default floor
    computed with that typical ρ and the estimated β: (β + ρ_typical·passes) ×
    (1 + min_gain), never above 1 + D, with β taken as SG108 takes it (never an
    upper-bound β: the routing-locality end, else the proven β; when the estimated β
    alone leaves no gain there too, SG112 warns instead); (b) is skipped when D is
    only a maximum (adaptive drafting: n-gram, p-min, confidence cut-offs), since
    pricing every step at the maximum
    D overstates the draft cost it guesses at. Not when a measured speedup
    already shows a gain of at least `policy.min_gain`, nor when SG102 already
    fails the AL at the default floor.

    **Why.** A fail needs what is stated or measured (SG102). A trained drafter
    below AL 2 at D ≥ 2 usually means a drafter that does not match the served
    traffic or chat template, worth a look even when it still pays; and a
    floor computed at ρ = 0 is generous when the real draft cost is unknown.
    """
    m = ctx.metrics
    al, d = m.accept_length, m.draft_length
    if al is None or d is None or d < 1 or m.accept_length_floor.explicit:
        return
    if m.measured_speedup is not None and m.measured_speedup >= 1 + m.min_gain:
        return
    floor = m.accept_length_floor.value
    if floor is not None and al < floor:
        return  # SG102 already fails this AL
    mechanism = ctx.deployment.speculation.mechanism
    guideline = theory.guideline_accept_length(d)
    dep = ctx.deployment
    measure = (
        f"{MEASURE_RHO}; "
        if m.measured_speedup is None and dep.speculation.draft_depth_ratio is None
        else "Measure ρ (speculation.draft_depth_ratio); "
        if dep.speculation.draft_depth_ratio is None
        else ""
    )
    action = (
        f"{measure}improve the drafter's match to the traffic, or set "
        "policy.min_accept_length to the floor this mechanism should keep."
    )
    action = action[0].upper() + action[1:]
    if mechanism not in ("ngram", "suffix") and al < guideline:
        yield Hit(
            f"AL {fmt(al)} is below the guideline {fmt(guideline)} = min(2, 1 + D/2) at D = {d} "
            "for a trained drafter",
            dep.path("evidence", "accept_length"),
            action,
            details=join_details(
                accept_length_source(dep),
                f"mechanism {mechanism or 'not stated'}: n-gram and suffix drafts are exempt; "
                "the seed's AL floor, kept as guidance (docs/theory.md#al-floor-and-guideline)",
            ),
        )
        return
    at_risk = risk(m)
    if at_risk is not None and at_risk.gain and at_risk.firm:
        return  # SG112 warns: the estimated β alone leaves no gain
    if m.draft_depth_ratio_source == "typical" and not may_draft_fewer(dep.speculation):
        typical_floor = theory.default_accept_length_floor(
            theory.step_cost(m.warning_verify_cost_ratio, m.typical_draft_depth_ratio, m.passes),
            m.min_gain,
            d,
        )
        if al < typical_floor:
            yield Hit(
                f"AL {fmt(al)} is below {fmt(typical_floor)}, the default floor at the typical "
                f"ρ ≈ {fmt(m.typical_draft_depth_ratio)} (ρ not stated or measured)",
                dep.path("evidence", "accept_length"),
                action,
                details=join_details(
                    accept_length_source(dep),
                    f"floor = (β + ρ·passes) × (1 + min_gain) = ({fmt(m.verify_cost_ratio)} + "
                    f"{fmt(m.typical_draft_depth_ratio)}·{m.passes}) × {fmt(1 + m.min_gain)}",
                    beta_source(m),
                    "docs/theory.md#al-floor-and-guideline",
                ),
            )


@rule(
    "SG111",
    "measured-speedup-over-ceiling",
    "warn",
    "The measured speedup exceeds the ceiling AL / β, or AL / (β + ρ·passes) with ρ "
    "stated, by more than 2 %.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: true
              mechanism: eagle3
              draft_length: 3
              draft_depth_ratio: 0.05
            evidence:
              accept_length: 1.9
              cache_coherence_eval: true
              measured_speedup: 2.4
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
              accept_length: 2.9
              cache_coherence_eval: true
              measured_speedup: 2.4
    """,
)
def measured_speedup_over_ceiling(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The measured speedup ≤ AL / β × 1.02, with β the proven
    verify cost (`metrics.proven_verify_cost_ratio`: a measured β,
    else the step-time model with the context length stated, else 1). The 2 %
    absorbs run-to-run noise.

    **Why.** Even free drafting cannot emit more than AL tokens per β
    step-times, so a measurement above the ceiling means the AL and the
    measurement cannot both be right: AL from another workload or D, a baseline
    run slower than the real plain decoding (other batch size, cold cache), or
    the speculative run measured with prefix caching the baseline lacked.

    With ρ stated (`speculation.draft_depth_ratio`) and the evidence measured at the
    served D, the measured speedup is held to AL / (β + ρ·passes) × 1.02 too (passes
    priced as SG104 prices them): a measurement above it shows the stated ρ (or the AL)
    is wrong, since S = AL / (β + ρ·passes) gives ρ ≤ (AL / S − β) / passes. The finding
    sits on the stated ρ and names the most ρ the measurement allows; a claim at or
    below the measurement is not failed by SG104 for it. It warns as the ceiling does: the
    repository states both numbers, and which one is wrong (ρ, AL, or a measurement of
    another run) only a new measurement settles. Example: AL 2.4, D 3, ρ 0.05, β 1,
    measured 2.3: 2.4 / (1 + 0.05·3) = 2.087x, and 2.3 > 2.087 × 1.02 = 2.1287, so it
    warns; the measurement allows ρ ≤ (2.4 / 2.3 − 1) / 3 = 0.0145.
    """
    m = ctx.metrics
    measured, ceiling = m.measured_speedup, proven_ceiling(m)
    if measured is None or ceiling is None:
        return
    if not measured > ceiling * CEILING_MARGIN:
        yield from _measured_over_stated_rho(ctx, measured)
        return
    yield Hit(
        f"the measured {fmt(measured)}x exceeds the ceiling AL / β = {fmt(ceiling)}x by more than "
        "2 %: the AL and the measurement cannot both be right",
        _measured_path(ctx),
        "Re-measure AL and the speedup in the same run (same workload, D and concurrency, "
        "the baseline with speculation off and nothing else changed).",
        details=join_details(
            accept_length_source(ctx.deployment),
            _measured_source(ctx),
            beta_source(m),
            "S ≤ AL / β at any draft cost ρ ≥ 0; 2 % allows run-to-run noise "
            "(docs/theory.md#speedup-ceiling-and-break-even)",
        ),
    )


def _measured_over_stated_rho(ctx: RuleContext, measured: float) -> Iterator[Hit]:
    """SG111 with ρ stated: the measurement above AL / (β + ρ·passes) by more than 2 %
    contradicts the stated ρ; names the most ρ the measurement allows."""
    m = ctx.metrics
    bound, al = m.proven_speedup, m.accept_length
    if (
        m.draft_depth_ratio_source != "stated"
        or m.evidence_stale
        or bound is None
        or al is None
        or not m.fail_passes > 0
        or not measured > bound * CEILING_MARGIN
    ):
        return
    beta, rho, passes = m.proven_verify_cost_ratio, m.proven_draft_depth_ratio, m.fail_passes
    most = max(0.0, (al / measured - beta) / passes)
    dep = ctx.deployment
    stated = dep.path("speculation", "draft_depth_ratio")
    yield Hit(
        f"the measured {fmt(measured)}x exceeds AL / (β + ρ·passes) = {fmt(bound)}x at the "
        f"stated ρ {fmt(rho)} by more than 2 %: the measurement allows ρ ≤ {fmt(most)}",
        stated if ctx.has_path(stated) else _measured_path(ctx),
        f"Correct speculation.draft_depth_ratio to the measured draft cost (at most "
        f"{fmt(most)} by this measurement), or re-measure AL and the speedup in the same run.",
        details=join_details(
            f"{fmt(al)} / ({fmt(beta)} + {fmt(rho)}·{fmt(passes)}) = {fmt(bound)}x; "
            f"ρ ≤ (AL / S − β) / passes = ({fmt(al)} / {fmt(measured)} − {fmt(beta)}) / "
            f"{fmt(passes)} = {fmt(most)}: the stated ρ and the measurement cannot both be right",
            accept_length_source(dep),
            _measured_source(ctx),
            beta_source(m),
            "S ≤ AL / (β + ρ·passes); 2 % allows run-to-run noise (docs/theory.md#cost-model)",
        ),
    )
