"""Writing a report or an edited claims file to a path the user named.

A regular file (or a path that does not exist yet) is replaced atomically: the text
goes to a temporary file beside it, which is renamed over it, so a reader never sees
half a report. The file keeps its permission bits (a new one gets ``0o666`` less the
umask, as the shell's ``>`` would); a symbolic link is followed and the file it points
at is replaced, the link stays. Anything else — a character device such as
``/dev/stdout`` or ``/dev/null``, a FIFO, ``/proc/self/fd/N`` — is written in place:
there is nothing to replace, and renaming over it would destroy it.
"""

import contextlib
import os
import stat
import tempfile


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
