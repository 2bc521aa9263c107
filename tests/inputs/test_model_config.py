"""Model shape from model configs: real HF configs and hand-made edge cases.

Expected values are the published config fields and hand arithmetic (noted beside
each assertion), cross-checked against tests/data/real/SOURCES-measured.md.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from specgate.core.errors import InputError, OutOfBounds, UnreadForm
from specgate.inputs.model_config import effective_query_heads_per_kv, read_model_config
from specgate.inputs.types import ModelShape
from specgate.load.document import Span
from specgate.load.read import load_document, parse_text

REAL = Path(__file__).resolve().parent.parent / "data" / "real" / "hf-config" / "config"


def real(name: str) -> ModelShape:
    path = REAL / name
    return read_model_config(load_document(path, name), shown=name)


def inline(data: object, *, pointer: str | None = None, yaml: bool = False) -> ModelShape:
    text = data if isinstance(data, str) else json.dumps(data, indent=1)
    doc = parse_text(text, "config.json", json_syntax=not yaml)
    return read_model_config(doc, shown="config.json", pointer=pointer)


# --- real configs ---------------------------------------------------------------------------


def test_llama_3_1_8b() -> None:
    shape = real("meta-llama--Meta-Llama-3.1-8B_config.json")
    # num_attention_heads 32 / num_key_value_heads 8 = 4
    assert (shape.query_heads, shape.kv_heads) == (32, 8)
    assert shape.query_heads_per_kv == Fraction(4)
    assert not shape.mla
    assert shape.vocab_size == 128256
    assert shape.max_position_embeddings == 131072
    assert shape.mtp_layers is None
    assert set(shape.spans) >= {"query_heads", "kv_heads", "vocab_size", "max_position_embeddings"}
    text = (REAL / "meta-llama--Meta-Llama-3.1-8B_config.json").read_text().splitlines()
    assert '"num_attention_heads": 32' in text[shape.spans["query_heads"].line - 1]
    assert '"num_key_value_heads": 8' in text[shape.spans["kv_heads"].line - 1]


def test_gpt_oss_and_mixtral() -> None:
    # gpt-oss-20b: 64 / 8 = 8; Mixtral-8x7B: 32 / 8 = 4
    oss = real("openai--gpt-oss-20b_config.json")
    assert (oss.query_heads, oss.kv_heads, oss.query_heads_per_kv) == (64, 8, Fraction(8))
    assert oss.vocab_size == 201088
    mixtral = real("mistralai--Mixtral-8x7B-v0.1_config.json")
    assert mixtral.query_heads_per_kv == Fraction(4)
    assert mixtral.vocab_size == 32000
    assert mixtral.max_position_embeddings == 32768


def test_llama4_maverick_reads_text_config() -> None:
    shape = real("meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json")
    # text_config: 40 heads / 8 KV heads = 5 (not a power of two)
    assert (shape.query_heads, shape.kv_heads) == (40, 8)
    assert shape.query_heads_per_kv == Fraction(5)
    assert shape.vocab_size == 202048
    assert shape.max_position_embeddings == 1048576
    # TP4 ≤ KV 8: heads split evenly, G stays 5
    assert effective_query_heads_per_kv(shape, 4, False) == Fraction(5)


def test_deepseek_v3_hf_config_is_mla() -> None:
    shape = real("deepseek-ai--DeepSeek-V3_config.json")
    # config says 128 / 128 (naively G = 1), but kv_lora_rank 512 ⇒ MLA:
    # one latent KV head shared by all 128 query heads
    assert shape.mla
    assert (shape.query_heads, shape.kv_heads) == (128, 128)
    assert shape.query_heads_per_kv == Fraction(128)
    assert shape.mtp_layers == 1  # num_nextn_predict_layers
    assert shape.vocab_size == 129280
    assert shape.max_position_embeddings == 163840
    assert "mla" in shape.spans
    # TP1 or attention-DP: 128 query heads per rank; TP8: 128 / 8 = 16
    assert effective_query_heads_per_kv(shape, None, False) == Fraction(128)
    assert effective_query_heads_per_kv(shape, 1, False) == Fraction(128)
    assert effective_query_heads_per_kv(shape, 8, True) == Fraction(128)
    assert effective_query_heads_per_kv(shape, 8, False) == Fraction(16)


def test_deepseek_inference_config_has_no_kv_field() -> None:
    shape = real("deepseek-v3-inference-config_671B.json")
    # n_heads 128, kv_lora_rank 512, no KV field at all: must not fall back to MHA (G = 1)
    assert shape.mla
    assert shape.query_heads == 128
    assert shape.kv_heads is None
    assert shape.query_heads_per_kv == Fraction(128)
    assert effective_query_heads_per_kv(shape, None, False) == Fraction(128)


def test_eagle3_draft_head_short_context() -> None:
    shape = real("specforge-llama3-8B-eagle3-draft.json")
    # draft head: 32 / 8 = 4, context only 2048, full 128256 vocab
    assert shape.query_heads_per_kv == Fraction(4)
    assert shape.max_position_embeddings == 2048
    assert shape.vocab_size == 128256


# --- spellings -----------------------------------------------------------------------------


def test_kv_absent_means_mha() -> None:
    shape = inline({"num_attention_heads": 16, "vocab_size": 256000})
    assert shape.kv_heads is None
    assert shape.query_heads_per_kv == Fraction(1)
    assert "kv_heads" not in shape.spans


def test_gpt2_spelling() -> None:
    shape = inline({"n_head": 12, "n_positions": 1024, "vocab_size": 50257})
    assert shape.query_heads == 12
    assert shape.query_heads_per_kv == Fraction(1)
    assert shape.max_position_embeddings == 1024  # n_positions


def test_falcon_7b_multi_query() -> None:
    # Falcon-7B: 71 heads, multi_query ⇒ one KV head ⇒ G = 71
    shape = inline({"n_head": 71, "multi_query": True})
    assert (shape.query_heads, shape.kv_heads, shape.query_heads_per_kv) == (71, 1, Fraction(71))
    assert shape.spans["kv_heads"].line == 3


def test_falcon_40b_new_decoder_architecture_keeps_explicit_kv() -> None:
    # Falcon-40B: 128 heads, n_head_kv 8 with new_decoder_architecture ⇒ G = 16
    shape = inline(
        {"n_head": 128, "n_head_kv": 8, "multi_query": True, "new_decoder_architecture": True}
    )
    assert shape.kv_heads == 8
    assert shape.query_heads_per_kv == Fraction(16)


def test_num_kv_heads_spelling() -> None:
    shape = inline({"num_attention_heads": 64, "num_kv_heads": 8})
    assert shape.query_heads_per_kv == Fraction(8)


def test_chatglm_multi_query_group_num() -> None:
    # ChatGLM3-6B: 32 heads, 2 groups ⇒ G = 16; seq_length is its context
    shape = inline(
        {
            "num_attention_heads": 32,
            "multi_query_attention": True,
            "multi_query_group_num": 2,
            "seq_length": 8192,
        }
    )
    assert shape.kv_heads == 2
    assert shape.query_heads_per_kv == Fraction(16)
    assert shape.max_position_embeddings == 8192
    off = inline(
        {"num_attention_heads": 32, "multi_query_attention": False, "multi_query_group_num": 2}
    )
    assert off.kv_heads is None
    assert off.query_heads_per_kv == Fraction(1)


def test_heads_that_do_not_divide_are_an_input_error() -> None:
    # Llama-3.2-3B: 24 / 8 = 3. 28 / 8 = 7/2 is no grouped-query model (every KV head
    # serves the same number of query heads; vLLM and transformers split H by KV): the
    # config is refused at its KV head count (line 3 of the indented JSON), not a G of 3.5
    # (newuser review, defect 16; before, 7/2 was kept as a fraction).
    assert inline({"num_attention_heads": 24, "num_key_value_heads": 8}).query_heads_per_kv == 3
    with pytest.raises(OutOfBounds, match=r"attention heads \(28\) are not a multiple of KV "
                       r"heads \(8\)") as caught:
        inline({"num_attention_heads": 28, "num_key_value_heads": 8})
    assert caught.value.line == 3


def test_text_config_wins_over_top_level() -> None:
    shape = inline(
        {
            "num_attention_heads": 8,
            "vocab_size": 1,
            "text_config": {"num_attention_heads": 32, "num_key_value_heads": 16},
        }
    )
    # Gemma-3-27B-like: text_config 32 / 16 = 2; vocab falls back to the top level
    assert shape.query_heads_per_kv == Fraction(2)
    assert shape.vocab_size == 1


def test_qwen35_mtp_layers_and_float_counts() -> None:
    shape = inline(
        {"num_attention_heads": 32.0, "num_key_value_heads": 4, "mtp_num_hidden_layers": 1}
    )
    assert shape.query_heads == 32
    assert shape.mtp_layers == 1


def test_kv_lora_rank_null_is_not_mla() -> None:
    shape = inline({"num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": None})
    assert not shape.mla
    assert shape.query_heads_per_kv == 1


# --- tensor parallelism --------------------------------------------------------------------


def test_tp_greater_than_kv_replicates_kv_heads() -> None:
    # Qwen3-30B-A3B: 32 / 4 = 8; TP8 > KV4 ⇒ 32 / 8 = 4 per rank
    qwen = inline({"num_attention_heads": 32, "num_key_value_heads": 4})
    assert effective_query_heads_per_kv(qwen, 8, False) == Fraction(4)
    assert effective_query_heads_per_kv(qwen, 4, False) == Fraction(8)  # TP = KV: unchanged
    assert effective_query_heads_per_kv(qwen, 8, True) == Fraction(8)  # attention DP: all heads
    # Llama-3.1-405B: 128 / 8 = 16; TP16 ⇒ 128 / 16 = 8
    big = inline({"num_attention_heads": 128, "num_key_value_heads": 8})
    assert effective_query_heads_per_kv(big, 16, False) == Fraction(8)


def test_tp_on_mha_and_mqa() -> None:
    mha = inline({"num_attention_heads": 32})
    assert effective_query_heads_per_kv(mha, 8, False) == Fraction(1)  # TP8 ≤ 32 KV heads
    mqa = inline({"n_head": 8, "multi_query": True})  # Gemma-2B-like: 8 / 1
    assert effective_query_heads_per_kv(mqa, 2, False) == Fraction(4)  # TP2 > 1 KV: 8 / 2


def test_tp_must_be_positive() -> None:
    shape = inline({"num_attention_heads": 32})
    with pytest.raises(ValueError, match="tensor_parallel_size"):
        effective_query_heads_per_kv(shape, 0, False)


def test_no_g_without_heads() -> None:
    shape = ModelShape(
        path="x", pointer="", query_heads=None, kv_heads=None, query_heads_per_kv=None
    )
    assert effective_query_heads_per_kv(shape, 4, False) is None


# --- pointers ------------------------------------------------------------------------------


def test_pointer_into_yaml() -> None:
    text = (
        "models:\n  - name: a\n    config:\n      num_attention_heads: 64\n"
        "      num_key_value_heads: 8\n"
    )
    shape = inline(text, pointer="/models/0/config", yaml=True)
    assert shape.query_heads_per_kv == Fraction(8)
    assert shape.pointer == "/models/0/config"
    assert shape.spans["query_heads"] == Span(4, 28)


def test_pointer_escapes() -> None:
    shape = inline({"a/b": {"c~d": {"num_attention_heads": 8}}}, pointer="/a~1b/c~0d")
    assert shape.query_heads == 8


def test_pointer_to_embedded_json_string() -> None:
    text = 'hf: \'{"num_attention_heads": 40, "num_key_value_heads": 8}\'\n'
    shape = inline(text, pointer="/hf", yaml=True)
    assert shape.query_heads_per_kv == Fraction(5)
    assert shape.spans["query_heads"].line == 1
    # a pointer may also continue into the JSON string
    text = 'x: 1\nhf: \'{"text_config": {"num_attention_heads": 40}}\'\n'
    nested = inline(text, pointer="/hf/text_config", yaml=True)
    assert nested.query_heads == 40
    assert nested.spans["query_heads"].line == 2  # the string's line


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("models", "must be empty or start with '/'"),
        ("/nope", "no key 'nope'"),
        ("/list/01", "not a list index"),
        ("/list/5", "past the end"),
    ],
)
def test_bad_pointers(pointer: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        inline({"list": [1, 2]}, pointer=pointer)
    assert info.value.file == "config.json"


def test_embedded_string_not_json() -> None:
    # the file parses: its model is not read (SG312 on the deployment), not exit 2
    with pytest.raises(UnreadForm, match="not a JSON config") as info:
        inline("hf: not json\n", pointer="/hf", yaml=True)
    assert info.value.line == 1


# --- errors --------------------------------------------------------------------------------


def test_no_head_count_names_the_file() -> None:
    # not read, not refused: transformers fills a missing count from the model class's
    # default (docs/engines.md#model-config-not-read)
    with pytest.raises(UnreadForm) as info:
        inline({"hidden_size": 4096})
    assert info.value.file == "config.json"
    assert "no attention head count (num_attention_heads) in config.json" in str(info.value)


@pytest.mark.parametrize(
    "data",
    [
        {"num_attention_heads": "32"},
        {"num_attention_heads": 0},
        {"num_attention_heads": True},
        {"num_attention_heads": 32, "num_key_value_heads": [8, 8]},
        {"num_attention_heads": 32, "num_key_value_heads": 8.5},
        {"num_attention_heads": 32, "kv_lora_rank": -1},
    ],
)
def test_bad_counts_point_at_their_line(data: dict[str, object]) -> None:
    with pytest.raises(UnreadForm, match="positive integer") as info:
        inline(data)
    assert info.value.line is not None
    assert info.value.line > 1


def test_kv_above_heads_is_an_error() -> None:
    with pytest.raises(InputError, match="exceed") as info:
        inline({"num_attention_heads": 8, "num_key_value_heads": 16})
    assert info.value.line == 3


def test_config_not_a_mapping() -> None:
    with pytest.raises(UnreadForm, match="not a mapping"):
        inline([1, 2])
