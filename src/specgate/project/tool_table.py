"""Whether a ``pyproject.toml`` may hold a ``[tool.specgate]`` table, without parsing it.

Importing the TOML parser and parsing a pyproject costs about a sixteenth of a one-file
``specgate check`` (``benchmarks/startup_instructions.py``), and most pyproject files
configure other tools only. :func:`may_hold_table` answers ``False`` only when it has
followed every table header and key of the file and none of them is ``tool.specgate``
or below it (nor ``tool`` itself given a value, such as an inline table, that may hold
it). Whatever it cannot follow (a multi-line string, a key with an escape, a stray
quote, a character TOML does not allow there) answers ``True``, and the file is parsed
as before. So a file that holds the table is always parsed; a file that does not and
is not valid TOML is left to its own tools.

TOML 1.0 (https://toml.io/en/v1.0.0): a key is bare (``A-Za-z0-9_-``) or quoted (a basic
string, whose letters may be escapes, or a literal string, as written); dotted keys
may have spaces or tabs around the dots; a header ``[a.b]`` or ``[[a.b]]``, alone on
its line, names the table the keys below it belong to, and an inline table's keys
belong under the key it is the value of. A value ends at the end of its line, unless
an array or inline table is open; strings are skipped whole, so brackets and ``#`` in
them count for nothing, and a comment runs to the end of its line.
"""

from __future__ import annotations

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_TABLE = ("tool", "specgate")
_SPACE = " \t"


def may_hold_table(text: str) -> bool:
    """``False`` only when the TOML ``text`` surely holds no ``[tool.specgate]`` table
    (see the module's docstring)."""
    if "specgate" not in text and "\\" not in text:
        return False  # every spelling of the key has the word, or an escape
    if '"""' in text or "'''" in text:
        return True  # a multi-line string: its lines are not statements
    table: tuple[str, ...] = ()
    depth = 0  # open arrays and inline tables of the value being read
    for line in text.split("\n"):
        if depth:
            depth = _past_value(line, depth)
            if depth < 0:
                return True
            continue
        statement = line.strip(" \t\r")
        if not statement or statement[0] == "#":
            continue
        if statement[0] == "[":
            double = statement.startswith("[[")
            key = _key(statement, 1 + double, "]")
            if key is None:
                return True
            table, at = key
            if double:
                if not statement.startswith("]", at):
                    return True
                at += 1
            rest = statement[at:].lstrip(_SPACE)
            if (rest and rest[0] != "#") or table[:2] == _TABLE:
                return True
            continue
        key = _key(statement, 0, "=")
        if key is None:
            return True
        path, at = key
        path = table + path
        if path[:2] == _TABLE or path == _TABLE[:1]:
            return True
        depth = _past_value(statement[at:], 0)
        if depth < 0:
            return True
    return depth != 0


def _key(line: str, at: int, closing: str) -> tuple[tuple[str, ...], int] | None:
    """The parts of the dotted key at ``line[at:]``, ended by ``closing`` (``=`` or
    ``]``), and the index after ``closing``; ``None`` when that is not a key this module
    can follow (an escape in it, a missing part, no ``closing``)."""
    parts: list[str] = []
    end = len(line)
    while True:
        while at < end and line[at] in _SPACE:
            at += 1
        if at >= end:
            return None
        quote = line[at]
        if quote in "\"'":
            close = line.find(quote, at + 1)
            if close < 0:
                return None
            part = line[at + 1 : close]
            if "\\" in part:  # an escape may spell a letter of specgate
                return None
            at = close + 1
        else:
            start = at
            while at < end and line[at] in _BARE:
                at += 1
            if at == start:
                return None
            part = line[start:at]
        parts.append(part)
        while at < end and line[at] in _SPACE:
            at += 1
        if at >= end:
            return None
        if line[at] == closing:
            return tuple(parts), at + 1
        if line[at] != ".":
            return None
        at += 1


def _past_value(text: str, depth: int) -> int:
    """How many arrays and inline tables are open after the value text ``text`` (one
    line, ``depth`` open before it); ``-1`` when it cannot be followed (an unclosed
    string, more closed than opened)."""
    if "[" not in text and "]" not in text and "{" not in text and "}" not in text:
        return depth  # no bracket: whatever its strings and comment, none opens or closes
    at, end = 0, len(text)
    while True:
        double, single = text.find('"', at), text.find("'", at)
        quote = min(double if double >= 0 else end, single if single >= 0 else end)
        code = text[at:quote]
        comment = code.find("#")
        if comment >= 0:
            code, quote = code[:comment], end
        depth += code.count("[") + code.count("{") - code.count("]") - code.count("}")
        if depth < 0:
            return -1
        if quote >= end:
            return depth
        close = text.find(text[quote], quote + 1)
        if text[quote] == '"':  # skip escaped quotes: an odd run of backslashes before
            while close >= 0 and (close - len(text[:close].rstrip("\\"))) % 2:
                close = text.find('"', close + 1)
        if close < 0:
            return -1
        at = close + 1
