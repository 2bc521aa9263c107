"""JSON and JSON Lines metrics files of real size → :class:`Record` values.

Per-request and per-iteration records grow with traffic (a day of vLLM
``--per-request-spec-decode-metrics`` output is tens of megabytes), so these files
are not parsed with every value's position like claims files (:mod:`specgate.load.json_loader`
costs about 0.6 s and 30 MiB per MiB of input). Instead:

- **JSON Lines** (the first non-empty line is a JSON value by itself and another
  non-empty line follows) are read line by line; each line is parsed by the standard
  library's :func:`json.loads` (C speed) and only that line is held while its record
  is in use. Memory is one line at a time plus what a reader keeps.
- **A whole JSON document** is read as text and parsed by the standard library; a
  top-level array is read from the file item by item (:func:`array_records`), so
  neither its text nor its records are all in memory at once.
- **Positions** are found only when asked for (:attr:`Record.locate`), by scanning
  from the start of the record to the node: a finding or error costs one walk over
  one record, a clean file costs none. A position is the one
  :meth:`specgate.load.document.Document.locate` would give (line and column).

Limits, the same as for the line formats (:mod:`.stream`): the file at most
:data:`~.stream.METRICS_MAX_BYTES`, a line at most :data:`~.stream.MAX_LINE_BYTES`,
UTF-8 without NUL. Nesting deeper than the interpreter's recursion limit (the
claims file's limit) and integers with more digits than
:func:`sys.get_int_max_str_digits` are input errors; ``NaN`` and ``Infinity`` are
parsed, and the readers refuse them at their position. A repeated key keeps its
last value, as :func:`json.loads` and the engines read it, and positions point at
that last occurrence.
"""

from __future__ import annotations

import codecs
import json
import json.decoder
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from specgate.core.errors import InputError
from specgate.inputs.metrics._common import Record
from specgate.inputs.metrics.stream import MAX_LINE_BYTES, METRICS_MAX_BYTES, check_file, too_large
from specgate.load.document import NodePath, Span

_WS = " \t\n\r"
# The standard library's JSON string scanner (C-accelerated); typeshed omits it.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_DECODER = json.JSONDecoder()
_MIB = 1024 * 1024


def _loads(text: str, shown: str, line: int = 1, prefix: str = "") -> object:
    """``json.loads(text)`` with its failures as input errors (``line`` is where
    ``text`` starts in the file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{prefix}JSON syntax error: {exc.msg}", shown, line + exc.lineno - 1, exc.colno
        ) from None
    except ValueError:  # an integer over sys.get_int_max_str_digits() (4300 by default)
        raise InputError(f"{prefix}a JSON integer has too many digits", shown, line) from None
    except RecursionError:
        raise InputError(f"{prefix}JSON nesting is too deep", shown, line) from None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _value_end(text: str, i: int) -> int:
    """The offset after the (valid) JSON value starting at ``i``."""
    return _DECODER.raw_decode(text, i)[1]


class Locator:
    """Positions inside the valid JSON value at ``text[start:]`` (``first_line`` is
    the file line ``text`` starts on), found on demand.

    A position is the one :meth:`Document.locate` would give: a scalar's value, a
    container's key (its own start when no key holds it); the nearest existing
    ancestor when the path does not exist; a repeated key's last occurrence (the
    value :func:`json.loads` keeps). Siblings are skipped at C speed; each array
    remembers how far it was scanned, each object key is looked up once, and lines
    are counted from the last position located, so locating every item of a list
    in order (``marginal[0]``, ``marginal[1]`` …) costs one pass over the text, not
    one pass per item.
    """

    def __init__(
        self, text: str, start: int = 0, first_line: int = 1, first_column: int = 1
    ) -> None:
        self.text = text
        self.start = start
        self.first_line = first_line
        #: The column ``text[0]`` stands at (an array item cut from a longer line).
        self.first_column = first_column
        self._arrays: dict[int, tuple[int, int]] = {}  # array start → (index, offset)
        self._members: dict[tuple[int, str], tuple[int, int] | None] = {}
        # The last position located: (offset, newlines before it, its line's start).
        self._last = (0, 0, 0)

    def __call__(self, path: NodePath) -> Span:
        return self.span(self.offset(path))

    def offset(self, path: NodePath) -> int:
        """The offset in ``text`` that ``path`` is located at."""
        text = self.text
        pos = _skip(text, self.start)
        key_at: int | None = None
        for element in path:
            opener = text[pos] if pos < len(text) else ""
            found: tuple[int | None, int] | None = None
            if opener == "{" and isinstance(element, str):
                found = self._member(pos, element)
            elif opener == "[" and isinstance(element, int) and element >= 0:
                item = self._item(pos, element)
                found = None if item is None else (None, item)
            if found is None:
                break
            key_at, pos = found
        if key_at is not None and text[pos] in "{[":
            return key_at
        return pos

    def _member(self, pos: int, wanted: str) -> tuple[int, int] | None:
        """(key offset, value offset) of the last ``wanted`` key of the object at ``pos``
        (each object and key scanned once)."""
        if (pos, wanted) in self._members:
            return self._members[pos, wanted]
        found = self._scan_member(pos, wanted)
        self._members[pos, wanted] = found
        return found

    def _scan_member(self, pos: int, wanted: str) -> tuple[int, int] | None:
        text = self.text
        found = None
        i = _skip(text, pos + 1)
        while i < len(text) and text[i] != "}":
            key_start = i
            key, i = _scanstring(text, i + 1)
            value_start = _skip(text, _skip(text, i) + 1)  # past the ':'
            i = _skip(text, _value_end(text, value_start))
            if key == wanted:
                found = (key_start, value_start)
            if text[i] == ",":
                i = _skip(text, i + 1)
        return found

    def _item(self, pos: int, wanted: int) -> int | None:
        """The offset of item ``wanted`` of the array at ``pos`` (resuming the scan
        where the last request for this array stopped, when that was before it)."""
        text = self.text
        index, i = self._arrays.get(pos, (0, _skip(text, pos + 1)))
        if index > wanted:
            index, i = 0, _skip(text, pos + 1)
        while i < len(text) and text[i] != "]":
            if index == wanted:
                self._arrays[pos] = (index, i)
                return i
            i = _skip(text, _value_end(text, i))
            if text[i] == ",":
                i = _skip(text, i + 1)
            index += 1
        return None

    def span(self, offset: int) -> Span:
        """The 1-based line and column of ``offset`` (counted from the last position
        located when ``offset`` lies after it, else from the start)."""
        text = self.text
        known, before, line_start = self._last if offset >= self._last[0] else (0, 0, 0)
        newlines = before + text.count("\n", known, offset)
        if newlines > before:
            line_start = text.rfind("\n", known, offset) + 1
        self._last = (offset, newlines, line_start)
        shift = self.first_column - 1 if newlines == 0 else 0
        return Span(self.first_line + newlines, offset - line_start + 1 + shift)


def node_offset(text: str, start: int, path: NodePath) -> int:
    """The offset :class:`Locator` gives for ``path`` in the value at ``text[start:]``."""
    return Locator(text, start).offset(path)


def _span_in_text(text: str, offset: int, first_line: int = 1) -> Span:
    return Locator(text, 0, first_line).span(offset)


def _locator(text: str, start: int, first_line: int = 1) -> Callable[[NodePath], Span]:
    return Locator(text, start, first_line)


def load_one(text: str, shown: str) -> Record:
    """``text`` as one JSON document (C-speed parse; positions found on demand).

    Raises:
        InputError: empty, a syntax error (line and column), nesting too deep, an
            integer with too many digits.
    """
    if not text.strip():
        raise InputError("file is empty (no JSON document)", shown)
    return Record(_loads(text, shown), _locator(text, 0))


def records_from_text(text: str, shown: str) -> Iterator[Record]:
    """The records of already-read ``text``: one JSON document (an array gives one
    record per item) or JSON Lines (one record per non-empty line).

    Raises:
        InputError: neither; the first bad line or the document's error position.
    """
    lines = text.split("\n")
    numbered = ((n, line) for n, line in enumerate(lines, 1) if line.strip())
    first = next(numbered, None)
    second = next(numbered, None)
    if first is not None and second is not None and _parses(first[1]):
        yield _line_record(first[1], first[0], shown)
        yield _line_record(second[1], second[0], shown)
        for number, line in numbered:
            yield _line_record(line, number, shown)
        return
    yield from _document_records(text, shown)


def read_records(path: Path, shown: str) -> Iterator[Record]:
    """The records of the metrics file at ``path``, streamed (see the module doc).

    Raises:
        InputError: missing, unreadable, over the size limit, a line over the line
            limit, not UTF-8, a NUL byte, not JSON and not JSON Lines (at the line).
    """
    check_file(path, shown)
    try:
        with path.open("rb") as handle:
            lines = _lines(handle, shown)
            try:
                first = next(lines, None)
            except InputError as exc:
                # a first line past the line bound can be no JSON Lines record: an array
                # written on one line (trtllm-serve's /metrics) is read item by item
                if not exc.reason.startswith("a line longer than"):
                    raise
                handle.seek(0)
                if handle.read(64).lstrip(b" \t\r\n\xef\xbb\xbf")[:1] != b"[":
                    raise
                handle.seek(0)
                yield from array_records(handle, shown, _read_all)
                return
            if first is None:
                raise InputError("file is empty (no JSON document)", shown)
            second = next(lines, None)
            if second is None or not _parses(first[1]):
                handle.seek(0)
                if first[1].lstrip(_WS)[:1] == "[":  # an array: item by item, streamed
                    yield from array_records(handle, shown, _read_all)
                    return
                yield from _document_records(_read_all(handle, shown), shown)
                return
            yield _line_record(first[1], first[0], shown)
            yield _line_record(second[1], second[0], shown)
            for number, line in lines:
                yield _line_record(line, number, shown)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", shown) from None


def _lines(handle: BinaryIO, shown: str) -> Iterator[tuple[int, str]]:
    """The non-empty lines of ``handle`` with their numbers, without line breaks,
    decoded (a byte order mark before the first is dropped)."""
    readline = handle.readline
    limit = MAX_LINE_BYTES
    total = 0
    number = 0
    while raw := readline(limit + 1):
        number += 1
        total += len(raw)
        if total > METRICS_MAX_BYTES:
            raise too_large(shown)
        if len(raw) > limit:
            raise InputError(f"a line longer than {limit // _MIB} MiB", shown, number)
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.isspace():
            yield number, _decode_line(raw, shown, number)


def _decode_line(raw: bytes, shown: str, number: int) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("not valid UTF-8", shown, number, exc.start + 1) from None
    if "\x00" in text:
        raise InputError("file holds a NUL byte (binary, not text)", shown, number)
    return text.rstrip("\r\n")


def _read_all(handle: BinaryIO, shown: str) -> str:
    raw = handle.read(METRICS_MAX_BYTES + 1)
    if len(raw) > METRICS_MAX_BYTES:
        raise too_large(shown)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise InputError("not valid UTF-8", shown, before.count(b"\n") + 1, column) from None
    del raw
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError("file holds a NUL byte (binary, not text)", shown, line)
    return text


def _parses(line: str) -> bool:
    """Whether ``line`` is one JSON value by itself (a JSON Lines record)."""
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _line_record(line: str, number: int, shown: str) -> Record:
    """One JSON Lines record; positions are line ``number``, column within the line."""
    data = _loads(line, shown, number, prefix="not JSON or JSON Lines: ")
    return Record(data, _locator(line, 0, number))


def _document_records(text: str, shown: str) -> Iterator[Record]:
    """One JSON document: a top-level array item by item, anything else whole."""
    start = _skip(text, 0)
    if start >= len(text):
        raise InputError("file is empty (no JSON document)", shown)
    if text[start] != "[":
        yield Record(_loads(text, shown), _locator(text, 0))
        return
    i = _skip(text, start + 1)
    if i < len(text) and text[i] == "]":
        _expect_end(text, i + 1, shown)
        return
    while True:
        try:
            item, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"JSON syntax error: {exc.msg}", shown, exc.lineno, exc.colno
            ) from None
        except ValueError:
            raise InputError(
                "a JSON integer has too many digits", shown, _line_of(text, i)
            ) from None
        except RecursionError:
            raise InputError("JSON nesting is too deep", shown, _line_of(text, i)) from None
        yield Record(item, _locator(text, i))
        i = _skip(text, end)
        if i < len(text) and text[i] == "]":
            _expect_end(text, i + 1, shown)
            return
        if i >= len(text) or text[i] != ",":
            raise _syntax(text, i, "Expecting ',' delimiter", shown)
        i = _skip(text, i + 1)


def _expect_end(text: str, i: int, shown: str) -> None:
    i = _skip(text, i)
    if i < len(text):
        raise _syntax(text, i, "Extra data", shown)


def _syntax(text: str, offset: int, message: str, shown: str) -> InputError:
    span = _span_in_text(text, offset)
    return InputError(f"JSON syntax error: {message}", shown, span.line, span.column)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


#: Bytes of a JSON array decoded at a time.
ARRAY_CHUNK = 1024 * 1024


class _More(Exception):
    """The item may go on past the text read so far."""


class _Text:
    """The file's text not yet consumed, from (``line``, ``column``) on."""

    def __init__(
        self, handle: BinaryIO, shown: str, read_all: Callable[[BinaryIO, str], str]
    ) -> None:
        self.handle, self.shown, self.read_all = handle, shown, read_all
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf = ""
        self.eof = False
        self.total = 0
        self.line, self.column = 1, 1
        self._mark = (0, 1, 1)  # (offset, line, column) last located

    def more(self, size: int = ARRAY_CHUNK) -> bool:
        """Read on (False at the end of the file)."""
        if self.eof:
            return False
        raw = self.handle.read(size)
        self.total += len(raw)
        if self.total > METRICS_MAX_BYTES:
            raise too_large(self.shown)
        try:
            text = self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError:
            text = "\x00"
        if "\x00" in text:  # the whole-text reader's own message, line and column
            self.handle.seek(0)
            self.read_all(self.handle, self.shown)
            raise InputError("not valid UTF-8 or holds a NUL byte", self.shown)
        self.eof = not raw
        self.buf += text
        return True

    def at(self, offset: int) -> tuple[int, int]:
        """The line and column of ``buf[offset]`` in the file."""
        known, line, column = self._mark if offset >= self._mark[0] else (0, self.line, self.column)
        newlines = self.buf.count("\n", known, offset)
        if newlines:
            line += newlines
            column = offset - self.buf.rfind("\n", known, offset)
        else:
            column += offset - known
        self._mark = (offset, line, column)
        return line, column

    def trim(self, offset: int) -> int:
        """Drop the text before ``offset`` once it is most of the buffer; the offset
        of the same place afterwards."""
        if offset <= ARRAY_CHUNK or offset <= len(self.buf) // 2:
            return offset
        self.line, self.column = self.at(offset)
        self.buf = self.buf[offset:]
        self._mark = (0, self.line, self.column)
        return 0

    def skip(self, i: int) -> int:
        """The first non-blank offset at or after ``i`` (reading on as needed)."""
        while True:
            i = _skip(self.buf, i)
            if i < len(self.buf) or not self.more():
                return i

    def syntax(self, offset: int, message: str) -> InputError:
        line, column = self.at(offset)
        return InputError(f"JSON syntax error: {message}", self.shown, line, column)


def array_records(
    handle: BinaryIO, shown: str, read_all: Callable[[BinaryIO, str], str]
) -> Iterator[Record]:
    """The items of the JSON array in ``handle`` (at its start), one record each
    (issue 25: a TensorRT-LLM iteration-stats array of 100 MB took 234 MB read whole).
    The file is decoded :data:`ARRAY_CHUNK` bytes at a time and one item parsed at a time
    (``JSONDecoder.raw_decode``), only the text not yet consumed kept; each record's
    positions come from its own text and start (:class:`Locator`), and its errors are
    the whole-text reader's (a syntax error reads on to where the whole text shows it;
    a file not UTF-8 or holding a NUL byte is read whole again to report it as before).

    Raises:
        InputError: as the whole-text reader (:func:`.json_records.read_records`).
    """
    text = _Text(handle, shown, read_all)
    i = text.skip(0)
    if i >= len(text.buf) or text.buf[i] != "[":  # pragma: no cover - the caller checked
        raise text.syntax(i, "Expecting value")
    i = text.skip(i + 1)
    if i < len(text.buf) and text.buf[i] == "]":
        _array_end(text, i + 1)
        return
    while True:
        item, end = _item(text, i)
        line, column = text.at(i)
        yield Record(item, Locator(text.buf[i:end], 0, line, column))
        i = text.skip(end)
        if i < len(text.buf) and text.buf[i] == "]":
            _array_end(text, i + 1)
            return
        if i >= len(text.buf) or text.buf[i] != ",":
            raise text.syntax(i, "Expecting ',' delimiter")
        i = text.trim(text.skip(i + 1))


def _item(text: _Text, i: int) -> tuple[object, int]:
    """The item at ``text.buf[i]`` and the offset after it (reading on while it may
    continue past the text read)."""
    size = ARRAY_CHUNK
    while True:
        try:
            item, end = _DECODER.raw_decode(text.buf, i)
            if end >= len(text.buf) and not text.eof:
                raise _More
            return item, end
        except (json.JSONDecodeError, _More) as exc:
            if text.more(size):
                size = min(size * 2, METRICS_MAX_BYTES)
                continue
            if isinstance(exc, json.JSONDecodeError):
                raise text.syntax(exc.pos, exc.msg) from None
            raise  # pragma: no cover - at the end of the file raw_decode's answer stands
        except ValueError:
            raise InputError(
                "a JSON integer has too many digits", text.shown, text.at(i)[0]
            ) from None
        except RecursionError:
            raise InputError("JSON nesting is too deep", text.shown, text.at(i)[0]) from None


def _array_end(text: _Text, i: int) -> None:
    while True:
        i = _skip(text.buf, i)
        if i < len(text.buf):
            raise text.syntax(i, "Extra data")
        i = text.trim(i)
        if not text.more():
            return

