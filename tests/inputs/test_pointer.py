"""RFC 6901 pointers (examples from RFC 6901 §5) and the configuration search."""

from __future__ import annotations

import pytest

from specgate.core.errors import InputError
from specgate.inputs.pointer import (
    Verdict,
    find_configuration,
    format_pointer,
    resolve_pointer,
    search,
    split_pointer,
)

RFC = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", RFC),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_rfc6901_examples(pointer: str, expected: object) -> None:
    assert resolve_pointer(RFC, pointer)[1] == expected


def test_format_escapes_tilde_before_slash() -> None:
    assert format_pointer(("a/b", "m~n", 0)) == "/a~1b/m~0n/0"
    assert split_pointer("/a~1b/m~0n/~01") == ["a/b", "m~n", "~1"]


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("foo", "must be empty or start with '/'"),
        ("/foo/2", "index 2 is past the end"),
        ("/foo/01", "not a list index"),
        ("/foo/-", "not a list index"),
        ("/nope", "no key 'nope'"),
        ("/foo/0/x", "is a scalar"),
        ("/m~2n", "'~' not followed by 0 or 1"),
    ],
)
def test_bad_pointers(pointer: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        resolve_pointer(RFC, pointer, file="f.yaml")


def test_pointer_enters_json_strings() -> None:
    data = {"args": {"cfg": '{"method": "mtp", "k": [1, 2]}'}}
    path, value = resolve_pointer(data, "/args/cfg/k/1")
    assert path == ("args", "cfg", "k", 1)
    assert value == 2


def _detect(node: object) -> list[Verdict]:
    if isinstance(node, dict) and "spec" in node:
        return [Verdict("x", "config")]
    if isinstance(node, dict) and "draft" in node:
        return [Verdict("x", "fragment")]
    return []


def test_search_stops_at_a_configuration_and_enters_json_strings() -> None:
    data = {"a": {"spec": 1, "inner": {"spec": 2}}, "b": ['{"spec": 3}'], "c": {"draft": 1}}
    found = search(data, _detect)
    assert [(f.pointer, f.verdict.kind) for f in found] == [
        ("/a", "config"),
        ("/b/0", "config"),
        ("/c", "fragment"),
    ]


def test_find_lists_every_pointer_when_several() -> None:
    data = {"a": {"spec": 1}, "b/c": [{"spec": 2}]}
    with pytest.raises(InputError) as err:
        find_configuration(data, _detect, file="f.yaml", pointer=None)
    assert "2 speculative configurations in f.yaml: /a [x], /b~1c/0 [x]" in str(err.value)


def test_find_none_and_fragments_only() -> None:
    with pytest.raises(InputError, match=r"no speculative decoding configured in f\.yaml$"):
        find_configuration({"c": {"draft": 1}}, _detect, file="f.yaml", pointer=None)


def test_find_with_pointer_searches_below_it() -> None:
    data = {"a": {"spec": 1}, "b": {"deep": {"spec": 2}}}
    found, fragments = find_configuration(data, _detect, file="f.yaml", pointer="/b")
    assert found.pointer == "/b/deep"
    assert fragments == []
    with pytest.raises(InputError, match=r"no speculative decoding configured in f\.yaml at /c"):
        find_configuration({"c": {}}, _detect, file="f.yaml", pointer="/c")
