"""Keys read from a JSON string point at their value inside the file
(docs/reports.md#finding-locations: a scalar points at its value), through YAML quoting, block
scalars, argv items and shell words. Columns are counted by hand in each comment."""

from __future__ import annotations

from specgate.inputs.engines import read_engine_config
from specgate.inputs.engines._scalar import scalar_offsets, word_offsets
from specgate.load.document import Span
from specgate.load.read import parse_text


def spans(text: str, name: str = "serve.yaml") -> dict[str, Span]:
    json_syntax = name.endswith(".json")
    if name.endswith(".txt"):
        from specgate.load.document import Document

        doc = Document(name, text)
    else:
        doc = parse_text(text, name, json_syntax=json_syntax)
    config = read_engine_config(doc, shown=name, pointer=None, engine=None, text=text)
    return config.spans


def test_single_quoted_yaml_string() -> None:
    # "speculative-config: '" is 21 characters; '{"method":' 10 more ⇒ "eagle3" at 32;
    # '{"method":"eagle3","model":"m","num_speculative_tokens":' is
    # 1 + 8 + 1 + 8 + 1 + 7 + 1 + 3 + 1 + 24 + 1 = 56 ⇒ the 7 at 21 + 57 = 78.
    text = (
        "model: x\n"
        'speculative-config: \'{"method":"eagle3","model":"m","num_speculative_tokens":7}\'\n'
    )
    s = spans(text)
    assert s["mechanism"] == Span(2, 32)
    assert s["draft_length"] == Span(2, 78)


def test_single_quoted_yaml_string_with_doubled_quote() -> None:
    # The YAML source has "it''s" (7 characters with its quotes) where the value has
    # "it's" (6): the 7 after it moves one column right in the file.
    # "speculative-config: '" is 21; '{"model":"it''s","num_speculative_tokens":' is
    # 1 + 7 + 1 + 7 + 1 + 24 + 1 = 42 source characters ⇒ the 7 at 21 + 43 = 64.
    text = (
        "model: x\n"
        'speculative-config: \'{"model":"it\'\'s","num_speculative_tokens":7,'
        '"method":"eagle"}\'\n'
    )
    assert spans(text)["draft_length"] == Span(2, 64)


def test_double_quoted_yaml_string_with_escapes() -> None:
    # 'speculative-config: "' is 21; '{\"num_speculative_tokens\":' is 1 + 26 + 1 = 28
    # source characters (each \" is two) ⇒ the 3 at 21 + 29 = 50.
    text = (
        'model: x\nspeculative-config: "{\\"num_speculative_tokens\\":3,\\"method\\":\\"mtp\\"}"\n'
    )
    assert spans(text)["draft_length"] == Span(2, 50)


def test_double_quoted_yaml_string_folded_over_lines() -> None:
    # The scalar continues on line 3 (YAML folds the break into a space).
    text = (
        "model: x\n"
        'speculative-config: "{\\"method\\": \\"mtp\\",\n'
        '  \\"num_speculative_tokens\\": 4}"\n'
    )
    # line 3 is '  \"num_speculative_tokens\": 4}"': 2 + 26 + 2 = 30 ⇒ the 4 at 31.
    assert spans(text)["draft_length"] == Span(3, 31)


def test_literal_block_scalar_spanning_lines() -> None:
    # Not the "|" line (2): the value's own line 5, after 4 spaces and
    # '"num_speculative_tokens": ' (24 + 2) ⇒ column 4 + 26 + 1 = 31.
    text = (
        "model: x\n"
        "speculative-config: |\n"
        "  {\n"
        '    "method": "eagle3", "model": "m",\n'
        '    "num_speculative_tokens": 5\n'
        "  }\n"
    )
    s = spans(text)
    assert s["draft_length"] == Span(5, 31)
    assert s["mechanism"] == Span(4, 15)  # 4 spaces + '"method": ' (10) ⇒ 15


def test_folded_block_scalar() -> None:
    # ">-" folds the two lines with a space; the 2 on line 4 after 2 spaces and
    # '"num_speculative_tokens": ' (26) ⇒ column 29.
    text = 'model: x\nspeculative-config: >-\n  {"method": "mtp",\n  "num_speculative_tokens": 2}\n'
    assert spans(text)["draft_length"] == Span(4, 29)


def test_block_scalar_with_indentation_indicator_falls_back_to_its_start() -> None:
    # "|2" is not reproduced: the value stays at the scalar's start (line 2, column 21,
    # the "|"), never on another line.
    text = 'model: x\nspeculative-config: |2\n    {"method": "mtp", "num_speculative_tokens": 2}\n'
    assert spans(text)["draft_length"] == Span(2, 21)


def test_argv_list_item() -> None:
    # Line 3: "  - '" is 5 characters; '{"method":"mtp","num_speculative_tokens":' is 41
    # ⇒ the 3 at 5 + 42 = 47.
    text = 'args:\n  - --speculative-config\n  - \'{"method":"mtp","num_speculative_tokens":3}\'\n'
    assert spans(text)["draft_length"] == Span(3, 47)


def test_text_file_flag_with_equals_sign() -> None:
    # "vllm serve m --speculative-config='" is 35 characters; '{"method":"mtp",
    # "num_speculative_tokens":' is 41 ⇒ the 2 at 35 + 42 = 77.
    text = 'vllm serve m --speculative-config=\'{"method":"mtp","num_speculative_tokens":2}\'\n'
    assert spans(text, "cmd.txt")["draft_length"] == Span(1, 77)


def test_text_file_flag_with_separate_word_on_a_continuation_line() -> None:
    # Line 2: "  --speculative-config '" is 24 characters; '{"num_speculative_tokens": '
    # is 1 + 24 + 2 = 27 ⇒ the 6 at 24 + 28 = 52. "method" on line 3 after 3 spaces and
    # '"method": ' (10) ⇒ column 14.
    text = (
        "vllm serve m \\\n"
        '  --speculative-config \'{"num_speculative_tokens": 6,\n'
        '   "method": "ngram"}\'\n'
    )
    s = spans(text, "cmd.txt")
    assert s["draft_length"] == Span(2, 52)
    assert s["mechanism"] == Span(3, 14)


def test_command_in_a_double_quoted_yaml_scalar() -> None:
    # Two layers: YAML ("\"" in the source) and the shell ('…'). Line 1 is
    # 'cmd: "vllm serve m --speculative-config ' + "'" = 6 + 34 + 1 = 41 characters
    # before "{"; '{\"num_speculative_tokens\":' is 28 source characters ⇒ the 4 at
    # 41 + 28 + 1 = 70.
    text = (
        'cmd: "vllm serve m --speculative-config '
        '\'{\\"num_speculative_tokens\\":4,\\"method\\":\\"mtp\\"}\'"\n'
    )
    assert spans(text)["draft_length"] == Span(1, 70)


def test_json_file_string_with_escapes() -> None:
    # Line 2: '  "speculative_config": "' is 25 characters; '{\"decoding_type\": \"MTP\",
    # \"max_draft_len\": ' is 1 + 17 + 2 + 7 + 2 + 17 + 2 = 48 source characters ⇒ the
    # 3 at 25 + 49 = 74.
    text = (
        '{\n  "speculative_config": "{\\"decoding_type\\": \\"MTP\\", \\"max_draft_len\\": 3}"\n}\n'
    )
    s = spans(text, "trtllm.json")
    assert s["draft_length"] == Span(2, 74)


def test_trtllm_yaml_json_string() -> None:
    # "speculative_config: '" is 21; '{"decoding_type":"Eagle","max_draft_len":' is
    # 1 + 15 + 1 + 7 + 1 + 15 + 1 = 41 ⇒ the 4 at 21 + 42 = 63.
    text = 'speculative_config: \'{"decoding_type":"Eagle","max_draft_len":4}\'\n'
    assert spans(text, "extra.yaml")["draft_length"] == Span(1, 63)


def test_scalar_offsets_refuse_a_source_that_does_not_decode_to_the_value() -> None:
    assert scalar_offsets("k: 'abc'\n", 3, "abd") is None
    assert scalar_offsets("k: 'a''b'\n", 3, "a'b") == [4, 6, 7]


def test_word_offsets_follow_shell_quotes() -> None:
    # a"b"'c' → abc: a at 0, b at 2, c at 5.
    assert word_offsets("a\"b\"'c' d", 0, "abc") == [0, 2, 5]
    assert word_offsets("abc", 0, "abd") is None
