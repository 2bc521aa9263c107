"""Launchers of engines specgate does not read, named as such (docs/engines.md#not-read).

A serving config that launches Text Generation Inference (``text-generation-launcher
--speculate 2``), LMDeploy (``lmdeploy serve api_server … --speculative-algorithm …``),
MLX-LM (``mlx_lm.server --draft-model …``), Ollama and the like configures speculation
specgate cannot judge: "no speculative decoding configured" would be wrong (it may well
speculate). When no configuration of an engine specgate reads is found, the file is
searched for such a launcher: a command whose program (its file name, or ``python -m
MODULE``) is one of a launcher's, a command or mapping naming one of its container
images (``image:``, ``repository:``, a ``docker run`` word). The input error then names
the engine, where it is launched, and the speculative flags it sets there.

The launchers are data (``specgate/data/unread-launchers.json``: programs, modules,
images, speculative flags, the source each was read from), read by the generic code
here. Nothing of the file runs; the search is the document search of
:mod:`specgate.inputs.pointer` (bounded depth), commands split as a shell would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

from specgate.core.data import read_data
from specgate.core.errors import InputError
from specgate.core.vocabulary import ENGINE_NAMES
from specgate.inputs.cmdline import split_commands
from specgate.inputs.containers import ImageEntry, image_entry, known_repository, parse_image
from specgate.inputs.knowledge import knowledge
from specgate.inputs.pointer import Verdict, format_pointer, resolve_pointer, search
from specgate.load.document import Document, NodePath, Span

#: Words before the program that do not name it (``exec python3 -m mlx_lm.server``).
_WRAPPERS = frozenset({"exec", "sudo", "nohup", "env", "time", "command", "uv", "run"})
_PYTHONS = ("python", "python3")
#: Programs that run another program given later on their command line (a container,
#: a job launcher, a shell): the engine is not their own word, so the command's flags
#: decide which engine it is, as for a command that starts with its flags.
_RUNNERS = frozenset({
    "docker", "podman", "nvidia-docker", "singularity", "apptainer", "enroot", "kubectl",
    "srun", "sbatch", "salloc", "mpirun", "mpiexec", "torchrun", "deepspeed", "accelerate",
    "ray", "bash", "sh", "zsh", "numactl", "taskset", "timeout", "stdbuf", "nice", "ionice",
    "xargs", "tini", "dumb-init", "gosu", "su-exec", "pipx", "uvx", "conda", "mamba",
    "micromamba", "poetry", "pdm", "hatch", "pixi", "rye", "modal", "sky", "watch",
})


@dataclass(frozen=True)
class Launcher:
    """One engine specgate does not read: how its launch is recognised."""

    engine: str
    programs: frozenset[str]
    modules: frozenset[str]
    images: tuple[str, ...]
    speculative: tuple[str, ...]
    #: A fork that builds another engine's programs (ik_llama.cpp's llama-server): a
    #: command of one of ``fork_programs`` is this engine when it sets one of
    #: ``fork_flags``, flags only the fork has.
    fork_programs: frozenset[str] = frozenset()
    fork_flags: tuple[str, ...] = ()
    #: Flags whose value marks the fork when it holds the text given (``--spec-type``
    #: stage entries ``mtp:n_max=1``).
    fork_marks: tuple[tuple[str, str], ...] = ()


class UnreadEngine(InputError):
    """The serving config launches an engine specgate does not read. ``speculates``:
    the launch sets one of that engine's speculative flags (else a deployment whose
    speculation is off agrees with it, as with a config that configures nothing)."""

    def __init__(
        self,
        reason: str,
        file: str,
        place: Span | None,
        *,
        speculates: bool,
    ) -> None:
        line, column = (place.line, place.column) if place is not None else (None, None)
        super().__init__(reason, file, line, column)
        self.speculates = speculates

    #: ``""``: the rule's own severity (warn); :class:`NotStarted` fails.
    severity = ""


class NotStarted(UnreadEngine):
    """The container the configuration is in does not start: the platform refuses it
    before the engine runs (a ``configMapKeyRef`` to a key its ConfigMap lacks). A
    finding at its line (SG312, a fail: known from the platform's own rules) whatever
    else the file configures."""

    severity = "fail"


@cache
def launchers() -> tuple[Launcher, ...]:
    """The launchers of ``unread-launchers.json``, in file order."""
    data = json.loads(read_data("unread-launchers.json"))
    return tuple(
        Launcher(
            entry["engine"],
            frozenset(entry["programs"]),
            frozenset(entry["modules"]),
            tuple(entry["images"]),
            tuple(entry["speculative"]),
            frozenset(entry.get("fork_of", {}).get("programs", ())),
            tuple(entry.get("fork_of", {}).get("flags", ())),
            tuple(entry.get("fork_of", {}).get("value_marks", {}).items()),
        )
        for entry in data["launchers"]
    )


def fork_launcher(argv: Sequence[str]) -> str | None:
    """The engine a command runs when it is a fork's build of another engine's program
    that sets a flag only the fork has (``llama-server … -mtp``: ik_llama.cpp), else
    None. The engine whose program it is leaves such a command to this module, so the
    fork is named as not read instead of being judged by the other engine's flags."""
    launcher = _by_program(argv[:256])
    forked = launcher is not None and bool(launcher.fork_programs)
    return launcher.engine if launcher is not None and forked else None


def _below(doc: Document, pointer: str | None, shown: str) -> tuple[NodePath, object] | None:
    """Where to search ``doc``: its root, or the node at ``pointer`` (``None`` when the
    pointer names no node: nothing below it launches anything)."""
    if pointer is None:
        return (), doc.data
    try:
        return resolve_pointer(doc.data, pointer, file=shown)
    except InputError:
        return None


def unread_launcher(
    doc: Document, text: str | None, pointer: str | None, shown: str
) -> UnreadEngine | None:
    """The input error naming the first launcher of an unread engine in ``doc`` (below
    ``pointer`` when given): "serving config launches Text Generation Inference (TGI)
    (text-generation-launcher at /command), which specgate does not read …", at the
    launch's line; None when there is none."""
    below = _below(doc, pointer, shown)
    if below is None:
        return None
    base, node = below
    found = search(node, _detect, base=base)
    if not found:
        return None
    first = found[0]
    launcher = next(x for x in launchers() if x.engine == first.verdict.engine)
    words = _words(first.value)
    setting = [flag for flag in launcher.speculative if _sets(words, flag)]
    where = f" at {first.pointer}" if first.pointer else ""
    unchecked = f"; its {', '.join(setting)} not checked" if setting else ""
    return UnreadEngine(
        f"serving config launches {launcher.engine}{where}, which specgate does not read "
        f"(it reads {read_engines()} configurations){unchecked}",
        shown,
        _place(doc, first.path, first.value, _launch_index),
        speculates=bool(setting),
    )


def _place(
    doc: Document,
    path: NodePath,
    value: object,
    pick: Callable[[Sequence[str]], int | None],
) -> Span | None:
    """Where the word a finding on a launch is about stands (``pick`` gives its index
    in a command's argv, None for a command it is not in): in a text file, that word of
    the first command holding it; in a structured file, that item of an argv list, the
    ``image`` / ``repository`` value of a mapping, else the command's value (a scalar)
    or key. Never column 1 of a line the word is not at."""
    if path == () and isinstance(doc.data, str):
        for command in split_commands(doc.data):
            index = pick(command.argv)
            if index is None:
                continue
            if index < min(len(command.lines), len(command.columns)):
                return Span(1 + command.lines[index], command.columns[index])
            return Span(1 + command.lines[0], command.columns[0]) if command.columns else None
        return None
    if isinstance(value, Mapping):
        key = next(
            (k for k in ("image", "repository")
             if isinstance(value.get(k), str) and _by_image(value[k]) is not None),
            None,
        )
        return doc.locate((*path, key)) if key is not None else doc.locate(path)
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        index = pick(value)
        if index is not None:
            return doc.locate((*path, index))
    return doc.locate(path)


def _first_word(argv: Sequence[str]) -> int:
    """The index of ``argv``'s program word: past wrappers and ``NAME=value``."""
    index = 0
    while index < len(argv) and (argv[index] in _WRAPPERS or "=" in argv[index]):
        index += 1
    return index


def _launch_index(argv: Sequence[str]) -> int | None:
    """The index of the word by which ``argv`` launches an unread engine: its program
    (:func:`_by_program`) or the first image of one (:func:`_by_image`); else None."""
    if _by_program(argv) is not None:
        return _first_word(argv)
    return next((i for i, w in enumerate(argv) if _by_image(w) is not None), None)


def _detect(node: object) -> Sequence[Verdict]:
    if isinstance(node, Mapping):
        for key in ("image", "repository"):
            value = node.get(key)
            if isinstance(value, str) and (launcher := _by_image(value)) is not None:
                return [Verdict(launcher.engine, "config")]
        return []
    for words in _commands(node):
        launcher = _detect_words(words)
        if launcher is not None:
            return [Verdict(launcher.engine, "config")]
    return []


def launched_by(argv: Sequence[str]) -> Launcher | None:
    """The unread engine whose program (or container image) ``argv`` runs (``lmdeploy serve …``,
    ``python -m mlx_lm.server …``), else None: such a command is no configuration of
    an engine specgate reads, even where its flags are spelled alike (LMDeploy's
    ``--speculative-algorithm`` is SGLang's spelling too); a ``docker run`` of one of its
    images likewise."""
    return _detect_words(argv)


def _detect_words(words: Sequence[str]) -> Launcher | None:
    return _by_program(words) or next((x for w in words if (x := _by_image(w)) is not None), None)


def _commands(node: object) -> list[tuple[str, ...]]:
    """The argv of each command a string or an argv list holds (none when it cannot
    be split)."""
    if isinstance(node, list) and node and all(isinstance(x, str) for x in node):
        return [tuple(node)]
    if not isinstance(node, str) or not node.strip():
        return []
    try:
        return [c.argv for c in split_commands(node)]
    except InputError:
        return []


def _words(node: object) -> tuple[str, ...]:
    if isinstance(node, Mapping):
        out: list[str] = []
        for key, value in node.items():
            out.append(str(key))
            out.extend(w for argv in _commands(value) for w in argv)
            if isinstance(value, list):
                out.extend(str(v) for v in value)
        return tuple(out)
    return tuple(w for argv in _commands(node) for w in argv)


def _sets(words: Sequence[str], flag: str) -> bool:
    """Whether ``words`` set ``flag`` (``--flag``, ``--flag=v``, ``NAME=v`` for a variable)."""
    return any(w == flag or w.startswith(flag + "=") for w in words)


def _marked(words: Sequence[str], flag: str, mark: str) -> bool:
    """Whether ``words`` give ``flag`` a value holding ``mark`` (``--flag v``, ``--flag=v``)."""
    for i, word in enumerate(words):
        if word.startswith(flag + "=") and mark in word[len(flag) + 1 :]:
            return True
        if word == flag and i + 1 < len(words) and mark in words[i + 1]:
            return True
    return False


def _by_program(argv: Sequence[str]) -> Launcher | None:
    words = list(argv)
    while words and (words[0] in _WRAPPERS or "=" in words[0]):
        words.pop(0)
    if not words:
        return None
    program = PurePosixPath(words[0]).name
    module = None
    if program.startswith(_PYTHONS) and len(words) > 2 and words[1] == "-m":
        module = words[2]
    for launcher in launchers():
        if program in launcher.programs or (module is not None and module in launcher.modules):
            return launcher
    for launcher in launchers():
        if program in launcher.fork_programs and (
            any(_sets(words, f) for f in launcher.fork_flags)
            or any(_marked(words, flag, mark) for flag, mark in launcher.fork_marks)
        ):
            return launcher
    return None


def _by_image(word: str) -> Launcher | None:
    name = word.split("@", 1)[0]
    if ":" in PurePosixPath(name).name:
        name = name.rsplit(":", 1)[0]
    for launcher in launchers():
        if name in launcher.images or any(
            name.endswith("/" + image) for image in launcher.images
        ):
            return launcher
    return None



def foreign_program(argv: Sequence[str]) -> str | None:
    """The program a command runs when that is a word of its own that names no engine's
    launcher (``rapid-mlx serve …``; ``python3 examples/…/spec_decode.py`` gives the
    script), else None: the command starts with a flag, a variable or a runner of
    another program (``docker run``, ``torchrun``, ``bash -c``), or runs ``python -m``.
    An engine's former program name (llama.cpp's ``./speculative`` of builds before the
    ``llama-`` prefix: tables ``former_programs``) leaves the command to its flags too.
    The caller has already found no engine program among its first words."""
    words = list(argv[:64])
    while words and (words[0] in _WRAPPERS or "=" in words[0]):
        words.pop(0)
    if not words or words[0].startswith(("-", "$", "`", "(")):
        return None
    program = PurePosixPath(words[0]).name
    if program in _RUNNERS or not program or program in _former_programs():
        return None
    if program.startswith(_PYTHONS):
        script = next((w for w in words[1:3] if not w.startswith("-")), None)
        if len(words) > 1 and words[1] == "-m":
            return None  # a module: named by the engines' programs, or searched as flags
        return script if script is not None and script.endswith(".py") else None
    return words[0]


@cache
def launch_words(engine: str, programs: tuple[str, ...]) -> tuple[str, ...]:
    """The words that name ``engine`` as a command's program: its reader's ``programs``
    and the program words and ``python -m`` modules of its ``launch_commands`` table."""
    data = knowledge(engine)
    table = data.table("launch_commands") if data.has_table("launch_commands") else {}
    words = {name.split()[0] for name in table}
    return tuple(dict.fromkeys((*programs, *sorted(words))))


def named_engines(
    argv: Sequence[str], engines: Sequence[tuple[str, tuple[str, ...]]]
) -> frozenset[str]:
    """The names of ``engines`` ((name, programs) pairs) whose program or ``python -m``
    module (:func:`launch_words`) is among the command's first words (before a flag)."""
    heads = []
    for word in list(argv)[:4]:
        if word.startswith("-") and word != "-m":
            break
        heads.append(PurePosixPath(word).name)
    return frozenset(
        name
        for name, programs in engines
        if any(h.startswith(p) for h in heads for p in launch_words(name, programs))
    )


@cache
def read_engines() -> str:
    """The engines specgate reads, by display name, as a message names them ("vLLM,
    SGLang, … and MLX-LM"): :data:`~specgate.core.vocabulary.ENGINE_NAMES`, which a
    test holds to the registry (:mod:`.registry`)."""
    names = [knowledge(engine).display_name for engine in ENGINE_NAMES]
    return f"{', '.join(names[:-1])} and {names[-1]}"


@cache
def _former_programs() -> frozenset[str]:
    names: set[str] = set()
    for engine in ENGINE_NAMES:
        data = knowledge(engine)
        if data.has_table("former_programs"):
            names.update(data.table("former_programs"))
    return frozenset(names)


def _speculative_flags(words: Sequence[str]) -> list[str]:
    """The flags of ``words`` that speak of speculation (``--speculative-config``,
    ``--num_spec_tokens``, ``--draft-model``), as written, at most eight."""
    out: list[str] = []
    for word in words[:4096]:
        name = word.partition("=")[0]
        lowered = name.lower()
        if name.startswith("-") and ("spec" in lowered or "draft" in lowered) and name not in out:
            out.append(name)
    return out[:8]


def foreign_launcher(
    doc: Document,
    text: str | None,
    pointer: str | None,
    shown: str,
    is_engine: Callable[[Sequence[str]], bool],
) -> UnreadEngine | None:
    """The input error naming the first command of ``doc`` that runs a program no engine
    specgate reads is (:func:`foreign_program`; ``is_engine`` tells an engine's command)
    with speculative flags: the engine must come from the program word, never from
    flags spelled alike (Rapid-MLX copies vLLM's ``--speculative-config``), and a
    script specgate does not read is said to be one, never "no speculative decoding
    configured"."""
    below = _below(doc, pointer, shown)
    if below is None:
        return None
    base, node = below

    def detect(value: object) -> Sequence[Verdict]:
        if isinstance(value, Mapping):
            return []
        for words in _commands(value):
            program = foreign_program(words)
            if program is not None and not is_engine(words) and _speculative_flags(words):
                return [Verdict(program, "config")]
        return []

    found = search(node, detect, base=base)
    if not found:
        return None
    first = found[0]
    program = first.verdict.engine
    words = next(
        (w for w in _commands(first.value) if foreign_program(w) == program), ()
    )
    flags = ", ".join(_speculative_flags(words))

    def program_index(argv: Sequence[str]) -> int | None:
        if foreign_program(argv) != program:
            return None
        start = _first_word(argv)
        return next((i for i in range(start, min(len(argv), start + 3)) if argv[i] == program),
                    start)
    shown_program = program if len(program) <= 80 else program[:79] + "…"
    place = _place(doc, first.path, first.value, program_index)
    bare = _no_entrypoint(doc, first.path)
    if bare is not None:
        return UnreadEngine(_no_entrypoint_reason(bare, shown_program, flags), shown, place,
                            speculates=True)
    unknown = _unknown_entrypoint(doc, first.path)
    if unknown is not None:
        return UnreadEngine(
            f"serving config runs the ENTRYPOINT of {unknown}, which specgate does not know, "
            f"with `{shown_program}` … as its arguments; its {flags} not checked: name the "
            "engine's launch command in the service (Compose `entrypoint:`, Kubernetes "
            "`command:`), or state speculation.mechanism and speculation.draft_length in "
            "the claims file",
            shown,
            place,
            speculates=True,
        )
    what = (
        f"the Python script {shown_program}, which specgate does not read"
        if program.endswith(".py")
        else f"{shown_program}, which is not an engine specgate reads (it reads "
        f"{read_engines()} configurations)"
    )
    return UnreadEngine(
        f"serving config runs {what}; its {flags} not checked: state "
        "speculation.mechanism and speculation.draft_length in the claims file instead "
        "of engine_config",
        shown,
        place,
        speculates=True,
    )


@dataclass(frozen=True)
class _Bare:
    """A container command run as written: its image sets no ENTRYPOINT that starts the
    engine's server."""

    image: str
    key: str
    engine: str
    server: tuple[str, ...]
    source: str


def bare_image(image: str) -> ImageEntry | None:
    """The table's entry for ``image`` when that image sets no ENTRYPOINT that starts
    the server (``entrypoint`` null in ``image-entrypoints.json``); else None. A variable
    in the tag (``lmsysorg/sglang:${TAG}``) is the repository's entry for any tag. The
    Dockerfile was read at one commit, so what it says of another tag is an assumption:
    the finding warns (docs/trust.md), pinned tag or not."""
    ref = parse_image(image)
    if ref is None:
        slash = image.rfind("/")
        name, colon, tag = image[slash + 1:].partition(":")
        ref = parse_image(image[: slash + 1] + name) if colon and "$" in tag else None
        entry = image_entry(ref) if ref is not None else None
    else:
        entry = image_entry(ref)
    if entry is None or entry.entrypoint is not None:
        return None
    return entry


def _first_is_flag(command: object) -> bool:
    """Whether the command a container runs starts with a flag (``--model-path``):
    then that flag is the program the container runs when its image has no
    ENTRYPOINT (it never starts)."""
    words = _commands(command)
    return len(words) == 1 and bool(words[0]) and words[0][0].startswith("-")


def bare_command(container: Mapping[object, object]) -> object | None:
    """The command node of a Kubernetes container (``args``, no ``command``) or a
    Compose service (``command``, no ``entrypoint``) whose image sets no ENTRYPOINT
    that starts the server, when it starts with a flag (:func:`_first_is_flag`); else
    None. The container runs that flag as its program: no engine reads it."""
    image = container.get("image")
    if not isinstance(image, str):
        return None
    override, follows = ("command", "args") if "name" in container else ("entrypoint", "command")
    command = container.get(follows)
    if container.get(override) is not None or not _first_is_flag(command):
        return None
    return command if bare_image(image) is not None else None


def bare_launcher(doc: Document, text: str | None, pointer: str | None,
                  shown: str) -> UnreadEngine | None:
    """The finding for the first container command (Kubernetes ``args``, Compose
    ``command``, the words after the image of a ``docker run``) that starts with a
    flag on an image with no ENTRYPOINT that starts the server: the flag is the
    program the container runs, and the container does not start (issue 24). A
    warning, pinned tag or not (:func:`bare_image`)."""
    below = _below(doc, pointer, shown)
    if below is None:
        return None
    base, node = below

    def detect(value: object) -> Sequence[Verdict]:
        if isinstance(value, Mapping):
            return [Verdict("bare", "config")] if bare_command(value) is not None else []
        if any(bare_run(words) is not None for words in _commands(value)):
            return [Verdict("run", "config")]
        return []

    found = search(node, detect, base=base)
    if not found:
        return None
    first = found[0]
    if isinstance(first.value, Mapping):
        container = first.value
        bare = _no_entrypoint(doc, (*first.path, "args" if "name" in container else "command"))
        if bare is None:
            return None
        command = container[bare.key]
        at = (*first.path, bare.key, 0) if isinstance(command, list) else (*first.path, bare.key)
        return _bare_finding(bare, _commands(command)[0], shown, doc.locate(at))
    return _bare_run(doc, first.path, first.value, shown)


def bare_run(argv: Sequence[str]) -> ImageEntry | None:
    """For a ``docker run``/``podman run`` (no ``--entrypoint``) whose words after the
    image start with a flag, on an image with no ENTRYPOINT that starts the server:
    :func:`bare_image`'s answer; else None."""
    from specgate.inputs.runners import read_runner

    launch = read_runner(argv)
    if (launch is None or launch.runner == "docker compose run" or launch.unsettled is not None
            or launch.target is None or launch.target_index is None
            or launch.entrypoint is not None or not launch.command
            or not launch.command[0].startswith("-")):
        return None
    return bare_image(launch.target)


def _bare_run(doc: Document, path: NodePath, value: object, shown: str) -> UnreadEngine | None:
    """A ``docker run``/``podman run`` (a text file, a string or an argv list of a
    structured one) whose words after a bare image start with a flag (:func:`bare_run`),
    placed at that flag."""
    from specgate.inputs.runners import read_runner

    for words in _commands(value)[:4096]:
        launch = read_runner(words)
        found = bare_run(words)
        if found is None or launch is None or launch.target is None or not launch.command:
            continue
        entry = found
        at = (launch.target_index or 0) + 1

        def pick(argv: Sequence[str], at: int = at) -> int | None:
            return at if bare_run(argv) is not None else None

        image = launch.target if len(launch.target) <= 80 else launch.target[:79] + "…"
        bare = _Bare(image, "the command after the image", knowledge(entry.engine).display_name,
                     entry.server, entry.source)
        return _bare_finding(bare, tuple(launch.command), shown, _place(doc, path, value, pick))
    return None


def _bare_finding(bare: _Bare, words: Sequence[str], shown: str,
                  place: Span | None) -> UnreadEngine:
    program = words[0] if len(words[0]) <= 80 else words[0][:79] + "…"
    flags = ", ".join(_speculative_flags(words)) or "flags"
    return UnreadEngine(_no_entrypoint_reason(bare, program, flags), shown, place,
                        speculates=bool(_speculative_flags(words)))


def _following(
    doc: Document, path: NodePath
) -> tuple[Mapping[object, object], str] | None:
    """(the container, its key) when ``path`` is the command that follows the image's
    ENTRYPOINT: a Kubernetes container's ``args`` with no ``command``, a Compose
    service's ``command`` with no ``entrypoint``; else None."""
    if not path or not isinstance(path[-1], str):
        return None
    try:
        _, container = resolve_pointer(doc.data, format_pointer(path[:-1]))
    except InputError:
        return None
    if not isinstance(container, Mapping):
        return None
    override, follows = ("command", "args") if "name" in container else ("entrypoint", "command")
    if path[-1] != follows or container.get(override) is not None:
        return None
    return container, follows


def _no_entrypoint(doc: Document, path: NodePath) -> _Bare | None:
    """When ``path`` is the command that follows the image's ENTRYPOINT (a Kubernetes
    container's ``args`` with no ``command``, a Compose service's ``command`` with no
    ``entrypoint``) and the image, one of an engine specgate reads, has no ENTRYPOINT
    that starts the server (``image-entrypoints.json``: ``entrypoint`` null), what to
    say: the command's first word is then the program the container runs."""
    found_container = _following(doc, path)
    written = found_container[0].get("image") if found_container is not None else None
    if found_container is None or not isinstance(written, str):
        return None
    follows = found_container[1]
    found = bare_image(written)
    if found is None:
        return None
    entry = found
    image = written if len(written) <= 80 else written[:79] + "…"
    name = knowledge(entry.engine).display_name
    return _Bare(image, follows, name, entry.server, entry.source)


def _unknown_entrypoint(doc: Document, path: NodePath) -> str | None:
    """When ``path`` is the command that follows the image's ENTRYPOINT (Kubernetes
    ``args`` with no ``command``, Compose ``command`` with no ``entrypoint``) and that
    ENTRYPOINT is not known (an image of no entry in ``image-entrypoints.json``, or the
    image a Compose service builds whose ENTRYPOINT is not settled): how to name the
    image; the command's first word is then an argument, not the program (trial3/14)."""
    found = _following(doc, path)
    if found is None:
        return None
    container = found[0]
    image = container.get("image")
    if "build" in container and "name" not in container and (
        not isinstance(image, str) or container.get("pull_policy") == "build"
    ):
        return f"the image service {str(path[-2])[:60]} builds"
    if not isinstance(image, str):
        return None
    ref = parse_image(image)
    if ref is None or image_entry(ref) is not None or known_repository(ref):
        return None
    return f"image {image[:80]}"


def _no_entrypoint_reason(bare: _Bare, program: str, flags: str) -> str:
    """The message for a command whose first word the container runs as its program
    because the image has no ENTRYPOINT that starts the server (issue 24)."""
    start = " ".join(bare.server)
    write = (
        f"start {bare.key} with `{start}` (the {bare.engine} server)" if start
        else f"start {bare.key} with the {bare.engine} server's command"
    )
    return (
        f"serving config runs `{program}` as the program: image {bare.image} has no "
        f"ENTRYPOINT that starts the {bare.engine} server, so the first word of "
        f"{bare.key} is the program the container runs; {write}; its {flags} not checked "
        f"until then; the image's Dockerfile: {bare.source}"
    )
