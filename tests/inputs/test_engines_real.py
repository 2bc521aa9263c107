"""Engine readers on real published serving configs (tests/data/real/SOURCES.md).

Every expected value is worked out by hand from the file's text in the comment
beside it; tests/data/real/SOURCES.md's oracles were checked against the same text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.inputs.types import EngineConfig
from specgate.load.document import Span

REAL = Path(__file__).resolve().parent.parent / "data" / "real"


def read(name: str, pointer: str | None = None, engine: str | None = None) -> EngineConfig:
    return read_engine_file(REAL / name, name, pointer=pointer, engine=engine)


def summary(c: EngineConfig) -> tuple[object, ...]:
    return (
        c.engine,
        c.mechanism,
        c.draft_length,
        c.verify_tokens,
        c.draft_length_is_max,
        c.lossy_acceptance,
        c.tensor_parallel_size,
    )


def test_vllm_recipe_gpt_oss_eagle3_json_string() -> None:
    c = read("vllm/config/recipes-GPT-OSS_EAGLE3_Hopper.yaml")
    # line 5: speculative-config: '{"model":…,"num_speculative_tokens":7,"method":"eagle3",
    # "draft_tensor_parallel_size":1}' → eagle3 chain, D = 7, N_verify = 7 + 1 = 8.
    # Not n-gram ⇒ exact D; no lossy knob; the file states no target TP (CLI gives it).
    assert summary(c) == ("vllm", "eagle3", 7, 8, False, False, None)
    assert c.draft_model == "nvidia/gpt-oss-120b-Eagle3-v3"
    assert c.pointer == ""  # the whole file is the serve mapping
    # draft TP 1 ∈ {1, target TP}: no issue.
    assert c.issues == ()
    # Values inside the JSON string point at themselves. "speculative-config: '" is 21
    # characters, so the JSON's "{" is column 22 and its n-th character column 21 + n.
    # '{"model":' is 9 characters ⇒ the draft's "nvidia/…" opens at 21 + 10 = 31;
    # '{"model":"nvidia/gpt-oss-120b-Eagle3-v3","num_speculative_tokens":' is
    # 1 + 7 + 1 + 31 + 1 + 24 + 1 = 66 ⇒ the 7 at 21 + 67 = 88; ',"method":' is 10 more
    # ⇒ "eagle3" at 99; ',"draft_tensor_parallel_size":' (1 + 28 + 1 = 30) after the
    # 8 characters of "eagle3" (99..106) ⇒ the 1 at 107 + 30 = 137.
    assert c.spans["draft_model"] == Span(5, 31)
    assert c.spans["draft_length"] == Span(5, 88)
    assert c.spans["mechanism"] == Span(5, 99)
    assert c.spans["draft_tensor_parallel_size"] == Span(5, 137)


def test_vllm_recipe_deepseek_argv_list() -> None:
    c = read("vllm/config/recipes-models-DeepSeek-V3.2.yaml")
    # features.spec_decoding.args = ["--speculative-config", '{"method":"mtp",
    # "num_speculative_tokens":3}'] → mtp, D = 3, N_verify = 4. The guide's
    # `vllm serve` command has no speculative flag, so only one configuration.
    assert summary(c) == ("vllm", "mtp", 3, 4, False, False, None)
    assert c.pointer == "/features/spec_decoding/args"
    # Line 55: "      - '" is 9 characters, so "{" is column 10 and the JSON's n-th
    # character column 9 + n. '{"method":' is 10 ⇒ "mtp" at 20;
    # '{"method":"mtp","num_speculative_tokens":' is 1 + 8 + 1 + 5 + 1 + 24 + 1 = 41
    # ⇒ the 3 at 9 + 42 = 51.
    assert c.spans["mechanism"] == Span(55, 20)
    assert c.spans["draft_length"] == Span(55, 51)


def test_vllm_gym_nested_ngram() -> None:
    c = read("vllm/config/gym-Qwen3-30B-A3B-Instruct-2507-ngram-specdec.yaml")
    # vllm_serve_kwargs: tensor_parallel_size 8 (line 42); speculative_config (line 57):
    # method ngram (58), num_speculative_tokens 3 (59), prompt_lookup_max 5, min 2.
    # n-gram ⇒ D = 3 is a maximum; N_verify = 4; min 2 ≤ max 5 ⇒ no issue.
    assert summary(c) == ("vllm", "ngram", 3, 4, True, False, 8)
    assert c.pointer == (
        "/Qwen3-30B-A3B-Instruct-2507-ngram-specdec/responses_api_models/"
        "local_vllm_model/vllm_serve_kwargs"
    )
    assert c.spans["draft_length"] == Span(59, 35)
    assert c.spans["tensor_parallel_size"] == Span(42, 31)
    assert c.issues == ()


def test_vllm_nightly_v0_flat_flags() -> None:
    c = read("vllm/config/nightly-benchmarks-serving-tests.json")
    # Only entry 4 (index 3) speculates: speculative_model turboderp/Qwama-0.5B-Instruct,
    # num_speculative_tokens 4, speculative_draft_tensor_parallel_size 1, TP 4.
    # A separate draft LM ⇒ draft_model; D = 4, N_verify = 5; draft TP 1 is valid.
    assert summary(c) == ("vllm", "draft_model", 4, 5, False, False, 4)
    assert c.pointer == "/3/server_parameters"
    assert c.draft_model == "turboderp/Qwama-0.5B-Instruct"
    assert c.spans["draft_length"].line == 68
    # No version in the file: the newest vLLM is assumed (docs/engines.md#versions), which has none
    # of the three V0 flat keys (F12); pinned to a V0 release, the file is valid.
    assert sorted(i.field for i in c.issues if i.code == "SG310") == [
        "setting:--num-speculative-tokens",
        "setting:--speculative-draft-tensor-parallel-size",
        "setting:--speculative-model",
    ]
    assert c.issues and {i.code for i in c.issues} == {"SG310"}
    name = "vllm/config/nightly-benchmarks-serving-tests.json"
    v0 = read_engine_file(REAL / name, name, engine_version="0.6.4")
    assert summary(v0) == summary(c)
    assert v0.issues == ()


def test_sglang_attention_backend_two_models_need_a_pointer() -> None:
    # Two per-model argument strings set an algorithm; server_cmd sets steps/topk/
    # draft tokens but no algorithm (a fragment, not a configuration).
    with pytest.raises(InputError) as err:
        read("sglang/config/attention_backend-bench_serving_spec_decode.yaml")
    message = str(err.value)
    assert "2 speculative configurations" in message
    assert "/models/0/additional_server_arguments" in message
    assert "/models/1/additional_server_arguments" in message


def test_sglang_attention_backend_deepseek_with_shared_server_cmd() -> None:
    c = read(
        "sglang/config/attention_backend-bench_serving_spec_decode.yaml",
        pointer="/models/0/additional_server_arguments",
    )
    # `--tp 8 --speculative-algo EAGLE … --speculative-draft-model-path …DeepSeek-V3-NextN…`
    # plus server_cmd's steps 3, topk 1, draft tokens 4: topk 1 ⇒ chain, D = 3,
    # N_verify = 3 + 1 = 4 (matches the stated 4). EAGLE with a NextN draft ⇒ mtp.
    assert summary(c) == ("sglang", "mtp", 3, 4, False, False, 8)
    assert c.issues == ()
    # steps come from line 5 of the plain multi-line scalar (column of "3" is 29).
    assert c.spans["draft_length"] == Span(5, 29)
    assert c.spans["mechanism"].line == 24
    assert any("server_cmd" in note for note in c.notes)


def test_sglang_attention_backend_llama_eagle3() -> None:
    c = read(
        "sglang/config/attention_backend-bench_serving_spec_decode.yaml",
        pointer="/models/1/additional_server_arguments",
    )
    # `--speculative-algo EAGLE3` (abbreviation) + server_cmd 3/1/4 ⇒ eagle3, D 3, N 4.
    # No --tp in this entry ⇒ TP not stated.
    assert summary(c) == ("sglang", "eagle3", 3, 4, False, False, None)


def test_sglang_cookbook_argv_with_spec_v2_env() -> None:
    c = read("sglang/config/sgl-cookbook-v0.5.6-gpt-oss.yaml")
    # configurations[1].extra_args: EAGLE3, steps "3", topk "1", draft tokens "4"
    # ⇒ chain, D = 3, N_verify = 4. env_vars SGLANG_ENABLE_SPEC_V2 "1" needs topk 1:
    # satisfied ⇒ no issue. TP comes from hardware tables, not the launcher ⇒ None.
    assert summary(c) == ("sglang", "eagle3", 3, 4, False, False, None)
    assert c.pointer == "/defaults/configurations/1/extra_args"
    assert c.issues == ()
    assert c.spans["draft_length"].line == 25  # the "3" item after --speculative-num-steps


def test_sglang_pr2150_tree_with_abbreviations() -> None:
    c = read("sglang/config/sglang-pr2150-eagle2-tree-launch.cmdline.txt")
    # --speculative-algo EAGLE, --speculative-draft …, steps 5, topk 8, draft tokens 64.
    # Tree: D = steps = 5, N_verify = 64. Pool = 8 + (5 − 1)·8² = 264 ≥ 63 ⇒ no issue
    # (64 > 5·8 + 1 = 41 is fine, see SOURCES).
    assert summary(c) == ("sglang", "eagle", 5, 64, False, False, None)
    # Contract change (issue 27): the command names no version, and SGLang 0.5.1.post3 and
    # older (recorded parsers, src/specgate/data/engines/parsers/sglang-0.5.1*.json) have one
    # --speculative-draft-* flag, --speculative-draft-model-path, so there the word is the
    # draft path; 0.5.2 adds --speculative-draft-model and the word turns ambiguous. Where the
    # command starts at all, it serves this draft (the PR's own build did).
    assert c.draft_model == "lmzheng/sglang-EAGLE-llama2-chat-7B"
    # SGLang 0.5.23's parser refuses --speculative-draft ("ambiguous option: … could match
    # --speculative-draft-model-path, --speculative-draft-model, …": its answer in
    # tests/data/engine_oracle/parser-sglang-0.5.23.json); the command names no version,
    # so the refusal warns (the PR's build had one --speculative-draft-* flag).
    (issue,) = c.issues
    assert (issue.code, issue.severity) == ("SG310", "warn")
    assert "ambiguous option: --speculative-draft could match" in issue.message
    # "64" starts at column 237 of the single line (counted in the file).
    assert c.spans["verify_tokens"] == Span(1, 237)


def test_trtllm_deepseek_r1_relaxed_mtp_is_lossy() -> None:
    c = read("tensorrt-llm/config/curated-deepseek-r1-latency.yaml")
    # decoding_type MTP, max_draft_len 3 ⇒ D 3, N 4; use_relaxed_acceptance_for_thinking
    # true ⇒ lossy (SG304); tensor_parallel_size 8 (line 2).
    assert summary(c) == ("trtllm", "mtp", 3, 4, False, True, 8)
    assert [i.code for i in c.issues] == ["SG304"]
    assert c.spans["lossy_acceptance"].line == 13
    assert c.spans["draft_length"] == Span(12, 18)


def test_trtllm_qwen_mtp3() -> None:
    c = read("tensorrt-llm/config/curated-qwen3.8-low-latency-mtp3.yaml")
    # MTP, max_draft_len 3 ⇒ D 3, N 4; TP 16; enable_attention_dp false.
    assert summary(c) == ("trtllm", "mtp", 3, 4, False, False, 16)
    assert c.attention_data_parallel is False


def test_trtllm_dynamo_llama4_eagle_alias() -> None:
    c = read("tensorrt-llm/config/dynamo-llama4-eagle_decode.yaml")
    # decoding_type Eagle (alias of Eagle3), max_draft_len 3 ⇒ D 3, N 4; TP 4;
    # speculative_model_dir names the draft.
    assert summary(c) == ("trtllm", "eagle3", 3, 4, False, False, 4)
    assert c.draft_model == "nvidia/Llama-4-Maverick-17B-128E-Eagle3"


def test_trtllm_extra_options_nextn_layers_only() -> None:
    c = read("tensorrt-llm/config/llm-api-extra-llm-api-config.yml")
    # "MTP", num_nextn_predict_layers 8 and no max_draft_len ⇒ D 8, N 9; no TP stated.
    assert summary(c) == ("trtllm", "mtp", 8, 9, False, False, None)
    assert c.spans["draft_length"] == Span(3, 29)


def test_llamacpp_llama_swap_draft_model_not_ngld() -> None:
    c = read("llama.cpp/config/llama-swap-aider-qwq-coder.yaml")
    # Only "qwen-coder-32B" has --model-draft; "QwQ" has -ngld 99 without a draft
    # (configures nothing). --draft-max 16 ⇒ D 16, N 17; --draft-p-min 0.4 > 0 ⇒ D is
    # a maximum. llama.cpp has no TP ⇒ None.
    assert summary(c) == ("llamacpp", "draft_model", 16, 17, True, False, None)
    assert c.pointer == "/models/qwen-coder-32B/cmd"
    assert c.draft_model == "/path/to/Qwen2.5-Coder-1.5B-Instruct-Q8_0.gguf"
    # Inside the folded `cmd: >` block: "16" on line 26 column 19, draft path line 24.
    assert c.spans["draft_length"] == Span(26, 19)
    assert c.spans["draft_model"] == Span(24, 21)


def test_llamacpp_llama_swap_qwq_pointer_configures_nothing() -> None:
    with pytest.raises(InputError, match="no speculative decoding configured"):
        read("llama.cpp/config/llama-swap-aider-qwq-coder.yaml", pointer="/models/QwQ/cmd")
