"""Read referenced metrics files and logs of real size (docs/engines.md#metrics-formats,
docs/engines.md#versions).

Server logs grow to tens of megabytes in a few hours and a Prometheus scrape of a
busy server holds hundreds of thousands of unrelated series. Line formats are
therefore read as a stream in chunks with a *literal pre-filter*: only lines that
contain one of the format's labels (``SpecDecoding metrics``, ``accept len``,
``spec_decode`` …) are decoded and kept; every other line becomes an empty line,
so line numbers (and every span a reader computes) stay those of the file while
memory stays proportional to the lines kept.

Limits: a streamed metrics file or log may be up to :data:`METRICS_MAX_BYTES`
(256 MiB), separate from the 1 MiB limit of claims and config files; a single
line may be up to :data:`MAX_LINE_BYTES`; the kept lines and the line breaks that stand
for the others may be up to :data:`MAX_KEPT_BYTES` together, so memory is bounded by
that, not by the file (hostile review r4, defect 7: a 250 MiB log of one matching line
took 1.23 GB). Kept lines must be UTF-8 without NUL
bytes; lines that are filtered out are never decoded. JSON and JSON Lines formats
have the same limits and are streamed record by record (:mod:`.json_records`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from specgate.core.errors import InputError

#: The size limit of a referenced metrics file or log (bytes): 256 MiB.
METRICS_MAX_BYTES = 256 * 1024 * 1024
#: The longest line a streamed file may hold (bytes).
MAX_LINE_BYTES = 16 * 1024 * 1024
#: What a streamed file may keep: the lines holding a label plus one line break per
#: other line (bytes). A vLLM V1 interval line is about 230 bytes, so this is some
#: 145,000 intervals, 17 days of vLLM's default 10-second logging.
MAX_KEPT_BYTES = 32 * 1024 * 1024
_CHUNK = 4 * 1024 * 1024
_MIB = 1024 * 1024


class _Kept(bytearray):
    """The kept text, one buffer (no list of slices joined at the end), refused past
    :data:`MAX_KEPT_BYTES` at the line that passes it."""

    def add(self, data: bytes | bytearray | memoryview, shown: str, line: int) -> None:
        if len(self) + len(data) > MAX_KEPT_BYTES:
            raise InputError(
                f"more than {MAX_KEPT_BYTES // _MIB} MiB of lines with the format's labels "
                "(and line breaks for the others) by this line; specgate keeps at most that "
                "much of one file: point the metrics path at the measurement's window",
                shown,
                line,
            )
        self += data


def check_file(path: Path, shown: str, *, sized: bool = True) -> None:
    """The same checks as for claims files (exists, regular, readable), and the size
    unless not ``sized`` (a log read with running sums: :mod:`.vllm_stream`)."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise InputError("not a regular file (a FIFO, socket or device)", shown)
        if path.is_dir():
            raise InputError("is a folder, not a file", shown)
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError("no such file", shown) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", shown) from None
    if sized and size > METRICS_MAX_BYTES:
        raise too_large(shown)


def too_large(shown: str) -> InputError:
    """The error for a metrics file over :data:`METRICS_MAX_BYTES`."""
    return InputError(
        f"file is larger than {METRICS_MAX_BYTES // _MIB} MiB "
        "(the limit for referenced metrics files and logs)",
        shown,
    )


def _long_line(shown: str, line: int) -> InputError:
    return InputError(f"a line longer than {MAX_LINE_BYTES // _MIB} MiB", shown, line)


def read_filtered(path: Path, shown: str, needles: Iterable[str]) -> str:
    """The text of ``path`` with only the lines holding one of ``needles`` (literal,
    case-sensitive); every other line is kept as an empty line.

    Args:
        path: the metrics file or log.
        shown: its name in messages.
        needles: literal labels; a line is kept when it contains any of them.

    Returns:
        text with the file's line numbering (``"\\n"`` separated).

    Raises:
        InputError: missing, unreadable, over :data:`METRICS_MAX_BYTES`, a line over
            :data:`MAX_LINE_BYTES`, or a kept line that is not UTF-8 or holds NUL.
    """
    check_file(path, shown)
    literals = tuple(n.encode("utf-8") for n in needles)
    out = _Kept()
    at = (1, 1)  # (the line the next byte starts, the line the output has reached)
    total = 0
    carry = b""  # a line cut by the chunk boundary
    chunk = bytearray(_CHUNK)  # reused: no new allocation per chunk
    try:
        with path.open("rb") as handle:
            while True:
                size = handle.readinto(chunk)
                total += size
                if total > METRICS_MAX_BYTES:
                    raise too_large(shown)
                if size == 0:
                    if carry:
                        at = _keep(carry, (0, len(carry)), at, literals, out, shown=shown)
                    break
                first = chunk.find(b"\n", 0, size)
                if first < 0:
                    carry += chunk[:size]
                    if len(carry) > MAX_LINE_BYTES:
                        raise _long_line(shown, at[0])
                    continue
                head = carry + chunk[: first + 1]
                at = _keep(head, (0, len(head)), at, literals, out, shown=shown)
                last = chunk.rfind(b"\n", 0, size) + 1
                at = _keep(chunk, (first + 1, last), at, literals, out, shown=shown)
                carry = bytes(chunk[last:size])
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", shown) from None
    line, emitted = at
    out.add(b"\n" * max(0, line - emitted), shown, line)
    kept = bytes(out)
    del out
    return _decode(kept, shown)


def _decode(kept: bytes, shown: str) -> str:
    """The kept lines as text; errors at their line (the numbering is the file's)."""
    try:
        text = kept.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = kept[: exc.start]
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise InputError("not valid UTF-8", shown, before.count(b"\n") + 1, column) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError("file holds a NUL byte (binary, not text)", shown, line)
    return text.replace("\r\n", "\n") if "\r" in text else text


def _keep(
    block: bytes | bytearray,
    bounds: tuple[int, int],
    at: tuple[int, int],
    needles: tuple[bytes, ...],
    out: _Kept,
    *,
    shown: str,
) -> tuple[int, int]:
    """Append the lines of ``block[lo:hi]`` (whole lines) holding a needle to ``out``,
    padded with newlines to keep numbering. ``at`` is (the line ``lo`` starts, the
    line the output has reached); returns both after ``hi``. Linear in the block:
    each needle is searched forward once (``bytes.find``), newlines are counted
    once, and nothing outside kept lines is copied."""
    lo, hi = bounds
    find, rfind, count = block.find, block.rfind, block.count
    view = memoryview(block)

    def append(data: bytes | memoryview) -> None:
        out.add(data, shown, current)

    hits = [(needle, found) for needle in needles if (found := find(needle, lo, hi)) >= 0]
    current, emitted = at
    counted = lo
    if len(hits) == 1:  # the common case: one label, its lines in order, one pass
        needle, found = hits[0]
        while found >= 0:
            start = max(rfind(b"\n", lo, found) + 1, lo)
            end = find(b"\n", found, hi)
            end = hi if end < 0 else end
            current += count(b"\n", counted, start)
            counted = start
            if end - start > MAX_LINE_BYTES:
                raise _long_line(shown, current)
            append(b"\n" * (current - emitted))
            append(view[start:end])
            emitted = current
            found = find(needle, end, hi)
        return current + count(b"\n", counted, hi), emitted
    spans: set[tuple[int, int]] = set()
    for needle, first in hits:
        found = first
        while found >= 0:
            start = max(rfind(b"\n", lo, found) + 1, lo)
            end = find(b"\n", found, hi)
            end = hi if end < 0 else end
            spans.add((start, end))
            found = find(needle, end, hi)
    for start, end in sorted(spans):
        current += count(b"\n", counted, start)
        counted = start
        if end - start > MAX_LINE_BYTES:
            raise _long_line(shown, current)
        append(b"\n" * (current - emitted))
        append(view[start:end])
        emitted = current
    return current + count(b"\n", counted, hi), emitted
