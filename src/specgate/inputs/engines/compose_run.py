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
  (``-e NAME`` takes the value of NAME in Compose's own environment: the script's when
  it sets one, else outside the repository), which is over its ``env_file:``
  (docs/engines.md#environment-files).
- The container then runs ENTRYPOINT + CMD as the Compose specification defines
  (:mod:`specgate.inputs.containers`): a service ``entrypoint:`` drops the image's CMD.

Which Compose files (:mod:`.compose_project`, as ``docker compose`` finds them): the
``-f`` files, else those ``COMPOSE_FILE`` lists (from the script's environment or the
working folder's ``.env``), merged in order and read without an override file; else
the first default-named file (``compose.yaml`` …) in the working folder or the nearest
folder above it inside the repository, merged with its override file; interpolated
from the script's exported variables and the project's ``.env`` files. The working
folder is the script's own folder (a script is taken to run where it lies);
``--project-directory DIR`` moves it. Left unsettled (the runner words stay as
written, so the deployment is SG312 when nothing else configures it), never guessed:
``-f -`` (standard input), a remote file, ``--env-file``, no Compose file up to the
repository's top, a service the file does not define, a service image whose
ENTRYPOINT is not known, a value left with a variable no file sets. Files named by a
value the script does not settle (``-f "$F"``, ``COMPOSE_FILE=$CF``) are, in a script
that configures nothing else, the deployment's unsettled value
(:func:`.compose_up.unfollowed_compose`: SG313 / SG314).

``podman-compose run`` is read by podman-compose's own argparse parsers
(:mod:`specgate.inputs.podman_compose`) and joined as podman-compose runs it
(``podman_compose.py@v1.6.0``: ``compose_run_update_container_from_args`` sets a
non-empty ``--entrypoint`` over the service's and keeps its ``command``; a non-empty
COMMAND replaces the command; ``container_to_args`` splits strings with ``shlex``;
podman's ``makeCommand`` then runs entrypoint + command), from its one Compose file
(``-f``, or the one default name present: it merges every one present, which is not
followed), with no ``$`` in the file (its own interpolation is not followed) and no
``extends``. ``podman compose run`` runs docker-compose or podman-compose, whichever
the machine has: joined only when both readings give the same container command,
environment and image.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from weakref import WeakKeyDictionary

from specgate.core.errors import InputError, LimitReached
from specgate.core.limits import FileBudget, active_budget
from specgate.core.paths import PathProblem, confined, repository_top
from specgate.inputs.cmdline import Command
from specgate.inputs.containers import container_argv, image_entry, parse_image
from specgate.inputs.engines._source import CommandSource, literal_value
from specgate.inputs.engines.compose_project import (
    Project,
    compose_project,
    global_values,
    moves_folder,
)
from specgate.inputs.engines.compose_project import exists_inside as _exists
from specgate.inputs.engines.env_gaps import compose_env_files
from specgate.inputs.engines.environment import sibling_env, unsettled_option
from specgate.inputs.engines.placed import Joined, place
from specgate.inputs.env_files import EnvFiles, outside_value
from specgate.inputs.podman_compose import RUNNER as PODMAN_COMPOSE_RUN
from specgate.inputs.podman_compose import podman_compose_args, read_podman_compose
from specgate.inputs.runners import RunnerLaunch, read_runner
from specgate.load.document import Document


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
    text = _script_text(path, source.file)
    if text is None or moves_folder(text, source.spans[0].line if source.spans else None):
        return None  # run from another folder than the script's: its files not known
    podman = launch.runner == PODMAN_COMPOSE_RUN
    if podman:
        project = _podman_compose_file(launch, source.command, path.parent, source.file, top)
    else:
        found = compose_project(launch, source.command, path.parent, source.file, top)
        project = found if isinstance(found, Project) else None
    if project is None:
        return None
    try:
        doc = compose_document(project, top)
    except LimitReached:
        raise  # a bound reached is never read past (core.errors.LimitReached)
    except (InputError, PathProblem):  # out of the repository, or not readable
        return None  # its own reading, where the claims file names it, says why
    if doc is None:
        return None
    services = doc.data.get("services") if isinstance(doc.data, Mapping) else None
    service = services.get(launch.target) if isinstance(services, Mapping) else None
    if not isinstance(service, Mapping) or _unsettled(doc, launch.target):
        return None
    if podman and ("$" in (doc.text or "$") or "extends" in service):
        return None  # podman-compose's own interpolation and extends: not followed
    image_text = service.get("image")
    image = parse_image(image_text) if isinstance(image_text, str) else None
    words = _shlex_words if podman else _words
    entrypoint = launch.entrypoint
    if entrypoint is None and service.get("entrypoint") is not None:
        entrypoint = words(service["entrypoint"])
        if entrypoint is None:
            return None
    if launch.command is not None:
        command: tuple[str, ...] | None = launch.command
    elif launch.entrypoint is not None and not podman:
        command = ()  # applyRunOptions: --entrypoint without COMMAND clears command
    elif service.get("command") is not None:
        command = words(service["command"])
        if command is None:
            return None
    else:
        command = None
    if podman and entrypoint is not None and (entrypoint == ("",) or not (entrypoint or command)):
        return None  # podman's makeCommand: [""] is dropped, [] + no command takes CMD
    argv = container_argv(
        image_entry(image) if image is not None else None, entrypoint=entrypoint,
        command=command,
    )
    if argv.unsettled is not None:
        return None
    # env_file: paths are taken from the project's working folder (compose-go
    # loader ResolveRelativePaths): --project-directory's, else the first file's
    workdirs = global_values(launch, ("project-directory", "workdir"))
    anchor = path.parent / workdirs[-1] / "compose.yaml" if workdirs else project.files[0][0]
    joined = _placed(source, launch, argv.words, doc, anchor)
    return replace(joined, image=image.text if image is not None else None)


#: The Compose models loaded during the read of one serving file (keyed by its budget):
#: a script naming its service on many lines loads and spends its budget on it once.
_LOADED: WeakKeyDictionary[FileBudget, dict[Project, Document | None]] = (
    WeakKeyDictionary()
)


#: The text of each script read during the read of one serving file (as :data:`_LOADED`).
_TEXTS: WeakKeyDictionary[FileBudget, dict[Path, str | None]] = WeakKeyDictionary()


def _script_text(path: Path, shown: str) -> str | None:
    """The text of the script at ``path`` (None: not readable; its own reading says
    why), read once per read of the serving file.

    Raises:
        LimitReached: a bound reached while reading it (never read past).
    """
    from specgate.load.read import read_text

    budget = active_budget()
    texts = _TEXTS.setdefault(budget, {}) if budget is not None else {}
    if path not in texts:
        try:
            texts[path] = read_text(confined(path), shown)
        except LimitReached:
            raise
        except (InputError, PathProblem):
            texts[path] = None
    return texts[path]


def compose_document(project: Project, top: Path) -> Document | None:
    """The Compose model of ``project`` as a Compose file named in a claims file is
    read (``read.load_engine_document``): go-yaml's scalars, the other files (or the
    override file) merged, ``extends`` applied, the ``.env`` files interpolated; None
    when it is no Compose file. Loaded once per read of the serving file, within that
    file's budget.

    Raises:
        InputError: as those readers raise (LimitReached: the budget spent).
        PathProblem: the first file out of the repository.
    """
    budget = active_budget()
    loaded = _LOADED.setdefault(budget, {}) if budget is not None else {}
    if project not in loaded:
        loaded[project] = _load_compose(project, top)
    return loaded[project]


def _load_compose(project: Project, top: Path) -> Document | None:
    from specgate.load.compose_env import interpolated, is_compose
    from specgate.load.compose_files import compose_model
    from specgate.load.read import read_text
    from specgate.load.yaml_dialects import serving_dialect
    from specgate.load.yaml_loader import load_yaml_documents

    (first, shown), *others = project.files
    path = confined(first, top=top)
    text = read_text(path, shown)
    doc = load_yaml_documents(text, shown, serving_dialect(text))._replace(text=text)
    if not is_compose(doc.data):
        return None
    # the working folder: the last .env's (compose_project: the working folder's)
    workdir = project.dotenvs[-1][0].parent if project.dotenvs else path.parent
    model = compose_model(
        doc, path, others if project.explicit else None, workdir=workdir,
        dotenvs=[p for p, _ in project.dotenvs], outer=dict(project.outer),
        unknown=project.unknown,
    )
    return interpolated(model, path, project.dotenvs, dict(project.outer), project.unknown)


#: The variables podman-compose's ``_parse_compose_file`` reads from its environment
#: (``podman_compose.py@v1.6.0``): not followed.
_PODMAN_VARIABLES = ("COMPOSE_FILE", "COMPOSE_PATH_SEPARATOR", "COMPOSE_PROJECT_DIR")

#: podman-compose's default file names, all of them merged when present
#: (``podman_compose.py@v1.6.0``, ``COMPOSE_DEFAULT_LS``).
PODMAN_DEFAULT_FILES = (
    "compose.yaml", "compose.yml", "compose.override.yaml", "compose.override.yml",
    "podman-compose.yaml", "podman-compose.yml", "docker-compose.yml", "docker-compose.yaml",
    "docker-compose.override.yml", "docker-compose.override.yaml", "container-compose.yml",
    "container-compose.yaml", "container-compose.override.yml",
    "container-compose.override.yaml",
)


def _podman_compose_file(
    launch: RunnerLaunch, command: Command, folder: Path, script: str, top: Path
) -> Project | None:
    """podman-compose's one Compose file (``_parse_compose_file``: ``-f`` files, else
    every default name present, merged), read alone with the ``.env`` beside it; None
    unless exactly one, with no ``--env-file`` and none of the variables that method
    reads from its environment (``COMPOSE_FILE``, ``COMPOSE_PATH_SEPARATOR``,
    ``COMPOSE_PROJECT_DIR``) set by the script."""
    if any(name == "env-file" for name, _ in launch.globals) or any(
        name in command.env for name in _PODMAN_VARIABLES
    ):
        return None
    files = [value for name, value in launch.globals if name == "file" and value is not None]
    shown_folder = PurePosixPath(script).parent
    if not files:
        files = [name for name in PODMAN_DEFAULT_FILES if _exists(folder / name, top)]
    if len(files) != 1 or _outside(files[0]) or files[0] == "-":
        return None
    file = folder / files[0]
    shown = shown_folder / files[0]
    if not _exists(file, top):
        return None
    dotenv = (file.parent / ".env", str(shown.parent / ".env"))
    return Project(((file, str(shown)),), True, (dotenv,))


def _shlex_words(value: object) -> tuple[str, ...] | None:
    """podman-compose's reading of a ``command``/``entrypoint`` (``container_to_args``:
    a string ``shlex.split``, a list item by item)."""
    if isinstance(value, list):
        words = [literal_value(item) for item in value]
        return None if any(w is None for w in words) else tuple(str(w) for w in words)
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return None
    return None


def _outside(value: str) -> bool:
    return value.startswith("/") or "$" in value or "\\" in value


def _unsettled(doc: Document, service: str) -> bool:
    """A value of the service left with a variable no file sets; one of its
    ``environment:`` is the container's variable, unsettled there (docs/engines.md
    #environment-values), and leaves the rest read."""
    return any(
        p[:2] == ("services", service) and p[2:3] != ("environment",) for p in doc.unsettled
    )


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
    source: CommandSource, launch: RunnerLaunch, words: Sequence[str], doc: Document,
    compose: Path,
) -> Joined:
    at = launch.target_index
    assert at is not None
    kept = len(launch.command or ())
    command = source.command
    env: dict[str, str] = {}
    node = ("services", launch.target or "", "command")
    for name, opt in sibling_env(doc, node).items():
        value = literal_value(opt.value)
        if value is not None:
            env[name] = value
    # the service's env_file: under its environment: (docs/engines.md#environment-files)
    files = compose_env_files(doc, node, compose)
    if files is not None:
        env = {**{k: v for k, (v, _, _) in files.values.items()}, **env}
    env_words = dict.fromkeys(env, at)
    for (name, value), index in zip(launch.options, launch.option_words, strict=True):
        if name != "env" or value is None:
            continue
        key, eq, val = value.partition("=")
        why = unsettled_option(source, index, key, bool(eq)) if key else None
        if why is not None and (eq or key in command.env):
            # -e NAME=$B, -e NAME after export NAME=$B: B from outside the script
            env.pop(key, None)
            env_words.pop(key, None)
            files = files or EnvFiles()
            files.unset(key, why)
        elif key and (eq or key in command.env):
            env[key], env_words[key] = (val if eq else command.env[key]), index
            if files is not None:
                at = source.spans[index].line if index < len(source.spans) else 0
                files.set(key, env[key], source.file, at)
        elif key:  # `-e NAME` from Compose's own environment, which the script does not set
            env.pop(key, None)
            env_words.pop(key, None)
            line = source.spans[index].line if index < len(source.spans) else None
            files = files or EnvFiles()
            files.unset(key, outside_value(key, source.file, line))
    return place(source, words, at=at, kept=kept, env=env, env_words=env_words,
                 env_files=files)


def podman_compose_run(source: CommandSource, path: Path | None) -> Joined | None:
    """``podman-compose run …`` joined with its service as podman-compose runs it, and
    ``podman compose run …`` when both providers it may run (docker-compose,
    podman-compose) give the same container command; else None."""
    argv = source.command.argv
    launch = read_podman_compose(argv)
    if launch is not None:
        return compose_run(source, launch, path) if launch.unsettled is None else None
    provider = podman_compose_args(argv)
    if provider is None or "run" not in provider:
        return None
    shift = len(argv) - len(provider) - 1  # the word "compose"
    readings: list[Joined | None] = []
    for program, read in (("docker-compose", read_runner), ("podman-compose", read_podman_compose)):
        found = read((program, *provider))
        if found is None or found.unsettled is not None or found.target_index is None:
            return None
        moved = replace(
            found,
            target_index=found.target_index + shift,
            option_words=tuple(i + shift for i in found.option_words),
        )
        readings.append(compose_run(source, moved, path))
    first, second = readings
    if first is None or second is None or first.image != second.image or (
        first.command.argv != second.command.argv
        or dict(first.command.env.items()) != dict(second.command.env.items())
    ):
        return None
    return first

