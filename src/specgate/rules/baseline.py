"""Rules that compare a deployment with itself at a base revision (SG401–SG404,
docs/change-gate.md#baseline and docs/reports.md#sarif, and SG410 when it cannot be read there).
They run only with ``check --baseline REF`` and only for deployments that existed at REF (matched by
name); ``ctx.baseline`` holds the base values read by :mod:`specgate.change.baseline`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from specgate.analysis import derived
from specgate.analysis.digest import change_fields as digest_fields
from specgate.analysis.digest import config_digest
from specgate.core.concise import join_details
from specgate.core.numbers import fmt
from specgate.rules.provenance import evidence_config_changed
from specgate.rules.references import evidence_draft_length_mismatch
from specgate.rules.registry import Hit, Rule, RuleContext, register, rule
from specgate.theory.stats import sufficient_standard_error, z_score

if TYPE_CHECKING:
    from specgate.load.document import Span
    from specgate.model.base_view import BaseView

DEFAULT_MAX_ACCEPT_LENGTH_DROP = 0.05
"""SG401: the largest relative AL drop (``policy.max_accept_length_drop``)."""
DEFAULT_MAX_SPEEDUP_DROP = 0.02
"""SG404: the largest relative drop of the measured speedup beyond its standard error
(``policy.max_speedup_drop``)."""
Z_LIMIT = -2.0
"""SG401: with standard errors on both sides, the drop must also have z below this."""

_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _at(base: BaseView) -> str:
    """The base revision as messages name it: a full commit id (the Action passes the pull
    request's base commit) shortened to 12 digits, any other REF as given."""
    at = base.ref[:12] if _COMMIT.fullmatch(base.ref) else base.ref
    return at if base.renamed_from is None else f"{at} (as {base.renamed_from!r})"


_CLAIMS = """
    version: 1
    deployments:
      - name: chat-8b-eagle3
        speculation:
          enabled: true
          mechanism: eagle3
          draft_length: 3
          draft_depth_ratio: 0.05
        evidence:
          cache_coherence_eval: true
          metrics:
            format: histogram
            histogram: {HEAD}
        claims:
          speedup: {CLAIM}
"""
_BASE_HISTOGRAM = "{0: 400, 1: 300, 2: 200, 3: 100}"
_DROPPED = "{0: 500, 1: 300, 2: 150, 3: 50}"


def _example(head: str, claim: str, base: str, base_claim: str) -> str:
    text = _CLAIMS.replace("{HEAD}", head).replace("{CLAIM}", claim)
    before = _CLAIMS.replace("{HEAD}", base).replace("{CLAIM}", base_claim)
    return text + "    # === base:specgate.yaml ===\n" + before


@rule(
    "SG401",
    "accept-length-regression",
    "fail",
    "AL fell below the base revision's AL by more than policy.max_accept_length_drop.",
    fail_example=_example(_DROPPED, "1.5", _BASE_HISTOGRAM, "1.5"),
    pass_example=_example(_BASE_HISTOGRAM, "1.5", _BASE_HISTOGRAM, "1.5"),
)
def accept_length_regression(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With `check --baseline REF`: AL_head < AL_base ·
    (1 − `policy.max_accept_length_drop`, default 0.05), the policy taken from the
    base revision (a pull request cannot loosen its own gate). When both ALs come
    with a per-step distribution (a histogram, or vLLM per-position counters with
    the drafts counter), the drop must also be significant: z = (AL_head −
    AL_base) / √(SE_head² + SE_base²) < −2, with SE = sample sd of accepted drafts
    per step / √steps (steps treated as independent, so SE is optimistic).
    Worked example: base {0: 400, 1: 300, 2: 200, 3: 100} (AL 2.000, SE 0.0316),
    head {0: 500, 1: 300, 2: 150, 3: 50} (AL 1.750, SE 0.0281): z = −5.91. When the
    head's AL is only an estimate (`inputs.acceptance.estimate`) while the base's was
    measured, the fail stands and says the measured AL was replaced by an estimate: a
    pull request cannot weaken its own gate by bringing weaker evidence (base 2.9
    measured, head `iid-rate` α 0.5 at D 4, AL 1.9375: −33.19 %, fail). When the base's
    AL was an estimate too, the drop warns unless it holds at every head AL in
    [1, 1 + D].
    The z test is used only when the head's sample is large enough by SG408's
    measure (at least (sd / 0.05)² steps, so SE_head ≤ 0.05 tokens): a head that
    brings fewer steps is judged by the percentage rule alone. Otherwise the pull
    request would choose its own noise: base AL 3.4 over 10,000 steps, head
    {0: 2, 3: 2} (AL 2.5, 4 steps, sd 1.73, SE 0.87) has z ≈ −1.0, yet the drop
    is −26 %; with 4 steps below the 1,200 that sd 1.73 needs, it fails on the
    percentage alone (and SG408 warns about the sample).

    **Why.** A regression that lands one pull request at a time is invisible in
    snapshots: AL 2.9 → 2.6 still passes every floor. Comparing with the base
    catches it; the z test keeps run-to-run noise from crying wolf, and only
    evidence that meets the sample standard may claim the noise.
    """
    base = ctx.baseline
    head = ctx.metrics.accept_length
    if base is None or base.accept_length is None or head is None:
        return
    drop = base.max_accept_length_drop
    if drop is None:
        drop = DEFAULT_MAX_ACCEPT_LENGTH_DROP
    bound = base.accept_length * (1 - drop)
    if not head < bound:
        return
    dep = ctx.deployment
    acceptance = dep.inputs.acceptance if dep.inputs else None
    head_se = sufficient_standard_error(acceptance.histogram) if acceptance else None
    z = None
    if head_se is not None and base.accept_length_se is not None:
        z = z_score(head, base.accept_length, head_se, base.accept_length_se)
        if z is None or z >= Z_LIMIT:
            return
    significance = "" if z is None else f", z = {fmt(z)}"
    yield Hit(
        f"AL fell from {fmt(base.accept_length)} at {_at(base)} to {fmt(head)} "
        f"(-{fmt((base.accept_length - head) / base.accept_length * 100)} %{significance}), more "
        f"than the allowed {fmt(drop * 100)} %",
        dep.path("evidence", "accept_length"),
        "Find what lowered AL (draft model, D, target revision, sampling) and fix it, or "
        "lower the claim and the policy in a separate change.",
        details=join_details(
            f"bound = base AL × (1 − drop) = {fmt(base.accept_length)} × {fmt(1 - drop)} = "
            f"{fmt(bound)}, the drop from the base revision's policy.max_accept_length_drop "
            "or the 5 % default",
            ""
            if z is None
            else f"z from both sides' per-step standard errors, below {fmt(Z_LIMIT)}",
            "docs/change-gate.md#sg401-accept-length-regression",
        ),
    )


@rule(
    "SG402",
    "claim-raised-without-evidence",
    "fail",
    "claims.speedup went up while AL, measured speedup and every evidence file stayed the same.",
    fail_example=_example(_BASE_HISTOGRAM, "1.7", _BASE_HISTOGRAM, "1.5"),
    pass_example=_example(_BASE_HISTOGRAM, "1.5", _BASE_HISTOGRAM, "1.7"),
)
def claim_raised_without_evidence(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With `check --baseline REF`: `claims.speedup` is higher
    than at REF while the AL, the measured speedup and the content of every
    evidence file (`evidence.metrics.path`, `baseline_path`) are unchanged. A
    lower stated ρ is not evidence. A claim that is new (no claim at REF) has not
    gone up.
    "Unchanged" means no real change: evidence files with the same blob, or that
    measure the same values (padding, a comment); an AL that moved by no more than
    the base's noise, the larger of its standard error (from a per-step distribution)
    and half a unit of the last digit it is written with at REF; the measured speedup
    likewise (its `measured_speedup_se`, its written precision). The noise is the
    base's: a head cannot widen it. Worked example: base `accept_length: 2.9` (half a
    unit 0.05), claim 2.0 → 2.4: AL 2.9000001 or 2.94 at the head is the same AL
    (fails), 2.96 moved by 0.06 > 0.05 (passes); a base written `2.90` allows only
    0.005, so 2.91 passes. Editing `evidence.provenance` (a date, a source) in the
    claims file is not a measurement: it does not count.

    **Why.** A bigger number with nothing new behind it is marketing; the gate
    asks for the measurement that supports it.
    """
    base = ctx.baseline
    dep = ctx.deployment
    claim = dep.claimed_speedup
    if base is None or base.claimed_speedup is None or claim is None:
        return
    if claim <= base.claimed_speedup:
        return
    if not base.evidence_files_same:
        return
    al_noise = max(base.accept_length_se or 0.0, base.accept_length_half_unit or 0.0)
    if not _within(ctx.metrics.accept_length, base.accept_length, al_noise):
        return
    speedup_noise = max(base.measured_speedup_se or 0.0, base.measured_speedup_half_unit or 0.0)
    if not _within(derived.measured_speedup(dep), base.measured_speedup, speedup_noise):
        return
    yield Hit(
        f"claims.speedup went up from {fmt(base.claimed_speedup)} at {_at(base)} to "
        f"{fmt(claim)} while AL, measured speedup and every evidence file are unchanged",
        dep.path("claims", "speedup"),
        "Add the measurement that supports the higher claim (new metrics, a measured "
        "speedup), or keep the claim.",
        details="unchanged within each number's standard error or half a unit of its last "
        "digit; an edited evidence.provenance is no measurement "
        "(docs/change-gate.md#sg402-claim-raised-without-evidence)",
    )


def _within(head: float | None, base: float | None, noise: float) -> bool:
    """Whether ``head`` is ``base`` within ``noise`` (both unknown counts as the same)."""
    if head is None or base is None:
        return head is None and base is None
    return abs(head - base) <= noise


@rule(
    "SG403",
    "evidence-stale-after-config-change",
    "fail",
    "The speculative config changed since the base revision but the evidence is byte-identical.",
    fail_example=_example(_BASE_HISTOGRAM, "1.5", _BASE_HISTOGRAM, "1.5").replace(
        "mechanism: eagle3", "mechanism: eagle", 1
    ),
    pass_example=_example(_BASE_HISTOGRAM, "1.5", _BASE_HISTOGRAM, "1.5"),
)
def evidence_stale_after_config_change(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With `check --baseline REF`: the config digest (see
    SG407 and `specgate digest`) differs from REF while the evidence is the same:
    the same AL and byte-identical evidence files (compared by git blob id, so
    line-ending filters do not make equal files differ). Not reported when SG407
    or SG309 already says this evidence is stale, nor when there is no evidence
    (SG101's business). The engine version the deployment runs (as read, or `not
    pinned`) is compared beside the digest: `vllm/vllm-openai:v0.26.0` → `:latest`
    with the same evidence fires, `engine vLLM 0.26.0 → vLLM not pinned`.

    **Why.** A pull request that changes the draft model, D or the engine and
    keeps the old measurement ships an AL that describes the old configuration.
    """
    base = ctx.baseline
    dep = ctx.deployment
    head = ctx.metrics.accept_length
    if base is None or head is None or base.config_unread is not None:
        return  # REF's serving config not read: no digest to compare (BaseView.config_unread)
    current = config_digest(dep)
    now = digest_fields(dep)
    version = now["engine_version"]
    if current == base.config_digest and version == dict(base.config_fields).get(
        "engine_version", version
    ):
        return
    if head != base.accept_length or not base.evidence_files_same:
        return
    if any(evidence_config_changed(ctx)) or any(evidence_draft_length_mismatch(ctx)):
        return
    changed = config_changes(base.config_fields, now)
    what = f": {changed}" if changed else ""
    engine = dep.inputs.engine if dep.inputs is not None else None
    # the finding sits at the served D's line, in the file the pull request changed;
    # a config stated in the claims file alone keeps it at the evidence
    # (docs/change-gate.md#sg403-evidence-stale-after-config-change)
    where: tuple[str, Span | None] | None = None
    if engine is not None and "draft_length" in engine.spans:
        where = (engine.path, engine.spans["draft_length"])
    yield Hit(
        f"the speculative config changed since {_at(base)}{what}, but the evidence is "
        "identical: AL was measured for the old config",
        dep.path("evidence"),
        "Measure AL with the new config (`specgate measure`) and update the evidence.",
        where=where,
        details=join_details(
            f"config digest {base.config_digest} → {current} over the fields "
            "docs/change-gate.md#config-digest lists",
            "the evidence files measure the same at both revisions (same git blobs or the "
            "same numbers read)",
        ),
    )


#: How SG403 names a digest field (docs/change-gate.md#config-digest).
_FIELD_NAMES = {
    "draft_length": "D",
    "verify_tokens": "N_verify",
    "tensor_parallel_size": "TP",
    "draft_passes": "draft passes",
    "draft_model": "draft model",
    "target_model": "target model",
    "lossy_acceptance": "lossy acceptance",
    "draft_length_is_max": "D is a maximum",
    "engine_version": "engine",
}


def config_changes(
    base: tuple[tuple[str, object], ...], head: dict[str, object], most: int = 3
) -> str:
    """The digest fields that differ, ``"D 3 → 5, N_verify 4 → 6"`` (at most ``most``,
    then ``"and N more"``); ``""`` when ``base`` is unknown or nothing differs."""

    def shown(value: object) -> str:
        if value is None:
            return "unset"
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)[:60]

    changes = [
        f"{_FIELD_NAMES.get(name, name)} {shown(before)} → {shown(head.get(name))}"
        for name, before in base
        if head.get(name) != before
    ]
    if len(changes) > most:
        changes = [*changes[:most], f"and {len(changes) - most} more"]
    return ", ".join(changes)


_SPEEDUP = """
    version: 1
    deployments:
      - name: chat-8b-eagle3
        speculation:
          enabled: true
          mechanism: eagle3
          draft_length: {D}
          draft_depth_ratio: 0.05
        evidence:
          accept_length: {AL}
          cache_coherence_eval: true
          measured_speedup: {SPEEDUP}
        claims:
          speedup: {SPEEDUP}
"""


def _speedup_example(head: tuple[str, str, str], base: tuple[str, str, str]) -> str:
    def filled(values: tuple[str, str, str]) -> str:
        d, al, speedup = values
        return _SPEEDUP.replace("{D}", d).replace("{AL}", al).replace("{SPEEDUP}", speedup)

    return filled(head) + "    # === base:specgate.yaml ===\n" + filled(base)


@rule(
    "SG404",
    "measured-speedup-regression",
    "fail",
    "The measured speedup fell from the base revision by more than its standard error and "
    "policy.max_speedup_drop.",
    fail_example=_speedup_example(("5", "3.1", "1.66"), ("3", "2.8", "1.71")),
    pass_example=_speedup_example(("5", "3.1", "1.7"), ("3", "2.8", "1.71")),
)
def measured_speedup_regression(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With `check --baseline REF`: the measured speedup
    (`evidence.measured_speedup`, or the ratio of `evidence.throughput`) fell from
    S_base to S_head with S_base − S_head > S_base · `policy.max_speedup_drop`
    (default 0.02, the base revision's policy) + SE, where SE = √(SE_base² +
    min(SE_head, SE_base)²) from `evidence.measured_speedup_se` (0 where a side
    states none). The thresholds come from the base revision, its noise included:
    the head's SE can only tighten the slack, never widen it (a head stating an SE
    larger than the base's gets a warning of this rule saying it was not used). It
    fires even when the claim was lowered with it: the claim is not the evidence.
    Worked example: a pull request raises D 3 → 5 and the measured speedup goes
    1.71x → 1.66x, a drop of 0.05 = 2.92 %; the allowed drop is 1.71 · 0.02 =
    0.0342, so it fails. With SE 0.02 on both sides the allowance is 0.0342 +
    0.0283 = 0.0625 and it passes. A head of 1.05x with SE 5 against a base of
    1.71x with SE 0.01 is allowed 0.0342 + √(0.01² + 0.01²) = 0.0483, not 5.03:
    the −38.6 % drop fails.

    **Why.** AL can rise while the speedup falls: a longer draft accepts more
    tokens per step and costs more per step. SG401 watches AL only, so a change
    that makes serving slower and lowers its claim to match passes every other
    rule; the measured speedup is what users get.
    """
    base = ctx.baseline
    head = ctx.metrics.measured_speedup
    if base is None or base.measured_speedup is None or head is None:
        return
    drop = base.max_speedup_drop
    if drop is None:
        drop = DEFAULT_MAX_SPEEDUP_DROP
    dep = ctx.deployment
    stated = dep.evidence.measured_speedup_se or 0.0
    se_base = base.measured_speedup_se or 0.0
    se = math.hypot(se_base, min(stated, se_base))  # the head can only tighten it
    allowed = base.measured_speedup * drop + se
    fell = base.measured_speedup - head
    if not fell > allowed:
        if stated > se_base and fell > 0:
            yield Hit(
                f"the measured speedup fell from {fmt(base.measured_speedup)}x at "
                f"{_at(base)} to {fmt(head)}x within the allowed drop, judged with the "
                f"base's standard error {fmt(se_base)}: this change's "
                f"evidence.measured_speedup_se {fmt(stated)} is larger and does not widen "
                "the slack (the thresholds come from the base revision)",
                dep.path("evidence", "measured_speedup_se"),
                "Measure the speedup with enough repeats that its standard error is no "
                "larger than the base revision's.",
                severity="warn",
                details="a pull request cannot loosen its own gate "
                "(docs/change-gate.md#base-policy)",
            )
        return
    where = (
        dep.path("evidence", "measured_speedup")
        if dep.evidence.measured_speedup is not None
        else dep.path("evidence", "throughput")
    )
    noise = f" + SE {fmt(se)}" if se else ""
    if stated > se_base:
        noise += f"; this change's SE {fmt(stated)} is not used, the base's is"
    yield Hit(
        f"the measured speedup fell from {fmt(base.measured_speedup)}x at {_at(base)} to "
        f"{fmt(head)}x (-{fmt(fell / base.measured_speedup * 100)} %), more than the allowed "
        f"{fmt(drop * 100)} % ({fmt(base.measured_speedup * drop)}{noise})",
        where,
        "Find what made serving slower (D, draft model, engine, concurrency) and fix it; a "
        "lower claim does not make the change faster.",
        details="allowed = base S × policy.max_speedup_drop + the base's standard error; "
        "thresholds come from the base revision "
        "(docs/change-gate.md#sg404-measured-speedup-regression)",
    )


@rule(
    "SG410",
    "baseline-unreadable",
    "warn",
    "The deployment exists at the base revision but could not be read there, so the change "
    "was not compared with it.",
    fail_example=_CLAIMS.replace("{HEAD}", _BASE_HISTOGRAM).replace("{CLAIM}", "1.5")
    + "    # === base:specgate.yaml ===\n"
    + _CLAIMS.replace(
        "            format: histogram\n            histogram: {HEAD}\n",
        "            format: vllm-prometheus\n            path: bench/after.prom\n",
    ).replace("{CLAIM}", "1.5"),
    pass_example=_example(_BASE_HISTOGRAM, "1.5", _BASE_HISTOGRAM, "1.5"),
)
def baseline_unreadable(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** With `check --baseline REF`: a deployment of this name exists
    at REF (in this claims file, or in another claims file at REF: one moved or
    renamed is looked up by name), but it could not be read there — a referenced file
    missing or malformed at REF, a metrics file over the readers' limits. SG401–SG403
    then have nothing to compare with; the finding names the reason. Files at REF are
    read with the same readers and limits as the head's (metrics files up to 256 MiB).

    **Why.** A comparison that silently does not happen is a gate that silently opens:
    an AL drop would pass with exit 0 and no word. The warning makes the skipped
    comparison visible in every format (text, annotations, the job summary, SARIF,
    JSON `baseline.error`).
    """
    base = ctx.baseline
    if base is None or base.error is None:
        return
    yield Hit(
        f"not compared with {base.ref}: {base.error}",
        ctx.deployment.path(),
        f"{base.ref} is history and cannot be edited: compare this change with it by hand "
        "(the reason names the file as it is at that revision); once this change is merged, "
        "later changes are compared with it.",
        details=f"{base.ref} is commit {base.commit[:12]}; files there are read with the "
        "work tree's readers and limits, and SG401–SG404 had nothing to compare "
        "(docs/change-gate.md#sg410-and-sg412)",
    )


_REMOVED_BASE = _CLAIMS.replace("{HEAD}", _BASE_HISTOGRAM).replace("{CLAIM}", "1.5")
DEPLOYMENT_REMOVED = register(
    Rule(
        code="SG412",
        name="deployment-removed",
        severity="warn",
        summary="A deployment of the claims file at the base revision is in no claims file "
        "now, so nothing is compared with it.",
        raw_doc=(
            "**What it checks.** With `check --baseline REF`: a deployment of this claims "
            "file at REF (under its old name when git pairs a rename) whose name is in no "
            "claims file of the work tree. Names are compared after NFKC normalisation, "
            "with invisible characters removed, whitespace collapsed and case folded, so "
            "`d1` → `D1` is the same deployment. A new deployment with the configuration "
            "of a vanished one (the same config digest, or the same model and mechanism, "
            "and no different workload) is compared with it instead (the messages say "
            "`at REF (as 'd1')`), and SG412 is not reported for it. The finding sits on "
            "`deployments`.\n\n"
            "**Why.** Renaming a deployment made it new, so an AL drop passed with exit 0 "
            "and only JSON said `new: true`; a deleted or renamed deployment must be "
            "visible in every format (text, annotations, the job summary, SARIF, JSON).\n"
        ),
        raw_fail_example=_REMOVED_BASE.replace("chat-8b-eagle3", "chat-8b-ngram").replace(
            "mechanism: eagle3", "mechanism: ngram"
        )
        + "    # === base:specgate.yaml ===\n"
        + _REMOVED_BASE,
        raw_pass_example=_REMOVED_BASE.replace("chat-8b-eagle3", "chat-8b-eagle3-v2")
        + "    # === base:specgate.yaml ===\n"
        + _REMOVED_BASE,
    )
)
