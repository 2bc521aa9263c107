"""Facts about a vLLM config that its checks read beside the model configs
(``fact.runner``, ``fact.v2_unsupported``, ``fact.mm_inputs``;
docs/engines.md#model-runner-v2).

``mm_inputs``: whether the target takes multimodal inputs as vLLM runs it
(``MultiModalRegistry.supports_multimodal_inputs``, vllm/multimodal/registry.py:136-150
at 0.16.0, 116-130 at 0.20.2): ``off`` when ``--language-model-only`` sets every limit
to 0 (config/multimodal.py:264-265 at 0.20.2); ``on`` when no limit is set to 0, or
``--enable-mm-embeds`` keeps the inputs; ``unknown`` when a limit is 0 (every modality
the model supports at 0 runs it text-only, and specgate does not know which modalities a
model supports) or a value is not settled. The model's own config decides whether it is
multimodal at all (the checks read ``fact.target.keys``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from specgate.inputs.engines._source import Opt
from specgate.inputs.engines.runner import runner_in_force, v2_unsupported_in_force
from specgate.inputs.knowledge import EngineKnowledge
from specgate.inputs.types import VersionInForce

MmInputs = Literal["on", "off", "unknown"]


def vllm_facts(
    data: EngineKnowledge,
    at: VersionInForce,
    options: Mapping[str, Opt],
    fields: Mapping[str, object],
    facts: Mapping[str, object],
) -> dict[str, object]:
    """``runner``, ``v2_unsupported`` and ``mm_inputs`` for a vLLM config; nothing for
    another engine."""
    if not data.model_runner_v2:
        return {}
    return {
        "runner": runner_in_force(data, at, options, fields, facts),
        "v2_unsupported": v2_unsupported_in_force(data, at, options, fields),
        "mm_inputs": mm_inputs(options),
    }


def _switch(options: Mapping[str, Opt], name: str) -> bool | None:
    """A BooleanOptionalAction switch: True given, False absent, None when its
    negative form is also given (which comes last is not read here)."""
    if f"no_{name}" in options:
        return None if name in options else False
    opt = options.get(name)
    if opt is None:
        return False
    return True if opt.value is True else None


def mm_inputs(options: Mapping[str, Opt]) -> MmInputs:
    """Whether the target's multimodal inputs are on (module doc)."""
    embeds = _switch(options, "enable_mm_embeds")
    if embeds is None:
        return "unknown"
    if embeds:
        return "on"  # with every limit 0 it still takes embeddings (registry.py:141-143)
    language_only = _switch(options, "language_model_only")
    if language_only is None:
        return "unknown"
    if language_only:
        return "off"
    limits = options.get("limit_mm_per_prompt")
    if limits is None:
        return "on"  # an unnamed modality is 999 (config/multimodal.py:231-235 at 0.16.0)
    if limits.sub is None:
        return "unknown"
    for opt in limits.sub.values():
        count = opt.sub["count"].value if opt.sub is not None and "count" in opt.sub else opt.value
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            return "unknown"
    return "on"
