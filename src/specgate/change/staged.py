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
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
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
