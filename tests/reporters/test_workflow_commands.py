"""Workflow commands: the toolkit's escaping rules, by hand, and round trips through a
faithful copy of the runner's parser (tests/support/runner_parser.py).

Every expected string below is written from the rules in actions/toolkit
packages/core/src/command.ts and utils.ts (escapeData, escapeProperty, Command.toString,
toCommandValue, toCommandProperties), not from what the code printed.
"""

from __future__ import annotations

import doctest

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from specgate.reporters import workflow_commands
from specgate.reporters.workflow_commands import (
    annotation,
    escape_data,
    escape_property,
    format_command,
)
from support.runner_parser import (
    ParsedCommand,
    dotnet_is_whitespace,
    dotnet_trim,
    parse_line,
    parse_output,
)

# --------------------------------------------------------------------------------------
# Escaping tables (ecosystem notes docs/theory.md#vocabulary)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("plain text", "plain text"),
        ("%", "%25"),
        ("\r", "%0D"),
        ("\n", "%0A"),
        ("\r\n", "%0D%0A"),
        (":", ":"),
        (",", ","),
        ("=", "="),
        ("::", "::"),
        ("%25", "%2525"),
        ("%0A", "%250A"),
        ("%0D%0A", "%250D%250A"),
        ("100%\n", "100%25%0A"),
        ("a\r\nb: c, d", "a%0D%0Ab: c, d"),
        ("ρ ≤ 2 🎉", "ρ ≤ 2 🎉"),
        ("%3A%2C", "%253A%252C"),
    ],
)
def test_escape_data_table(text: str, expected: str) -> None:
    assert escape_data(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("plain", "plain"),
        ("%", "%25"),
        ("\r", "%0D"),
        ("\n", "%0A"),
        (":", "%3A"),
        (",", "%2C"),
        ("=", "="),
        ("::", "%3A%3A"),
        (":: ::", "%3A%3A %3A%3A"),
        ("%3A", "%253A"),
        ("%2C", "%252C"),
        ("a:b,c%d\re\nf", "a%3Ab%2Cc%25d%0De%0Af"),
        ("C:\\dir\\f.yaml", "C%3A\\dir\\f.yaml"),
        ("é:è", "é%3Aè"),
    ],
)
def test_escape_property_table(text: str, expected: str) -> None:
    assert escape_property(text) == expected


def test_percent_is_escaped_first_so_nothing_is_encoded_twice() -> None:
    # A literal "%0A" must not turn into a newline on the runner's side, and a real
    # newline must become exactly "%0A" (not "%250A").
    assert escape_data("%0A\n") == "%250A%0A"
    assert escape_property("%2C,") == "%252C%2C"


# --------------------------------------------------------------------------------------
# format_command: Command.toString in command.ts
# --------------------------------------------------------------------------------------


def test_no_properties_has_no_space() -> None:
    assert format_command("notice", {}, "hello") == "::notice::hello"
    assert format_command("debug", {}, "") == "::debug::"


def test_properties_in_caller_order_joined_by_commas() -> None:
    line = format_command("warning", {"b": "2", "a": "1", "c": "x,y"}, "m")
    assert line == "::warning b=2,a=1,c=x%2Cy::m"


@pytest.mark.parametrize("falsy", [None, "", 0, False])
def test_falsy_property_values_are_dropped(falsy: str | int | None) -> None:
    line = format_command("error", {"title": "T", "line": falsy, "col": 4}, "m")
    assert line == "::error title=T,col=4::m"


def test_all_properties_falsy_keeps_the_toolkits_space() -> None:
    # The toolkit adds the space whenever the object has keys, before dropping values.
    assert format_command("error", {"title": None, "file": ""}, "m") == "::error ::m"
    assert parse_line("::error ::m") == ParsedCommand("error", {}, "m")


def test_non_string_values_as_to_command_value() -> None:
    assert (
        format_command("x", {"n": 12, "neg": -3, "flag": True}, "") == "::x n=12,neg=-3,flag=true::"
    )


def test_unsupported_value_type_is_rejected() -> None:
    with pytest.raises(TypeError):
        format_command("x", {"n": 1.5}, "")  # type: ignore[dict-item]


def test_empty_command_name_is_missing_command() -> None:
    assert format_command("", {}, "m") == "::missing.command::m"


def test_keys_are_not_escaped() -> None:
    assert format_command("set-output", {"name": "a:b"}, "v") == "::set-output name=a%3Ab::v"


def test_note_sample_with_all_six_toolkit_properties() -> None:
    # ecosystem notes docs/theory.md#vocabulary, tested there against @actions/core 3.0.1.
    line = format_command(
        "error",
        {
            "title": "R001: bad, very",
            "file": "dir,x/a:b%.yaml",
            "line": 3,
            "endLine": 3,
            "col": 1,
            "endColumn": 5,
        },
        "50% done\r\nline2: a,b",
    )
    assert line == (
        "::error title=R001%3A bad%2C very,file=dir%2Cx/a%3Ab%25.yaml,"
        "line=3,endLine=3,col=1,endColumn=5::50%25 done%0D%0Aline2: a,b"
    )


# --------------------------------------------------------------------------------------
# annotation
# --------------------------------------------------------------------------------------


def test_annotation_note_sample() -> None:
    line = annotation(
        "error",
        "50% done\r\nline2: a,b",
        col=1,
        line=3,
        file="dir,x/a:b%.yaml",
        title="R001: bad, very",
    )
    assert line == (
        "::error title=R001%3A bad%2C very,file=dir%2Cx/a%3Ab%25.yaml,line=3,col=1"
        "::50%25 done%0D%0Aline2: a,b"
    )
    assert parse_line(line) == ParsedCommand(
        "error",
        {"title": "R001: bad, very", "file": "dir,x/a:b%.yaml", "line": "3", "col": "1"},
        "50% done\r\nline2: a,b",
    )


def test_annotation_line_zero_vanishes_like_the_toolkit() -> None:
    # ecosystem notes docs/theory.md#vocabulary: startLine 0 produced "::warning
    # file=c.yaml::plain".
    assert annotation("warning", "plain", file="c.yaml", line=0) == "::warning file=c.yaml::plain"


@pytest.mark.parametrize("level", ["error", "warning", "notice"])
def test_annotation_levels(level: str) -> None:
    line = annotation(level, "m", file="a.yaml", line=2)  # type: ignore[arg-type]
    assert line == f"::{level} file=a.yaml,line=2::m"


def test_annotation_without_properties() -> None:
    assert annotation("notice", "just text") == "::notice::just text"


def test_annotation_with_only_empty_title_matches_toolkit_space() -> None:
    # core.notice("m", {title: ""}): toCommandProperties returns six keys, all falsy.
    assert annotation("notice", "m", title="") == "::notice ::m"


def test_annotation_specgate_shape() -> None:
    line = annotation(
        "warning",
        "claimed speedup 3 exceeds theory 1.037",
        file="examples/x.specgate.yaml",
        line=12,
        col=16,
        title="specgate (SG104)",
    )
    assert line == (
        "::warning title=specgate (SG104),file=examples/x.specgate.yaml,line=12,col=16"
        "::claimed speedup 3 exceeds theory 1.037"
    )


def test_annotation_rejects_unknown_level() -> None:
    with pytest.raises(ValueError, match="error, warning or notice"):
        annotation("fatal", "m")  # type: ignore[arg-type]


def test_module_doctests() -> None:
    result = doctest.testmod(workflow_commands)
    assert result.attempted >= 5
    assert result.failed == 0


# --------------------------------------------------------------------------------------
# The runner-side parser itself (ActionCommand.TryParseV2), on hand-written lines
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("::error::boom", ParsedCommand("error", {}, "boom")),
        ("   ::warning::indented", ParsedCommand("warning", {}, "indented")),
        ("\t::notice::tab", ParsedCommand("notice", {}, "tab")),
        (
            "::error file=a.yaml,line=3::m",
            ParsedCommand("error", {"file": "a.yaml", "line": "3"}, "m"),
        ),
        ("::error::a::b", ParsedCommand("error", {}, "a::b")),
        ("::error:::starts with colon", ParsedCommand("error", {}, ":starts with colon")),
        ("::error title=a=b=c::m", ParsedCommand("error", {"title": "a=b=c"}, "m")),
        ("::error ,,file=x,,::m", ParsedCommand("error", {"file": "x"}, "m")),
        ("::error junk,file=x::m", ParsedCommand("error", {"file": "x"}, "m")),
        ("::ERROR::shout", ParsedCommand("ERROR", {}, "shout")),
        ("::error title=a,Title=b::m", ParsedCommand("error", {"title": "b"}, "m")),
        ("::error title=%250A%0A::%25%0D", ParsedCommand("error", {"title": "%0A\n"}, "%\r")),
        ("::error::%3A%2C", ParsedCommand("error", {}, "%3A%2C")),
    ],
)
def test_parser_on_handwritten_lines(line: str, expected: ParsedCommand) -> None:
    assert parse_line(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "",
        "plain text",
        ":: error::space before name",
        "::unknown::not a command",
        "::error no separator",
        "##[error]legacy syntax is another parser",
        "x ::error::not at start",
    ],
)
def test_parser_rejects_non_commands(line: str) -> None:
    assert parse_line(line) is None


def test_parser_requires_one_line() -> None:
    with pytest.raises(ValueError, match="one line"):
        parse_line("::error::a\nb")


def test_raw_line_feed_would_end_the_command() -> None:
    # Why escaping matters (actions/toolkit#193): unescaped, the rest is plain log text.
    assert parse_output("::error::first\nsecond\n") == [
        ParsedCommand("error", {}, "first"),
        "second",
    ]
    assert parse_output(annotation("error", "first\nsecond") + "\n") == [
        ParsedCommand("error", {}, "first\nsecond")
    ]


def test_unescaped_comma_would_cut_a_property() -> None:
    assert parse_line("::error file=dir,x/a.yaml::m") == ParsedCommand(
        "error", {"file": "dir"}, "m"
    )
    assert parse_line(annotation("error", "m", file="dir,x/a.yaml")) == ParsedCommand(
        "error", {"file": "dir,x/a.yaml"}, "m"
    )


def test_dotnet_whitespace_differs_from_python() -> None:
    assert dotnet_is_whitespace("\u00a0")
    assert dotnet_is_whitespace("\u2028")
    assert dotnet_is_whitespace("\x85")
    assert not dotnet_is_whitespace("\x1c")  # Python's str.isspace() says yes
    assert not dotnet_is_whitespace("\u200b")
    assert dotnet_trim("\t a \u3000") == "a"


# --------------------------------------------------------------------------------------
# What no escaping can carry (runner quirks; the toolkit shares them)
# --------------------------------------------------------------------------------------


def test_empty_property_values_are_not_round_tripped() -> None:
    # The toolkit drops falsy values before they reach the line.
    line = annotation("error", "m", file="", title="", line=5)
    assert line == "::error line=5::m"
    assert parse_line(line) == ParsedCommand("error", {"line": "5"}, "m")


def test_runner_strips_leading_equals_from_values() -> None:
    # Split('=', 2, RemoveEmptyEntries) skips the empty entries after the first '='.
    assert parse_line(annotation("error", "m", title="=x", line=1)) == ParsedCommand(
        "error", {"title": "x", "line": "1"}, "m"
    )
    assert parse_line(annotation("error", "m", title="==", line=1)) == ParsedCommand(
        "error", {"line": "1"}, "m"
    )


def test_runner_trims_trailing_whitespace_of_the_last_property_only() -> None:
    assert parse_line(annotation("error", "m", title="t ", file="f\t")) == ParsedCommand(
        "error", {"title": "t ", "file": "f"}, "m"
    )
    # With a line number after them, both survive.
    assert parse_line(annotation("error", "m", title="t ", file="f\t", line=1)) == ParsedCommand(
        "error", {"title": "t ", "file": "f\t", "line": "1"}, "m"
    )
    # Escaped CR/LF are not white space to the runner.
    assert parse_line(annotation("error", "m", file="f\n")) == ParsedCommand(
        "error", {"file": "f\n"}, "m"
    )


# --------------------------------------------------------------------------------------
# Round trips: parse(emit(x)) == x
# --------------------------------------------------------------------------------------

HOSTILE = st.sampled_from(
    ["%", "%25", "%0A", "%0D", "%3A", "%2C", "\r", "\n", "\r\n", ":", "::", ":: ::", ",", "=",
     " ", "\t", "\u00a0", "é", "ρ", "日本", "🎉", "\u200d", "\x00", "##[", "]", ";"]
)  # fmt: skip
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=4)), max_size=12).map("".join)
NON_EMPTY = TEXT.filter(bool)
PROPERTY_KEYS = st.sampled_from(["title", "file", "line", "endLine", "col", "endColumn", "name"])
LEVELS = st.sampled_from(["error", "warning", "notice"])


def _trimmed_by_runner(char: str) -> bool:
    """White space the runner's Trim() removes once escaped: CR and LF are %0D/%0A by then."""
    return dotnet_is_whitespace(char) and char not in "\r\n"


@settings(max_examples=400, deadline=None)
@given(message=TEXT)
def test_round_trip_message(message: str) -> None:
    for command in ("error", "warning", "notice", "debug", "group"):
        assert parse_line(format_command(command, {}, message)) == ParsedCommand(
            command, {}, message
        )


@settings(max_examples=400, deadline=None)
@given(
    level=LEVELS,
    message=TEXT,
    title=NON_EMPTY.filter(lambda s: not s.startswith("=")),
    file=NON_EMPTY.filter(lambda s: not s.startswith("=")),
    line=st.integers(min_value=1, max_value=10**9),
    col=st.integers(min_value=1, max_value=10**6),
)
def test_round_trip_annotation(
    *, level: str, message: str, title: str, file: str, line: int, col: int
) -> None:
    emitted = annotation(level, message, file=file, line=line, col=col, title=title)  # type: ignore[arg-type]
    assert "\n" not in emitted
    assert "\r" not in emitted
    assert parse_line(emitted) == ParsedCommand(
        level, {"title": title, "file": file, "line": str(line), "col": str(col)}, message
    )


@settings(max_examples=400, deadline=None)
@given(
    message=TEXT,
    properties=st.dictionaries(PROPERTY_KEYS, NON_EMPTY, min_size=1),
)
def test_round_trip_any_property(message: str, properties: dict[str, str]) -> None:
    # Every value survives, in any property, except what the runner itself loses:
    # a leading '=' (any value) and trailing white space on the last value.
    assume(all(not value.startswith("=") for value in properties.values()))
    last = list(properties.values())[-1]
    assume(not _trimmed_by_runner(last[-1]))
    emitted = format_command("error", properties, message)
    assert parse_line(emitted) == ParsedCommand("error", properties, message)


@settings(max_examples=400, deadline=None)
@given(
    message=TEXT,
    properties=st.dictionaries(PROPERTY_KEYS, TEXT, min_size=1),
)
def test_round_trip_losses_are_exactly_the_known_ones(
    message: str, properties: dict[str, str]
) -> None:
    # Independent description of what the runner gets back for arbitrary values
    # (ecosystem notes docs/theory.md#vocabulary and ActionCommand.cs): falsy values never leave the
    # toolkit; the block's end is trimmed; leading '=' runs are skipped; what is then
    # empty is no property.
    present = {key: value for key, value in properties.items() if value}
    expected: dict[str, str] = {}
    keys = list(present)
    for key in keys:
        value = present[key]
        if key == keys[-1]:
            while value and _trimmed_by_runner(value[-1]):
                value = value[:-1]
        value = value.lstrip("=")
        if value:
            expected[key] = value
    emitted = format_command("notice", properties, message)
    assert parse_line(emitted) == ParsedCommand("notice", expected, message)


@settings(max_examples=200, deadline=None)
@given(level=LEVELS, message=TEXT, title=TEXT, file=TEXT)
def test_emitted_line_is_always_exactly_one_command(
    level: str, message: str, title: str, file: str
) -> None:
    emitted = annotation(level, message, file=file, line=7, title=title)  # type: ignore[arg-type]
    parsed = parse_output(emitted + "\n")
    assert len(parsed) == 1
    command = parsed[0]
    assert isinstance(command, ParsedCommand)
    assert command.command == level
    assert command.message == message
    assert command.properties["line"] == "7"
