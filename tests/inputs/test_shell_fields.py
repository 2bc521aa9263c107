"""Parameter expansion and field splitting as a POSIX shell does them (POSIX.1-2017 XCU
2.6.2 parameter expansion, 2.6.5 field splitting with the default IFS, 2.2 quoting):
``$SPEC_FLAGS`` outside quotes splits into words, ``"$SPEC_FLAGS"`` stays one, nothing
is expanded inside single quotes or after a backslash. Each expected argv is what
``sh -c 'printf "<%s>" …'`` prints for the same text."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.cmdline import split_commands
from specgate.inputs.engines import read_engine_file

SET = 'S="--a 1  --b"\nE=""\n'


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("cmd $S", ("cmd", "--a", "1", "--b")),  # split at blanks (runs are one)
        ('cmd "$S"', ("cmd", "--a 1  --b")),  # double quotes: one word
        ("cmd '$S'", ("cmd", "$S")),  # single quotes: no expansion
        ("cmd \\$S", ("cmd", "$S")),  # escaped: no expansion
        ("cmd ${S}x", ("cmd", "--a", "1", "--bx")),  # the last field joins what follows
        ("cmd x$S", ("cmd", "x--a", "1", "--b")),  # the first joins what precedes
        ("cmd $E next", ("cmd", "next")),  # an empty unquoted expansion leaves no word
        ('cmd "$E" next', ("cmd", "", "next")),  # a quoted empty one is a word
        ("cmd $UNSET", ("cmd", "$UNSET")),  # never set here: kept as written
    ],
)
def test_expansion_and_field_splitting(line: str, argv: tuple[str, ...]) -> None:
    commands = split_commands(SET + line + "\n")
    assert commands[-1].argv == argv


def test_assignment_values_are_not_split() -> None:
    # POSIX 2.9.1: an assignment's value is expanded but not split; the later unquoted
    # use splits it
    commands = split_commands('A="x y"\nB=$A\nexport C=$A\ncmd $B "$C"\n')
    assert commands[-1].argv == ("cmd", "x", "y", "x y")


def test_split_words_keep_the_line_of_the_expansion() -> None:
    commands = split_commands('F="--x 1"\n\nrun \\\n  $F\n')
    # run at 0-based line 2, $F on line 3: both fields at $F's line and column 3
    assert commands[-1].argv == ("run", "--x", "1")
    assert commands[-1].lines == (2, 3, 3)
    assert commands[-1].columns == (1, 3, 3)


def test_flags_in_a_variable_set_inside_an_if(tmp_path: Path) -> None:
    # tests/data/published-2026-12/19 in small: the speculative branch sets SPEC_FLAGS
    # only when the environment sets DRAFT (bash: without it, llama-server runs with no
    # draft; with it, D 6), and the launch expands it unquoted: what the engine runs is
    # unsettled, an input error at the exec line (issue 25: control flow is not read as
    # if it always ran)
    script = (
        '#!/bin/bash\nSPEC_FLAGS=""\nif [ -n "$DRAFT" ]; then\n'
        '    SPEC_FLAGS="--model-draft $DRAFT --spec-draft-n-max 6"\nfi\n'
        "exec llama-server -m /m/t.gguf $SPEC_FLAGS -c 4096\n"
    )
    (tmp_path / "run.sh").write_text(script, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_engine_file(tmp_path / "run.sh", "run.sh")
    assert caught.value.line == 6
    assert "SPEC_FLAGS is set on some paths only" in caught.value.reason


def test_quoted_flags_stay_one_word(tmp_path: Path) -> None:
    # "$SPEC_FLAGS" is one word: llama-server sees one unknown argument, no draft
    script = 'SPEC_FLAGS="--model-draft d.gguf"\nllama-server -m t.gguf "$SPEC_FLAGS"\n'
    argv = split_commands(script)[-1].argv
    assert argv == ("llama-server", "-m", "t.gguf", "--model-draft d.gguf")


def test_a_quote_in_a_comment_is_no_quote() -> None:
    # POSIX 2.3: '#' at the start of a word comments out the rest of the line; "don't"
    # there opens no quote (it used to swallow the next lines up to the next ')
    text = "# don't run this twice\nvllm serve m --x 'a b'\necho a#b\n"
    assert [c.argv for c in split_commands(text)] == [
        ("vllm", "serve", "m", "--x", "a b"),
        ("echo", "a#b"),  # not at a word's start: no comment
    ]


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        # POSIX 2.6.2: the word when the name is unset (":" also when empty)
        ("cmd ${N:-16} ${E:-8} ${E-8}", ("cmd", "16", "8")),  # ${E-8}: E is set (empty)
        ("cmd ${S:-x}", ("cmd", "--a", "1", "--b")),  # set: its value, split
        ("cmd ${S:+on} ${N:+on} ${E+on}", ("cmd", "on", "on")),  # the word when set
        ("cmd ${N:=4} $N", ("cmd", "4", "4")),  # := also assigns
    ],
)
def test_parameter_defaults(line: str, argv: tuple[str, ...]) -> None:
    assert split_commands(SET + line + "\n")[-1].argv == argv


def test_a_default_in_a_launch_script_is_read(tmp_path: Path) -> None:
    script = "llama-server -m t.gguf -md d.gguf --spec-draft-n-max ${DRAFT_MAX:-12}\n"
    (tmp_path / "run.sh").write_text(script, encoding="utf-8")
    c = read_engine_file(tmp_path / "run.sh", "run.sh")
    # DRAFT_MAX is never set in the script: its default 12 is D, N_verify 13
    assert (c.mechanism, c.draft_length, c.verify_tokens) == ("draft_model", 12, 13)


#: Unquoted ``${NAME<op>word}`` whose word holds blanks or quotes. POSIX.1-2017 XCU 2.3
#: (token recognition: the token runs to the expansion's closing brace, blanks and quotes
#: inside it included), 2.6.2 (the word is expanded; ``:=`` assigns it), 2.6.5 (the
#: expansion's result is split at IFS blanks, except what the word quoted), 2.6.7 (quote
#: removal). Each argv is what dash's ``sh -c 'set -- LINE; for a; do printf "[%s]" "$a";
#: done'`` printed for the same line (checked by hand, dash 0.5.12).
@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("cmd ${N:-a b}", ("cmd", "a", "b")),  # the default with a blank: two fields
        ("cmd ${N-a b}", ("cmd", "a", "b")),
        ('cmd ${N:-"a b"}', ("cmd", "a b")),  # the word's quotes hold: one field
        ("cmd ${N:-'a b' c}", ("cmd", "a b", "c")),
        ("cmd ${N:-a\\ b}", ("cmd", "a b")),  # an escaped blank is no separator
        ("cmd ${S:+a b} ${N:+a b}", ("cmd", "a", "b")),  # :+ gives the word when set
        ("cmd ${N:=a b}; cmd2 $N", ("cmd2", "a", "b")),  # := assigns "a b", split later
        ("cmd --f=${N:-a b}x", ("cmd", "--f=a", "bx")),  # joined to the text around it
        ("cmd ${E:-a b} ${E-a b}", ("cmd", "a", "b")),  # E set and empty: ":-" only
        ("cmd ${N:-${M:-p q}}", ("cmd", "p", "q")),  # a nested default
        ('cmd "${N:-a b}"', ("cmd", "a b")),  # double-quoted: never split
        ("cmd ${S:-a b}", ("cmd", "--a", "1", "--b")),  # set: its own value, split
    ],
)
def test_braced_words_with_blanks_and_quotes(line: str, argv: tuple[str, ...]) -> None:
    assert split_commands(SET + line + "\n")[-1].argv == argv


def test_braced_default_with_a_blank_sets_flags(tmp_path: Path) -> None:
    # the kind in a launcher: SPEC holds two words of flags by default
    script = "llama-server -m t.gguf -md d.gguf ${SPEC:---spec-draft-n-max 6}\n"
    (tmp_path / "run.sh").write_text(script, encoding="utf-8")
    c = read_engine_file(tmp_path / "run.sh", "run.sh")
    assert (c.mechanism, c.draft_length, c.verify_tokens) == ("draft_model", 6, 7)
