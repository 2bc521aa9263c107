"""Metrics that contradict themselves: accepted drafts the engine never emitted
(DESIGN.md §14, reported through SG305).

Every verification step emits its accepted drafts plus one token (the bonus token), and
the engine also emits tokens outside those steps (each request's first token, steps that
drafted nothing). So over one window the accepted drafts A, the steps N and the emitted
tokens E satisfy A + N ≤ E: accepted tokens per step, A/N, cannot exceed the tokens
emitted per step less the bonus token, E/N − 1. More accepted drafts than that were
counted without being emitted (drafts accepted past an EOS or a max_tokens cut), so
AL = 1 + A/N overstates what users got.
"""

from __future__ import annotations

from collections.abc import Iterator

from specgate.core.numbers import fmt
from specgate.rules.registry import Hit, RuleContext

#: Counts are whole tokens; a half-token slack covers float sums of integral counters.
_SLACK = 0.5


def accepted_past_emitted(ctx: RuleContext) -> Iterator[Hit]:
    """SG305's cross-check: A + N > E over the metrics' window (vLLM's Prometheus
    counters with ``vllm:generation_tokens_total``)."""
    inputs = ctx.deployment.inputs
    acceptance = inputs.acceptance if inputs is not None else None
    if acceptance is None:
        return
    emitted, accepted, steps = (
        acceptance.emitted_tokens,
        acceptance.accepted_tokens,
        acceptance.steps,
    )
    if emitted is None or accepted is None or not steps:
        return
    if accepted + steps <= emitted + _SLACK:
        return
    yield Hit(
        f"the metrics count {fmt(accepted)} accepted draft tokens over {steps} steps but only "
        f"{fmt(emitted)} tokens were emitted ({acceptance.path or 'evidence.metrics'}): "
        f"accepted tokens per step {fmt(accepted / steps)} exceed the tokens emitted per step "
        f"less the bonus token, {fmt(emitted / steps - 1)}; AL 1 + {fmt(accepted)}/{steps} = "
        f"{fmt(1 + accepted / steps)} counts drafts that were never emitted (accepted past an "
        f"EOS or a max_tokens cut), at most {fmt(emitted / steps)} tokens per step were",
        ctx.deployment.path("evidence", "metrics"),
        "Measure AL over requests that run to a fixed length (ignore_eos, so every accepted "
        "draft is emitted), or with an engine release that counts only emitted drafts.",
        where=(acceptance.path, acceptance.spans.get("accept_length"))
        if acceptance.path is not None
        else None,
    )
