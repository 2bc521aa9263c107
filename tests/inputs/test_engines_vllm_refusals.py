"""vLLM refuses a speculative method or a speculative_config key it does not have (F23).

Source: vllm-project/vllm@002e77c1f0ef:vllm/config/speculative.py — ``method`` is the
Literal ``SpeculativeMethod`` (validated exactly by pydantic) and ``SpeculativeConfig``
is a pydantic dataclass made by ``vllm/config/utils.py:config`` with ``extra="forbid"``.
The inputs are the published vLLM recipe ``OpenAI/GPT-OSS_EAGLE3_Hopper.yaml``
(tests/data/real/SOURCES.md) with one word changed, and ``vllm serve`` command lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_config, read_engine_file
from specgate.inputs.knowledge import knowledge
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document

RECIPE = Path(__file__).parent.parent / "data/real/vllm/config/recipes-GPT-OSS_EAGLE3_Hopper.yaml"
RECIPE_TEXT = RECIPE.read_text(encoding="utf-8")
SPEC_LINE = 5  # speculative-config: '{"model": …, "method":"eagle3", …}'


def recipe(tmp_path: Path, old: str, new: str) -> EngineConfig:
    assert old in RECIPE_TEXT
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE_TEXT.replace(old, new), encoding="utf-8")
    return read_engine_file(path, "recipe.yaml")


def cmd(text: str) -> EngineConfig:
    return read_engine_config(Document("cmd.txt", text), shown="cmd.txt", pointer=None, engine=None)


def sg307(c: EngineConfig) -> list[str]:
    return [i.message for i in c.issues if i.code == "SG307"]


@pytest.mark.parametrize(
    ("method", "hint"),
    [
        ("frobnicate", None),
        ("egale3", "eagle3"),  # a transposition
        ("eagle-3", "eagle3"),
        ("EAGLE3", "eagle3"),  # the Literal is case-sensitive
        ("[ngram]", "ngram"),  # V0's model spelling is not a method name
    ],
)
def test_unknown_method_is_refused_with_a_suggestion(
    tmp_path: Path, method: str, hint: str | None
) -> None:
    c = recipe(tmp_path, '"method":"eagle3"', f'"method":"{method}"')
    (message,) = sg307(c)
    assert f"vLLM refuses speculative method {method!r}" in message
    if hint is None:
        assert "did you mean" not in message
    else:
        assert f"(did you mean {hint!r}?)" in message
    (issue,) = [i for i in c.issues if i.code == "SG307"]
    assert c.spans[issue.field].line == SPEC_LINE
    assert c.draft_length == 7  # the rest of the block is still read


def test_unknown_key_is_refused_and_d_is_not_read(tmp_path: Path) -> None:
    c = recipe(tmp_path, '"num_speculative_tokens":7', '"num_speculative_token":7')
    (message,) = sg307(c)
    assert "unknown key 'num_speculative_token' (did you mean 'num_speculative_tokens'?)" in message
    assert "D is not read from the engine config" in message
    assert c.draft_length is None
    (issue,) = [i for i in c.issues if i.code == "SG307"]
    assert (issue.field, c.spans[issue.field].line) == (
        "speculative_config_key:num_speculative_token",
        SPEC_LINE,
    )


def test_unknown_key_without_a_near_name() -> None:
    c = cmd(
        "vllm serve m --speculative-config "
        '\'{"method": "ngram", "num_speculative_tokens": 4, "banana_split": 1}\''
    )
    (message,) = sg307(c)
    assert "unknown key 'banana_split' in speculative_config" in message
    assert "did you mean" not in message
    assert (c.mechanism, c.draft_length) == ("ngram", 4)


def test_dotted_key_typo_is_refused_at_its_word() -> None:
    c = cmd("vllm serve m \\\n  -sc.method ngram \\\n  -sc.num_speculative_token 4\n")
    (message,) = sg307(c)
    assert "did you mean 'num_speculative_tokens'?" in message
    (issue,) = [i for i in c.issues if i.code == "SG307"]
    assert c.spans[issue.field].line == 3


@pytest.mark.parametrize(
    "block",
    [
        '{"method": "deepseek_mtp", "num_speculative_tokens": 1}',  # deprecated, accepted
        '{"method": "ngram_gpu", "num_speculative_tokens": 3, "prompt_lookup_max": 4}',
        '{"method": "suffix", "suffix_decoding_max_tree_depth": 16}',
        '{"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16", '
        '"num_speculative_tokens": 15, "attention_backend": "flex_attention"}',
        '{"method": "eagle", "model": "e", "num_speculative_tokens": 3, '
        '"speculative_token_tree": "[(0,), (0, 0)]"}',  # a key of older versions: read
    ],
)
def test_accepted_methods_and_keys_pass(block: str) -> None:
    assert sg307(cmd(f"vllm serve m --speculative-config '{block}'")) == []


def test_every_accepted_key_and_method_is_in_the_data() -> None:
    # The tables the check reads: worked from SpeculativeConfig at 002e77c by hand.
    data = knowledge("vllm")
    methods = data.table("accepted_methods")
    assert {"eagle3", "mtp", "ngram", "ngram_gpu", "dflash", "dspark", "suffix"} <= set(methods)
    assert "[ngram]" not in methods and "EAGLE3" not in methods
    assert data.table_is_exact("accepted_methods")
    keys = data.block_fields("speculative_config")
    assert {"num_speculative_tokens", "method", "model", "parallel_drafting"} <= set(keys)
