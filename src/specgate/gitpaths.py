"""Paths relative to the git top-level, for ``file=`` in annotations and SARIF URIs.

GitHub resolves a relative ``file`` against the repository root, not the step's
working directory (actions/runner#765), so annotation paths are computed from
the top-level of the repository that holds the file: the nearest folder upward
with a ``.git`` entry (a folder, or a file for worktrees and submodules).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1024)
def _top_level(folder: str) -> str | None:
    current = Path(folder)
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return None


def repo_relative(path: str | Path) -> str | None:
    """``path`` relative to its git top-level with ``/`` separators and no ``./``;
    ``None`` when the file is in no git repository."""
    # The folder is resolved, the name is not: a symlinked claims file is annotated
    # where it stands (its target may be outside the repository).
    given = Path(os.path.abspath(path))
    try:
        absolute = Path(os.path.realpath(given.parent)) / given.name
    except (OSError, ValueError):
        return None
    top = _top_level(str(absolute.parent))
    if top is None:
        return None
    return absolute.relative_to(top).as_posix()
