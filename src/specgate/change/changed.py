"""``check --changed FILE…`` / ``--changed-since REF``: which claims files a change
touches (DESIGN.md §9.3, §9.5).

A changed claims file is checked. For any other changed file, the claims files of
the repository (found from its top-level, as folder discovery finds them) that
reference it — ``model.hf_config``, ``speculation.engine_config``,
``speculation.draft_hf_config``, ``evidence.metrics.path`` / ``baseline_path`` —
are checked, so a commit that edits only a serving config still runs the claims
that read it. A file neither a claims file nor referenced is ignored.

The reverse lookup reads every claims file's text once and parses only those
whose text could name a changed file: a path can only be written in YAML or JSON
either literally (then its base name appears in the text) or through an escape
(then the text holds a backslash). So most files cost one read and a substring
search.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specgate.core.errors import InputError
from specgate.core.paths import repository_root, shown_path
from specgate.model.reference_keys import deployment_references, engine_config_references
from specgate.project.discovery import SKIPPED_FOLDERS, is_claims_name

_DELIMITERS = re.compile(r"[\s\"'/:,\[\]{}]+")
"""What separates a written path's base name from its surroundings in YAML or JSON
text (blanks, quotes, folder separators, flow punctuation)."""


class _NameFilter:
    """Could ``text`` name one of ``names`` (base names of changed files)? Names
    free of delimiters are looked up among the text's tokens (a set, so the cost
    does not grow with the number of changed files); others by substring."""

    def __init__(self, names: set[str]) -> None:
        self.plain = {n for n in names if not _DELIMITERS.search(n)}
        self.odd = [n for n in names if _DELIMITERS.search(n)]

    def may_name(self, text: str) -> bool:
        if "\\" in text:  # an escape may spell any name
            return True
        if any(name in text for name in self.odd):
            return True
        if "''" in text and any("'" in name for name in self.odd):
            return True  # YAML single quotes write ' as ''

        return not self.plain.isdisjoint(_DELIMITERS.split(text))


@dataclass
class Affected:
    """The claims files to check, and what the lookup passed over.

    Attributes:
        claims: (file on disk, shown path) pairs, sorted by shown path, no repeats.
        ignored: changed files that are neither claims files nor referenced.
        skipped: (claims file, reason) for claims files the lookup could not parse,
            and deleted claims files.
    """

    claims: list[tuple[Path, str]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _keys(path: Path, top: Path | None = None) -> set[str]:
    """Ways to compare a path: its absolute normalised form and, when it stays inside
    the repository (``top``, else the one holding it), its real path
    (:func:`~specgate.core.paths.confined`): a symlink out of the repository is never
    followed, so no file outside decides which claims files are checked."""
    from specgate.core.paths import PathProblem, confined

    absolute = os.path.normpath(os.path.abspath(path))
    try:
        return {absolute, str(confined(Path(absolute), top=top, must_exist=False))}
    except PathProblem:
        return {absolute}


def all_claims_files(top: Path) -> list[Path]:
    """Every claims file under ``top`` with a default name (folders skipped as in
    discovery)."""
    found: list[Path] = []
    for root, dirs, files in os.walk(top):
        base = Path(root)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_FOLDERS
            and not d.endswith(".egg-info")
            and not (base / d / "pyvenv.cfg").exists()
        )
        found.extend(base / f for f in files if is_claims_name(f))
    return found


def references(data: Any) -> list[str]:
    """The referenced paths a parsed claims file writes (relative to itself)."""
    out: list[str] = []
    deployments = data.get("deployments") if isinstance(data, dict) else None
    if not isinstance(deployments, list):
        return out
    for raw in deployments:
        if not isinstance(raw, dict):
            continue
        out.extend(deployment_references(raw))
    return out


def _options_files(data: Any, folder: Path, top: Path, wanted: _NameFilter) -> list[str]:
    """The options files (``trtllm-serve --extra_llm_api_options``, ``vllm serve
    --config``) that the claims file's engine configs name, relative to its ``folder``: a
    change to one of them changes the deployment though the claims file never names
    it. An engine config is parsed only when its text may name a changed file."""
    from specgate.core.paths import PathProblem, confined
    from specgate.inputs.engines.follow import named_files
    from specgate.load.read import read_text

    found: list[str] = []
    deployments = data.get("deployments") if isinstance(data, dict) else None
    for raw in deployments if isinstance(deployments, list) else []:
        if not isinstance(raw, dict):
            continue
        for written in engine_config_references(raw):
            if posixpath.isabs(written) or "\0" in written:
                continue
            engine = os.path.normpath(folder / written)
            try:
                rel = Path(os.path.relpath(engine, top)).as_posix()
                if rel.startswith("../"):
                    continue
                # confined like every referenced file: a symlink out of the repository
                # is never read (`check` reports it at the claims file's line)
                real = confined(Path(engine))
                if not wanted.may_name(read_text(real, rel)):
                    continue
            except (InputError, PathProblem, OSError, ValueError, RecursionError):
                continue  # a missing, unreadable or escaping config: `check` says so
            try:
                named = named_files(real, rel)
            except (RecursionError, OverflowError, ValueError):
                continue  # a config specgate cannot interpret: `check` reports it
            found.extend(Path(os.path.relpath(top / n, folder)).as_posix() for n in named)
    return found


def _real_key(path: Path) -> str:
    """The key that names one claims file however it is reached: where it leads when
    it stays inside the repository, else its absolute path as written."""
    from specgate.core.paths import PathProblem, confined

    try:
        return str(confined(path))
    except PathProblem:
        return os.path.normpath(os.path.abspath(path))


def affected(changed: list[Path], cwd: Path | None = None) -> Affected:
    """The claims files ``changed`` files touch.

    Args:
        changed: changed files (relative to ``cwd`` or absolute); deleted files may
            be among them.
        cwd: the current folder (for shown paths).
    """
    here = cwd or Path.cwd()
    result = Affected()
    chosen: dict[str, tuple[Path, str]] = {}
    others: dict[str, Path] = {}
    for given in changed:
        path = given if given.is_absolute() else here / given
        if is_claims_name(path.name):
            if path.is_file() or path.is_symlink():  # a link out: `check` refuses it
                chosen.setdefault(_real_key(path), (path, shown_path(path, here)))
            else:
                result.skipped.append((shown_path(path, here), "deleted"))
            continue
        for key in _keys(path):
            others[key] = path
    found: set[str] = set()
    if others:
        wanted = _NameFilter({Path(p).name for p in others.values()})
        tops = {repository_root(p.parent if p.parent.exists() else here) for p in others.values()}
        for top in sorted(tops):
            for claims in all_claims_files(top):
                hits = _claims_hits(claims, top, here, wanted, others, chosen, result)
                if hits:
                    chosen.setdefault(_real_key(claims), (claims, shown_path(claims, here)))
                    found.update(str(others[h]) for h in hits)
    result.ignored = sorted({shown_path(p, here) for p in others.values() if str(p) not in found})
    result.claims = sorted(chosen.values(), key=lambda pair: pair[1])
    return result


def _claims_hits(  # noqa: PLR0917 - the lookup's state, passed down
    claims: Path,
    top: Path,
    here: Path,
    wanted: _NameFilter,
    others: dict[str, Path],
    chosen: dict[str, tuple[Path, str]],
    result: Affected,
) -> set[str]:
    """The keys of ``others`` (changed files) that the claims file ``claims``
    references; a claims file that cannot be read or parsed is added to
    ``result.skipped`` instead."""
    from specgate.core.paths import PathProblem, confined
    from specgate.load.read import parse_text, read_text

    shown = shown_path(claims, here)
    try:
        # confined like every file read: a claims symlink out of the repository is
        # never read, so its target decides nothing
        target = confined(claims)
    except PathProblem as problem:
        result.skipped.append((shown, str(problem)))
        return set()
    if str(target) in chosen:
        return set()
    try:
        text = read_text(target, shown)
    except InputError as exc:
        result.skipped.append((shown, exc.one_line()))
        return set()
    names_directly = wanted.may_name(text)
    if not names_directly and "engine_config" not in text:
        return set()
    try:
        document = parse_text(text, shown, json_syntax=claims.suffix == ".json")
    except InputError as exc:
        result.skipped.append((shown, exc.one_line()))
        return set()
    except (RecursionError, OverflowError, ValueError):
        result.skipped.append((shown, "cannot be interpreted"))
        return set()
    folder = claims.parent
    named = references(document.data) if names_directly else []
    named += _options_files(document.data, folder, top, wanted)
    hits: set[str] = set()
    for relative in named:
        if posixpath.isabs(relative) or "\0" in relative:
            continue
        try:
            hits |= _keys(folder / relative, top) & others.keys()
        except (OSError, ValueError):  # an over-long or undecodable name
            continue
    return hits
