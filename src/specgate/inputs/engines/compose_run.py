"""``docker compose run [OPTIONS] SERVICE [COMMAND] [ARGS...]`` joined with its service.

A script's ``docker compose run --rm vllm`` (``docker-compose run``) runs the service
``vllm`` of the Compose file, so what the container runs is the service's image,
entrypoint, command and environment, with what the ``run`` line overrides. Read as
Compose defines it, at ``docker/compose@v5.5.0``:

- ``cmd/compose/run.go`` (``runCommand``): ``SERVICE`` is ``args[0]``, ``COMMAND`` the
  words after it; ``--entrypoint`` is split with ``shellwords.Parse``.
- ``pkg/compose/run.go`` (``applyRunOptions``): a ``COMMAND`` replaces the service's
  ``command``; ``--entrypoint`` replaces its ``entrypoint`` and, without a ``COMMAND``,
  clears its ``command``; ``-e NAME=value`` overrides the service's ``environment``
  (``-e NAME`` takes the value of NAME in Compose's own environment, and is dropped
  when unset).
- The container then runs ENTRYPOINT + CMD as the Compose specification defines
  (:mod:`specgate.inputs.containers`): a service ``entrypoint:`` drops the image's CMD.

Which Compose file (compose-go ``cli/options.go``): ``-f FILE`` (``--file``) names it;
without one, the first of the default names (``compose.yaml`` …) in the working
folder, merged with its override file, with ``.env`` beside it. The working folder is
read as the script's own folder (a script is taken to run where it lies);
``--project-directory DIR`` moves it. Left unsettled (the runner words stay as
written, so the deployment is SG312 when nothing else configures it), never guessed:
several ``-f`` files, ``-f -`` (standard input), an explicit default-named ``-f`` file
with an override file beside it (Compose then does not merge it, specgate's model
does), no Compose file in the folder (Compose would look in the parent folders, which
is not followed), a service the file does not define, a service image whose
ENTRYPOINT is not known, a value left with a variable no file sets.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from specgate.core.errors import InputError
from specgate.core.paths import PathProblem, confined, repository_top
from specgate.core.revision_tree import bring
from specgate.inputs.cmdline import Command
from specgate.inputs.containers import container_argv, image_entry, parse_image
from specgate.inputs.engines._source import CommandSource, literal_value
from specgate.inputs.engines.environment import sibling_env
from specgate.inputs.runners import RunnerLaunch
from specgate.load.compose_files import DEFAULT_FILES, OVERRIDE_FILES
from specgate.load.document import Document, Span


@dataclass(frozen=True)
class Joined(CommandSource):
    """The container command of a ``compose run``; ``image``: its service's image
    reference as Compose interpolates it (the engine version is read from its tag)."""

    image: str | None = None


def compose_run(source: CommandSource, launch: RunnerLaunch, path: Path | None) -> Joined | None:
    """The command the service's container runs, placed in the script (each word of
    the service at the SERVICE word, each word of the ``run`` line's COMMAND at its
    own); None when not settled (module doc)."""
    if path is None or launch.target is None or launch.target_index is None:
        return None
    try:
        top = repository_top(path.parent)
    except PathProblem:
        return None
    found = _compose_file(launch, path.parent, source.file, top)
    if found is None:
        return None
    file, shown = found
    from specgate.inputs.engines.read import load_engine_document

    try:
        doc = load_engine_document(confined(file, top=top), shown)
    except (InputError, PathProblem):  # out of the repository, or not readable
        return None  # its own reading, where the claims file names it, says why
    services = doc.data.get("services") if isinstance(doc.data, Mapping) else None
    service = services.get(launch.target) if isinstance(services, Mapping) else None
    if not isinstance(service, Mapping) or _unsettled(doc, launch.target):
        return None
    image_text = service.get("image")
    image = parse_image(image_text) if isinstance(image_text, str) else None
    entrypoint = launch.entrypoint
    if entrypoint is None and service.get("entrypoint") is not None:
        entrypoint = _words(service["entrypoint"])
        if entrypoint is None:
            return None
    if launch.command is not None:
        command: tuple[str, ...] | None = launch.command
    elif launch.entrypoint is not None:
        command = ()  # applyRunOptions: --entrypoint without COMMAND clears command
    elif service.get("command") is not None:
        command = _words(service["command"])
        if command is None:
            return None
    else:
        command = None
    argv = container_argv(
        image_entry(image) if image is not None else None, entrypoint=entrypoint,
        command=command,
    )
    if argv.unsettled is not None:
        return None
    joined = _placed(source, launch, argv.words, doc)
    return replace(joined, image=image.text if image is not None else None)


def _compose_file(
    launch: RunnerLaunch, folder: Path, script: str, top: Path
) -> tuple[Path, str] | None:
    files = [value for name, value in launch.globals if name == "file" and value is not None]
    directories = [
        value for name, value in launch.globals
        if name in ("project-directory", "workdir") and value is not None
    ]
    shown_folder = PurePosixPath(script).parent
    if len(files) > 1 or any(_outside(f) for f in [*files, *directories]):
        return None
    if files:
        if files[0] == "-":
            return None
        file = folder / files[0]
        if file.name in DEFAULT_FILES and any(
            _exists(file.parent / name, top) for name in OVERRIDE_FILES
        ):
            return None  # Compose reads an explicit -f file alone; the model merges it
        if directories and (folder / directories[-1]).resolve() != file.parent.resolve():
            return None  # .env from another folder than the file's
        return (file, str(shown_folder / files[0])) if _exists(file, top) else None
    where = directories[-1] if directories else "."
    for name in DEFAULT_FILES:
        if _exists(folder / where / name, top):
            return folder / where / name, str(shown_folder / where / name)
    return None


def _outside(value: str) -> bool:
    return value.startswith("/") or "$" in value or "\\" in value


def _exists(path: Path, top: Path) -> bool:
    """A file inside the repository (nothing outside it is looked at)."""
    try:
        confined(path, top=top, must_exist=False)
    except PathProblem:
        return False
    bring(path)  # at a base revision, its file is looked for as at the head
    return path.is_file()


def _unsettled(doc: Document, service: str) -> bool:
    """A value of the service left with a variable no file sets."""
    return any(p[:2] == ("services", service) for p in doc.unsettled)


def _words(value: object) -> tuple[str, ...] | None:
    """A Compose ``command``/``entrypoint``: a list of strings as written, a string
    split as compose-go splits it (``shellwords``); forms where shellwords and POSIX
    sh differ (``$``, a backquote, a backslash) are not settled."""
    if isinstance(value, list):
        words = [literal_value(item) for item in value]
        return None if any(w is None for w in words) else tuple(w for w in words if w)
    if isinstance(value, str):
        if any(char in value for char in "$`\\"):
            return None
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return None
    return None


def _placed(
    source: CommandSource, launch: RunnerLaunch, words: Sequence[str], doc: Document
) -> Joined:
    at = launch.target_index
    assert at is not None
    kept = len(launch.command or ())
    prefix = len(words) - kept
    origin = [at] * prefix + list(range(at + 1, at + 1 + kept))
    command = source.command
    env: dict[str, str] = {}
    for name, opt in sibling_env(doc, ("services", launch.target or "", "command")).items():
        value = literal_value(opt.value)
        if value is not None:
            env[name] = value
    env_words = dict.fromkeys(env, at)
    for (name, value), index in zip(launch.options, launch.option_words, strict=True):
        if name != "env" or value is None:
            continue
        key, eq, val = value.partition("=")
        if key and eq:
            env[key], env_words[key] = val, index
        elif key and key in command.env:
            env[key], env_words[key] = command.env[key], index
    lines = command.lines
    columns = command.columns

    def pick(values: tuple[int, ...]) -> tuple[int, ...]:
        if not values:
            return ()
        return tuple(values[j] if j < len(values) else values[-1] for j in origin)

    def at_word(index: int) -> tuple[int, int]:
        line = lines[index] if index < len(lines) else 0
        column = columns[index] if index < len(columns) else 1
        return line, column

    spans = tuple(source.spans[j] if j < len(source.spans) else Span(1, 1) for j in origin)
    char_spans = source.char_spans

    def placed(index: int) -> Sequence[Span] | None:
        if char_spans is None or index < prefix or index >= len(origin):
            return None
        return char_spans(origin[index])

    def env_spans() -> Mapping[str, Span]:
        return {
            name: source.spans[index] if index < len(source.spans) else Span(1, 1)
            for name, index in env_words.items()
        }

    return Joined(
        Command(
            tuple(words),
            env=env,
            lines=pick(lines),
            columns=pick(columns),
            env_at={name: at_word(index) for name, index in env_words.items()},
            unresolved={
                i: command.unresolved[j] for i, j in enumerate(origin)
                if j in command.unresolved and i >= prefix
            },
        ),
        spans,
        source.file,
        placed,
        env_spans,
    )
