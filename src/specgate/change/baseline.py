"""``check --baseline REF``: each claims file and its referenced files as they were
at REF (docs/change-gate.md#baseline).

Files are read with git (``git cat-file``), never checked out: the claims file at
REF (under its old name when git's rename detection pairs it with the current one,
or where it stood when the head reaches it through a symlink) and every file it
references are copied into a private temporary folder laid out as the repository,
then read with the same readers and the same limits as the head (metrics files up
to 256 MiB; a file over a reader's limit is refused with the head's message).

A deployment not found in its claims file at REF is looked up by name among every
claims file at REF before it counts as new, so moving a deployment to another file
(a rename padded past git's rename detection, the old path turned into a symlink)
does not escape the comparison. A deployment that cannot be read at REF counts as
new with an ``error`` saying why, which SG410 states in every output format.

With ``--only-new`` the source carries a ``judge`` (given by the check layer, which
this layer may not import): each claims file read at REF is judged in its private
copy too, and its findings travel with its deployments (:class:`BaseFindings`).
"""

from __future__ import annotations

import math
import os
import posixpath
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from specgate.analysis import derived
from specgate.analysis.derived import Metrics
from specgate.analysis.digest import change_fields as digest_fields
from specgate.analysis.digest import config_digest
from specgate.change import git
from specgate.change.base_tree import GitTree
from specgate.core.errors import InputError, UsageError
from specgate.core.findings import Finding
from specgate.core.names import name_key
from specgate.core.revision_tree import reading
from specgate.model.base_view import BaseView
from specgate.model.deployment import Deployment
from specgate.model.reference_keys import (
    EVIDENCE_KEYS,
    deployment_references,
)
from specgate.project.config import Config
from specgate.theory.stats import standard_error, z_score

MAX_REFERENCED_FILES = 256
"""A claims file at REF naming more distinct files than this is not read (each costs
git calls; a hostile base revision must not make the gate crawl)."""
MAX_CLAIMS_AT_REF = 2000
"""Claims files at REF searched for a deployment's name (each is read and parsed once
per run); a larger tree is searched in its first files, in git's order."""


@dataclass(frozen=True)
class BaseFindings:
    """What the rules found in one claims file at REF (``--only-new``): its file-level
    findings and each deployment's, by the deployment's name at REF (suppressed
    findings included: a suppression is not what the change added)."""

    file: tuple[Finding, ...] = ()
    by_name: dict[str, tuple[Finding, ...]] = field(default_factory=dict)


Judge = Callable[[Any, Path, "float | None"], "BaseFindings | None"]
"""Judges a claims file at REF: (its parsed document, its path in the private copy,
the run's AL floor) → its findings, ``None`` when it cannot be judged there."""


@dataclass(frozen=True)
class BaselineSource:
    """The base revision of a run: ``ref`` as given, the ``commit`` it names, the
    repository's ``top`` folder and git's renames (work-tree path → path at REF)."""

    ref: str
    commit: str
    top: Path
    renames: dict[str, str] = field(default_factory=dict)
    head_hashes: dict[str, str | None] = field(default_factory=dict, compare=False)
    """Blob ids of work-tree files already hashed in this run (path → id)."""
    claims_at_ref: dict[str, tuple[str, bytes | None] | None] = field(
        default_factory=dict, compare=False
    )
    """Claims files at REF read ahead by :func:`prefetch` (path → (blob, content),
    ``None`` when absent at REF)."""
    read_at_ref: dict[tuple[str, float | None], BaseFile | None] = field(
        default_factory=dict, compare=False
    )
    """Claims files at REF read and resolved in this run ((path, floor) → file)."""
    names_at_ref: list[dict[str, list[str]]] = field(default_factory=list, compare=False)
    """Deployment name key → the claims files at REF that hold it (one mapping, built
    on first need; empty before)."""
    names_at_head: list[set[str]] = field(default_factory=list, compare=False)
    """Name keys of every claims file in the work tree (one set, built on first need:
    :func:`specgate.change.match.head_names`)."""
    judge: Judge | None = field(default=None, compare=False)
    """``--only-new``: judges each claims file read at REF (``None``: not judged)."""


@dataclass(frozen=True)
class BaseDeployment:
    """One deployment at REF, resolved, with its metrics and evidence blobs."""

    deployment: Deployment
    metrics: Metrics
    evidence_blobs: dict[str, str | None]
    accept_length_half_unit: float | None = None
    """Half a unit of the last digit ``evidence.accept_length`` is written with at REF."""
    findings: tuple[Finding, ...] | None = None
    """``--only-new``: the deployment's findings at REF (``None``: not judged)."""


@dataclass(frozen=True)
class BaseFile:
    """A claims file at REF: its deployments by name, or why it could not be read
    (``error``: the whole file; ``errors``: one deployment's, by name; such
    deployments count as new, and SG410 says why)."""

    deployments: dict[str, BaseDeployment]
    error: str | None = None
    errors: dict[str, str] = field(default_factory=dict)
    findings: BaseFindings | None = None
    """``--only-new``: what the rules found in the file at REF (``None``: not judged)."""


def open_baseline(ref: str, folder: Path) -> BaselineSource:
    """Resolve ``--baseline REF`` in the repository holding ``folder``.

    Raises:
        UsageError: no git repository, or REF names no commit (naming ``--baseline``).
    """
    top = git.top_level(folder)
    if top is None:
        raise UsageError(f"--baseline {ref}: {folder} is not inside a git repository")
    commit = git.resolve_commit(top, ref, "--baseline")
    try:
        found = git.renames(top, commit)
    except git.GitError as exc:
        raise UsageError(f"--baseline {ref}: {exc}") from None
    return BaselineSource(ref=ref, commit=commit, top=top, renames=found)


PREFETCH_BYTES = 32 * 1024 * 1024
""":func:`prefetch` reads claims files at REF in groups of at most this many bytes."""


def prefetch(source: BaselineSource, claims: list[Path]) -> None:
    """Read every claims file of the run at REF ahead, in a few git calls (instead of
    a few per file). A failure leaves them to be read one by one."""
    rels = []
    for path in claims:
        rel = repo_path(source, path)
        if rel is not None:
            rels.append(source.renames.get(rel, rel))
    for start in range(0, len(rels), 256):
        group = rels[start : start + 256]
        refused: dict[str, str] = {}
        try:
            found = git.read_blobs(
                source.top, source.commit, group, limit=PREFETCH_BYTES // 256, refused=refused
            )
        except git.GitError:
            return
        for rel in group:
            if rel not in refused:  # a link refused at REF is read (and said) on its own
                source.claims_at_ref[rel] = found.get(rel)


def repo_path(source: BaselineSource, path: Path) -> str | None:
    """``path`` relative to the repository top with ``/``, ``None`` when outside."""
    absolute = Path(os.path.realpath(path))
    try:
        return absolute.relative_to(os.path.realpath(source.top)).as_posix()
    except ValueError:
        return None


def _standing_path(source: BaselineSource, path: Path) -> str | None:
    """``path`` relative to the repository top where it stands (its folder resolved,
    not its name: a claims file reached through a symlink is named by the link)."""
    absolute = Path(os.path.realpath(os.path.dirname(os.path.abspath(path)))) / path.name
    try:
        return absolute.relative_to(os.path.realpath(source.top)).as_posix()
    except ValueError:
        return None


def evidence_paths(raw: dict[str, Any], claims_rel: str) -> dict[str, str]:
    """``evidence.metrics`` key → repository-relative path of that evidence file."""
    evidence = raw.get("evidence")
    metrics = evidence.get("metrics") if isinstance(evidence, dict) else None
    if not isinstance(metrics, dict):
        return {}
    folder = posixpath.dirname(claims_rel)
    out: dict[str, str] = {}
    for key in EVIDENCE_KEYS:
        value = metrics.get(key)
        if isinstance(value, str):
            out[key] = posixpath.normpath(posixpath.join(folder, value))
    return out


def _inside(path: str) -> bool:
    return not (path.startswith("../") or path == ".." or path.startswith("/"))


def base_suppressions(source: BaselineSource, claims: Path) -> frozenset[str]:
    """The rule codes named by inline suppressions in ``claims`` as it was at REF
    (empty when the file is new, unreadable or outside the repository at REF)."""
    from specgate.project.suppress import scan

    head_rel = repo_path(source, claims)
    if head_rel is None:
        return frozenset()
    base_rel = source.renames.get(head_rel, head_rel)
    entry = source.claims_at_ref.get(base_rel)
    if entry is None and base_rel not in source.claims_at_ref:
        try:
            entry = git.read_blobs(source.top, source.commit, [base_rel]).get(base_rel)
        except git.GitError:
            return frozenset()
    if entry is None or entry[1] is None:
        return frozenset()
    text = entry[1].decode("utf-8", "replace")
    return frozenset(d.code for d in scan(text).directives)


def base_config(source: BaselineSource, config: Config) -> Config:
    """``config`` (the configuration in force for a claims file) as its file was at
    REF: the defaults when the file is new or unreadable at REF; ``config`` itself
    when it is not in the repository (a file the change cannot edit) or is the
    built-in defaults."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    from specgate.project.config import DEFAULT, parse_config

    if config.path is None:
        return config
    rel = repo_path(source, Path(config.path))
    if rel is None:
        return config
    try:
        entry = git.read_blobs(source.top, source.commit, [rel]).get(rel)
        if entry is None or entry[1] is None:
            return DEFAULT
        text = entry[1].decode("utf-8")
        data = tomllib.loads(text)
        tool = data.get("tool")
        table = tool.get("specgate") if isinstance(tool, dict) else None
        if table is None and Path(rel).name != "pyproject.toml":
            table = {k: v for k, v in data.items() if k != "tool"}
        if not isinstance(table, dict):
            return DEFAULT
        return parse_config(table, config.path, text, Path(config.path).parent)
    except (git.GitError, UnicodeDecodeError, tomllib.TOMLDecodeError, InputError):
        return DEFAULT


def read_base(
    source: BaselineSource, claims: Path, min_accept_length: float | None = None
) -> BaseFile | None:
    """The claims file ``claims`` (on disk, at head) as it was at REF: under the name
    it stands at (a symlink's own name, else git's rename pair), else where it leads.

    Args:
        source: the open baseline.
        claims: the head claims file.
        min_accept_length: the run's floor override (the base is judged with the
            head's settings and its own policy blocks).

    Returns:
        ``None`` when the file is new (absent at REF under both names), else its
        deployments.
    """
    real = repo_path(source, claims)
    if real is None:
        return BaseFile({}, f"{claims} is outside the repository at {source.top}")
    standing = _standing_path(source, claims) or real
    found: BaseFile | None = None
    for head_rel in dict.fromkeys((standing, real)):
        found = read_base_at(source, source.renames.get(head_rel, head_rel), min_accept_length)
        if found is not None:
            return found
    return found


def read_base_at(
    source: BaselineSource, base_rel: str, min_accept_length: float | None = None
) -> BaseFile | None:
    """The claims file at ``base_rel`` at REF, read and resolved once per run;
    ``None`` when no such file is there."""
    key = (base_rel, min_accept_length)
    if key not in source.read_at_ref:
        source.read_at_ref[key] = _read_base_at(source, base_rel, min_accept_length)
    return source.read_at_ref[key]


def _read_base_at(
    source: BaselineSource, base_rel: str, min_accept_length: float | None
) -> BaseFile | None:
    if base_rel in source.claims_at_ref and source.claims_at_ref[base_rel] is None:
        return None
    entry = source.claims_at_ref.get(base_rel)
    if entry is None or entry[1] is None:
        refused: dict[str, str] = {}
        try:
            entry = git.read_blobs(source.top, source.commit, [base_rel], refused=refused).get(
                base_rel
            )
        except git.GitError as exc:
            return BaseFile({}, f"cannot read {base_rel} at {source.ref}: {exc}")
        if base_rel in refused:
            return BaseFile({}, f"at {source.ref}: {refused[base_rel]}")
    if entry is None:
        return None
    text = entry[1]
    if text is None:
        return BaseFile({}, f"{base_rel} at {source.ref} is larger than {git.MAX_BLOB_BYTES} bytes")
    with tempfile.TemporaryDirectory(prefix="specgate-base-") as temp:
        root = Path(temp)
        (root / ".git").mkdir()  # the copy is its own repository root for references
        try:
            return _read_copy(source, root, base_rel, text, min_accept_length)
        except InputError as exc:
            return BaseFile({}, f"at {source.ref}: {exc.one_line()}")
        except git.GitError as exc:
            return BaseFile({}, f"at {source.ref}: {exc}")
        except OSError as exc:  # a name the file system refuses
            return BaseFile({}, f"at {source.ref}: cannot copy {base_rel}: {exc.strerror or exc}")
        except (RecursionError, OverflowError, ValueError) as exc:
            return BaseFile({}, f"at {source.ref}: {base_rel} cannot be interpreted ({exc})")


def lookup(
    source: BaselineSource,
    base_file: BaseFile | None,
    name: str,
    min_accept_length: float | None = None,
) -> tuple[BaseDeployment | None, str | None]:
    """Deployment ``name`` at REF and why it could not be read: from its own claims
    file at REF (``base_file``), else from any other claims file at REF that holds a
    deployment of that name (the highest AL when several do: the strictest base).
    Names are compared by :func:`~specgate.core.names.name_key` (case, spacing,
    invisible characters and Unicode spelling do not make a deployment new).

    Returns:
        ``(deployment, None)``; ``(None, reason)`` when it exists at REF but cannot
        be read; ``(None, None)`` when it is new.
    """
    key = name_key(name)
    if base_file is not None:
        own, error = _named(base_file, name, key)
        if own is not None or error is not None:
            return own, error
    found: list[BaseDeployment] = []
    errors: list[str] = []
    for rel in _names_at_ref(source).get(key, []):
        other = read_base_at(source, rel, min_accept_length)
        if other is None or other is base_file:
            continue
        there, error = _named(other, name, key)
        if there is not None:
            found.append(there)
        elif error is not None or other.error:
            errors.append(error or other.error or "")
    if found:
        return max(found, key=lambda b: b.metrics.accept_length or 0.0), None
    if errors:
        return None, errors[0]
    if base_file is not None and base_file.error is not None:
        return None, base_file.error
    return None, None


def _named(base_file: BaseFile, name: str, key: str) -> tuple[BaseDeployment | None, str | None]:
    """The deployment of ``base_file`` named ``name`` (exactly, else by ``key``) and
    why it could not be read."""
    if name in base_file.deployments:
        return base_file.deployments[name], None
    if name in base_file.errors:
        return None, base_file.errors[name]
    for other, deployment in base_file.deployments.items():
        if name_key(other) == key:
            return deployment, None
    for other, error in base_file.errors.items():
        if name_key(other) == key:
            return None, error
    return None, None


def _names_at_ref(source: BaselineSource) -> dict[str, list[str]]:
    """Deployment name key → claims files at REF holding it: every claims file at REF
    (:data:`MAX_CLAIMS_AT_REF`), read in a few git calls and parsed for names only."""
    if source.names_at_ref:
        return source.names_at_ref[0]
    from specgate.load.read import parse_text
    from specgate.project.discovery import is_claims_name

    names: dict[str, list[str]] = {}
    source.names_at_ref.append(names)
    try:
        paths = git.claims_files_at(source.top, source.commit, is_claims_name)
        blobs = git.read_blobs(source.top, source.commit, paths[:MAX_CLAIMS_AT_REF])
    except git.GitError:
        return names
    for rel, (_, content) in blobs.items():
        if content is None:
            continue
        try:
            document = parse_text(
                content.decode("utf-8-sig"), rel, json_syntax=rel.endswith(".json")
            )
        except (InputError, UnicodeDecodeError, RecursionError, ValueError):
            continue
        data = document.data if isinstance(document.data, dict) else {}
        raws = data.get("deployments")
        for raw in raws if isinstance(raws, list) else []:
            if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                holders = names.setdefault(name_key(raw["name"]), [])
                if rel not in holders:
                    holders.append(rel)
    return names


def _write(root: Path, rel: str, content: bytes) -> Path:
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return target


def _read_copy(
    source: BaselineSource,
    root: Path,
    base_rel: str,
    text: bytes,
    min_accept_length: float | None,
) -> BaseFile:
    from specgate.inputs.metrics.stream import METRICS_MAX_BYTES
    from specgate.load.read import load_document

    claims = _write(root, base_rel, text)
    document = load_document(claims, base_rel)
    data = document.data if isinstance(document.data, dict) else {}
    raws = data.get("deployments")
    if not isinstance(raws, list):
        return BaseFile({}, f"{base_rel} at {source.ref} holds no deployments list")
    folder = posixpath.dirname(base_rel)
    named = {
        rel
        for raw in raws
        if isinstance(raw, dict)
        for written in deployment_references(raw)
        if _inside(rel := posixpath.normpath(posixpath.join(folder, written)))
    }
    if len(named) > MAX_REFERENCED_FILES:
        raise InputError(
            f"{base_rel} references more than {MAX_REFERENCED_FILES} files; not compared"
        )
    # Up to the largest limit any reader has (metrics files, 256 MiB): each reader then
    # applies its own, as at the head (the 1 MiB blob limit is the claims file's).
    refused: dict[str, str] = {}
    at_ref = git.copy_blobs(
        source.top, source.commit, sorted(named), root, METRICS_MAX_BYTES, refused
    )
    # Every other file a reader follows (a Compose .env, an options file, a sourced
    # file, an override) is brought from REF when the reader asks for it: the same
    # readers, REF's tree as their file system (specgate.core.revision_tree).
    tree = GitTree(
        source.top,
        source.commit,
        Path(os.path.realpath(root)),
        METRICS_MAX_BYTES,
        MAX_REFERENCED_FILES,
        blobs=dict(at_ref),
    )
    with reading(tree):
        return _read_deployments(source, tree, document, claims, raws, refused, min_accept_length)


def _read_deployments(  # noqa: PLR0917 - one claims file's inputs at REF
    source: BaselineSource,
    tree: GitTree,
    document: Any,
    claims: Path,
    raws: list[Any],
    refused: dict[str, str],
    min_accept_length: float | None,
) -> BaseFile:
    """Each deployment of the claims file at REF, read through ``tree``."""
    folder = posixpath.dirname(document.file)
    found: dict[str, BaseDeployment] = {}
    errors: dict[str, str] = {}
    for index, raw in enumerate(raws):
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            continue
        name = raw["name"]
        if name in found or name in errors:
            continue
        links = [
            refused[rel]
            for written in deployment_references(raw)
            if (rel := posixpath.normpath(posixpath.join(folder, written))) in refused
        ]
        if links:  # a symbolic link at REF that the head's confinement would refuse
            errors[name] = f"at {source.ref}: {links[0]}"
            continue
        try:
            found[name] = _base_deployment(
                raw, index, document, claims, tree.blobs, min_accept_length
            )
        except InputError as exc:
            errors[name] = f"at {source.ref}: {exc.one_line()}"
        except (RecursionError, OverflowError, ValueError) as exc:
            errors[name] = f"at {source.ref}: a file of {name!r} cannot be interpreted ({exc})"
    if source.judge is None:
        return BaseFile(found, errors=errors)
    judged = _judged(source.judge, document, claims, min_accept_length)
    if judged is not None:
        found = {
            name: replace(base, findings=judged.by_name.get(name, ()))
            for name, base in found.items()
        }
    return BaseFile(found, errors=errors, findings=judged)


def _judged(judge: Judge, document: Any, claims: Path, floor: float | None) -> BaseFindings | None:
    """``judge``'s findings of the copied claims file, ``None`` when a referenced file
    cannot be read or interpreted there (its deployments' findings then count as new)."""
    try:
        return judge(document, claims, floor)
    except (InputError, RecursionError, OverflowError, ValueError, OSError):
        return None


def _base_deployment(  # noqa: PLR0917 - one deployment's inputs
    raw: dict[str, Any],
    index: int,
    document: Any,
    claims: Path,
    at_ref: dict[str, str],
    min_accept_length: float | None,
) -> BaseDeployment:
    """One deployment at REF, resolved as the head resolves its own.

    Raises:
        InputError: a referenced file that cannot be read, or a deployment the
            resolver refuses (its first error, at REF).
    """
    from specgate.model.build import build_deployment
    from specgate.model.resolve import resolve

    deployment, _ = build_deployment(raw, index, document.scalar_text)
    deployment, _ = resolve(deployment, raw, document, claims)
    inputs = deployment.inputs
    unread = inputs.model_unread if inputs is not None else None
    if unread is not None:
        # a model config not read at REF (SG312/SG315 at the head) leaves no G to price
        # the base's theory with: the base is unreadable (SG410), as when that stopped
        # the run (docs/change-gate.md#sg410-and-sg412)
        raise InputError(unread.reason, unread.file or None, unread.line, unread.column)
    # a serving config value not read at REF (SG312/SG313/SG314/SG315/SG307 at the head)
    # is judged there as at the head: on what the claims file states. The AL, the claim
    # and the measured speedup are still compared (SG401/SG402); the config digest is not
    # known, so SG403 does not compare it (view_of, BaseView.config_unread)
    if inputs is not None and inputs.acceptance_unread is not None:
        raise InputError(inputs.acceptance_unread, document.file)
    measured = inputs.metrics_unread if inputs is not None else None
    if measured is not None:
        # a metrics value not usable at REF (SG316 at the head) leaves no base AL to
        # compare with: the base is unreadable (SG410), as when that stopped the run
        raise InputError(measured.reason, measured.file or None, measured.line, measured.column)
    base_rel = document.file
    blobs = {key: at_ref.get(rel) for key, rel in evidence_paths(raw, base_rel).items()}
    metrics = derived.compute(deployment, min_accept_length)
    stated = (
        ("evidence.measured_speedup_se", deployment.evidence.measured_speedup_se),
        ("the measured speedup", derived.measured_speedup(deployment)),
        ("claims.speedup", deployment.claimed_speedup),
    )
    unpriced = derived.non_finite(metrics) + [
        (name, v) for name, v in stated if v is not None and not math.isfinite(v)
    ]
    if unpriced:  # never compared with NaN or infinity (SG410 says why)
        name, value = unpriced[0]
        raise InputError(f"{name} is not a finite number ({value}) at the base revision")
    from specgate.core.numbers import half_unit

    written = document.scalar_text(("deployments", index, "evidence", "accept_length"))
    return BaseDeployment(
        deployment, metrics, blobs, None if written is None else half_unit(written)
    )


def head_blobs(source: BaselineSource, raw: dict[str, Any], claims: Path) -> dict[str, str | None]:
    """``evidence.metrics`` key → blob id of the head's evidence file."""
    head_rel = repo_path(source, claims)
    if head_rel is None:
        return {}
    from specgate.core.paths import PathProblem, confined

    found: dict[str, str | None] = {}
    for key, rel in evidence_paths(raw, head_rel).items():
        if not _inside(rel):
            continue
        if rel not in source.head_hashes:
            try:
                # confined like every file read: a symlink out is never hashed, so no
                # outside file decides whether the evidence "changed"
                confined(source.top / rel, top=source.top)
                source.head_hashes[rel] = git.hash_object(source.top, rel)
            except PathProblem:
                source.head_hashes[rel] = None
        found[key] = source.head_hashes[rel]
    return found


def measurement(deployment: Deployment) -> tuple[object, ...] | None:
    """What a deployment's evidence files measured, as comparable values (AL, D, the
    profile, the histogram, steps, rates), ``None`` when it reads no metrics file: two
    revisions whose files differ only in bytes that no reader takes a number from (a
    comment, padding, reordered samples) measured the same thing."""
    acceptance = deployment.inputs.acceptance if deployment.inputs else None
    if acceptance is None or acceptance.path is None:
        return None
    return (
        acceptance.format,
        acceptance.accept_length,
        acceptance.draft_length,
        acceptance.min_draft_length,
        acceptance.marginal,
        acceptance.histogram,
        acceptance.steps,
        acceptance.acceptance_rate,
        acceptance.estimate,
    )


def unreadable_view(source: BaselineSource, error: str) -> BaseView:
    """The view of a deployment that exists at REF but cannot be read there: nothing
    to compare (SG401–SG403 stay silent), ``error`` for SG410."""
    return BaseView(
        ref=source.ref,
        commit=source.commit,
        accept_length=None,
        accept_length_se=None,
        theoretical_speedup=None,
        claimed_speedup=None,
        measured_speedup=None,
        config_digest="",
        evidence_files_same=False,
        max_accept_length_drop=None,
        error=error,
    )


def view_of(
    source: BaselineSource,
    base: BaseDeployment,
    head: dict[str, str | None],
    head_deployment: Deployment | None = None,
) -> BaseView:
    """What the baseline rules see of ``base``, with the head's evidence blobs: the
    evidence is the same when every file has the same blob, or when the head's files
    measure exactly what the base's did (:func:`measurement`), so touching an evidence
    file does not dodge SG402/SG403."""
    inputs = base.deployment.inputs
    acceptance = inputs.acceptance if inputs else None
    unread = inputs.engine_unread if inputs else None
    same = head == base.evidence_blobs
    if not same and head_deployment is not None and head.keys() == base.evidence_blobs.keys():
        measured = measurement(base.deployment)
        same = measured is not None and measured == measurement(head_deployment)
    return BaseView(
        ref=source.ref,
        commit=source.commit,
        accept_length=base.metrics.accept_length,
        accept_length_se=standard_error(acceptance.histogram) if acceptance else None,
        theoretical_speedup=base.metrics.theoretical_speedup,
        claimed_speedup=base.deployment.claimed_speedup,
        measured_speedup=derived.measured_speedup(base.deployment),
        config_digest="" if unread is not None else config_digest(base.deployment),
        evidence_files_same=same,
        max_accept_length_drop=base.deployment.max_accept_length_drop,
        measured_speedup_se=base.deployment.evidence.measured_speedup_se,
        max_speedup_drop=base.deployment.max_speedup_drop,
        accept_length_estimate=base.deployment.accept_length_estimate is not None,
        renamed_from=(
            base.deployment.name
            if head_deployment is not None and head_deployment.name != base.deployment.name
            else None
        ),
        accept_length_half_unit=base.accept_length_half_unit,
        measured_speedup_half_unit=base.deployment.evidence.printed_half_units[0],
        draft_length=base.metrics.draft_length,
        config_fields=() if unread is not None else tuple(digest_fields(base.deployment).items()),
        config_unread=None if unread is None else unread.reason,
        draft_depth_ratio=base.metrics.draft_depth_ratio,
        proven_draft_depth_ratio=base.metrics.proven_draft_depth_ratio,
        draft_depth_ratio_source=base.metrics.draft_depth_ratio_source,
    )


def head_standard_error(deployment: Deployment) -> float | None:
    """SE of the head's AL from its per-step distribution, else ``None``."""
    acceptance = deployment.inputs.acceptance if deployment.inputs else None
    return standard_error(acceptance.histogram) if acceptance else None


def z_of(base: BaseView, head_al: float | None, head_se: float | None) -> float | None:
    """z of the AL change, when both sides give standard errors."""
    if (
        head_al is None
        or base.accept_length is None
        or head_se is None
        or base.accept_length_se is None
    ):
        return None
    return z_score(head_al, base.accept_length, head_se, base.accept_length_se)


def baseline_json(
    source: BaselineSource,
    base: BaseView | None,
    head: Deployment,
    metrics: Metrics,
    error: str | None,
) -> dict[str, Any]:
    """The JSON ``baseline`` block of one deployment (values null when it is new)."""
    if base is not None and base.error is not None:
        error, base = base.error, None
    out: dict[str, Any] = {
        "ref": source.ref,
        "commit": source.commit,
        "new": base is None,
        "accept_length": None,
        "theoretical_speedup": None,
        "claimed_speedup": None,
        "measured_speedup": None,
        "config_digest": None,
        "delta_accept_length": None,
        "delta_measured_speedup": None,
        "z": None,
        "error": error,
        "renamed_from": None if base is None else base.renamed_from,
    }
    if base is None:
        return out
    out["accept_length"] = base.accept_length
    out["theoretical_speedup"] = base.theoretical_speedup
    out["claimed_speedup"] = base.claimed_speedup
    out["measured_speedup"] = base.measured_speedup
    out["config_digest"] = base.config_digest or None
    if metrics.accept_length is not None and base.accept_length is not None:
        out["delta_accept_length"] = metrics.accept_length - base.accept_length
    if metrics.measured_speedup is not None and base.measured_speedup is not None:
        out["delta_measured_speedup"] = metrics.measured_speedup - base.measured_speedup
    z = z_of(base, metrics.accept_length, head_standard_error(head))
    out["z"] = z if z is None or math.isfinite(z) else None
    return out
