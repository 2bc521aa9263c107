"""H5: command-line splitting is linear and keeps shlex's POSIX word rules.

The tokenizer is compared, word for word, with :class:`shlex.shlex` configured as
:mod:`specgate.inputs.cmdline` used it before (the reference for every existing
test), on generated text over the characters that matter to the rules; the work
is bounded by structure (one split per engine file), not by a timed test."""

from __future__ import annotations

import io
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specgate.core.errors import InputError
from specgate.inputs import cmdline
from specgate.inputs.cmdline import _SplitError, _tokens, split_commands


def _shlex_words(text: str) -> list[str]:
    lexer = shlex.shlex(io.StringIO(text), posix=True, punctuation_chars=";&|\n")
    lexer.whitespace = " \t\x0b\f"
    lexer.whitespace_split = True
    lexer.commenters = ""
    out = []
    while (word := lexer.get_token()) is not None:
        out.append(word)
    return out


def _ours(text: str) -> list[str]:
    tokens = list(_tokens(text))
    for word, start, separator, parts in tokens:
        # a word's parts (kept for parameter expansion) join to the word
        assert parts is None or "".join(text for text, _ in parts) == word
        # a separator is an unquoted run of ;&| and newlines, standing where it starts
        assert not separator or (
            word and set(word) <= set(";&|\n") and text.startswith(word, start)
        )
    return [word for word, _, _, _ in tokens]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab -='\"\\;&|\n\t\x0b#$x", max_size=40))
def test_the_tokenizer_splits_as_shlex_does(text: str) -> None:
    error = None
    try:
        expected = _shlex_words(text)
    except ValueError as exc:
        error = str(exc)
    if error is None:
        assert _ours(text) == expected
    else:
        with pytest.raises(_SplitError) as info:
            _ours(text)
        assert info.value.reason == error


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("""a "b\\"c" 'd\\e' f\\ g""", ["a", 'b"c', "d\\e", "f g"]),
        ('x "a\\$b\\\\c"', ["x", "a\\$b\\c"]),  # shlex keeps \\ before $ in double quotes
        ("p '' \"\" q", ["p", "", "", "q"]),
        ("--x='a b'\"c\"d", ["--x=a bcd"]),
        ("a;b&&c||d|e&f", ["a", ";", "b", "&&", "c", "||", "d", "|", "e", "&", "f"]),
    ],
)
def test_worked_words(text: str, words: list[str]) -> None:
    assert [word for word, _, _, _ in _tokens(text)] == words


@pytest.mark.parametrize("text", ["a 'b", 'a "b', 'a "b\\', "a b\\"])
def test_unbalanced_text_names_the_line_of_its_word(text: str) -> None:
    with pytest.raises(InputError, match="cannot split command line") as info:
        split_commands("vllm serve m\n" + text, file="f.txt", line=10)
    assert info.value.line == 11


def test_word_columns_are_where_the_word_starts() -> None:
    # worked by hand: b starts at column 3 (after "a;"), 'c d' at 6, x at 3 of line 2
    first, second, third = split_commands("a;b  'c d'\n  x \"y\"")
    assert (first.argv, first.columns) == (("a",), (1,))
    assert (second.argv, second.lines, second.columns) == (("b", "c d"), (0, 0), (3, 6))
    assert (third.argv, third.lines, third.columns) == (("x", "y"), (1, 1), (3, 5))


@pytest.mark.parametrize("text", ["find . -exec rm {} \\;", "find . -exec rm {} ';'"])
def test_a_quoted_or_escaped_separator_is_a_word(text: str) -> None:
    # POSIX sh: only an unquoted ; separates commands (find's -exec terminator)
    [cmd] = split_commands(text)
    assert cmd.argv == ("find", ".", "-exec", "rm", "{}", ";")


@pytest.mark.parametrize(
    "token",
    [
        "--x=" + "a" * 1_000_000,  # the reported shape (30 s with shlex)
        "'" + "a b" * 300_000 + "'",
        '"' + '\\"' * 500_000 + '"',
        "\\a" * 200_000,
    ],
)
def test_a_long_word_takes_no_per_character_steps(
    token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bounded work by structure: plain runs and quoted strings are taken as slices;
    # only escapes cost one step each. Count the regex scans of plain runs.
    scans = {"n": 0}
    real = cmdline._PLAIN_RE

    class Counting:
        def match(self, text: str, pos: int) -> object:
            scans["n"] += 1
            return real.match(text, pos)

    monkeypatch.setattr(cmdline, "_PLAIN_RE", Counting())
    [cmd] = split_commands("vllm serve m " + token + "\n")
    assert cmd.argv[:3] == ("vllm", "serve", "m")
    assert len(cmd.argv) == 4
    escapes = token.count("\\")
    # one scan per word start, per quote or escape and per plain run: never per character
    assert scans["n"] <= 3 + 2 * (escapes + 2) + 4
