"""JSON → :class:`~specgate.load.document.Document` with positions and repeated keys.

The standard library's :mod:`json` decides what is valid JSON and gives the
line and column of a syntax error; a second, small pass over the (now known
valid) text records where each key and value starts and which keys repeat,
reusing :mod:`json`'s own string and number scanners. The first occurrence of a
repeated key is reported; the last value is kept, as :func:`json.loads` keeps it.
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
import math
from collections.abc import Callable
from typing import Any

from specgate.core.errors import InputError
from specgate.core.limits import MAX_INTEGER_DIGITS, MAX_NESTING, bounded_int
from specgate.load.document import Document, DuplicateKey, NodePath, NodePosition, Span

_WS = " \t\n\r"
# The standard library's JSON string scanner (C-accelerated); typeshed omits it.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_CONSTANTS = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
}


class _Walker:
    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        self.positions: dict[NodePath, NodePosition] = {}
        self.duplicates: list[DuplicateKey] = []

    def span(self, offset: int) -> Span:
        line = bisect.bisect_right(self.starts, offset) - 1
        return Span(line + 1, offset - self.starts[line] + 1)

    def skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _WS:
            i += 1
        return i

    def value(self, i: int, path: NodePath, key: Span | None) -> tuple[Any, int]:
        i = self.skip(i)
        ch = self.text[i]
        here = self.span(i)
        if ch in "{[" and len(path) >= MAX_NESTING:
            raise InputError(_TOO_DEEP, self.file, here.line, here.column)
        if ch == "{":
            self.positions[path] = NodePosition("mapping", here, key)
            return self.obj(i + 1, path)
        if ch == "[":
            self.positions[path] = NodePosition("sequence", here, key)
            return self.array(i + 1, path)
        self.positions[path] = NodePosition("scalar", here, key)
        if ch == '"':
            return _scanstring(self.text, i + 1)
        for word, constant in _CONSTANTS.items():
            if self.text.startswith(word, i):
                return constant, i + len(word)
        match = json.scanner.NUMBER_RE.match(self.text, i)
        assert match is not None, "text was validated by json.loads"
        integer, frac, exp = match.groups()
        if frac or exp:
            return float(match.group()), match.end()
        number = bounded_int(integer.lstrip("-"))
        if number is None:
            raise InputError(
                f"a JSON integer has too many digits (specgate's limit is "
                f"{MAX_INTEGER_DIGITS:,} decimal digits)",
                self.file,
                here.line,
                here.column,
            )
        return (-number if integer.startswith("-") else number), match.end()

    def obj(self, i: int, path: NodePath) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        first: dict[str, Span] = {}
        i = self.skip(i)
        if self.text[i] == "}":
            return out, i + 1
        while True:
            i = self.skip(i)
            key_span = self.span(i)
            key, i = _scanstring(self.text, i + 1)
            i = self.skip(i) + 1  # the ':'
            if key in first:
                self.duplicates.append(DuplicateKey((*path, key), key, key_span, first[key]))
            else:
                first[key] = key_span
            # The last value wins, as json.loads (and every engine) reads it.
            out[key], i = self.value(i, (*path, key), key_span)
            i = self.skip(i)
            if self.text[i] == "}":
                return out, i + 1
            i += 1  # the ','

    def array(self, i: int, path: NodePath) -> tuple[list[Any], int]:
        out: list[Any] = []
        i = self.skip(i)
        if self.text[i] == "]":
            return out, i + 1
        while True:
            item, i = self.value(i, (*path, len(out)), None)
            out.append(item)
            i = self.skip(i)
            if self.text[i] == "]":
                return out, i + 1
            i += 1


_TOO_DEEP = f"nesting is too deep: more than {MAX_NESTING} levels (specgate's limit)"
#: The message of a JSON text nested past specgate's bound (a reader's limit, not a syntax error).
TOO_DEEP = _TOO_DEEP


def _too_deep_at(text: str) -> int:
    """The offset of the bracket that opens level ``MAX_NESTING + 1`` of ``text``
    (outside strings), else 0: where a file too deep for :func:`json.loads` gets too
    deep. A plain scan, run only on that failure."""
    depth = 0
    in_string = escaped = False
    for offset, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            if depth > MAX_NESTING:
                return offset
        elif ch in "}]":
            depth -= 1
    return 0


def loads(text: str) -> object:
    """:func:`json.loads` held to :data:`~specgate.core.limits.MAX_NESTING` levels:
    the one way JSON embedded in a string (a ``--speculative-config`` value, a
    pointer's target) is parsed, so nothing that walks the value later recurses past
    the bound.

    Raises:
        ValueError: not JSON (:class:`json.JSONDecodeError`), or nested deeper.
    """
    try:
        value: object = json.loads(text)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    level: list[tuple[object, int]] = [(value, 1)]
    while level:
        node, depth = level.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_NESTING:
            raise ValueError(_TOO_DEEP)
        level.extend((child, depth + 1) for child in children)
    return value


def load_json(text: str, file: str) -> Document:
    """Parse JSON ``text`` from ``file`` into a Document.

    Raises:
        InputError: a syntax error (with the line and column json reports) or
            nesting deeper than :data:`~specgate.core.limits.MAX_NESTING` levels
            (at the bracket that goes too deep).
    """
    if not text.strip():
        return Document(file=file, data=None, empty=True)
    try:
        # Syntax only: integers are not converted here (parse_int=len), but by the
        # walker, which holds them to MAX_INTEGER_DIGITS at their line.
        json.loads(text, parse_int=len)
    except json.JSONDecodeError as exc:
        raise InputError(f"JSON syntax error: {exc.msg}", file, exc.lineno, exc.colno) from None
    except RecursionError:
        walker = _Walker(text, file)
        here = walker.span(_too_deep_at(text))
        raise InputError(_TOO_DEEP, file, here.line, here.column) from None
    walker = _Walker(text, file)
    data, _ = walker.value(0, (), None)
    return Document(
        file=file, data=data, positions=walker.positions, duplicates=tuple(walker.duplicates)
    )
