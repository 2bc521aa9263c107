"""The command a container runner starts inside its container.

``docker run --gpus all -v … -e HF_TOKEN IMAGE trtllm-serve MODEL --extra_llm_api_options
F.yaml`` runs ``trtllm-serve MODEL …`` in the container; ``docker run … vllm/vllm-openai:v0.26.0
/models/x --speculative-config …`` runs ``vllm serve /models/x …`` (the image's ENTRYPOINT
followed by the words after the image). :func:`in_container` turns the
:class:`CommandSource` of such a runner command into the source of that container
command, words placed where they are written (an ENTRYPOINT word of the image at the
image word). The runner's options are skipped by its own option table
(:mod:`specgate.inputs.runners`), the argv follows Docker's ENTRYPOINT/CMD rules
(:mod:`specgate.inputs.containers`), and the container's environment is the runner's
``--env-file`` files and ``-e NAME=value`` / ``--env`` options, the files first
(:mod:`specgate.inputs.env_files`; the shell's own ``NAME=value docker run`` does not reach
the container; ``-e NAME`` passes the runner's value of NAME on, the environment's when
the script does not set it).

``docker compose run SERVICE`` is joined with the service of its Compose file
(:mod:`.compose_run`). A runner command whose container command cannot be settled (an
option the runner does not define, an image whose ENTRYPOINT is unknown and not
overridden, a ``docker compose run`` whose service is not found) stays as written: the
engine readers then see the runner's words, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from specgate.core.errors import InputError, LimitReached
from specgate.inputs.cmdline import Command
from specgate.inputs.containers import container_argv, image_entry, parse_image
from specgate.inputs.engines._source import CommandSource
from specgate.inputs.engines.environment import unsettled_option
from specgate.inputs.engines.placed import place
from specgate.inputs.engines.positionals import positional_programs
from specgate.inputs.env_files import EnvFiles, outside_value, read_env_file, too_many
from specgate.inputs.runners import RunnerLaunch, read_runner
from specgate.inputs.shell_c import script_commands, shell_script_index
from specgate.inputs.volumes import run_binds
from specgate.load.document import Span


def in_container(source: CommandSource, path: Path | None = None) -> CommandSource:
    """The container command of a runner command (module docstring), else ``source``.
    ``path``: the file holding the command on disk, whose folder a ``docker compose
    run`` finds its Compose file in (:mod:`.compose_run`); None: not joined."""
    launch = read_runner(source.command.argv)
    if launch is None:
        from specgate.inputs.engines.compose_run import podman_compose_run

        return podman_compose_run(source, path) or source
    if launch.unsettled is not None or launch.target_index is None:
        return source
    if launch.runner == "docker compose run":
        from specgate.inputs.engines.compose_run import compose_run

        return compose_run(source, launch, path) or source
    image = parse_image(launch.target or "")
    if image is None:
        return source
    argv = container_argv(image_entry(image), entrypoint=launch.entrypoint,
                          command=launch.command)
    if argv.unsettled is not None:
        return source
    at = launch.target_index
    kept = len(launch.command or ())
    if argv.words[len(argv.words) - kept:] != tuple(source.command.argv[at + 1:]):
        return source  # the image's entrypoint split the words: not placed one to one
    env, env_words, files = _container_env(launch, source, path)
    # the image the runner names: the engine version is its tag (docs/engines.md#containers)
    # the run line's -v/--mount volumes: an options file inside the container is
    # followed through them (docs/engines.md#containers)
    return place(source, argv.words, at=at, kept=kept, env=env, env_words=env_words,
                 image=launch.target, binds=run_binds(launch.options), env_files=files)


def in_containers(source: CommandSource, path: Path | None = None) -> list[CommandSource]:
    """:func:`in_container`; a container whose program is a shell given ``-c`` (``docker
    run --entrypoint /bin/bash IMAGE -c "vllm serve …"``: the entrypoint replaced, docker
    docs "ENTRYPOINT (default command to execute at runtime)") is the commands of that
    script, split as the shell runs them with the container's variables, every word at
    the script's word (as a script's own ``bash -c`` is read, :func:`commands_of`), each
    keeping the container's image and environment."""
    placed = in_container(source, path)
    script = shell_script_index(placed.command) if placed is not source else None
    if script is None:
        return [placed]
    try:
        inner = script_commands(placed.command, script, placed.command.env)
    except LimitReached as exc:  # a bound reached is never a fallback
        line = placed.spans[script].line if script < len(placed.spans) else None
        raise LimitReached(exc.reason, placed.file, line) from None
    except InputError:
        return [placed]  # a script no shell could split: the wrapper as written
    at = placed.spans[script] if script < len(placed.spans) else Span(1, 1)
    return [
        replace(
            placed,
            command=replace(command, env={**placed.command.env, **command.env}),
            spans=tuple(at for _ in command.argv),
            char_spans=None,
            written=None,
        )
        for command in inner
    ]


def _container_env(
    launch: RunnerLaunch, source: CommandSource, path: Path | None
) -> tuple[dict[str, str], dict[str, int], EnvFiles | None]:
    """The container's variables, the word index of each, and what its environment
    files leave unsettled (None: it names none). docker/cli ``opts/envfile.go``
    ``ReadKVEnvStrings``: every ``--env-file`` in order, then every ``-e``/``--env``
    (``NAME=value``, or ``NAME`` to pass the runner's own value on: the script's when
    it sets one, else the environment's, outside the repository)."""
    outer = source.command.env
    env: dict[str, str] = {}
    where: dict[str, int] = {}
    files: EnvFiles | None = None
    pairs = list(zip(launch.options, launch.option_words, strict=True))
    named = [index for (name, value), index in pairs if name == "env-file" and value]
    excess = too_many(len(named), source.file, source.spans[0].line if source.spans else None)
    for (name, value), index in pairs:
        if excess is not None:
            files = EnvFiles()
            files.covered(excess)
            break
        if name != "env-file" or value is None:
            continue
        one = EnvFiles()
        span = source.spans[index] if index < len(source.spans) else None
        read_env_file(
            value, path.parent if path is not None else None, one, file=source.file,
            line=span.line if span else None, column=span.column if span else None,
            mode="docker" if launch.runner == "docker run" else "plain",
        )
        files = files or EnvFiles()
        files.merge(one)
        where.update((key, index) for key in one.values)
    if files is not None:
        env = {key: value for key, (value, _, _) in files.values.items()}
        where = {key: where[key] for key in env}
    for (name, value), index in pairs:
        if name != "env" or value is None:
            continue
        key, eq, val = value.partition("=")
        if not key:
            continue
        why = unsettled_option(source, index, key, bool(eq))
        if why is not None and (eq or key in outer):
            # -e NAME=$B, -e NAME after export NAME=$B: B from outside the script
            env.pop(key, None)
            where.pop(key, None)
            files = files or EnvFiles()
            files.unset(key, why)
            continue
        if eq or key in outer:
            env[key], where[key] = (val if eq else outer[key]), index
            if files is not None:  # -e wins over every file
                at = source.spans[index].line if index < len(source.spans) else 0
                files.set(key, env[key], source.file, at)
        else:
            env.pop(key, None)
            where.pop(key, None)
            line = source.spans[index].line if index < len(source.spans) else None
            files = files or EnvFiles()
            files.unset(key, outside_value(key, source.file, line))
    return env, where, files


def image_prefix(
    container: Mapping[object, object],
    built: Callable[[Mapping[object, object]], tuple[str, ...] | None] | None = None,
) -> tuple[object, tuple[str, ...], str | None] | None:
    """The node of a Compose service's ``command`` (a Kubernetes container's ``args``)
    and the words that run before it: the ENTRYPOINT of its ``image`` when the image is
    in the table and the entrypoint is not overridden, or the override itself when it is
    a list naming an engine program (``command: [vllm, serve]``: then its key, so its
    words are placed at their items); else None.

    A mapping with ``name`` is a Kubernetes container (``name`` is required there, and
    a Compose service has no such attribute): ``command`` overrides the ENTRYPOINT and
    ``args`` follows it. Else it is a Compose service: ``entrypoint`` overrides the
    ENTRYPOINT and ``command`` follows it (sources in :mod:`specgate.inputs.containers`).
    ``built``: the ENTRYPOINT of the image a Compose service builds, when it builds the
    one it runs (:func:`specgate.inputs.compose_build.built_entrypoint`).
    """
    image = container.get("image")
    building = built is not None and "build" in container and "name" not in container
    if not isinstance(image, str) and not building:
        return None
    kubernetes = "name" in container
    override, follows = ("command", "args") if kubernetes else ("entrypoint", "command")
    if follows not in container:
        return None
    words = container.get(override)
    if words is not None:
        # an engine program as the override (`command: [vllm, serve]`): its words run
        # before the command as the image's would; a shell or other wrapper is not read so
        if not (isinstance(words, list) and words and all(isinstance(w, str) for w in words)
                and PurePosixPath(words[0]).name in positional_programs()):
            return None
        return container[follows], tuple(words), override
    if building and built is not None:
        own = built(container)
        if own is not None:
            return container[follows], own, None
    if not isinstance(image, str):
        return None
    ref = parse_image(image)
    entry = image_entry(ref) if ref is not None else None
    if entry is None or not entry.entrypoint or entry.splits_arguments:
        return None
    return container[follows], entry.entrypoint, None


def prefixed(
    source: CommandSource, words: tuple[str, ...], spans: tuple[Span, ...] | None = None
) -> CommandSource:
    """``source`` with ``words`` (an image's ENTRYPOINT, or the override the file writes)
    run before it, each at its own ``spans`` when given (an override's items), else at
    the command's first word (the image's words are written nowhere in the file)."""
    command = source.command
    n = len(words)
    first = source.spans[0] if source.spans else Span(1, 1)
    lead = spans if spans is not None and len(spans) == n else (first,) * n
    lead_line = tuple(s.line for s in lead) if command.lines else ()
    lead_column = tuple(s.column for s in lead) if command.columns else ()
    char_spans = source.char_spans

    def placed(index: int) -> Sequence[Span] | None:
        return None if char_spans is None or index < n else char_spans(index - n)

    return CommandSource(
        Command(
            words + command.argv,
            env=command.env,
            lines=lead_line + command.lines,
            columns=lead_column + command.columns,
            env_at=command.env_at,
            unresolved={i + n: hit for i, hit in command.unresolved.items()},
        ),
        lead + source.spans,
        source.file,
        placed,
        source.env_spans,
    )
