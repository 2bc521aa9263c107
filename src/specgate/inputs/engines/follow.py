"""Launch commands that keep their speculative configuration in an options file:
``trtllm-serve MODEL --extra_llm_api_options FILE.yaml`` (``--config``), ``vllm serve
MODEL --config FILE.yaml``, ``python3 -m sglang.launch_server --config FILE.yaml``.

When a file holds no speculative configuration of its own but a launch command of an
engine (a shell script, a Compose ``command``, a Kubernetes ``args`` list) names an
options file, that file is read as the engine config, as if the claims file had
named it: a relative path from the folder of the file holding the command, confined
to the repository (:func:`specgate.inputs.paths.resolve_reference`: no absolute
path, no ``..`` or symlink out of the repository, the file must exist). A path
inside a container (``/cfg/spec.yaml``) is followed through the container's volumes
(:mod:`specgate.inputs.volumes`): a runner line's ``-v``/``--mount`` or the Compose
service's ``volumes`` (``./serving:/cfg``), when one binds it to a relative host path;
a script's working directory (``$PWD``, ``./``) is read as the script's own folder and
the note says the mapping assumes it. Otherwise "no speculative decoding configured"
names what the volumes do (none covers it, a named volume, an absolute host path).
The options file is followed once (a command in it is not followed again).

What is known per engine is data (``specgate/data/engines/*.json``): the table
``launch_commands`` (the program words, ``trtllm-serve`` / ``vllm serve``, or the
``python -m`` module that launches the server) and the table ``options_files``
(the flag naming the file → which wins for the served model: ``file-wins`` when the
file's keys are merged over the command's, as TensorRT-LLM's
``update_llm_args_with_extra_dict`` does; ``command-wins`` when the command line
overrides the file, as vLLM's ``FlexibleArgumentParser._pull_args_from_config`` and
SGLang's ``prepare_server_args`` (``ConfigArgumentMerger``) order them). Where the
command wins and sets speculative flags of its own beside the file, the two are not
merged here: SG314 at its first such word.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath, PureWindowsPath

from specgate.core.errors import InputError
from specgate.core.vocabulary import ENGINE_NAMES
from specgate.inputs.cmdline import FlagSpec
from specgate.inputs.engines import target
from specgate.inputs.engines._base import as_int
from specgate.inputs.engines._source import (
    CommandSource,
    _node,
    commands_of,
    is_argv,
    looks_like_command,
    norm_key,
)
from specgate.inputs.engines.environment import container_env
from specgate.inputs.engines.in_container import image_prefix, in_containers, prefixed
from specgate.inputs.engines.parallel_floor import below_one
from specgate.inputs.engines.placed import version_text
from specgate.inputs.engines.unsettled import hit_span, unsettled_value
from specgate.inputs.knowledge import knowledge
from specgate.inputs.pointer import Verdict, format_pointer, resolve_pointer, search
from specgate.inputs.types import EngineConfig, EngineIssue
from specgate.inputs.version import detect_version
from specgate.inputs.volumes import Bind, compose_binds, map_inside
from specgate.load.document import Document, NodePath, Span

_OPTIONS_TABLE = "options_files"
_LAUNCH_TABLE = "launch_commands"
_KEYS_TABLE = "options_file_keys"


@dataclass(frozen=True)
class _Launcher:
    """One engine's launch commands and the flags naming options files."""

    engine: str
    programs: tuple[tuple[str, ...], ...]
    modules: frozenset[str]
    flags: FlagSpec
    precedence: Mapping[str, str]


def _launchers() -> dict[str, _Launcher]:
    out: dict[str, _Launcher] = {}
    for engine in ENGINE_NAMES:
        data = knowledge(engine)
        if not (data.has_table(_OPTIONS_TABLE) and data.has_table(_LAUNCH_TABLE)):
            continue
        launch = data.table(_LAUNCH_TABLE)
        options = data.table(_OPTIONS_TABLE)
        out[engine] = _Launcher(
            engine,
            tuple(tuple(words.split()) for words, how in launch.items() if how == "program"),
            frozenset(module for module, how in launch.items() if how == "module"),
            FlagSpec(known=dict.fromkeys(options, True)),
            options,
        )
    return out


LAUNCHERS = _launchers()
#: The engines whose launch commands may name an options file.
ENGINES = tuple(LAUNCHERS)


@dataclass(frozen=True)
class OptionsFile:
    """An options file a launch command names: the engine, the path as written, where
    the value stands, the flag as spelled, which wins for the served model and the
    command (with its place)."""

    engine: str
    value: str
    span: Span
    spelled: str
    precedence: str
    source: CommandSource
    path: NodePath


def names_options_file(argv: tuple[str, ...], engine: str) -> bool:
    """Whether the command launches ``engine`` with an options-file flag (``--config``,
    ``--extra_llm_api_options``): what its unsettled words hold is then the options file's
    question (:func:`options_files` says where the path comes from)."""
    launcher = _launcher_of(argv, (engine,)) if engine in LAUNCHERS else None
    return launcher is not None and any(
        w == flag or w.startswith(f"{flag}=") for w in argv for flag in launcher.precedence
    )


def _launcher_of(argv: tuple[str, ...], engines: tuple[str, ...]) -> _Launcher | None:
    """The launcher whose program words (``vllm serve``) or ``python -m`` module start
    the command: among its leading words (before the first flag)."""
    leading: list[str] = []
    for i, word in enumerate(argv[:8]):
        if word == "-m" and i + 1 < len(argv):
            for engine in engines:
                if argv[i + 1] in LAUNCHERS[engine].modules:
                    return LAUNCHERS[engine]
        if word.startswith("-") and word != "-m":
            break
        leading.append(PurePosixPath(word).name)
    for engine in engines:
        for words in LAUNCHERS[engine].programs:
            for start in range(len(leading) - len(words) + 1):
                if tuple(leading[start : start + len(words)]) == words:
                    return LAUNCHERS[engine]
    return None


def options_files(
    doc: Document, text: str | None, pointer: str | None, engines: tuple[str, ...] = ENGINES
) -> list[OptionsFile]:
    """Every options file a launch command of ``engines`` in ``doc`` (below
    ``pointer``) names.

    Raises:
        InputError: a bad pointer.
    """
    base: NodePath = ()
    node = doc.data
    if pointer is not None:
        base, node = resolve_pointer(doc.data, pointer, file=doc.file)

    #: a Kubernetes container's ``args`` (a Compose service's ``command``) runs after
    #: its ``command`` (``entrypoint``) or its image's ENTRYPOINT, as the engine
    #: reader joins them (:class:`.detect.Detector`): by id of the args node
    prefixes: dict[int, tuple[tuple[str, ...], str | None]] = {}

    def detect(candidate: object) -> list[Verdict]:
        if isinstance(candidate, Mapping):
            container = image_prefix(candidate)
            if container is not None:
                prefixes[id(container[0])] = (container[1], container[2])
            return []
        if not (is_argv(candidate) or looks_like_command(candidate)):
            return []
        try:
            sources = [c for s in commands_of(candidate, doc, (), None) for c in in_containers(s)]
            lead = prefixes.get(id(candidate))
            if lead is not None:
                sources = [prefixed(s, lead[0]) for s in sources]
        except InputError:
            return []
        for source in sources:
            launcher = _launcher_of(source.command.argv, engines)
            if launcher is not None:
                return [Verdict(launcher.engine, "fragment")]
        return []

    found: list[OptionsFile] = []
    for hit in search(node, detect, base=base):
        env = container_env(doc, hit.path)  # Kubernetes $(NAME): the container's env
        try:
            sources = [
                c for s in commands_of(hit.value, doc, hit.path, text, env)
                for c in in_containers(s)
            ]
        except InputError:
            continue
        lead = prefixes.get(id(hit.value))
        if lead is not None:
            words, key = lead
            spans = None if key is None or not hit.path else tuple(
                doc.locate((*hit.path[:-1], key, i)) for i in range(len(words))
            )
            sources = [prefixed(s, words, spans) for s in sources]
        for source in sources:
            launcher = _launcher_of(source.command.argv, engines)
            if launcher is None:
                continue
            for flag, precedence in launcher.precedence.items():
                option = source.options(launcher.flags).get(norm_key(flag))
                if option is None or not isinstance(option.value, str):
                    continue
                if option.value.strip():
                    spelled = option.spelled or flag
                    found.append(
                        OptionsFile(
                            launcher.engine,
                            option.value,
                            option.span,
                            spelled,
                            precedence,
                            source,
                            hit.path,
                        )
                    )
    return found


@dataclass(frozen=True)
class _Mapped:
    """Where an options file is on the host: ``relative`` to the folder of the file
    naming it (None when no volume maps it into the repository, ``why`` then says
    what the volumes do), and ``assumed``: the working directory the mapping rests on
    (a script's ``-v "$PWD/trt:/cfg"``), else None."""

    relative: str | None
    why: str = ""
    assumed: str | None = None


def _binds(doc: Document, named: OptionsFile) -> tuple[Bind, ...]:
    """The volumes of the container running the command: the runner line's ``-v`` /
    ``--mount`` (a script), else the ``volumes`` of the Compose service holding it."""
    own = getattr(named.source, "binds", ())
    if own:
        return tuple(own)
    where = named.path
    for depth in range(len(where), -1, -1):
        service = _node(doc.data, where[:depth])
        volumes = service.get("volumes") if isinstance(service, Mapping) else None
        if isinstance(volumes, list):
            return compose_binds(volumes)
    return ()


def _host_path(doc: Document, named: OptionsFile) -> _Mapped:
    """The options file's path relative to the folder of the file naming it: as
    written when relative, through the container's volumes when inside it
    (:mod:`specgate.inputs.volumes`)."""
    written = named.value.strip()
    if not (PurePosixPath(written).is_absolute() or PureWindowsPath(written).is_absolute()):
        return _Mapped(written)
    binds = _binds(doc, named)
    hit = map_inside(binds, written) if written.startswith("/") else None
    if hit is None:
        if binds:
            listed = ", ".join(repr(b.written) for b in binds[:4])
            return _Mapped(None, f"none of the command's volumes ({listed}) covers it")
        return _Mapped(None, "no volume of the file maps it to the repository")
    bind, rest = hit
    if bind.host is None:
        return _Mapped(None, f"the volume {bind.written!r} mounts a named volume there")
    if bind.host.startswith("/") or bind.host.startswith("~"):
        return _Mapped(
            None, f"the volume {bind.written!r} mounts the absolute host path {bind.host!r}, "
            "which specgate does not read"
        )
    relative = posixpath.join(bind.host, rest) if rest else bind.host
    assumed = f"the volume {bind.written!r} read as run from the script's own folder"
    return _Mapped(posixpath.normpath(relative), assumed=assumed if bind.cwd else None)


def named_files(path: Path, shown: str) -> list[str]:
    """The options files the launch commands of the engine config at ``path`` name,
    as repository paths in the style of ``shown`` (``serving/serve.sh`` →
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
        relative = _host_path(doc, named).relative
        if relative is None:
            continue
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(shown), relative))
        if joined.startswith("../") or joined == ".." or joined.startswith("/"):
            continue
        if joined not in out:
            out.append(joined)
    return out


def _at_outer_version(
    named: OptionsFile,
    doc: Document,
    text: str | None,
    path: Path,
    engine_version: str | None,
    *,
    read: Callable[[str | None], EngineConfig],
) -> EngineConfig:
    """The options file read (``read``) at the version the command's file pins: the
    run line's image as the shell expands it, else the image of the service or container
    holding the command, or the image a Compose service builds (docs/engines.md#versions,
    docs/engines.md#built-images), else requirements beside it."""
    from specgate.inputs.compose_build import built_version

    built = None if engine_version is not None else built_version(
        named.engine, doc, tuple(named.path), path
    )
    outer = built or detect_version(
        named.engine, engine_version, version_text(named.source, doc.data, named.path, text),
        path,
    )
    config = read(engine_version if engine_version is not None else outer.text)
    if engine_version is None and outer.text is not None:
        # a pre-release read where the command's file pins it, not in the claims file
        # (docs/engines.md#pre-releases)
        stated = f"speculation.engine_version {outer.text}"
        where = (outer.why or "").partition(" is a pre-release")[0] or stated
        config = replace(config, version_source=outer.source, notes=(
            *(n.replace(stated, where) for n in config.notes),
            *((outer.origin,) if outer.origin else ())))
    return config


def follow(
    doc: Document,
    text: str | None,
    shown: str,
    path: Path,
    *,
    pointer: str | None,
    engine: str | None,
    engine_version: str | None,
) -> EngineConfig | None:
    """The engine config of the one options file a launch command in ``doc`` names
    (of ``engine`` when given), read like a referenced engine config; None when no
    command names one.

    Raises:
        InputError: several different options files (choose one with ``pointer:``);
        a path inside the container no volume maps into the repository (its
        reason says why: "no speculative decoding configured …"); a path that leaves the
        repository or does not exist (at the command's line); the options file's
        own input errors.
    """
    from specgate.inputs.engines import read_engine_file
    from specgate.inputs.paths import resolve_reference

    engines = ENGINES if engine is None else tuple(e for e in ENGINES if e == engine)
    files = options_files(doc, text, pointer, engines)
    distinct = {(f.engine, f.value): f for f in files}
    if not distinct:
        return None
    if len(distinct) > 1:
        named_first = list(distinct.values())[:5]
        listed = ", ".join(f"{f.value!r} at {format_pointer(f.path) or '/'}" for f in named_first)
        if len(distinct) > len(named_first):
            listed += f" and {len(distinct) - len(named_first)} more"
        raise InputError(
            f"{len(distinct)} launch commands name options files in {shown}: {listed}; "
            "choose one with `pointer:`",
            shown,
        )
    named = next(iter(distinct.values()))
    found = _unsettled_path(named)
    if found is not None:  # `--config "$CFG"`: which file is read is not known here
        unsettled, place = found
        raise unsettled_value(
            f"{unsettled[0]}: it names the file {named.spelled} reads the speculative "
            "configuration from, so specgate cannot see which file, nor D or the method in "
            "it. Name the file literally in the command",
            shown,
            place.line,
            unsettled,
            place.column,
        )
    literal = _literal_reference(named)
    if literal is not None:  # `--config $(CFG)`, the container setting no CFG
        reference, line, column = literal
        raise InputError(
            f"no speculative decoding configured in {shown}: {named.spelled} names "
            f"`{reference}`, which the engine receives as written (Kubernetes passes a "
            "$(NAME) the container does not set unchanged), so it names no file specgate "
            f"can read; set {reference[2:-1]} in the container's env or name the file "
            "literally",
            shown,
            line,
            column,
        )
    _command_speculates(named, shown)
    mapped = _host_path(doc, named)
    relative = mapped.relative
    if relative is None:
        raise InputError(
            f"no speculative decoding configured in {shown}: the server reads it from "
            f"{named.value.strip()!r}, a path inside the container: {mapped.why}; "
            "name that file as engine_config",
            shown,
            named.span.line,
        )

    def fail(reason: str) -> InputError:
        return InputError(reason, shown, named.span.line, named.span.column)

    what = f"{named.spelled} file"
    if mapped.assumed is not None:
        what += f" ({named.value.strip()} through {mapped.assumed})"
    try:
        file, file_shown = resolve_reference(
            relative,
            what=what,
            base_dir=path.parent,
            shown_base=posixpath.dirname(shown),
            root=None,
            fail=fail,
        )
    except InputError as missing:
        if mapped.assumed is None or not missing.reason.endswith("does not exist"):
            raise  # a path out of the repository stops the file, as any reference
        # the working directory was only assumed: the deployment is not read (SG312),
        # the run goes on (docs/engines.md#options-files-inside-a-container)
        tried = posixpath.normpath(posixpath.join(posixpath.dirname(shown), relative))
        raise InputError(
            f"no speculative decoding configured in {shown}: the server reads it from "
            f"{named.value.strip()!r}, a path inside the container: {mapped.assumed} "
            f"maps it to {tried}, which does not exist (the script may run from another "
            "folder); name that file as engine_config",
            shown,
            named.span.line,
        ) from None
    config = _at_outer_version(
        named, doc, text, path, engine_version,
        read=lambda pinned: read_engine_file(
            file, file_shown, engine=named.engine, engine_version=pinned, follow=False
        ),
    )
    note = (
        f"speculative configuration read from {file_shown}, the options file that "
        f"{named.spelled} names in {shown}:{named.span.line}"
    )
    if mapped.assumed is not None:
        note += (
            f" through {mapped.assumed}: the mapping assumes that working directory "
            "(docs/engines.md#containers)"
        )
    config = replace(config, notes=(note, *config.notes))
    config = _keys_as_flags(config, named, file, file_shown)
    stated = _command_model(named)
    if stated is not None and (named.precedence == "command-wins" or not config.target_model):
        # the model stands in the command's file, not the options file: no span
        spans = {k: v for k, v in config.spans.items() if k != "target_model"}
        config = replace(config, target_model=stated, spans=spans)
    return _command_options(_command_fields(config, named, shown), named)


def _keys_as_flags(
    config: EngineConfig, named: OptionsFile, file: Path, shown: str
) -> EngineConfig:
    """``config`` with SG307 at the first key of the options file the engine turns into
    a ``--KEY`` word its parser refuses (the ``options_file_keys`` table: SGLang writes
    the key as written, so ``speculative_num_steps`` is ``--speculative_num_steps``, not
    a flag of SGLang's): the server stops with "unrecognized arguments"."""
    data = knowledge(named.engine)
    if not data.has_table(_KEYS_TABLE) or named.spelled not in data.table(_KEYS_TABLE):
        return config
    from specgate.load.read import load_document

    doc = load_document(file, shown)
    if not isinstance(doc.data, Mapping):
        return config
    for key in list(doc.data)[:4096]:
        if not isinstance(key, str) or "_" not in key:
            continue
        setting = data.setting("--" + key)
        if setting is None or f"--{key}" in setting.spellings():
            continue
        span = doc.locate((key,))
        issue = EngineIssue(
            "SG307",
            f"{data.display_name} refuses to start: {named.spelled} writes the key `{key[:60]}` "
            f"as the word `--{key[:60]}`, which its parser does not define (its flag is "
            f"spelled with `-`); it stops with 'error: unrecognized arguments: --{key[:60]}'",
            "setting:options_file_key",
            details=f"source {data.table_source(_KEYS_TABLE)}",
        )
        spans = {**config.spans, "setting:options_file_key": span}
        return replace(config, issues=(*config.issues, issue), spans=spans)
    return config


def _command_speculates(named: OptionsFile, shown: str) -> None:
    """Where the command line wins over the options file (``command-wins``) and the
    command sets speculative flags of its own beside it (``--config sgl.yaml
    --speculative-num-steps 2``), which of them the engine serves is the merge specgate
    does not make: SG314 at the first such word, never the file's value read as served.

    Raises:
        UnsettledValue: as said."""
    from specgate.core.errors import UnsettledValue
    from specgate.inputs.engines.registry import ENGINES as READERS

    spec = READERS.get(named.engine)
    if named.precedence != "command-wins" or spec is None or spec.detect_flags is None:
        return
    if spec.detect_flags(named.source) is None:
        return
    argv = named.source.command.argv
    index = next((i for i, w in enumerate(argv) if "spec" in w and w.startswith("-")), 0)
    span = named.source.spans[index] if index < len(named.source.spans) else named.span
    raise UnsettledValue(
        f"{argv[index][:60]} beside {named.spelled} {named.value.strip()[:80]}: "
        f"{knowledge(named.engine).display_name} reads the file's keys first and the "
        "command's words after them, so the command's win; specgate does not merge the "
        "two, so neither D nor the method is settled (docs/engines.md#command-lines-and-launchers)",
        shown,
        span.line,
        origin="repository",
        what=argv[index],
        column=span.column,
    )


def _unsettled_path(
    named: OptionsFile,
) -> tuple[tuple[str, bool, bool], Span] | None:
    """The launcher's hit ``(what, splits, from_file)`` for the word that gives the
    options file's path, when the launcher does not settle it (``--extra_llm_api_options
    $OPTS``, ``--config="$CFG"``, ``"$1"``, ``$(ls …)``), with where the expansion
    stands in the file (its ``$``; the start of the word holding it when the launcher
    substituted it, ``CFG="$SPEC_FILE"`` before ``--config "$CFG"``); None for a settled
    path."""
    source = named.source
    command = source.command
    for index, hit in sorted(command.unresolved.items()):
        if index >= len(command.argv) or index >= len(source.spans):
            continue
        word, previous = command.argv[index], command.argv[index - 1] if index else ""
        if (
            source.spans[index] == named.span
            or word.partition("=")[0] == named.spelled
            or previous == named.spelled
        ):
            return hit, hit_span(source, index, hit) or source.spans[index]
    return None


_REFERENCE_RE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def _literal_reference(named: OptionsFile) -> tuple[str, int, int | None] | None:
    """A Kubernetes ``$(NAME)`` left as written in the options file's path (every
    reference the container's env sets, and every shell expansion, was settled or
    made a hit before: what is left is text the engine receives), with the line and
    column of its ``$`` (the word's when it cannot be traced); else None."""
    found = _REFERENCE_RE.search(named.value)
    if found is None:
        return None
    source = named.source
    index = next(
        (i for i, span in enumerate(source.spans) if span == named.span
         and i < len(source.command.argv) and found.group() in source.command.argv[i]),
        None,
    )
    hit = (f"`{found.group()}`", False, True)
    place = hit_span(source, index, hit) if index is not None else None
    if place is not None:
        return found.group(), place.line, place.column
    return found.group(), named.span.line, named.span.column


_FIELDS_TABLE = "command_fields"
_COMMAND_OPTIONS_TABLE = "command_options"


def _command_options(config: EngineConfig, named: OptionsFile) -> EngineConfig:
    """``config`` served with the command's options that the options file may also set
    as keys (the engine's ``command_options`` table: ``--backend`` → ``backend``), by
    the engine's reader of them (TensorRT-LLM: :func:`.trtllm.with_backend`)."""
    from specgate.inputs.engines import trtllm

    data = knowledge(named.engine)
    if named.engine != "trtllm" or not data.has_table(_COMMAND_OPTIONS_TABLE):
        return config
    options = named.source.options(data.flags())
    for flag, key in data.table(_COMMAND_OPTIONS_TABLE).items():
        opt = options.get(norm_key(flag))
        if key == "backend" and opt is not None and isinstance(opt.value, str):
            config = trtllm.with_backend(config, opt)
    return config


def _command_fields(config: EngineConfig, named: OptionsFile, shown: str) -> EngineConfig:
    """``config`` with the serving numbers the command states (the engine's
    ``command_fields`` table: ``--tp_size`` → ``tensor_parallel_size``), where its
    precedence lets them stand: over the file's (``command-wins``) or where the file
    states none (``file-wins``). Their spans are in the command's file, so they are
    said in a note instead.

    Raises:
        InputError: a value that is not an integer, at the command's line.
    """
    data = knowledge(named.engine)
    if not data.has_table(_FIELDS_TABLE):
        return config
    options = named.source.options(data.flags())
    notes = list(config.notes)
    spans = dict(config.spans)
    changes: dict[str, int] = {}
    for flag, field_name in data.table(_FIELDS_TABLE).items():
        opt = options.get(norm_key(flag))
        if opt is None or opt.value is None:
            continue
        value = as_int(opt, opt.spelled or flag, shown)
        current = getattr(config, field_name)
        if value < 1:
            # judged as a TP of 0 in the file itself is, by the engine's own refusal
            at = config.version_in_force
            spelled = f"{opt.spelled or flag} in {shown}:{opt.span.line}"
            issue = below_one(
                named.engine,
                value,
                spelled,
                field_name,
                pinned=at.version if at is not None else None,
                judged=(at.version or at.implied) if at is not None else None,
                low=at.low if at is not None else None,
            )
            config = replace(config, issues=(*config.issues, issue))
            continue
        if current is not None and named.precedence == "file-wins":
            continue
        changes[field_name] = value
        spans.pop(field_name, None)
        notes.append(f"{field_name} {value} from {opt.spelled or flag} in {shown}:{opt.span.line}")
    if not changes:
        return config
    issues = config.issues
    draft_tp = config.draft_tensor_parallel_size
    if "tensor_parallel_size" in changes:
        issues, draft_tp = _draft_tp_issues(config, changes["tensor_parallel_size"])
    return replace(
        config,
        spans=spans,
        notes=tuple(notes),
        issues=issues,
        draft_tensor_parallel_size=draft_tp,
        **changes,  # type: ignore[arg-type]
    )


def _draft_tp_issues(
    config: EngineConfig, target_tp: int
) -> tuple[tuple[EngineIssue, ...], int | None]:
    """``config``'s issues with the draft-TP check made again at the target TP the
    command states (the options file judged it at its own, or vLLM's default), and the
    draft TP that then runs: one deployment, one verdict, wherever the TP is written."""
    from specgate.inputs.engines.vllm import draft_tp_problem
    from specgate.inputs.knowledge import parse_version

    if config.engine != "vllm" or config.draft_tensor_parallel_size is None:
        return config.issues, config.draft_tensor_parallel_size
    stated = config.draft_tensor_parallel_size if config.resolution.get("draft_tp_stated") else None
    method = config.resolution.get("method")
    kept = tuple(i for i in config.issues if i.field != "draft_tensor_parallel_size")
    version = parse_version(config.version) if config.version else None
    served, problem = draft_tp_problem(
        stated if stated is not None else 0, target_tp, str(method), version
    ) if stated is not None else draft_tp_problem_unset(target_tp, str(method), version)
    if problem is None:
        return kept, served
    issue = EngineIssue("SG307", problem[0], "draft_tensor_parallel_size", problem[1])
    return (*kept, issue), served


def draft_tp_problem_unset(
    target_tp: int, method: str, version: tuple[int, ...] | None
) -> tuple[int | None, None]:
    """The draft TP vLLM fills when none is stated (the target's; 1 for MLP speculators)."""
    from specgate.inputs.engines.vllm_rules import draft_tp

    served, _ = draft_tp(None, target_tp, method, version)
    return served, None


def _command_model(named: OptionsFile) -> str | None:
    """The served model the command itself names: its positional model word, else
    a model option (the engine's ``target_model`` table, in its order)."""
    table = target.entries(named.engine)
    argv, spans = named.source.command.argv, named.source.spans
    positional = target.positional_model(argv, spans, table, target.arity(named.engine))
    options = named.source.options(knowledge(named.engine).flags())
    for name, how in table.items():
        opt = positional if how in ("positional", "interspersed") else options.get(name)
        if opt is not None and isinstance(opt.value, str) and opt.value.strip():
            return opt.value.strip()
    return None
