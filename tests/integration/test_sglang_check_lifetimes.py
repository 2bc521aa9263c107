"""SGLang refusals judged by their lifetimes (issue 27): each boundary read in the PyPI
wheels of the releases on both sides (``pip download --no-deps sglang==X``, nothing
installed; every release from 0.4.0 to 0.5.23 grepped for the raise, then both sides of
each boundary read for the same condition), not only in 0.5.23, where the data first saw
them (docs/engines.md#lifetimes-from-history).

Pinned inside a lifetime the refusal fails; at or before the last release known without
it, nothing is said; where no such release is known, it warns. Unpinned, it fails only
when every release the settings allow holds it. The line numbers are those of the wheels
read (sglang/srt/…).
"""

from __future__ import annotations

import json

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

_HEADS = {"num_attention_heads": 8, "num_key_value_heads": 8, "hidden_size": 512,
          "num_hidden_layers": 2, "vocab_size": 152064}
_LLAMA = {**_HEADS, "model_type": "llama", "architectures": ["LlamaForCausalLM"]}
_MLA = {**_HEADS, "model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"],
        "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
        "num_nextn_predict_layers": 1}
_TREE = "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"
_EAGLE_TREE = f"--speculative-algorithm EAGLE --speculative-draft-model-path d {_TREE}"


def _findings(
    run: Run,
    version: str | None,
    flags: str,
    target: dict[str, object] | None = None,
    draft: dict[str, object] | None = None,
) -> list[tuple[str, str, str]]:
    """(code, severity, what it says) of the SG3xx findings of one SGLang launch pinned
    at ``version`` (None: unpinned), with the target's and the draft's configs."""
    text = claims("sglang", "serve.txt", version=version)
    files = {"serve.txt": f"python -m sglang.launch_server --model-path t {flags}\n"}
    if target is not None:
        text = text.replace(
            "    model: {name: m, query_heads: 32, kv_heads: 8}\n",
            "    model: {hf_config: models/t.json}\n",
        )
        files["models/t.json"] = json.dumps(target)
    if draft is not None:
        text = text.replace(
            "      draft_depth_ratio",
            "      draft_hf_config: models/d.json\n      draft_depth_ratio",
        )
        files["models/d.json"] = json.dumps(draft)
    files["c.specgate.yaml"] = text
    _code, dep = run(files)
    return [
        (f["code"], f["severity"], f"{f['message']} {f['details']}")
        for f in dep["findings"]
        if f["code"].startswith("SG3")
    ]


def _said(findings: list[tuple[str, str, str]], phrase: str) -> list[str]:
    return [s for _, s, m in findings if phrase in m]


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # _validate_vocab_compatibility: standalone_worker_v2.py:225 of 0.5.15, :194 of
        # 0.5.23; 0.5.14's standalone_worker_v2.py checks no vocabulary
        ("0.5.23", ["fail"]),
        ("0.5.15", ["fail"]),
        ("0.5.14", []),  # issue 27: warned ("seen in 0.5.23 only")
        (None, ["warn"]),  # nothing in the launch bounds the release to 0.5.15 or later
    ],
)
def test_standalone_vocabulary_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str | None,
    severity: list[str],
) -> None:
    # 152064 (target) against 151936 (draft): the vocabularies differ
    got = _findings(
        check,
        version,
        "--speculative-algorithm STANDALONE --speculative-draft-model-path d "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
        target=_LLAMA,
        draft={**_LLAMA, "vocab_size": 151936},
    )
    assert _said(got, "STANDALONE speculative decoding requires") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # 'assert self.topk == 1' under --speculative-use-rejection-sampling:
        # eagle_worker_v2.py:156 of 0.5.14, :197 of 0.5.23
        ("0.5.14", ["fail"]),
        ("0.5.23", ["fail"]),
        # the flag is not in 0.5.13.post1 (SG310 says so): not this refusal
        ("0.5.13.post1", []),
        # the flag exists from 0.5.14 only (since_after 0.5.13.post1): every release it
        # allows holds the refusal
        (None, ["fail"]),
    ],
)
def test_rejection_sampling_topk_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str | None,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_EAGLE_TREE} --speculative-use-rejection-sampling")
    assert _said(got, "Chain speculative sampling supports only topk=1") == severity, got


_DOMINO = {**_LLAMA, "architectures": ["DFlashDraftModel"],
           "dflash_config": {"projector_type": "domino"}, "block_size": 8}


@pytest.mark.parametrize(
    ("version", "flags", "draft", "severity"),
    [
        # dflash_worker_v2.py:432 of 0.5.20 and :467 of 0.5.23 raise it only under
        # self._is_domino (dflash_config.projector_type == 'domino'): a DFLASH Domino draft
        ("0.5.23", "--speculative-algorithm DFLASH", _DOMINO, ["fail"]),
        ("0.5.20", "--speculative-algorithm DFLASH", _DOMINO, ["fail"]),
        # the flag is first in 0.5.20: unpinned, every release it allows holds it
        (None, "--speculative-algorithm DFLASH", _DOMINO, ["fail"]),
        # any other draft never reads the value: no refusal (it failed before)
        ("0.5.23", "--speculative-algorithm DFLASH", {**_DOMINO, "dflash_config": {}}, []),
        ("0.5.23", "--speculative-algorithm EAGLE3 --speculative-num-steps 3 "
         "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4", _LLAMA, []),
    ],
)
def test_domino_candidate_pool_refused_only_for_a_domino_draft(
    check: Run,  # noqa: F811
    version: str | None,
    flags: str,
    draft: dict[str, object],
    severity: list[str],
) -> None:
    got = _findings(
        check,
        version,
        f"{flags} --speculative-draft-model-path d --speculative-domino-candidate-pool-size -1",
        target=_LLAMA,
        draft=draft,
    )
    assert _said(got, "candidate-pool-size must be non-negative") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # hisparse_coordinator.py:180 of 0.5.22 and 0.5.23: 'not 2 <= num_draft_tokens <= 4'
        ("0.5.22", ["fail"]),
        ("0.5.23", ["fail"]),
        # 0.5.21 falls back to synchronous prefetch with speculation
        # (hisparse_coordinator.py:94): no refusal
        ("0.5.21", []),
        # --enable-hisparse exists from 0.5.10: releases without the refusal are allowed
        (None, ["warn"]),
    ],
)
def test_hisparse_draft_tokens_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str | None,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_EAGLE_TREE} --enable-hisparse")
    assert _said(got, "HiSparse spec swap requires 2-4 draft tokens") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # create_trtllm_mla_backend: attention_registry.py:80 of 0.5.17, :102 of 0.5.23
        ("0.5.17", ["fail"]),
        ("0.5.23", ["fail"]),
        # 0.5.16 has no such raise (its ServerArgs refuses DCP with speculation on CUDA in
        # other words, server_args.py:3164: a warning, test_dcp_with_speculation_by_its_lifetime)
        ("0.5.16", []),
        # --dcp-size exists from 0.5.15: 0.5.15 and 0.5.16 are allowed
        (None, ["warn"]),
    ],
)
def test_trtllm_mla_dcp_spec_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str | None,
    severity: list[str],
) -> None:
    got = _findings(
        check, version, f"{_EAGLE_TREE} --dcp-size 2 --attention-backend trtllm_mla", target=_MLA
    )
    assert _said(got, "trtllm_mla cannot serve decode context parallelism") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # ServerArgs._handle_dcp_validation raises it on CUDA: server_args.py:2849-2856 of
        # 0.5.15, :3163-3170 of 0.5.16; on HIP it returns, so it warns (the platform is not
        # in the config)
        ("0.5.15", ["warn"]),
        ("0.5.16", ["warn"]),
        # 0.5.17 has no _handle_dcp_validation (only trtllm_mla refuses, not used here)
        ("0.5.17", []),
        ("0.5.23", []),
    ],
)
def test_dcp_with_speculation_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_EAGLE_TREE} --dcp-size 2", target=_MLA)
    assert _said(got, "does not support any speculative algorithm") == severity, got
    # DCP of 1 is no DCP (_handle_dcp_validation returns: `if not self.dcp_size > 1`)
    one = _findings(check, version, f"{_EAGLE_TREE} --dcp-size 1", target=_MLA)
    assert _said(one, "does not support any speculative algorithm") == [], one


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # attention_registry.py:270 of 0.5.17, :296 of 0.5.23; no hpc_ops backend in 0.5.16
        ("0.5.17", ["fail"]),
        ("0.5.16", []),
    ],
)
def test_hpc_ops_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_EAGLE_TREE} --attention-backend hpc_ops")
    assert _said(got, "hpc_ops backend does not support speculative decoding") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # FlashMLAMultiStepDraftBackend: flashmla_backend.py:471 of 0.4.6.post5 (built by
        # eagle_worker.py:203), :610 of 0.5.23
        ("0.4.6.post5", ["fail"]),
        ("0.5.10", ["fail"]),  # issue 27: warned ("seen in 0.5.23 only")
        # 0.4.6.post4 has no FlashMLA draft backend (it refuses EAGLE on flashmla in other
        # words, eagle_worker.py:203: test_eagle_on_flashmla_by_its_lifetime): not this one
        ("0.4.6.post4", []),
    ],
)
def test_flashmla_topk_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_EAGLE_TREE} --attention-backend flashmla")
    assert _said(got, "FlashMLA only supports topk=1") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # EAGLEWorker.init_attention_backend has no flashmla branch: its else raises at
        # eagle_worker.py:206-208 of 0.4.5.post2 ("supportted", sic), :203-205 of 0.4.6.post4
        ("0.4.5.post2", ["fail"]),
        ("0.4.6.post4", ["fail"]),
        # 0.4.6.post5 builds FlashMLAMultiStepDraftBackend (eagle_worker.py:203-215)
        ("0.4.6.post5", []),
        ("0.5.23", []),
    ],
)
@pytest.mark.parametrize("algorithm", ["EAGLE", "EAGLE3", "NEXTN"])
def test_eagle_on_flashmla_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
    algorithm: str,
) -> None:
    # topk 1: the FlashMLA topk refusal of 0.4.6.post5 on (flashmla-topk-1) is not met
    flags = (f"--speculative-algorithm {algorithm} --speculative-draft-model-path d "
             "--speculative-num-steps 3 --speculative-eagle-topk 1 "
             "--speculative-num-draft-tokens 4 --attention-backend flashmla")
    got = _findings(check, version, flags, target=_MLA)
    assert _said(got, "is not supported in attention backend flashmla") == severity, got
    other = _findings(check, version, flags.replace("flashmla", "triton"), target=_MLA)
    assert _said(other, "is not supported in attention backend") == [], other


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # --enable-flashmla sets the backend to flashmla for an MLA target
        # (model_runner.py:229-231 of 0.4.4.post2, :236-239 of 0.4.5.post1) and the EAGLE
        # worker raises (eagle_worker.py:186-189, :206-209)
        ("0.4.4.post2", ["fail"]),
        ("0.4.5.post1", ["fail"]),
        # 0.4.4.post1 has no --enable-flashmla; from 0.4.5.post2 the flag itself raises
        # (a DeprecatedAction, server_args.py:855): not this refusal
        ("0.4.4.post1", []),
        ("0.4.5.post2", []),
    ],
)
def test_eagle_with_enable_flashmla_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    flags = ("--speculative-algorithm EAGLE --speculative-draft-model-path d "
             "--speculative-num-steps 3 --speculative-eagle-topk 1 "
             "--speculative-num-draft-tokens 4 --enable-flashmla")
    phrase = "sets the attention backend to flashmla"
    got = _findings(check, version, flags, target=_MLA)
    assert _said(got, phrase) == severity, got
    # --enable-flashinfer-mla is read first (model_runner.py:224-228): flashinfer_mla
    both = _findings(check, version, flags + " --enable-flashinfer-mla", target=_MLA)
    assert _said(both, phrase) == [], both
    # a target that is not MLA keeps its backend at 0.4.4.post2 (model_runner.py:218-221)
    assert _said(_findings(check, version, flags, target=_LLAMA), phrase) == []


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # FlashInferMLAMultiStepDraftBackend raises it (flashinfer_mla_backend.py:661 of
        # 0.4.4.post4); --attention-backend flashinfer keeps FlashInfer for an MLA target
        # from 0.4.4.post4 (model_runner.py:837-852); the draft d is an MLA model (its
        # config stated: the draft runner's use_mla_backend picks the MLA draft backend,
        # 0.4.4.post4 eagle_worker.py:153, 0.5.23 draft_utils.py:227)
        ("0.4.4.post4", ["fail"]),
        ("0.5.23", ["fail"]),
        # 0.4.4.post3 serves an MLA target with triton unless --enable-flashinfer-mla
        # (model_runner.py:221-228): not refused
        ("0.4.4.post3", []),
    ],
)
def test_flashinfer_mla_topk_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(
        check, version, f"{_EAGLE_TREE} --attention-backend flashinfer", target=_MLA, draft=_MLA
    )
    assert _said(got, "Flashinfer MLA only supports topk=1") == severity, got


def test_flashinfer_mla_topk_warns_when_the_draft_config_is_not_read(
    check: Run,  # noqa: F811
) -> None:
    # the draft d's config not stated: whether the draft runner uses MLA (0.5.23
    # draft_utils.py:227 draft_model_runner.use_mla_backend) is not known, so a warning
    got = _findings(check, "0.5.23", f"{_EAGLE_TREE} --attention-backend flashinfer", target=_MLA)
    assert _said(got, "Flashinfer MLA only supports topk=1") == ["warn"], got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # deepseek_weight_loader.py:567 of 0.5.23 asserts it; from 0.5.12 all four
        # architectures of the check draft with their NextN layer (DeepseekV32 mapped to
        # DeepseekV3ForCausalLMNextN there, model_config.py _config_draft_model)
        ("0.5.23", ["fail"]),
        ("0.5.12", ["fail"]),
        # older releases hold it for some architectures only (DeepseekV3 from
        # 0.4.6.post2): not known for the check's set, a warning
        ("0.5.11", ["warn"]),
        ("0.4.8", ["warn"]),
    ],
)
def test_nextn_one_layer_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(
        check,
        version,
        "--speculative-algorithm NEXTN --speculative-num-steps 1 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 2",
        target={**_MLA, "num_nextn_predict_layers": 2},
    )
    assert _said(got, "Only 1 nextn layer is supported") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # _handle_dspark: speculative_hook.py:390 of 0.5.16, :848 of 0.5.23
        ("0.5.16", ["fail"]),
        ("0.5.23", ["fail"]),
        ("0.5.15.post1", []),  # no DSPARK algorithm there
    ],
)
def test_dspark_draft_tokens_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(
        check,
        version,
        "--speculative-algorithm DSPARK --speculative-draft-model-path d "
        "--speculative-num-draft-tokens 1",
    )
    assert _said(got, "DSpark speculative_num_draft_tokens must be >= 2") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # the cutedsl_mla raise: draft_utils.py:270 of 0.5.17, :381 of 0.5.23
        ("0.5.17", ["fail"]),
        ("0.5.23", ["fail"]),
        # 0.5.7-0.5.16 read --speculative-draft-attention-backend but have no cutedsl_mla
        # draft backend (refused in other words): a warning
        ("0.5.10", ["warn"]),
        # --speculative-draft-attention-backend is not in 0.5.6 (SG310): not this refusal
        ("0.5.6", []),
    ],
)
def test_mla_draft_backend_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(
        check,
        version,
        f"{_EAGLE_TREE} --speculative-draft-attention-backend cutedsl_mla",
        target=_LLAMA,
        draft=_LLAMA,
    )
    assert _said(got, "backend requires MLA model") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # SpeculativeAlgorithm.from_string: spec_info.py:54 of 0.5.12 (ServerArgs calls it,
        # server_args.py:3574, with no argparse choices any more), :65 of 0.5.23
        ("0.5.12", ["fail"]),  # issue 27: warned ("seen in 0.5.13, 0.5.18, 0.5.23")
        ("0.5.23", ["fail"]),
        # 0.5.11's parser refuses it first by its choices (algorithm-choices-0.5.11, a
        # fail of its own): this message is not the engine's there, a warning
        ("0.5.11", ["warn"]),
    ],
)
def test_unknown_algorithm_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(check, version, "--speculative-algorithm MTP")
    assert _said(got, "Unknown speculative algorithm name: MTP") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # the warning of eagle_worker.py:91 at 0.4.4.post2 (where EAGLE3 came in) and
        # eagle_worker_v2.py:328 at 0.5.23: a warning wherever it holds
        ("0.4.4.post2", ["warn"]),
        ("0.5.23", ["warn"]),
        ("0.4.4.post1", []),  # no EAGLE3 there
    ],
)
def test_eagle3_token_map_ignored_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(
        check,
        version,
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path d "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
        "--speculative-token-map t.pt",
    )
    assert _said(got, "EAGLE3 models already have this") == severity, got


@pytest.mark.parametrize(
    "version",
    [
        # DRAFT_ATTENTION_BACKEND_CHOICES with intel_xpu from 0.5.20 (choices.py:108-114)
        "0.5.20",
        # 0.5.19's set lacks intel_xpu (server_args.py:207-212): the engine falls back
        # there too (a warning either way), and the message names where this set holds
        "0.5.19",
    ],
)
def test_draft_attention_backend_fallback_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
) -> None:
    got = _findings(
        check,
        version,
        "--speculative-algorithm DFLASH --speculative-draft-model-path d "
        "--speculative-draft-attention-backend flashmla",
    )
    (said,) = [m for _, s, m in got if "but got flashmla" in m and s == "warn"]
    assert f"judged at SGLang {version}" in said
    assert "held in SGLang 0.5.20 to 0.5.23 by its history" in said


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # SGLang's own parser refuses a value its type= cannot convert (argparse, exit 2):
        # sglang 0.4.9.post1 to 0.5.5.post2 themselves answer "argument --speculative-num-steps:
        # invalid int value: 'x'" (tests/data/engine_oracle/sglang-0.4.9.post1.json …
        # sglang-0.5.5.post2.json, sglang-0371-flag-bad), as every release recorded to
        # 0.5.23 does (issue 27: 0.4.9.post1 to 0.5.5.post2 warned, the refusal read from
        # 0.5.5.post3 only)
        ("0.4.9.post1", ["fail"]),
        ("0.4.10", ["fail"]),
        ("0.4.10.post2", ["fail"]),
        ("0.5.1", ["fail"]),
        ("0.5.1.post3", ["fail"]),
        ("0.5.2", ["fail"]),
        ("0.5.5.post2", ["fail"]),
        ("0.5.23", ["fail"]),
        # 0.4.9 is not recorded (it does not import beside triton 3.9): its parser was not
        # asked, a warning
        ("0.4.9", ["warn"]),
    ],
)
def test_sglang_parser_refusal_of_a_bad_int_by_its_recorded_releases(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_EAGLE_TREE.replace('steps 3', 'steps x')}")
    assert _said(got, "invalid int value: 'x'") == severity, got


@pytest.mark.parametrize(
    ("version", "dp", "severity"),
    [
        # ServerArgs.__post_init__ asserts dp_size > 1 under --enable-dp-attention from
        # 0.4.4.post1 (server_args.py:266-268; 0.4.4's :264 has no assert) to 0.5.1.post3
        # (:536-538); 0.5.2 has none. sglang 0.5.1.post3 itself refuses the default
        # --dp-size 1 (tests/data/engine_oracle/sglang-0.5.1.post3.json,
        # sglang-0422-flag-switch); 0.5.2 accepts it (sglang-0.5.2.json, the same record)
        ("0.5.1.post3", "", ["fail"]),
        ("0.4.4.post1", "--dp-size 1", ["fail"]),
        ("0.5.1.post3", "--dp-size 2", []),
        ("0.5.2", "", []),
        ("0.4.4", "", []),
    ],
)
def test_sglang_dp_attention_needs_a_dp_size_before_0_5_2(
    check: Run,  # noqa: F811
    version: str,
    dp: str,
    severity: list[str],
) -> None:
    flags = f"{_EAGLE_TREE} --tp-size 2 --enable-dp-attention {dp}"
    got = _findings(check, version, flags)
    assert _said(got, "Please set a dp-size > 1") == severity, got


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # --decode-attention-backend is in the parser of sglang 0.4.9.post5 (recorded:
        # src/specgate/data/engines/parsers/sglang-0.4.9.post5.json; server_args.py:1226 of
        # the wheel) and not in 0.4.9.post4's (recorded, and absent from its server_args.py)
        ("0.4.9.post5", []),
        ("0.4.9.post4", ["fail"]),
    ],
)
def test_sglang_decode_attention_backend_from_0_4_9_post5(
    check: Run,  # noqa: F811
    version: str,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_EAGLE_TREE} --decode-attention-backend triton")
    assert [s for c, s, m in got if c == "SG310" and "--decode-attention-backend" in m] == (
        severity
    ), got
