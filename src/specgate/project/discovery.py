"""Find claims files: named files as given, folders searched for the default names.

Default names (docs/claims-file.md#format-rules): ``specgate.yaml``, ``.specgate.yaml``,
``*.specgate.yaml``, and the same with ``.yml`` and ``.json``.

A folder search skips what git ignores: every ``.gitignore`` from the repository's
top-level down to the folder being walked applies (a deeper file's match wins,
``!`` re-includes), matched with git's rules in bounded time
(:mod:`specgate.project.gitignore`); and what the
configuration's ``exclude`` globs name. A file named on the command line is
checked whatever those say (as ruff does without ``--force-exclude``).
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from specgate.core.errors import LimitReached, UsageError
from specgate.core.paths import nearest_git, shown_path

if TYPE_CHECKING:
    from specgate.project.config import ConfigFinder
    from specgate.project.gitignore import Budget, Compiled

#: Compiled on first use (``re``'s cache): a check of files named on the command line
#: searches no folder.
CLAIMS_NAME = r"(?:\.?specgate|.+\.specgate)\.(?:ya?ml|json)"
SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        "site-packages",
        ".eggs",
    }
)


def is_claims_name(name: str) -> bool:
    """Whether a file name is one of the default claims-file names."""
    return re.fullmatch(CLAIMS_NAME, name, re.DOTALL) is not None


def _skip(folder: Path) -> bool:
    """Folders never searched: VCS data, virtual environments, caches, build metadata."""
    name = folder.name
    return name in SKIPPED_FOLDERS or name.endswith(".egg-info") or (folder / "pyvenv.cfg").exists()


class _GitIgnores:
    """The ``.gitignore`` files in force while walking down from a repository, for one
    run (every folder searched): compiled and matched within one
    :class:`~specgate.project.gitignore.Budget`."""

    def __init__(self) -> None:
        self.specs: dict[Path, Compiled | None] = {}
        #: Made with the first ``.gitignore`` read (the matcher is imported only then).
        self.budget: Budget | None = None
        #: Whether any ``.gitignore`` was read: without one nothing is ignored, and the
        #: walk up every file's folders is skipped.
        self.any = False

    def load(self, folder: Path) -> None:
        """Read ``folder/.gitignore`` when there is one (unreadable ones are skipped).

        Raises:
            LimitReached: the file passes :data:`~specgate.project.gitignore.MAX_FILE_BYTES`,
                or the run's distinct text or patterns pass their bounds.
        """
        if folder in self.specs:
            return
        candidate = folder / ".gitignore"
        spec = None
        try:
            if candidate.is_file() and not candidate.is_symlink():
                from specgate.project.gitignore import MAX_FILE_BYTES, Budget

                if self.budget is None:
                    self.budget = Budget()
                with candidate.open(encoding="utf-8", errors="replace") as handle:
                    text = handle.read(MAX_FILE_BYTES + 1)
                if len(text) > MAX_FILE_BYTES:
                    raise LimitReached(
                        f"a .gitignore over {MAX_FILE_BYTES // 1024} KiB; specgate will not "
                        "search the folder without its patterns",
                        shown_path(candidate),
                    )
                spec = self.budget.compile(text)
                spec = spec if spec.patterns else None
        except (OSError, ValueError) as exc:
            from specgate.project.gitignore import Spent

            if isinstance(exc, Spent):
                raise LimitReached(
                    f"{exc}; specgate will not search the folder without its patterns",
                    shown_path(candidate),
                ) from None
            spec = None
        self.specs[folder] = spec
        self.any = self.any or spec is not None

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git ignores ``path``: the deepest ``.gitignore`` with a matching
        pattern decides.

        Raises:
            LimitReached: the run's matching work passes its budget (naming the
                ``.gitignore`` being matched).
        """
        if not self.any or self.budget is None:
            return False
        from specgate.project.gitignore import Spent

        verdict: bool | None = None
        for folder in reversed(path.parents):  # the top-level first, the deepest last
            spec = self.specs.get(folder)
            if spec is None:
                continue
            try:
                found = self.budget.verdict(spec, path.relative_to(folder).parts, is_dir)
            except Spent as exc:
                raise LimitReached(
                    f"{exc}; specgate will not search the folder without its patterns",
                    shown_path(folder / ".gitignore"),
                ) from None
            if found is not None:
                verdict = found
        return bool(verdict)


#: Entries a run may look at inside excluded or ignored folders to name the claims files
#: they hide (bounded work: a huge ignored tree is not walked to its end).
HIDDEN_SCAN_BUDGET = 10_000


def _hidden_claims(folder: Path, budget: list[int]) -> list[Path]:
    """Claims files inside ``folder`` (excluded or ignored as a whole), at most
    ``budget[0]`` entries looked at; the budget is shared by the whole run."""
    hidden: list[Path] = []
    for root, dirs, files in os.walk(folder):
        budget[0] -= len(dirs) + len(files)
        if budget[0] < 0:
            break
        dirs[:] = sorted(d for d in dirs if not _skip(Path(root) / d))
        hidden.extend(Path(root) / f for f in files if is_claims_name(f))
    return hidden


def _search(
    folder: Path,
    finder: ConfigFinder | None = None,
    hidden: list[Path] | None = None,
    ignores: _GitIgnores | None = None,
) -> list[Path]:
    found: list[Path] = []
    budget = [HIDDEN_SCAN_BUDGET]
    start = Path(os.path.abspath(folder))
    ignores = _GitIgnores() if ignores is None else ignores
    top = nearest_git(start)
    if top is not None:
        for above in (*reversed(start.parents), start):
            if above == top or top in above.parents:
                ignores.load(above)
    config = finder.for_folder(start.resolve()) if finder is not None else None

    def skipped(path: Path, is_dir: bool) -> bool:
        if config is not None and config.excludes(path):
            return True
        return top is not None and ignores.ignored(path, is_dir)

    for root, dirs, files in os.walk(folder):
        here = Path(root)
        absolute = Path(os.path.abspath(root))
        if top is not None:
            ignores.load(absolute)
        kept = []
        for d in sorted(dirs):
            if _skip(here / d):
                continue
            if skipped(absolute / d, is_dir=True):
                if hidden is not None:
                    hidden.extend(_hidden_claims(here / d, budget))
                continue
            kept.append(d)
        dirs[:] = kept
        for f in files:
            if is_claims_name(f):
                if not skipped(absolute / f, is_dir=False):
                    found.append(here / f)
                elif hidden is not None:
                    hidden.append(here / f)
    return found


def _real_path(path: Path, folders: dict[str, str]) -> str:
    """``os.path.realpath(path)``, with each folder resolved once: a file that is not
    a symlink is its resolved folder joined with its name (one ``lstat``, not one per
    component of the path)."""
    absolute = os.path.abspath(path)
    if os.path.islink(absolute):
        return os.path.realpath(absolute)
    folder, name = os.path.split(absolute)
    real = folders.get(folder)
    if real is None:
        real = folders[folder] = os.path.realpath(folder)
    return os.path.join(real, name)


def _unusable_name(given: str) -> bool:
    """True for a name no file can have here: a NUL byte, or one the file system refuses
    (too long); ``Path.exists`` would raise (or answer False) for both."""
    if "\0" in given:
        return True
    try:
        os.lstat(given)
    except OSError as exc:
        return exc.errno not in (errno.ENOENT, errno.ENOTDIR)
    return False


def _excluded(passed_over: list[Path], shown: int = 5) -> str:
    """``exclude`` or a ``.gitignore`` covers every claims file found: say which (the
    checked repository can write both, so a gate that checks nothing names them)."""
    names = sorted(shown_path(p) for p in passed_over)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return (
        f"{len(names)} claims file{'s' if len(names) != 1 else ''} excluded by `exclude` or "
        f"a .gitignore ({', '.join(names[:shown])}{more})"
    )


def discover(
    paths: list[str], finder: ConfigFinder | None = None, hidden: list[str] | None = None
) -> list[tuple[Path, str]]:
    """Claims files for the CLI's PATH arguments, sorted by shown path, no repeats.

    ``hidden``, when given, receives the shown paths of claims files a folder search
    passed over because ``exclude`` or a ``.gitignore`` covers them (the checked
    repository can write both, so the run names them; docs/trust.md#paths-stay-inside).

    Raises:
        UsageError: a PATH that does not exist, or a folder holding no claims file
            (a gate that silently checks nothing passes everything).
        LimitReached: a ``.gitignore`` over its size, or the run's ``.gitignore``
            matching past its budget (:class:`~specgate.project.gitignore.Budget`).
    """
    seen: dict[str, tuple[Path, str]] = {}
    real_folders: dict[str, str] = {}
    ignores = _GitIgnores()  # one budget for every folder searched
    for given in paths or ["."]:
        path = Path(given)
        if _unusable_name(given):
            # an over-long name or a NUL byte: the reader reports it as an input
            # error for this file, and the run goes on with the other files
            matches = [path]
        elif path.is_dir():
            passed_over: list[Path] = []
            matches = _search(path, finder, passed_over, ignores)
            if hidden is not None:
                hidden.extend(shown_path(p) for p in passed_over)
            if not matches and passed_over:
                raise UsageError(f"{given}: no claims file left to check: {_excluded(passed_over)}")
            if not matches:
                raise UsageError(
                    f"{given}: no claims file found (looked for specgate.yaml, .specgate.yaml, "
                    "*.specgate.yaml and the .yml/.json forms)"
                )
        elif path.exists() or path.is_symlink():
            matches = [path]
        else:
            raise UsageError(f"{given}: no such file or folder")
        for match in matches:
            # One file reached by two names is checked once; the path kept is the one
            # given (a symlink is confined to its own repository when it is read).
            try:
                key = _real_path(match, real_folders)
            except (OSError, ValueError):
                key = os.path.abspath(match)
            seen.setdefault(key, (match, shown_path(match)))
    return sorted(seen.values(), key=lambda pair: pair[1])
