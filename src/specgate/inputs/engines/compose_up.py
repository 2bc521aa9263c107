"""``docker compose up`` in a script: the deployment is the Compose project it starts.

A script whose commands configure no engine themselves but run ``docker compose [-f a.yaml
-f b.yaml] up`` (``docker-compose up``) starts the services of the Compose project, so the
speculative configuration is the one that project's model holds: found as ``docker
compose`` finds the files (:mod:`.compose_project`: ``-f``, ``COMPOSE_FILE``,
``--project-directory``, the parent-folder search), merged and interpolated as for
``docker compose run`` (:mod:`.compose_run`), then read as a Compose file the claims file
names (docs/engines.md#containers). The line's own options and service names are not
read (``cmd/compose/up.go@v5.5.0``, ``up [OPTIONS] [SERVICE...]``): the whole model is
searched, and where it holds several different configurations the line is not read.

Read only when every ``up`` line of the script starts the same project; files named by a
value the script does not settle are the deployment's unsettled value
(:func:`unfollowed_compose`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from specgate.core.errors import InputError, UnsettledValue
from specgate.core.paths import PathProblem, confined, repository_top
from specgate.inputs.engines._source import CommandSource, commands_of
from specgate.inputs.engines.compose_project import (
    Project,
    Unfollowed,
    compose_project,
    dotenv_variables,
    moves_folder,
)
from specgate.inputs.engines.unsettled import unsettled_value
from specgate.inputs.pointer import SeveralConfigurations
from specgate.inputs.runners import RunnerLaunch, global_tables, read_globals, read_runner
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document

RUNNER = "docker compose up"
_RUN = "docker compose run"
_PROGRAMS = (("docker", "compose", "up"), ("docker-compose", "up"))


def up_launch(argv: Sequence[str]) -> RunnerLaunch | None:
    """``argv`` read as ``docker compose … up …`` (the globals before ``up`` by Compose's
    root table; ``target_index`` the ``up`` word), else None."""
    for program in _PROGRAMS:
        found = read_globals(program, argv)
        if found is not None:
            read, at = found
            source = global_tables()["compose"].source
            return RunnerLaunch(RUNNER, None, at, None, None, (), None, source, (), read)
    return None


def compose_up(
    doc: Document,
    text: str | None,
    shown: str,
    path: Path,
    *,
    engine: str | None,
    engine_version: str | None,
    launches: frozenset[str],
) -> EngineConfig | None:
    """The configuration of the Compose project the script's ``docker compose up``
    starts (module doc); None when the script starts none, several, or one not followed.

    Raises:
        InputError: the project's own input errors (a file not parseable …), as a
            Compose file the claims file names raises them.
    """
    from specgate.inputs.engines import read_engine_config
    from specgate.inputs.engines.compose_run import compose_document

    started: dict[Project, list[tuple[CommandSource, RunnerLaunch]]] = {}
    for source, launch, project in _compose_lines(doc, text, path):
        if launch.runner != RUNNER:
            continue
        if not isinstance(project, Project):
            return None
        started.setdefault(project, []).append((source, launch))
    if len(started) != 1:
        return None
    ((project, lines),) = started.items()
    source = lines[0][0]
    top = repository_top(path.parent)  # found by _compose_lines: it resolves
    model = compose_document(project, top)
    if model is None:
        return None
    model = _started(model, project, [(s.command.argv, launch) for s, launch in lines], top)
    if model is None:
        return None
    first = confined(project.files[0][0], top=top)
    try:
        config = read_engine_config(
            model, shown=model.file, pointer=None, engine=engine, text=model.text,
            engine_version=engine_version, path=first, follow=False, launches=launches,
        )
    except SeveralConfigurations:
        return None  # `up` may start one service of several: not known which
    except InputError as exc:
        from specgate.inputs.engines import configures_nothing

        if configures_nothing(exc):
            return None  # the script's other readings say what it launches
        raise
    line = source.spans[0].line if source.spans else None
    files = " + ".join(shown_file for _, shown_file in project.files)
    note = (
        f"speculative configuration read from the Compose project {files} that "
        f"`docker compose up` starts in {shown}:{line}"
    )
    return replace(config, notes=(note, *config.notes, *model.notes))


def _started(
    model: Document,
    project: Project,
    lines: Sequence[tuple[Sequence[str], RunnerLaunch]],
    top: Path,
) -> Document | None:
    """``model`` without the services ``up`` does not start: those its ``profiles``
    keep off (no profile is active) and those scaled to 0 (``scale: 0``,
    ``deploy.replicas: 0``) (compose-go ``@e70e961c``: ``types/project.go``
    ``HasProfile``, ``types/types.go`` ``GetScale``; ``cli/options.go``
    ``WithDefaultProfiles`` reads ``COMPOSE_PROFILES``). None when such a service
    exists and which start is not known: a ``--profile``, ``COMPOSE_PROFILES`` set,
    ``--scale``, or words after ``up`` that may name services."""
    data = model.data
    services = data.get("services") if isinstance(data, Mapping) else None
    if not isinstance(data, Mapping) or not isinstance(services, Mapping):
        return model
    off = {name for name, service in services.items() if _kept_off(service)}
    if not off:
        return model
    for argv, launch in lines:
        assert launch.target_index is not None
        after = argv[launch.target_index + 1 :]
        named = [w for w in after if not w.startswith("-") or w.startswith("--scale")]
        if named or any(name == "profile" for name, _ in launch.globals):
            return None
    variables = dict(project.outer)
    for dotenv in project.dotenvs:
        found = dotenv_variables(dotenv, variables, top)
        if found is None:
            return None
        variables = {**found, **variables}
    if "COMPOSE_PROFILES" in variables or "COMPOSE_PROFILES" in project.unknown:
        return None
    kept = {name: service for name, service in services.items() if name not in off}
    return model._replace(data={**data, "services": kept})


def _kept_off(service: object) -> bool:
    if not isinstance(service, Mapping):
        return False
    deploy = service.get("deploy")
    replicas = deploy.get("replicas") if isinstance(deploy, Mapping) else None
    return bool(service.get("profiles")) or 0 in (service.get("scale"), replicas) or (
        "0" in (service.get("scale"), replicas)
    )


def _compose_lines(
    doc: Document, text: str | None, path: Path | None
) -> list[tuple[CommandSource, RunnerLaunch, Project | Unfollowed | None]]:
    """Each ``docker compose … run`` / ``up`` line of a script (``doc`` a whole text)
    with the project it reads (:func:`.compose_project.compose_project`; None: not
    followed, also after the script may have changed its folder)."""
    if path is None or not isinstance(doc.data, str):
        return []
    try:
        sources = commands_of(doc.data, doc, (), text)
        top = repository_top(path.parent)
    except (InputError, PathProblem):
        return []
    out: list[tuple[CommandSource, RunnerLaunch, Project | Unfollowed | None]] = []
    for source in sources:
        launch = read_runner(source.command.argv) or up_launch(source.command.argv)
        if launch is None or launch.unsettled or launch.runner not in (RUNNER, _RUN):
            continue
        line = source.spans[0].line if source.spans else None
        project = (
            None  # run from another folder than the script's: its files not known
            if moves_folder(doc.data, line)
            else compose_project(launch, source.command, path.parent, source.file, top)
        )
        out.append((source, launch, project))
    return out


def unfollowed_compose(
    doc: Document, text: str | None, pointer: str | None, shown: str, path: Path | None
) -> UnsettledValue | None:
    """For a script with no speculative configuration (``pointer`` None: the whole
    text): the :class:`UnsettledValue` of the first ``docker compose … run`` or ``up``
    line whose Compose files a value the script does not settle names (``-f "$F"``,
    ``COMPOSE_FILE=$CF``: :class:`~.compose_project.Unfollowed`): the configuration
    may be in them (SG313 from the environment, SG314 set by the repository in a way
    not followed: docs/engines.md#unsettled-values); else None."""
    if pointer is not None:
        return None
    for source, _, project in _compose_lines(doc, text, path):
        if isinstance(project, Unfollowed):
            line = source.spans[0].line if source.spans else None
            return unsettled_value(
                f"{project.hit[0]}: the Compose files `docker compose` reads are not "
                "known, so what its services run is not read",
                shown,
                line,
                project.hit,
            )
    return None
