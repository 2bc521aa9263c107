"""Rules on where evidence comes from (SG405–SG409, DESIGN.md §9.2).

Evidence is a measurement of one configuration under some conditions. These
rules compare ``evidence.provenance`` with the deployment as it is now: its age,
temperature, configuration (the config digest), sample size and concurrency.
"""

from __future__ import annotations

import math
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


def _provenance(ctx: RuleContext) -> Provenance | None:
    return ctx.deployment.evidence.provenance


@rule(
    "SG405",
    "evidence-stale",
    "warn",
    "The evidence was measured longer ago than policy.max_evidence_age_days (or after today).",
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

    **Why.** Acceptance drifts: the target is fine-tuned, the traffic changes, the
    engine is upgraded. A fine-tuned target has been reported to drop AL from 3.00
    to 2.34 with no change to the serving config. Old evidence should be measured
    again.
    """
    provenance = _provenance(ctx)
    today = ctx.today
    if provenance is None or provenance.measured_at is None or today is None:
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
        )
    elif age > limit:
        yield Hit(
            f"the evidence was measured {age} days ago ({provenance.measured_at.isoformat()}), "
            f"more than policy.max_evidence_age_days {limit}",
            where,
            "Measure AL again (`specgate measure`) and update the evidence.",
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
    `workload.temperature` (within 1e-9), when both are given.

    **Why.** Acceptance depends on sampling: drafts agree with a greedy target far
    more often than with one sampling at 0.7, so AL measured at temperature 0
    over-states what a deployment serving at 0.7 gets.
    """
    provenance = _provenance(ctx)
    served = ctx.deployment.workload.temperature
    if provenance is None or provenance.temperature is None or served is None:
        return
    if abs(provenance.temperature - served) <= TEMPERATURE_TOLERANCE:
        return
    yield Hit(
        f"the evidence was measured at temperature {fmt(provenance.temperature)} but the "
        f"deployment serves at {fmt(served)} (workload.temperature): AL depends on sampling",
        ctx.deployment.path("evidence", "provenance", "temperature"),
        f"Measure AL at temperature {fmt(served)}.",
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
    digest of the deployment as it is now (`specgate digest` prints it): SHA-256
    over the canonical JSON of ten fields (mechanism, draft_length, verify_tokens,
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
    )
