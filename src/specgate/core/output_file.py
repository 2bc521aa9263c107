"""Writing a report or an edited claims file to a path the user named.

A regular file (or a path that does not exist yet) is replaced atomically: the text
goes to a temporary file beside it, which is renamed over it, so a reader never sees
half a report. The file keeps its permission bits (a new one gets ``0o666`` less the
umask, as the shell's ``>`` would); a symbolic link is followed and the file it points
at is replaced, the link stays. Anything else — a character device such as
``/dev/stdout`` or ``/dev/null``, a FIFO, ``/proc/self/fd/N`` — is written in place:
there is nothing to replace, and renaming over it would destroy it.

An edit of a file in place (``measure --write``) reads and replaces it under an
exclusive lock (:func:`locked_edit`), and refuses when the file changed meanwhile.
"""

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import BinaryIO


def write_text(path: str, text: str, *, errors: str = "strict", newline: str = "\n") -> None:
    """Write ``text`` (UTF-8) to ``path`` as the module docstring says.

    ``errors`` and ``newline`` are :func:`open`'s (``newline=""`` keeps ``text``'s own
    line endings).

    Raises:
        OSError: the folder is missing or not writable, the disk is full, or the
            target cannot be opened; the target is left as it was when the failure
            came before the rename.
    """
    try:
        mode: int | None = os.stat(path).st_mode  # through links, /proc/self/fd/N too
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(path, "w", encoding="utf-8", errors=errors, newline=newline) as out:
            out.write(text)
        return
    real = os.path.realpath(path)
    folder, name = os.path.split(real)
    handle, temp = tempfile.mkstemp(dir=folder or ".", prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors=errors, newline=newline) as out:
            out.write(text)
        os.chmod(temp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(temp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _umask() -> int:
    """The process's umask (read by setting it and putting it back: specgate runs one
    thread when it writes its outputs)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class FileChanged(Exception):
    """The file changed between being read and being replaced; ``str()`` says how."""


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


@contextlib.contextmanager
def exclusive(handle: BinaryIO) -> Iterator[None]:
    """Hold an exclusive lock on ``handle``'s file: ``fcntl.flock`` on POSIX; on
    Windows ``msvcrt.locking`` of its first byte (taken by every specgate process
    writing the file, which is what the lock serialises)."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows runners
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
        try:
            yield
        finally:
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def locked_edit(path: str) -> Iterator[tuple[bytes, Callable[[str, str], None]]]:
    """Read the regular file ``path`` and replace it, under one exclusive lock held
    from the read to the rename.

    Yields ``(content, replace)``: ``replace(text, newline)`` writes ``text`` in
    place of the file (as :func:`write_text`) unless it changed since it was read.
    Two editors of one file take turns: the second, woken when the first has renamed
    its version into place, finds that the file it locked is no longer the one at
    ``path`` and is refused, so neither edit is lost silently.

    Raises:
        FileChanged: the file at ``path`` is not the one read (replaced, or written
            by an editor that does not lock) — raised by ``replace`` or on entry.
        OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as handle, exclusive(handle):
        held = os.fstat(handle.fileno())
        if _identity(held) != _identity(os.stat(path)):
            raise FileChanged("another run replaced it while this one waited for it")
        content = handle.read()

        def replace(text: str, newline: str) -> None:
            now = _identity(os.stat(path))
            if now != _identity(held) or now != _identity(os.fstat(handle.fileno())):
                raise FileChanged("it was changed by another program while being edited")
            write_text(path, text, newline=newline)

        yield content, replace
