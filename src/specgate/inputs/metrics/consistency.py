"""Metrics that contradict themselves: the one test ``specgate check`` reports (SG305,
SG103) and ``specgate measure`` refuses before it prints or writes anything.

Every verification step emits its accepted drafts plus one token (the bonus token),
and the engine also emits tokens outside those steps (each request's first token,
steps that drafted nothing). So over one window the accepted drafts A, the drafted
steps N and the emitted tokens E satisfy A + N ≤ E. vLLM 0.32.0 counts them so:
``vllm:generation_tokens`` adds ``len(output.new_token_ids)`` of every request at every
step (``vllm/v1/metrics/stats.py`` ``IterationStats.update_from_output``,
``vllm/v1/metrics/loggers.py`` ``counter_generation_tokens``), while
``vllm:spec_decode_num_drafts`` counts one per request and step that carried draft
tokens (``vllm/v1/core/sched/scheduler.py`` ``make_spec_decoding_stats``: no draft
tokens, no count; ``vllm/v1/spec_decode/metrics.py`` ``observe_draft``).

Two consequences:

- A + N > E: drafts were counted as accepted that were never emitted (accepted past
  an EOS or a ``max_tokens`` cut), so AL = 1 + A/N overstates what users got
  (:func:`emitted_shortfall`).
- U = E − A − N ≥ 0 tokens came from steps that drafted nothing for their request (or
  were a request's first token). AL = 1 + A/N is over drafted steps only; over all
  steps it is at least E / (N + U) = E / (E − A), each undrafted token counted as a
  step of its own (:func:`undrafted_share`). For n-gram and suffix lookup, which find
  no draft on some steps, the gap can be large.
"""

from __future__ import annotations

from dataclasses import dataclass

from specgate.core.numbers import fmt
from specgate.inputs.metrics.inline import acceptance_profile_problems
from specgate.inputs.types import Acceptance
from specgate.theory.formulas import accept_length_out_of_range

SLACK = 0.5
"""Counts are whole tokens; a half-token slack covers float sums of integral counters."""

MAX_STEPS = 2**53
"""A step count beyond exact float range is not a count."""

_RATIO_SLACK = 1e-9
"""An AL computed as a ratio of counts may miss a bound by float rounding."""


@dataclass(frozen=True)
class EmittedShortfall:
    """A + N > E over one window: ``accepted`` drafts over ``steps`` steps, ``emitted``
    tokens."""

    accepted: float
    steps: int
    emitted: float

    def message(self, shown: str) -> str:
        """One sentence naming the numbers (SG305's message, measure's refusal)."""
        a, n, e = self.accepted, self.steps, self.emitted
        return (
            f"the metrics count {fmt(a)} accepted draft tokens over {n} steps but only "
            f"{fmt(e)} tokens were emitted ({shown}): accepted tokens per step {fmt(a / n)} "
            f"exceed the tokens emitted per step less the bonus token, {fmt(e / n - 1)}; "
            f"AL 1 + {fmt(a)}/{n} = {fmt(1 + a / n)} counts drafts that were never emitted "
            f"(accepted past an EOS or a max_tokens cut); the emitted tokens allow at most "
            f"{fmt(e / n)} tokens per step"
        )


def emitted_shortfall(acceptance: Acceptance) -> EmittedShortfall | None:
    """The A + N > E contradiction of ``acceptance``, or ``None`` when the counts fit
    or the data does not state all three (vLLM's Prometheus counters with
    ``vllm:generation_tokens_total`` do)."""
    emitted, accepted, steps = (
        acceptance.emitted_tokens,
        acceptance.accepted_tokens,
        acceptance.steps,
    )
    if emitted is None or accepted is None or not steps:
        return None
    if accepted + steps <= emitted + SLACK:
        return None
    return EmittedShortfall(accepted, steps, emitted)


@dataclass(frozen=True)
class UndraftedShare:
    """Tokens emitted outside drafted steps, and what they make of AL over all steps.

    Attributes:
        emitted: E, tokens generated over the window.
        accepted: A, accepted draft tokens (no bonus token).
        steps: N, steps that drafted (AL = 1 + A/N is over these).
        undrafted: U = E − A − N, tokens emitted outside drafted steps.
    """

    emitted: float
    accepted: float
    steps: int
    undrafted: float

    @property
    def share(self) -> float:
        """U / E, the undrafted share of the generated tokens (0 … 1)."""
        return self.undrafted / self.emitted

    @property
    def all_steps_lower(self) -> float:
        """E / (N + U): AL over all steps when every undrafted token took a step of its
        own (a request's first token comes from its prefill, so the truth lies between
        this and 1 + A/N)."""
        return self.emitted / (self.steps + self.undrafted)

    def message(self) -> str:
        """One sentence for ``specgate measure``'s report."""
        a, n, e, u = self.accepted, self.steps, self.emitted, self.undrafted
        return (
            f"AL 1 + {fmt(a)}/{n} = {fmt(1 + a / n)} is over the {n} steps that drafted; "
            f"{fmt(u)} of the {fmt(e)} generated tokens ({fmt(100 * self.share)} %) came "
            "outside them (steps that drafted nothing, each request's first token), so AL "
            f"over all steps is at least {fmt(e)}/{fmt(n + u)} = {fmt(self.all_steps_lower)}"
        )


def undrafted_share(acceptance: Acceptance) -> UndraftedShare | None:
    """U = E − A − N of ``acceptance`` when the data states E, A and N and U is at
    least one token (else ``None``; A + N > E is :func:`emitted_shortfall`)."""
    emitted, accepted, steps = (
        acceptance.emitted_tokens,
        acceptance.accepted_tokens,
        acceptance.steps,
    )
    if emitted is None or accepted is None or not steps or emitted <= 0:
        return None
    undrafted = emitted - accepted - steps
    if undrafted < 1 - SLACK:
        return None
    return UndraftedShare(emitted, accepted, steps, undrafted)


def profile_message(acceptance: Acceptance, stated_al: float | None) -> str | None:
    """What is wrong with ``acceptance``'s per-position profile against ``stated_al``
    (SG305's message; :func:`acceptance_profile_problems`), or ``None``."""
    problems = acceptance_profile_problems(acceptance.marginal, stated_al)
    if not acceptance.marginal or not problems:
        return None
    marginal = ", ".join(fmt(m) for m in acceptance.marginal)
    return f"acceptance profile [{marginal}]: " + "; ".join(problems)


def impossible(
    acceptance: Acceptance, draft_length: int | None = None, given: str = "as given"
) -> list[str]:
    """Every reason no engine can have produced ``acceptance`` — what ``check`` fails
    as SG103 (AL < 1, AL > 1 + D) and SG305 (a profile that rises, leaves [0, 1] or
    misses the AL; A + N > E), plus accepted above proposed drafts and a step count
    beyond 2^53. D is what the data states, else ``draft_length`` (``given`` says
    where that came from, for the message).

    Returns:
        one message per problem, each naming the source and its numbers; empty when
        the measurement is consistent.
    """
    shown = acceptance.path or "the metrics"
    value = acceptance.accept_length
    depth = acceptance.draft_length or draft_length
    side = accept_length_out_of_range(value, depth, _RATIO_SLACK)
    if side == "below":
        return [f"{shown}: AL {value:.6g} is impossible (AL is at least 1)"]
    found: list[str] = []
    if side == "above" and depth is not None:
        where = "draft tokens per draft" if acceptance.draft_length else given
        found.append(
            f"{shown}: impossible counters: AL {value:.4f} exceeds 1 + D = {1 + depth} "
            f"(D = {depth}, {where})"
        )
    rate = acceptance.acceptance_rate
    if rate is not None and rate > 1 + 1e-9:
        found.append(
            f"{shown}: impossible counters: accepted draft tokens exceed proposed draft "
            f"tokens (acceptance rate {rate:.4g})"
        )
    if acceptance.steps is not None and acceptance.steps > MAX_STEPS:
        found.append(f"{shown}: {acceptance.steps:.6g} steps is beyond an exact count")
    shortfall = emitted_shortfall(acceptance)
    if shortfall is not None:
        found.append(f"impossible counters: {shortfall.message(shown)}")
    profile = profile_message(acceptance, acceptance.accept_length)
    if profile is not None:
        found.append(f"{shown}: {profile}")
    return found
