"""A Compose service whose container runs its command through ``sh -c`` (new-user trial
D5; docs/engines.md#a-services-own-shell).

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
from specgate.inputs.engines._source import literal_value
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
    ``path`` is the SCRIPT the Compose service holding it runs that way; else None."""
    if len(path) != 4 or path[0] != "services" or not isinstance(path[3], int):
        return None
    if path[2] not in ("entrypoint", "command") or not is_compose(doc.data):
        return None
    services = doc.data.get("services") if isinstance(doc.data, Mapping) else None
    service = services.get(path[1]) if isinstance(services, Mapping) else None
    if not isinstance(service, Mapping):
        return None
    entrypoint, command = service.get("entrypoint"), service.get("command")
    if entrypoint is None:
        image = service.get("image")
        ref = parse_image(image) if isinstance(image, str) else None
        entry = image_entry(ref) if ref is not None else None
        if entry is None or entry.entrypoint or entry.splits_arguments:
            return None  # the image's ENTRYPOINT runs first (or is not known)
        entrypoint = []
    if not isinstance(entrypoint, list) or not isinstance(command, list | None):
        return None
    argv = [literal_value(word) for word in [*entrypoint, *(command or [])]]
    index = path[3] + (len(entrypoint) if path[2] == "command" else 0)
    if any(word is None for word in argv) or index != 2 or len(argv) < 3:
        return None
    shell, flag = str(argv[0]), str(argv[1])
    if PurePosixPath(shell).name not in _SHELLS or not _SCRIPT_FLAG.fullmatch(flag):
        return None
    return tuple(str(word) for word in argv[4:])


def service_variables(
    doc: Document, path: NodePath, compose: Path | None
) -> tuple[dict[str, str], EnvFiles | None]:
    """The service's variables with a value in the repository (``environment:`` over
    ``env_file:``), and what its environment files leave unsettled."""
    files = compose_env_files(doc, path, compose)
    known = {k: v for k, (v, _, _) in files.values.items()} if files is not None else {}
    for name, opt in sibling_env(doc, path).items():
        value = literal_value(opt.value)
        if value is not None:
            known[name] = value
        else:
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
