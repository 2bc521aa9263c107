"""Rules on where evidence comes from (SG405–SG409 and SG411, docs/change-gate.md#provenance-rules
and docs/change-gate.md#regression-rules).

Evidence is a measurement of one configuration under some conditions. These
rules compare ``evidence.provenance`` with the deployment as it is now: its age and
the model revisions measured, temperature (and an engine that drafts greedily at any
temperature), configuration (the config digest), sample size, concurrency, and the
dataset and chat template.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from specgate.analysis.digest import config_digest
from specgate.core.numbers import fmt
from specgate.rules.registry import Hit, RuleContext, rule
from specgate.theory.stats import histogram_moments, steps_needed

if TYPE_CHECKING:
    from specgate.model.provenance import Provenance

DEFAULT_MAX_EVIDENCE_AGE_DAYS = 90
"""SG405: evidence older than this many days (``policy.max_evidence_age_days``)."""
TEMPERATURE_TOLERANCE = 1e-9
"""SG406: temperatures within this are equal."""
CONCURRENCY_RATIO = 2.0
"""SG409: concurrencies whose ratio exceeds this differ."""
SE_TARGET = 0.05
"""SG408: the largest standard error of AL (tokens per step) the evidence should have."""

_BASE = """
    version: 1
    deployments:
      - name: chat-8b-eagle3
        model:
          name: meta-llama/Llama-3.1-8B-Instruct
        speculation:
          enabled: true
          mechanism: eagle3
          draft_length: 3
          draft_depth_ratio: 0.05
        workload:
          name: chat
          temperature: 0.7
        evidence:
          accept_length: 2.6
          cache_coherence_eval: true
          provenance:
"""

_SERVED_64 = _BASE.replace(
    "      temperature: 0.7\n", "      temperature: 0.7\n          concurrency: 64\n"
)

_SERVES_SHAREGPT = _BASE.replace(
    "          name: chat\n", "          name: chat\n          dataset: sharegpt\n"
)


def _provenance(ctx: RuleContext) -> Provenance | None:
    return ctx.deployment.evidence.provenance


_COMMIT = re.compile(r"^[0-9a-fA-F]{7,64}$")


def same_revision(measured: str, served: str) -> bool:
    """Whether two revisions name the same thing: equal text, or one commit id a prefix of
    the other (``3f2a1c9`` and the full 40-digit id); branch and tag names only by text."""
    a, b = measured.strip(), served.strip()
    if a == b:
        return True
    if _COMMIT.fullmatch(a) and _COMMIT.fullmatch(b):
        a, b = a.lower(), b.lower()
        return a.startswith(b) or b.startswith(a)
    return False


def _revision_hits(ctx: RuleContext, provenance: Provenance) -> Iterator[Hit]:
    dep = ctx.deployment
    pairs = (
        ("target", provenance.target_revision, dep.model.revision, "target_revision",
         "model.revision"),
        ("drafter", provenance.draft_revision, dep.speculation.draft_revision, "draft_revision",
         "speculation.draft_revision"),
    )
    for who, measured, served, key, served_key in pairs:
        if measured is None or served is None or same_revision(measured, served):
            continue
        yield Hit(
            f"the evidence was measured on the {who}'s revision {measured!r} but the deployment "
            f"serves {served!r} ({served_key})",
            dep.path("evidence", "provenance", key),
            f"Measure AL again on the {who} revision served ({served!r}) and update the "
            "evidence (`specgate measure --write`).",
            details=f"a fine-tuned or updated {who} accepts differently, so the AL describes "
            "another model",
        )


@rule(
    "SG405",
    "evidence-stale",
    "warn",
    "The evidence is older than policy.max_evidence_age_days (or after today), or was "
    "measured on another target or drafter revision than the one served.",
    fail_example=_BASE + "            measured_at: 2020-01-15\n",
    pass_example=_BASE
    + "            measured_at: 2020-01-15\n"
    + "        policy:\n          max_evidence_age_days: 365000\n",
)
def evidence_stale(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `evidence.provenance.measured_at` (a date, or an RFC 3339
    date-time compared as its UTC date) is at most `policy.max_evidence_age_days`
    (default 90) whole days before today. "Today" is the UTC date, fixed by
    `--today YYYY-MM-DD` or `SOURCE_DATE_EPOCH` for reproducible runs. A date after
    today fires too, with its own message.

    It also fires when `provenance.target_revision` differs from the revision the
    deployment serves (`model.revision`), or `provenance.draft_revision` from
    `speculation.draft_revision`, when both are given (a commit id and its
    abbreviation are the same revision; branch and tag names compare as text).

    **Why.** Acceptance drifts: the target is fine-tuned, the traffic changes, the
    engine is upgraded. A fine-tuned target has been reported to drop AL from 3.00
    to 2.34 with no change to the serving config. Old evidence, or evidence of
    another revision of the target or drafter, should be measured again.
    """
    provenance = _provenance(ctx)
    if provenance is None:
        return
    yield from _revision_hits(ctx, provenance)
    today = ctx.today
    if provenance.measured_at is None or today is None:
        return
    dep = ctx.deployment
    limit = dep.max_evidence_age_days or DEFAULT_MAX_EVIDENCE_AGE_DAYS
    age = (today - provenance.measured_at).days
    where = dep.path("evidence", "provenance", "measured_at")
    if age < 0:
        yield Hit(
            f"evidence.provenance.measured_at {provenance.measured_at.isoformat()} is after "
            f"today ({today.isoformat()}, UTC): a measurement cannot come from the future",
            where,
            "Fix measured_at (the UTC date the measurement was taken), or pass --today.",
            details="today is the UTC date of the run (docs/change-gate.md#provenance-rules)",
        )
    elif age > limit:
        yield Hit(
            f"the evidence was measured {age} days ago ({provenance.measured_at.isoformat()}), "
            f"more than policy.max_evidence_age_days {limit}",
            where,
            "Measure AL again (`specgate measure`) and update the evidence.",
            details=f"age = {today.isoformat()} (today, UTC) − measured_at; acceptance "
            "drifts as the target, traffic and engine change "
            "(docs/change-gate.md#provenance-rules)",
        )


@rule(
    "SG406",
    "evidence-temperature-mismatch",
    "warn",
    "The evidence was measured at another sampling temperature than the deployment serves.",
    fail_example=_BASE + "            temperature: 0\n",
    pass_example=_BASE + "            temperature: 0.7\n",
)
def evidence_temperature_mismatch(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `evidence.provenance.temperature` equals
    `workload.temperature` (within 1e-9), when both are given. When the deployment
    serves at a higher temperature than was measured and its engine, at the version
    in force, drafts greedily at any temperature (TensorRT-LLM's
    `_allow_greedy_draft_tokens`; vLLM's default `draft_sample_method: greedy`;
    engine data `greedy-drafting`), the message says so: the drafter keeps
    proposing its argmax while the target samples.

    **Why.** Acceptance depends on sampling: drafts agree with a greedy target far
    more often than with one sampling at 0.7, so AL measured at temperature 0
    over-states what a deployment serving at 0.7 gets — more so when the drafts
    stay greedy (a TensorRT-LLM report: "drafting greedily at temperature 0.6").
    """
    provenance = _provenance(ctx)
    served = ctx.deployment.workload.temperature
    if provenance is None or provenance.temperature is None or served is None:
        return
    if abs(provenance.temperature - served) <= TEMPERATURE_TOLERANCE:
        return
    greedy = greedy_drafting(ctx) if served > provenance.temperature else None
    yield Hit(
        f"the evidence was measured at temperature {fmt(provenance.temperature)} but the "
        f"deployment serves at {fmt(served)} (workload.temperature): AL depends on sampling",
        ctx.deployment.path("evidence", "provenance", "temperature"),
        f"Measure AL at temperature {fmt(served)}"
        + (
            " (or set speculative_config.draft_sample_method: probabilistic)."
            if greedy and _engine(ctx)[0] == "vllm"
            else "."
        ),
        details=greedy or "drafts agree with a greedy target far more often than with a "
        "sampling one, so an AL at a lower temperature over-states the served one "
        "(docs/change-gate.md#provenance-rules)",
    )


#: SG411's details.
_TRAFFIC = (
    "a drafter agrees with its target far more on the prompts it was tuned on, and a prompt "
    "in another chat template is other text (docs/change-gate.md#provenance-rules)"
)

#: Mechanisms whose drafts are lookups, not samples: the temperature does not reach them.
_LOOKUP = ("ngram", "suffix")


def _engine(ctx: RuleContext) -> tuple[str | None, str | None]:
    """The engine (read, else ``speculation.engine``) and the version in force."""
    inputs = ctx.deployment.inputs
    engine = inputs.engine if inputs is not None else None
    if engine is not None:
        return engine.engine, engine.version
    return ctx.deployment.speculation.engine, None


def greedy_drafting(ctx: RuleContext) -> str | None:
    """Why the drafts stay greedy at T > 0, when the engine at its version drafts greedily
    (engine data behaviour ``greedy-drafting``), else ``None`` (also when the engine, its
    data or the mechanism is unknown, or the mechanism drafts by lookup)."""
    from specgate.inputs.knowledge import knowledge, parse_version

    name, version = _engine(ctx)
    mechanism = ctx.deployment.speculation.mechanism
    if name is None or mechanism is None or mechanism in _LOOKUP:
        return None
    try:
        known = knowledge(name)
        applies = known.behaves("greedy-drafting", parse_version(version) if version else None)
    except KeyError:
        return None
    if not applies:
        return None
    at = f" {version}" if version else f" (version unknown, read as {known.newest_text})"
    how = (
        "unless speculative_config.draft_sample_method is 'probabilistic'"
        if name == "vllm"
        else "whatever the request's temperature"
    )
    return (
        f"{known.display_name}{at} drafts greedily (the drafter's argmax) {how}, so the "
        "drafts do not follow the sampled target and AL falls further at this temperature"
    )


@rule(
    "SG407",
    "evidence-config-changed",
    "fail",
    "The evidence's config_digest differs from the digest of the current speculative config.",
    fail_example=_BASE + "            config_digest: sha256:0000000000000000\n",
    pass_example=_BASE + "            config_digest: sha256:a9d157d4ed66e93c\n",
)
def evidence_config_changed(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `evidence.provenance.config_digest` equals the config
    digest of the deployment as it is now (`specgate digest` prints it): `sha256:`
    and the first 16 hex digits (64 bits) of a SHA-256 over the canonical JSON of
    ten fields (mechanism, draft_length, verify_tokens,
    draft_passes, draft_model, engine, tensor_parallel_size, lossy_acceptance,
    draft_length_is_max, target_model), values from the engine config when one is
    read, else from the claims file. Comments, key order, unrelated engine
    settings and model configs do not change it.

    **Why.** AL is a property of one speculative configuration. When the draft
    model, D, the engine or the target changes, the recorded AL describes another
    deployment until it is measured again.
    """
    provenance = _provenance(ctx)
    if provenance is None or provenance.config_digest is None:
        return
    current = config_digest(ctx.deployment)
    if current == provenance.config_digest:
        return
    yield Hit(
        f"the evidence was measured for config {provenance.config_digest} but the speculative "
        f"config is now {current}: the AL describes another configuration",
        ctx.deployment.path("evidence", "provenance", "config_digest"),
        "Measure AL with the current config and record its digest (`specgate measure --write`).",
        details="the digest hashes the ten fields docs/change-gate.md#config-digest lists; "
        "`specgate digest` prints them for the current config",
    )


@rule(
    "SG408",
    "evidence-sample-too-small",
    "warn",
    "The evidence counts too few verification steps for AL to be known within 0.05.",
    fail_example=_BASE.replace("          accept_length: 2.6\n", "")
    + "            steps: 150\n"
    + "          metrics:\n            format: histogram\n"
    + "            histogram: {0: 50, 1: 50, 2: 50}\n",
    pass_example=_BASE.replace("          accept_length: 2.6\n", "")
    + "            steps: 600\n"
    + "          metrics:\n            format: histogram\n"
    + "            histogram: {0: 200, 1: 200, 2: 200}\n",
)
def evidence_sample_too_small(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When the number of verification steps behind AL is known
    (`provenance.steps`; else Δ`num_drafts` of vLLM counters or a histogram's
    total), it is at least (sd / 0.05)², the steps for a standard error of AL of
    0.05 tokens. sd is the sample standard deviation of accepted drafts per step
    from a histogram (or per-position counters), else 1 (so 400 steps).
    Steps are treated as independent (they are not quite: steps of one request
    share context), so this is a minimum.

    With `--baseline`, a head sample this small also loses SG401's z test: its AL
    drop is judged by the percentage rule alone, so bringing less evidence never
    turns an AL regression into this warning.

    **Why.** AL from a few dozen steps moves by tenths of a token between runs;
    a gate that compares such numbers, or a claim built on one, cries wolf or
    misses a regression.
    """
    dep = ctx.deployment
    provenance = _provenance(ctx)
    acceptance = dep.inputs.acceptance if dep.inputs else None
    steps = provenance.steps if provenance is not None else None
    where = dep.path("evidence", "provenance", "steps")
    if steps is None and acceptance is not None:
        steps = acceptance.steps
        where = dep.path("evidence", "metrics")
    if steps is None:
        return
    moments = histogram_moments(acceptance.histogram) if acceptance is not None else None
    sd = moments[2] if moments is not None else 1.0
    needed = steps_needed(sd, SE_TARGET)
    if steps >= needed or not math.isfinite(needed):
        return
    se = sd / math.sqrt(steps)
    yield Hit(
        f"AL rests on {steps} verification steps: its standard error is about {fmt(se)} "
        f"tokens (sd {fmt(sd)}); {math.ceil(needed)} steps give 0.05",
        where,
        f"Measure over at least {math.ceil(needed)} verification steps.",
        details=f"SE = sd / √steps = {fmt(sd)} / √{steps}; steps needed = (sd / 0.05)², "
        + ("sd from the histogram" if moments is not None else "sd 1 assumed (no histogram)")
        + " (docs/change-gate.md#standard-error)",
    )


@rule(
    "SG409",
    "evidence-concurrency-mismatch",
    "warn",
    "The evidence was measured at a concurrency more than 2x away from the served one.",
    fail_example=_SERVED_64 + "            concurrency: 1\n",
    pass_example=_SERVED_64 + "            concurrency: 48\n",
)
def evidence_concurrency_mismatch(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `evidence.provenance.concurrency` and the served
    `workload.concurrency` are within a factor of 2 of each other, when both are
    given.

    **Why.** At higher concurrency the engine batches verification, may cap or
    switch off drafting (vLLM `disable_by_batch_size`), and requests interleave:
    AL and speedup measured for one sequence do not carry over to 64.
    """
    provenance = _provenance(ctx)
    served = ctx.deployment.workload.concurrency
    if provenance is None or provenance.concurrency is None or served is None:
        return
    low, high = sorted((provenance.concurrency, served))
    if high / low <= CONCURRENCY_RATIO:
        return
    yield Hit(
        f"the evidence was measured at concurrency {provenance.concurrency} but the deployment "
        f"serves {served} sequences at once (workload.concurrency): more than 2x apart",
        ctx.deployment.path("evidence", "provenance", "concurrency"),
        f"Measure AL at concurrency {served}.",
        details="batching changes β, engines may switch drafting off above a batch size "
        "(vLLM disable_by_batch_size) and requests interleave "
        "(docs/change-gate.md#provenance-rules)",
    )


@rule(
    "SG411",
    "evidence-workload-mismatch",
    "warn",
    "The evidence was measured on another dataset or chat template than the workload names.",
    fail_example=_SERVES_SHAREGPT + "            dataset: gsm8k\n",
    pass_example=_SERVES_SHAREGPT + "            dataset: sharegpt\n",
)
def evidence_workload_mismatch(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `evidence.provenance.dataset` equals `workload.dataset`
    (as text, case and surrounding spaces aside), and `evidence.provenance.chat_template`
    equals `workload.chat_template`, when both sides are given. A chat template is
    named by its digest, `specgate digest --chat-template FILE` (SHA-256 of the
    template text, `sha256:` + 16 hex digits; a `tokenizer_config.json` gives its
    `chat_template`).

    **Why.** Acceptance is a property of the traffic: a drafter agrees with the
    target far more on code or math prompts it was tuned on than on open chat, and
    a prompt formatted with another chat template (or none) is other text.
    TensorRT-LLM's acceptance references note that `--apply_chat_template` runs are
    worth about 40 % acceptance.
    """
    provenance = _provenance(ctx)
    if provenance is None:
        return
    workload = ctx.deployment.workload
    dep = ctx.deployment
    measured, served = provenance.dataset, workload.dataset
    if (
        measured is not None
        and served is not None
        and measured.strip().casefold() != served.strip().casefold()
    ):
        yield Hit(
            f"the evidence was measured on dataset {measured!r} but the workload serves "
            f"{served!r} (workload.dataset): acceptance depends on the traffic",
            dep.path("evidence", "provenance", "dataset"),
            f"Measure AL on {served!r} prompts (or on a sample of the served traffic).",
            details=_TRAFFIC,
        )
    measured, served = provenance.chat_template, workload.chat_template
    if measured is not None and served is not None and measured != served:
        yield Hit(
            f"the evidence was measured with chat template {measured} but the workload "
            f"serves {served} (workload.chat_template): the prompts were other text",
            dep.path("evidence", "provenance", "chat_template"),
            "Measure AL with the chat template served.",
            details=_TRAFFIC,
        )
