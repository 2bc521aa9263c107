"""Environment files a container starts with: ``docker run --env-file FILE`` and a
Compose service's ``env_file:``, read as the runner reads them, or named as not settled
(docs/engines.md#environment-files).

``docker run --env-file`` (docker/cli ``pkg/kvfile/kvfile.go``@3d41bbac ``Parse``, and
``opts/envfile.go`` ``ReadKVEnvStrings``): line by line, a UTF-8 BOM dropped from the
first, leading white space dropped, blank lines and lines starting with ``#`` skipped;
``KEY=VALUE`` splits at the first ``=`` and both are taken as they are (no quotes, no
interpolation, trailing white space kept); ``KEY`` alone takes the value of the
environment ``docker`` runs in (outside the repository); a key with a blank in it, or
none, stops ``docker`` with an error. The files are read in order, then every ``-e``
after them: a later value wins.

Compose ``env_file:`` (docker-compose 1.29 ``compose/config/environment.py``
``env_vars_from_file``: python-dotenv ``dotenv_values`` with interpolation, and
``config.py`` ``resolve_environment``: each file in order, then ``environment:`` over
them; Compose v2 reads the files with compose-go's dotenv, relative to the project
folder): the two dotenv readers differ on quotes, escapes, ``$`` and multi-line values,
so only the lines they read alike are settled here: ``NAME=value`` (an optional
``export``, blanks around ``=``) whose value is plain (no quote, ``$``, backslash,
backquote or ``#``, no blank inside), with an inline comment after a space (compose-go
``dotenv/parser.go``@e70e961 cuts at `` #``), or wholly inside one pair of quotes with
none of those in it. ``NAME`` alone is the environment's
(outside); ``NAME=`` in any other form is the repository's, not followed; a line of no
such shape, or a quote left open (a value over several lines), leaves every name of the
file unsettled.

A file specgate does not read (absolute, out of the repository, missing) is the
deployment's: any name may come from it (SG313). A file the repository holds but
``docker`` would refuse, or a line not followed, is the repository's (SG314).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from specgate.core.errors import InputError, UnsettledValue
from specgate.core.paths import PathProblem, confined
from specgate.load.read import read_text

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: A Compose env_file line both dotenv readers read alike (module docstring).
_PLAIN = re.compile(
    rf"^[ \t]*(?:export[ \t]+)?({_NAME})[ \t]*=[ \t]*"
    r"""(?:([^\s'"\\$#`]*)(?:[ \t]* #.*)?|'([^'"\\$#`]*)'|"([^'"\\$#`]*)")[ \t]*$"""
)
_BARE = re.compile(rf"^[ \t]*(?:export[ \t]+)?({_NAME})[ \t]*$")
#: A line every KEY=VALUE reader takes alike: a plain value, nothing around it.
_STRICT = re.compile(rf"^[ \t]*({_NAME})=([^\s'\"\\$#`]*)$")
#: How a runner reads its environment files: docker/cli's reader, the lines both
#: Compose readers read alike, or only lines every reader takes alike (podman,
#: nerdctl: their own readers, not checked line by line here).
Mode = Literal["docker", "compose", "plain"]
_ASSIGNED = re.compile(rf"^[ \t]*(?:export[ \t]+)?({_NAME})[ \t]*=(.*)$")


#: The most environment files one container names that are read: past it the container's
#: variables are not settled (a repository naming one 1 MiB file a thousand times would
#: otherwise be read a thousand times; docs/trust.md#bounded-work).
MAX_ENV_FILES = 64


def too_many(count: int, file: str, line: int | None) -> UnsettledValue | None:
    """Why a container naming ``count`` environment files is not read, or None."""
    if count <= MAX_ENV_FILES:
        return None
    return UnsettledValue(
        f"the container names {count:,} environment files; specgate reads at most "
        f"{MAX_ENV_FILES}", file, line, origin="repository", what="env_file",
    )


@dataclass
class EnvFiles:
    """What the environment files of one container set, later files winning.

    Attributes:
        values: name → (value, the file as shown, 1-based line).
        unsettled: name → why its value is not settled (an UnsettledValue at its line).
        opaque: set when a file not read may set any name (the first such file's).
    """

    values: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    unsettled: dict[str, UnsettledValue] = field(default_factory=dict)
    opaque: UnsettledValue | None = None

    def set(self, name: str, value: str, shown: str, line: int) -> None:
        self.values[name] = (value, shown, line)
        self.unsettled.pop(name, None)

    def unset(self, name: str, why: UnsettledValue) -> None:
        self.values.pop(name, None)
        self.unsettled[name] = why

    def covered(self, why: UnsettledValue) -> None:
        """A file that may set any name: every earlier value may be replaced."""
        self.values.clear()
        self.unsettled.clear()
        self.opaque = why

    def merge(self, later: EnvFiles) -> None:
        """``later``'s names over these (a later file wins)."""
        if later.opaque is not None:
            self.covered(later.opaque)
        for name, why in later.unsettled.items():
            self.unset(name, why)
        for name, (value, shown, line) in later.values.items():
            self.set(name, value, shown, line)

    def gap(self, name: str) -> UnsettledValue | None:
        """Why ``name`` is not settled by these files, or None (set, or surely not)."""
        if name in self.values:
            return None
        return self.unsettled.get(name) or self.opaque


def _outside(
    written: str, file: str, line: int | None, why: str, column: int | None
) -> UnsettledValue:
    return UnsettledValue(
        f"the environment file {written!r} {why}: the deployment supplies it, so any "
        "variable may be set there",
        file, line, origin="outside", what=written, column=column,
    )


def _repository(reason: str, shown: str, line: int | None, what: str) -> UnsettledValue:
    return UnsettledValue(reason, shown, line, origin="repository", what=what)


def read_env_file(
    written: str,
    base: Path | None,
    files: EnvFiles,
    *,
    file: str,
    line: int | None,
    mode: Mode,
    column: int | None = None,
) -> None:
    """Add the variables of the environment file ``written`` (relative to ``base``,
    the folder it is resolved from; None: not known) to ``files``; ``file`` and
    ``line``: where the serving file names it; ``mode``: how the runner reads it."""
    if base is None or not written or "$" in written or PurePosixPath(written).is_absolute():
        files.covered(_outside(written, file, line, "is not in the repository", column))
        return
    try:
        found = confined(base / written)
    except PathProblem:
        files.covered(_outside(written, file, line, "is not in the repository", column))
        return
    shown = str(PurePosixPath(file).parent / written)
    try:
        text = read_text(found, shown)
    except InputError as exc:
        if not found.exists():
            files.covered(_outside(written, file, line, "does not exist in the repository", column))
        else:
            files.covered(_repository(
                f"the environment file {written!r} cannot be read ({exc.reason})",
                file, line, written,
            ))
        return
    if mode == "docker":
        _docker_lines(text, shown, files)
    else:
        _compose_lines(text, shown, files, strict=mode == "plain")


def _docker_lines(text: str, shown: str, files: EnvFiles) -> None:
    for number, raw in enumerate(text.split("\n"), 1):
        row = raw.removesuffix("\r")
        if number == 1:
            row = row.removeprefix("\ufeff")
        row = row.lstrip()
        if not row or row.startswith("#"):
            continue
        key, eq, value = row.partition("=")
        if not key or " " in key or "\t" in key:
            files.covered(_repository(
                f"{shown}:{number}: docker refuses this line of an environment file "
                "(no variable name, or a blank in it), so the container does not start",
                shown, number, row[:60],
            ))
            return
        if eq:
            files.set(key, value, shown, number)
        else:
            files.unset(key, _bare(key, shown, number))


def _bare(name: str, shown: str, number: int) -> UnsettledValue:
    return UnsettledValue(
        f"`{name}`: the environment file names it without a value, so it takes the "
        "value of the environment the container is started from",
        shown, number, origin="outside", what=name,
    )


def outside_value(name: str, file: str, line: int | None) -> UnsettledValue:
    """``-e NAME`` (``environment: [NAME]``) with NAME set nowhere in the repository:
    the container gets the value of the environment it is started from."""
    return UnsettledValue(
        f"`{name}`: passed to the container without a value, so it takes the value of "
        "the environment the container is started from, which nothing in the "
        "repository sets",
        file, line, origin="outside", what=name,
    )


def interpolated_value(name: str, reference: str, file: str, line: int | None) -> UnsettledValue:
    """``environment: {NAME: ${VAR}}`` with VAR set by no ``.env`` and no default: the
    container gets what the environment ``docker compose`` runs in gives VAR."""
    return UnsettledValue(
        f"`{name}`: its value `{reference}` is set by no .env (the environment docker "
        "compose runs in may set it)",
        file, line, origin="outside", what=name,
    )


def _compose_lines(text: str, shown: str, files: EnvFiles, *, strict: bool = False) -> None:
    if text.startswith("\ufeff") or "\r" in text.replace("\r\n", ""):
        # a BOM, a lone carriage return: where the readers differ (module docstring)
        files.covered(_repository(
            f"{shown}: a byte-order mark or a lone carriage return, which Compose's "
            "readers do not read alike", shown, 1, shown,
        ))
        return
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        row = raw.strip()
        if not row or row.startswith("#"):
            continue
        plain = (_STRICT if strict else _PLAIN).match(raw)
        if plain is not None:
            value = next((g for g in plain.groups()[1:] if g is not None), "")
            files.set(plain.group(1), value, shown, number)
            continue
        bare = _BARE.match(raw)
        if bare is not None:
            files.unset(bare.group(1), _bare(bare.group(1), shown, number))
            continue
        assigned = _ASSIGNED.match(raw)
        value = assigned.group(2).strip() if assigned is not None else ""
        if strict or assigned is None or (value[:1] in "'\"" and value.count(value[0]) < 2):
            files.covered(_repository(
                f"{shown}:{number}: a line of the environment file specgate does not read "
                "as Compose does (no NAME=value, or a quoted value over several lines)",
                shown, number, row[:60],
            ))
            return
        name = assigned.group(1)
        files.unset(name, _repository(
            f"`{name}`: its value in the environment file holds quotes, `$`, `#` or "
            "escapes, which Compose's readers do not read alike "
            "(docs/engines.md#environment-files)",
            shown, number, name,
        ))
