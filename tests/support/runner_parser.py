"""A faithful Python copy of how the GitHub Actions runner reads a workflow command.

It mirrors actions/runner ``src/Runner.Common/ActionCommand.cs``, ``TryParseV2``, step by
step, including the .NET library behaviour the runner relies on:

1. the line is left-trimmed (``string.TrimStart``: ``char.IsWhiteSpace``) and must then
   start with ``::``;
2. the separator is the next ``::`` at or after index 2; everything after it is the data;
3. between the two, the command name runs up to the first space; names the runner has not
   registered (compared case-insensitively) are not commands, and the line is plain text;
4. the rest is ``Trim()``-ed, split on ``,`` with empty pieces dropped, and each piece is
   split with ``Split('=', 2, RemoveEmptyEntries)``: on its first ``=``, but empty pieces
   are skipped, so ``title==x`` gives ``x`` and ``title=`` gives no property at all;
   pieces that do not make a pair are ignored;
5. property values are decoded ``%0D``, ``%0A``, ``%3A``, ``%2C``, ``%25`` and the data
   ``%0D``, ``%0A``, ``%25`` (``_escapePropertyMappings``, ``_escapeDataMappings``),
   each a plain ordinal replace-all, in that order;
6. property names are case-insensitive (``StringComparer.OrdinalIgnoreCase``): a later
   ``Title=`` overwrites an earlier ``title=`` and keeps the first spelling.

Not modelled: the runner's ``StartsWith``/``IndexOf`` on ``"::"`` use the current culture,
which can only matter next to code points that ICU treats as ignorable; lines emitted by
``specgate.reporters.workflow_commands`` hold no ``:`` before the separator at all.

When ``TryParseV2`` fails, the runner tries the legacy form (``ActionCommand.TryParse``,
mirrored by :func:`parse_legacy_line`): ``##[`` *anywhere* in the line (``IndexOf``), the
command name up to the first space before the next ``]``, ``;``-separated properties,
the data after that ``]``; :func:`parse_output` with ``legacy=True`` applies both, in the
runner's order (``ActionCommandManager.TryProcessCommand``; actions/runner 079cdb1).

The runner reads its child's output a line at a time (``StreamReader.ReadLine``: a line
ends at CR, LF or CRLF); :func:`parse_output` does that split first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field

__all__ = [
    "REGISTERED_COMMANDS",
    "ParsedCommand",
    "dotnet_is_whitespace",
    "dotnet_trim",
    "dotnet_trim_start",
    "parse_legacy_line",
    "parse_line",
    "parse_output",
]

REGISTERED_COMMANDS: frozenset[str] = frozenset(
    {
        # actions/runner src/Runner.Worker/ActionCommandManager.cs: the stop command and
        # every IActionCommandExtension's Command (internal-set-repo-path only for plugins).
        "stop-commands",
        "set-env",
        "set-output",
        "save-state",
        "add-mask",
        "add-path",
        "add-matcher",
        "remove-matcher",
        "debug",
        "warning",
        "error",
        "notice",
        "group",
        "endgroup",
        "echo",
    }
)

_COMMAND_KEY = "::"

_DATA_DECODING: tuple[tuple[str, str], ...] = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_PROPERTY_DECODING: tuple[tuple[str, str], ...] = (
    ("%0D", "\r"),
    ("%0A", "\n"),
    ("%3A", ":"),
    ("%2C", ","),
    ("%25", "%"),
)

# char.IsWhiteSpace: U+0009..U+000D, U+0085, and the categories Zs, Zl, Zp (U+0020,
# U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000). Unlike
# Python's str.isspace it does not include U+001C..U+001F.
_DOTNET_CONTROL_WHITESPACE = frozenset("\t\n\v\f\r\x85")
_DOTNET_WHITESPACE_CATEGORIES = frozenset({"Zs", "Zl", "Zp"})

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ParsedCommand:
    """A workflow command as the runner sees it: name, properties, data (message)."""

    command: str
    properties: dict[str, str] = field(default_factory=dict)
    message: str = ""


def dotnet_is_whitespace(char: str) -> bool:
    """``char.IsWhiteSpace`` for one code point (.NET, which the runner runs on)."""
    return (
        char in _DOTNET_CONTROL_WHITESPACE
        or unicodedata.category(char) in _DOTNET_WHITESPACE_CATEGORIES
    )


def dotnet_trim_start(text: str) -> str:
    """``string.TrimStart()``: drop leading ``char.IsWhiteSpace`` characters."""
    start = 0
    while start < len(text) and dotnet_is_whitespace(text[start]):
        start += 1
    return text[start:]


def dotnet_trim(text: str) -> str:
    """``string.Trim()``: drop leading and trailing ``char.IsWhiteSpace`` characters."""
    text = dotnet_trim_start(text)
    end = len(text)
    while end > 0 and dotnet_is_whitespace(text[end - 1]):
        end -= 1
    return text[:end]


def _ordinal_upper(text: str) -> str:
    """Approximate ``StringComparer.OrdinalIgnoreCase``: simple (one-to-one) upper-casing."""
    return "".join(up if len(up := char.upper()) == 1 else char for char in text)


def _split_pair(piece: str) -> list[str]:
    """``piece.Split(new[] {'='}, count: 2, StringSplitOptions.RemoveEmptyEntries)``.

    .NET (Core 3.0 and later, String.Manipulation.cs ``SplitWithPostProcessing``) takes
    non-empty pieces up to the first ``=`` that completes ``count - 1`` entries, then
    skips any empty entries (runs of ``=``) before taking the remainder as the last one.
    """
    entries: list[str] = []
    rest = piece
    while True:
        head, sep, tail = rest.partition("=")
        if not sep:
            if rest:
                entries.append(rest)
            return entries
        if head:
            entries.append(head)
        rest = tail
        if len(entries) == 1:
            rest = rest.lstrip("=")
            if rest:
                entries.append(rest)
            return entries


def _decode(text: str, table: tuple[tuple[str, str], ...]) -> str:
    for escaped, char in table:
        text = text.replace(escaped, char)
    return text


def parse_line(
    line: str, registered: Collection[str] = REGISTERED_COMMANDS
) -> ParsedCommand | None:
    """Parse one output line as ``ActionCommand.TryParseV2``; ``None`` if not a command.

    ``line`` is one line as the runner reads it, so it must not contain CR or LF.
    """
    if "\r" in line or "\n" in line:
        raise ValueError("the runner parses one line at a time; split with parse_output")
    if not line:
        return None
    line = dotnet_trim_start(line)
    if not line.startswith(_COMMAND_KEY):
        return None
    end = line.find(_COMMAND_KEY, len(_COMMAND_KEY))
    if end < 0:
        return None
    info = line[len(_COMMAND_KEY) : end]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    known = {_ordinal_upper(command) for command in registered}
    if _ordinal_upper(name) not in known:
        return None
    properties: dict[str, str] = {}
    folded_keys: dict[str, str] = {}
    if space > 0:
        for piece in dotnet_trim(info[space + 1 :]).split(","):
            if not piece:
                continue
            pair = _split_pair(piece)
            if len(pair) != 2:
                continue
            key = folded_keys.setdefault(_ordinal_upper(pair[0]), pair[0])
            properties[key] = _decode(pair[1], _PROPERTY_DECODING)
    message = _decode(line[end + len(_COMMAND_KEY) :], _DATA_DECODING)
    return ParsedCommand(command=name, properties=properties, message=message)


_LEGACY_PREFIX = "##["
_LEGACY_DECODING: tuple[tuple[str, str], ...] = (
    ("%3B", ";"),
    ("%0D", "\r"),
    ("%0A", "\n"),
    ("%5D", "]"),
    ("%25", "%"),
)


def parse_legacy_line(
    line: str, registered: Collection[str] = REGISTERED_COMMANDS
) -> ParsedCommand | None:
    """Parse one line as ``ActionCommand.TryParse`` (the legacy ``##[name k=v;]data``);
    ``None`` if not a command. The prefix is found anywhere in the line."""
    if "\r" in line or "\n" in line:
        raise ValueError("the runner parses one line at a time; split with parse_output")
    prefix = line.find(_LEGACY_PREFIX)
    if prefix < 0:
        return None
    bracket = line.find("]", prefix)
    if bracket < 0:
        return None
    info = line[prefix + len(_LEGACY_PREFIX) : bracket]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if _ordinal_upper(name) not in {_ordinal_upper(c) for c in registered}:
        return None
    properties: dict[str, str] = {}
    if space > 0:
        for piece in info[space + 1 :].split(";"):
            pair = _split_pair(piece) if piece else []
            if len(pair) == 2:
                properties[pair[0]] = _decode(pair[1], _LEGACY_DECODING)
    return ParsedCommand(
        command=name, properties=properties, message=_decode(line[bracket + 1 :], _LEGACY_DECODING)
    )


def parse_output(
    text: str, registered: Collection[str] = REGISTERED_COMMANDS, *, legacy: bool = False
) -> list[ParsedCommand | str]:
    """Split output into lines as ``StreamReader.ReadLine`` does, then parse each
    (``legacy``: a line that is no ``::`` command is then tried as a ``##[`` one, as the
    runner does).

    Each line becomes a :class:`ParsedCommand`, or stays a ``str`` (plain log text). A
    final line terminator does not start another line.
    """
    if not text:
        return []
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    results: list[ParsedCommand | str] = []
    for line in lines:
        parsed = parse_line(line, registered)
        if parsed is None and legacy:
            parsed = parse_legacy_line(line, registered)
        results.append(line if parsed is None else parsed)
    return results
