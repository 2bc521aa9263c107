"""The options of the command that launches an engine: a command line parsed with
the engine's flags, a container's ``entrypoint`` + ``command`` + ``args``, and the
speculative flags a sibling launcher fragment completes it with."""

from __future__ import annotations

from collections.abc import Mapping

from specgate.core.errors import InputError
from specgate.inputs.cmdline import Command, FlagSpec
from specgate.inputs.engines._source import (
    CommandSource,
    Options,
    commands_of,
    literal_env,
)
from specgate.inputs.engines.detect import Detector
from specgate.inputs.engines.registry import Engine
from specgate.inputs.pointer import (
    Found,
)
from specgate.load.document import Document, NodePath, Span

SPECULATIVE_PREFIXES = ("speculative", "spec_", "draft", "model_draft", "num_speculative")


#: Keys of a container or service whose words run together, in order (Compose
#: ``entrypoint`` + ``command``; Kubernetes ``command`` + ``args``).
_LAUNCH_KEYS = ("entrypoint", "command", "args")


def container_options(
    spec: Engine,
    doc: Document,
    path: NodePath,
    container: Mapping[object, object],
    text: str | None,
    *,
    flags: FlagSpec | None = None,
) -> tuple[Options, CommandSource | None]:
    """The options of the command a container or service runs: the words of its
    ``entrypoint``, ``command`` and ``args`` (lists, or strings holding one command)
    parsed with the engine's flags, and that command; none when it states no command
    (the image's own entrypoint runs). ``flags``: the engine's flags at the version
    in force (default: its module's)."""
    argv: list[str] = []
    spans: list[Span] = []
    unresolved: dict[int, tuple[str, bool, bool]] = {}
    for key in _LAUNCH_KEYS:
        node = container.get(key)
        if not (isinstance(node, (list, str)) and node):
            continue
        sources = commands_of(node, doc, (*path, key), text, literal_env(container))
        if len(sources) != 1:
            continue
        unresolved.update(
            (len(argv) + index, hit) for index, hit in sources[0].command.unresolved.items()
        )
        argv.extend(sources[0].command.argv)
        spans.extend(sources[0].spans)
    if not argv:
        return {}, None
    launched = CommandSource(Command(tuple(argv), unresolved=unresolved), tuple(spans), doc.file)
    return command_options(spec, launched, flags), launched


def command_options(spec: Engine, source: CommandSource, flags: FlagSpec | None = None) -> Options:
    """The command's options, read with ``flags`` (the engine's flags at the version in
    force: :meth:`~specgate.inputs.knowledge.EngineKnowledge.flags_at`), else the
    engine's own."""
    flags = flags if flags is not None else spec.flags
    if flags is None:
        raise InputError(f"{spec.name} configurations are not command lines", source.file)
    if spec.command_options is not None:
        return spec.command_options(source, flags)
    return source.options(flags)


def merge_fragments(
    opts: Options,
    spec: Engine,
    found: Found,
    fragments: list[Found],
    detector: Detector,
    *,
    flags: FlagSpec | None = None,
) -> tuple[Options, list[str]]:
    """Complete a command from the one launcher fragment of the same engine."""
    mine = [
        f
        for f in fragments
        if f.verdict.engine == spec.name
        and not isinstance(f.value, Mapping)
        and f.path != found.path
    ]
    if len(mine) != 1:
        return opts, []
    extra = command_options(spec, detector.command(mine[0]), flags)
    taken = [
        k
        for k, v in extra.items()
        if k not in opts and v.value is not None and k.startswith(SPECULATIVE_PREFIXES)
    ]
    if not taken:
        return opts, []
    merged: Options = {**{k: extra[k] for k in taken}, **opts}
    note = (
        f"{', '.join(taken)} taken from {mine[0].pointer or '/'} (the same launcher's flags "
        "without an algorithm)"
    )
    return merged, [note]

