"""A Compose service (or Kubernetes container) whose container runs its command through
``sh -c`` (new-user trial D5; docs/engines.md#a-services-own-shell).

``entrypoint: ["sh", "-c"]`` with ``command: ["SCRIPT"]``, or ``command: ["sh", "-c",
"SCRIPT"]`` on an image that sets no ENTRYPOINT, runs SCRIPT in the container's shell.
Compose first turns ``$$`` into ``$`` (its interpolation escape), so ``$$SPEC_TOKENS`` in
the file is ``$SPEC_TOKENS`` to that shell, which expands it from the container's
environment: the service's ``environment:`` over its ``env_file:``. A value the service
sets in the repository is the repository's, read as the shell expands it (the Compose
model holds it after interpolation); a name the service sets to the value of Compose's
own environment (``environment: [NAME]``) or leaves to an environment file not read is
judged where that is set (SG313 / SG314); a name the service does not set is unset in the
container, unless the image sets it (``ENV``): the deployment's (SG313), as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from specgate.inputs.containers import image_entry, parse_image
from specgate.inputs.engines._source import _node, literal_value
from specgate.inputs.engines.env_gaps import compose_env_files
from specgate.inputs.engines.environment import sibling_env
from specgate.inputs.env_files import EnvFiles
from specgate.load.compose_env import is_compose
from specgate.load.document import Document, NodePath

_SHELLS = frozenset({"sh", "bash", "dash", "ash"})
_SCRIPT_FLAG = re.compile(r"^-[a-z]*c$")
_NAMED = re.compile(r"^`\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def service_script(doc: Document, path: NodePath) -> tuple[str, ...] | None:
    """The arguments (``$1``…) of ``sh -c SCRIPT NAME ARGS…`` when the string at
    ``path`` is the SCRIPT the Compose service or Kubernetes container holding it runs
    that way; else None."""
    if len(path) < 3 or not isinstance(path[-1], int):
        return None
    found = _runner(doc, path[:-2])
    if found is None:
        return None
    first, second, kubernetes = found
    if path[-2] not in (first, second):
        return None
    container = _node(doc.data, path[:-2])
    assert isinstance(container, Mapping)
    entrypoint, command = container.get(first), container.get(second)
    if entrypoint is None:
        image = container.get("image")
        ref = parse_image(image) if isinstance(image, str) else None
        entry = image_entry(ref) if ref is not None else None
        if entry is None or entry.entrypoint or entry.splits_arguments:
            return None  # the image's ENTRYPOINT runs first (or is not known)
        entrypoint = []
    if not isinstance(entrypoint, list) or not isinstance(command, list | None):
        return None
    argv = [literal_value(word) for word in [*entrypoint, *(command or [])]]
    index = path[-1] + (len(entrypoint) if path[-2] == second else 0)
    if any(word is None for word in argv) or index != 2 or len(argv) < 3:
        return None
    if kubernetes and any("$$" in str(w) or "$(" in str(w) for w in argv):
        return None  # Kubernetes expands $(NAME) and $$ before the shell: not followed
    shell, flag = str(argv[0]), str(argv[1])
    if PurePosixPath(shell).name not in _SHELLS or not _SCRIPT_FLAG.fullmatch(flag):
        return None
    return tuple(str(word) for word in argv[4:])


def _runner(doc: Document, where: NodePath) -> tuple[str, str, bool] | None:
    """For the container at ``where``: the keys of its ENTRYPOINT and CMD (Compose
    ``entrypoint``/``command``; Kubernetes ``command``/``args``) and whether it is a
    Kubernetes container; None when ``where`` holds neither."""
    container = _node(doc.data, where)
    if not isinstance(container, Mapping):
        return None
    if len(where) == 2 and where[0] == "services" and is_compose(doc.data):
        return "entrypoint", "command", False
    if "name" in container and "image" in container and not is_compose(doc.data):
        return "command", "args", True
    return None


def service_variables(
    doc: Document, path: NodePath, compose: Path | None
) -> tuple[dict[str, str], EnvFiles | None]:
    """The service's (container's) variables with a value in the repository
    (``environment:`` over ``env_file:``; Kubernetes ``env`` over ``envFrom``), and what
    its environment files or sources leave unsettled."""
    files = compose_env_files(doc, path, compose)
    if files is None and not is_compose(doc.data):
        from specgate.inputs.engines.kube_env import kubernetes_env

        files = kubernetes_env(doc, path) or EnvFiles()
    known = {k: v for k, (v, _, _) in files.values.items()} if files is not None else {}
    kube = files is not None and not is_compose(doc.data)
    for name, opt in sibling_env(doc, path).items():
        if kube and files is not None and (name in files.values or name in files.unsettled):
            continue  # as the kubelet expands it ($(VAR), $$: kube_env.expand)
        value = literal_value(opt.value)
        if value is not None and not (files is not None and files.gap(name)):
            known[name] = value
        elif value is None:
            known.pop(name, None)
    return known, files


def judged(hit: tuple[str, bool, bool], files: EnvFiles | None) -> tuple[str, bool, bool]:
    """A hit of the script on a name the service's environment leaves unsettled, with
    that name's origin (an environment file line not followed is the repository's)."""
    named = _NAMED.match(hit[0])
    gap = files.gap(named.group(1)) if files is not None and named is not None else None
    if gap is None:
        return hit
    where = f"{gap.file}:{gap.line}" if gap.line is not None else str(gap.file)
    return (f"{hit[0]} (set at {where}: {gap.reason})", hit[1], gap.origin == "repository")
