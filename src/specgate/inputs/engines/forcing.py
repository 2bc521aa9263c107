"""SG311: environment variables that force or simulate acceptance (data:
``forces_acceptance``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from specgate.inputs.engines._source import (
    Opt,
)
from specgate.inputs.knowledge import knowledge
from specgate.inputs.types import EngineConfig, EngineIssue


def forced_acceptance(config: EngineConfig, env: Mapping[str, Opt]) -> EngineConfig:
    """SG311 for an environment variable that forces or simulates acceptance (data:
    ``forces_acceptance``; TensorRT-LLM ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS``,
    SGLang ``SGLANG_SIMULATE_ACC_LEN``) set to a positive number. Both engines leave
    acceptance alone otherwise: SGLang's default is -1 ("turn off if < 0", it acts when
    > 0) and a value that is not a number falls back to it; TensorRT-LLM reads 0 for
    an unset or invalid value (``get_force_num_accepted_tokens``)."""
    spans = dict(config.spans)
    issues = list(config.issues)
    for name in knowledge(config.engine).forcing_variables():
        opt = env.get(name)
        if opt is None or not _positive_number(opt.value):
            continue
        field_name = f"env:{name}"
        spans[field_name] = opt.span
        issues.append(
            EngineIssue(
                "SG311",
                f"{name}={str(opt.value).strip()} forces how many drafts are accepted: an AL "
                "measured under it is synthetic",
                field_name,
            )
        )
    return replace(config, spans=spans, issues=tuple(issues))


def _positive_number(value: object) -> bool:
    """A number above 0, written as a number or as text (``"2.5"``); NaN is not."""
    if isinstance(value, bool) or value is None:
        return False
    try:
        number = float(str(value).strip())
    except (ValueError, OverflowError):
        return False
    return number > 0

