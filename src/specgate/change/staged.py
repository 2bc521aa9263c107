"""``check --staged``: the files a pre-commit run covers, asked from git
(docs/change-gate.md#staged).

The pre-commit hook takes no file names on its command line (``pass_filenames:
false``): pre-commit appends them after the user's ``args`` with no ``--``, so a
committed file named ``--fail-on=never`` or ``--output=victim.txt`` would be read as
an option. Instead specgate asks git, with fixed argument lists and NUL-separated
output, for the same set pre-commit would have passed:

- ``PRE_COMMIT_FROM_REF`` and ``PRE_COMMIT_TO_REF`` set (pre-push, ``pre-commit run
  --from-ref A --to-ref B``): the files changed in ``A...B`` (pre-commit's
  ``git.get_changed_files``, pre_commit/git.py, pre-commit 4.7.0; the variables are
  set in pre_commit/commands/run.py). Each value must name a commit.
- otherwise the staged files (``git diff --cached``; pre-commit stashes unstaged
  changes first, so the work tree holds what is committed);
- nothing staged and no refs (``pre-commit run --all-files`` on a clean index, or a
  push of a new root): every tracked claims file.

Deleted files are kept (pre-commit drops them), so the claims file that reads a
deleted serving config is checked and reports it missing.

What is checked is what the commit holds (:class:`IndexOverlay`): a file whose work
tree differs from the index (changed or deleted since staged, or untracked) is read
from the index, so every line of the report, the metrics included, is the staged one
even when no stash put the work tree in step (a plain git hook, a run by hand).
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from specgate.change import git
from specgate.core.errors import UsageError
from specgate.project.discovery import is_claims_name

FROM_REF = "PRE_COMMIT_FROM_REF"
TO_REF = "PRE_COMMIT_TO_REF"


def staged_files(cwd: Path, environ: Mapping[str, str]) -> list[Path]:
    """The changed files ``check --staged`` looks at, as absolute paths.

    Args:
        cwd: a folder inside the work tree.
        environ: the environment (``PRE_COMMIT_FROM_REF`` / ``PRE_COMMIT_TO_REF``).

    Raises:
        UsageError: not inside a git repository; only one of the two variables set;
            a variable that does not name a commit; git failing.
    """
    top = git.top_level(cwd)
    if top is None:
        raise UsageError("specgate check --staged: not inside a git repository")
    old, new = environ.get(FROM_REF, ""), environ.get(TO_REF, "")
    try:
        if old or new:
            if not (old and new):
                missing = TO_REF if old else FROM_REF
                raise UsageError(f"specgate check --staged: {missing} is not set")
            names = git.changed_between(
                top, git.resolve_commit(top, old, FROM_REF), git.resolve_commit(top, new, TO_REF)
            )
        else:
            names = git.staged(top)
            if not names:
                names = [n for n in git.tracked(top) if is_claims_name(posixpath.basename(n))]
    except git.GitError as exc:
        raise UsageError(f"specgate check --staged: {exc}") from None
    return [top / name for name in names]


#: Index entry modes (git's index-format.txt): a symbolic link, a submodule (gitlink).
_LINK, _GITLINK = "120000", "160000"


#: The largest staged file copied whole for a reader: the largest input any reader takes
#: (a metrics file or log, ``specgate.inputs.metrics.stream.METRICS_MAX_BYTES``); a
#: larger one is copied as a sparse file of its size, which the readers refuse.
_COPY_LIMIT = 256 * 1024 * 1024


@dataclass
class IndexOverlay:
    """The index as what the readers read, where the work tree differs from it
    (:class:`specgate.core.revision_tree.Overlay`; docs/change-gate.md#staged).

    Attributes:
        top: the repository's top folder (resolved).
        entries: path → (mode, blob id) of each such path the index holds at stage 0;
            a path in ``differs`` but not here is not staged (untracked, removed).
        differs: repository-relative paths whose work tree differs from the index.
        folder: the private folder the staged copies are written to (made on first use).
    """

    top: Path
    entries: dict[str, tuple[str, str]]
    differs: frozenset[str]
    folder: Path | None = None
    answers: dict[str, Path | str] = field(default_factory=dict)

    def redirect(self, path: Path | str) -> Path | str | None:
        """See :meth:`specgate.core.revision_tree.Overlay.redirect`: the staged copy of
        a file (followed through symbolic links in the work tree) that differs."""
        real = os.path.realpath(path)
        base = str(self.top)
        if not real.startswith(base + os.sep):
            return None
        rel = real[len(base) + 1 :].replace(os.sep, "/")
        if rel not in self.differs:
            return None
        if rel not in self.answers:
            self.answers[rel] = self._staged(rel)
        return self.answers[rel]

    def _staged(self, rel: str) -> Path | str:
        entry = self.entries.get(rel)
        if entry is None:
            return "no such file in the index (not staged: the commit does not hold it)"
        mode, blob = entry
        if mode == _GITLINK:
            return "is a folder, not a file"
        if mode == _LINK:
            return "is staged as a symbolic link, which --staged does not follow"
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="specgate-staged-"))
        target = self.folder / blob  # a hex id: no name from the repository
        try:
            if not target.exists():
                git.write_blob(self.top, blob, git.blob_size(self.top, blob), target, _COPY_LIMIT)
        except (git.GitError, OSError) as exc:
            return f"cannot be read from the index: {exc}"
        return target

    def close(self) -> None:
        """Remove the private copies."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def blob_ids(self) -> dict[str, str | None]:
        """Path → staged blob id of each path that differs (``None``: not staged), the
        head's evidence identity under ``--staged``."""
        return {
            rel: (self.entries[rel][1] if rel in self.entries else None) for rel in self.differs
        }


def index_overlay(cwd: Path) -> IndexOverlay | None:
    """The index overlay of the repository holding ``cwd`` (``None`` outside one, or
    when git fails: ``--staged`` then says so itself)."""
    top = git.top_level(cwd)
    if top is None:
        return None
    try:
        differs = frozenset(git.unstaged(top))
        entries = git.index_entries(top) if differs else {}
    except git.GitError:
        return None
    kept = {rel: entries[rel] for rel in differs if rel in entries}
    return IndexOverlay(Path(os.path.realpath(top)), kept, differs)
