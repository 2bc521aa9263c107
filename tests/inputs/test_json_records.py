"""JSON and JSON Lines metrics read record by record (issue 8: real-size inputs).

Positions below were counted by hand on the text shown (1-based line and column).
Streamed JSON Lines keep the column inside each line, so they are as precise as a
whole-document parse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics import json_records
from specgate.inputs.metrics.json_records import load_one, read_records, records_from_text
from specgate.inputs.metrics.records import read_trtllm_iteration_stats, read_vllm_per_request
from specgate.load.document import NodePath, Span
from specgate.load.json_loader import load_json


def _error(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        read_vllm_per_request(text, "r.json")
    return info.value


def test_a_bad_value_in_an_array_item_is_found_at_its_line_and_column() -> None:
    text = (
        "[\n"
        '  {"speculative_decoding": {"acceptance_histogram": [5, 3],\n'
        '                            "num_spec_tokens": 1}},\n'
        '  {"speculative_decoding": {"acceptance_histogram": [2, "x"]}}\n'
        "]\n"
    )
    error = _error(text)
    assert (error.line, error.column) == (4, 57)
    assert "acceptance_histogram entry" in error.reason


def test_nan_in_a_json_lines_record_is_refused_at_its_line_and_column() -> None:
    text = (
        '{"speculative_decoding": {"num_spec_steps": 10, "num_accepted_draft_tokens": 4}}\n'
        "\n"
        '{"speculative_decoding": {"num_spec_steps": 10, "num_accepted_draft_tokens": NaN}}\n'
    )
    error = _error(text)
    assert (error.line, error.column) == (3, 78)
    assert "finite number" in error.reason


def test_a_repeated_key_keeps_its_last_value_and_is_located_there() -> None:
    text = (
        '{"speculative_decoding": {"num_spec_tokens": 2, "num_spec_tokens": -1, '
        '"acceptance_histogram": [1, 1]}}'
    )
    error = _error(text)
    assert (error.line, error.column) == (1, 68)


def test_an_integer_beyond_a_float_is_an_input_error_at_its_place() -> None:
    text = '{"acceptance_histogram": [1, 2]}\n{"acceptance_histogram": [1, 1' + "0" * 400 + "]}\n"
    error = _error(text)
    assert (error.line, error.column) == (2, 30)
    assert "out of range" in error.reason


def test_an_integer_with_too_many_digits_is_refused_at_its_line() -> None:
    text = '{"acceptance_histogram": [1, 2]}\n{"acceptance_histogram": [' + "9" * 5000 + "]}\n"
    error = _error(text)
    assert error.line == 2
    assert "too many digits" in error.reason


def test_nesting_too_deep_is_an_input_error_not_a_crash() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    error = _error('{"acceptance_histogram": [1, 2]}\n' + deep + "\n")
    assert error.line == 2
    assert "nesting is too deep" in error.reason
    assert "nesting is too deep" in _error(deep).reason  # one document


def test_a_syntax_error_between_array_items_is_at_its_place() -> None:
    error = _error('[{"a":1} {"b":2}]')
    assert (error.line, error.column) == (1, 10)
    assert "Expecting ',' delimiter" in error.reason


def test_a_bad_json_lines_record_names_its_line() -> None:
    text = '{"acceptance_histogram": [1, 2]}\n{"acceptance_histogram": [1, 2}\n'
    error = _error(text)
    assert error.line == 2
    assert error.reason.startswith("not JSON or JSON Lines: JSON syntax error")


def test_iteration_stats_given_as_json_strings_point_at_the_string() -> None:
    # llm.get_stats() items are JSON strings; values inside are located at the string.
    stats = {"numAcceptedTokens": 30, "numRequestsWithDraftTokens": 20}
    good = json.dumps(json.dumps({"specDecodingStats": stats}))
    bad = json.dumps(json.dumps({"specDecodingStats": {"numAcceptedTokens": -1}}))
    text = f"[\n  {good},\n  {bad}\n]\n"
    with pytest.raises(InputError) as info:
        read_trtllm_iteration_stats(text, "stats.json")
    assert (info.value.line, info.value.column) == (3, 3)
    # (30 + 20) / 20 = 2.5 when only the good item is there
    assert read_trtllm_iteration_stats(f"[{good}]", "s.json").accept_length == 2.5


def _all_paths(node: object, path: NodePath = ()) -> list[NodePath]:
    out = [path]
    if isinstance(node, dict):
        for key, child in node.items():
            out += _all_paths(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            out += _all_paths(child, (*path, index))
    return out


def test_positions_found_on_demand_equal_the_whole_document_parser() -> None:
    # The on-demand walk must point where the claims-file parser points, for every
    # node and for paths that do not exist (the nearest ancestor).
    text = (
        '{\n  "schema_version": "1.0", "measured": true,\n'
        '  "marginal_accept_rates": [0.8, 0.6,\n    0.4],\n'
        '  "nested": {"a": [{"b": null}, [], {}], "c": {"d": "é\\"x"}},\n'
        '  "mean_accept_length": 2.8, "mean_accept_length": 2.9\n}\n'
    )
    document = load_json(text, "p.json")
    record = load_one(text, "p.json")
    paths = [*_all_paths(document.data), ("missing",), ("nested", "a", 7), ("nested", "c", 0)]
    for path in paths:
        assert record.locate(path) == document.locate(path), path
    # by hand: the second mean_accept_length (the value json keeps), line 6 column 52
    assert record.locate(("mean_accept_length",)) == Span(6, 52)


def test_crlf_and_a_byte_order_mark_keep_lines_and_columns(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"acceptance_histogram": [1, 2]}\r\n{"acceptance_histogram": [1, -2]}\r\n'
    )
    with pytest.raises(InputError) as info:
        read_vllm_per_request(read_records(path, "r.jsonl"), "r.jsonl")
    assert (info.value.line, info.value.column) == (2, 30)


def test_json_lines_above_the_old_8_mib_limit_are_read(tmp_path: Path) -> None:
    # 9 MiB of per-request records, each [1, 1, 2]: 4 steps, 0·1 + 1·1 + 2·2 = 5
    # accepted drafts, so AL = 1 + 5/4 = 2.25 whatever the number of records.
    line = b'{"speculative_decoding": {"acceptance_histogram": [1, 1, 2]}}\n'
    lines = 9 * 1024 * 1024 // len(line) + 1
    path = tmp_path / "r.jsonl"
    path.write_bytes(line * lines)
    result = read_vllm_per_request(read_records(path, "r.jsonl"), "r.jsonl")
    assert result.accept_length == 2.25
    assert result.steps == 4 * lines
    # the first block is a mapping, located at the key holding it: line 1, column 2
    assert result.spans["accept_length"] == Span(1, 2)


def test_a_line_over_the_line_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_records, "MAX_LINE_BYTES", 64)
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n{"a": 1}\n{"a": "' + "x" * 100 + '"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="a line longer than") as info:
        list(read_records(path, "r.jsonl"))
    assert info.value.line == 3


def test_empty_and_binary_files_are_input_errors(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("\n \n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        list(read_records(tmp_path / "empty.json", "empty.json"))
    (tmp_path / "nul.jsonl").write_bytes(b'{"a": 1}\n{"a": "\x00"}\n')
    with pytest.raises(InputError, match="NUL") as info:
        list(read_records(tmp_path / "nul.jsonl", "nul.jsonl"))
    assert info.value.line == 2


def test_one_line_json_array_is_one_record_per_item() -> None:
    records = list(records_from_text("[1, 2, 3]", "a.json"))
    assert [record.data for record in records] == [1, 2, 3]
    assert records[2].locate(()) == Span(1, 8)


def test_items_located_in_any_order_match_the_whole_document_parser() -> None:
    # The locator resumes an array's scan and counts lines from the last position it
    # located; asked forwards, backwards and again it must still point where the
    # claims-file parser points.
    rates = ",\n    ".join(f"0.{9 - i % 9}" for i in range(40))
    text = '{"schema_version": "1.0",\n  "marginal_accept_rates": [\n    ' + rates + "\n  ]}\n"
    document = load_json(text, "p.json")
    record = load_one(text, "p.json")
    order = [*range(40), *reversed(range(40)), 7, 3, 39, 0]
    for index in order:
        path = ("marginal_accept_rates", index)
        assert record.locate(path) == document.locate(path), index
    # by hand: item 0 on line 3 after four spaces; item 39 on line 42
    assert record.locate(("marginal_accept_rates", 0)) == Span(3, 5)
    assert record.locate(("marginal_accept_rates", 39)) == Span(42, 5)
