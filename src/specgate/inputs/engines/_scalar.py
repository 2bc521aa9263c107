"""Where each character of a decoded string stands in the file's source text.

A value read from a JSON string (``speculative-config: '{"num_speculative_tokens": 7}'``)
must point at the ``7`` inside the file, not at the opening quote. Three layers
map a character back to the source:

- a YAML scalar (plain, single-quoted, double-quoted, ``|`` literal or ``>`` folded
  block) or a JSON string: :func:`scalar_offsets`;
- a shell word inside a command-line string (quotes, backslashes): :func:`word_offsets`;
- a key or value inside JSON text: :func:`json_locator` (positions recorded by
  :func:`specgate.load.json_loader.load_json`).

Every mapping is checked by decoding the source again and comparing with the
value the parser produced: when they differ (an escape or a layout this module
does not reproduce), the mapping is ``None`` and callers fall back to the string's
start, never to a wrong line.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import overload

from specgate.core.errors import InputError
from specgate.load.document import NodePath, Span

_SIMPLE_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_BLANK = " \t"


class LineIndex:
    """Offsets ↔ 1-based line and column in one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def span(self, offset: int) -> Span:
        line = bisect.bisect_right(self.starts, offset) - 1
        return Span(line + 1, offset - self.starts[line] + 1)

    def offset(self, span: Span) -> int | None:
        if not 1 <= span.line <= len(self.starts) or span.column < 1:
            return None
        offset = self.starts[span.line - 1] + span.column - 1
        return offset if offset <= len(self.text) else None


@lru_cache(maxsize=8)
def line_index(text: str) -> LineIndex:
    """The :class:`LineIndex` of ``text``, built once per text: a file of thousands of
    commands places every one of them against the same index (building it per command
    made reading such a file quadratic). A hit costs no scan: ``str`` caches its hash
    and the cache compares the same object by identity."""
    return LineIndex(text)


class SpanSequence(Sequence[Span]):
    """The spans of ``offsets`` into one text, each computed when asked: a long scalar
    (a ConfigMap's embedded YAML) has hundreds of thousands of characters, of which a
    locator needs a handful."""

    def __init__(self, lines: LineIndex, offsets: Sequence[int]) -> None:
        self._lines = lines
        self._offsets = offsets

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, index: int) -> Span: ...

    @overload
    def __getitem__(self, index: slice) -> SpanSequence: ...

    def __getitem__(self, index: int | slice) -> Span | SpanSequence:
        if isinstance(index, slice):
            return SpanSequence(self._lines, self._offsets[index])
        return self._lines.span(self._offsets[index])


# One decoded character: (character, source offset, came from the source as written).
_Char = tuple[str, int, bool]


def scalar_offsets(source: str, start: int, value: str) -> list[int] | None:
    """Per character of ``value``, its offset in ``source``; ``start`` is where the
    scalar begins (its quote, its ``|``/``>`` indicator, or its first character).

    Returns None when the source at ``start`` does not decode to ``value``.
    """
    if not 0 <= start < len(source):
        return None
    first = source[start]
    try:
        if first in "|>":
            return _block(source, start, value)
        if first in "'\"":
            chars = _flow(source, start + 1, first)
        else:
            chars = _flow(source, start, None, len(value))
    except IndexError:
        return None
    if chars is None or "".join(c for c, _, _ in chars) != value:
        return None
    return [offset for _, offset, _ in chars]


def _flow(source: str, i: int, quote: str | None, wanted: int = 0) -> list[_Char] | None:
    """A flow scalar (quoted, or plain when ``quote`` is None) with YAML line folding."""
    out: list[_Char] = []
    n = len(source)
    while i < n:
        ch = source[i]
        if quote is not None and ch == quote:
            if quote == "'" and i + 1 < n and source[i + 1] == "'":
                out.append(("'", i + 1, True))
                i += 2
                continue
            return out
        if quote is None and (ch == "#" and i > 0 and source[i - 1] in _BLANK):
            break
        if ch in "\r\n":
            while out and out[-1][2] and out[-1][0] in _BLANK:
                out.pop()
            if quote is None and len(out) >= wanted:
                return out
            i = _fold(source, i, out)
            continue
        if quote == '"' and ch == "\\":
            i = _escape(source, i, out)
            if i < 0:
                return None
            continue
        out.append((ch, i, True))
        i += 1
    if quote is not None:
        return None
    while out and out[-1][2] and out[-1][0] in _BLANK:
        out.pop()
    return out


def _fold(source: str, i: int, out: list[_Char]) -> int:
    """Fold the line break at ``i``: one space, or a newline per empty line after it."""
    breaks = 0
    at = i
    while True:
        i = _past_break(source, i)
        j = i
        while j < len(source) and source[j] in _BLANK:
            j += 1
        if j < len(source) and source[j] in "\r\n":
            breaks += 1
            i = j
            continue
        break
    out.extend(("\n", at, False) for _ in range(breaks))
    if not breaks:
        out.append((" ", at, False))
    return j


def _past_break(source: str, i: int) -> int:
    if source.startswith("\r\n", i):
        return i + 2
    return i + 1


def _escape(source: str, i: int, out: list[_Char]) -> int:
    """A double-quoted escape at ``i``; returns the offset after it, −1 when unknown."""
    code = source[i + 1]
    if code in _SIMPLE_ESCAPES:
        out.append((_SIMPLE_ESCAPES[code], i, False))
        return i + 2
    if code in _HEX_ESCAPES:
        width = _HEX_ESCAPES[code]
        digits = source[i + 2 : i + 2 + width]
        try:
            out.append((chr(int(digits, 16)), i, False))
        except ValueError:
            return -1
        return i + 2 + width
    if code in "\r\n":  # an escaped line break: no space, leading blanks dropped
        j = _past_break(source, i + 1)
        while j < len(source) and source[j] in _BLANK:
            j += 1
        return j
    return -1


def _block(source: str, start: int, value: str) -> list[int] | None:
    """A ``|`` literal or ``>`` folded block scalar (auto-detected indentation)."""
    folded = source[start] == ">"
    eol = source.find("\n", start)
    if eol < 0:
        return None
    header = source[start + 1 : eol].split("#", 1)[0].strip()
    if any(ch.isdigit() for ch in header):
        return None  # an explicit indentation indicator: rare, not reproduced
    rows: list[tuple[int, str]] = []  # (offset of the row's start, row text)
    at = eol + 1
    while at <= len(source):
        end = source.find("\n", at)
        end = len(source) if end < 0 else end
        rows.append((at, source[at:end].rstrip("\r")))
        at = end + 1
    indent = next((len(r) - len(r.lstrip(" ")) for _, r in rows if r.strip()), None)
    if not indent:
        return None
    chars: list[_Char] = []
    previous_plain = False
    pending_empty = 0
    for offset, row in rows:
        if not row.strip():
            pending_empty += 1
            continue
        if len(row) - len(row.lstrip(" ")) < indent:
            break
        body = row[indent:]
        plain = not body.startswith((" ", "\t"))
        if chars:
            newline_at = chars[-1][1] + 1
            if folded and previous_plain and plain:
                if pending_empty:
                    chars.extend(("\n", newline_at, False) for _ in range(pending_empty))
                else:
                    chars.append((" ", newline_at, False))
            else:
                chars.extend(("\n", newline_at, False) for _ in range(pending_empty + 1))
        elif pending_empty:
            chars.extend(("\n", offset, False) for _ in range(pending_empty))
        pending_empty = 0
        chars.extend((ch, offset + indent + k, True) for k, ch in enumerate(body))
        previous_plain = plain
    decoded = "".join(c for c, _, _ in chars)
    if decoded.rstrip("\n") != value.rstrip("\n") or len(value.rstrip("\n")) > len(chars):
        return None
    offsets = [o for _, o, _ in chars]
    # Trailing newlines (chomping) stand after the last character.
    last = offsets[-1] + 1 if offsets else start
    return [*offsets, *([last] * (len(value) - len(offsets)))][: len(value)]


def word_offsets(text: str, start: int, word: str) -> list[int] | None:
    """Per character of the shell word ``word`` that starts at ``start`` in ``text``,
    its offset in ``text`` (POSIX quotes and backslashes); None when it does not
    decode to ``word``."""
    out = _decoded(text, start, len(word))
    if out is None or "".join(c for c, _ in out) != word:
        return None
    return [offset for _, offset in out]


def written_word(text: str, start: int) -> list[tuple[str, int]] | None:
    """The shell word that starts at ``start`` in ``text`` with its quotes removed and
    nothing expanded (``"…:$N}"`` → ``…:$N}``), each character with its offset: where
    an expansion the launcher replaced by its value stands as written (None when a
    quote is not closed)."""
    return _decoded(text, start, len(text))


def _decoded(text: str, start: int, limit: int) -> list[tuple[str, int]] | None:
    """Up to ``limit`` characters of the word at ``start``, unquoted, with offsets."""
    out: list[tuple[str, int]] = []
    i = start
    n = len(text)
    while i < n and len(out) < limit:
        ch = text[i]
        if ch in " \t\n\x0b;&|":
            break
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return None
            out.extend((text[k], k) for k in range(i + 1, end))
            i = end + 1
        elif ch == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
                    if text[i + 1] != "\n":
                        out.append((text[i + 1], i + 1))
                    i += 2
                    continue
                out.append((text[i], i))
                i += 1
            i += 1
        elif ch == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                out.append((text[i + 1], i + 1))
            i += 2
        else:
            out.append((ch, i))
            i += 1
    return out


def json_locator(
    text: str, chars: Sequence[Span] | None, fallback: Span, *, yaml: bool = False
) -> Callable[[NodePath], Span]:
    """Spans of the keys and values of the JSON ``text`` (YAML text when ``yaml``)
    whose characters stand at ``chars`` in the file (a scalar points at its value, a
    container at its key); everything at ``fallback`` when ``chars`` is unknown."""
    if chars is None or len(chars) != len(text):
        return lambda _path: fallback
    from specgate.inputs.pointer import embedded_yaml_document
    from specgate.load.json_loader import load_json

    try:
        found = embedded_yaml_document(text) if yaml else load_json(text, "")
    except InputError:
        return lambda _path: fallback
    if found is None:
        return lambda _path: fallback
    doc = found
    lines = LineIndex(text)

    def locate(path: NodePath) -> Span:
        offset = lines.offset(doc.locate(path)) if doc.has(path) else None
        if offset is None or offset >= len(chars):
            return fallback
        return chars[offset]

    return locate
