"""``docker compose up`` in a script: the deployment is the Compose project it starts.

A script whose commands configure no engine themselves but run ``docker compose [-f a.yaml
-f b.yaml] up`` (``docker-compose up``) starts the services of the Compose project, so the
speculative configuration is the one that project's model holds: found as ``docker
compose`` finds the files (:mod:`.compose_project`: ``-f``, ``COMPOSE_FILE``,
``--project-directory``, the parent-folder search), merged and interpolated as for
``docker compose run`` (:mod:`.compose_run`), then read as a Compose file the claims file
names (docs/engines.md#containers). ``up [OPTIONS] [SERVICE...]``
(``cmd/compose/up.go@v5.5.0``): only the named services and those they ``depends_on``
are searched (:func:`_started`), with no name the whole model; where what is searched
holds several different configurations the line is not read.

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
from specgate.inputs.cmdline import Command
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
from specgate.inputs.runners import (
    RunnerLaunch,
    global_tables,
    read_globals,
    read_interspersed,
    read_runner,
    subcommand_table,
)
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
    model = _started(model, project, [(s.command, launch) for s, launch in lines], top)
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
    lines: Sequence[tuple[Command, RunnerLaunch]],
    top: Path,
) -> Document | None:
    """``model`` without the services ``up`` does not start (None when which start is
    not known).

    ``up SERVICE...`` starts the named services and, without ``--no-deps``, the services
    they ``depends_on``, transitively (``cmd/compose/up.go@v5.5.0``: ``p.WithServices``
    → ``pkg/compose/loader.go`` ``postProcessProject``: ``WithServicesEnabled`` (a named
    service's profiles enabled), ``WithSelectedServices``; compose-go ``@e70e961c``
    ``types/project.go``: ``ForEachService`` with ``IncludeDependencies``, a service
    not defined is "no such service" unless a ``required: false`` dependency). The
    words are read by ``up``'s recorded option table, interspersed with the names.
    Several ``up`` lines start the union of theirs. Not known: a name the script does
    not settle or Compose refuses, a named service scaled to 0, a dependency that
    ``profiles`` or scale 0 keeps off.

    ``up`` with no name starts every service but those its ``profiles`` keep off (no
    profile is active) and those scaled to 0 (``scale: 0``, ``deploy.replicas: 0``)
    (``types/project.go`` ``HasProfile``, ``types/types.go`` ``GetScale``;
    ``cli/options.go`` ``WithDefaultProfiles`` reads ``COMPOSE_PROFILES``). Not known
    when such a service exists and a ``--profile``, ``COMPOSE_PROFILES`` or
    ``--scale`` is set."""
    data = model.data
    services = data.get("services") if isinstance(data, Mapping) else None
    if not isinstance(data, Mapping) or not isinstance(services, Mapping):
        return model
    if not _consistent(services):
        return None
    selected: set[str] | None = set()
    scaled = False
    for command, launch in lines:
        assert launch.target_index is not None
        words = read_interspersed(
            subcommand_table("compose up"), command.argv, launch.target_index + 1
        )
        if words is None:
            return None
        options, positional = words
        if any(i in command.unresolved for i in positional):
            return None  # a service name the script does not settle
        scaled = scaled or any(name == "scale" for name, _ in options)
        names = [command.argv[i] for i in positional]
        if not names:
            selected = None
        elif selected is not None:
            no_deps = any(name == "no-deps" and value in (None, "true") for name, value in options)
            found = _with_dependencies(services, names, no_deps)
            if found is None:
                return None
            selected |= found
    if selected is not None:
        if scaled:
            return None
        kept = {name: service for name, service in services.items() if name in selected}
        return model._replace(data={**data, "services": kept})
    off = {name for name, service in services.items() if _kept_off(service)}
    if not off:
        return model
    if scaled or any(
        name == "profile" for _, launch in lines for name, _ in launch.globals
    ):
        return None
    variables = dict(project.outer)
    for dotenv in project.dotenvs:
        found_vars = dotenv_variables(dotenv, variables, top)
        if found_vars is None:
            return None
        variables = {**found_vars, **variables}
    if "COMPOSE_PROFILES" in variables or "COMPOSE_PROFILES" in project.unknown:
        return None
    kept = {name: service for name, service in services.items() if name not in off}
    return model._replace(data={**data, "services": kept})


def _with_dependencies(
    services: Mapping[str, object], names: Sequence[str], no_deps: bool
) -> set[str] | None:
    """``names`` and, unless ``no_deps``, the services they ``depends_on``
    (transitively, each service once); None when Compose refuses a name or a
    dependency may be kept off (:func:`_started`)."""
    out: set[str] = set()
    todo = [(name, True, True) for name in names]
    while todo:
        name, named, required = todo.pop()
        if name in out:
            continue
        service = services.get(name)
        if not isinstance(service, Mapping):
            if required:
                return None  # no such service: Compose stops
            continue
        if (named and _scaled_off(service)) or (not named and _kept_off(service)):
            return None
        out.add(name)
        if no_deps and named:
            continue
        depends = service.get("depends_on")
        if isinstance(depends, list):
            todo.extend((str(d), False, True) for d in depends)
        elif isinstance(depends, Mapping):
            for dep, spec in depends.items():
                optional = isinstance(spec, Mapping) and spec.get("required") is False
                todo.append((str(dep), False, not optional))
        elif depends is not None:
            return None
    return out


def _consistent(services: Mapping[str, object]) -> bool:
    """No service ``depends_on`` one not defined, and none without ``profiles`` on one
    with them (save with ``required: false``): Compose refuses such a project whatever
    ``up`` names ("depends on undefined service": compose-go ``loader/validate.go``
    ``checkConsistency`` at ``v2.9.1`` and ``e70e961c``; only a disabled service's
    optional dependency is skipped, and with no profile active a profiled service is
    disabled)."""
    for service in services.values():
        if not isinstance(service, Mapping):
            continue
        depends = service.get("depends_on")
        items = (
            [(d, True) for d in depends] if isinstance(depends, list)
            else [(d, not (isinstance(v, Mapping) and v.get("required") is False))
                  for d, v in depends.items()] if isinstance(depends, Mapping) else []
        )
        for dep, required in items:
            target = services.get(str(dep))
            if not isinstance(target, Mapping) or (
                required and not service.get("profiles") and target.get("profiles")
            ):
                return False
    return True


def _scaled_off(service: Mapping[str, object]) -> bool:
    deploy = service.get("deploy")
    replicas = deploy.get("replicas") if isinstance(deploy, Mapping) else None
    return 0 in (service.get("scale"), replicas) or "0" in (service.get("scale"), replicas)


def _kept_off(service: object) -> bool:
    if not isinstance(service, Mapping):
        return False
    return bool(service.get("profiles")) or _scaled_off(service)


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


def unsettled_compose_image(
    doc: Document, text: str | None, pointer: str | None, shown: str, path: Path | None
) -> UnsettledValue | None:
    """For a script with no speculative configuration (``pointer`` None): the first
    ``docker compose run SERVICE`` line whose service's ``image:`` is a Compose
    ``${VAR}`` no ``.env`` and no default fills (the environment ``docker compose``
    runs in sets it): the image, so the engine release and the ENTRYPOINT that the
    service's ``command`` follows, is the deployment's (SG313 at the ``image:`` value,
    naming it; its version not pinned: docs/engines.md#containers); else None."""
    from specgate.inputs.engines.compose_run import compose_document

    if pointer is not None or path is None:
        return None
    for _, launch, project in _compose_lines(doc, text, path):
        if launch.runner != _RUN or not isinstance(project, Project) or not launch.target:
            continue
        try:
            model = compose_document(project, repository_top(path.parent))
        except (InputError, PathProblem):
            continue  # its own reading says why
        node = ("services", launch.target, "image")
        if model is None or node not in model.unsettled:
            continue
        what = model.unsettled[node]
        at = model.locate(node)
        return UnsettledValue(
            f"`{what}` in the image of service {launch.target!r}: no .env sets it, so it "
            "comes from the environment `docker compose` runs in; which engine release "
            "runs (and the ENTRYPOINT its command follows) is the deployment's, and the "
            "version is not pinned. Its command may configure speculation, so the "
            "claims file's values are used",
            model.origins.get(node, model.file), at.line, origin="outside", what=what,
            column=at.column,
        )
    return None
