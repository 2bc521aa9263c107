"""Reading an engine config: load the file, find its one speculative configuration
(pointer or search), normalise it to :class:`~specgate.inputs.types.EngineConfig` with
the registered engine's reader (:mod:`.registry`), at the version in force."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from specgate.core.errors import InputError, RefusedValue, UnsettledValue
from specgate.inputs.cmdline import FlagSpec
from specgate.inputs.compose_build import built_version
from specgate.inputs.engines import follow as options_file
from specgate.inputs.engines import (
    keywise,
    settings,
    target,
)
from specgate.inputs.engines._base import Context
from specgate.inputs.engines._source import (
    CommandSource,
    Opt,
    Options,
    Source,
    from_mapping,
    norm_key,
)
from specgate.inputs.engines.compose_up import (
    compose_up,
    unfollowed_compose,
    unsettled_compose_image,
)
from specgate.inputs.engines.detect import Detector
from specgate.inputs.engines.env_gaps import raise_gap, service_env, with_files
from specgate.inputs.engines.environment import command_env, sibling_env
from specgate.inputs.engines.forcing import forced_acceptance
from specgate.inputs.engines.in_force import pre_release_shown, with_version
from specgate.inputs.engines.launch import (
    command_options,
    container_options,
    merge_fragments,
)
from specgate.inputs.engines.model_option import refused_model_option
from specgate.inputs.engines.placed import image_via, version_text
from specgate.inputs.engines.positionals import refused_positionals
from specgate.inputs.engines.registry import ENGINES, Engine
from specgate.inputs.engines.several import one_configuration
from specgate.inputs.engines.unread import (
    UnreadEngine,
    bare_launcher,
    foreign_launcher,
    unread_launcher,
)
from specgate.inputs.engines.unsettled import (
    image_from_outside,
    unsettled_flag_value,
    unsettled_image_launcher,
    unsettled_launcher,
    unsettled_words,
)
from specgate.inputs.env_files import EnvFiles
from specgate.inputs.helm_chart import chart_image
from specgate.inputs.knowledge import EngineKnowledge, knowledge
from specgate.inputs.pointer import (
    Found,
    find_configurations,
    format_pointer,
    rendered_pointer,
    resolve_pointer,
    search,
)
from specgate.inputs.types import EngineConfig
from specgate.inputs.version import EngineVersion, detect_version
from specgate.load.document import Document, NodePath, Span
from specgate.load.read import load_document, read_text

TEXT_SUFFIXES = frozenset({".txt", ".sh", ".cmdline", ".bash", ".md", ".markdown"})


def _command_env(
    doc: Document, path: NodePath, source: CommandSource, files: EnvFiles | None,
    env: dict[str, Opt],
) -> tuple[EnvFiles | None, dict[str, Opt]]:
    """The environment files and variables of a command's engine: the command's own
    (:func:`command_env`), its container's ``--env-file``s over them
    (docs/engines.md#environment-values)."""
    env = {**env, **command_env(source)}
    if files is not None and files is getattr(source, "env_files", None):
        env = with_files(env, files, doc, path)
    return files, env


def load_engine_document(path: Path, shown: str) -> Document:
    """Read an engine config: ``.txt``/``.sh``/``.cmdline`` and an extensionless shell
    script (``#!``: :mod:`.file_kind`) as plain text (a
    :class:`Document` whose ``data`` is the whole text), ``.json`` as JSON, ``.py`` as
    a Python launcher's literal keyword arguments (never run:
    :mod:`specgate.load.python_launcher`; an extensionless ``#!`` Python script too) or
    a transformers script's ``generate()`` and
    pipeline calls (:mod:`specgate.load.python_generate`), anything
    else as YAML, where a file of several documents (a Kubernetes manifest:
    Deployment + ConfigMap) is the list of them (pointer ``/0/…``, ``/1/…``). YAML
    scalars are read as the file's reader reads them
    (:func:`specgate.load.yaml_dialects.serving_dialect`): ``010`` is 8. A Compose file
    is the model Compose builds (:mod:`specgate.load.compose_files`: its override file
    merged in, ``extends`` applied), then ``${VAR}`` filled in from the ``.env`` beside it.

    Raises:
        InputError: unreadable, too large, not UTF-8, or not parseable.
        UnreadForm: a Dockerfile, a script of another interpreter, a chart template.
    """
    from specgate.inputs.engines import file_kind

    suffix = path.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        return Document(file=shown, data=read_text(path, shown))
    if suffix == ".json":
        return load_document(path, shown)
    # no suffix: a script by its #! line, a Dockerfile by its name (file_kind)
    kind = "python" if suffix == ".py" else "yaml"
    if not suffix or file_kind.is_dockerfile(path):
        kind = file_kind.unsuffixed_kind(path, read_text(path, shown), shown)
    if kind == "text":
        return Document(file=shown, data=read_text(path, shown))
    if kind == "python":
        from specgate.load.python_generate import load_transformers_script
        from specgate.load.python_launcher import load_python_launcher

        source = read_text(path, shown)
        # a transformers script's generate()/pipeline calls, else a launcher's calls
        return load_transformers_script(source, shown, path) or load_python_launcher(source, shown)
    from specgate.load.compose_env import interpolated, is_compose
    from specgate.load.compose_files import named_model
    from specgate.load.yaml_dialects import serving_dialect
    from specgate.load.yaml_loader import load_yaml_documents, refuse_merge_tags

    text = read_text(path, shown)
    template = file_kind.template_line(text)
    if template is not None and file_kind.in_chart_templates(path):
        raise file_kind.unread_template(shown, template)
    # read as its reader reads it: the engine's PyYAML, or go-yaml for a manifest
    try:
        doc = load_yaml_documents(text, shown, serving_dialect(text))._replace(text=text)
    except InputError:
        if template is not None:  # a template that is no YAML before it is rendered
            raise file_kind.unread_template(shown, template) from None
        raise
    # a Helm values file of a chart specgate reads: the Deployments its template renders
    from specgate.load import helm_values, kserve, llmd_values

    chart = helm_values.rendered(doc) or llmd_values.rendered(doc) or kserve.rendered(doc)
    if chart is not None:
        return chart
    # Compose merges the override file in, applies extends, fills in ${VAR} from .env
    if is_compose(doc.data):
        from specgate.inputs.engines.compose_schema import refuse_non_strings

        model = named_model(doc, path)
        refuse_non_strings(model)  # Compose's schema stops the project first
        return interpolated(model, path)
    refuse_merge_tags(doc)  # only Compose knows !reset / !override
    return doc


def read_engine_file(
    path: Path,
    shown: str,
    *,
    pointer: str | None = None,
    engine: str | None = None,
    engine_version: str | None = None,
    follow: bool = True,
    launches: frozenset[str] = frozenset(),
) -> EngineConfig:
    """:func:`load_engine_document` then :func:`read_engine_config` with the source text;
    the engine version is ``engine_version`` (the claims file's), else detected from
    image tags in the file or pinned requirements beside it (:mod:`..version`).
    ``follow``: a file with no configuration of its own may name the options file of a
    ``trtllm-serve`` command (:mod:`.follow`), read instead (once: not again from it).
    ``launches``: engines whose launch without a speculative flag is read as their
    configuration (the served model speculates: :func:`.registry.launched_by_model`)."""
    from specgate.core.limits import file_budget

    with file_budget(0) as budget:  # one budget for the file and its embedded documents
        doc = load_engine_document(path, shown)
        text = doc.data if isinstance(doc.data, str) else (doc.text or read_text(path, shown))
        budget.chars += len(text)
        config = read_engine_config(
            doc,
            shown=shown,
            pointer=pointer,
            engine=engine,
            text=text,
            engine_version=engine_version,
            path=path,
            follow=follow,
            launches=launches,
        )
    # what the loader left unread (a Python launcher's non-literal keywords)
    return replace(config, notes=(*config.notes, *doc.notes)) if doc.notes else config


def read_engine_config(
    doc: Document,
    *,
    shown: str,
    pointer: str | None,
    engine: str | None,
    text: str | None = None,
    engine_version: str | None = None,
    path: Path | None = None,
    follow: bool = False,
    launches: frozenset[str] = frozenset(),
) -> EngineConfig:
    """The speculative configuration of ``doc``, normalised.

    Args:
        doc: the parsed file (for text files, ``data`` is the whole text).
        shown: the file as shown to users (``EngineConfig.path``, messages).
        pointer: RFC 6901 pointer to the mapping, JSON string, argv list or
            command-line string; None ⇒ search the whole document.
        engine: ``vllm`` | ``sglang`` | ``trtllm`` | ``transformers`` | ``llamacpp``;
            None ⇒ detected from keys and flags.
        text: the file's source text, when available: words inside multi-line YAML
            scalars then get their exact line (else the scalar's first line).
        engine_version: ``speculation.engine_version`` of the claims file, if any.
        path: the file on disk (pinned requirements beside it give the version).
        follow: when ``doc`` configures nothing, read the options file a
            ``trtllm-serve`` command in it names (needs ``path``; :mod:`.follow`).
        launches: engines whose bare launch (program or image, no speculative flag)
            is their configuration: the served model's config speculates.

    Returns:
        the :class:`EngineConfig`; spans point into ``shown``.

    Raises:
        InputError: unknown engine; bad pointer; no or several configurations
        (listing their pointers; with ``engine`` given and nothing of it found,
        naming what the other engines find: "no sglang speculative configuration
        in FILE (it configures vllm at /speculative-config)"); unsplittable
        command line; ambiguous abbreviated flag; a value of the wrong type.
    """
    from specgate.core.limits import file_budget

    size = len(text) if text is not None else len(doc.text or "")
    with file_budget(size):  # one budget for every command string of the file
        return _read_engine_config(
            doc,
            shown=shown,
            pointer=pointer,
            engine=engine,
            text=text,
            engine_version=engine_version,
            path=path,
            follow=follow,
            launches=launches,
        )


def _read_engine_config(
    doc: Document,
    *,
    shown: str,
    pointer: str | None,
    engine: str | None,
    text: str | None,
    engine_version: str | None,
    path: Path | None,
    follow: bool,
    launches: frozenset[str],
) -> EngineConfig:
    if engine is not None and engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}", shown)
    # a pointer into a chart's values file names the Deployment its item renders
    pointer = rendered_pointer(doc, pointer, shown)
    engines = [ENGINES[engine]] if engine is not None else list(ENGINES.values())
    detector = Detector(doc, engines, text, launches, path)
    try:
        configs, fragments, where = find_configurations(
            doc.data, detector, file=shown, pointer=pointer
        )
    except InputError as exc:
        if not exc.reason.startswith(_NONE_FOUND):
            raise
        if follow and path is not None and (engine is None or engine in options_file.ENGINES):
            followed = options_file.follow(
                doc,
                text,
                shown,
                path,
                pointer=pointer,
                engine=engine,
                engine_version=engine_version,
            )
            if followed is not None:
                return followed
        if follow and path is not None and pointer is None:
            started = compose_up(
                doc, text, shown, path, engine=engine, engine_version=engine_version,
                launches=launches,
            )
            if started is not None:
                return started
        if engine is not None:
            # what the other engines find comes first: a launch of another engine read
            # here is that engine's configuration, not a program specgate does not read
            other = _other_engines(doc, text, shown, pointer, engine)
            if other is not None:
                raise other from None
        unread = (
            unread_launcher(doc, text, pointer, shown)
            or foreign_launcher(doc, text, pointer, shown, detector.is_engine)
            or bare_launcher(doc, text, pointer, shown)
            or unsettled_launcher(doc, text, pointer, shown, detector.hinted)
            or unsettled_image_launcher(doc, text, pointer, shown)
            or unsettled_compose_image(doc, text, pointer, shown, path)
            or unfollowed_compose(doc, text, pointer, shown, path)
        )
        if unread is not None:
            raise unread from None
        raise
    reading = _Reading(doc, detector, fragments, shown, text, engine_version, path)
    if len(configs) == 1:
        return reading.read(configs[0])
    return one_configuration(configs, reading.read, where=where, file=shown)


@dataclass(frozen=True)
class _Reading:
    """How one found configuration of a document is read (shared by every one found)."""

    doc: Document
    detector: Detector
    fragments: list[Found]
    shown: str
    text: str | None
    engine_version: str | None
    path: Path | None

    def read(self, found: Found) -> EngineConfig:
        """``found`` normalised: options, target, version, removed settings.

        Raises:
            UnsettledValue: reading a speculative flag failed where a word the
                launcher does not settle stands in it (``"{…$D}"``).
        """
        try:
            return self._read(found)
        except UnsettledValue:
            raise
        except InputError as exc:
            if isinstance(found.value, Mapping):
                raise
            raise unsettled_flag_value(self.detector.command(found), exc) from None

    def _container(
        self, spec: Engine, found: Found, flags: FlagSpec | None, version: EngineVersion
    ) -> tuple[Options, CommandSource | None, FlagSpec | None, list[settings.Used]]:
        """The options of the command a container or service runs, read with the flags
        of the version in force (with it unknown, of the newest release that reads
        every word the command holds: :func:`_within_parser_bounds`)."""
        doc, text = self.doc, self.text
        assert isinstance(found.value, Mapping)
        opts, launched = container_options(spec, doc, found.path, found.value, text, flags=flags)
        if launched is None:
            return opts, launched, flags, []
        flags, bounds = _within_parser_bounds(knowledge(spec.name), flags, version, launched)
        if bounds:
            opts, launched = container_options(
                spec, doc, found.path, found.value, text, flags=flags
            )
        return opts, launched, flags, bounds

    def _read(self, found: Found) -> EngineConfig:
        doc, text, shown = self.doc, self.text, self.shown
        spec = ENGINES[found.verdict.engine]
        table = target.entries(spec.name)
        arity = target.arity(spec.name)
        notes: list[str] = []
        data = knowledge(spec.name)
        unknown: list[tuple[str, Span]] = []
        parsed: list[tuple[str, Span]] = []
        program: str | None = None
        command: CommandSource | None = None
        unsettled: list[str] = []  # words the launcher does not settle (.unsettled)
        bounds: list[settings.Used] = []  # words only some recorded releases read
        # a Compose service's env_file: under its environment: (docs/engines.md#environment-files)
        env_files, ctx_env = service_env(doc, found.path, self.path, sibling_env(doc, found.path))
        # the container or service that runs this configuration names its image: the
        # version is that image's, never another service's in the same file
        source = None if isinstance(found.value, Mapping) else self.detector.command(found)
        version = _version_of(self, spec, found, source)
        # words read as the version in force reads them: an abbreviation by its own
        # recorded parser (docs/engines.md#flag-spellings)
        flags = data.flags_at(spec.flags, version.version) if spec.flags is not None else None
        if isinstance(found.value, Mapping) and spec.env_options is not None:
            # a container or service configured by its environment (and its command)
            opts, launched, flags, bounds = self._container(spec, found, flags, version)
            positional = None
            if launched is not None and flags is not None:
                unsettled = unsettled_words(launched, flags)
                unknown = settings.unknown_spellings(data, flags, launched)
                parsed = settings.parser_words(data, flags, launched)
        elif isinstance(found.value, Mapping):
            opts = from_mapping(Source(doc, text), found.path, found.value)
            positional = target.sibling_positional(doc, found.path, text, table, arity)
        else:
            assert source is not None  # not a mapping: a command
            command = source
            env_files = getattr(source, "env_files", None) or env_files  # docker run --env-file
            flags, bounds = _within_parser_bounds(data, flags, version, source)
            opts = _command_opts(spec, source, flags, version)
            program = program_of(spec, source.command.argv)
            if flags is not None:
                unknown = settings.unknown_spellings(data, flags, source)
                parsed = settings.parser_words(data, flags, source)
            positional = _command_model(source, found, doc, text, spec.name)
            env_files, ctx_env = _command_env(doc, found.path, source, env_files, ctx_env)
            opts, notes = merge_fragments(
                opts, spec, found, self.fragments, self.detector, flags=flags
            )
            if flags is not None:
                unsettled = unsettled_words(source, flags)
        notes = [*unsettled, *notes]
        if spec.env_options is not None:
            opts = spec.env_options(
                raise_gap(spec.name, opts, env_files, version.version), ctx_env
            )
        config = _read_options(
            spec,
            keywise.placeholders(opts, doc, found.path),
            Context(file=shown, pointer=found.pointer, env=ctx_env, program=program,
                    deferred=frozenset(keywise.deferred_keys(doc, found.path)),
                    command_line=not isinstance(found.value, Mapping)),
            version=version,
            positional=positional,
            unknown=unknown,
            parsed=parsed,
            notes=notes,
            bounds=bounds,
            command_line=not isinstance(found.value, Mapping),
        )
        if command is not None:  # more positional words than the program takes
            config = refused_positionals(config, command.command.argv, command.spans)
            config = _image_outside(
                refused_model_option(config, command.command.argv, command.spans), command
            )
        # keys a Python dict leaves unsettled: kept aside when D and the method stand
        return keywise.judged(spec.name, config, doc, found.path, found.value)


def _command_model(
    source: CommandSource, found: Found, doc: Document, text: str | None, engine: str
) -> Opt | None:
    """The served model a command names by position (``vllm serve MODEL``), also through
    a runner's image or the ENTRYPOINT a Compose command / Kubernetes args follow."""
    table, arity = target.entries(engine), target.arity(engine)
    positional = target.positional_model(source.command.argv, source.spans, table, arity)
    if positional is None and not target.names_program(source.command.argv, table):
        # the command as written is not the program: the ENTRYPOINT it follows runs
        # first (a command already placed after it names its program itself)
        words, spans = target.in_container(source.command.argv, source.spans, engine)
        if not words and found.verdict.command is None:
            words, spans = target.launch_prefix(doc, found.path, text, engine)
            words, spans = (*words, *source.command.argv), (*spans, *source.spans)
        positional = target.positional_model(words, spans, table, arity)
    return positional


def _within_parser_bounds(
    data: EngineKnowledge, flags: FlagSpec | None, version: EngineVersion, source: CommandSource
) -> tuple[FlagSpec | None, list[settings.Used]]:
    """With the version unknown, the words of ``source`` that only some recorded
    releases read as a flag (:func:`~.settings.parser_bounds`) and the flags of the
    newest release that reads them all; else ``flags`` as they are and none."""
    if version.version is not None or flags is None:
        return flags, []
    bounds = settings.parser_bounds(data, flags, source)
    if not bounds:
        return flags, []
    return data.flags_at(flags, settings.implied_range(data, bounds).newest), bounds


def _image_outside(config: EngineConfig, command: CommandSource) -> EngineConfig:
    """``config``, with the image its runner line takes from outside the repository
    as the deployment's value (SG313: :func:`.unsettled.image_from_outside`) when no
    other value is."""
    outside = image_from_outside(command) if config.deferred is None else None
    return config if outside is None else replace(config, deferred=outside)


def _version_of(
    reading: _Reading, spec: Engine, found: Found, source: CommandSource | None
) -> EngineVersion:
    """The version in force for ``found``: stated, else the image of the container or
    service that runs it (never another service's in the same file), else the file's."""
    if reading.engine_version is None and reading.path is not None:
        # a Compose service that builds its image (docs/engines.md#built-images)
        built = built_version(spec.name, reading.doc, tuple(found.path), reading.path)
        if built is not None:
            return built
    text = version_text(source, reading.doc.data, found.path, reading.text)
    # a chart's values.yaml leaving image.tag empty: its appVersion where its template
    # says so (docs/engines.md#versions)
    chart = None
    if text is reading.text:  # no image named by a run line or a node above it
        chart = chart_image(reading.doc.data, found.path, reading.path)
    outside = image_from_outside(source) if source is not None else None
    found_version = detect_version(
        spec.name, reading.engine_version, f"image: {chart[0]}\n" if chart else text,
        reading.path, image_outside=outside.what if outside is not None else None,
    )
    if found_version.source != "image" or found_version.origin is not None:
        return found_version
    via = chart[1] if chart else image_via(reading.doc, found.path, reading.path)
    return replace(found_version, origin=via)


def program_of(spec: Engine, argv: tuple[str, ...]) -> str | None:
    """The engine program a command runs (``./llama-speculative`` → ``llama-speculative``),
    among its first words (after ``docker run … IMAGE`` or ``exec``), else ``None``. A
    program name of older builds, run by its path, is the program that replaced it (data
    table ``former_programs``: llama.cpp's ``./speculative`` is ``llama-speculative``; a
    bare ``server`` may be any word, a container's name)."""
    data = knowledge(spec.name)
    former = data.table("former_programs") if data.has_table("former_programs") else {}
    for word in argv[:32]:
        name = word.rsplit("/", 1)[-1]
        if name in spec.programs:
            return name
        if "/" in word and name in former:
            return former[name]
    return None


def _command_opts(
    spec: Engine, source: CommandSource, flags: FlagSpec | None, version: EngineVersion
) -> Options:
    """:func:`command_options`.

    Raises:
        RefusedValue: a flag given no value, judged at the version the command runs as
            found (pinned), else unknown: the words that would narrow it were not read
            (docs/engines.md#refused-values).
    """
    try:
        return command_options(spec, source, flags)
    except RefusedValue as exc:
        from specgate.inputs.engines.refused import judge

        raise judge(
            exc, spec.name, command_line=True, pinned=version.version, low=None
        ) from None


def _read_options(
    spec: Engine,
    opts: Options,
    ctx: Context,
    *,
    version: EngineVersion,
    positional: Opt | None,
    unknown: list[tuple[str, Span]],
    parsed: list[tuple[str, Span]],
    notes: list[str],
    bounds: Sequence[settings.Used] = (),
    command_line: bool = False,
) -> EngineConfig:
    """Read ``opts`` at the version in force, then judge them: SG310 for the settings
    that version lacks, SG311, the engine's own checks (docs/engines.md#versions).
    ``bounds``: words only some recorded releases read, which narrow the versions the
    command may run as its settings do; ``command_line``: the options are a command's.

    Raises:
        RefusedValue: a value not of its setting's type, judged at the version in
            force (:func:`.refused.judge`).
    """
    data = knowledge(spec.name)
    used = settings.used_settings(data, spec.settings_of(opts))
    block = settings.used_block_keys(data, opts, spec.settings_of(opts))
    implied = settings.implied_range(
        data, [*used, *block, *bounds, *settings.requirement_bounds(version)]
    )
    at = pre_release_shown(settings.in_force(data, version, implied), version)
    # defaults and version-ranged behaviours follow the implied range (docs/engines.md#versions)
    ctx = replace(
        ctx,
        version=version.version or at.implied,
        version_shown=None if version.version or at.implied is None else at.shown,
        version_low=None if version.version else implied.low,
    )
    try:
        config = spec.read(opts, ctx)
    except RefusedValue as exc:
        from specgate.inputs.engines.refused import judge

        pinned = ctx.version if ctx.version_shown is None else None
        raise judge(
            exc, spec.name, command_line=command_line, pinned=pinned, low=ctx.version_low
        ) from None
    config = target.with_target_model(config, spec.settings_of(opts), positional)
    config = settings.version_issues(
        config, data, used, implied, found=version, unknown=unknown, parsed=parsed
    )
    config = settings.between_recorded(config, data, parsed, version)
    config = forced_acceptance(config, ctx.env)
    config = settings.engine_checks(config, data, opts, ctx.env, at)
    return with_version(config, version, implied, at, notes)



_NONE_FOUND = "no speculative decoding configured"


def configures_nothing(exc: InputError) -> bool:
    """Whether ``exc`` says the engine config holds no speculative configuration at all
    (as opposed to one that cannot be read, or one of another engine): also a launcher
    of an engine specgate does not read that sets none of its speculative flags."""
    if isinstance(exc, UnreadEngine):
        return not exc.speculates
    return exc.reason.startswith(_NONE_FOUND)


class OtherEngine(InputError):
    """The claims file names an engine (``speculation.engine``) whose reader finds no
    configuration in the serving config, where other engines' readers do: ``engines``,
    the engines found (in document order). Not the end of the run where one engine is
    found: the deployment is read as that engine and the two stated engines are SG301
    (:mod:`specgate.model.resolve`)."""

    def __init__(self, reason: str, file: str, engines: tuple[str, ...]) -> None:
        super().__init__(reason, file)
        self.engines = engines


def _other_engines(
    doc: Document, text: str | None, shown: str, pointer: str | None, engine: str
) -> OtherEngine | None:
    """When the given engine finds nothing: what the other engines find there, as
    "no sglang speculative configuration in FILE (it configures vllm at /ptr)"."""
    others = [e for name, e in ENGINES.items() if name != engine]
    detector = Detector(doc, others, text)
    base: NodePath = ()
    node = doc.data
    where = shown
    if pointer is not None:
        base, node = resolve_pointer(doc.data, pointer, file=shown)
        where = f"{shown} at {pointer or '/'}"
    try:
        found = [f for f in search(node, detector, base=base) if f.verdict.kind == "config"]
    except InputError:
        return None
    if not found:
        return None
    named = " and ".join(
        f"{f.verdict.engine} at {format_pointer(_block_path(f)) or '/'}" for f in found
    )
    engines = tuple(dict.fromkeys(str(f.verdict.engine) for f in found))
    return OtherEngine(
        f"no {engine} speculative configuration in {where} (it configures {named})", shown,
        engines,
    )


def _block_path(found: Found) -> NodePath:
    """The found node's path, or its ``speculative_config`` key's when it has one (a
    serve mapping is found whole; its speculative block is what the user looks for)."""
    if isinstance(found.value, Mapping):
        for key in found.value:
            if norm_key(key) == "speculative_config":
                return (*found.path, str(key))
    return found.path

