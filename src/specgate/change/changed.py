"""``check --changed FILE…`` / ``--changed-since REF``: which claims files a change
touches (docs/change-gate.md#changed-files, docs/change-gate.md#baseline).

A changed claims file is checked. For any other changed file, the claims files of
the repository (found from its top-level, as folder discovery finds them) that
reference it — ``model.hf_config``, ``speculation.engine_config``,
``speculation.draft_hf_config``, ``evidence.metrics.path`` / ``baseline_path`` —
are checked, so a commit that edits only a serving config still runs the claims
that read it. A file neither a claims file nor referenced is ignored.

A reference is affected by a changed path when resolving it meets that path
(:func:`~specgate.core.paths.link_walk`, inside the repository, at most
:data:`~specgate.change.git.MAX_LINK_HOPS` links): the changed file itself, a
symbolic link on the way to it (``m.prom → bench/real.prom``) or a folder link
(``bench → data``), whatever name the link has. A changed path that is a link to a
file also stands for that file.

The reverse lookup reads every claims file's text once and parses only those
whose text could name a changed file: a path can only be written in YAML or JSON
either literally or through an escape (then the text holds a backslash), and a
literal path that leads to a changed file holds its base name or the name of a
symbolic link in the repository whose resolution meets the changed file or one of
its folders. So most files cost one read and a token lookup. The links considered
are those the claims-file walk meets and those the git index records (a pull
request's links are tracked), at most :data:`MAX_LINKS` together, each followed
for at most :data:`~specgate.change.git.MAX_LINK_HOPS` links; a repository with
more links has every claims file parsed (the lookup stays exact, only slower).
"""

from __future__ import annotations

import os
import posixpath
import re
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specgate.change import git
from specgate.core.errors import InputError
from specgate.core.paths import link_walk, real_folder, repository_root, shown_path
from specgate.model.reference_keys import deployment_references, engine_config_references
from specgate.project.discovery import SKIPPED_FOLDERS, is_claims_name

_DELIMITERS = re.compile(r"[\s\"'/:,\[\]{}]+")
"""What separates a written path's base name from its surroundings in YAML or JSON
text (blanks, quotes, folder separators, flow punctuation)."""

MAX_LINKS = 10_000
"""Symbolic links of one repository the name prefilter follows (each for at most
:data:`~specgate.change.git.MAX_LINK_HOPS` links); past it every claims file is
parsed."""


class _NameFilter:
    """Could ``text`` name one of ``names`` (base names of changed files)? Names
    free of delimiters are looked up among the text's tokens (a set, so the cost
    does not grow with the number of changed files); others by substring."""

    def __init__(self, names: set[str], *, everything: bool = False) -> None:
        self.plain = {n for n in names if not _DELIMITERS.search(n)}
        self.odd = [n for n in names if _DELIMITERS.search(n)]
        self.everything = everything

    def may_name(self, text: str) -> bool:
        if self.everything or "\\" in text:  # an escape may spell any name
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


def _changed_keys(path: Path, top: Path) -> set[str]:
    """The paths inside ``top`` a changed ``path`` stands for: itself, its folders'
    links resolved (a hand-given ``bench/real.prom`` is ``data/real.prom`` when
    ``bench → data``), and, when it is a link to a file inside, that file. Nothing
    for a path outside ``top``: no file outside decides which claims files are
    checked."""
    keys: set[str] = set()
    folder = link_walk(path.parent, top, git.MAX_LINK_HOPS).end
    if folder is not None:
        keys.add(str(folder / path.name))
    end = link_walk(path, top, git.MAX_LINK_HOPS).end
    if end is not None and not end.is_dir():
        keys.add(str(end))
    return keys


def _link_names(links: list[Path], top: Path, keys: set[str]) -> set[str]:
    """The names of the ``links`` whose resolution meets a changed path (``keys``)
    or one of its folders: a claims file naming such a link may reach the change
    without writing its base name."""
    root = real_folder(top)
    near: set[str] = set()
    for key in keys:
        near.add(key)
        near.update(str(p) for p in Path(key).parents if p != root and p.is_relative_to(root))
    names: set[str] = set()
    for link in links:
        walk = link_walk(link, top, git.MAX_LINK_HOPS)
        if walk.cut or not near.isdisjoint(walk.steps):  # a cut chain may lead anywhere
            names.add(link.name)
    return names


def _repository_links(top: Path, walked: list[Path]) -> list[Path] | None:
    """The symbolic links the prefilter considers: those the claims-file walk met
    (``walked``) and those the git index records (links in skipped folders such as
    ``node_modules`` included); ``None`` past :data:`MAX_LINKS`."""
    try:
        tracked = git.tracked_links(top, MAX_LINKS)
    except git.GitError:
        tracked = []  # not a git repository: the walk's links are all there are
    if tracked is None:
        return None
    links = list(dict.fromkeys([*walked, *(top / name for name in tracked)]))
    return None if len(links) > MAX_LINKS else links


def all_claims_files(top: Path, links: list[Path] | None = None) -> list[Path]:
    """Every claims file under ``top`` with a default name (folders skipped as in
    discovery); the symbolic links met on the way (files and folders) are added to
    ``links`` when given, at most :data:`MAX_LINKS` + 1 of them."""
    found: list[Path] = []
    for root, dirs, files in os.walk(top):
        base = Path(root)
        if links is not None and len(links) <= MAX_LINKS:
            links.extend(base / n for n in (*dirs, *files) if os.path.islink(base / n))
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
    """The files the claims file's engine configs read besides themselves, relative to
    its ``folder``: the options files their launch commands name (``trtllm-serve
    --extra_llm_api_options``, ``vllm serve --config``, also through a variable or a
    quoted piece, ``cf""g.yaml``), the Compose ``.env`` beside a Compose file — every
    file the engine reader opens (:func:`specgate.load.read.recording`), the source of
    truth: a change to one of them changes the deployment though the claims file
    never names it. ``wanted`` is unused: every engine config is read (its text need
    not spell the name of a file it reads)."""
    del wanted
    from specgate.core.paths import PathProblem, confined
    from specgate.inputs.engines import read_engine_file
    from specgate.inputs.engines.follow import named_files
    from specgate.load.read import recording

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
            except (PathProblem, OSError, ValueError):
                continue  # a missing or escaping config: `check` says so
            with recording() as opened:
                # what it opened before it stopped (an input error) still counts
                with suppress(InputError, RecursionError, OverflowError, ValueError):
                    read_engine_file(real, rel)
                try:
                    named = named_files(real, rel)
                except (RecursionError, OverflowError, ValueError):
                    named = []
            found.extend(Path(os.path.relpath(top / n, folder)).as_posix() for n in named)
            found.extend(_sourced(real, Path(engine).parent, folder))
            found.extend(
                Path(os.path.relpath(path, folder)).as_posix()
                for path in sorted(opened)
                if path != Path(os.path.abspath(real))
            )
    return found


def _sourced(script: Path, beside: Path, folder: Path) -> list[str]:
    """The files a shell script sources (``. ./x.env``, ``source x.env``) with a
    literal path, relative to ``folder``: specgate does not read them (what they set
    is unsettled), but a change to one changes what the script runs. A path is taken
    from the script's folder (``beside``), where such scripts are run from."""
    from specgate.inputs.cmdline import split_commands
    from specgate.load.read import read_text

    if script.suffix.lower() not in (".sh", ".bash"):
        return []
    try:
        commands = split_commands(read_text(script, script.name), script=True)
    except InputError:
        return []
    return [
        Path(os.path.relpath(beside / c.argv[1], folder)).as_posix()
        for c in commands
        if len(c.argv) > 1 and c.argv[0] in (".", "source") and not c.unresolved
        and not posixpath.isabs(c.argv[1]) and "\0" not in c.argv[1]
    ]


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
    others: list[Path] = []
    for given in changed:
        path = given if given.is_absolute() else here / given
        if is_claims_name(path.name):
            if path.is_file() or path.is_symlink():  # a link out: `check` refuses it
                chosen.setdefault(_real_key(path), (path, shown_path(path, here)))
            else:
                result.skipped.append((shown_path(path, here), "deleted"))
            continue
        others.append(path)
    found: set[Path] = set()
    tops = {repository_root(p.parent if p.parent.exists() else here) for p in others}
    for top in sorted(tops):
        keys: dict[str, Path] = {}  # a path a changed file stands for → that file
        for path in others:
            keys.update(dict.fromkeys(_changed_keys(path, top), path))
        if not keys:
            continue
        walked: list[Path] = []
        claims_files = all_claims_files(top, walked)
        links = _repository_links(top, walked)
        names = {p.name for p in others} | {posixpath.basename(key) for key in keys}
        if links is not None:
            names |= _link_names(links, top, set(keys))
        wanted = _NameFilter(names, everything=links is None)
        for claims in claims_files:
            # a claims file that is a link (or in a linked folder) reads where it leads:
            # `deploy/specgate.yaml → ../shared/common.yaml` changes with common.yaml
            itself = link_walk(claims, top, git.MAX_LINK_HOPS)
            hits = {keys[step] for step in itself.steps if step in keys}
            more, cut = _claims_hits(claims, top, here, wanted, keys, chosen, result)
            hits |= more
            if hits or cut:
                chosen.setdefault(_real_key(claims), (claims, shown_path(claims, here)))
                found |= hits
    result.ignored = sorted({shown_path(p, here) for p in others if p not in found})
    result.claims = sorted(chosen.values(), key=lambda pair: pair[1])
    return result


def _claims_hits(  # noqa: PLR0917 - the lookup's state, passed down
    claims: Path,
    top: Path,
    here: Path,
    wanted: _NameFilter,
    keys: dict[str, Path],
    chosen: dict[str, tuple[Path, str]],
    result: Affected,
) -> tuple[set[Path], bool]:
    """The changed files (values of ``keys``) that the claims file ``claims``
    references, through any symbolic links inside ``top``, and whether a reference's
    chain of links was longer than :data:`~specgate.change.git.MAX_LINK_HOPS` (then
    it may lead to a changed file: the claims file is checked); a claims file that
    cannot be read or parsed is added to ``result.skipped`` instead."""
    from specgate.core.paths import PathProblem, confined
    from specgate.load.read import parse_text, read_text

    shown = shown_path(claims, here)
    try:
        # confined like every file read: a claims symlink out of the repository is
        # never read, so its target decides nothing
        target = confined(claims)
    except PathProblem as problem:
        result.skipped.append((shown, str(problem)))
        return set(), False
    if str(target) in chosen:
        return set(), False
    try:
        text = read_text(target, shown)
    except InputError as exc:
        result.skipped.append((shown, exc.one_line()))
        return set(), False
    names_directly = wanted.may_name(text)
    if not names_directly and "engine_config" not in text:
        return set(), False
    try:
        document = parse_text(text, shown, json_syntax=claims.suffix == ".json")
    except InputError as exc:
        result.skipped.append((shown, exc.one_line()))
        return set(), False
    except (RecursionError, OverflowError, ValueError):
        result.skipped.append((shown, "cannot be interpreted"))
        return set(), False
    folder = claims.parent
    named = references(document.data) if names_directly else []
    named += _options_files(document.data, folder, top, wanted)
    hits: set[Path] = set()
    cut = False
    for relative in named:
        if posixpath.isabs(relative) or "\0" in relative:
            continue
        walk = link_walk(folder / relative, top, git.MAX_LINK_HOPS)
        hits.update(keys[step] for step in walk.steps if step in keys)
        cut = cut or walk.cut
    return hits, cut
