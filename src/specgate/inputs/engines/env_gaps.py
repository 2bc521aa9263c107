"""The environment variables an engine reads for speculation that its container's
environment files leave unsettled (docs/engines.md#environment-files).

llama.cpp reads ``LLAMA_ARG_*`` and TGI ``SPECULATE`` / ``MODEL_ID`` when the command
line does not set the flag (:mod:`.llamacpp`, :mod:`.tgi`). A variable such an engine
reads whose value an environment file leaves unsettled is the deployment's (SG313: a file
outside the repository, a ``NAME`` line or ``-e NAME`` from the environment) or the
repository's (SG314: a line not followed), never read as unset: the engine's default D
would then be judged in place of the value that runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from specgate.core.errors import UnsettledValue
from specgate.inputs.engines import llamacpp, tgi
from specgate.inputs.engines._source import (
    ANY_NAME,
    UNSETTLED,
    Opt,
    Options,
    env_items,
    norm_key,
)
from specgate.inputs.engines.unsettled import SPECULATIVE_PREFIXES
from specgate.inputs.env_files import (
    EnvFiles,
    interpolated_value,
    outside_value,
    read_env_file,
    too_many,
)
from specgate.inputs.knowledge import Version
from specgate.load.document import Document, NodePath, Span

#: Per engine, the variables that can set its method or D → the flag each stands for.
_SPECULATIVE_ENV: Mapping[str, Mapping[str, str]] = {
    "llamacpp": {
        name: flag for name, flag in llamacpp.ENV_FLAGS.items()
        if norm_key(flag).startswith(SPECULATIVE_PREFIXES)
    },
    "tgi": dict(tgi.ENV_FLAGS),
}


def raise_gap(
    engine: str, opts: Options, files: EnvFiles | None, version: Version | None = None
) -> Options:
    """``opts``, when :func:`env_gap` finds nothing.

    Raises:
        UnsettledValue: a variable the engine reads for speculation left unsettled.
    """
    gap = env_gap(engine, opts, files, version)
    if gap is not None:
        raise gap
    return opts


def service_env(
    doc: Document, path: NodePath, compose: Path | None, env: dict[str, Opt],
) -> tuple[EnvFiles | None, dict[str, Opt]]:
    """What the ``env_file:`` of the Compose service holding ``path`` sets (a
    Kubernetes container's ``envFrom``, ``valueFrom`` and ``$(VAR)`` values), and
    ``env`` (its ``environment:`` and the rest) with the values they settle over it
    (:func:`with_files`)."""
    files = compose_env_files(doc, path, compose)
    if files is None:  # a Kubernetes container's valueFrom and envFrom
        from specgate.inputs.engines.kube_env import kubernetes_env

        files = kubernetes_env(doc, path)
    return files, with_files(env, files, doc, path)


def with_files(
    env: Mapping[str, Opt], files: EnvFiles | None, doc: Document, path: NodePath
) -> dict[str, Opt]:
    """``env`` with what ``files`` settle (each value where ``env`` places it, else
    where the file sets it: :func:`file_values`) and what they leave unsettled over it:
    :data:`~._source.UNSETTLED`, never a value as written, nor read as unset
    (docs/engines.md#environment-values); when a file not read may set any name, also
    :data:`~._source.ANY_NAME` as unsettled. ``files`` is the authority on the names it
    holds: the container's own ``environment:`` / ``env`` / ``-e`` are merged into it."""
    if files is None:
        return dict(env)
    out = dict(env)
    for name, opt in file_values(files, doc, path).items():
        held = env.get(name)
        out[name] = replace(held, value=opt.value) if held is not None else opt
    for name, why in files.unsettled.items():
        held = env.get(name)
        out[name] = Opt(UNSETTLED, held.span if held is not None else _at(why, doc, path))
    if files.opaque is not None:
        out[ANY_NAME] = Opt(UNSETTLED, _at(files.opaque, doc, path))
    return out


def _at(why: UnsettledValue, doc: Document, path: NodePath) -> Span:
    if why.file == doc.file and why.line is not None:
        return Span(why.line, why.column or 1)
    return doc.locate((*path[:2], "env_file"))


def env_gap(
    engine: str, opts: Options, files: EnvFiles | None, version: Version | None = None
) -> UnsettledValue | None:
    """The first variable ``engine`` reads for speculation (its flag not on the
    command line, ``opts``) that ``files`` leave unsettled, as an unsettled value
    naming it; None when every one is settled. When a file that may set any name
    leaves it unsettled (a Kubernetes ``envFrom``, an ``env_file`` outside the
    repository) and D is not on the command line, the value names the variables
    that can set D at ``version`` and the engine's default D if none is set
    (:func:`_draft_length_gap`)."""
    if files is None:
        return None
    for name, flag in _SPECULATIVE_ENV.get(engine, {}).items():
        if norm_key(flag) in opts:
            continue  # the command line wins over the variable
        why = files.gap(name)
        if why is None:
            continue
        if why.what == name:
            return why
        blanket = _draft_length_gap(engine, opts, files, why, version)
        if blanket is not None:
            return blanket
        where = f"{why.file}:{why.line}" if why.line is not None else str(why.file)
        return UnsettledValue(
            f"`{name}` ({flag}): {why.reason}", why.file, why.line, origin=why.origin,
            what=name, source=f"{why.what}, {where}", column=why.column,
        )
    return None


def _draft_length_gap(
    engine: str, opts: Options, files: EnvFiles, why: UnsettledValue, version: Version | None
) -> UnsettledValue | None:
    """For llama.cpp with D not on the command line, the variables that can set D at
    ``version`` that ``why`` (a file that may set any name) leaves unsettled, with the
    build's default D if none is set; None otherwise."""
    if engine != "llamacpp":
        return None
    names, otherwise = llamacpp.draft_length_variables(version)
    if any(norm_key(flag) in opts for flag in ("--draft-max", "--spec-draft-n-max")):
        return None  # D is on the command line, which wins over every variable
    names = tuple(n for n in names if files.gap(n) is why)
    if not names:
        return None
    listed = " or ".join(f"`{n}`" for n in names)
    flags = " / ".join(dict.fromkeys(llamacpp.ENV_FLAGS[n] for n in names))
    where = f"{why.file}:{why.line}" if why.line is not None else str(why.file)
    return UnsettledValue(
        f"{listed} ({flags}, D): {why.reason}", why.file, why.line, origin=why.origin,
        what=" or ".join(names), source=f"{why.what}, {where}", column=why.column,
        otherwise=otherwise,
    )


def compose_env_files(doc: Document, path: NodePath, compose: Path | None) -> EnvFiles | None:
    """What the ``env_file:`` of the Compose service holding ``path`` sets (a string,
    a list of paths or of ``{path, required}``: Compose v2.24+), relative to the
    Compose file's folder, with the service's ``environment:`` over it
    (docker-compose 1.29 ``resolve_environment``: a name listed without a value takes
    the value of the environment Compose runs in); None when it names no env_file and
    lists no name without a value."""
    if len(path) < 2 or path[0] != "services" or not isinstance(doc.data, Mapping):
        return None
    services = doc.data.get("services")
    service = services.get(path[1]) if isinstance(services, Mapping) else None
    env_at = (*path[:2], "environment")
    if not isinstance(service, Mapping) or not (
        service.get("env_file") is not None
        or _passed_on(service.get("environment"))
        or any(where[: len(env_at)] == env_at for where in doc.unsettled)
    ):
        return None
    node = service.get("env_file") or []
    entries = node if isinstance(node, list) else [node]
    files = EnvFiles()
    excess = too_many(len(entries), doc.file, _line(doc, (*path[:2], "env_file")))
    if excess is not None:
        files.covered(excess)
        entries = []
    base = compose.parent if compose is not None else None
    for index, entry in enumerate(entries):
        where = (*path[:2], "env_file", *((index,) if isinstance(node, list) else ()))
        line, column = doc.locate(where).line, doc.locate(where).column
        one = EnvFiles()
        written = entry.get("path") if isinstance(entry, Mapping) else entry
        optional = isinstance(entry, Mapping) and entry.get("required") is False
        known = not isinstance(entry, Mapping) or set(entry) <= {"path", "required"}
        if not isinstance(written, str) or not known:
            one.covered(UnsettledValue(
                f"an env_file entry specgate does not read ({str(entry)[:60]!r})",
                doc.file, line, origin="repository", what="env_file",
            ))
        elif optional and base is not None and not (base / written).exists():
            continue  # required: false, and not in the repository: Compose reads none
        else:
            read_env_file(written, base, one, file=doc.file, line=line, column=column,
                          mode="compose")
        files.merge(one)
    environment = service.get("environment")
    at = _line(doc, (*path[:2], "environment"))
    for name, value, where in env_items(environment):
        line = _line(doc, (*path[:2], "environment", *where))
        if value is None:  # `NAME:` with no value: the environment Compose runs in
            files.unset(name, outside_value(name, doc.file, line))
        elif (env_at + where) in doc.unsettled:  # a ${VAR} no .env or default settles
            files.unset(name, interpolated_value(
                name, doc.unsettled[env_at + where], doc.file, line
            ))
        else:
            files.set(name, str(value), doc.file, at)
    for index, item in enumerate(environment if isinstance(environment, list) else ()):
        if isinstance(item, str) and "=" not in item:  # `- NAME`: the same
            line = _line(doc, (*path[:2], "environment", index))
            files.unset(item, outside_value(item, doc.file, line))
    return files


def _passed_on(environment: object) -> bool:
    """Whether ``environment:`` lists a name without a value (``- NAME``, ``NAME:``)."""
    if isinstance(environment, Mapping):
        return any(value is None for value in environment.values())
    return isinstance(environment, list) and any(
        isinstance(item, str) and "=" not in item for item in environment
    )


def _line(doc: Document, where: NodePath) -> int:
    return doc.locate(where).line


def file_values(files: EnvFiles | None, doc: Document, path: NodePath) -> dict[str, Opt]:
    """The values ``files`` settle, each at its line when it stands in ``doc`` (a
    ConfigMap's data), else at the service's ``env_file`` node (the value itself stands
    in the environment file)."""
    if files is None:
        return {}
    anchor = doc.locate((*path[:2], "env_file"))
    return {
        name: Opt(value, Span(line, 1) if shown == doc.file and line > 0 else anchor)
        for name, (value, shown, line) in files.values.items()
    }
