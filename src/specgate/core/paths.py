"""Paths in a hostile repository: resolved without crashing, confined, shown.

One walk up to the repository's top (:func:`nearest_git`: the nearest folder holding a
``.git`` entry, a folder or a file for worktrees and submodules) serves every caller:
confinement (:func:`repository_top`, :func:`confined`), the repository root of
referenced files (:func:`repository_root`), annotation paths (:func:`repo_relative`)
and the ``.gitignore`` search of discovery.

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
import posixpath
import stat
from functools import lru_cache
from pathlib import Path

from specgate.core.revision_tree import bring


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


def nearest_git(folder: Path, *, lexical: bool = False) -> Path | None:
    """The nearest folder at or above ``folder`` (taken as given, not resolved) that
    holds a ``.git`` entry, else ``None``: the one repository-top walk.

    ``lexical`` counts a ``.git`` symlink whatever it leads to (:func:`os.path.lexists`);
    otherwise the entry must exist. A folder whose entry cannot be examined is passed.
    """
    for candidate in (folder, *folder.parents):
        try:
            entry = candidate / ".git"
            if os.path.lexists(entry) if lexical else entry.exists():
                return candidate
        except (OSError, ValueError):  # pragma: no cover - unreadable parent
            continue
    return None


def repository_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` (resolved) holding ``.git`` (else
    ``start`` resolved)."""
    here = start.resolve()
    return nearest_git(here) or here


@lru_cache(maxsize=4096)
def _top(here: Path) -> Path:
    # Cached per folder: a run over thousands of files in a few folders walks up once.
    return nearest_git(here) or here


@lru_cache(maxsize=4096)
def _lexical_top(folder: Path) -> Path:
    """The repository holding ``folder`` as written (symlinked folders not followed, so
    ``repo/link-to-elsewhere/x`` belongs to ``repo``), resolved; without one, the
    folder itself, resolved. Cached per folder (one walk up for a thousand files)."""
    return resolve(nearest_git(folder, lexical=True) or folder)


@lru_cache(maxsize=4096)
def real_folder(folder: Path) -> Path:
    """``folder`` (absolute) with symlinks resolved, cached per run of folders.

    Raises:
        PathProblem: see :func:`resolve`.
    """
    return resolve(folder)


class PathEscape(PathProblem):
    """The path leads out of the tree it must stay in (the repository)."""


#: The one message for a path that leads out, whatever exists there: a message that
#: told "leaves the repository" from "does not exist" would let a pull request probe
#: which files exist on the runner (hostile review defect 7).
OUTSIDE = "leads out of the repository; not read"


def confined(path: Path, *, top: Path | None = None, must_exist: bool = True) -> Path:
    """The file ``path`` leads to, which must lie inside ``top`` (resolved) or, by
    default, inside the repository holding ``path`` itself (the link's repository,
    not the target's): the one confinement check for every path any subcommand
    reads, writes or hashes — claims files, the files they reference, options files,
    ``measure``'s scrapes, ``--write`` targets and ``--save-dir``, the reverse lookup
    of ``--changed``, the evidence hashed for ``--baseline``.

    Git's own data counts as outside: a path with a component ``.git`` (any case)
    below the top, as written or where a symlink leads, is refused the same way.

    Confinement is judged before existence, so the answer for a path outside is the
    same whether or not anything is there: a ``..`` that climbs out is refused
    lexically (the part before the first ``..`` resolved, the rest applied as
    written) before the disk is asked about it; a folder on the way or a symlink that
    leads out is refused after resolution (not strict: a missing target outside is
    refused the same); only a path inside may be "no such file".

    A plain file costs one ``lstat`` (its folder's resolution is cached); a symlink
    is resolved in full. ``must_exist=False`` is for a path about to be written: a
    missing last component (or a dangling link, followed to where it points) is
    allowed, its folders must still resolve inside.

    Raises:
        PathEscape: the path leads out (a symlink to ``/etc/passwd``, ``../x``), with
            the one message :data:`OUTSIDE`.
        PathProblem: unresolvable (see :func:`resolve`) or, with ``must_exist``,
            missing inside.
    """
    if top is not None:
        _climbs_out(path, real_folder(top))
    refused = bring(path)  # a base revision's file, brought to disk when one is read
    if refused is not None:
        raise PathEscape(OUTSIDE) if refused == OUTSIDE else PathProblem(refused)
    text = os.path.abspath(path)
    folder, name = os.path.split(text)
    real, lexical, _ = _folder_of(folder)
    bound = lexical if top is None else real_folder(top)
    if not real.is_relative_to(bound) or _in_git_data(real / name, bound):
        raise PathEscape(OUTSIDE)  # a folder on the way leads out, or into .git
    try:
        info: os.stat_result | None = os.lstat(real / name)
    except FileNotFoundError:
        info = None
    except (OSError, ValueError) as exc:
        raise PathProblem(_reason(exc)) from None
    if info is not None and stat.S_ISLNK(info.st_mode):
        target = resolve(real / name)  # not strict: where it leads, existing or not
        link_bound = _lexical_top(Path(folder)) if top is None else bound
        if not target.is_relative_to(link_bound) or _in_git_data(target, link_bound):
            raise PathEscape(OUTSIDE)
        if must_exist and not os.path.exists(target):
            raise PathProblem("no such file")
        return target
    if info is None and must_exist:
        raise PathProblem("no such file")
    target = real / name
    if not target.is_relative_to(bound):  # pragma: no cover - the folder is inside
        raise PathEscape(OUTSIDE)
    return target


def _in_git_data(target: Path, bound: Path) -> bool:
    """Whether ``target`` (resolved, inside ``bound``) lies in git's own data: a
    component below ``bound`` spelled ``.git`` in any case (the repository's or a
    submodule's ``.git`` folder or file). Git's metadata is not the repository's
    content (``.git/config`` holds the token actions/checkout stores), so it is refused
    as a path outside is, with the same message (hostile review r4, defect 9)."""
    return any(part.casefold() == ".git" for part in target.relative_to(bound).parts)


def _climbs_out(path: Path, bound: Path) -> None:
    """Refuse ``path`` when a ``..`` in it climbs out of ``bound`` as written: the part
    before its first ``..`` is resolved (the folder a reference is relative to, inside
    the repository), the rest applied lexically, without asking the disk about it.

    Raises:
        PathEscape: it climbs out.
    """
    parts = path.parts
    if ".." not in parts:
        return
    first = parts.index("..")
    start = resolve(Path(*parts[:first])) if first else Path.cwd()
    landed = Path(os.path.normpath(os.path.join(start, *parts[first:])))
    if not landed.is_relative_to(bound):
        raise PathEscape(OUTSIDE)


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


@lru_cache(maxsize=1024)
def _top_level(folder: str) -> str | None:
    top = nearest_git(Path(folder))
    return None if top is None else str(top)


def repo_relative(path: str | Path) -> str | None:
    """``path`` relative to its git top-level with ``/`` separators and no ``./``;
    ``None`` when the file is in no git repository.

    For ``file=`` in annotations and SARIF URIs: GitHub resolves a relative ``file``
    against the repository root, not the step's working directory (actions/runner#765).
    """
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


def shown_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` relative to the current folder with ``/`` separators (absolute when
    it cannot be made relative, e.g. another drive)."""
    if cwd is None and not path.is_absolute():
        # Relative to the current folder already: the lexical form relpath would give.
        text = posixpath.normpath(path.as_posix())
        if text != ".." and not text.startswith("../"):
            return text
    base = cwd or Path.cwd()
    try:
        relative = os.path.relpath(path.absolute(), base)
    except ValueError:  # pragma: no cover - Windows: another drive
        return path.absolute().as_posix()
    return Path(relative).as_posix()


class Walk:
    """What :func:`link_walk` met: ``steps`` (absolute paths under the top as
    strings, in order), ``end`` (where the path leads, ``None`` when the walk stopped early) and
    ``cut`` (stopped at the link bound: the path may lead anywhere further)."""

    __slots__ = ("cut", "end", "steps")

    def __init__(self, steps: list[str], end: Path | None, *, cut: bool = False) -> None:
        self.steps = steps
        self.end = end
        self.cut = cut


def link_walk(path: Path, top: Path, max_links: int) -> Walk:
    """Resolve ``path`` one component at a time inside ``top`` and say what it met.

    The path is first made absolute and normalised as :func:`confined` takes it (a
    ``..`` written in it applies lexically); then, as the system resolves a path, each
    component is examined under the folder reached so far and each symbolic link met
    is replaced by its target's components (a ``..`` there applies to the resolved
    folder). For the ``--changed`` lookup: a reference is affected by a changed path
    when the walk meets it, whatever name the links on the way have.

    Returns:
        :class:`Walk` (steps, end, cut): every path examined (absolute, under ``top`` resolved, in
        order: each folder on the way, each link and each component of its target,
        the last component reached), and where the path leads, or ``None`` when the
        walk stopped early. It stops where it leaves ``top`` (a ``..`` above it, an
        absolute link elsewhere, judged on its text normalised; what lies outside
        is never examined), after
        ``max_links`` links (a loop or a longer chain: ``cut``), or at a component the system
        cannot examine. A missing component is kept and the rest applied to it, so a
        deleted file's path is among the steps. Never raises.
    """
    try:
        root = str(real_folder(top))
        text = os.path.abspath(path)
    except (PathProblem, OSError, ValueError):
        return Walk([], None)
    given = os.path.abspath(top)
    todo = _inside_parts(text, root, given)
    if todo is None:
        return Walk([], None)
    steps: list[str] = []
    current, links = root, 0
    while todo:
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if current == root:
                return Walk(steps, None)  # leaves the repository
            current = os.path.dirname(current)
            continue
        candidate = f"{current}/{part}"
        steps.append(candidate)
        try:
            info = os.lstat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            current = candidate  # missing: the rest is applied to it as written
            continue
        except (OSError, ValueError):
            return Walk(steps, None)
        if not stat.S_ISLNK(info.st_mode):
            current = candidate
            continue
        links += 1
        if links > max_links:
            return Walk(steps, None, cut=True)
        try:
            target = os.readlink(candidate)
        except (OSError, ValueError):  # pragma: no cover - lstat just saw a link
            return Walk(steps, None)
        if os.path.isabs(target):
            rest = _inside_parts(target, root, given)
            if rest is None:
                return Walk(steps, None)  # an absolute link out of the repository
            current = root
            todo.extend(rest)
        else:
            todo.extend(reversed(target.split("/")))
    return Walk(steps, Path(current))


def _inside_parts(text: str, root: str, given: str) -> list[str] | None:
    """The components of the absolute ``text`` below ``root`` (resolved) or ``given``
    (the top as written), last first (a stack); ``None`` when it is under neither."""
    normal = os.path.normpath(text)
    for base in (root, given):
        if normal == base:
            return []
        if normal.startswith(base.rstrip("/") + "/"):
            return list(reversed(normal[len(base.rstrip("/")) + 1 :].split("/")))
    return None
