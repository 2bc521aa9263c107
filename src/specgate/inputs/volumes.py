"""Volumes: which host path a path inside a container is, as Docker and Compose map it.

Shapes: :func:`run_binds` reads a container runner's ``-v``/``--volume`` and ``--mount``
option values, :func:`compose_binds` a Compose service's ``volumes:`` list, each into
:class:`Bind` entries; :func:`map_inside` finds the host path of a container path
through them (or says why none maps it). Nothing touches the disk: the caller confines
the host path to the repository (:func:`specgate.inputs.paths.resolve_reference`).

Semantics, as documented and implemented:

- ``docker run -v HOST:CONTAINER[:OPTIONS]`` (docs.docker.com/reference/cli/docker/
  container/run/#volume; docker/cli ``cli/command/container/opts.go`` since v23.0): a
  HOST that is an absolute path is a bind mount; one starting with ``.`` (``./trt``,
  ``../x``) is a bind mount of that path made absolute against the runner's working
  directory (``filepath.Abs``); any other HOST (``trt``) is a named volume, never a
  path. ``:ro``, ``:z`` and other options after the container path do not move it.
- ``--mount type=bind,source=S,target=T`` (docker/cli ``opts/mount.go``): ``src``/
  ``source``, ``dst``/``destination``/``target``; ``type`` defaults to ``volume``; a
  source ``.`` or starting with ``./`` is made absolute against the working directory.
- Compose ``volumes:`` (compose-spec ``05-services.md#volumes``): short syntax
  ``SOURCE:TARGET[:MODE]`` where a SOURCE starting with ``.`` or ``/`` (or ``~``) is a
  host path and anything else a named volume; long syntax ``{type: bind, source,
  target}``. A relative source is resolved against the Compose file's folder (not an
  assumption: Compose defines it).
- A script's working directory is not known: ``$PWD``, ``${PWD}``, ``$(pwd)`` and
  `` `pwd` `` at the start of a host path stand for it, and a relative host path is
  relative to it. Such a bind is marked ``cwd`` (the reader then assumes the script's
  own folder, docs/engines.md#containers).
- Where several mounts cover a path, the one with the deepest target is the one the
  container sees (mounts are stacked; the deeper shadows the shallower).
"""

from __future__ import annotations

import csv
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: Spellings of the working directory at the start of a script's host path.
_CWD = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=/|$)")


@dataclass(frozen=True)
class Bind:
    """One volume of a container.

    Attributes:
        written: the volume as written (``./trt:/cfg:ro``), for messages.
        inside: the container path it is mounted at (no trailing ``/``).
        host: the host path: relative (to the working directory, or the Compose file's
            folder), or absolute; None for a named volume.
        cwd: the host path depends on a script's working directory.
    """

    written: str
    inside: str
    host: str | None
    cwd: bool = False


def _host(source: str, *, script: bool) -> tuple[str | None, bool] | None:
    """A bind source as (host path, depends on the working directory); None when it is
    no path (a named volume)."""
    if script:
        match = _CWD.match(source)
        if match is not None:
            rest = source[match.end():].lstrip("/")
            return (rest or "."), True
    if source.startswith("/") or (not script and source.startswith("~")):
        return source, False  # Compose expands ``~`` to the home folder: not the repo
    if source.startswith("."):
        return source, script
    return None


def _inside(target: str) -> str | None:
    target = target.strip()
    if not target.startswith("/"):
        return None
    return posixpath.normpath(target) if target != "/" else "/"


def parse_volume(value: str, *, script: bool = True) -> Bind | None:
    """A ``-v``/``--volume`` value (or Compose short syntax when ``script`` is False);
    None when it names no container path (an anonymous volume ``/data``)."""
    parts = value.split(":")
    if len(parts) < 2:
        return None
    inside = _inside(parts[1])
    if inside is None:
        return None
    host = _host(parts[0], script=script)
    if host is None:
        return Bind(value, inside, None)
    return Bind(value, inside, host[0], host[1])


def parse_mount(value: str) -> Bind | None:
    """A ``--mount`` value (CSV of ``key=value``); None when it names no target."""
    fields: dict[str, str] = {}
    # docker/cli opts/mount.go@02cae2f7 reads the value as one CSV record, keys as
    # written (case-sensitive, unstripped), the type's value lowercased.
    for item in next(csv.reader([value]), []):
        key, eq, val = item.partition("=")
        if eq:
            fields[key] = val.lower() if key == "type" else val
    target = next((fields[k] for k in ("target", "dst", "destination") if k in fields), None)
    inside = _inside(target) if target is not None else None
    if inside is None:
        return None
    source = fields.get("source", fields.get("src", ""))
    if fields.get("type", "volume") != "bind":
        return Bind(value, inside, None)
    if source.startswith("/"):
        return Bind(value, inside, source)
    match = _CWD.match(source)
    if match is not None:
        return Bind(value, inside, source[match.end():].lstrip("/") or ".", True)
    if source == "." or source.startswith("./"):
        return Bind(value, inside, source, True)
    return Bind(value, inside, None)  # the daemon refuses a relative source


def run_binds(options: Iterable[tuple[str, str | None]]) -> tuple[Bind, ...]:
    """The volumes of a runner's options (``(long name, value)`` pairs)."""
    out: list[Bind] = []
    for name, value in options:
        if value is None:
            continue
        bind = parse_volume(value) if name == "volume" else (
            parse_mount(value) if name == "mount" else None
        )
        if bind is not None:
            out.append(bind)
    return tuple(out)


def compose_binds(volumes: object) -> tuple[Bind, ...]:
    """The volumes of a Compose service's ``volumes:`` list (short and long syntax)."""
    if not isinstance(volumes, Sequence) or isinstance(volumes, str):
        return ()
    out: list[Bind] = []
    for entry in volumes:
        if isinstance(entry, str):
            bind = parse_volume(entry, script=False)
        elif isinstance(entry, Mapping):
            bind = _compose_long(entry)
        else:
            bind = None
        if bind is not None:
            out.append(bind)
    return tuple(out)


def _compose_long(entry: Mapping[object, object]) -> Bind | None:
    target, source = entry.get("target"), entry.get("source")
    inside = _inside(target) if isinstance(target, str) else None
    if inside is None:
        return None
    written = f"{source}:{target}" if isinstance(source, str) else str(target)
    if entry.get("type") != "bind" or not isinstance(source, str):
        return Bind(written, inside, None)
    host = _host(source, script=False)
    return Bind(written, inside, None if host is None else host[0])


def map_inside(binds: Sequence[Bind], value: str) -> tuple[Bind, str] | None:
    """The bind the container sees ``value`` (an absolute container path) through, and
    the path below its target (``""`` for the target itself); None when no bind covers
    it. The deepest target wins."""
    path = posixpath.normpath(value)
    best: tuple[Bind, str] | None = None
    for bind in binds:
        if bind.inside == "/":
            rest = path.lstrip("/")
        elif path == bind.inside:
            rest = ""
        elif path.startswith(bind.inside + "/"):
            rest = path[len(bind.inside) + 1:]
        else:
            continue
        if best is None or len(bind.inside) >= len(best[0].inside):
            best = (bind, rest)
    return best
