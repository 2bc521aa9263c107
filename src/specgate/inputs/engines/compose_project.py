"""Which Compose files, and which ``.env`` files, a ``docker compose`` line reads, found
as Docker Compose finds them (docs/engines.md#containers).

Read at ``docker/compose@v5.5.0`` (``cmd/compose/compose.go``, ``toProjectOptions``) and
``compose-spec/compose-go@e70e961c`` (``cli/options.go``), which apply, in this order:

1. ``WithWorkingDirectory``: ``--project-directory DIR`` (``--workdir``) is the working
   folder; else the folder of the first ``-f`` file; else the current folder.
2. ``WithOsEnv``: the environment ``docker compose`` runs in (a script's exported
   variables and ``NAME=value`` prefix) comes first and wins over every ``.env``.
3. ``WithEnvFiles`` + ``WithDotEnv``: the working folder's ``.env``.
4. ``WithConfigFileEnv``: with no ``-f``, ``COMPOSE_FILE`` from that environment, split
   at ``COMPOSE_PATH_SEPARATOR`` (``:`` on Linux when unset), each path taken from the
   current folder (``filepath.Abs``).
5. ``WithDefaultConfigPath``: with no file yet, the first of ``compose.yaml``,
   ``compose.yml``, ``docker-compose.yml``, ``docker-compose.yaml`` in the working
   folder, else in its parent, and so on up, with the first override file beside it.
   specgate climbs to the repository's top and never above it.
6. ``WithEnvFiles`` + ``WithDotEnv`` again: the ``.env`` of the working folder as it now
   is (the found file's folder), a name the first ``.env`` set keeping that value
   (``types/mapping.go``, ``Mapping.Merge``).

``-f`` paths are taken from the current folder too (``loader/loader.go``,
``LoadConfigFiles``: ``filepath.Abs``), whatever ``--project-directory`` says. A script
is read as run from its own folder (docs/engines.md#containers); one that may change
its folder before the line (:func:`moves_folder`: ``cd``, ``pushd``, ``popd``, save
``cd "$(dirname "$0")"``, which goes to the script's own folder) is not followed: which
files Compose finds from there is not known.

Not followed, so the line stays as written: ``-f -`` (standard input), a remote file
(``oci://``, a git URL), ``--env-file`` and ``COMPOSE_ENV_FILES`` /
``COMPOSE_DISABLE_ENV_FILE`` set by the script or the first ``.env`` (the ``.env`` files
change: ``cmd/compose/compose.go``, ``setEnvWithDotEnv``, sets a ``.env``'s
``COMPOSE_*`` variables in Compose's own environment), a path out of the repository,
no Compose file up to the repository's top. A file path (``-f``, ``--project-directory``,
``COMPOSE_FILE``, ``COMPOSE_PATH_SEPARATOR``) the script does not settle — a variable
from the environment the script runs in, ``$(…)`` — is :class:`Unfollowed` with what
holds it, so the deployment's finding says where (SG313 / SG314:
docs/engines.md#unsettled-values).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from specgate.core.paths import PathProblem, confined
from specgate.core.revision_tree import bring
from specgate.inputs.cmdline import Command
from specgate.inputs.runners import RunnerLaunch
from specgate.load.compose_files import DEFAULT_FILES

#: Variables of the environment that change which ``.env`` files Compose reads
#: (``cmd/compose/compose.go@v5.5.0``: ``COMPOSE_ENV_FILES``; compose-go
#: ``consts``: ``COMPOSE_DISABLE_ENV_FILE``): not followed.
_ENV_FILE_VARIABLES = ("COMPOSE_ENV_FILES", "COMPOSE_DISABLE_ENV_FILE")
#: A word that changes the shell's folder, as a command (after a line's start, an
#: operator or a quote opening ``sh -c '…'``), not in a comment line.
_MOVES = re.compile(
    r"(?:^|[;&|(){}!'\"`]|\bthen|\bdo|\belse)\s*(?:builtin\s+)?(cd|pushd|popd)(?=\s|;|&|\)|$)"
)
#: ``cd "$(dirname "$0")"`` and its spellings (``${BASH_SOURCE[0]}``, backquotes): the
#: script's own folder, where it is read as run from anyway.
_HOME = re.compile(
    r"""^\s*cd\s+(?:--\s+)?("?)(?:\$\(|`)\s*dirname\s+(?:--\s+)?("?)"""
    r"""\$(?:0|\{0\}|\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE)\2\s*(?:\)|`)\1"""
    r"""\s*(?:&&|;|\|\||$)"""
)
#: At most this many files in one project (``-f`` or ``COMPOSE_FILE``); more: not followed.
MAX_FILES = 16


@dataclass(frozen=True)
class Project:
    """A Compose project's files: ``files`` in merge order (each path and how it is
    shown; the first is the one positions are kept for), ``explicit`` when they were
    named (``-f``, ``COMPOSE_FILE``: no override file is merged), ``dotenvs`` the
    ``.env`` files in the order Compose reads them, ``outer`` the settled variables of
    the environment it runs in, ``unknown`` the names it sets to values the script
    does not settle."""

    files: tuple[tuple[Path, str], ...]
    explicit: bool
    dotenvs: tuple[tuple[Path, str], ...]
    outer: tuple[tuple[str, str], ...] = ()
    unknown: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Unfollowed:
    """Files named by a value the script does not settle: ``hit`` is the word's
    ``(what, splits, from_file)`` (:attr:`Command.unresolved`)."""

    hit: tuple[str, bool, bool]


def compose_project(
    launch: RunnerLaunch, command: Command, folder: Path, script: str, top: Path
) -> Project | Unfollowed | None:
    """The project the ``docker compose`` line ``launch`` (the words of ``command``)
    reads when run from ``folder`` (shown as the folder of ``script``), inside the
    repository whose top is ``top`` (module doc); None when not followed."""
    files = global_values(launch, ("file",))
    directories = global_values(launch, ("project-directory", "workdir"))
    if global_values(launch, ("env-file",)) or any(n in command.env for n in _ENV_FILE_VARIABLES):
        return None
    for value in [*files, *directories]:
        if "$" in value:
            return _unfollowed(value, launch, command)
    if any(_remote(value) for value in [*files, *directories]) or len(files) > MAX_FILES:
        return None
    shown_cwd = PurePosixPath(script).parent
    # a value the shell leaves unsettled (env_why: `export D=$(cat f)`, `D=$B`) is none
    # Compose is given; its text as written (with a `$`) neither
    unknown = frozenset(
        k for k, v in command.env.items() if "$" in v or command.env_why.get(k) is not None
    )
    outer = tuple((k, v) for k, v in command.env.items() if k not in unknown)
    work: tuple[Path, str] | None = None
    if directories:
        work = (folder / directories[-1], _shown(shown_cwd, directories[-1]))
    elif files:
        work = ((folder / files[0]).parent, _shown(shown_cwd, files[0], parent=True))
    first_env = _dotenv(work or (folder, str(shown_cwd)))
    first_vars = dotenv_variables(first_env, dict(outer), top)
    if first_vars is None or any(n in first_vars for n in _ENV_FILE_VARIABLES):
        return None  # cmd/compose/compose.go setEnvWithDotEnv: its COMPOSE_* apply too
    named: list[tuple[Path, str]] = [(folder / f, _shown(shown_cwd, f)) for f in files]
    explicit = bool(files)
    if not files:
        listed = _compose_file_variable(command, first_vars)
        if isinstance(listed, Unfollowed) or listed is None:
            return listed
        explicit = bool(listed)
        named = [(folder / f, _shown(shown_cwd, f)) for f in listed]
    if not named:
        start = work or (folder, str(shown_cwd))
        found = _default_files(start[0], start[1], top)
        if found is None:
            return None
        named = found
    if not all(exists_inside(path, top) for path, _ in named):
        return None
    if work is None:
        path, shown = named[0]
        work = (path.parent, posixpath.dirname(shown) or ".")
    dotenvs = [first_env]
    if _dotenv(work)[0] != first_env[0] and exists_inside(_dotenv(work)[0], top):
        if command.argv and posixpath.basename(command.argv[0]) == "docker-compose":
            # docker-compose 1 reads the current folder's .env alone, Compose 2 this one
            # too (checked with docker-compose 1.29 config): which runs is not known
            # where this one sets a name the first does not
            second = dotenv_variables(_dotenv(work), dict(outer), top)
            if second is None or set(second) - set(first_vars) - {k for k, _ in outer}:
                return None
        dotenvs.append(_dotenv(work))
    return Project(tuple(named), explicit, tuple(dotenvs), outer, unknown)


def moves_folder(text: str, line: int | None) -> bool:
    """Whether the script ``text`` may change its working folder on or before its
    ``line`` (1-based; None: anywhere), other than to its own folder (module doc)."""
    lines = text.splitlines()
    for raw in lines if line is None else lines[:line]:
        if raw.lstrip().startswith("#") or _MOVES.search(raw) is None:
            continue
        if _HOME.match(raw) is None or len(_MOVES.findall(raw)) > 1:
            return True
    return False


def global_values(launch: RunnerLaunch, names: Sequence[str]) -> list[str]:
    """The values of ``docker compose``'s own (global) options ``names`` on ``launch``, in order."""
    return [value for name, value in launch.globals if name in names and value is not None]


def _remote(value: str) -> bool:
    """A path compose-go hands to a resource loader (``oci://``, a git URL), standard
    input, or one out of the repository."""
    return value in ("-", "") or ":" in value or value.startswith("/") or "\\" in value


def _shown(folder: PurePosixPath, rel: str, *, parent: bool = False) -> str:
    shown = posixpath.normpath(str(folder / rel))
    return posixpath.dirname(shown) or "." if parent else shown


def _dotenv(work: tuple[Path, str]) -> tuple[Path, str]:
    return work[0] / ".env", posixpath.normpath(posixpath.join(work[1], ".env"))


def _unfollowed(value: str, launch: RunnerLaunch, command: Command) -> Unfollowed | None:
    """The unsettled word holding ``value`` among the words before the service."""
    end = launch.target_index if launch.target_index is not None else len(command.argv)
    for index in sorted(command.unresolved):
        if index < end and command.argv[index].endswith(value):
            return Unfollowed(command.unresolved[index])
    return None  # a literal ``$`` (quoted): a file of that name, not looked for


def dotenv_variables(
    dotenv: tuple[Path, str], outer: dict[str, str], top: Path
) -> dict[str, str] | None:
    """The variables of the ``.env`` file ``dotenv`` (none there: ``{}``); None when it
    cannot be read (its own reading, where the claims file names it, says why).

    Raises:
        LimitReached: a bound reached while reading it (never read past).
    """
    from specgate.core.errors import InputError, LimitReached
    from specgate.load.compose_env import parse_dotenv
    from specgate.load.read import read_text

    if not exists_inside(dotenv[0], top):
        return {}
    try:
        text = read_text(confined(dotenv[0], top=top), dotenv[1])
        return parse_dotenv(text, dotenv[1], outer)
    except LimitReached:
        raise
    except (InputError, PathProblem):
        return None


def _compose_file_variable(
    command: Command, dotenv: dict[str, str]
) -> list[str] | Unfollowed | None:
    """``COMPOSE_FILE`` split at ``COMPOSE_PATH_SEPARATOR`` from the environment, else
    from the ``.env`` variables ``dotenv``: ``[]`` when it is set nowhere, None when
    not followed."""
    values: dict[str, str] = {}
    for name in ("COMPOSE_FILE", "COMPOSE_PATH_SEPARATOR"):
        if name in command.env:
            value = command.env[name]
            if "$" in value:
                return Unfollowed(_outside_hit(name, value))
            values[name] = value
        elif name in dotenv:
            values[name] = dotenv[name]
    if "COMPOSE_FILE" not in values:
        return []
    separator = values.get("COMPOSE_PATH_SEPARATOR") or ":"
    listed = values["COMPOSE_FILE"].split(separator)
    if len(listed) > MAX_FILES or any(_remote(f) or "$" in f for f in listed):
        return None
    return listed


def _outside_hit(name: str, value: str) -> tuple[str, bool, bool]:
    return (
        f"`{name}={value[:40]}`: the Compose files it names come from the environment "
        "the script runs in",
        False,
        False,
    )


def _default_files(
    folder: Path, shown: str, top: Path
) -> list[tuple[Path, str]] | None:
    """The first default-named Compose file in ``folder`` or the folder nearest above
    it, up to ``top`` (``WithDefaultConfigPath``); None when there is none."""
    try:
        start = confined(folder / DEFAULT_FILES[0], top=top, must_exist=False).parent
    except PathProblem:
        return None
    rel = PurePosixPath(shown)
    for where in (start, *start.parents):
        for name in DEFAULT_FILES:
            if exists_inside(where / name, top):
                return [(where / name, posixpath.normpath(str(rel / name)))]
        if where == top:
            return None
        rel = rel / ".."
    return None


def exists_inside(path: Path, top: Path) -> bool:
    """A file inside the repository (nothing outside it is looked at)."""
    try:
        confined(path, top=top, must_exist=False)
    except PathProblem:
        return False
    bring(path)  # at a base revision, its file is looked for as at the head
    return path.is_file()

