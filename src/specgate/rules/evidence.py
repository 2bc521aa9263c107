"""What a finding's ``details`` hold beside its message (issue 26): the formula with the
numbers put in, where each number came from, and the docs page the rule rests on.

The message says what is wrong in at most 200 characters; these fragments are the
evidence a reviewer audits it with. Each names its inputs' sources in words that do not
repeat the message (tests/reporters/test_message_budget.py holds every finding to no
phrase twice).
"""

from __future__ import annotations

from specgate.analysis.derived import Metrics
from specgate.core.concise import join_details
from specgate.core.numbers import fmt
from specgate.model.deployment import Deployment

#: The next action that asks for ρ or the speedup it is derived from: SG204's action,
#: and the first clause of every action that also asks for them (SG108, SG110), so the
#: check layer says it once per deployment (check/evaluate.py, ``_unsaid``).
MEASURE_RHO = (
    "Measure ρ (draft time per pass / target step time) and record it as "
    "speculation.draft_depth_ratio, or record evidence.measured_speedup at the served "
    "concurrency"
)

#: How a verify cost β was obtained, in a reviewer's words (VerifyCost.source).
_BETA_SOURCE = {
    "measured": "measured (evidence.verify_cost_ratio)",
    "roofline": "the step-time model (docs/theory.md#step-time-model)",
    "memory-bound": "memory-bound decode: verifying N tokens reads the weights once, as a "
    "plain step does",
    "assumed": "assumed: no input prices verification (docs/theory.md#cost-model)",
}


def beta_source(m: Metrics) -> str:
    """``β 1.2 from the step-time model …; proven β 1.07 (…)``: the β a fail uses and how
    it is known (docs/theory.md#proven-verify-cost)."""
    cost = m.verify_cost
    proven = m.proven_verify_cost_ratio
    if cost is None:
        return f"β {fmt(proven)}"
    text = f"β {fmt(cost.value)} from {_BETA_SOURCE.get(cost.source, cost.source)}"
    if abs(cost.value - proven) > 5e-5:
        text += f", a fail uses its lower bound {fmt(proven)} (docs/theory.md#proven-verify-cost)"
    return text


def rho_source(m: Metrics) -> str:
    """How the draft depth ratio ρ used was obtained (docs/theory.md#which-rho)."""
    source = m.draft_depth_ratio_source
    rho = fmt(m.draft_depth_ratio or 0.0)
    if source == "stated":
        return f"ρ {rho} as speculation.draft_depth_ratio states"
    if source in ("derived", "measured"):
        return (
            f"ρ {rho} fitted to the measurement: ρ = (AL / S − β) / passes "
            "(docs/theory.md#which-rho)"
        )
    return f"ρ {rho} is a class hint, not this drafter's (docs/theory.md#which-rho)"


def passes_source(m: Metrics, *, fail: bool = False) -> str:
    """``passes 3: one draft pass per token`` or ``passes 1: one pass drafts every
    position``; with ``fail`` and D only a maximum, the fewest passes a fail prices
    (``metrics.fail_passes``)."""
    if m.draft_passes == "single":
        return f"passes {m.passes}: one pass drafts every position"
    if fail and m.fail_passes < m.passes:
        return (
            f"passes {fmt(m.fail_passes)} = max(1, AL − 1): not every step drafts D = "
            f"{m.passes} (adaptive drafting, or a schedule that moves D) and a step drafts at "
            "least what it accepts, so a fail prices the fewest passes a step can take "
            "(docs/theory.md#d-is-a-maximum)"
        )
    return f"passes {m.passes}: one draft pass per token"


def priced_at_d(m: Metrics) -> str:
    """The details of a warning priced at passes = D while D is only a maximum: what the
    fail would have rested on and why it does not (docs/theory.md#d-is-a-maximum)."""
    return (
        f"priced at passes = D = {m.passes}, every step drafting D; D is a maximum or moves "
        f"during the run, so a step may take as few as max(1, AL − 1) = {fmt(m.fail_passes)} "
        "passes, where this holds: a warning, not a fail (docs/theory.md#d-is-a-maximum)"
    )


def accept_length_source(deployment: Deployment) -> str:
    """Where the AL judged came from: the claims file or a metrics file."""
    acceptance = deployment.inputs.acceptance if deployment.inputs else None
    if acceptance is not None and acceptance.path is not None:
        return f"AL read from {acceptance.path} ({acceptance.format})"
    if deployment.evidence.accept_length is not None:
        return "AL as evidence.accept_length states"
    return ""


def cost_terms(m: Metrics, *, fail: bool = False) -> str:
    """The sources of every term of the step cost β + ρ·passes (``fail``: the passes a
    fail prices, :func:`passes_source`)."""
    return join_details(beta_source(m), rho_source(m), passes_source(m, fail=fail))


def theory_details(m: Metrics, deployment: Deployment, anchor: str) -> str:
    """The sources of S = AL / (β + ρ·passes) a fail rests on and the docs page ``anchor``."""
    return join_details(accept_length_source(deployment), cost_terms(m, fail=True), anchor)
