"""Rules on the measured accept length AL (SG101–SG103, SG105) and the bounds a claimed
speedup is held to (SG104 itself: :mod:`specgate.rules.speedup_claim`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from specgate.analysis.derived import Metrics
from specgate.core.concise import join_details
from specgate.core.findings import Severity
from specgate.core.numbers import fmt
from specgate.load.document import NodePath
from specgate.rules.evidence import accept_length_source, cost_terms, priced_at_d
from specgate.rules.registry import Hit, RuleContext, rule

if TYPE_CHECKING:
    from specgate.model.referenced import EngineUnread


def estimated(ctx: RuleContext) -> str:
    """`` (an estimate from FORMAT data)`` when the AL judged was only estimated."""
    acceptance = ctx.deployment.accept_length_estimate
    if acceptance is None:
        return ""
    # imported for an estimated AL only (the words of docs/trust.md#names-say-how-a-number-is-known)
    from specgate.rules.estimates import estimate_label

    return estimate_label(acceptance)


#: A claim written to 4 decimals passes when it rounds the exact bound up.
SPEEDUP_TOLERANCE = 5e-5


def claim_backed_by_measurement(m: Metrics) -> bool:
    """Whether the claim is at or below the deployment's own measured speedup (to the
    precision both are written with, :attr:`Metrics.claim_rounds_measurement`): the
    measurement backs it, so no theory bound fails it (SG104); a measurement above the
    bound is the stated values' contradiction (SG111), not the claim's."""
    claimed, measured = m.claimed_speedup, m.measured_speedup
    if claimed is None or measured is None:
        return False
    return claimed <= measured + SPEEDUP_TOLERANCE or m.claim_rounds_measurement


def proven_ceiling(m: Metrics) -> float | None:
    """AL / β with the proven β (docs/theory.md#proven-verify-cost): no draft cost, the least β can
    be."""
    al = m.accept_length
    if al is None or al < 1:
        return None
    return al / m.proven_verify_cost_ratio


def claim_ceiling(m: Metrics) -> float | None:
    """The ceiling a claim is held to: the most AL can be at the served D
    (``metrics.accept_length_upper``: AL itself unless the evidence was measured at
    another D) over the proven β."""
    al = m.accept_length
    if al is None or al < 1:
        return None
    upper = m.accept_length_upper if m.accept_length_upper is not None else al
    return upper / m.proven_verify_cost_ratio


def stale_words(m: Metrics) -> str:
    """How the AL bound was read when the evidence is stale, else ``""``."""
    al, upper = m.accept_length, m.accept_length_upper
    if not m.evidence_stale or al is None or upper is None:
        return ""
    at, by = m.accept_length_measured_at, m.accept_length_measured_by
    if at is None:
        where = "at another D, SG309"
    elif by in (None, "evidence"):
        where = f"at D = {at}, SG309"
    else:
        where = f"at D = {at}, the D at {by} (SG403)"
    return (
        f" (AL at D = {m.draft_length} is at most {fmt(upper)}: the AL {fmt(al)} was "
        f"measured {where})"
    )


def proven_label(m: Metrics) -> str:
    """``"proven β"`` when the proven verify cost a fail uses differs from the estimate
    the report shows (newuser-r4 #6: a message's 1.1355 beside a metrics line's
    1.3565), else ``""``."""
    estimate = m.verify_cost
    if estimate is None or abs(estimate.value - m.proven_verify_cost_ratio) <= 5e-5:
        return ""
    return "proven β"


def claim_bound(m: Metrics) -> float | None:
    """What SG104 holds a claim to: AL / (β + ρ·passes) with the proven β and ρ stated,
    else the proven ceiling; ``None`` when SG104 does not judge (ρ derived from a
    measurement, or no AL)."""
    if m.accept_length is None or m.draft_depth_ratio_source in ("measured", "derived"):
        return None
    if m.draft_length is not None and m.draft_depth_ratio_source == "stated":
        return m.proven_speedup
    return claim_ceiling(m)


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
    (vLLM issues #8620 and #41789: heads deployed with AL ≈ 1.0). A measured
    speedup alone does not give AL (it mixes AL with β and ρ): with only
    `evidence.measured_speedup` recorded, the next action is `specgate measure`
    around the same benchmark, which reads AL from the engine's counters. Metrics
    that derive AL from D (`iid-rate`, `draft-acceptance-rate`) with no D stated
    and the serving config's D not settled (SG312-SG315) give no AL: a warning,
    since the evidence is there but cannot be turned into an AL.
    """
    dep = ctx.deployment
    if dep.speculation_enabled and dep.evidence.accept_length is None:
        engine = _engine(ctx)
        action = (
            f"Measure AL on the served workload ({_how_to_measure(engine)}) and record "
            "it as evidence.accept_length or point evidence.metrics at the data."
        )
        details = (
            "AL counts tokens per target step, bonus token included; every speedup bound "
            "S = AL / (β + ρ·passes) needs it (docs/theory.md#cost-model)"
        )
        unread = dep.inputs.acceptance_unread if dep.inputs is not None else None
        if unread is not None:
            # the evidence is given, but its AL rests on a D not settled: warn
            # (issue 24: degrade, never stop; docs/engines.md#unsettled-values)
            yield Hit(
                f"the accept length cannot be derived: {unread}",
                dep.path("evidence", "metrics"),
                "State speculation.draft_length (or draft_length in the metrics block) "
                "as the engine runs it, or record evidence.accept_length.",
                details=details,
                severity="warn",
            )
            return
        if dep.evidence.measured_speedup is not None:
            action = _from_speedup_only(engine)
            details += (
                f"; the recorded speedup {fmt(dep.evidence.measured_speedup)}x mixes AL "
                "with β and ρ, so AL cannot be read back from it"
            )
        unusable = dep.inputs.metrics_unread if dep.inputs is not None else None
        yield Hit(
            "speculative decoding is enabled but no measured accept length "
            "(evidence.accept_length) is given"
            + ("" if unusable is None else f": evidence.metrics gives none ({_where(unusable)})"),
            dep.path("speculation"),
            action,
            details=details,
        )


def _where(unusable: EngineUnread) -> str:
    """Where SG316 stands, for SG101's message: ``SG316 at FILE:LINE``."""
    line = "" if unusable.line is None else f":{unusable.line}"
    return f"SG316 at {unusable.file}{line}"


#: ``specgate measure``'s source of an engine's counters (issue 26: when only a
#: throughput speedup is recorded, SG101 says how to get AL from the same run).
_MEASURE_FROM = {
    "vllm": "--metrics-url http://HOST:PORT/metrics",
    "sglang": "--from SERVER_LOG --metrics-format sglang-log",
    "trtllm": "--from ITERATION_STATS --metrics-format trtllm-iteration-stats",
    "llamacpp": "--from SERVER_LOG --metrics-format llamacpp-log",
}


def _from_speedup_only(engine: str | None) -> str:
    """SG101's next action when evidence.measured_speedup is recorded without an AL: a
    throughput ratio does not give AL (it mixes AL with β and ρ), the engine's
    acceptance counters over the same benchmark do."""
    source = _MEASURE_FROM.get(engine or "vllm")
    if source is None:  # transformers logs no AL
        return (
            "A measured speedup (evidence.measured_speedup) does not give AL: "
            f"{_how_to_measure(engine)}, and record it as evidence.accept_length."
        )
    return (
        "A measured speedup (evidence.measured_speedup) does not give AL: "
        f"`specgate measure {source} -- BENCHMARK` around the benchmark that measured it "
        "prints the AL from the engine's counters as evidence.accept_length "
        "(`--write CLAIMS --deployment NAME` writes it into the claims file)."
    )


#: Where each engine reports AL (docs/engines.md#metrics-formats).
_MEASURE_AL = {
    "vllm": "vLLM: 1 + Δaccepted / Δdrafts of the vllm:spec_decode_* counters, "
    "evidence.metrics format vllm-prometheus or vllm-log",
    "sglang": "SGLang: avg_spec_accept_length of /get_server_info or the decode log's "
    "accept len, format sglang-server-info or sglang-log",
    "trtllm": "TensorRT-LLM: the iteration stats' specDecodingStats, "
    "format trtllm-iteration-stats",
    "llamacpp": "llama.cpp: the server's draft statistics line, format llamacpp-log",
    "transformers": "transformers logs no AL: count tokens emitted per target forward "
    "pass of assisted generation (new tokens / target calls)",
}


def _engine(ctx: RuleContext) -> str | None:
    inputs = ctx.deployment.inputs
    if inputs is not None and inputs.engine is not None:
        return inputs.engine.engine
    return ctx.deployment.speculation.engine


def _how_to_measure(engine: str | None) -> str:
    if engine in _MEASURE_AL:
        return _MEASURE_AL[engine]
    return "tokens emitted per target step, bonus token included, from the engine's counters"


@rule(
    "SG102",
    "accept-length-below-floor",
    "fail",
    "The measured accept length is below the AL floor (default: break-even × (1 + min_gain)).",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b-draft-model
            speculation:
              enabled: true
              mechanism: draft_model
              draft_length: 8
              draft_depth_ratio: 0.15
            evidence:
              accept_length: 2.3
              cache_coherence_eval: true
    """,
    pass_example="""
        version: 1
        deployments:
          - name: coder-ngram
            speculation:
              enabled: true
              mechanism: ngram
              draft_length: 8
              draft_depth_ratio: 0
            evidence:
              accept_length: 1.8
              cache_coherence_eval: true
    """,
)
def accept_length_below_floor(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** AL ≥ the AL floor (strict comparison, no tolerance).
    An explicit floor (`policy.min_accept_length`, `--min-accept-length`,
    `[tool.specgate] min-accept-length`) is used as written; above 1 + D it is
    unreachable and the message says so. The default floor (D ≥ 1) is the
    break-even AL times 1 + `policy.min_gain` (default 0.10), never above 1 + D:
    break-even = β + ρ·passes, the AL at which speculation only matches plain
    decoding, with ρ stated or derived from a measured speedup, else ρ = 0, and β
    the proven verify cost (`metrics.proven_verify_cost_ratio`: a measured β, else
    the step-time model with `workload.context_length` stated, else 1; README,
    "What it checks"): a fail rests on what is stated or measured; a typical ρ or an
    estimated β only warns (SG110, SG112). At D = 0 there is no default floor;
    with D unknown it is β × (1 + min_gain). An AL below 1 is impossible and
    SG103's alone.

    N-gram, D = 8, ρ 0: floor 1.1, so AL 1.8 passes (S = 1.8). Stated ρ 0.15,
    D = 8: break-even 2.2, floor 2.42. With D only a maximum the default floor a fail
    uses prices the fewest passes a step can take, max(1, AL − 1)
    (docs/theory.md#d-is-a-maximum), and an AL below the floor at D passes but not below
    that one warns: n-gram D 8, ρ 0.05, AL 1.5 is below (1 + 0.05·8)·1.1 = 1.54 but not
    below (1 + 0.05·1)·1.1 = 1.155, a warning.

    With ρ derived from a measured speedup, break-even = AL / S_measured, so the
    default floor becomes a gain test: SG102 then means the measured speedup is
    below 1 + min_gain (a measured 1.05x fails at the default 10 %;
    `policy.min_gain: 0` accepts any gain).

    With the evidence measured at another D than the config serves (SG309), the AL
    compared is the most AL can be at the served D (see SG104). An AL that is only an
    estimate (`inputs.acceptance.estimate` in JSON: `iid-rate`, llama.cpp timings, a D
    that is only a maximum …) may be anything in [1, 1 + D]: the fail stands only when
    even 1 + D is below the floor (an explicit floor above 1 + D, or the measured gain
    test above, which the AL does not move), else it warns. Estimated AL 1.9375 at D 4
    under `policy.min_accept_length: 3` warns (an AL of 5 would pass); under 6 it fails.

    **Why.** A drafter whose acceptance collapsed costs draft and verification
    work for almost no extra tokens; TensorRT-LLM's CI keeps AL floors for the
    same reason (`acceptance_length.yaml`, "a collapse tripwire"). A fixed floor
    of 2 failed healthy n-gram and EAGLE k = 2 deployments, so the default follows
    the deployment's own break-even (S = AL / cost; README, "What it checks").
    """
    al = ctx.metrics.accept_length
    floor = ctx.metrics.accept_length_floor
    # With the evidence measured at another D, the most AL can be at the served D
    upper = ctx.metrics.accept_length_upper if ctx.metrics.accept_length_upper else al
    # With D only a maximum the default floor a fail uses prices the fewest passes; the
    # floor with every step drafting D warns (docs/theory.md#d-is-a-maximum).
    at_d = ctx.metrics.accept_length_floor_at_d
    severity: Severity | None = None
    if (
        floor.source == "default"
        and at_d is not None
        and upper is not None
        and floor.value is not None
        and not upper < floor.value
        and upper < at_d
    ):
        floor, severity = floor._replace(value=at_d), "warn"
    if al is None or upper is None or floor.value is None or not upper < floor.value:
        return
    if not al >= 1:
        return  # an impossible AL is SG103's finding (one cause, one finding)
    dep = ctx.deployment
    m = ctx.metrics
    d = m.draft_length
    if floor.source == "default":
        gain = fmt(m.min_gain)
        if (
            m.draft_depth_ratio_source == "derived"
            and not m.evidence_stale
            and m.draft_depth_ratio_from is None
        ):
            # β cancels: break-even AL = AL / S_measured, so the floor is (1 + min_gain)
            # × AL / S_measured (real-r4 #6: the message named no such product)
            measured = m.measured_speedup or 0
            where = (
                f"the default floor (1 + min_gain) × AL / S_measured = {fmt(1 + m.min_gain)} × "
                f"{fmt(al)} / {fmt(measured)}: the measured {fmt(measured)}x is below "
                f"1 + min_gain = {fmt(1 + m.min_gain)}"
            )
        else:
            rho = m.proven_draft_depth_ratio
            beta = m.proven_verify_cost_ratio
            passes = m.passes if severity == "warn" else m.fail_passes
            break_even = beta + rho * passes
            uncapped = break_even * (1 + m.min_gain)
            where = (
                f"the default floor: break-even AL {fmt(break_even)} "
                f"(β {fmt(beta)} + ρ {fmt(rho)}·{fmt(passes)}) × (1 + {gain})"
            )
            if d is not None and uncapped > 1 + d:
                where += f" = {fmt(uncapped)}, capped at 1 + D = {1 + d}"
    else:
        where = {"cli": "--min-accept-length", "policy": "policy.min_accept_length"}.get(
            floor.source, "[tool.specgate] min-accept-length"
        )
    message = f"AL {fmt(al)}{estimated(ctx)} is below the floor {fmt(floor.value)} ({where})"
    if floor.explicit and d is not None and floor.value > 1 + d:
        message += f"; the floor is unreachable: AL can be at most 1 + D = {1 + d}"
    yield Hit(
        message,
        dep.path("evidence", "accept_length"),
        f"Raise AL to at least {fmt(floor.value)} (a drafter better matched to the served "
        "traffic and chat template), lower D or the draft cost, or keep speculation off for "
        "this deployment; "
        + (
            "lower policy.min_accept_length"
            if floor.source == "policy"
            else "set policy.min_gain or policy.min_accept_length"
            if floor.source == "default"
            else f"lower {where}"
        )
        + " if a smaller gain is acceptable.",
        excess=floor.value / upper,
        severity=severity,
        details=join_details(
            accept_length_source(dep),
            cost_terms(m, fail=True) if floor.source == "default" and not severity else "",
            priced_at_d(m) if severity else "",
            "docs/theory.md#al-floor-and-guideline",
        ),
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
    `evidence.next`. For tree drafting D is the depth (the longest path: SGLang
    `speculative_num_steps`, TensorRT-LLM `max_draft_len`), not the node count
    (`speculation.verify_tokens` = nodes + 1). AL exactly at 1 + D is SG109. An AL
    that is only an estimate (`inputs.acceptance.estimate`) warns instead of failing: it
    may be anything in [1, 1 + D], and no reader gives a lower bound on it.

    **An assumed D.** When the serving config leaves D to the engine's default, the
    default differs between the engine's versions (llama.cpp: 5 up to b4094, 16 from
    b4295 to b9222, 3 from b9246) and no version is stated or detected, D is a
    guess: an AL above 1 + D then warns and names what settles it
    (`speculation.engine_version` or the flag that states D), unless it exceeds 1 + D
    at every default the data records over the versions the config may run (llama-server
    with `--spec-type` and no D flag: 16 up to b9222, 3 from b9246, none recorded
    between: AL 20 warns, as AL 10 does). The same test holds for every fail that rests
    on that D (SG102's default floor, SG104, SG106's theory, SG309); where some of those
    versions have no default recorded D is unbounded and those fails warn. A D the
    claims file states is judged instead (SG301 warns).

    **Evidence measured at another D.** An AL the evidence (SG309) or the base
    revision (SG403, `--baseline`) shows was measured at another D than the served
    one is not compared with the served 1 + D: the stale evidence is SG309's or
    SG403's finding (one cause, one finding).

    **Why.** Each target step emits the accepted draft tokens plus one token of
    its own, so 1 ≤ AL ≤ 1 + D (Leviathan et al. 2023, arXiv:2211.17192). An AL
    below 1 usually counts accepted drafts without the bonus token (off by
    exactly one); an AL above 1 + D comes from tree-drafting paper figures or
    from client-side chunk counting with a stream interval above 1.
    """
    dep = ctx.deployment
    # an AL measured at another D says nothing of the served 1 + D (SG309 / SG403)
    served_d = None if ctx.metrics.evidence_stale else ctx.metrics.draft_length
    yield from _accept_length_range(
        ctx.metrics.accept_length, served_d, dep.path("evidence", "accept_length")
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
    # the rule above has this name too: the formula is imported under another
    from specgate.theory.formulas import accept_length_out_of_range as side_of_range

    side = side_of_range(al, d)  # the test measure refuses with
    if side == "below":
        yield Hit(
            f"AL {fmt(al)} is below 1: every target step emits at least one token "
            "(was the bonus token left out?)",
            path,
            "Report AL as tokens per target step including the bonus token "
            "(1 + accepted drafts per step).",
            details="1 ≤ AL ≤ 1 + D: each step emits the bonus token whether or not a "
            "draft is accepted (Leviathan et al. 2023, arXiv:2211.17192; "
            "docs/theory.md#accept-length-range)",
        )
    elif side == "above" and d is not None:
        yield Hit(
            f"AL {fmt(al)} exceeds 1 + D = {1 + d}: a step cannot accept more than its "
            f"{d} draft tokens plus the bonus token",
            path,
            f"Re-measure AL at D = {d} from the engine's counters (not from stream chunks "
            "or a tree-drafting paper figure).",
            details="tokens per step ≤ D accepted drafts + 1 bonus token (Leviathan et al. "
            "2023, arXiv:2211.17192; docs/theory.md#accept-length-range); an AL above it "
            "comes from tree-drafting figures or stream chunks counted client-side",
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
        details="lossless only if rejected drafts are rolled back from the KV, prefix, "
        "sliding-window and state-space caches; untested, outputs may drift from the "
        "target's while speed metrics look fine (docs/claims-file.md#evidence)",
    )
