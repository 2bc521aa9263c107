"""The environment a configuration runs with: the ``env``-like blocks beside it or
beside its ancestors in the document (nearest wins; every block of a manifest of
several documents)."""

from __future__ import annotations

from collections.abc import Mapping

from specgate.core.errors import InputError, UnsettledValue
from specgate.inputs.engines._source import (
    ANY_NAME,
    ENV_KEYS,
    UNSETTLED,
    CommandSource,
    EnvValue,
    Opt,
    env_items,
    literal_value,
    run_env,
)
from specgate.inputs.engines.expanded import Placed
from specgate.inputs.pointer import (
    format_pointer,
    resolve_pointer,
)
from specgate.load.compose_env import is_compose
from specgate.load.document import Document, NodePath, Span


def sibling_env(
    doc: Document, path: NodePath, paths: dict[str, NodePath] | None = None
) -> dict[str, Opt]:
    """Environment variables in ``env``-like mappings beside the configuration or
    beside any of its ancestors (nearest wins); ``paths``, when given, gets the node
    path of each one's value."""
    env: dict[str, Opt] = {}
    for depth in range(len(path), -1, -1):
        try:
            _, parent = resolve_pointer(doc.data, _pointer(path[:depth]))
        except InputError:
            continue
        if not isinstance(parent, Mapping):
            continue
        for key in ENV_KEYS:
            _env_block(doc, (*path[:depth], key), parent.get(key), env, paths)
    if doc.stream:
        # A manifest of several documents: the container that mounts a ConfigMap holds
        # the environment in another document; every env block counts, nearest first.
        for where in list(doc.positions):
            if where and isinstance(where[-1], str) and where[-1] in ENV_KEYS:
                _, block = resolve_pointer(doc.data, _pointer(where))
                _env_block(doc, where, block, env, paths)
    return env


def container_env(doc: Document, path: NodePath) -> dict[str, EnvValue]:
    """The variables a container's command at ``path`` sees, as written (None: set,
    but not to a value written here), with :data:`ANY_NAME` when a Kubernetes
    ``envFrom`` beside it or an ancestor may set any other name."""
    paths: dict[str, NodePath] = {}
    env: dict[str, EnvValue] = {
        name: literal_value(opt.value) for name, opt in sibling_env(doc, path, paths).items()
    }
    if not is_compose(doc.data):
        # a Kubernetes env value is where a finding on it sits (docs/engines.md
        # #environment-files): the words $(NAME) gives an args item are placed there
        env.update({
            name: Placed(value, paths[name])
            for name, value in env.items() if isinstance(value, str) and name in paths
        })
        from specgate.inputs.engines.kube_env import kubernetes_env

        skipped: set[str] = set()
        files = kubernetes_env(doc, path, skipped)
        if files is not None:
            for name in skipped - files.values.keys() - files.unsettled.keys():
                env.pop(name, None)  # set by nothing: $(NAME) stays as written
            # envFrom and valueFrom read from the manifest's ConfigMaps (docs/engines.md
            # #environment-files): a name they settle has its value, one they leave
            # unsettled why (the cluster's or the repository's, not followed), any
            # other name only when a source not read (a Secret, a ConfigMap elsewhere)
            # may set it
            env.update({name: value for name, (value, _, _) in files.values.items()})
            env.update(files.unsettled)
            if files.opaque is not None:
                env[ANY_NAME] = None
            return env
    for depth in range(len(path), -1, -1):
        try:
            _, parent = resolve_pointer(doc.data, _pointer(path[:depth]))
        except InputError:
            continue
        if isinstance(parent, Mapping) and parent.get("envFrom"):
            env[ANY_NAME] = None
            break
    return env


def command_env(source: CommandSource) -> dict[str, Opt]:
    """The variables a command line gives its engine: ``NAME=value`` before it and the
    script's ``export``s (as the shell settles them: bash-verified,
    :mod:`specgate.inputs.cmdline`), then ``docker run -e NAME=value``. A value the
    shell leaves unsettled (``export A=$B`` with B from the environment, a ``-e`` word
    holding such a ``$B``) is :data:`~._source.UNSETTLED`, never its text as written
    (docs/engines.md#environment-values)."""
    command = source.command
    spans = source.env_spans()
    env = {
        name: Opt(UNSETTLED if command.env_why.get(name) else value,
                  spans.get(name, source.spans[0]))
        for name, value in command.env.items()
    }
    if command.env_any is not None:  # a sourced file not read, `set -a`: any name
        env[ANY_NAME] = Opt(UNSETTLED, source.spans[0])
    for name, (value, index) in run_env(command.argv).items():
        span = source.spans[index] if index < len(source.spans) else Span(1, 1)
        env[name] = Opt(UNSETTLED if index in command.unresolved else value, span)
    return env


def unsettled_option(
    source: CommandSource, index: int, key: str, eq: bool
) -> UnsettledValue | None:
    """Why the value a runner's ``-e NAME=value`` (word ``index``) or ``-e NAME`` (the
    script's own NAME passed on) gives the container is not settled by the script
    (``-e NAME=$B``, ``export NAME=$B`` with B from the environment), or None."""
    command = source.command
    why = command.unresolved.get(index) if eq else command.env_why.get(key)
    if why is None:
        return None
    from specgate.inputs.engines.unsettled import unsettled_value

    line = source.spans[index].line if index < len(source.spans) else None
    return unsettled_value(
        f"`{key}`: its value is not settled by the script ({why[0]})", source.file, line, why
    )


def _env_block(
    doc: Document,
    base: NodePath,
    block: object,
    env: dict[str, Opt],
    paths: dict[str, NodePath] | None = None,
) -> None:
    """Add the variables of one ``env``-like block at ``base`` (a mapping, ``NAME=value``
    strings or Kubernetes ``[{name, value}]``; :func:`._source.env_items`) to ``env``,
    keeping earlier blocks' ones. Within the block a name listed twice keeps its last
    value, as Compose builds it (compose-spec/compose-go:types/mapping.go@078b2eed,
    ``MappingWithEquals.DecodeMapstructure``: item by item into a map). A value holding
    a Compose ``${VAR}`` that no ``.env`` or default settles (:attr:`Document.unsettled`)
    is :data:`~._source.UNSETTLED`, never its text as written (docs/engines.md
    #environment-values)."""
    last = {name: (value, where) for name, value, where in env_items(block)}
    for name, (value, where) in last.items():
        if name not in env and paths is not None:
            paths[name] = (*base, *where)
        held = UNSETTLED if (*base, *where) in doc.unsettled or _expression(doc, value) else value
        env.setdefault(name, Opt(held, doc.locate((*base, *where))))


def _expression(doc: Document, value: object) -> bool:
    """Whether ``value`` holds a GitHub Actions expression (``${{ vars.V2 }}``) in a
    workflow (a top-level ``jobs`` and ``on``, which YAML 1.1 reads as ``true``): the runner
    evaluates it from the repository's settings, secrets or the event, known only when the
    workflow runs (GitHub docs, "Expressions": `env: MY_ENV_VAR: ${{ <expression> }}`)."""
    data = doc.data
    return (
        isinstance(value, str) and "${{" in value and isinstance(data, Mapping)
        and "jobs" in data and any(k in data for k in ("on", "true", True))
    )


def _pointer(path: NodePath) -> str:
    return format_pointer(path)
