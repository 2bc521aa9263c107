"""Which engine a node of a document configures: the document search's detector
(:mod:`specgate.inputs.pointer`) over mappings, argv lists and command strings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from specgate.core.errors import InputError
from specgate.inputs.engines._base import Kind
from specgate.inputs.engines._source import (
    CommandSource,
    commands_of,
    is_argv,
    looks_like_command,
)
from specgate.inputs.engines.environment import container_env
from specgate.inputs.engines.follow import names_options_file
from specgate.inputs.engines.in_container import image_prefix, in_containers, prefixed
from specgate.inputs.engines.registry import Engine
from specgate.inputs.engines.service_shell import judged, service_script, service_variables
from specgate.inputs.engines.unread import (
    bare_command,
    bare_run,
    foreign_program,
    launched_by,
    named_engines,
)
from specgate.inputs.pointer import (
    Found,
    Verdict,
)
from specgate.load.document import Document


class Detector:
    """The search's detector: verdicts for mappings, argv lists and command strings."""

    def __init__(
        self,
        doc: Document,
        engines: list[Engine],
        text: str | None,
        launches: frozenset[str] = frozenset(),
        path: Path | None = None,
    ) -> None:
        """``launches``: the engines whose bare launch (their program or image, no
        speculative flag) is a configuration: the served model speculates
        (:func:`~specgate.inputs.engines.registry.launched_by_model`). ``path``: the
        file on disk (a ``docker compose run`` in it is joined with its service)."""
        self.path = path
        self.doc = doc
        self.engines = engines
        self.text = text
        self.launches = launches
        self._sources: dict[int, list[CommandSource]] = {}
        #: Command nodes of containers whose image's ENTRYPOINT runs before them (by
        #: id; the mapping is met first, its children next: see :func:`image_prefix`).
        self._prefixes: dict[int, tuple[tuple[str, ...], str | None]] = {}
        #: Command nodes a container runs as its program because its image has no
        #: ENTRYPOINT that starts the server, starting with a flag (by id): no engine
        #: reads them (:func:`~specgate.inputs.engines.unread.bare_launcher`).
        self._bare: set[int] = set()

    def _built(self, service: Mapping[object, object]) -> tuple[str, ...] | None:
        """The ENTRYPOINT of the image a Compose service builds (docs/engines.md#built-images)."""
        if self.path is None:
            return None
        from specgate.inputs.compose_build import built_entrypoint

        return built_entrypoint(self.doc, service, self.path)

    def __call__(self, node: object) -> list[Verdict]:
        if isinstance(node, Mapping):
            container = image_prefix(node, self._built)
            if container is not None:
                self._prefixes[id(container[0])] = (container[1], container[2])
            bare = bare_command(node)
            if bare is not None:
                self._bare.add(id(bare))
            return [
                Verdict(e.name, kind)
                for e in self.engines
                if (kind := self._mapping_kind(e, node)) is not None
            ]
        # a script's commands need no literal flag (`vllm serve "$M" "${ARGS[@]}"`)
        whole = node is self.doc.data and isinstance(node, str) and self.doc.file.lower(
        ).endswith((".sh", ".bash"))
        line = looks_like_command(node) and not isinstance(node, list)
        if not (is_argv(node) or whole or line):
            return []
        if id(node) in self._bare:
            return [Verdict("other", "other")]  # a flag as the program (bare_launcher)
        try:
            written = commands_of(node, self.doc, (), None)
            pairs = [(w, c) for w in written for c in in_containers(w, self.path)]
            written = [w for w, _ in pairs]  # per source, the command as written
            sources = [c for _, c in pairs]
            lead = self._prefixes.get(id(node))
            if lead is not None:
                sources = [prefixed(s, lead[0]) for s in sources]
        except InputError:
            if node is self.doc.data:  # a whole text file that no shell could split
                raise
            return []
        verdicts: list[Verdict] = []
        foreign = 0
        for index, source in enumerate(sources):
            if launched_by(source.command.argv) is not None:
                continue  # an engine specgate does not read (unread.py names it)
            if bare_run(written[index].command.argv) is not None:
                foreign += 1
                continue  # a flag as the container's program (bare_launcher)
            engines, hinted = self._candidates(source)
            if not hinted and foreign_program(source.command.argv) is not None:
                foreign += 1
                continue  # another program's flags, however alike (foreign_launcher)
            for e in engines:
                try:
                    kind = e.detect_flags(source) if e.detect_flags is not None else None
                except InputError:
                    # The engine's own parser would refuse the command (an ambiguous
                    # abbreviation): say so when the command names that engine.
                    if hinted:
                        raise
                    kind = None
                if kind is None and hinted and e.name in self.launches:
                    kind = "config"  # the launch of an engine whose model speculates
                if (
                    kind is None and hinted and any(i > 0 for i in source.command.unresolved)
                    and not names_options_file(source.command.argv, e.name)
                ):
                    # words not settled may hold its speculative flags: what it runs is
                    # unsettled, never "none configured" (docs/engines.md#unsettled-values)
                    kind = "config"
                if kind is not None:
                    command = index if len(sources) > 1 else None
                    verdicts.append(Verdict(e.name, kind, command))
        if not verdicts and sources and foreign == len(sources):
            return [Verdict("other", "other")]  # searched no further
        return verdicts

    def _mapping_kind(self, e: Engine, node: Mapping[object, object]) -> Kind | None:
        kind = e.detect_mapping(node) if e.detect_mapping is not None else None
        if kind is None and e.name in self.launches and e.launch_mapping is not None:
            return "config" if e.launch_mapping(node) else None
        return kind

    def _candidates(self, source: CommandSource) -> tuple[list[Engine], bool]:
        """The engines whose program the command runs (hinted), else every engine."""
        hinted = self.hinted(source.command.argv)
        return (hinted, True) if hinted else (self.engines, False)

    def is_engine(self, argv: Sequence[str]) -> bool:
        """Whether a command may be an engine's: its program names one, or is no
        program of its own (:func:`foreign_program`)."""
        return foreign_program(argv) is None or bool(self.hinted(argv))

    def hinted(self, argv: Sequence[str]) -> list[Engine]:
        """The engines whose program (or ``python -m`` module) is among the command's
        first words (:func:`named_engines`)."""
        named = named_engines(argv, [(e.name, e.programs) for e in self.engines])
        return [e for e in self.engines if e.name in named]

    def command(self, found: Found) -> CommandSource:
        """The command a verdict named, placed in the file (spans computed); the
        SCRIPT of a Compose service's ``sh -c`` split as its shell runs it, with the
        service's variables (:mod:`.service_shell`)."""
        env = container_env(self.doc, found.path)
        args = service_script(self.doc, found.path)
        files = None
        if args is not None:
            known, files = service_variables(self.doc, found.path, self.path)
            env = dict(known)
        split = commands_of(found.value, self.doc, found.path, self.text, env, script_args=args)
        sources = [c for s in split for c in in_containers(s, self.path)]
        # a Compose command / Kubernetes args runs after its image's ENTRYPOINT, as the
        # search read it: the engine reads the argv the container runs
        lead = self._prefixes.get(id(found.value))
        if lead is not None:
            words, key = lead
            spans = None if key is None or not found.path else tuple(
                self.doc.locate((*found.path[:-1], key, i)) for i in range(len(words))
            )
            sources = [prefixed(s, words, spans) for s in sources]
        source = sources[found.verdict.command or 0]
        if files is None:
            return source
        unresolved = {i: judged(hit, files) for i, hit in source.command.unresolved.items()}
        return replace(source, command=replace(source.command, unresolved=unresolved))

