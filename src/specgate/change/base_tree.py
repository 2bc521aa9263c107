"""REF's tree as the file system of a base read (docs/change-gate.md#baseline).

:class:`GitTree` is the :class:`~specgate.core.revision_tree.RevisionTree` of one claims
file read at REF: a path the readers look at under its private folder is brought there
from REF with git (``cat-file``, symbolic links followed inside the revision as the head's
confinement follows them), once, and only when a reader asks for it. Whatever a reader
follows at the head (a Compose ``.env``, an options file, a sourced file, an override,
a values file, requirement files beside a config) is so followed at REF by the same
code, with the head's limits.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from specgate.change import git
from specgate.core.paths import OUTSIDE


@dataclass
class GitTree:
    """Files of ``commit`` brought under ``root`` on demand.

    Attributes:
        top: the repository's top folder (where git runs).
        commit: the full commit id of REF.
        root: the private folder standing for the top (resolved).
        limit: the largest blob brought (bytes); a larger one becomes a sparse file
            that the readers refuse with the head's "larger than" message.
        budget: files brought at most (a hostile base revision must not make the gate
            crawl); past it a path is refused with a reason.
        blobs: repository-relative path → blob id of every file brought (or copied
            ahead by the caller).
    """

    top: Path
    commit: str
    root: Path
    limit: int
    budget: int
    blobs: dict[str, str] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)

    def bring(self, rel: str) -> str | None:
        """See :meth:`specgate.core.revision_tree.RevisionTree.bring`."""
        if rel in self.asked or rel in self.blobs:
            return None
        self.asked.add(rel)
        if (self.root / rel).exists():
            return None  # written by the caller (the claims file itself)
        if len(self.blobs) >= self.budget:
            return f"more than {self.budget} files read at the base revision; not read"
        refused: dict[str, str] = {}
        try:
            self.blobs.update(
                git.copy_blobs(self.top, self.commit, [rel], self.root, self.limit, refused)
            )
        except git.GitError as exc:
            return f"cannot be read at the base revision: {exc}"
        except OSError as exc:  # a name the file system refuses
            return f"cannot be copied from the base revision: {exc.strerror or exc}"
        reason = refused.get(rel)
        if reason is None or "does not exist" in reason:
            return None  # absent (or a link to nothing): "no such file", as at the head
        return OUTSIDE if git.LINK_OUT in reason else reason

    def bring_folder(self, rel: str, patterns: tuple[str, ...]) -> None:
        """See :meth:`specgate.core.revision_tree.RevisionTree.bring_folder`."""
        try:
            names = git.folder_files(self.top, self.commit, rel)
        except git.GitError:
            return
        for name in names:
            if any(fnmatch.fnmatchcase(name, p) for p in patterns):
                self.bring(f"{rel}/{name}" if rel else name)
