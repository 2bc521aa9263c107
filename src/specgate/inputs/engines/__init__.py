"""Engine serving-config readers: one module per engine, this module dispatches.

Public entry points:

- :func:`load_engine_document` — read a referenced engine config file;
- :func:`read_engine_config` — find the one speculative configuration in a parsed
  document (DESIGN.md §7: pointer or search) and normalise it to
  :class:`~specgate.inputs.types.EngineConfig`;
- :func:`read_engine_file` — both, passing the source text so words inside
  multi-line YAML scalars get their exact line;
- :func:`~specgate.inputs.engines.vllm.mtp_layer_issue` — vLLM's MTP-layer check
  once the model config is known;
- :func:`with_models` — what the engine makes of the target and draft configs it
  loads (a method read from the draft's config, D from its ``n_predict``, a
  vocabulary it refuses).

Engines: ``vllm``, ``sglang``, ``trtllm``, ``transformers``, ``llamacpp``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from specgate.core.errors import InputError
from specgate.inputs.cmdline import Command, Flag, FlagSpec
from specgate.inputs.engines import follow as options_file
from specgate.inputs.engines import (
    llamacpp,
    settings,
    sglang,
    target,
    transformers,
    trtllm,
    vllm,
)
from specgate.inputs.engines._base import Context, Kind
from specgate.inputs.engines._source import (
    ENV_KEYS,
    CommandSource,
    Opt,
    Options,
    Source,
    commands_of,
    env_items,
    from_mapping,
    is_argv,
    literal_env,
    literal_value,
    looks_like_command,
    norm_key,
    run_env,
)
from specgate.inputs.engines.several import one_configuration
from specgate.inputs.engines.unread import (
    UnreadEngine,
    foreign_launcher,
    foreign_program,
    launched_by,
    named_engines,
    unread_launcher,
)
from specgate.inputs.engines.unsettled import unsettled_words
from specgate.inputs.engines.vllm import mtp_layer_issue
from specgate.inputs.knowledge import EngineKnowledge, knowledge, own_version
from specgate.inputs.pointer import (
    Found,
    Verdict,
    find_configurations,
    format_pointer,
    resolve_pointer,
    search,
)
from specgate.inputs.types import EngineConfig, EngineIssue, ModelShape, VersionInForce
from specgate.inputs.version import EngineVersion, detect_version
from specgate.load.document import Document, NodePath, Span
from specgate.load.read import load_document, read_text

__all__ = [
    "ENGINES",
    "load_engine_document",
    "mtp_layer_issue",
    "read_engine_config",
    "read_engine_file",
    "with_models",
]

TEXT_SUFFIXES = frozenset({".txt", ".sh", ".cmdline", ".bash", ".md", ".markdown"})
_SPECULATIVE_PREFIXES = ("speculative", "spec_", "draft", "model_draft", "num_speculative")


@dataclass(frozen=True)
class _Engine:
    """How to recognise and read one engine's format."""

    name: str
    programs: tuple[str, ...]
    read: Callable[[Options, Context], EngineConfig]
    detect_mapping: Callable[[Mapping[object, object]], Kind | None] | None = None
    flags: FlagSpec | None = None
    detect_flags: Callable[[CommandSource], Kind | None] | None = None
    command_options: Callable[[CommandSource], Options] | None = None
    #: The options that are the engine's own flags or keys (a bare speculative block
    #: holds none); SG310 looks only at these.
    settings_of: Callable[[Options], Options] = lambda opts: opts
    #: Options completed by the environment (llama.cpp ``LLAMA_ARG_*``); an engine
    #: with this reads a mapping it detects as a container: its command and env.
    env_options: Callable[[Options, Mapping[str, Opt]], Options] | None = None


def _flags_detector(
    spec: FlagSpec, detect: Callable[[Mapping[str, Flag]], Kind | None]
) -> Callable[[CommandSource], Kind | None]:
    return lambda source: detect(source.flags(spec))


ENGINES: Mapping[str, _Engine] = {
    "vllm": _Engine(
        "vllm",
        vllm.PROGRAMS,
        vllm.read,
        vllm.detect_mapping,
        vllm.FLAGS,
        lambda s: vllm.detect_flags(s.flags(vllm.FLAGS), vllm.dotted_options(s.command.argv)),
        vllm.command_options,
        vllm.engine_settings,
    ),
    "sglang": _Engine(
        "sglang",
        sglang.PROGRAMS,
        sglang.read,
        sglang.detect_mapping,
        sglang.FLAGS,
        _flags_detector(sglang.FLAGS, sglang.detect_flags),
    ),
    "trtllm": _Engine("trtllm", trtllm.PROGRAMS, trtllm.read, trtllm.detect_mapping),
    "transformers": _Engine("transformers", (), transformers.read, transformers.detect_mapping),
    "llamacpp": _Engine(
        "llamacpp",
        llamacpp.PROGRAMS,
        llamacpp.read,
        llamacpp.detect_mapping,
        llamacpp.FLAGS,
        llamacpp.detect_command,
        env_options=llamacpp.env_options,
    ),
}


def with_models(
    config: EngineConfig, target: ModelShape | None, draft: ModelShape | None
) -> EngineConfig:
    """``config`` as the engine resolves it once it loads the target (``target``) and
    draft (``draft``) model configs; unchanged for engines that read nothing more."""
    if config.engine == "vllm":
        from specgate.inputs.engines.vllm_rules import with_models as vllm_models

        return vllm_models(config, target, draft)
    if config.engine == "sglang":
        return sglang.with_target(config, target)
    return config


def load_engine_document(path: Path, shown: str) -> Document:
    """Read an engine config: ``.txt``/``.sh``/``.cmdline`` as plain text (a
    :class:`Document` whose ``data`` is the whole text), ``.json`` as JSON, ``.py`` as
    a Python launcher's literal keyword arguments (never run:
    :mod:`specgate.load.python_launcher`), anything
    else as YAML, where a file of several documents (a Kubernetes manifest:
    Deployment + ConfigMap) is the list of them (pointer ``/0/…``, ``/1/…``). YAML
    scalars are read as the file's reader reads them
    (:func:`specgate.load.yaml_dialects.serving_dialect`): ``010`` is 8.

    Raises:
        InputError: unreadable, too large, not UTF-8, or not parseable.
    """
    if path.suffix.lower() in TEXT_SUFFIXES:
        return Document(file=shown, data=read_text(path, shown))
    if path.suffix.lower() == ".json":
        return load_document(path, shown)
    if path.suffix.lower() == ".py":
        from specgate.load.python_launcher import load_python_launcher

        return load_python_launcher(read_text(path, shown), shown)
    from specgate.load.compose_env import interpolated, is_compose
    from specgate.load.yaml_dialects import serving_dialect
    from specgate.load.yaml_loader import load_yaml_documents

    text = read_text(path, shown)
    # read as its reader reads it: the engine's PyYAML, or go-yaml for a manifest
    doc = load_yaml_documents(text, shown, serving_dialect(text))._replace(text=text)
    # Compose fills in ${VAR} from the .env beside the file before it reads it
    return interpolated(doc, path) if is_compose(doc.data) else doc


def read_engine_file(
    path: Path,
    shown: str,
    *,
    pointer: str | None = None,
    engine: str | None = None,
    engine_version: str | None = None,
    follow: bool = True,
) -> EngineConfig:
    """:func:`load_engine_document` then :func:`read_engine_config` with the source text;
    the engine version is ``engine_version`` (the claims file's), else detected from
    image tags in the file or pinned requirements beside it (:mod:`..version`).
    ``follow``: a file with no configuration of its own may name the options file of a
    ``trtllm-serve`` command (:mod:`.follow`), read instead (once: not again from it)."""
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
) -> EngineConfig:
    if engine is not None and engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}", shown)
    engines = [ENGINES[engine]] if engine is not None else list(ENGINES.values())
    detector = _Detector(doc, engines, text)
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
        unread = unread_launcher(doc, text, pointer, shown) or foreign_launcher(
            doc, text, pointer, shown, detector.is_engine
        )
        if unread is not None:
            raise unread from None
        if engine is None:
            raise
        raise _other_engines(doc, text, shown, pointer, engine) or exc from None
    reading = _Reading(doc, detector, fragments, shown, text, engine_version, path)
    if len(configs) == 1:
        return reading.read(configs[0])
    return one_configuration(configs, reading.read, where=where, file=shown)


@dataclass(frozen=True)
class _Reading:
    """How one found configuration of a document is read (shared by every one found)."""

    doc: Document
    detector: _Detector
    fragments: list[Found]
    shown: str
    text: str | None
    engine_version: str | None
    path: Path | None

    def read(self, found: Found) -> EngineConfig:
        """``found`` normalised: options, target, version, removed settings."""
        doc, text, shown = self.doc, self.text, self.shown
        spec = ENGINES[found.verdict.engine]
        ctx_env = _sibling_env(doc, found.path)
        table = target.entries(spec.name)
        arity = target.arity(spec.name)
        notes: list[str] = []
        data = knowledge(spec.name)
        unknown: list[tuple[str, Span]] = []
        parsed: list[tuple[str, Span]] = []
        program: str | None = None
        unsettled: list[str] = []  # words the launcher does not settle (.unsettled)
        if isinstance(found.value, Mapping) and spec.env_options is not None:
            # a container or service configured by its environment (and its command)
            opts, launched = _container_options(spec, doc, found.path, found.value, text)
            positional = None
            if launched is not None and spec.flags is not None:
                unsettled = unsettled_words(launched, spec.flags, spec.name)
                unknown = settings.unknown_spellings(data, spec.flags, launched)
                parsed = settings.parser_words(data, launched)
        elif isinstance(found.value, Mapping):
            opts = from_mapping(Source(doc, text), found.path, found.value)
            positional = target.sibling_positional(doc, found.path, text, table, arity)
        else:
            source = self.detector.command(found)
            opts = _command_options(spec, source)
            program = _program(spec, source.command.argv)
            if spec.flags is not None:
                unknown = settings.unknown_spellings(data, spec.flags, source)
                parsed = settings.parser_words(data, source)
            positional = target.positional_model(source.command.argv, source.spans, table, arity)
            if positional is None:
                words, spans = target.in_container(source.command.argv, source.spans, spec.name)
                if not words and found.verdict.command is None:
                    words, spans = target.launch_prefix(doc, found.path, text, spec.name)
                    words, spans = (*words, *source.command.argv), (*spans, *source.spans)
                positional = target.positional_model(words, spans, table, arity)
            env_spans = source.env_spans()
            ctx_env = {
                **ctx_env,
                **{
                    k: Opt(v, env_spans.get(k, source.spans[0]))
                    for k, v in source.command.env.items()
                },
            }
            ctx_env.update(
                (name, Opt(value, source.spans[index] if index < len(source.spans) else Span(1, 1)))
                for name, (value, index) in run_env(source.command.argv).items()
            )
            opts, notes = _merge_fragments(opts, spec, found, self.fragments, self.detector)
            if spec.flags is not None:
                unsettled = unsettled_words(source, spec.flags, spec.name)
        notes = [*unsettled, *notes]
        if spec.env_options is not None:
            opts = spec.env_options(opts, ctx_env)
        version = detect_version(spec.name, self.engine_version, text, self.path)
        return _read_options(
            spec,
            opts,
            Context(file=shown, pointer=found.pointer, env=ctx_env, program=program),
            version=version,
            positional=positional,
            unknown=unknown,
            parsed=parsed,
            notes=notes,
        )


def _program(spec: _Engine, argv: tuple[str, ...]) -> str | None:
    """The engine program a command runs (``./llama-speculative`` → ``llama-speculative``),
    among its first words (after ``docker run … IMAGE`` or ``exec``), else ``None``."""
    for word in argv[:32]:
        name = word.rsplit("/", 1)[-1]
        if name in spec.programs:
            return name
    return None


def _read_options(
    spec: _Engine,
    opts: Options,
    ctx: Context,
    *,
    version: EngineVersion,
    positional: Opt | None,
    unknown: list[tuple[str, Span]],
    parsed: list[tuple[str, Span]],
    notes: list[str],
) -> EngineConfig:
    """Read ``opts`` at the version in force, then judge them: SG310 for the settings
    that version lacks, SG311, the engine's own checks (DESIGN §13)."""
    data = knowledge(spec.name)
    used = settings.used_settings(data, spec.settings_of(opts))
    implied = settings.implied_range(
        data, [*used, *settings.used_block_keys(data, opts, spec.settings_of(opts))]
    )
    at = settings.in_force(data, version, implied)
    # defaults and version-ranged behaviours follow the implied range (DESIGN §13)
    ctx = replace(
        ctx,
        version=version.version or at.implied,
        version_shown=None if version.version or at.implied is None else at.shown,
    )
    config = spec.read(opts, ctx)
    config = target.with_target_model(config, spec.settings_of(opts), positional)
    config = settings.version_issues(
        config, data, used, implied, found=version, unknown=unknown, parsed=parsed
    )
    config = _forced_acceptance(config, ctx.env)
    config = settings.engine_checks(config, data, opts, ctx.env, at)
    return _with_version(config, version, implied, at, notes)


def _with_version(
    config: EngineConfig,
    version: EngineVersion,
    implied: settings.Implied,
    at: VersionInForce,
    notes: list[str],
) -> EngineConfig:
    """``config`` with the version read (its own spelling and the text it came from),
    the implied range when the version is unknown, and the notes."""
    data = knowledge(config.engine)
    narrowed = version.version is None and (implied.low is not None or implied.high is not None)
    version_note = version.note
    if narrowed and version_note is not None:
        version_note = (
            f"{data.display_name} version unknown: the settings used imply "
            f"{implied.text(config.engine)}; read as {at.shown.split(' (')[0]}; state "
            "speculation.engine_version to pin it"
        )
    assumed, values = _assumed_default(config, data, version, implied, at)
    return replace(
        config,
        draft_length_assumed=assumed,
        draft_length_range=values,
        version=own_version(config.engine, version.text or "", version.version)
        if version.version
        else None,
        version_raw=version.text,
        version_source=version.source,
        implied_versions=implied.json(config.engine) if narrowed else None,
        version_in_force=at,
        notes=(*notes, *config.notes, *((version_note,) if version_note else ())),
    )


def _assumed_default(
    config: EngineConfig,
    data: EngineKnowledge,
    version: EngineVersion,
    implied: settings.Implied,
    at: VersionInForce,
) -> tuple[str | None, tuple[int, ...]]:
    """When D is the engine's default and that default differs between the versions the
    config may run (no version stated or detected; the settings used narrow the range),
    the sentence saying so and naming what settles it, and the defaults recorded over
    those versions (``()`` when some of them have none recorded: D is then unbounded);
    else ``(None, ())`` (DESIGN §13: what rests on a guessed version fails only when it
    fails at every default it may be)."""
    if config.draft_length_default is None or config.draft_length is None:
        return None, ()
    if version.version is not None:
        return None, ()
    key, setting, since = config.draft_length_default
    low = (
        implied.low if since is None or (implied.low is not None and implied.low > since) else since
    )
    values, gap = data.default_values(key, low, implied.high)
    if len(values) < 2 and not gap:
        return None, ()
    known = ", ".join(str(v) for v in values)
    if gap:
        known += (
            ", and builds with none recorded"
            if data.builds
            else ", and releases with none recorded"
        )
    sentence = (
        f"D {config.draft_length} is {data.display_name}'s default {key.replace('_', '-')} "
        f"read at {at.shown.split(' (')[0]}, a version not pinned; the default differs "
        f"between the versions this config may run ({known}): state "
        f"speculation.engine_version or set {setting} to settle it"
    )
    lengths = tuple(v for v in values if isinstance(v, int) and not isinstance(v, bool))
    return sentence, (() if gap or len(lengths) != len(values) else lengths)


def _forced_acceptance(config: EngineConfig, env: Mapping[str, Opt]) -> EngineConfig:
    """SG311 for an environment variable that forces or simulates acceptance (data:
    ``forces_acceptance``; TensorRT-LLM ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS``,
    SGLang ``SGLANG_SIMULATE_ACC_LEN``) set to a positive number. Both engines leave
    acceptance alone otherwise: SGLang's default is -1 ("turn off if < 0", it acts when
    > 0) and a value that is not a number falls back to it; TensorRT-LLM reads 0 for
    an unset or invalid value (``get_force_num_accepted_tokens``)."""
    spans = dict(config.spans)
    issues = list(config.issues)
    for name in knowledge(config.engine).forcing_variables():
        opt = env.get(name)
        if opt is None or not _positive_number(opt.value):
            continue
        field_name = f"env:{name}"
        spans[field_name] = opt.span
        issues.append(
            EngineIssue(
                "SG311",
                f"{name}={str(opt.value).strip()} forces how many drafts are accepted: an AL "
                "measured under it is synthetic",
                field_name,
            )
        )
    return replace(config, spans=spans, issues=tuple(issues))


def _positive_number(value: object) -> bool:
    """A number above 0, written as a number or as text (``"2.5"``); NaN is not."""
    if isinstance(value, bool) or value is None:
        return False
    try:
        number = float(str(value).strip())
    except (ValueError, OverflowError):
        return False
    return number > 0


_NONE_FOUND = "no speculative decoding configured"


def configures_nothing(exc: InputError) -> bool:
    """Whether ``exc`` says the engine config holds no speculative configuration at all
    (as opposed to one that cannot be read, or one of another engine): also a launcher
    of an engine specgate does not read that sets none of its speculative flags."""
    if isinstance(exc, UnreadEngine):
        return not exc.speculates
    return exc.reason.startswith(_NONE_FOUND)


def _other_engines(
    doc: Document, text: str | None, shown: str, pointer: str | None, engine: str
) -> InputError | None:
    """When the given engine finds nothing: what the other engines find there, as
    "no sglang speculative configuration in FILE (it configures vllm at /ptr)"."""
    others = [e for name, e in ENGINES.items() if name != engine]
    detector = _Detector(doc, others, text)
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
    return InputError(
        f"no {engine} speculative configuration in {where} (it configures {named})", shown
    )


def _block_path(found: Found) -> NodePath:
    """The found node's path, or its ``speculative_config`` key's when it has one (a
    serve mapping is found whole; its speculative block is what the user looks for)."""
    if isinstance(found.value, Mapping):
        for key in found.value:
            if norm_key(key) == "speculative_config":
                return (*found.path, str(key))
    return found.path


class _Detector:
    """The search's detector: verdicts for mappings, argv lists and command strings."""

    def __init__(self, doc: Document, engines: list[_Engine], text: str | None) -> None:
        self.doc = doc
        self.engines = engines
        self.text = text
        self._sources: dict[int, list[CommandSource]] = {}

    def __call__(self, node: object) -> list[Verdict]:
        if isinstance(node, Mapping):
            return [
                Verdict(e.name, kind)
                for e in self.engines
                if e.detect_mapping is not None and (kind := e.detect_mapping(node)) is not None
            ]
        if not (is_argv(node) or (looks_like_command(node) and not isinstance(node, list))):
            return []
        try:
            sources = commands_of(node, self.doc, (), None)
        except InputError:
            if node is self.doc.data:  # a whole text file that no shell could split
                raise
            return []
        verdicts: list[Verdict] = []
        foreign = 0
        for index, source in enumerate(sources):
            if launched_by(source.command.argv) is not None:
                continue  # an engine specgate does not read (unread.py names it)
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
                if kind is not None:
                    command = index if len(sources) > 1 else None
                    verdicts.append(Verdict(e.name, kind, command))
        if not verdicts and sources and foreign == len(sources):
            return [Verdict("other", "other")]  # searched no further
        return verdicts

    def _candidates(self, source: CommandSource) -> tuple[list[_Engine], bool]:
        """The engines whose program the command runs (hinted), else every engine."""
        hinted = self.hinted(source.command.argv)
        return (hinted, True) if hinted else (self.engines, False)

    def is_engine(self, argv: Sequence[str]) -> bool:
        """Whether a command may be an engine's: its program names one, or is no
        program of its own (:func:`foreign_program`)."""
        return foreign_program(argv) is None or bool(self.hinted(argv))

    def hinted(self, argv: Sequence[str]) -> list[_Engine]:
        """The engines whose program (or ``python -m`` module) is among the command's
        first words (:func:`named_engines`)."""
        named = named_engines(argv, [(e.name, e.programs) for e in self.engines])
        return [e for e in self.engines if e.name in named]

    def command(self, found: Found) -> CommandSource:
        """The command a verdict named, placed in the file (spans computed)."""
        env = {
            name: literal_value(opt.value)
            for name, opt in _sibling_env(self.doc, found.path).items()
        }
        sources = commands_of(found.value, self.doc, found.path, self.text, env)
        return sources[found.verdict.command or 0]


#: Keys of a container or service whose words run together, in order (Compose
#: ``entrypoint`` + ``command``; Kubernetes ``command`` + ``args``).
_LAUNCH_KEYS = ("entrypoint", "command", "args")


def _container_options(
    spec: _Engine,
    doc: Document,
    path: NodePath,
    container: Mapping[object, object],
    text: str | None,
) -> tuple[Options, CommandSource | None]:
    """The options of the command a container or service runs: the words of its
    ``entrypoint``, ``command`` and ``args`` (lists, or strings holding one command)
    parsed with the engine's flags, and that command; none when it states no command
    (the image's own entrypoint runs)."""
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
    return _command_options(spec, launched), launched


def _command_options(spec: _Engine, source: CommandSource) -> Options:
    if spec.command_options is not None:
        return spec.command_options(source)
    if spec.flags is None:
        raise InputError(f"{spec.name} configurations are not command lines", source.file)
    return source.options(spec.flags)


def _merge_fragments(
    opts: Options, spec: _Engine, found: Found, fragments: list[Found], detector: _Detector
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
    extra = _command_options(spec, detector.command(mine[0]))
    taken = [
        k
        for k, v in extra.items()
        if k not in opts and v.value is not None and k.startswith(_SPECULATIVE_PREFIXES)
    ]
    if not taken:
        return opts, []
    merged: Options = {**{k: extra[k] for k in taken}, **opts}
    note = (
        f"{', '.join(taken)} taken from {mine[0].pointer or '/'} (the same launcher's flags "
        "without an algorithm)"
    )
    return merged, [note]


def _sibling_env(doc: Document, path: NodePath) -> dict[str, Opt]:
    """Environment variables in ``env``-like mappings beside the configuration or
    beside any of its ancestors (nearest wins)."""
    env: dict[str, Opt] = {}
    for depth in range(len(path), -1, -1):
        try:
            _, parent = resolve_pointer(doc.data, _pointer(path[:depth]))
        except InputError:
            continue
        if not isinstance(parent, Mapping):
            continue
        for key in ENV_KEYS:
            _env_block(doc, (*path[:depth], key), parent.get(key), env)
    if doc.stream:
        # A manifest of several documents: the container that mounts a ConfigMap holds
        # the environment in another document; every env block counts, nearest first.
        for where in list(doc.positions):
            if where and isinstance(where[-1], str) and where[-1] in ENV_KEYS:
                _, block = resolve_pointer(doc.data, _pointer(where))
                _env_block(doc, where, block, env)
    return env


def _env_block(doc: Document, base: NodePath, block: object, env: dict[str, Opt]) -> None:
    """Add the variables of one ``env``-like block at ``base`` (a mapping, ``NAME=value``
    strings or Kubernetes ``[{name, value}]``; :func:`._source.env_items`) to ``env``,
    keeping earlier ones."""
    for name, value, where in env_items(block):
        env.setdefault(name, Opt(value, doc.locate((*base, *where))))


def _pointer(path: NodePath) -> str:
    return format_pointer(path)
