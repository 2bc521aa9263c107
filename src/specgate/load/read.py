"""Read a claims (or referenced) file from disk into a :class:`Document`.

The reader enforces the input limits before parsing: at most ``MAX_BYTES``
(1 MiB), UTF-8 (a BOM is accepted), and picks the parser by suffix: ``.json``
is JSON, anything else YAML. Every failure is an :class:`InputError` naming the
file (and line when known).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from specgate.core.errors import InputError
from specgate.core.revision_tree import bring, redirected
from specgate.load.document import Document

MAX_BYTES = 1024 * 1024

#: The sets of files being recorded (:func:`recording`), innermost last: a plain list
#: rather than a ContextVar (and a class rather than ``contextlib.contextmanager``),
#: whose imports every check would pay; no reader runs in another thread.
_RECORDING: list[set[Path]] = []


class _Recording:
    """The ``with`` block of :func:`recording`; ``as`` gives the set being filled."""

    __slots__ = ()

    def __enter__(self) -> set[Path]:
        opened: set[Path] = set()
        _RECORDING.append(opened)
        return opened

    def __exit__(self, *exc: object) -> None:
        _RECORDING.pop()


def recording() -> _Recording:
    """Record every file :func:`read_text` is asked to open meanwhile (absolute, as
    asked, whether or not it exists: a file a reader looked for counts too). The
    change gate's source of truth for which files a deployment reads."""
    return _Recording()


def read_text(path: Path, shown: str, limit: int = MAX_BYTES) -> str:
    """Read ``path`` as UTF-8 text of at most ``limit`` bytes.

    Args:
        path: the file to read.
        shown: the name to use in messages.
        limit: the size limit in bytes.

    Raises:
        InputError: missing, a folder, unreadable, over the limit, not UTF-8.
    """
    for opened in _RECORDING:
        opened.add(Path(os.path.abspath(path)))
    refused = bring(path)  # a base revision's file, brought to disk when one is read
    if refused is not None:
        raise InputError(refused, shown)
    staged = redirected(path)  # --staged: the index's copy where the work tree differs
    if isinstance(staged, str):
        raise InputError(staged, shown)
    if staged is not None:
        path = staged
    try:
        try:
            mode = os.stat(path).st_mode  # one stat, not exists + is_dir + is_file
        except (OSError, ValueError):
            mode = None  # open() below raises the error this file is reported with
        if mode is not None and not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
            # Opening a FIFO would block the run: refused before it is opened.
            raise InputError("not a regular file (a FIFO, socket or device)", shown)
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError("no such file", shown) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", shown) from None
    except OSError as exc:
        from specgate.core.paths import PathProblem, resolve

        try:
            resolve(path)
        except PathProblem as problem:
            raise InputError(str(problem), shown) from None
        raise InputError(f"cannot read: {exc.strerror or exc}", shown) from None
    except ValueError:
        raise InputError("the path holds a NUL byte", shown) from None
    return decode(raw, shown, limit)


def decode(raw: bytes, shown: str, limit: int = MAX_BYTES) -> str:
    """``raw`` as UTF-8 text (a BOM is accepted) under the input limits.

    Raises:
        InputError: over ``limit`` bytes, not UTF-8 (with line and column), a NUL byte.
    """
    if len(raw) > limit:
        raise InputError(f"file is larger than {limit // 1024} KiB", shown)
    # What "utf-8-sig" does (one leading BOM dropped, the rest UTF-8, an error's
    # offsets counted after the BOM), without importing its codec module.
    body = raw[3:] if raw[:3] == b"\xef\xbb\xbf" else raw
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise InputError("not valid UTF-8", shown, line, column) from None
    if "\x00" in text:
        raise InputError("file holds a NUL byte (binary, not text)", shown)
    return text


def load_document(path: Path, shown: str) -> Document:
    """Read and parse ``path``; ``.json`` as JSON, everything else as YAML.

    Raises:
        InputError: any read or parse failure.
    """
    text = read_text(path, shown)
    return parse_text(text, shown, json_syntax=path.suffix.lower() == ".json")


def parse_text(text: str, shown: str, *, json_syntax: bool) -> Document:
    """Parse already-read ``text`` (JSON when ``json_syntax``, else YAML)."""
    if json_syntax:
        from specgate.load.json_loader import load_json

        document = load_json(text, shown)
    else:
        from specgate.load.yaml_loader import load_yaml

        document = load_yaml(text, shown)
    return document._replace(text=text)
