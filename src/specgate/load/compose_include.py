"""Compose's top-level ``include:``: the services (and other resources) of other
Compose files imported into the model, as ``docker compose`` imports them
(docs/engines.md#containers).

Read at compose-spec/compose-go ``v2.9.1`` (``75fb1ab``, the one Docker Compose
v2.40.3 builds with, which ``tests/oracle/test_compose_include_oracle.py`` runs) and
``e70e961c`` (newer, Docker Compose v5): ``loader/include.go`` (``loadIncludeConfig``,
``ApplyInclude``, ``importResources``) and ``paths/resolve.go``:

- ``include`` is a list; an item is a path (short form) or a mapping with ``path`` (a
  path or a list: the first the included project's file, the others merged over it),
  ``project_directory`` and ``env_file`` (a path or a list).
- A relative ``path`` is taken from the including project's working folder (the top
  file's: ``localResourceLoader{WorkingDir}``; an included file's own includes: its
  project directory). ``project_directory`` defaults to the folder of the first
  path; the included files' relative paths (``env_file``, ``volumes``) are taken from
  it (``ResolvePaths``), so specgate rewrites them relative to the including model's
  folders.
- The included files are interpolated with the including project's variables, then
  the include's ``env_file`` (relative to the including working folder; default: the
  ``.env`` of its project directory) for names not yet set (``Mapping.Merge``).
  specgate interpolates the whole model once with the project's ``.env`` files, so an
  included file with a ``$`` whose include reads another ``.env`` is not followed.
- A resource of an included file that the including file (or another include) also
  defines: an error in ``v2.9.1`` unless both are equal (``conflicts with imported
  resource``); merged, the including file's over the included one, in ``e70e961c``.
  Which Compose runs is not known: a differing one is not followed. Likewise a
  service that ``extends`` a service only an include defines (``v2.9.1`` applies
  ``extends`` before ``include`` and refuses it; ``e70e961c`` after).
- A cycle is an error (``include cycle detected``).

- An entry's ``path``, ``project_directory`` and ``env_file`` are interpolated with the
  including project's variables before they are read (``loadIncludeConfig``:
  ``interp.Interpolate`` of each entry with ``options.Interpolate``; Docker Compose
  v2.40.3 asked: ``include: [${INC}/inc.yaml]`` with ``INC=sub`` in ``.env``, in its
  environment, or ``${INC:-sub}``, includes ``sub/inc.yaml``; with none, "open
  /inc.yaml: no such file or directory"). A reference no ``.env`` and no default
  settles is an :class:`~specgate.core.errors.UnsettledValue` at its ``$``: set outside
  the repository (SG313, the claims file's values are used), or, for a name the script
  running ``docker compose`` sets to a value specgate does not follow, the
  repository's (SG314) (docs/engines.md#unsettled-values).

Not followed (:class:`~specgate.core.errors.UnreadForm`: SG312 on the deployment, never
exit 2): a remote include (``oci://``, a git URL: any ``:``), an absolute path, ``~``,
a path out of the repository or through a symlink leading out, a file that does not
exist (Compose stops), more than :data:`MAX_INCLUDED` files or deeper than
:data:`MAX_DEPTH`, a cycle, and the cases above.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specgate.core.errors import UnreadForm, UnsettledValue
from specgate.core.paths import PathProblem, confined
from specgate.core.revision_tree import bring
from specgate.load.document import Document

#: Includes followed at most this deep, and at most this many files in one model.
MAX_DEPTH = 4
MAX_INCLUDED = 16
#: The top-level keys an include imports (``importResources``).
RESOURCES = ("services", "volumes", "networks", "secrets", "configs", "models")


@dataclass
class Imports:
    """What a file's ``include:`` brings: ``data`` the resources by key, ``sources``
    each included file's model, document and shown name (for positions), ``notes``."""

    data: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: list[tuple[Any, Document, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    count: int = 0


#: How an included file's model is made: (data, path, shown) → its model with
#: ``extends`` applied (given by compose_files, as ``over``, its merge: no import cycle).
Resolve = Callable[[Any, Path, str], Any]


@dataclass(frozen=True)
class Where:
    """The including model's folders: ``workdir`` its working folder (``env_file``
    paths are taken from it), ``folder`` the top file's (``volumes`` are), ``dotenvs``
    the ``.env`` files it is interpolated with, ``top`` the repository."""

    workdir: Path
    folder: Path
    dotenvs: frozenset[Path]
    top: Path
    #: the ``.env`` files in the order Compose reads them (the first to set a name wins)
    ordered: tuple[Path, ...] = ()
    #: the environment ``docker compose`` runs in, as a script sets it, and the names it
    #: sets to values not known here (:func:`specgate.load.compose_env.interpolated`)
    outer: tuple[tuple[str, str], ...] = ()
    unknown: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Readers:
    """How compose_files reads an included file (``load``: path, shown → its
    document), makes its model (``resolve``) and merges one model over another
    (``over``), handed in so this module does not import compose_files."""

    load: Callable[[Path, str], Document]
    resolve: Resolve
    over: Callable[[Any, Any], Any]


def apply_include(
    doc: Document, where: Where, readers: Readers, *,
    base: Path | None = None, shown_base: str | None = None, chain: tuple[Path, ...] = (),
    foreign_env: bool = False, imports: Imports | None = None,
) -> Imports:
    """The resources the ``include:`` of ``doc`` imports, its relative paths taken from
    ``base`` (default: ``where.workdir``) (module doc).

    Raises:
        UnreadForm: an include not followed (module doc), at its entry's line.
        InputError: an included file not parseable.
    """
    out = imports if imports is not None else Imports()
    shown = doc.file
    data = doc.data
    entries = data.get("include") if isinstance(data, Mapping) else None
    if entries is None:
        return out
    base = where.workdir if base is None else base
    shown_base = posixpath.dirname(shown) or "." if shown_base is None else shown_base
    if not isinstance(entries, list):
        raise UnreadForm("include: is not a list (Compose stops)", shown,
                         doc.locate(("include",)).line)
    if len(chain) >= MAX_DEPTH:
        raise UnreadForm(f"include: nested deeper than {MAX_DEPTH} files: not followed", shown)
    for index, written in enumerate(entries):
        try:
            entry = _interpolated(doc, index, written, where)
            _one(doc, entry, out, where=where, readers=readers, base=base,
                 shown_base=shown_base, chain=chain, foreign_env=foreign_env)
        except UnreadForm as exc:
            if exc.line is not None or exc.file != shown:
                raise
            raise UnreadForm(exc.reason, shown, doc.locate(("include", index)).line) from None
    return out


def _one(
    doc: Document, entry: object, out: Imports, *, where: Where, readers: Readers,
    base: Path, shown_base: str, chain: tuple[Path, ...], foreign_env: bool,
) -> None:
    """One ``include`` entry of ``doc`` imported into ``out`` (:func:`apply_include`)."""
    shown = doc.file
    paths, project_dir, env_files = _entry(entry, shown)
    files = [_local(p, base, shown_base, where.top, shown) for p in paths]
    first, first_shown = files[0]
    if first.resolve() in chain:
        raise UnreadForm(f"include cycle: {first_shown} includes itself (Compose stops)",
                         shown)
    out.count += len(files)
    if out.count > MAX_INCLUDED:
        raise UnreadForm(f"include: more than {MAX_INCLUDED} files: not followed", shown)
    if project_dir is None:
        pdir, shown_pdir = first.parent, posixpath.dirname(first_shown) or "."
    else:
        pdir, shown_pdir = _local(project_dir, base, shown_base, where.top, shown,
                                  folder=True)
    extra = foreign_env or not _env_known(env_files, base, pdir, where)
    model: Any = {}
    for path, file_shown in files:
        included = readers.load(path, file_shown)
        if extra and "$" in (included.text or ""):
            raise UnreadForm(
                f"include: {file_shown} is interpolated with its own .env / env_file, "
                "which specgate does not follow", shown)
        nested = apply_include(
            included, where, readers, base=pdir, shown_base=shown_pdir,
            chain=(*chain, first.resolve()), foreign_env=extra,
        )
        own = readers.resolve(
            local_extends(included.data, nested, file_shown), path, file_shown
        )
        # its own paths taken from its project directory (the nested ones were)
        own = import_into(_rebased(own, pdir, where), nested, file_shown)
        out.sources.append((own, included, file_shown))
        out.sources.extend(nested.sources)
        out.notes.extend(nested.notes)
        model = readers.over(model, own) if model else own
    out.notes.append(f"{first_shown} included (include: in {shown})")
    for key in RESOURCES:
        for name, value in (model.get(key) or {}).items():
            _add(out.data.setdefault(key, {}), key, str(name), value, shown)


def import_into(data: Any, imports: Imports, shown: str) -> Any:
    """``data`` (a file's model, extends applied) with ``imports`` added and its
    ``include:`` dropped; a resource both define differently is not followed."""
    if not isinstance(data, Mapping):
        return data
    out = {k: v for k, v in data.items() if k != "include"}
    for key, resources in imports.data.items():
        mine = out.get(key)
        mine = dict(mine) if isinstance(mine, Mapping) else {}
        for name, value in resources.items():
            _add(mine, key, name, value, shown)
        out[key] = mine
    return out


def local_extends(data: Any, imports: Imports, shown: str) -> Any:
    """``data``, refused when a service ``extends`` (in its own file) a service only an
    include defines (module doc)."""
    services = data.get("services") if isinstance(data, Mapping) else None
    included = imports.data.get("services", {})
    if isinstance(services, Mapping):
        for name, service in services.items():
            spec = service.get("extends") if isinstance(service, Mapping) else None
            base = spec if isinstance(spec, str) else (
                spec.get("service") if isinstance(spec, Mapping) and "file" not in spec
                else None)
            if isinstance(base, str) and base not in services and base in included:
                raise UnreadForm(
                    f"services.{name} extends {base!r}, which only an include defines: "
                    "Compose versions differ (v2 refuses it): not followed", shown)
    return data


def _add(to: dict[str, Any], key: str, name: str, value: Any, shown: str) -> None:
    if name in to and to[name] != value:
        raise UnreadForm(
            f"{key}.{name} is defined both by {shown} and by a file it includes: Compose "
            "v2 stops (conflicts with imported resource), Compose v5 merges them: "
            "not followed", shown)
    to[name] = value


def _entry(entry: object, shown: str) -> tuple[list[str], str | None, list[str] | None]:
    """(paths, project_directory, env_file) of one ``include`` item."""
    if isinstance(entry, str):
        entry = {"path": entry}
    if not isinstance(entry, Mapping) or not set(entry) <= {
        "path", "project_directory", "env_file"
    }:
        raise UnreadForm(f"include: an entry specgate does not read ({str(entry)[:60]!r})",
                         shown)
    raw_paths = entry.get("path")
    paths = [raw_paths] if isinstance(raw_paths, str) else raw_paths
    project = entry.get("project_directory")
    raw_env = entry.get("env_file")
    env = [raw_env] if isinstance(raw_env, str) else raw_env
    if (
        not isinstance(paths, list) or not paths or len(paths) > MAX_INCLUDED
        or not all(isinstance(p, str) for p in paths)
        or not (project is None or isinstance(project, str))
        or not (env is None or (isinstance(env, list) and len(env) <= MAX_INCLUDED
                                and all(isinstance(e, str) for e in env)))
    ):
        raise UnreadForm(f"include: an entry specgate does not read ({str(entry)[:60]!r})",
                         shown)
    return list(paths), project, env


def _interpolated(doc: Document, index: int, entry: object, where: Where) -> object:
    """The ``include`` item ``entry`` (at ``index``) with its strings interpolated with
    the project's variables, as compose-go's ``loadIncludeConfig`` does (module doc).

    Raises:
        UnsettledValue: a reference no variable or default settles, at its ``$``.
    """
    from specgate.load.compose_env import interpolated_words

    if isinstance(entry, str):
        places: list[tuple[tuple[str | int, ...], str]] = [((index,), entry)]
    elif isinstance(entry, Mapping):
        places = []
        for key in ("path", "project_directory", "env_file"):
            value = entry.get(key)
            if isinstance(value, str):
                places.append(((index, key), value))
            elif isinstance(value, list):
                places.extend(
                    ((index, key, i), v) for i, v in enumerate(value[: MAX_INCLUDED + 1])
                    if isinstance(v, str)
                )
    else:
        return entry
    if not any("$" in word for _, word in places):
        return entry
    dotenvs = [(p, _shown(p, where.top)) for p in where.ordered or sorted(where.dotenvs)]
    for at, word in places:
        if "$" not in word:
            continue
        (settled,), unsettled = interpolated_words(
            [word], dotenvs, doc.file, dict(where.outer), where.unknown
        )
        if unsettled is not None:
            raise _unsettled(doc, ("include", *at), word, unsettled, where)
        entry = _replaced(entry, at[1:], settled)
    return entry


def _replaced(entry: object, at: tuple[str | int, ...], value: str) -> object:
    """``entry`` with the string at ``at`` (``()``: the entry itself) replaced."""
    if not at:
        return value
    assert isinstance(entry, Mapping)
    key = str(at[0])
    if len(at) == 1:
        return {**entry, key: value}
    items = list(entry[key])
    items[int(str(at[1]))] = value
    return {**entry, key: items}


def _unsettled(
    doc: Document, path: tuple[str | int, ...], word: str, ref: str, where: Where
) -> UnsettledValue:
    """The :class:`UnsettledValue` of the include reference ``ref`` in ``word`` at its
    ``$`` (the scalar's start where the text there is not the word as written)."""
    span = doc.locate(path)
    line, column = span.line, span.column
    lines = (doc.text or "").splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    start = column - 1 + (1 if text[column - 1 : column] in ("'", '"') else 0)
    offset = word.find(ref)
    if offset >= 0 and text[start : start + offset + len(ref)] == word[: offset + len(ref)]:
        column = start + offset + 1
    named = re.match(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", ref)
    name = named.group(1) if named else ref
    if name in where.unknown:
        reason = (
            f"include: which file Compose includes depends on {ref}, which the script "
            "running docker compose sets to a value specgate does not follow"
        )
        return UnsettledValue(reason, doc.file, line, origin="repository", what=ref,
                              column=column)
    reason = (
        f"include: which file Compose includes depends on {ref}, which neither the "
        "project's .env nor a default in the file sets: it is set outside the repository "
        "(the environment docker compose runs in); the claims file's values are used"
    )
    return UnsettledValue(reason, doc.file, line, origin="outside", what=ref, column=column)


def _shown(path: Path, top: Path) -> str:
    try:
        return path.relative_to(top).as_posix()
    except ValueError:
        return path.name


def _local(
    value: str, base: Path, shown_base: str, top: Path, shown: str, *, folder: bool = False
) -> tuple[Path, str]:
    """The repository file (or folder) an include names, relative to ``base``."""
    if not value or ":" in value or value.startswith(("/", "~")) or "\\" in value:
        raise UnreadForm(
            f"include: {value[:80]!r} is remote or out of the repository: not followed",
            shown)
    path = base / value
    shown_path = posixpath.normpath(posixpath.join(shown_base, value))
    try:
        confined(path, top=top, must_exist=False)
    except PathProblem:
        raise UnreadForm(
            f"include: {value[:80]!r} leads out of the repository: not followed", shown
        ) from None
    bring(path)  # at a base revision, its file is looked for as at the head
    if not (path.is_dir() if folder else path.is_file()):
        raise UnreadForm(
            f"include: {shown_path} does not exist: `docker compose` stops, so what it "
            "runs is not known", shown)
    return path, shown_path


def _env_known(env_files: Sequence[str] | None, base: Path, pdir: Path, where: Where) -> bool:
    """Whether the variables the include adds are the including project's: its env
    files (default: its project directory's ``.env``, when there) are among
    ``where.dotenvs``, or there are none."""
    if env_files is None:
        candidates = [pdir / ".env"]
        bring(candidates[0])
        wanted = [p for p in candidates if p.is_file()]
    else:
        wanted = [base / f for f in env_files if f != "/dev/null"]
    known = {_real(p) for p in where.dotenvs}
    return all(_real(p) in known for p in wanted)


def _real(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))


def _rebased(model: Any, pdir: Path, where: Where) -> Any:
    """``model``'s services with relative ``env_file`` paths taken from ``pdir`` rewritten
    relative to ``where.workdir``, and relative bind sources to ``where.folder``."""
    services = model.get("services") if isinstance(model, Mapping) else None
    if not isinstance(services, Mapping) or (
        _real(pdir) == _real(where.workdir) and _real(pdir) == _real(where.folder)
    ):
        return model
    out: dict[str, Any] = {}
    for name, service in services.items():
        out[name] = service
        if isinstance(service, Mapping):
            moved = dict(service)
            if "env_file" in moved:
                moved["env_file"] = _env_paths(moved["env_file"], pdir, where.workdir)
            if isinstance(moved.get("volumes"), list):
                moved["volumes"] = [_volume(v, pdir, where.folder) for v in moved["volumes"]]
            out[name] = moved
    return {**model, "services": out}


def _moved(value: str, pdir: Path, to: Path) -> str:
    if value.startswith(("/", "~")) or "$" in value:
        return value
    return os.path.relpath(os.path.normpath(pdir / value), to)


def _env_paths(node: Any, pdir: Path, to: Path) -> Any:
    if isinstance(node, str):
        return _moved(node, pdir, to)
    if isinstance(node, list):
        return [_env_paths(item, pdir, to) if not isinstance(item, Mapping) else
                {**item, "path": _moved(item["path"], pdir, to)}
                if isinstance(item.get("path"), str) else item for item in node]
    return node


def _volume(item: Any, pdir: Path, to: Path) -> Any:
    if isinstance(item, str) and item.startswith("."):
        source, colon, rest = item.partition(":")
        moved = _moved(source, pdir, to)
        return moved + colon + rest if moved.startswith(".") else f"./{moved}{colon}{rest}"
    if isinstance(item, Mapping) and item.get("type") == "bind" and isinstance(
        item.get("source"), str
    ) and item["source"].startswith("."):
        moved = _moved(item["source"], pdir, to)
        return {**item, "source": moved if moved.startswith(".") else f"./{moved}"}
    return item

