"""TensorRT-LLM launch commands that keep their speculative configuration in an
options file: ``trtllm-serve MODEL --extra_llm_api_options FILE.yaml`` (``--config``).

When a file holds no speculative configuration of its own but a ``trtllm-serve``
command (a shell script, a Compose ``command``, a Kubernetes ``args`` list) names an
options file, that file is read as the engine config, as if the claims file had
named it: a relative path from the folder of the file holding the command, confined
to the repository (:func:`specgate.inputs.paths.resolve_reference`: no absolute
path, no ``..`` or symlink out of the repository, the file must exist). A path
inside a container (``/cfg/spec.yaml``) is followed through the Compose service's
``volumes`` (``./serving:/cfg``) when one maps it; otherwise it is an input error
saying to name the file itself. The options file is followed once (a command in it
is not followed again). The command's model (``trtllm-serve [serve] MODEL``) is the
target model unless the options file states ``model:`` (its keys are merged over the
command's, ``update_llm_args_with_extra_dict``).

Source: ``NVIDIA/TensorRT-LLM:tensorrt_llm/commands/serve.py`` (data/engines/trtllm.json).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath, PureWindowsPath

from specgate.document import Document, NodePath, Span
from specgate.errors import InputError
from specgate.inputs.engines import target
from specgate.inputs.engines._source import (
    CommandSource,
    _node,
    commands_of,
    is_argv,
    looks_like_command,
)
from specgate.inputs.knowledge import knowledge
from specgate.inputs.pointer import Verdict, format_pointer, resolve_pointer, search
from specgate.inputs.types import EngineConfig
from specgate.inputs.version import detect_version

ENGINE = "trtllm"
_DATA = knowledge(ENGINE)
#: ``trtllm-serve``'s flags as data/engines/trtllm.json knows them (click: exact names).
FLAGS = _DATA.flags()
_OPTIONS_KEY = "extra_llm_api_options"
_PROGRAMS = frozenset({"trtllm-serve"})
_MODULES = frozenset({"tensorrt_llm.commands.serve"})


@dataclass(frozen=True)
class OptionsFile:
    """An options file a ``trtllm-serve`` command names: the path as written, where
    the value stands, the flag as spelled and the command (with its place)."""

    value: str
    span: Span
    spelled: str
    source: CommandSource
    path: NodePath


def _runs_trtllm_serve(argv: tuple[str, ...]) -> bool:
    """``trtllm-serve …`` or ``python -m tensorrt_llm.commands.serve …`` among the
    command's leading words."""
    for i, word in enumerate(argv[:8]):
        if word == "-m" and i + 1 < len(argv) and argv[i + 1] in _MODULES:
            return True
        if word.startswith("-") and word != "-m":
            return False
        if PurePosixPath(word).name in _PROGRAMS:
            return True
    return False


def options_files(doc: Document, text: str | None, pointer: str | None) -> list[OptionsFile]:
    """Every options file a ``trtllm-serve`` command in ``doc`` (below ``pointer``) names.

    Raises:
        InputError: a bad pointer.
    """
    base: NodePath = ()
    node = doc.data
    if pointer is not None:
        base, node = resolve_pointer(doc.data, pointer, file=doc.file)

    def detect(candidate: object) -> list[Verdict]:
        if not (is_argv(candidate) or looks_like_command(candidate)):
            return []
        try:
            sources = commands_of(candidate, doc, (), None)
        except InputError:
            return []
        if any(_runs_trtllm_serve(s.command.argv) for s in sources):
            return [Verdict(ENGINE, "fragment")]
        return []

    found: list[OptionsFile] = []
    for hit in search(node, detect, base=base):
        try:
            sources = commands_of(hit.value, doc, hit.path, text)
        except InputError:
            continue
        for source in sources:
            if not _runs_trtllm_serve(source.command.argv):
                continue
            option = source.options(FLAGS).get(_OPTIONS_KEY)
            if option is not None and isinstance(option.value, str) and option.value.strip():
                spelled = option.spelled or f"--{_OPTIONS_KEY}"
                found.append(OptionsFile(option.value, option.span, spelled, source, hit.path))
    return found


def _volume_path(doc: Document, where: NodePath, value: str) -> str | None:
    """``value`` (a path inside the container) as the host path a Compose service's
    short-syntax ``volumes`` entry (``HOST:CONTAINER[:MODE]``, HOST relative) maps it
    to, for the service holding the command at ``where``; None when none does."""
    for depth in range(len(where), -1, -1):
        service = _node(doc.data, where[:depth])
        volumes = service.get("volumes") if isinstance(service, Mapping) else None
        if not isinstance(volumes, list):
            continue
        for volume in volumes:
            if not isinstance(volume, str):
                continue
            host, _, rest = volume.partition(":")
            inside = rest.split(":", 1)[0].rstrip("/")
            if not host.startswith(".") or not inside.startswith("/"):
                continue  # named volumes and absolute host paths are not in the repo
            if value == inside or value.startswith(inside + "/"):
                return posixpath.join(host, value[len(inside) :].lstrip("/"))
        return None
    return None


def _host_path(doc: Document, named: OptionsFile) -> str | None:
    """The options file's path relative to the folder of the file naming it: as
    written when relative, through a Compose volume when inside the container;
    None when neither applies."""
    written = named.value.strip()
    if PurePosixPath(written).is_absolute() or PureWindowsPath(written).is_absolute():
        return _volume_path(doc, named.path, written)
    return written


def named_files(path: Path, shown: str) -> list[str]:
    """The options files the ``trtllm-serve`` commands of the engine config at ``path``
    name, as repository paths in the style of ``shown`` (``serving/serve.sh`` →
    ``serving/configs/mtp3.yaml``), for callers that copy or watch referenced files
    (the change gate reads them at REF). Paths leaving ``shown``'s top are dropped;
    nothing is resolved on disk. Empty when the file cannot be read or names none."""
    from specgate.inputs.engines import load_engine_document

    try:
        doc = load_engine_document(path, shown)
        text = doc.data if isinstance(doc.data, str) else (doc.text or None)
        files = options_files(doc, text, None)
    except InputError:
        return []
    out: list[str] = []
    for named in files:
        relative = _host_path(doc, named)
        if relative is None:
            continue
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(shown), relative))
        if joined.startswith("../") or joined == ".." or joined.startswith("/"):
            continue
        if joined not in out:
            out.append(joined)
    return out


def follow(
    doc: Document,
    text: str | None,
    shown: str,
    path: Path,
    *,
    pointer: str | None,
    engine_version: str | None,
) -> EngineConfig | None:
    """The engine config of the one options file a ``trtllm-serve`` command in ``doc``
    names, read like a referenced engine config; None when no command names one.

    Raises:
        InputError: several different options files (choose one with ``pointer:``);
        a path inside the container no volume maps; a path that leaves the
        repository or does not exist (at the command's line); the options file's
        own input errors.
    """
    from specgate.inputs.engines import read_engine_file
    from specgate.inputs.paths import resolve_reference

    files = options_files(doc, text, pointer)
    distinct = {f.value: f for f in files}
    if not distinct:
        return None
    if len(distinct) > 1:
        listed = ", ".join(
            f"{f.value!r} at {format_pointer(f.path) or '/'}" for f in distinct.values()
        )
        raise InputError(
            f"{len(distinct)} trtllm-serve commands name options files in {shown}: {listed}; "
            "choose one with `pointer:`",
            shown,
        )
    named = next(iter(distinct.values()))
    relative = _host_path(doc, named)
    if relative is None:
        raise InputError(
            f"no speculative decoding configured in {shown}: trtllm-serve reads it from "
            f"{named.value.strip()!r}, a path inside the container that no volume of the "
            "file maps to the repository; name that file as engine_config",
            shown,
            named.span.line,
        )

    def fail(reason: str) -> InputError:
        return InputError(reason, shown, named.span.line, named.span.column)

    file, file_shown = resolve_reference(
        relative,
        what=f"{named.spelled} file",
        base_dir=path.parent,
        shown_base=posixpath.dirname(shown),
        root=None,
        fail=fail,
    )
    # The command's file may pin the version (its image tag, requirements beside it).
    outer = detect_version(ENGINE, engine_version, text, path)
    pinned = engine_version if engine_version is not None else outer.text
    config = read_engine_file(file, file_shown, engine=ENGINE, engine_version=pinned, follow=False)
    if engine_version is None and outer.text is not None:
        config = replace(config, version_source=outer.source)
    note = (
        f"speculative configuration read from {file_shown}, the options file that "
        f"{named.spelled} names in {shown}:{named.span.line}"
    )
    config = replace(config, notes=(note, *config.notes))
    if config.target_model is None:
        argv, spans = named.source.command.argv, named.source.spans
        model = target.positional_model(argv, spans, target.entries(ENGINE), target.arity(ENGINE))
        if model is not None and isinstance(model.value, str) and model.value.strip():
            # the model word stands in the command's file, not the options file: no span
            config = replace(config, target_model=model.value.strip())
    return config
