"""The few git plumbing calls the change gate needs (docs/change-gate.md).

Everything goes through ``git`` itself (a repository's history is git's
business): files are read at a revision with ``git show REV:path`` / ``git
cat-file``, never by checking out, so the work tree is never touched. Paths are
repository-relative with ``/``. Each call has a timeout and a size cap; the
repository's content never becomes an argument that git could read as an option
(paths follow ``--`` or are joined to a revision).
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Callable
from pathlib import Path

from specgate.core.errors import UsageError

TIMEOUT_S = 60.0
MAX_BLOB_BYTES = 1024 * 1024
"""A blob larger than this is not read (the loader's limit for any input file)."""

_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")


class GitError(Exception):
    """A git call failed; ``str()`` is git's last line of stderr."""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _ENV_DROP}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def run(
    top: Path, *args: str, check: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C top ARGS`` (``stdin`` fed to it); raises :class:`GitError` on
    failure when ``check``."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-C", str(top), *args],
            capture_output=True,
            input=None if stdin is None else (stdin + "\n").encode("utf-8", "surrogateescape"),
            timeout=TIMEOUT_S,
            env=_env(),
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {TIMEOUT_S:g} s") from None
    if check and done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(lines[-1] if lines else f"git {args[0]} failed")
    return done


def top_level(folder: Path) -> Path | None:
    """The work tree's top-level folder holding ``folder``, else ``None``."""
    try:
        done = run(folder, "rev-parse", "--show-toplevel", check=False)
    except GitError:
        return None
    if done.returncode != 0:
        return None
    return Path(done.stdout.decode("utf-8", "surrogateescape").strip())


def resolve_commit(top: Path, ref: str, option: str) -> str:
    """The full commit id ``ref`` names.

    Raises:
        UsageError: ``ref`` is not a commit here (the message names ``option``).
    """
    if not ref or ref.startswith("-"):
        raise UsageError(f"{option} {ref!r}: not a commit")
    try:
        done = run(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    except GitError:
        raise UsageError(f"{option} {ref!r}: not a commit in {top}") from None
    return done.stdout.decode("ascii").strip()


def _nameable(path: str) -> bool:
    """Whether ``path`` can be named in git's line-based batch protocol."""
    return not any(c in path for c in "\n\r\0")


LINK_OUT = "leading out of the repository"
"""The words of a refusal for a symbolic link out of the tree (:func:`_check_paths`)."""

MAX_LINK_HOPS = 40
"""Symbolic links git follows for one path at a revision (``cat-file
--follow-symlinks``: ``GET_TREE_ENTRY_FOLLOW_SYMLINKS_MAX_LINKS`` in git's
tree-walk.c); a longer chain is answered as a loop."""


def _check_paths(
    top: Path, commit: str, wanted: list[str], refused: dict[str, str] | None
) -> dict[str, tuple[str, int]]:
    """Path → (blob id, size) at ``commit`` for each path that is a file there, every
    symbolic link on the way (the file itself or a folder of its path) followed inside
    the revision's tree as the work tree's confinement follows it at the head (``git
    cat-file --batch-check --follow-symlinks``, at most :data:`MAX_LINK_HOPS` links). An
    absolute link into the repository's own folder is followed once more from there.
    A link that leads out of the tree, loops or leads nowhere is left out, with why in
    ``refused``; paths absent at ``commit`` are left out without a word.

    Raises:
        GitError: git failed or answered out of protocol.
    """
    found: dict[str, tuple[str, int]] = {}
    pending = {p: p for p in wanted}  # the path asked for → the path asked of git
    root = os.path.realpath(top)
    for _ in range(4):  # absolute links back into the folder, a few times at most
        if not pending:
            break
        asked = list(pending.items())
        names = "\n".join(f"{commit}:{p}" for _, p in asked)
        out = run(top, "cat-file", "--batch-check", "--follow-symlinks", stdin=names).stdout
        answers = _answers(out, len(asked))
        pending = {}
        for (path, _), (kind, value, size) in zip(asked, answers, strict=True):
            if kind == "blob":
                found[path] = (value, size)
            elif kind == "symlink":
                inside = posixpath.relpath(value, root) if value.startswith(root + "/") else None
                if inside is not None and _nameable(inside) and not inside.startswith("../"):
                    pending[path] = inside
                elif refused is not None:
                    refused[path] = (
                        f"{path} is a symbolic link {LINK_OUT} ({value!r}); not followed"
                    )
            elif kind in ("loop", "dangling") and refused is not None:
                refused[path] = (
                    f"{path} is a symbolic link that loops or needs more than "
                    f"{MAX_LINK_HOPS} links"
                    if kind == "loop"
                    else f"{path} is a symbolic link to a file that does not exist"
                )
    for path in pending:
        if refused is not None:
            refused[path] = f"{path}: symbolic links lead back into the repository too often"
    return found


def _answers(out: bytes, count: int) -> list[tuple[str, str, int]]:
    """(kind, value, size) for each answer of ``cat-file --batch-check
    --follow-symlinks``: ``("blob", id, size)``; ``("symlink", target, 0)`` for a link
    out of the tree; ``("loop"|"dangling"|"notdir"|"missing"|"other", "", 0)``.

    Raises:
        GitError: out of protocol.
    """
    answers: list[tuple[str, str, int]] = []
    at = 0
    for _ in range(count):
        end = out.find(b"\n", at)
        if end < 0:
            raise GitError("git cat-file --batch-check answered out of protocol")
        fields = out[at:end].split()
        at = end + 1
        if len(fields) == 2 and fields[0] in (b"symlink", b"loop", b"dangling", b"notdir"):
            if not fields[1].isdigit():
                raise GitError("git cat-file --batch-check answered out of protocol")
            size = int(fields[1])  # the next `size` bytes, then a newline, name it
            value = out[at : at + size].decode("utf-8", "surrogateescape")
            at += size + 1
            answers.append((fields[0].decode("ascii"), value, 0))
        elif len(fields) == 3 and fields[1] == b"blob" and fields[2].isdigit():
            answers.append(("blob", fields[0].decode("ascii"), int(fields[2])))
        elif fields and fields[-1] == b"missing":
            answers.append(("missing", "", 0))
        else:
            answers.append(("other", "", 0))  # a folder, a submodule
    return answers


def read_blobs(
    top: Path,
    commit: str,
    paths: list[str],
    limit: int = MAX_BLOB_BYTES,
    refused: dict[str, str] | None = None,
) -> dict[str, tuple[str, bytes | None]]:
    """Path → (blob id, content) at ``commit`` for every path that is a file there,
    symbolic links followed inside the revision (:func:`_check_paths`, whose
    ``refused`` this is), in two git calls whatever the number of paths (``cat-file
    --batch-check`` for ids and sizes, then ``cat-file --batch`` for the contents).
    Content is ``None`` for a blob larger than ``limit``; paths absent at ``commit``
    are left out.

    Raises:
        GitError: git failed or answered out of protocol.
    """
    wanted = [p for p in dict.fromkeys(paths) if _nameable(p)]
    if not wanted or any(c in commit for c in "\n\r\0:"):
        return {}
    found: dict[str, tuple[str, bytes | None]] = {}
    small: list[tuple[str, str, int]] = []
    for path, (blob, size) in _check_paths(top, commit, wanted, refused).items():
        found[path] = (blob, None)
        if size <= limit:
            small.append((path, blob, size))
    if small:
        out = run(top, "cat-file", "--batch", stdin="\n".join(b for _, b, _ in small)).stdout
        at = 0
        for path, blob, size in small:
            end = out.find(b"\n", at)
            header = out[at:end].split()
            if end < 0 or len(header) != 3 or header[0].decode("ascii", "replace") != blob:
                raise GitError("git cat-file --batch answered out of protocol")
            start = end + 1
            found[path] = (blob, out[start : start + size])
            at = start + size + 1
    return found


def copy_blobs(  # noqa: PLR0917 - a copy's inputs
    top: Path,
    commit: str,
    paths: list[str],
    root: Path,
    limit: int,
    refused: dict[str, str] | None = None,
) -> dict[str, str]:
    """Copy each path that is a file at ``commit`` (symbolic links followed inside the
    revision, :func:`_check_paths`, whose ``refused`` this is) to ``root / path`` and
    return path → blob id. Blobs up to 1 MiB come in one ``cat-file --batch`` call;
    larger ones up to ``limit`` are streamed to their file (``cat-file blob``, never
    held in memory); a blob over ``limit`` becomes a sparse file of its size, which the
    readers then refuse exactly as they refuse such a file in the work tree ("larger
    than …"), so the base revision is read with the head's limits and says why when it
    cannot be. Paths absent at ``commit`` are left out.

    Raises:
        GitError: git failed or answered out of protocol.
        OSError: a name the file system refuses.
    """
    wanted = [p for p in dict.fromkeys(paths) if _nameable(p)]
    if not wanted or any(c in commit for c in "\n\r\0:"):
        return {}
    sizes = _check_paths(top, commit, wanted, refused)
    small = [p for p, (_, size) in sizes.items() if size <= MAX_BLOB_BYTES]
    for path, (_, content) in read_blobs(top, commit, small).items():
        if content is not None:
            _target(root, path).write_bytes(content)
    for path, (blob, size) in sizes.items():
        if size > MAX_BLOB_BYTES:
            write_blob(top, blob, size, _target(root, path), limit)
    return {path: blob for path, (blob, _) in sizes.items()}


def write_blob(top: Path, blob: str, size: int, target: Path, limit: int) -> None:
    """Write ``blob`` (of ``size`` bytes) to ``target``, streamed (``cat-file blob``,
    never held in memory); over ``limit``, a sparse file of its size, which the readers
    refuse as they refuse such a file in the work tree ("larger than …").

    Raises:
        GitError: git failed or took too long.
        OSError: the file cannot be written.
    """
    if size > limit:
        with open(target, "wb") as out:
            out.truncate(size)  # sparse: no byte is read or written
        return
    with open(target, "wb") as out:
        try:
            done = subprocess.run(
                ["git", "-c", "core.fsmonitor=false", "-C", str(top), "cat-file", "blob", blob],
                stdout=out,
                stderr=subprocess.PIPE,
                timeout=TIMEOUT_S,
                env=_env(),
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise GitError(f"git cat-file took longer than {TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        raise GitError(f"git cat-file blob {blob} failed")


def _target(root: Path, path: str) -> Path:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def folder_files(top: Path, commit: str, folder: str) -> list[str]:
    """The names directly in ``folder`` (repository-relative, ``""`` for the top) at
    ``commit`` (``git ls-tree --name-only COMMIT:FOLDER``); empty when it is no folder
    there."""
    if any(c in commit + folder for c in "\n\r\0:"):
        return []
    done = run(top, "ls-tree", "-z", "--name-only", f"{commit}:{folder}", check=False)
    return _names(done) if done.returncode == 0 else []


def claims_files_at(top: Path, commit: str, is_claims: Callable[[str], bool]) -> list[str]:
    """The paths at ``commit`` whose base name ``is_claims`` accepts (``git ls-tree
    -r``), in git's order."""
    if any(c in commit for c in "\n\r\0:"):
        return []
    listing = run(top, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
    return [p for p in _names(listing) if is_claims(posixpath.basename(p))]


def hash_object(top: Path, path: str) -> str | None:
    """The blob id the work-tree file ``path`` would get (``git hash-object
    --path=PATH PATH``: the repository's line-ending filters applied), ``None``
    when it does not exist."""
    if not (top / path).is_file():
        return None
    done = run(top, "hash-object", f"--path={path}", "--", path, check=False)
    return done.stdout.decode("ascii").strip() if done.returncode == 0 else None


def renames(top: Path, commit: str) -> dict[str, str]:
    """Work-tree path → its path at ``commit`` for files git's rename detection
    pairs between ``commit`` and the work tree."""
    done = run(top, "diff", "-M", "--name-status", "-z", commit, "--", check=False)
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, str] = {}
    index = 0
    while index < len(fields):
        status = fields[index]
        if status.startswith(("R", "C")) and index + 2 < len(fields):
            if status.startswith("R"):
                found[fields[index + 2]] = fields[index + 1]
            index += 3
        else:
            index += 2
    return found


def changed_since(top: Path, commit: str) -> list[str]:
    """Paths that differ between ``commit`` and the work tree (``git diff
    --name-only``), deleted files included."""
    done = run(top, "diff", "--name-only", "--no-renames", "-z", commit, "--")
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _names(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    """The paths of a ``-z`` listing (NUL-separated, so any byte but NUL is a name)."""
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def staged(top: Path) -> list[str]:
    """Paths whose staged content differs from ``HEAD`` (``git diff --cached
    --name-only``; every staged file on an unborn branch), deleted files and both
    sides of a rename included."""
    return _names(run(top, "diff", "--cached", "--name-only", "--no-renames", "-z", "--"))


def changed_between(top: Path, old: str, new: str) -> list[str]:
    """Paths that differ between the merge base of ``old`` and ``new`` and ``new``
    (``git diff old...new``, as pre-commit lists them for ``--from-ref``/``--to-ref``);
    between ``old`` and ``new`` themselves when they share no history. Both are
    full commit ids (:func:`resolve_commit`)."""
    base = run(top, "merge-base", old, new, check=False)
    start = base.stdout.decode("ascii", "replace").strip() if base.returncode == 0 else old
    return _names(run(top, "diff", "--name-only", "--no-renames", "-z", start, new, "--"))


def tracked(top: Path) -> list[str]:
    """Every path in the index (``git ls-files``)."""
    return _names(run(top, "ls-files", "-z"))


def tracked_links(top: Path, limit: int) -> list[str] | None:
    """The paths the index records as symbolic links (mode 120000 in ``git ls-files
    --stage``), in git's order; ``None`` when there are more than ``limit``."""
    found: list[str] = []
    for entry in _names(run(top, "ls-files", "--stage", "-z")):
        mode, _, rest = entry.partition(" ")
        if mode == "120000" and "\t" in rest:
            found.append(rest.split("\t", 1)[1])
            if len(found) > limit:
                return None
    return found


def unstaged(top: Path) -> list[str]:
    """Paths whose work tree differs from the index: tracked files changed or deleted
    since staged (``git diff --name-only``, index against work tree) and untracked
    files not ignored (``git ls-files --others --exclude-standard``)."""
    changed = _names(run(top, "diff", "--name-only", "--no-renames", "-z", "--"))
    return changed + _names(run(top, "ls-files", "--others", "--exclude-standard", "-z"))


def index_entries(top: Path) -> dict[str, tuple[str, str]]:
    """Path → (mode, blob id) of every stage-0 entry of the index (``git ls-files
    --stage``); a conflicted path has no stage-0 entry and is left out."""
    found: dict[str, tuple[str, str]] = {}
    for record in _names(run(top, "ls-files", "--stage", "-z")):
        head, _, path = record.partition("\t")
        fields = head.split()
        if len(fields) == 3 and fields[2] == "0" and path:
            found[path] = (fields[0], fields[1])
    return found


def blob_size(top: Path, blob: str) -> int:
    """The size of ``blob`` in bytes (``cat-file -s``).

    Raises:
        GitError: git failed or answered out of protocol.
    """
    size = run(top, "cat-file", "-s", blob).stdout.decode("ascii", "replace").strip()
    if not size.isdigit():
        raise GitError("git cat-file -s answered out of protocol")
    return int(size)


def ignored_by(top: Path) -> Callable[[Path], bool]:
    """Whether git ignores a work-tree file of the repository at ``top`` (``git
    check-ignore``: a tracked file is never ignored, whatever ``.gitignore`` says),
    answered once per path; a path outside ``top``, or a git that fails, is not."""
    answers: dict[str, bool] = {}

    def ignored(path: Path) -> bool:
        real = os.path.realpath(path)
        base = os.path.realpath(top)
        if not real.startswith(base + os.sep):
            return False
        rel = real[len(base) + 1 :]
        if rel not in answers and len(answers) < MAX_IGNORE_ASKS:
            try:
                done = run(top, "check-ignore", "-q", "--", rel, check=False)
            except GitError:
                return False
            answers[rel] = done.returncode == 0
        return answers.get(rel, False)

    return ignored


#: Paths :func:`ignored_by` asks git about in one run (one process each; a run reads a
#: ``.env`` per Compose folder, far fewer).
MAX_IGNORE_ASKS = 256
