"""Rule SG104: a claimed speedup above what the theory allows, AL / (β + ρ·passes)
with the proven β and ρ stated, else the ceiling AL / β (its bounds:
:mod:`specgate.rules.accept_length`)."""

from __future__ import annotations

from collections.abc import Iterator

from specgate.core.concise import join_details
from specgate.core.numbers import fmt
from specgate.rules.accept_length import (
    SPEEDUP_TOLERANCE,
    claim_backed_by_measurement,
    claim_ceiling,
    estimated,
    proven_label,
    stale_words,
)
from specgate.rules.evidence import (
    accept_length_source,
    beta_source,
    passes_source,
    priced_at_d,
    rho_source,
)
from specgate.rules.registry import Hit, RuleContext, rule


@rule(
    "SG104",
    "claimed-speedup-over-theory",
    "fail",
    "The claimed speedup exceeds AL / (β + ρ·passes) with ρ stated or measured, "
    "else the ceiling AL / β.",
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
    **What it checks.** `claims.speedup` ≤ AL / (β + ρ·passes) + 5·10⁻⁵, with
    ρ stated (`speculation.draft_depth_ratio`); when ρ is not stated, the bound
    is the ceiling AL / β (ρ = 0: a claim above it is impossible at any draft
    cost; SG108 warns against the typical ρ). With D unknown the bound is the
    ceiling too. passes is D for per-token drafting and 1 for a one-pass
    drafter. β is the *proven* verify cost at the deployment's concurrency
    (`metrics.proven_verify_cost_ratio`; README, "What it checks"): a measured β; else the
    step-time model (README, "What it checks": step time T(B, N); checked against
    published measurements in docs/validation.md) with `workload.context_length`
    stated, priced to hold for any expert routing and all-reduce latency; else 1.
    What only the estimated β says (the roofline without a context length, uniform
    expert routing) is SG112's warning, never this fail. The proven β of a modelled step
    allows host overhead (scheduling, sampling, launches, the API server) of up to 62 %
    of a plain step's wall time, paid by both steps: β_proven = 1 + (β_model − 1)·0.38
    (the largest share published engine profiles found: vLLM v0.5.3, Llama-3-8B on one
    H100, 38 % GPU time; vLLM blog 2024-09-05). So a claim within that overhead of the
    modelled bound warns (SG112) and only a claim above AL / (β_proven + ρ·passes)
    fails. At β = 1 (no KV, MoE, FP8, TP or prefill inputs) nothing changes. The
    tolerance lets a claim written to 4 decimals pass. With ρ derived from a measured
    speedup the theory equals the measurement, so SG107 judges the claim instead.

    A claim at or below the deployment's own measured speedup (to the precision both
    are written with, as SG107 reads them) is backed by the measurement and never
    fails here: when the measurement itself exceeds the bound, the stated ρ (or AL)
    and the measurement cannot both be right, and SG111 names that. Example: AL 2.4,
    D 3, ρ 0.05 stated, measured 2.3, claimed 2.2: the bound 2.4 / 1.15 = 2.087x is
    below the measurement, so SG104 is silent and SG111 warns at the stated ρ (the
    measurement allows ρ ≤ (2.4 / 2.3 − 1) / 3 = 0.0145).

    With D only a maximum (n-gram and suffix proposers, llama.cpp `--draft-p-min`, a
    confidence cut-off) the passes are the fewest a step can take, max(1, AL − 1)
    (docs/theory.md#d-is-a-maximum): a claim above the bound priced at D passes but
    within that one warns. N-gram D 8, AL 2.0, ρ 0.05: 2 / 1.4 = 1.4286x at D passes,
    2 / 1.05 = 1.9048x at one; a claimed 1.6x warns, 2.0x fails.

    With the evidence measured at another D than the config serves (SG309 fails that
    when the measurement states its D; SG403 when the base revision of `--baseline` or
    `--staged` had another D and the same AL and evidence), the AL in the bound is
    the most AL can be at the served D: for chain drafting the first D positions
    draft the same tokens, so a longer chain accepts at most AL + ΔD·
    (AL − 1)/D (each new position at most the last one's rate, which is at most the
    mean) and a shorter one at most AL; for a tree only 1 + D holds. Example: AL 2.7 at
    D 3 served at D 4 with ρ 0.06: AL(4) ≤ 2.7 + 1.7/3 = 3.2667, S ≤ 3.2667/1.24 =
    2.6344, so a claimed 2.2 is not failed on the stale AL (2.7/1.24 = 2.1774 is a lower
    bound there, not an upper one).

    An AL that is only an estimate (`inputs.acceptance.estimate` in JSON: `iid-rate`,
    llama.cpp timings, a D that is only a maximum …) may be anything in [1, 1 + D]: the
    claim fails only when it is above the bound at AL = 1 + D, which rests on stated
    numbers alone, and warns otherwise. D 4, ρ 0.05: no AL allows more than 5 / 1.2 =
    4.1667x, so a claimed 100x fails behind any estimate, while 3.5x over an estimated
    AL 1.9375 (1.6146x) warns.

    **Why.** One step verifies N_verify tokens for β step-times and drafting
    costs ρ per pass, yielding AL tokens: speedup = AL / (β + ρ·passes)
    (NVIDIA, "Co-designing AI models using speculative decoding"; Leviathan et
    al. 2023 eq. 1 with E = AL; β from the roofline; README, "What it checks"). A claim
    above it was measured under other conditions or copied from a paper
    (sglang#5502, vLLM#9565).
    """
    m = ctx.metrics
    claimed = m.claimed_speedup
    al = m.accept_length
    if claimed is None or al is None or m.draft_depth_ratio_source in ("measured", "derived"):
        return
    if claim_backed_by_measurement(m):
        # the deployment's own measurement backs the claim: a measurement above the bound
        # contradicts the stated ρ or AL, which SG111 names (never "claim less than you
        # measured")
        return
    d = m.draft_length
    dep = ctx.deployment
    beta = m.proven_verify_cost_ratio
    # the β a fail uses is the proven one: named so where the estimate differs (the
    # metrics line and the job summary show both)
    proven = proven_label(m)
    beta_text = "" if beta == 1 else f" at {proven or 'β'} = {fmt(beta)}"
    upper = m.accept_length_upper if m.accept_length_upper is not None else al
    with_proven = f" with the {proven} {fmt(beta)}" if proven else ""
    if d is None:
        bound = claim_ceiling(m) or al
        shown = f"the ceiling AL / β = {fmt(bound)}x for any D (D not given){beta_text}"
    elif m.draft_depth_ratio_source != "stated":
        bound = claim_ceiling(m) or al
        shown = (
            f"the ceiling AL / β{with_proven} = {fmt(upper)} / {fmt(beta)} = {fmt(bound)}x, "
            "true at any draft cost (ρ not stated or measured)"
        )
    else:
        # with D only a maximum, at the fewest passes a step can take
        # (docs/theory.md#d-is-a-maximum)
        bound = m.proven_speedup or 0.0
        rho = fmt(m.proven_draft_depth_ratio)
        shown = (
            f"AL / (β + ρ·passes){with_proven} = {fmt(upper)} / ({fmt(beta)} + "
            f"{rho}·{fmt(m.fail_passes)}) = {fmt(bound)}x"
        )
    shown += stale_words(m)
    if claimed <= bound + SPEEDUP_TOLERANCE:
        yield from _over_at_d(ctx, claimed, upper, beta)
        return
    hint = " (claims.speedup is a ratio: 2.4 means 2.4x, not percent)" if claimed >= 10 else ""
    passes = ""
    if (
        m.draft_passes == "per_token"
        and dep.speculation.mechanism == "medusa"
        and d is not None
        and d > 1
        and m.draft_depth_ratio_source == "stated"
        and dep.speculation.draft_passes is None
    ):
        passes = (
            " Medusa heads draft every position from one forward (vLLM's and TGI's "
            "do): if yours do, set speculation.draft_passes: single, and the "
            f"draft cost is ρ·1, not ρ·{d}."
        )
    yield Hit(
        f"claimed {fmt(claimed)}x exceeds {shown}{hint}{estimated(ctx)}",
        dep.path("claims", "speedup"),
        (
            "Measure AL from the engine's counters on the served workload (this AL is "
            f"only an estimate), or lower claims.speedup to at most {fmt(bound)}.{passes}"
            if dep.accept_length_estimate is not None
            else f"Lower claims.speedup to at most {fmt(bound)} or re-measure AL and ρ "
            f"on the served workload at the claimed batch size.{passes}"
        ),
        excess=claimed / bound if bound > 0 else None,
        details=join_details(
            accept_length_source(dep),
            beta_source(m),
            rho_source(m) if m.draft_depth_ratio_source == "stated" else "",
            passes_source(m, fail=True) if m.draft_depth_ratio_source == "stated" else "",
            "docs/theory.md#cost-model",
        ),
    )


def _over_at_d(ctx: RuleContext, claimed: float, upper: float, beta: float) -> Iterator[Hit]:
    """A claim within the bound at the fewest passes but above it with every step
    drafting D, when D is only a maximum: a warning (docs/theory.md#d-is-a-maximum)."""
    m = ctx.metrics
    at_d = m.speedup_at_d
    if at_d is None or m.draft_depth_ratio_source != "stated":
        return
    if not claimed > at_d + SPEEDUP_TOLERANCE:
        return
    dep = ctx.deployment
    yield Hit(
        f"claimed {fmt(claimed)}x exceeds AL / (β + ρ·D) = {fmt(upper)} / ({fmt(beta)} + "
        f"{fmt(m.proven_draft_depth_ratio)}·{m.passes}) = {fmt(at_d)}x if every step drafts "
        f"D = {m.passes}{estimated(ctx)}",
        dep.path("claims", "speedup"),
        "Measure the speedup on the served workload (evidence.measured_speedup) or the mean "
        f"draft passes per step; lower claims.speedup to at most {fmt(at_d)} if most steps "
        "draft D tokens.",
        severity="warn",
        details=join_details(
            accept_length_source(dep), beta_source(m), rho_source(m), priced_at_d(m)
        ),
    )
