"""TensorRT-LLM reader on hand-made LLM-API YAML (fields per docs/engines.md
docs/theory.md#vocabulary)."""

from __future__ import annotations

import pytest

from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Span
from specgate.load.read import parse_text


def yaml(text: str, *, pointer: str | None = None, engine: str | None = None) -> EngineConfig:
    doc = parse_text(text, "llm.yaml", json_syntax=False)
    return read_engine_config(doc, shown="llm.yaml", pointer=pointer, engine=engine, text=text)


def codes(c: EngineConfig) -> list[str]:
    return [i.code for i in c.issues]


@pytest.mark.parametrize(
    ("decoding_type", "mechanism", "is_max", "verify"),
    [
        ("MTP", "mtp", False, 5),
        ("Eagle3", "eagle3", False, 5),
        ("Eagle", "eagle3", False, 5),
        ("NGram", "ngram", True, 5),
        ("DraftTarget", "draft_model", False, 5),
        # PARD verifies 2K tokens per request (K + 1 accepted, K - 1 masks:
        # llm_args.py @00043967 "PARD needs 2K tokens per gen request"): 2 × 4 = 8
        ("PARD", "pard", False, 8),
        ("DFlash", "dflash", False, 5),
        ("DSpark", "other", False, 5),
        ("SA", "suffix", True, 5),
    ],
)
def test_decoding_types(decoding_type: str, mechanism: str, is_max: bool, verify: int) -> None:
    c = yaml(f"speculative_config:\n  decoding_type: {decoding_type}\n  max_draft_len: 4\n")
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max) == (
        mechanism,
        4,
        verify,
        is_max,
    )


def test_dynamic_tree_verify_tokens_and_bounds() -> None:
    base = (
        "tensor_parallel_size: 2\nenable_attention_dp: true\nspeculative_config:\n"
        "  decoding_type: Eagle3\n  speculative_model: d\n  max_draft_len: 4\n"
        "  use_dynamic_tree: true\n  dynamic_tree_max_topK: 3\n"
    )
    c = yaml(base + "  max_total_draft_tokens: 10\n")
    # 4 ≤ 10 ≤ 3·4 = 12 ⇒ valid; N_verify = 10 + 1 root = 11; D stays 4.
    assert (c.draft_length, c.verify_tokens, c.issues) == (4, 11, ())
    assert (c.tensor_parallel_size, c.attention_data_parallel, c.draft_model) == (2, True, "d")
    assert c.spans["verify_tokens"] == Span(9, 27)
    too_big = yaml(base + "  max_total_draft_tokens: 13\n")  # 13 > 12
    assert codes(too_big) == ["SG307"]
    too_small = yaml(base + "  max_total_draft_tokens: 3\n")  # 3 < 4
    assert codes(too_small) == ["SG307"]


def test_static_tree_choices() -> None:
    c = yaml(
        "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 2\n"
        "  eagle_choices: [[0], [1], [0, 0], [0, 1]]\n"
    )
    assert (c.draft_length, c.verify_tokens) == (2, 5)  # 4 nodes + root


def test_relaxed_acceptance_is_lossy() -> None:
    c = yaml(
        "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 1\n"
        "  use_relaxed_acceptance_for_thinking: true\n"
    )
    assert c.lossy_acceptance
    assert codes(c) == ["SG304"]


def test_bare_block_via_pointer() -> None:
    c = yaml(
        "a:\n  speculative_config:\n    decoding_type: MTP\n    max_draft_len: 2\n"
        "b:\n  speculative_config:\n    decoding_type: MTP\n    max_draft_len: 3\n",
        pointer="/b/speculative_config",
    )
    assert (c.draft_length, c.pointer) == (3, "/b/speculative_config")


def test_missing_max_draft_len() -> None:
    c = yaml("speculative_config:\n  decoding_type: Eagle3\n  speculative_model: d\n")
    assert (c.draft_length, c.verify_tokens) == (None, None)
    assert c.notes


def test_malformed_json_speculative_config_string() -> None:
    from specgate.core.errors import RefusedValue

    # json.loads stops at the unquoted key `max_draft_len`: '{' is char 0, '"decoding_type"'
    # 1–15, ':' 16, ' ' 17, '"Eagle3"' 18–25, ',' 26, ' ' 27, so 'm' is char 28 (column 29).
    # Contract change (issue 24, degrade never stop): SG307 on the deployment, a warn
    # (TensorRT-LLM's refusal of it is not recorded), no longer an input error
    text = 'speculative_config: \'{"decoding_type": "Eagle3", max_draft_len: 4}\'\n'
    with pytest.raises(RefusedValue) as err:
        yaml(text)
    assert err.value.reason.startswith(
        "speculative_config is not valid JSON: Expecting property name enclosed in double "
        "quotes: line 1 column 29 (char 28); whether TensorRT-LLM refuses it at start is "
        "not recorded"
    )
    assert (err.value.line, err.value.severity) == (1, "warn")


def test_max_seq_len() -> None:
    c = yaml("max_seq_len: 8192\nspeculative_config:\n  decoding_type: MTP\n  max_draft_len: 3\n")
    assert c.max_model_len == 8192
    assert c.spans["max_model_len"] == Span(1, 14)  # "max_seq_len: " is 13 characters
