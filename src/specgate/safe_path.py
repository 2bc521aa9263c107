"""Resolve paths taken from a hostile repository without crashing.

A checked repository can hold a symlink loop, a name longer than the file
system allows, a symlink out of the repository, and a claims file can name a
path with a NUL byte. :func:`resolve` turns each into a one-line reason
(:class:`PathProblem`) that the caller reports as an input error for that file,
so the run goes on with the other files. Python < 3.13 raises ``RuntimeError``
for a loop even in non-strict ``Path.resolve``; 3.13 raises ``OSError``
(``ELOOP``); an embedded NUL raises ``ValueError``.
"""

from __future__ import annotations

import errno
import os
import stat
from functools import lru_cache
from pathlib import Path


class PathProblem(Exception):
    """Why a path cannot be used; ``str()`` is a one-line reason."""


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ValueError):
        return "the path holds a NUL byte"
    if isinstance(exc, RuntimeError):
        return "symlink loop"
    if isinstance(exc, OSError):
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        if exc.errno == errno.ENAMETOOLONG:
            return "file name too long"
        if exc.errno == errno.ENOENT:
            return "no such file"
        return f"cannot resolve: {exc.strerror or exc}"
    return f"cannot resolve: {exc}"  # pragma: no cover - only the three above are caught


def resolve(path: Path, *, strict: bool = False) -> Path:
    """``path`` made absolute with symlinks resolved.

    Raises:
        PathProblem: a loop, an over-long name, a NUL byte, or (``strict``) a
            missing file or dangling symlink.
    """
    try:
        return path.resolve(strict=strict)
    except (OSError, RuntimeError, ValueError) as exc:
        raise PathProblem(_reason(exc)) from None


def repository_top(folder: Path) -> Path:
    """The nearest folder at or above ``folder`` (resolved) holding ``.git``,
    else ``folder`` itself: what a claims or referenced file must stay inside.

    Raises:
        PathProblem: ``folder`` cannot be resolved.
    """
    return _top(resolve(folder))


@lru_cache(maxsize=4096)
def _top(here: Path) -> Path:
    # Cached per folder: a run over thousands of files in a few folders walks up once.
    for candidate in (here, *here.parents):
        try:
            if (candidate / ".git").exists():
                return candidate
        except (OSError, ValueError):  # pragma: no cover - unreadable parent
            continue
    return here


@lru_cache(maxsize=4096)
def _lexical_top(folder: Path) -> Path:
    """The repository holding ``folder`` as written (symlinked folders not followed, so
    ``repo/link-to-elsewhere/x`` belongs to ``repo``), resolved; without one, the
    folder itself, resolved. Cached per folder (one walk up for a thousand files)."""
    for candidate in (folder, *folder.parents):
        try:
            if os.path.lexists(candidate / ".git"):
                return resolve(candidate)
        except (OSError, ValueError):  # pragma: no cover - unreadable parent
            continue
    return resolve(folder)


@lru_cache(maxsize=4096)
def real_folder(folder: Path) -> Path:
    """``folder`` (absolute) with symlinks resolved, cached per run of folders.

    Raises:
        PathProblem: see :func:`resolve`.
    """
    return resolve(folder)


def confined(path: Path) -> Path:
    """The file ``path`` leads to, which must lie inside the repository holding
    ``path`` itself (the link's repository, not the target's).

    A plain file costs one ``lstat`` (its folder's resolution is cached); a symlink
    is resolved in full.

    Raises:
        PathProblem: unresolvable (see :func:`resolve`), missing, or leading out of
            the repository (a symlink to ``/etc/passwd``).
    """
    text = os.path.abspath(path)
    try:
        info = os.lstat(text)
    except (OSError, ValueError) as exc:
        raise PathProblem(_reason(exc)) from None
    folder, name = os.path.split(text)
    if stat.S_ISLNK(info.st_mode):
        target = resolve(Path(text), strict=True)
        top = _lexical_top(Path(folder))
    else:
        real, top, inside = _folder_of(folder)
        target = real / name
        if inside:  # a plain file in a folder inside the repository is inside it
            return target
    if not target.is_relative_to(top):
        raise PathProblem("is a symlink that leads out of the repository; not read")
    return target


@lru_cache(maxsize=4096)
def _folder_of(folder: str) -> tuple[Path, Path, bool]:
    """``folder`` resolved, the repository holding it as written, and whether the
    first lies inside the second; once per folder of a run, not once per file.

    Raises:
        PathProblem: see :func:`resolve` (not cached: raised again on each call).
    """
    lexical = Path(folder)
    real = real_folder(lexical)
    top = _lexical_top(lexical)
    return real, top, real.is_relative_to(top)
