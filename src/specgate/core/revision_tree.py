"""A base revision's tree as the file system the readers read (docs/change-gate.md#baseline).

``check --baseline REF`` (and the hook's ``--staged``) reads each claims file as it was
at REF in a private folder laid out as the repository. Which files a deployment reads
is decided by the readers themselves as they go — the Compose ``.env`` beside a Compose
file, an options file a launch command names (``--config``, ``--extra_llm_api_options``),
a sourced file, an override, a Helm values file — so no list kept here could stay in
step with them. Instead every read of a file goes through the one confinement check
(:func:`specgate.core.paths.confined`) and the one text reader
(:func:`specgate.load.read.read_text`); while a :class:`RevisionTree` is active (the
context manager :func:`reading`), each of them first asks it for the path, and a file
that REF's tree holds is brought into the private folder before the reader looks. The
head and the base are then read by the same readers through the same calls; only the
file system under them differs.

This module owns the hook only; the tree itself (git) is the change gate's
(:mod:`specgate.change.baseline`), which the layers below may not import.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only mypy reads the protocols; a Protocol class costs every start-up
    from collections.abc import Callable
    from typing import Protocol

    class RevisionTree(Protocol):
        """A revision's files, brought to disk under :attr:`root` on demand."""

        @property
        def root(self) -> Path:
            """The private folder standing for the repository's top (resolved)."""

        def bring(self, rel: str) -> str | None:
            """Bring the file ``rel`` (repository-relative, ``/``) of the revision to
            ``root / rel`` if the revision holds it and it is not there yet.

            Returns:
                ``None`` when the path is there now or the revision does not hold it (the
                reader then says "no such file" as at the head); a one-line reason when the
                revision holds something there that is not read (a symbolic link out of
                the tree, a loop, the file budget spent).
            """

        def bring_folder(self, rel: str, patterns: tuple[str, ...]) -> None:
            """Bring the files directly in the folder ``rel`` whose names match one of the
            ``fnmatch`` ``patterns`` (a reader listing a folder, e.g. the requirement files
            beside an engine config)."""

    class Overlay(Protocol):
        """Files read from elsewhere than the work tree: under ``check --staged``, the
        index (docs/change-gate.md#staged), where the work tree differs from it."""

        def redirect(self, path: Path | str) -> Path | str | None:
            """The file a reader reads instead of ``path``: a private copy of the index's
            content, a one-line reason it is not read (``"no such file in the index …"``),
            or ``None``: the work tree holds it as the index does."""


#: The trees being read through, innermost last: a plain list rather than a ContextVar
#: (and a class rather than ``contextlib.contextmanager``), whose imports every check
#: would pay; no reader runs in another thread (as ``specgate.core.limits._BUDGET``).
_ACTIVE: list[RevisionTree] = []


class _Reading:
    """The ``with`` block of :func:`reading`."""

    __slots__ = ("tree",)

    def __init__(self, tree: RevisionTree) -> None:
        self.tree = tree

    def __enter__(self) -> None:
        _ACTIVE.append(self.tree)

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.pop()


def reading(tree: RevisionTree) -> _Reading:
    """Read through ``tree`` inside the ``with`` block."""
    return _Reading(tree)


def _relative(path: Path | str, root: Path) -> str | None:
    """``path`` relative to ``root`` with ``/`` (lexically: ``..`` applied as written,
    symbolic links left to the confinement check), ``None`` when outside."""
    absolute = os.path.normpath(os.path.abspath(path))
    base = str(root)
    if absolute == base or not absolute.startswith(base + os.sep):
        return None
    rel = absolute[len(base) + 1 :].replace(os.sep, "/")
    if any(part.casefold() == ".git" for part in rel.split("/")):
        return None  # git's own data is never the revision's content
    return rel


def bring(path: Path | str) -> str | None:
    """Before ``path`` is looked at: when a revision tree is active and ``path`` lies
    in its folder, bring the revision's file there. Returns the tree's refusal reason
    (see :meth:`RevisionTree.bring`), ``None`` otherwise (no tree: nothing done)."""
    if not _ACTIVE:
        return None
    tree = _ACTIVE[-1]
    rel = _relative(path, tree.root)
    return None if rel is None else tree.bring(rel)


def bring_folder(folder: Path | str, patterns: tuple[str, ...]) -> None:
    """Before ``folder`` is listed: bring the active revision's files in it whose names
    match ``patterns``."""
    if not _ACTIVE:
        return
    tree = _ACTIVE[-1]
    rel = _relative(folder, tree.root)
    if rel is not None or os.path.normpath(os.path.abspath(folder)) == str(tree.root):
        tree.bring_folder(rel or "", patterns)


#: The overlays being read through, innermost last (as :data:`_ACTIVE`).
_OVERLAYS: list[Overlay] = []


class _Overlaying:
    """The ``with`` block of :func:`overlaying`."""

    __slots__ = ("overlay",)

    def __init__(self, overlay: Overlay) -> None:
        self.overlay = overlay

    def __enter__(self) -> None:
        _OVERLAYS.append(self.overlay)

    def __exit__(self, *exc: object) -> None:
        _OVERLAYS.pop()


def overlaying(overlay: Overlay) -> _Overlaying:
    """Read through ``overlay`` inside the ``with`` block."""
    return _Overlaying(overlay)


def redirected(path: Path | str) -> Path | str | None:
    """The active overlay's answer for ``path`` (see :meth:`Overlay.redirect`); ``None``
    when none is active."""
    return _OVERLAYS[-1].redirect(path) if _OVERLAYS else None


#: The change gate's answer to "does git ignore this work-tree file" (``--baseline``,
#: ``--staged``), innermost last (as :data:`_ACTIVE`); empty outside the gate.
_IGNORES: list[Callable[[Path], bool]] = []


class _Ignoring:
    """The ``with`` block of :func:`ignoring`."""

    __slots__ = ("predicate",)

    def __init__(self, predicate: Callable[[Path], bool]) -> None:
        self.predicate = predicate

    def __enter__(self) -> None:
        _IGNORES.append(self.predicate)

    def __exit__(self, *exc: object) -> None:
        _IGNORES.pop()


def ignoring(predicate: Callable[[Path], bool]) -> _Ignoring:
    """Inside the ``with`` block, :func:`ignored_by_git` asks ``predicate`` (the change
    gate's: git ignores the file, so no commit holds it; docs/change-gate.md#baseline)."""
    return _Ignoring(predicate)


def ignored_by_git(path: Path) -> bool:
    """Whether the change gate runs and git ignores the work-tree file ``path``: a
    value read from it is no commit's (a CI clone has no such file), so the gate does
    not read it as the head's. False outside the gate."""
    return bool(_IGNORES) and _IGNORES[-1](path)
