"""The Compose model ``docker compose`` builds from a Compose file: the override file
beside it merged in, and each service's ``extends`` applied.

Sources (compose-spec/compose-go, read at these commits):

- ``cli/options.go@6e4fb2bf`` (``WithDefaultConfigPath``): with no ``-f``, Compose
  loads the first of :data:`DEFAULT_FILES` in the folder, then the first of
  :data:`OVERRIDE_FILES` beside it. So a file of a default name is read with its
  override; a file of any other name (``-f``) alone.
- ``override/merge.go@00be3c8c`` (``mergeYaml``): mappings merge key by key, the
  override's scalar wins, sequences are appended, save ``command``, ``entrypoint``
  and ``healthcheck.test`` (the override replaces them), ``environment``, whose
  entries are joined as ``NAME=value`` items, the override's after the base's, and
  ``env_file`` / ``label_file``, whose paths are joined the same way, a single path
  taken as a list of one (``override/merge.go@e70e961c``, ``mergeToSequence``).
- ``types/mapping.go@078b2eed`` (``MappingWithEquals.DecodeMapstructure``): a list
  of ``NAME=value`` items becomes a map item by item, so a name listed twice keeps
  its *last* value (:func:`specgate.inputs.engines._source.env_items` reads it so).
- ``extends`` (``override/extends.go``; Compose specification, "extends"): a service
  takes the service it names (in this file, or ``file:`` beside it) as its base and
  merges itself over it, by the same rules.
- Several files (``docker compose -f a.yaml -f b.yaml``, ``COMPOSE_FILE``;
  ``loader/loader.go@e70e961c``, ``loadYamlFile``): each file's ``extends`` is applied
  within that file (a base service another file defines or changes is not seen), then
  the file is merged over the ones before it, in order. Files named so are read alone:
  no override file is merged (``cli/options.go@e70e961c``: ``WithDefaultConfigPath``
  adds it only when no file is named).

- ``!reset`` and ``!override`` (compose-spec ``13-merge.md``; ``loader/reset.go``@e70e961c
  ``ResetProcessor``, ``loader/loader.go`` ``processRawYaml``, ``loader/extends.go``
  ``applyServiceExtends``): a node so tagged is recorded at its path; a ``!reset`` node
  is dropped from its file (:mod:`specgate.load.yaml_loader`). Before a file is merged
  over the files before it, and before a service's ``extends`` base is merged under
  it, what they set at each recorded path of the file is deleted, so ``!reset``
  leaves nothing there and ``!override`` leaves only this file's value. A path through a
  list item deletes nothing from earlier files (``applyNullOverrides`` indexes list items
  as ``[i]``, ``resolveReset`` as ``i``: they never match).

Every extra file is read like any referenced file (inside the repository, at most
1 MiB, go-yaml's scalars); ``extends`` is followed at most :data:`MAX_EXTENDS` deep and
a cycle is an input error.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specgate.core.errors import InputError, UnreadForm
from specgate.core.paths import PathProblem, confined
from specgate.core.revision_tree import bring
from specgate.load.compose_include import Readers, Where, apply_include, import_into, local_extends
from specgate.load.document import Document, NodePath, NodePosition
from specgate.load.read import read_text

DEFAULT_FILES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
OVERRIDE_FILES = (
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
)
MAX_EXTENDS = 8
#: At most this many files ``COMPOSE_FILE`` lists; more: not followed.
MAX_FILES = 16
_REPLACED = frozenset({"command", "entrypoint"})
#: A service's keys whose values merge as sequences, a string as a one-item list
#: (``override/merge.go@e70e961c``: ``mergeToSequence``, ``convertIntoSequence``)
_SEQUENCES = frozenset({"env_file", "label_file"})


def override_file(path: Path) -> Path | None:
    """The override file Compose merges into ``path`` (None: none, or ``path`` is no
    default-named file)."""
    if path.name not in DEFAULT_FILES:
        return None
    for name in OVERRIDE_FILES:
        candidate = path.parent / name
        bring(candidate)  # at a base revision, its file is looked for as at the head
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return None


def _env_list(value: object) -> list[object] | None:
    if isinstance(value, Mapping):
        return [str(k) if v is None else f"{k}={_text(v)}" for k, v in value.items()]
    if isinstance(value, list):
        return list(value)
    return None


def _sequence(value: object) -> list[object] | None:
    if isinstance(value, str):
        return [value]
    return list(value) if isinstance(value, list) else None


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def merge(base: Any, over: Any, path: tuple[str, ...] = ()) -> Any:
    """``over`` merged onto ``base`` as compose-go's ``mergeYaml`` does (module doc)."""
    if len(path) == 3 and path[0] == "services" and path[2] in _REPLACED:
        return over
    if len(path) == 3 and path[0] == "services" and path[2] in _SEQUENCES:
        left_files, right_files = _sequence(base), _sequence(over)
        if left_files is not None and right_files is not None:
            return left_files + right_files
        return over
    if len(path) == 3 and path[0] == "services" and path[2] == "environment":
        left, right = _env_list(base), _env_list(over)
        if left is not None and right is not None:
            return left + right
        return over
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        out = dict(base)
        for key, value in over.items():
            if key in out and not str(key).startswith("x-"):
                out[key] = merge(out[key], value, (*path, str(key)))
            else:
                out[key] = value
        return out
    if isinstance(base, list) and isinstance(over, list):
        return base + over
    return over


Tags = tuple[tuple[NodePath, str, int, int], ...]


def cleared(data: Any, tags: Tags, under: NodePath = ()) -> Any:
    """``data`` (placed at ``under`` in the model) without what it sets at the paths of
    ``tags`` (a file's ``!reset`` / ``!override``: module doc); ``data`` itself when it
    sets none of them."""
    for path, *_ in tags:
        if path[: len(under)] != under or len(path) == len(under):
            continue
        data = _without(data, path[len(under) :])
    return data


def _without(data: Any, path: NodePath) -> Any:
    head, rest = path[0], path[1:]
    if not isinstance(data, Mapping) or not isinstance(head, str) or head not in data:
        return data
    out = dict(data)
    if rest:
        out[head] = _without(out[head], rest)
    else:
        del out[head]
    return out


def _load_doc(path: Path, shown: str) -> Document:
    from specgate.load.yaml_loader import load_yaml

    try:
        found = confined(path)
    except PathProblem as exc:
        raise InputError(str(exc), shown) from None
    text = read_text(found, shown)
    loaded = load_yaml(text, shown, dialect="go")._replace(text=text)
    return loaded if isinstance(loaded.data, Mapping) else loaded._replace(data={})


def _extends(
    services: Mapping[str, Any], name: str, folder: Path, shown: str, depth: int,
    *, tags: Tags = (),
) -> Any:
    service = services.get(name)
    if not isinstance(service, Mapping) or "extends" not in service:
        return service
    if depth >= MAX_EXTENDS:
        raise InputError(f"extends deeper than {MAX_EXTENDS} services (or a cycle)", shown)
    spec = service["extends"]
    if isinstance(spec, str):
        spec = {"service": spec}
    if not isinstance(spec, Mapping) or not isinstance(spec.get("service"), str):
        raise InputError(f"services.{name}.extends: not a service name", shown)
    pool, where, shown_base, base_tags = services, folder, shown, tags
    if isinstance(spec.get("file"), str):
        other = folder / spec["file"]
        shown_base = str(Path(shown).parent / spec["file"])
        loaded = _load_doc(other, shown_base)
        data: Any = loaded.data  # a mapping (_load_doc)
        base_tags = loaded.merge_tags
        pool = data.get("services") if isinstance(data.get("services"), Mapping) else {}
        where = other.parent
    base = _extends(pool, spec["service"], where, shown_base, depth + 1, tags=base_tags)
    if not isinstance(base, Mapping):
        raise InputError(
            f"services.{name} extends {spec['service']!r}, which {shown_base} does not define",
            shown,
        )
    own = {k: v for k, v in service.items() if k != "extends"}
    # the extending file's !reset / !override clear the base first (applyServiceExtends)
    return merge(dict(cleared(base, tags, ("services", name))), own, ("services", name))


def _resolved(
    data: Any, folder: Path, shown: str, tags: Tags = ()
) -> tuple[Any, set[NodePath]]:
    """``data`` (one Compose file) with each service's ``extends`` applied within it,
    and the paths of the services it changed."""
    services = data.get("services") if isinstance(data, Mapping) else None
    if not isinstance(services, Mapping) or not any(
        isinstance(s, Mapping) and "extends" in s for s in services.values()
    ):
        return data, set()
    resolved = {
        name: _extends(services, str(name), folder, shown, 0, tags=tags) for name in services
    }
    changed: set[NodePath] = {
        ("services", str(name))
        for name, service in services.items()
        if isinstance(service, Mapping) and "extends" in service
    }
    return {**dict(data), "services": resolved}, changed


def _where(
    path: Path, workdir: Path | None, dotenvs: Sequence[Path] | None,
    outer: Mapping[str, str], unknown: frozenset[str],
) -> Where:
    from specgate.core.paths import repository_top

    work = path.parent if workdir is None else workdir
    try:
        top = repository_top(path.parent)
    except PathProblem:
        top = path.parent
    envs = [work / ".env"] if dotenvs is None else list(dotenvs)
    return Where(work, path.parent, frozenset(envs), top, tuple(envs), tuple(outer.items()),
                 unknown)


def _with_includes(
    loaded: Document, path: Path, where: Where,
    sources: list[tuple[Any, Document, str | None]], notes: list[str],
) -> tuple[Any, set[NodePath], Any]:
    """One file's model: its ``include:`` imported (:mod:`.compose_include`; the
    included files' models added to ``sources``, a note each), its ``extends``
    applied; the paths of the services they set or changed; and its model without
    the imported resources (whose values it does not set)."""
    imports = apply_include(
        loaded, where,
        Readers(_load_doc, lambda data, at, shown: _resolved(data, at.parent, shown)[0], merge),
    )
    if not imports.count:
        data, changed = _resolved(loaded.data, path.parent, loaded.file, loaded.merge_tags)
        return data, changed, data
    own, changed = _resolved(
        local_extends(loaded.data, imports, loaded.file), path.parent, loaded.file,
        loaded.merge_tags,
    )
    sources.extend(imports.sources)
    notes.extend(imports.notes)
    changed |= _leaves({key: imports.data.get(key, {}) for key in ("services",)}, ())
    return import_into(own, imports, loaded.file), changed, own


def compose_model(
    doc: Document,
    path: Path,
    files: Sequence[tuple[Path, str]] | None = None,
    before: Sequence[tuple[Path, str]] = (),
    *,
    workdir: Path | None = None,
    dotenvs: Sequence[Path] | None = None,
    outer: Mapping[str, str] | None = None,
    unknown: frozenset[str] = frozenset(),
) -> Document:
    """``doc`` (a Compose file at ``path``) as Compose builds it: ``files`` (each a path
    and how it is shown: the Compose files named after it, ``-f`` or ``COMPOSE_FILE``)
    merged over it in order, or, when None, the override file beside it; ``before``
    the files merged before it (``COMPOSE_FILE`` listing it after them); each file's
    ``extends`` applied within it first (module doc). Values another file sets lose
    their positions (a finding points at the service in ``doc``), and a note names
    each file merged in.

    Raises:
        InputError: an override, merged or extended file outside the repository,
            unreadable or not parseable; ``extends`` naming no service, too deep or a cycle.
    """
    notes = list(doc.notes)
    where = _where(path, workdir, dotenvs, outer or {}, unknown)
    included: list[tuple[Any, Document, str | None]] = []
    data, changed, mine = _with_includes(doc, path, where, included, notes)
    # each file's model and positions, to place the values it sets (_placed)
    # (in merge order: the files named before it, those it includes, it, the files
    # merged over it)
    sources: list[tuple[Any, Document, str | None]] = [*included, (mine, doc, None)]
    later = doc.merge_tags  # the tags of the files merged over the one being added
    for under_path, shown in reversed(before):
        loaded = _load_doc(under_path, shown)
        under_included: list[tuple[Any, Document, str | None]] = []
        under, _, own = _with_includes(loaded, under_path, where, under_included, notes)
        sources[:0] = [*under_included, (own, loaded, shown)]
        data = merge(cleared(under, later), data)
        later = (*later, *loaded.merge_tags)
        notes.append(f"{shown} merged in (named before {doc.file})")
        changed |= _leaves(under, ())
    more: list[tuple[Path, str, str]] = []
    if files is None:
        over_path = override_file(path)
        if over_path is not None:
            shown = str(Path(doc.file).parent / over_path.name)
            more.append((over_path, shown, f"Compose merges it with {path.name} by default"))
    else:
        more = [(p, shown, f"named after {doc.file}") for p, shown in files]
    for over_path, shown, why in more:
        loaded = _load_doc(over_path, shown)
        over, _, own = _with_includes(loaded, over_path, where, sources, notes)
        sources.append((own, loaded, shown))
        data = merge(cleared(data, loaded.merge_tags), over)
        notes.append(f"{shown} merged in ({why})")
        changed |= _leaves(over, ())
    if not changed and data is doc.data:
        return doc
    positions: dict[NodePath, NodePosition] = {
        p: v for p, v in doc.positions.items() if not any(p[: len(c)] == c for c in changed)
    }
    origins: dict[NodePath, str] = {}
    for leaf in changed:
        _placed(data, leaf, sources, positions, origins)
    return doc._replace(data=data, positions=positions, notes=tuple(notes), origins=origins)


def _node_at(data: Any, path: NodePath) -> object:
    for key in path:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def _placed(
    data: Any,
    leaf: NodePath,
    sources: Sequence[tuple[Any, Document, str | None]],
    positions: dict[NodePath, NodePosition],
    origins: dict[NodePath, str],
) -> None:
    """The positions of the value at ``leaf`` of the merged model, when it is one
    file's value as that file wrote it (a ``command`` the override replaces, a key only
    it sets): that file's positions, and its name in ``origins`` when it is not the
    model's own file, so a finding about the value points at the file that sets it.
    A value the merge builds from several files (appended lists, ``environment``,
    merged mappings) or an ``extends`` changed keeps no position (the service's)."""
    value = _node_at(data, leaf)
    if value is None:
        return
    for model, loaded, shown in reversed(sources):  # the last file that sets it wins
        if _node_at(model, leaf) is not value:
            continue
        n = len(leaf)
        positions.update((p, v) for p, v in loaded.positions.items() if p[:n] == leaf)
        if shown is not None:
            origins[leaf] = shown
        return


def named_model(doc: Document, path: Path) -> Document:
    """``doc`` (a Compose file a claims file names, at ``path``) as ``docker compose``
    builds it in its folder: when the ``.env`` beside it sets ``COMPOSE_FILE``
    (``cli/options.go@e70e961c``, ``WithConfigFileEnv``: split at
    ``COMPOSE_PATH_SEPARATOR``, ``:`` when unset; taken from that folder), the files it
    lists merged in order and no override file; else the override file beside it
    (:func:`compose_model`).

    Raises:
        InputError: as :func:`compose_model`; :class:`UnreadForm` when ``COMPOSE_FILE``
            does not list the file (Compose does not read it there) and an override
            file is beside it (read alone or with it, the models differ), or lists a
            file that does not exist, one out of the repository or a remote one.
    """
    listed = _compose_file_variable(path, doc.file)
    if listed is None:
        return compose_model(doc, path)
    for listed_path, shown in listed:
        bring(listed_path)  # at a base revision, its file is looked for as at the head
        if not listed_path.is_file():
            # Compose stops there (a developer's local file the repository leaves out)
            raise UnreadForm(
                f"COMPOSE_FILE in the .env beside {doc.file} lists {shown}, which does not "
                "exist: `docker compose` in that folder stops, so what it runs is not known",
                doc.file,
            )
    here = path.resolve()
    at = next((i for i, (p, _) in enumerate(listed) if p.resolve() == here), None)
    if at is None:
        if override_file(path) is None:
            return compose_model(doc, path, ())
        raise UnreadForm(
            f"COMPOSE_FILE in the .env beside {doc.file} does not list it, so `docker "
            "compose` in its folder does not read it; and with its override file it "
            "reads otherwise than alone: name the files Compose reads (docs/engines.md"
            "#containers)",
            doc.file,
        )
    return compose_model(doc, path, listed[at + 1 :], listed[:at])


def _compose_file_variable(path: Path, shown: str) -> list[tuple[Path, str]] | None:
    """The files ``COMPOSE_FILE`` of the ``.env`` beside ``path`` lists (each path and
    how it is shown), taken from that folder; None when it sets none.

    Raises:
        InputError: the ``.env`` out of the repository or unreadable; UnreadForm: a
            listed path that is remote, absolute or holds a variable not set.
    """
    from specgate.load.compose_env import dotenv_text, parse_dotenv

    shown_env = str(Path(shown).parent / ".env")
    text = dotenv_text(path.parent / ".env", shown_env)
    if "COMPOSE_FILE" not in text:
        return None
    env = parse_dotenv(text, shown_env)
    if "COMPOSE_FILE" not in env:
        return None
    separator = env.get("COMPOSE_PATH_SEPARATOR") or ":"
    names = env["COMPOSE_FILE"].split(separator)
    if len(names) > MAX_FILES or any(
        not n or n.startswith("/") or ":" in n or "\\" in n or "$" in n for n in names
    ):
        raise UnreadForm(
            f"COMPOSE_FILE in {shown_env} names files specgate does not follow "
            f"({env['COMPOSE_FILE'][:80]!r}): remote, absolute, or more than {MAX_FILES}",
            shown_env,
        )
    return [(path.parent / n, posixpath.normpath(str(Path(shown).parent / n))) for n in names]


def _leaves(node: object, where: NodePath) -> set[NodePath]:
    """The paths the override sets (a service's key: the whole value)."""
    if isinstance(node, Mapping) and len(where) < 3:
        out: set[NodePath] = set()
        for key, value in node.items():
            out |= _leaves(value, (*where, str(key)))
        return out
    return {where}
