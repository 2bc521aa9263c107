"""The kinds of engine-reading faults of issue 8 (shared cases "Engines and formats"),
each on the case's own input and on other inputs of the same kind.

Formats follow the engines' own sources: vLLM ``vllm/config/speculative.py`` (methods,
refusals), users' launchers for ``--spec-*``/``-sc``; SGLang
``python/sglang/srt/server_args.py`` (DFLASH block size, NGRAM default 12 draft tokens,
``--speculative-adaptive``, the spec-v1 fallback); TensorRT-LLM
``tensorrt_llm/llmapi/llm_args.py`` (``decoding_type: Literal["Draft_Target"]``);
llama.cpp ``common/arg.cpp`` and llama.cpp PR #27210 (``draft-mtp-adaptive``);
transformers ``GenerationConfig`` (confidence threshold 0.4).
"""

from __future__ import annotations

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_config
from specgate.inputs.model_config import read_model_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document
from specgate.load.read import parse_text


def cmd(text: str, engine: str | None = None, version: str | None = None) -> EngineConfig:
    return read_engine_config(
        Document("cmd.txt", text),
        shown="cmd.txt",
        pointer=None,
        engine=engine,
        engine_version=version,
    )


def yaml(text: str, engine: str | None = None, version: str | None = None) -> EngineConfig:
    doc = parse_text(text, "cfg.yaml", json_syntax=False)
    return read_engine_config(
        doc, shown="cfg.yaml", pointer=None, engine=engine, text=text, engine_version=version
    )


def core(c: EngineConfig) -> tuple[object, ...]:
    return (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max)


def codes(c: EngineConfig) -> list[str]:
    return [i.code for i in c.issues]


# --- 1. flag and alias lists -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # cases/engines/01
        (
            "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1 --spec-method ngram --spec-tokens 4",
            ("ngram", 4, 5, True),
        ),
        # cases/engines/02: the shorthands merge into --speculative-config's keys
        (
            "vllm serve Qwen/Qwen3-8B --spec-method ngram --spec-tokens 2 --speculative-config "
            '\'{"prompt_lookup_max": 4, "prompt_lookup_min": 1}\'',
            ("ngram", 2, 3, True),
        ),
        # cases/engines/03 and 03b
        (
            'vllm serve meta-llama/Llama-3.1-8B-Instruct -sc \'{"method": "eagle3", '
            '"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}\'',
            ("eagle3", 3, 4, False),
        ),
        (
            "vllm serve Qwen/Qwen3-8B -sc.method draft_model -sc.model Qwen/Qwen3-0.6B "
            "-sc.num_speculative_tokens 3",
            ("draft_model", 3, 4, False),
        ),
        # same kind: = spellings, underscores, a shorthand model naming the method
        (
            "vllm serve m --spec-method=mtp --spec_tokens=2",
            ("mtp", 2, 3, False),
        ),
        (
            "vllm serve m --spec-model yuhuili/EAGLE3-LLaMA3.1-Instruct-8B --spec-tokens 5",
            ("eagle3", 5, 6, False),
        ),
        ("vllm serve m -sc.method=suffix -sc.num_speculative_tokens=16", ("suffix", 16, 17, True)),
    ],
)
def test_vllm_spec_flags(line: str, expected: tuple[object, ...]) -> None:
    c = cmd(line)
    assert (c.engine, *core(c)) == ("vllm", *expected)
    assert codes(c) == []


def test_vllm_shorthand_wins_over_the_json_key() -> None:
    c = cmd(
        "vllm serve m --speculative-config '{\"num_speculative_tokens\": 5}' --spec-tokens 3 "
        "--spec-method ngram"
    )
    assert core(c) == ("ngram", 3, 4, True)


@pytest.mark.parametrize(
    ("line", "mechanism", "d", "removed"),
    [
        # cases/engines/21: the --draft-* generation on today's build
        ("llama-server -m t.gguf -md d.gguf --draft-max 8 --draft-min 2", "draft_model", 8, 2),
        ("llama-server -m t.gguf -md d.gguf --draft 6", "draft_model", 6, 1),
        ("llama-server -m t.gguf -md d.gguf --draft-n 5", "draft_model", 5, 1),
        (
            "llama-server -m t.gguf -md d.gguf --spec-type draft-simple --spec-draft-n-max 8",
            "draft_model",
            8,
            0,
        ),
        # cases/engines/19: a comma list of types, split; the model drafter names it
        (
            "llama-server -m q.gguf --spec-type draft-mtp,ngram-mod --spec-draft-n-max 2 "
            "--spec-draft-p-min 0.82",
            "mtp",
            2,
            0,
        ),
        ("llama-server -m q.gguf --spec-type ngram-mod,draft-eagle3 -md e.gguf", "eagle3", 3, 0),
        ("llama-server -m q.gguf --spec-type draft-dflash -md df.gguf", "dflash", 3, 0),
    ],
)
def test_llamacpp_flag_lists(line: str, mechanism: str, d: int, removed: int) -> None:
    c = cmd(line)
    assert (c.engine, c.mechanism, c.draft_length) == ("llamacpp", mechanism, d)
    assert codes(c).count("SG310") == removed


def test_llamacpp_draft_model_without_spec_type_is_unused() -> None:
    # Current builds: --spec-type defaults to none; -md alone loads the draft, unused.
    c = cmd("llama-server -m t.gguf -md d.gguf --spec-draft-n-max 8")
    assert codes(c) == ["SG307"]
    assert c.spans["draft_model"].column == 28  # "d.gguf" after 27 characters
    # Builds before the --spec-* rename drafted with -md alone. Contract change: was
    # b4000, whose llama-server has no -md (new-user trial M1: -md is llama-speculative's
    # alone at b4094, common/arg.cpp:1596-1602 @74d73dc8; the server's at b4295)
    assert codes(cmd("llama-server -m t.gguf -md d.gguf", version="b4295")) == []


@pytest.mark.parametrize(
    "line",
    [
        "llama-speculative -m t.gguf -md d.gguf --spec-draft-n-max 8",
        "./llama-speculative -m t.gguf -md d.gguf -p hello",
        "docker run ghcr.io/ggml-org/llama.cpp:full llama-speculative -m t.gguf -md d.gguf",
    ],
)
def test_llama_speculative_always_drafts_with_the_draft_model(line: str) -> None:
    # examples/speculative/speculative.cpp @007d7135: main() requires --model-draft and
    # drafts params.speculative.draft.n_max tokens a step; speculative.types is never read
    c = cmd(line, version="b11312")
    assert "SG307" not in codes(c)
    assert c.mechanism == "draft_model"
    # llama-server at the same build: -md alone is loaded and unused (the SG307 above)
    assert codes(cmd(line.replace("llama-speculative", "llama-server"), version="b11312")) == [
        "SG307"
    ]


def test_llamacpp_spec_type_none_configures_nothing() -> None:
    with pytest.raises(InputError, match="no speculative decoding configured"):
        cmd("llama-server -m q.gguf --spec-type none")


# --- 2. stale defaults and refusals --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # cases/engines/04
        "model: deepseek-ai/DeepSeek-V3\ntensor-parallel-size: 8\n"
        "speculative-config: '{\"num_speculative_tokens\": 1}'\n",
        "speculative_config:\n  num_speculative_tokens: 3\n  draft_tensor_parallel_size: 1\n",
    ],
)
def test_vllm_block_without_method_or_model_is_refused(text: str) -> None:
    c = yaml(text)
    assert c.mechanism is None
    assert codes(c) == ["SG307"]
    assert "vLLM refuses" in c.issues[0].message


def test_sglang_ngram_default_draft_tokens() -> None:
    # cases/engines/11: server_args.py sets 12 when unset
    c = cmd(
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm NGRAM"
    )
    assert core(c) == ("ngram", 11, 12, True)


@pytest.mark.parametrize(
    ("line", "d"),
    [
        # llama-server --help: "--spec-ngram-mod-n-max N  maximum number of ngram tokens
        # (default: 64)"
        ("llama-server -m q.gguf --spec-type ngram-mod", 64),
        ("llama-server -m q.gguf --spec-type ngram-mod --spec-ngram-mod-n-max 64", 64),
        # the generic cap does not set ngram-mod's own length
        ("llama-server -m q.gguf --spec-type ngram-mod --spec-draft-n-max 4", 4),
    ],
)
def test_llamacpp_ngram_mod_length(line: str, d: int) -> None:
    c = cmd(line)
    assert (c.mechanism, c.draft_length, c.draft_length_is_max) == ("ngram", d, True)


def test_transformers_threshold_default() -> None:
    # cases/engines/22
    doc = parse_text(
        '{"assistant_model": "HuggingFaceTB/SmolLM2-135M-Instruct", "num_assistant_tokens": 20, '
        '"do_sample": false}',
        "generation_config.json",
        json_syntax=True,
    )
    c = read_engine_config(doc, shown="generation_config.json", pointer=None, engine=None)
    assert core(c) == ("draft_model", 20, 21, True)


# --- 3. adaptive draft length switches -------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "text", "expected"),
    [
        # cases/engines/09
        (
            "cmd",
            "python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
            "--speculative-draft-model-path d --speculative-num-steps 5 "
            "--speculative-eagle-topk 1 --speculative-num-draft-tokens 6 --speculative-adaptive",
            ("eagle3", 5, 6, True),
        ),
        # cases/engines/15
        (
            "yaml",
            "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 4\n"
            "  draft_len_schedule: {4: 4, 8: 2, 32: 1}\n  speculative_model: e\n",
            ("eagle3", 4, 5, True),
        ),
        # cases/engines/18: D from --spec-draft-n-max, the adaptive type caps it
        (
            "cmd",
            "llama-server -m /models/Qwen3.6-27B-MTP.gguf --spec-type draft-mtp-adaptive "
            "--spec-draft-n-max 12",
            ("mtp", 12, 13, True),
        ),
        (
            "yaml",
            "speculative_config:\n  method: eagle3\n  model: e\n  num_speculative_tokens: 4\n"
            "  num_speculative_tokens_per_batch_size: [[1, 8, 4], [9, 64, 2]]\n",
            ("eagle3", 4, 5, True),
        ),
    ],
)
def test_adaptive_switches(source: str, text: str, expected: tuple[object, ...]) -> None:
    c = cmd(text) if source == "cmd" else yaml(text)
    assert core(c) == expected


# --- 4. names normalised as the engine does --------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "mechanism", "removed"),
    [
        ("Draft_Target", "draft_model", False),  # cases/engines/12
        ("PARD", "pard", False),  # cases/engines/16
        ("DFlash", "dflash", False),
        ("Eagle3", "eagle3", False),
        # the spelling of earlier releases (their from_dict map), still in NVIDIA's
        # playbooks; the switch release is unknown: read as meant, a note, no SG310
        ("DraftTarget", "draft_model", False),
        ("eagle3", "eagle3", True),
        ("ngram", "ngram", True),
        ("Lookahead", "other", False),
    ],
)
def test_trtllm_exact_discriminators(kind: str, mechanism: str, removed: bool) -> None:
    c = yaml(f"speculative_config:\n  decoding_type: {kind}\n  max_draft_len: 4\n")
    assert c.mechanism == mechanism
    assert ("SG310" in codes(c)) is removed
    if removed:
        assert c.spans["decoding_type"].line == 2
    if kind == "DraftTarget":
        assert any("spelling of earlier TensorRT-LLM releases" in n for n in c.notes)


@pytest.mark.parametrize(
    ("block", "mechanism", "passes"),
    [
        # cases/engines/06: a DFlash draft named without a method
        (
            '{"model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15}',
            "dflash",
            "single",
        ),
        (
            '{"method": "dflash", "model": "z-lab/x", "num_speculative_tokens": 7}',
            "dflash",
            "single",
        ),
        (
            '{"method": "draft_model", "model": "amd/PARD-Llama-3.2-1B", '
            '"num_speculative_tokens": 8, "parallel_drafting": true}',
            "draft_model",
            "single",
        ),
        # report-07's assistant-k1: a gemma-4 -assistant drafter runs as an MTP-style head
        (
            '{"model": "google/gemma-4-26B-A4B-it-assistant", "num_speculative_tokens": 1}',
            "mtp",
            None,
        ),
        ('{"model": "[ngram]", "num_speculative_tokens": 3}', "ngram", None),
        ('{"model": "org/Qwen3-8B-DSpark", "num_speculative_tokens": 7}', "other", "single"),
        ('{"method": "eagle3", "model": "e", "num_speculative_tokens": 3}', "eagle3", None),
    ],
)
def test_vllm_names(block: str, mechanism: str, passes: str | None) -> None:
    c = yaml(f"speculative-config: '{block}'\n")
    assert (c.mechanism, c.draft_passes) == (mechanism, passes)


@pytest.mark.parametrize(
    ("flags", "d", "n"),
    [
        ("--speculative-num-draft-tokens 16", 15, 16),  # cases/engines/08
        ("--speculative-dflash-block-size 8", 7, 8),  # cases/engines/08b
        ("--speculative-dflash-block-size 8 --speculative-num-draft-tokens 8", 7, 8),
        # topk is forced to 1 with a warning; steps/topk/tokens all-or-none does not apply
        ("--speculative-num-draft-tokens 16 --speculative-eagle-topk 4", 15, 16),
    ],
)
def test_sglang_dflash_blocks(flags: str, d: int, n: int) -> None:
    c = cmd(
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm "
        f"DFLASH --speculative-draft-model-path z-lab/Qwen3-8B-DFlash-b16 {flags}"
    )
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_passes) == (
        "dflash",
        d,
        n,
        "single",
    )
    assert codes(c) == []


def test_sglang_dflash_widths_that_disagree() -> None:
    c = cmd(
        "python3 -m sglang.launch_server --speculative-algorithm DFLASH "
        "--speculative-draft-model-path z-lab/dflash "
        "--speculative-dflash-block-size 8 --speculative-num-draft-tokens 16"
    )
    assert codes(c) == ["SG307"]


# --- 5. implicit switches ----------------------------------------------------------------------


def test_trtllm_dynamic_tree_default_total() -> None:
    # cases/engines/14: dynamic_tree_max_topK × max_draft_len = 10 × 6 = 60 drafts
    c = yaml(
        "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 6\n"
        "  use_dynamic_tree: true\n  dynamic_tree_max_topK: 10\n  speculative_model: e\n"
    )
    assert (c.draft_length, c.verify_tokens) == (6, 61)


@pytest.mark.parametrize(
    ("tree", "d", "n"),
    [
        # depth = the longest choice, N_verify = nodes + 1 (docs/theory.md#cost-model)
        ("[(0,), (1,), (0, 0), (0, 1), (0, 0, 0)]", 3, 6),
        ("[[0], [0, 0], [0, 0, 0], [0, 0, 0, 0]]", 4, 5),
    ],
)
def test_vllm_token_tree(tree: str, d: int, n: int) -> None:
    c = yaml(
        "speculative_config:\n  method: eagle\n  model: e\n"
        f'  num_speculative_tokens: {n - 1}\n  speculative_token_tree: "{tree}"\n'
    )
    assert (c.draft_length, c.verify_tokens) == (d, n)


def test_vllm_token_tree_size_is_bounded() -> None:
    tree = "[" + ", ".join("(0,)" for _ in range(1100)) + "]"
    with pytest.raises(InputError, match="limit of 1024"):
        yaml(
            "speculative_config:\n  method: eagle\n  model: e\n"
            f'  speculative_token_tree: "{tree}"\n'
        )


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        # report-33: draft TP 1 beside target TP 4 is ignored for EAGLE
        (
            "tensor-parallel-size: 4\nspeculative-config:\n  method: eagle3\n  model: e\n"
            "  draft_tensor_parallel_size: 1\n  num_speculative_tokens: 3\n",
            True,
        ),
        (
            "tensor-parallel-size: 4\nspeculative-config:\n  method: eagle3\n  model: e\n"
            "  draft_tensor_parallel_size: 4\n  num_speculative_tokens: 3\n",
            False,
        ),
        # a separate draft model must run at the target's TP through 0.33.0: vLLM 0.32.0
        # refuses draft TP 1 beside target TP 4 at engine start (DraftModelProposer._raise_
        # if_draft_tp_mismatch, vllm/v1/spec_decode/draft_model.py; the engine's own answer:
        # tests/data/engine_oracle/vllm-0.32.0.json, group draft-tp). Unpinned, this is
        # read at the newest known release, 0.34.0, which has no V1 proposers and runs the
        # draft at its own TP (its answers accept it, vllm-0.34.0.json vllm-0324-draft-tp):
        # no refusal (tests/integration/test_vllm_034_lifetimes.py pins both sides)
        (
            "tensor-parallel-size: 4\nspeculative-config:\n  method: draft_model\n  model: d\n"
            "  draft_tensor_parallel_size: 1\n  num_speculative_tokens: 3\n",
            False,
        ),
        (
            "tensor-parallel-size: 4\nspeculative-config:\n  method: draft_model\n  model: d\n"
            "  draft_tensor_parallel_size: 4\n  num_speculative_tokens: 3\n",
            False,
        ),
    ],
)
def test_eagle_draft_tp_follows_the_target(text: str, refused: bool) -> None:
    assert ("SG307" in codes(yaml(text))) is refused


@pytest.mark.parametrize("value", ["2000", "1025"])
def test_draft_lengths_are_bounded(value: str) -> None:
    with pytest.raises(InputError, match="limit of 1024"):
        cmd(f"vllm serve m --spec-method ngram --spec-tokens {value}")
    with pytest.raises(InputError, match="limit of 1024"):
        cmd(f"llama-server -m t.gguf -md d.gguf --spec-draft-n-max {value}")


# --- 7. nested model configs --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # cases/engines/23
        '{"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": '
        '"qwen3_omni_moe", "thinker_config": {"model_type": "qwen3_omni_moe_thinker", '
        '"text_config": {"num_attention_heads": 32, "num_key_value_heads": 4, '
        '"vocab_size": 152064, "max_position_embeddings": 65536}}}',
        '{"model_type": "internvl_chat", "llm_config": {"num_attention_heads": 32, '
        '"num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 65536}}',
    ],
)
def test_nested_text_config(text: str) -> None:
    shape = read_model_config(
        parse_text(text, "config.json", json_syntax=True), shown="config.json"
    )
    assert (shape.query_heads, shape.kv_heads, shape.query_heads_per_kv) == (32, 4, 8)
    assert (shape.vocab_size, shape.max_position_embeddings) == (152064, 65536)


def test_eagle_draft_tp_rewrite_is_a_v1_behaviour() -> None:
    # report-13's V0 command (vLLM 0.6, vLLM #9565): the V0 engine honoured the draft TP.
    v0 = cmd(
        "python -m vllm.entrypoints.openai.api_server --model m -tp 4 --speculative-model "
        "yuhuili/EAGLE-LLaMA3-Instruct-70B --speculative-draft-tensor-parallel-size 1 "
        "--num-speculative-tokens 4",
        version="0.6.3",
    )
    assert (v0.mechanism, codes(v0)) == ("eagle", [])
    v1_block = (
        "tensor-parallel-size: 4\nspeculative-config:\n  method: eagle\n  model: e\n"
        "  draft_tensor_parallel_size: 1\n  num_speculative_tokens: 3\n"
    )
    # Contract change: at 0.7.3 the block itself is SG310 (--speculative-config first in
    # the 0.8.2 wheel, arg_utils.py:783; tests/inputs/test_vllm_old_releases.py); still no
    # SG307, the V0 engine honouring the draft TP
    assert codes(yaml(v1_block, version="0.7.3")) == ["SG310"]
    assert codes(yaml(v1_block, version="0.11.0")) == ["SG307"]


@pytest.mark.parametrize(
    "text",
    [
        "speculative_config:\n  method: ngram\n  num_speculative_tokens: 3\n",
        '{"method": "ngram", "num_speculative_tokens": 3}\n',
        "model: m\nspeculative-config:\n  method: ngram\n  num_speculative_tokens: 3\n",
    ],
)
def test_block_keys_are_not_the_removed_v0_flags(text: str) -> None:
    # num_speculative_tokens inside the block is today's key, not V0's flat flag.
    assert codes(yaml(text, version="0.11.0")) == []


@pytest.mark.parametrize(
    ("text", "forced"),
    [
        (
            "environment:\n  SGLANG_SIMULATE_ACC_LEN: '3.24'\n"
            "command: python3 -m sglang.launch_server --speculative-algorithm EAGLE "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4\n",
            True,
        ),
        (
            "environment:\n  SGLANG_SIMULATE_ACC_LEN: '0'\n"
            "command: python3 -m sglang.launch_server --speculative-algorithm EAGLE "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4\n",
            False,
        ),
        (
            "env:\n  TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '1.78'\n"
            "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 3\n",
            True,
        ),
        # SGLang's default -1 means off ("turn off if < 0", environ.py EnvFloat(-1)),
        # and a value that is not a number falls back to it
        *(
            (
                f"environment:\n  SGLANG_SIMULATE_ACC_LEN: {value}\n"
                "command: python3 -m sglang.launch_server --speculative-algorithm EAGLE "
                "--speculative-num-steps 3 --speculative-eagle-topk 1 "
                "--speculative-num-draft-tokens 4\n",
                False,
            )
            for value in ("'-1'", "-1", "'-0.5'", "'off'", "'nan'", "''")
        ),
        # TensorRT-LLM reads 0 (off) for an invalid value
        (
            "env:\n  TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: 'yes'\n"
            "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 3\n",
            False,
        ),
        (
            "env:\n  TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: 2\n"
            "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 3\n",
            True,
        ),
    ],
)
def test_forced_acceptance(text: str, forced: bool) -> None:
    c = yaml(text)
    assert ("SG311" in codes(c)) is forced
    if forced:
        assert c.spans[c.issues[-1].field].line == 2


def test_vllm_shorthand_keys_of_a_serve_yaml() -> None:
    # vllm serve --config serve.yaml: YAML keys are the long option names
    c = yaml("model: Qwen/Qwen3-8B\nspec-method: ngram\nspec-tokens: 4\n")
    assert core(c) == ("ngram", 4, 5, True)
    assert c.spans["draft_length"].line == 3
    c = yaml(
        "model: m\nspec_model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\nspec_tokens: 3\n"
        "speculative-config:\n  draft_tensor_parallel_size: 1\n"
    )
    assert core(c) == ("eagle3", 3, 4, False)
