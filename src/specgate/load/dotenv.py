"""A ``.env`` file read as Compose v2 reads it: compose-go's dotenv parser
(``dotenv/parser.go``@e70e961c, ``parser.parse``; ``dotenv/godotenv.go``
``parseWithLookup``), followed statement by statement, so every file Compose reads is
read with the same names and values and every file it refuses is refused.

- A UTF-8 byte-order mark at the start is dropped; white space (Go's
  ``unicode.IsSpace``) and ``#`` comment lines before a statement are skipped.
- ``export`` and white space (Go RE2 ``\\s``: tab, line feed, form feed, carriage
  return, space) before a name are dropped.
- A name runs to the first ``=``, ``:`` (``KEY: value``) or line end, blanks inside
  skipped; it holds letters, digits (Unicode categories L and N) and ``_ . - [ ]``,
  any other character stops Compose ("unexpected character"). A name ending at the line
  end (``FOO``, ``export FOO``) takes the value of the environment Compose runs in, or of
  a line above; a name with a space in it stops Compose.
- A value not in quotes runs to the line end, cut at `` #`` and trailing white space.
- A quoted value runs to the same quote not escaped by ``\\``, over several lines if
  need be (an unterminated one stops Compose); what follows the closing quote is read as
  the next statement. In single quotes the text is taken as written (``\\'`` is ``'``);
  in double quotes (``\\"`` is ``"``) the escapes ``\\a \\b \\f \\n \\r \\t \\v \\" \\\\``,
  ``\\0`` and three octal digits (``expandEscapes``), and ``\\$`` (a literal ``$``) are
  replaced, then variables are interpolated, as in an unquoted value.

Linear in the file: each character is looked at a bounded number of times.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from specgate.core.errors import InputError

#: Go's ``unicode.IsSpace`` (the Unicode White_Space property).
_GO_SPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
#: compose-go's ``isSpace``: white space but not a line feed.
_SPACE = frozenset("\t\v\f\r \x85\xa0")
#: ``exportRegex``: ``^export\s+`` (RE2 ``\s`` is ASCII: no vertical tab).
_EXPORT = re.compile(r"export[\t\n\f\r ]+")
#: ``escapeSeqRegex`` (RE2 ``\d`` is ASCII).
_ESCAPE = re.compile(r"\\(?:[abcfnrtv$\"\\]|0[0-9]{0,3})")
_SIMPLE = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    '"': '"', "\\": "\\",
}


def _escape(match: re.Match[str]) -> str:
    """``expandEscapes`` for one escape: ``\\$`` → ``$$`` (a literal ``$`` to the
    interpolation), ``\\0ooo`` → the octal character (``strconv.UnquoteChar`` of
    ``\\ooo``: exactly three octal digits, at most 255); any other ``\\0…`` loses its
    ``0`` (compose-go returns the rewritten ``\\…`` when ``UnquoteChar`` fails)."""
    text = match.group(0)
    if text == "\\$":
        return "$$"
    if text.startswith("\\0"):
        digits = text[2:]
        if len(digits) == 3 and all(c in "01234567" for c in digits) and int(digits, 8) < 256:
            return chr(int(digits, 8))
        return "\\" + digits
    return _SIMPLE[text[1]]


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def parse_statements(
    text: str,
    shown: str,
    lookup: Callable[[str], str | None],
    expand: Callable[[str], tuple[str, bool]],
    out: dict[str, str],
    *,
    lines: dict[str, int] | None = None,
    unsettled: set[str] | None = None,
) -> None:
    """Add the variables of ``.env`` ``text`` to ``out`` in order (module doc):
    ``lookup`` gives a name's value in the environment Compose runs in (then ``out``'s),
    ``expand`` interpolates an unquoted or double-quoted value (and says whether its
    value is settled); ``lines`` gets the line of each name's last setting,
    ``unsettled`` the names whose last value is not settled.

    Raises:
        InputError: a statement Compose refuses (at its line), with Compose's reason.
    """
    text = text.removeprefix("\ufeff")
    at, end = 0, len(text)
    while True:
        # getStatementStart: skip white space and comment lines
        while at < end and (text[at] in _GO_SPACE or text[at] == "#"):
            if text[at] == "#":
                newline = text.find("\n", at)
                at = end if newline < 0 else newline
            else:
                at += 1
        if at >= end:
            return
        start = at
        export = _EXPORT.match(text, at)
        if export is not None:
            at = export.end()
            while at < end and text[at] in _SPACE:
                at += 1
        key, at, inherited = _key(text, at, shown)
        if " " in key:
            raise InputError("key cannot contain a space", shown, _line(text, start))
        if lines is not None:
            lines[key] = _line(text, start)
        if inherited:
            value = lookup(key)
            if value is None:
                value = out.get(key)
            if value is not None:
                out[key] = value
            elif lines is not None:
                lines.pop(key, None)
            continue
        value, settled, at = _value(text, at, shown, expand)
        out[key] = value
        if unsettled is not None:
            (unsettled.discard if settled else unsettled.add)(key)


def _key(text: str, at: int, shown: str) -> tuple[str, int, bool]:
    """``locateKeyName``: the name from ``at``, where its value starts, and whether it
    is inherited (the name ends at the line end)."""
    end = len(text)
    key, offset, inherited = "", at, False
    i = at
    while i < end:
        char = text[i]
        if char in _SPACE:
            i += 1
            continue
        if char in "=:\n":
            key, offset, inherited = text[at:i], i + 1, char == "\n"
            break
        if char not in "_.-[]" and unicodedata.category(char)[0] not in "LN":
            line_end = text.find("\n", at)
            written = text[at : end if line_end < 0 else line_end]
            raise InputError(
                f"unexpected character {char!r} in variable name {written[:60]!r}",
                shown, _line(text, i),
            )
        i += 1
    key = key.rstrip("".join(_GO_SPACE))
    while offset < end and text[offset] in _SPACE:
        offset += 1
    return key, offset, inherited


def _value(
    text: str, at: int, shown: str, expand: Callable[[str], tuple[str, bool]]
) -> tuple[str, bool, int]:
    """``extractVarValue``: the value from ``at``, whether it is settled, and where the
    next statement starts."""
    end = len(text)
    quote = text[at] if at < end and text[at] in "'\"" else ""
    if not quote:
        newline = text.find("\n", at)
        stop = end if newline < 0 else newline
        value = text[at:stop].split(" #", 1)[0].rstrip("".join(_GO_SPACE))
        return *expand(value), min(stop + 1, end)
    chars: list[str] = []
    escaped = False
    for i in range(at + 1, end):
        char = text[i]
        if char != quote:
            if not escaped and char == "\\":
                escaped = True
                continue
            if escaped:
                escaped = False
                chars.append("\\")
            chars.append(char)
            continue
        if escaped:  # an escaped quote: the quote alone
            escaped = False
            chars.append(char)
            continue
        value = "".join(chars)
        if quote == '"':
            return *expand(_ESCAPE.sub(_escape, value)), i + 1
        return value, True, i + 1
    newline = text.find("\n", at)
    written = text[at : end if newline < 0 else newline]
    raise InputError(f"unterminated quoted value {written[:60]}", shown, _line(text, at))
