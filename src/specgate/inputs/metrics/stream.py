"""Read referenced metrics files and logs of real size (DESIGN.md §7, §10).

Server logs grow to tens of megabytes in a few hours and a Prometheus scrape of a
busy server holds hundreds of thousands of unrelated series. Line formats are
therefore read as a stream in chunks with a *literal pre-filter*: only lines that
contain one of the format's labels (``SpecDecoding metrics``, ``accept len``,
``spec_decode`` …) are decoded and kept; every other line becomes an empty line,
so line numbers (and every span a reader computes) stay those of the file while
memory stays proportional to the lines kept.

Limits: a referenced metrics file or log may be up to :data:`METRICS_MAX_BYTES`
(256 MiB), separate from the 1 MiB limit of claims and config files; a single
line may be up to :data:`MAX_LINE_BYTES`. Kept lines must be UTF-8 without NUL
bytes; lines that are filtered out are never decoded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from specgate.errors import InputError

#: The size limit of a referenced metrics file or log (bytes): 256 MiB.
METRICS_MAX_BYTES = 256 * 1024 * 1024
#: The longest line a streamed file may hold (bytes).
MAX_LINE_BYTES = 16 * 1024 * 1024
_CHUNK = 4 * 1024 * 1024
_MIB = 1024 * 1024


def _check(path: Path, shown: str) -> None:
    """The same checks as for claims files (exists, regular, readable), and the size."""
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
    if size > METRICS_MAX_BYTES:
        raise _too_large(shown)


def _too_large(shown: str) -> InputError:
    return InputError(
        f"file is larger than {METRICS_MAX_BYTES // _MIB} MiB (the limit for referenced "
        "metrics files and logs)",
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
    _check(path, shown)
    pattern = re.compile(b"|".join(re.escape(n.encode("utf-8")) for n in needles))
    parts: list[str] = []
    line = 1  # the line number where the unprocessed buffer starts
    emitted = 1  # the line number the output has reached
    total = 0
    buffer = b""
    try:
        with path.open("rb") as handle:
            while True:
                chunk = handle.read(_CHUNK)
                total += len(chunk)
                if total > METRICS_MAX_BYTES:
                    raise _too_large(shown)
                data = buffer + chunk
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                if chunk and cut == 0:
                    if len(data) > MAX_LINE_BYTES:
                        raise _long_line(shown, line)
                    buffer = data
                    continue
                block, buffer = data[:cut], data[cut:]
                emitted = _keep(block, (line, emitted), pattern, parts, shown)
                line += block.count(b"\n")
                if not chunk:
                    break
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", shown) from None
    parts.append("\n" * max(0, line - emitted))
    return "".join(parts)


def _keep(
    block: bytes,
    where: tuple[int, int],
    pattern: re.Pattern[bytes],
    parts: list[str],
    shown: str,
) -> int:
    """Append the matching lines of ``block`` to ``parts``, padded with newlines to
    keep numbering. ``where`` is (the line ``block`` starts at, the line the output
    has reached); returns the line the output reached. Linear in ``block``: newlines
    are counted once, from the previous kept line on."""
    current, emitted = where
    counted = 0
    position = 0
    while position < len(block):
        match = pattern.search(block, position)
        if match is None:
            break
        start = block.rfind(b"\n", 0, match.start()) + 1
        end = block.find(b"\n", match.end())
        end = len(block) if end < 0 else end
        current += block.count(b"\n", counted, start)
        counted = start
        raw = block[start:end]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > MAX_LINE_BYTES:
            raise _long_line(shown, current)
        try:
            text = raw.decode("utf-8-sig" if current == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("not valid UTF-8", shown, current, exc.start + 1) from None
        if "\x00" in text:
            raise InputError("file holds a NUL byte (binary, not text)", shown, current)
        parts.append("\n" * (current - emitted))
        parts.append(text)
        emitted = current
        position = end + 1
    return emitted


def read_whole(path: Path, shown: str) -> str:
    """The whole text of a referenced metrics file (JSON formats), up to
    :data:`METRICS_MAX_BYTES`.

    Raises:
        InputError: as :func:`specgate.loader.read_text`, with the metrics limit.
    """
    from specgate.loader import read_text

    _check(path, shown)
    return read_text(path, shown, limit=METRICS_MAX_BYTES)
