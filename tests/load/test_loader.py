"""The located YAML 1.2 / JSON loader (docs/claims-file.md#format-rules, "Rules of the format").

Positions are 1-based (line, column) counted by hand in the literal texts below.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.load.document import Span
from specgate.load.read import MAX_BYTES, decode, load_document, parse_text

NESTED_YAML = """\
version: 1
deployments:
  - name: a
    speculation:
      enabled: true
      draft_length: 4
    tags: [x, y]
"""

NESTED_JSON = """\
{
  "version": 1,
  "deployments": [
    {"name": "a",
     "speculation": {"enabled": true, "draft_length": 4}}
  ]
}
"""


def yaml(text: str) -> object:
    return parse_text(text, "f.yaml", json_syntax=False)


def json_doc(text: str) -> object:
    return parse_text(text, "f.json", json_syntax=True)


def data(text: str) -> object:
    return parse_text(text, "f.yaml", json_syntax=False).data


# --- positions -----------------------------------------------------------------------------


def test_yaml_positions_of_keys_values_and_list_items() -> None:
    doc = parse_text(NESTED_YAML, "f.yaml", json_syntax=False)
    pos = doc.positions
    # line 1 "version: 1": key at col 1, value "1" at col 10
    assert pos[("version",)].key == Span(1, 1)
    assert pos[("version",)].value == Span(1, 10)
    # line 3 "  - name: a": the item mapping starts at col 5 ("name"), no key holds it
    assert pos[("deployments", 0)].kind == "mapping"
    assert pos[("deployments", 0)].key is None
    assert pos[("deployments", 0)].value == Span(3, 5)
    # "name" key col 5, value "a" col 11
    assert pos[("deployments", 0, "name")].key == Span(3, 5)
    assert pos[("deployments", 0, "name")].value == Span(3, 11)
    # line 4 "    speculation:" key at col 5
    assert pos[("deployments", 0, "speculation")].key == Span(4, 5)
    # line 6 "      draft_length: 4": key col 7, value col 21
    assert pos[("deployments", 0, "speculation", "draft_length")].key == Span(6, 7)
    assert pos[("deployments", 0, "speculation", "draft_length")].value == Span(6, 21)
    # line 7 "    tags: [x, y]": "y" at col 15
    assert pos[("deployments", 0, "tags", 1)].value == Span(7, 15)
    assert pos[("deployments", 0, "tags", 1)].key is None


def test_yaml_locate_scalar_value_and_mapping_key() -> None:
    doc = parse_text(NESTED_YAML, "f.yaml", json_syntax=False)
    # a scalar points at its value
    assert doc.locate(("deployments", 0, "speculation", "draft_length")) == Span(6, 21)
    # a mapping at the key that holds it
    assert doc.locate(("deployments", 0, "speculation")) == Span(4, 5)
    # a missing key falls back to its nearest existing ancestor (a mapping → its key)
    assert doc.locate(("deployments", 0, "speculation", "draft_depth_ratio")) == Span(4, 5)
    # the root: 1:1
    assert doc.locate(()) == Span(1, 1)


def test_json_positions_of_keys_values_and_list_items() -> None:
    doc = parse_text(NESTED_JSON, "f.json", json_syntax=True)
    pos = doc.positions
    # line 2 '  "version": 1': key quote col 3, value col 14
    assert pos[("version",)].key == Span(2, 3)
    assert pos[("version",)].value == Span(2, 14)
    # line 4 '    {"name": "a",': item mapping "{" col 5; "name" col 6; "a" col 14
    assert pos[("deployments", 0)].value == Span(4, 5)
    assert pos[("deployments", 0)].key is None
    assert pos[("deployments", 0, "name")].key == Span(4, 6)
    assert pos[("deployments", 0, "name")].value == Span(4, 14)
    # line 5 '     "speculation": {"enabled": true, "draft_length": 4}}'
    # "speculation" col 6, "{" col 21, "enabled" col 22, true col 33,
    # "draft_length" col 39, 4 col 55
    assert pos[("deployments", 0, "speculation")].key == Span(5, 6)
    assert pos[("deployments", 0, "speculation")].value == Span(5, 21)
    assert pos[("deployments", 0, "speculation", "enabled")].value == Span(5, 33)
    assert pos[("deployments", 0, "speculation", "draft_length")].key == Span(5, 39)
    assert pos[("deployments", 0, "speculation", "draft_length")].value == Span(5, 55)


# --- duplicates ----------------------------------------------------------------------------


def test_yaml_duplicate_reported_at_second_occurrence_last_value_kept() -> None:
    doc = parse_text("a: 1\nb:\n  c: 2\n  c: 3\n", "f.yaml", json_syntax=False)
    assert doc.data == {"a": 1, "b": {"c": 3}}  # the last value, as PyYAML and engines read it
    (dup,) = doc.duplicates
    assert dup.path == ("b", "c")
    # second "c" is line 4 col 3; first line 3 col 3
    assert dup.span == Span(4, 3)
    assert dup.first == Span(3, 3)
    # the position recorded is the last (the value kept): "3" at 4:6
    assert doc.positions[("b", "c")].value == Span(4, 6)


def test_json_duplicate_reported_at_second_occurrence_last_value_kept() -> None:
    text = '{"a": {"c": 2,\n       "c": {"d": 3}}}\n'
    doc = parse_text(text, "f.json", json_syntax=True)
    assert doc.data == {"a": {"c": {"d": 3}}}  # json.loads keeps the last value too
    assert doc.data == json.loads(text)
    (dup,) = doc.duplicates
    # second '"c"' on line 2 col 8
    assert dup.span == Span(2, 8)
    assert dup.first == Span(1, 8)
    # positions are those of the value kept: "{" on line 2 col 13, "d" inside it
    assert doc.positions[("a", "c")].value == Span(2, 13)
    assert doc.positions[("a", "c", "d")].value == Span(2, 19)


# --- YAML 1.2 core scalars -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2e0", 2.0),
        ("3.5e0", 3.5),
        ("1e3", 1000.0),
        ("1E3", 1000.0),
        ("-1e-3", -0.001),
        ("4.0", 4.0),
        (".5", 0.5),
        ("0x1F", 31),
        ("0o17", 15),
        ("+1", 1),
        ("true", True),
        ("False", False),
        ("~", None),
        ("null", None),
    ],
)
def test_yaml_core_schema_numbers_and_constants(text: str, expected: object) -> None:
    value = data(f"v: {text}\n")["v"]  # type: ignore[index]
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("text", ["yes", "no", "on", "off", "Y", "2024-01-01", "1_000", "0b11"])
def test_yaml_1_1_forms_stay_strings(text: str) -> None:
    assert data(f"v: {text}\n") == {"v": text}


def test_yaml_nan_and_inf_are_floats_for_the_schema_to_reject() -> None:
    values = data("a: .nan\nb: .inf\nc: -.inf\n")
    assert math.isnan(values["a"])  # type: ignore[index]
    assert values["b"] == math.inf  # type: ignore[index]
    assert values["c"] == -math.inf  # type: ignore[index]


def test_yaml_merge_keys_explicit_keys_win() -> None:
    text = (
        "x-base: &base\n  enabled: true\n  draft_length: 4\nspec:\n  <<: *base\n  draft_length: 7\n"
    )
    doc = parse_text(text, "f.yaml", json_syntax=False)
    assert doc.data["spec"] == {"enabled": True, "draft_length": 7}  # type: ignore[index]
    # the explicit key keeps its own position (line 6, value col 17)
    assert doc.positions[("spec", "draft_length")].value == Span(6, 17)
    # the merged key is located at its anchor's definition (line 2, value col 12)
    assert doc.positions[("spec", "enabled")].value == Span(2, 12)
    assert not any("<<" in p for p in doc.positions)


def test_yaml_merge_list_earlier_maps_win() -> None:
    text = "a: &a {k: 1}\nb: &b {k: 2, m: 3}\nc:\n  <<: [*a, *b]\n"
    assert data(text)["c"] == {"k": 1, "m": 3}  # type: ignore[index]


# --- input errors --------------------------------------------------------------------------


def test_yaml_syntax_error_has_its_line() -> None:
    text = "version: 1\ndeployments:\n  - name: a\n    speculation: {enabled: true\n"
    with pytest.raises(InputError) as info:
        yaml(text)
    assert info.value.line is not None
    assert info.value.line >= 4
    assert "YAML syntax error" in str(info.value)


def test_yaml_syntax_error_line_of_bad_indentation() -> None:
    # line 3 "   c: 2" (3 spaces) does not fit the block of line 2
    with pytest.raises(InputError) as info:
        yaml("a: 1\nb:\n  x: 1\n c: 2\n")
    assert info.value.line == 4


def test_json_syntax_error_has_line_and_column() -> None:
    # line 3 '  "b" 2': the ':' is expected at col 7
    with pytest.raises(InputError) as info:
        json_doc('{\n  "a": 1,\n  "b" 2\n}\n')
    assert (info.value.line, info.value.column) == (3, 7)
    assert str(info.value).startswith("f.json:3:7: JSON syntax error")


def test_several_yaml_documents() -> None:
    with pytest.raises(InputError, match="several YAML documents"):
        yaml("a: 1\n---\nb: 2\n")


@pytest.mark.parametrize("text", ["a: !foo 1\n", "a: !foo {b: 1}\n", "a: !!binary aGk=\n"])
def test_custom_tags(text: str) -> None:
    with pytest.raises(InputError, match="unsupported tag"):
        yaml(text)


def test_alias_bomb() -> None:
    # billion laughs: 9 levels of 9 aliases would expand to 9^9 nodes
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    with pytest.raises(InputError, match=r"aliases|nodes"):
        yaml("\n".join(lines) + "\n")


def test_plain_aliases_are_bound_by_what_they_expand_to() -> None:
    # Contract change (trial3/12): plain aliases (to an anchor holding no alias) are no
    # longer counted against 100; each costs the nodes it expands to. A scalar anchor
    # used 101 times is 101 nodes reached through aliases: loads.
    assert len(data("a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n")["b"]) == 101  # type: ignore[index]
    # 10,000 uses are 10,000 nodes, at the bound; 10,001 are past it.
    assert len(data("a: &a 1\nb: [" + ", ".join(["*a"] * 10_000) + "]\n")["b"]) == 10_000  # type: ignore[index]
    with pytest.raises(InputError, match="aliases expand to more than 10,000 YAML nodes"):
        yaml("a: &a 1\nb: [" + ", ".join(["*a"] * 10_001) + "]\n")


def test_twenty_one_services_sharing_five_anchors_load() -> None:
    # trial3/12: 21 services, each using 5 one-level anchors (105 aliases, none nested),
    # which Compose v2 reads; 21 × 5 × 2 nodes (a 1-key mapping and its value) = 210
    # nodes reached through aliases.
    head = "".join(f"x-{k}: &{k} {{{k}: v}}\n" for k in "abcde")
    services = "".join(
        f"s{i}:\n" + "".join(f"  {k}: *{k}\n" for k in "abcde") for i in range(21)
    )
    loaded = data(head + services)
    assert isinstance(loaded, dict)
    assert loaded["s20"]["e"] == {"e": "v"}


SHARED_SPECULATION = """\
version: 1
x-speculation: &spec
  enabled: true
  mechanism: eagle3
  draft_length: 3
  draft_depth_ratio: 0.05
  engine: vllm
  verify_tokens: 4
deployments:
"""


def test_fifteen_deployments_sharing_one_six_key_anchor_load() -> None:
    # Issue 17: 15 deployments each `speculation: *spec` (a 6-key anchor) are 15 aliases
    # (the anchor's own place is the x- key), expanding to 15 × (1 mapping + 6 keys'
    # values) = 105 nodes; the nodes under an alias are not aliases themselves (the
    # old count said 15 × 7 = 105 "alias expansions" > 100 and refused the file).
    text = SHARED_SPECULATION + "".join(
        f"  - name: d{i}\n    speculation: *spec\n" for i in range(15)
    )
    loaded = data(text)
    assert isinstance(loaded, dict)
    assert len(loaded["deployments"]) == 15
    assert loaded["deployments"][14]["speculation"]["draft_length"] == 3


def test_nodes_under_aliases_have_their_own_bound() -> None:
    # A 100-item list (101 nodes: the list and its items) used through 99 aliases is
    # 99 × 101 = 9,999 nodes reached through aliases, within 10,000; 100 aliases are
    # 10,100 nodes: refused, though 100 aliases alone are allowed.
    anchor = "a: &a [" + ", ".join(["1"] * 100) + "]\n"
    ok = data(anchor + "b: [" + ", ".join(["*a"] * 99) + "]\n")
    assert isinstance(ok, dict)
    assert len(ok["b"]) == 99
    with pytest.raises(InputError, match="aliases expand to more than 10,000 YAML nodes"):
        yaml(anchor + "b: [" + ", ".join(["*a"] * 100) + "]\n")


def test_aliases_inside_an_anchor_count_each_time_it_is_expanded() -> None:
    # b holds 10 aliases of a; each of the 11 aliases of b expands those 10 again:
    # 11 × 10 = 110 nested aliases > 100 (b's own 10 are plain: b is not being expanded).
    text = "a: &a 1\nb: &b [" + ", ".join(["*a"] * 10) + "]\nc: [" + ", ".join(["*b"] * 11)
    with pytest.raises(InputError, match="more than 100 nested aliases"):
        yaml(text + "]\n")
    # 10 aliases of b: 10 × 10 = 100 nested aliases, at the bound: loads
    fine = "a: &a 1\nb: &b [" + ", ".join(["*a"] * 10) + "]\nc: [" + ", ".join(["*b"] * 10)
    assert isinstance(data(fine + "]\n"), dict)


def test_merge_keys_count_as_aliases() -> None:
    # Compose's idiom: an x- block merged with <<: in 3 services is 3 aliases
    text = "x-base: &b {a: 1, b: 2}\n" + "".join(
        f"s{i}:\n  <<: *b\n  c: {i}\n" for i in range(3)
    )
    loaded = data(text)
    assert isinstance(loaded, dict)
    assert loaded["s2"] == {"c": 2, "a": 1, "b": 2}


@pytest.mark.parametrize("text", ["a: &a\n  b: *a\n", "a: &a [*a]\n"])
def test_recursive_alias(text: str) -> None:
    with pytest.raises(InputError, match="recursive alias"):
        yaml(text)


@pytest.mark.parametrize(("text", "json_syntax"), [("[" * 100_000, False), ("[" * 100_000, True)])
def test_deep_nesting_is_an_input_error(text: str, json_syntax: bool) -> None:
    with pytest.raises(InputError):
        parse_text(text, "f", json_syntax=json_syntax)


def test_deep_but_closed_json_nesting() -> None:
    with pytest.raises(InputError, match="too deep"):
        json_doc("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(("name", "text"), [("f.yaml", "# just a comment\n"), ("f.json", " \n")])
def test_empty_document(name: str, text: str) -> None:
    doc = parse_text(text, name, json_syntax=name.endswith(".json"))
    assert doc.empty


# --- reading files -------------------------------------------------------------------------


def test_bom_accepted(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbfversion: 1\n")
    doc = load_document(path, "c.yaml")
    assert doc.data == {"version": 1}
    # the BOM does not shift columns: "1" at 1:10
    assert doc.positions[("version",)].value == Span(1, 10)


def test_bom_accepted_in_json(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b'\xef\xbb\xbf{"version": 1}\n')
    assert load_document(path, "c.json").data == {"version": 1}


def _utf8_sig_reference(raw: bytes) -> str:
    """What decode() gave when it decoded with Python's "utf-8-sig" codec."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        return str(InputError("not valid UTF-8", "f", line, column))


@pytest.mark.parametrize(
    "raw",
    [
        b"a: 1\n",
        b"\xef\xbb\xbfa: 1\n",
        b"\xef\xbb\xbf\xef\xbb\xbfa: 1\n",  # a second BOM is text (U+FEFF)
        b"\xef\xbbA",
        b"a: \xff\n",
        b"\xef\xbb\xbfa: \xff\n",
        b"\xef\xbb\xbfa\nb\n\xff",
        b"\xef\xbb\xbf",
        b"",
    ],
)
def test_decode_is_the_utf8_sig_codec(raw: bytes) -> None:
    # decode() drops a BOM itself rather than import the utf-8-sig codec: the same
    # text, and the same error (offsets counted after the BOM), byte for byte
    try:
        got = decode(raw, "f")
    except InputError as exc:
        got = str(exc)
    assert got == _utf8_sig_reference(raw)


def test_bad_utf8_is_an_input_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    # the bad byte 0xff is on line 3, after "b: " (col 4)
    path.write_bytes(b"a: 1\nx: 2\nb: \xff\n")
    with pytest.raises(InputError, match="not valid UTF-8") as info:
        load_document(path, "c.yaml")
    assert (info.value.line, info.value.column) == (3, 4)


def test_over_size_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"# " + b"x" * MAX_BYTES + b"\n")
    with pytest.raises(InputError, match="larger than"):
        load_document(path, "c.yaml")


def test_exactly_one_mib_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    # 1 MiB exactly: "a: 1\n" then a comment filling the rest
    head = b"a: 1\n# "
    path.write_bytes(head + b"x" * (MAX_BYTES - len(head) - 1) + b"\n")
    assert path.stat().st_size == MAX_BYTES
    assert load_document(path, "c.yaml").data == {"a": 1}


def test_nul_byte_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"a: 1\x00\n")
    with pytest.raises(InputError, match="NUL"):
        load_document(path, "c.yaml")


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_document(tmp_path / "nope.yaml", "nope.yaml")
    with pytest.raises(InputError, match="folder"):
        load_document(tmp_path, "here")


def test_suffix_picks_the_parser(tmp_path: Path) -> None:
    # valid YAML, invalid JSON: parsed as JSON because of the suffix
    path = tmp_path / "c.json"
    path.write_text("version: 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="JSON syntax error"):
        load_document(path, "c.json")
    path = tmp_path / "c.YML"
    path.write_text('{"version": 1}\n', encoding="utf-8")
    assert load_document(path, "c.YML").data == {"version": 1}


# --- bug: integers over Python's 4300-digit conversion limit crashed the loaders (exit 3) -----


def test_yaml_integer_with_too_many_digits_is_an_input_error() -> None:
    # "v: 111…1" with 5000 digits: the value starts at 1:4
    with pytest.raises(InputError, match="too long") as info:
        yaml("v: " + "1" * 5000 + "\n")
    assert (info.value.line, info.value.column) == (1, 4)


def test_json_integer_with_too_many_digits_is_an_input_error() -> None:
    with pytest.raises(InputError, match="too many digits"):
        json_doc('{"v": ' + "1" * 5000 + "}")


def test_yaml_nodes_are_budgeted_per_file() -> None:
    # Issue 18 (budgets per file, not per scalar): every document parsed while one
    # serving config is read (its strings' embedded YAML included) draws on one budget
    # of 100,000 nodes, not 100,000 each.
    from specgate.core.limits import FILE_NODES, file_budget
    from specgate.load.yaml_loader import load_yaml

    embedded = "[" + ", ".join(["1"] * 999) + "]"  # 1,000 nodes
    with file_budget(0):
        for _ in range(FILE_NODES // 1000):
            load_yaml(embedded, "")
        with pytest.raises(InputError, match="documents embedded in its strings included"):
            load_yaml(embedded, "")
    load_yaml(embedded, "")  # a document read alone has its own bound
