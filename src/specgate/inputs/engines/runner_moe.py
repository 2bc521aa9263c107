"""vLLM 0.25.0-0.28.0: a MoE target is no Model Runner V2 default (docs/engines.md#model-runner-v2).

``VllmConfig._is_default_v2_model_runner_model`` (config/vllm.py:557-574 at 0.25.0,
691-712 at 0.28.0) makes every target a default that is in a short architecture list
or is not ``model_config.is_moe``; ``is_moe`` is ``get_num_experts() > 0``
(config/model.py:1903-1904 at 0.25.0), and ``get_num_experts`` reads the text config's
first attribute of ``num_experts``, ``moe_num_experts``, ``n_routed_experts``,
``num_local_experts`` (transformers_utils/model_arch_config_convertor.py:148-165). The
names, the lists and what forces Model Runner V2 before the default is asked (DSpark,
PCP, a DFlash draft mixing sliding and full attention, a DFlash2 draft, a diffusion
target) are data (``model_runner_v2`` in ``vllm.json``); this module applies them to
the facts read from the model configs. It answers True only where the configs state
it: a config that states no expert count (a config class may still define one), a value
that is not a number, or an expert count another sub-config holds leaves it unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specgate.inputs.engines._source import Opt

#: Options that change the architectures or the config vLLM reads from the target.
ARCH_CHANGERS = ("hf_overrides", "model_impl")
#: Parts of config keys from which a transformers config class may build ``layer_types``
#: with sliding layers (``_dflash_needs_multi_kv_group`` reads ``layer_types``).
_SLIDING = ("sliding", "window")
#: Model types whose config class builds ``layer_types`` with sliding layers only when
#: ``use_sliding_window`` is true (transformers' Qwen2Config and Qwen3Config set
#: ``sliding_window`` None otherwise and every layer ``full_attention``).
_USE_SLIDING_WINDOW = ("qwen2", "qwen3")


def moe_outside(
    rule: Mapping[str, Any],
    release: Mapping[str, Any],
    method: str | None,
    options: Mapping[str, Opt],
    facts: Mapping[str, object],
) -> bool:
    """Whether the release's default rule is known to leave the target to V1 because
    its config states MoE and none of its architectures is in the release's list."""
    listed = release.get("moe_default_architectures")
    keys = facts.get("target.keys")
    architectures = facts.get("target.architectures")
    if (
        listed is None
        or any(k in options for k in ARCH_CHANGERS)
        or not isinstance(keys, list)
        or not isinstance(architectures, list)
        or set(architectures) & set(listed)
        or release.get("diffusion_key") in keys
    ):
        return False
    if _v2_forced(release, method, options, facts):
        return False
    return moe_stated(rule.get("moe_keys", {}), facts) is True


def _v2_forced(
    release: Mapping[str, Any],
    method: str | None,
    options: Mapping[str, Opt],
    facts: Mapping[str, object],
) -> bool:
    """Whether something forces Model Runner V2 before the default rule is asked, or
    may (a draft config not read, a value not settled)."""
    if method is None or method in release.get("v2_forcing_methods", ()):
        return True
    if release.get("pcp_forces_v2") and "prefill_context_parallel_size" in options:
        return True
    if method != "dflash":
        return False
    draft_keys = facts.get("draft.keys")
    draft_archs = facts.get("draft.architectures")
    if release.get("dflash_sliding_forces_v2") and _may_mix_sliding(draft_keys, facts):
        return True
    dflash2 = release.get("dflash2_architectures")
    return dflash2 is not None and (
        not isinstance(draft_archs, list) or bool(set(draft_archs) & set(dflash2))
    )


def moe_stated(names_rule: Mapping[str, Any], facts: Mapping[str, object]) -> bool | None:
    """Whether the target's config states MoE as vLLM reads it: True for a positive
    expert count, None when it does not say (no count, a count of 0 after which vLLM
    reads ``block_configs``, a value that is not a number)."""
    keys = facts.get("target.keys")
    if not isinstance(keys, list):
        return None
    if any(k in keys for k in names_rule.get("other_sub_configs", ())):
        return None
    sub = names_rule.get("sub_config")
    prefix = f"target.config.{sub}." if sub in keys else "target.config."
    for name in names_rule.get("names", ()):
        key = prefix + name
        if key not in facts:
            if prefix == "target.config." and name in keys:
                return None  # stated as null, an object …: vLLM's reading is not followed
            continue
        value = facts[key]
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return True if value > 0 else None
    return None


def _may_mix_sliding(draft_keys: object, facts: Mapping[str, object]) -> bool:
    """Whether the DFlash draft's ``layer_types`` may mix sliding and full attention
    (``0 < num_sliding < len(layer_types)``, config/vllm.py:593-603 at 0.26.0): read
    from the list when the config states it, else from what builds it."""
    if not isinstance(draft_keys, list):
        return True  # the draft's config is not read
    if "layer_types" in draft_keys:
        types = facts.get("draft.config.layer_types")
        if not isinstance(types, list):
            return True
        sliding: int = sum(t == "sliding_attention" for t in types)
        return 0 < sliding < len(types)
    if facts.get("draft.model_type") in _USE_SLIDING_WINDOW:
        stated = facts.get("draft.config.use_sliding_window", False)  # the class default
        return not (stated is False or stated is None or stated == 0)
    return any(part in str(key) for key in draft_keys for part in _SLIDING)
