"""Metrics that contradict themselves: accepted drafts the engine never emitted
(docs/rules.md#sg305-acceptance-profile-inconsistent, reported through SG305).

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

from specgate.rules.registry import Hit, RuleContext


def accepted_past_emitted(ctx: RuleContext) -> Iterator[Hit]:
    """SG305's cross-check: A + N > E over the metrics' window (vLLM's Prometheus
    counters with ``vllm:generation_tokens_total``); the test and its words are
    :func:`specgate.inputs.metrics.consistency.emitted_shortfall`, which
    ``specgate measure`` applies before it records anything."""
    inputs = ctx.deployment.inputs
    acceptance = inputs.acceptance if inputs is not None else None
    if acceptance is None or acceptance.emitted_tokens is None:
        return  # nothing to cross-check: the shared test is not even imported
    from specgate.inputs.metrics.consistency import emitted_shortfall

    shortfall = emitted_shortfall(acceptance)
    if shortfall is None:
        return
    yield Hit(
        shortfall.message(acceptance.path or "evidence.metrics"),
        ctx.deployment.path("evidence", "metrics"),
        "Measure AL over requests that run to a fixed length (ignore_eos, so every accepted "
        "draft is emitted), or with an engine release that counts only emitted drafts.",
        where=(acceptance.path, acceptance.spans.get("accept_length"))
        if acceptance.path is not None
        else None,
        details="A + N ≤ E: each step emits its accepted drafts plus the bonus token, and "
        "tokens are also emitted outside verification steps "
        "(docs/rules.md#sg305-acceptance-profile-inconsistent)",
    )
