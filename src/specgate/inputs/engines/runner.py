"""Which vLLM model runner serves a config: ``fact.runner`` for the engine's checks
(docs/engines.md#model-runner-v2).

vLLM's V1 model runner and Model Runner V2 refuse different configs: the V1 proposer's
refusals (padded drafter batch, custom logits processors …) apply only where V1 serves.
``VllmConfig.use_v2_model_runner`` picks the runner: ``VLLM_USE_V2_MODEL_RUNNER`` when
set, else V2 for a default architecture (a list to 0.24.x, then every dense model) on a
GPU with Triton, unless the config uses a feature V2 does not support. The rule of each
release is data (``model_runner_v2`` in ``vllm.json``, with its source); this module only
applies it:

* ``v1``: V1 is known to serve (the variable settles to 0; before 0.22.0 it is unset; a
  feature forces V1; the target's architectures are outside the release's list; or, at
  0.25.0-0.28.0, the target's config states it is MoE as vLLM reads it and no
  architecture is in the list, :mod:`specgate.inputs.engines.runner_moe`);
* ``v2``: the variable settles to a nonzero integer;
* ``either``: it depends on what specgate cannot read (the GPU, Triton, the features
  it does not read), so a V1 refusal warns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from specgate.inputs.engines._source import ANY_NAME, Opt
from specgate.inputs.engines.runner_moe import ARCH_CHANGERS, moe_outside
from specgate.inputs.knowledge import EngineKnowledge, Version, parse_version
from specgate.inputs.types import VersionInForce

Runner = Literal["v1", "v2", "either"]

#: What Python's ``int`` reads (vLLM's ``maybe_convert_bool``: ``bool(int(value))``):
#: white space around an optional sign and digits, ``_`` between digits.
_INT = re.compile(r"\s*[+-]?\d+(?:_\d+)*\s*")
#: Mechanisms whose name is vLLM's method name (``ngram`` covers ``ngram_gpu``: every
#: release lists the two together); ``other`` (dspark, custom_class …) is read from
#: ``spec.method``.
_AS_METHOD = frozenset(
    {"ngram", "suffix", "eagle", "eagle3", "medusa", "mtp", "draft_model", "mlp_speculator"}
    | {"dflash"}
)


def runner_in_force(
    data: EngineKnowledge,
    at: VersionInForce,
    options: Mapping[str, Opt],
    fields: Mapping[str, object],
    facts: Mapping[str, object],
) -> Runner | None:
    """:func:`runner_fact` at the version in force; unpinned, at the oldest and the
    newest version the settings allow, ``either`` when they differ."""
    newest = runner_fact(data, at.judged, options, fields, facts)
    if at.version is None and at.low is not None:
        oldest = runner_fact(data, at.low, options, fields, facts)
        if oldest != newest:
            return "either" if None not in (oldest, newest) else None
    return newest


def runner_fact(
    data: EngineKnowledge,
    version: Version,
    options: Mapping[str, Opt],
    fields: Mapping[str, object],
    facts: Mapping[str, object],
) -> Runner | None:
    """The runner serving the config at ``version`` (module doc); None for an engine
    without the rule or a release with no V1 runner."""
    rule = data.model_runner_v2
    release = _release(rule.get("releases", ()), version)
    if release is None or release.get("no_v1_runner"):
        return None
    # a file specgate does not read may set the variable (ANY_NAME): not settled
    forced = _env(options.get(f"env.{rule.get('env', '')}") or options.get(f"env.{ANY_NAME}"))
    if forced == "unsettled":
        return "either"
    if (
        "default_architectures" not in release
        and "v2_methods" not in release
        and ("v1_methods" not in release)
    ):
        return forced or "v1"  # before any default rule: V1 unless the variable says V2
    if forced is not None:
        return forced
    if _feature_forces_v1(release, options, fields):
        return "v1"
    if _architecture_outside(release, options, facts):
        return "v1"
    if moe_outside(rule, release, _method(options, fields), options, facts):
        return "v1"
    return "either"


def v2_unsupported_in_force(
    data: EngineKnowledge,
    at: VersionInForce,
    options: Mapping[str, Opt],
    fields: Mapping[str, object],
) -> bool | None:
    """Whether the config uses a feature the release's Model Runner V2 names unsupported
    (``_get_v2_model_runner_unsupported_features``), which ``_validate_v2_model_runner``
    refuses when ``VLLM_USE_V2_MODEL_RUNNER`` forces V2 (config/vllm.py:1298-1299 and
    2057-2067 at 0.22.1); None where the release's list is not data (before 0.22.0) or,
    unpinned, the oldest and the newest release the settings allow differ."""
    versions = [at.judged] if at.version is not None or at.low is None else [at.low, at.judged]
    answers = set()
    for version in versions:
        release = _release(data.model_runner_v2.get("releases", ()), version)
        if release is None or not ("v2_methods" in release or "v1_methods" in release):
            return None
        answers.add(_feature_forces_v1(release, options, fields))
    return answers.pop() if len(answers) == 1 else None


def _release(releases: Any, version: Version) -> Mapping[str, Any] | None:
    """The release entry in force at ``version``: the newest whose ``first`` is at or
    below it."""
    found = None
    for entry in releases:
        first = parse_version(str(entry["first"]))
        if first is not None and first <= version:
            found = entry
    return found


def _env(opt: Opt | None) -> Runner | Literal["unsettled"] | None:
    """The runner the variable picks: None when it is not set, ``unsettled`` when its
    value is not a settled string Python's ``int`` reads."""
    if opt is None:
        return None
    value = opt.value
    if not isinstance(value, str) or not _INT.fullmatch(value):
        return "unsettled"
    return "v2" if any(c in "123456789" for c in value) else "v1"


def _method(options: Mapping[str, Opt], fields: Mapping[str, object]) -> str | None:
    mechanism = fields.get("mechanism")
    if isinstance(mechanism, str) and mechanism in _AS_METHOD:
        return mechanism
    opt = options.get("spec.method")
    return opt.value if opt is not None and isinstance(opt.value, str) else None


def _true(opt: Opt | None) -> bool | None:
    if opt is None:
        return False
    value = opt.value
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def _feature_forces_v1(
    release: Mapping[str, Any], options: Mapping[str, Opt], fields: Mapping[str, object]
) -> bool:
    """Whether the config uses a feature the release's Model Runner V2 names
    unsupported (so ``use_v2_model_runner`` falls back to V1)."""
    method = _method(options, fields)
    if method is not None:
        names = {method, "ngram_gpu"} if method == "ngram" else {method}
        if "v2_methods" in release and not names & set(release["v2_methods"]):
            return True
        if names & set(release.get("v1_methods", ())):
            return True
        parallel = _true(options.get("spec.parallel_drafting"))
        if parallel and method not in release.get("parallel_drafting_v2_methods", ()):
            return True
    return bool(release.get("logits_processors_v1")) and "logits_processors" in options


def _architecture_outside(
    release: Mapping[str, Any], options: Mapping[str, Opt], facts: Mapping[str, object]
) -> bool:
    """Whether the target's architectures, read from its config and not changed by an
    option, are all outside the release's default list (and it is no diffusion model)."""
    if "default_architectures" not in release or any(k in options for k in ARCH_CHANGERS):
        return False
    architectures = facts.get("target.architectures")
    keys = facts.get("target.keys")
    if not isinstance(architectures, list) or not architectures or not isinstance(keys, list):
        return False
    diffusion = release.get("diffusion_key")
    if diffusion is not None and diffusion in keys:
        return False
    return not set(architectures) & set(release["default_architectures"])
