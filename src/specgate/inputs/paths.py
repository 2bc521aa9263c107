"""Where a path written in a claims file leads (docs/claims-file.md#referenced-files).

Paths are relative to the claims file's folder and must stay inside the
repository that holds it (the nearest folder upward with ``.git``; the claims
file's folder when there is none), symlinks resolved, and must exist.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath

from specgate.core.errors import InputError


def resolve_reference(
    relative: str,
    *,
    what: str,
    base_dir: Path,
    shown_base: str,
    root: Path | None,
    fail: Callable[[str], InputError],
) -> tuple[Path, str]:
    """The file ``relative`` names and its path as shown to users.

    Args:
        relative: the path as written in the claims file.
        what: the key's name, for messages (``"engine_config"``).
        base_dir: the claims file's folder; ``shown_base`` is that folder as shown.
        root: the repository root; ``None`` means
            :func:`~specgate.core.paths.repository_top` of ``base_dir``.
        fail: builds the error, pointing at the key in the claims file.

    Raises:
        InputError: an absolute path, one that leaves the repository, or one that
            does not exist.
    """
    if PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute():
        raise fail(f"{what} must be relative to the claims file, not {relative!r}")
    from specgate.core.paths import PathEscape, PathProblem, confined, repository_top

    try:
        top = root if root is not None else repository_top(base_dir)
        target = confined(base_dir / relative, top=top)
    except PathEscape:
        raise fail(f"{what} {relative!r} leaves the repository") from None
    except PathProblem as problem:
        missing = str(problem) == "no such file"
        reason = "does not exist" if missing else f"cannot be read: {problem}"
        raise fail(f"{what} {relative!r} {reason}") from None
    shown = posixpath.normpath(posixpath.join(shown_base, relative) if shown_base else relative)
    return target, shown
