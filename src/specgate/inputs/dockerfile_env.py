"""The variables a Dockerfile's ``ENV`` gives the container its image runs
(docs/engines.md#environment-values), read only where every reading agrees, else named
unsettled; never a value as written where the builder would change it.

Dockerfile reference (https://docs.docker.com/reference/dockerfile/, "ENV", "Environment
replacement", "Parser directives", "FROM"): ``ENV <key>=<value> ...`` sets each key (quotes
and backslashes are removed as on a command line, ``$VAR`` / ``${VAR:-word}`` replaced from
the build's variables: earlier ``ENV``s, ``ARG``s a ``--build-arg`` may override, the base
image's own environment); the older ``ENV <key> <value>`` sets one key to the rest of the
line. A line ending with the escape character (``\\`` unless a ``# escape=`` directive says
otherwise) goes on on the next. The image is the last stage's: only its ``ENV``s are in it,
and those of the stage it is built ``FROM`` when that is an earlier stage.

Settled here: a value with no quote, ``$``, backslash or backquote in it (``1``, ``true``), or
wholly inside one pair of quotes with none of those and no blank; a ``$`` (a build argument
or an inherited value) leaves it unsettled (the deployment's build), anything else (quotes,
escapes, an ``escape`` directive, an earlier stage's values) is the repository's, not
followed.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from specgate.core.errors import UnsettledValue
from specgate.inputs.env_files import EnvFiles

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PLAIN = re.compile(r"""[^\s'"\\$`]*|"[^\s'"\\$`]*"|'[^\s'"\\$`]*'""")
_PAIR = re.compile(rf"({_NAME})=(\S*)")
_FROM = re.compile(r"(?i)^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$")


def is_dockerfile(file: str) -> bool:
    """A Dockerfile by its name (``Dockerfile``, ``Dockerfile.gpu``, ``serve.Dockerfile``,
    ``Containerfile``)."""
    name = PurePosixPath(file).name.lower()
    return (
        name in ("dockerfile", "containerfile")
        or name.startswith(("dockerfile.", "containerfile."))
        or name.endswith((".dockerfile", ".containerfile"))
    )


def _instructions(text: str) -> list[tuple[int, str]]:
    """The instructions of ``text`` (continuations joined, comment lines dropped), each
    with its first line (1-based)."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment line inside a continuation is dropped
        if not pending:
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        out.append((start, " ".join(pending)))
        pending = []
    if pending:
        out.append((start, " ".join(pending)))
    return out


def dockerfile_env(text: str, shown: str) -> EnvFiles:
    """What the ``ENV``s of the image a Dockerfile builds set (module docstring)."""
    files = EnvFiles()
    head = [line.strip().lower().replace(" ", "") for line in text.splitlines()[:8]]
    if any(line.startswith("#escape=") for line in head):
        files.covered(UnsettledValue(
            f"{shown}: an `escape` parser directive, which specgate does not follow",
            shown, 1, origin="repository", what="escape",
        ))
        return files
    stages: dict[str, EnvFiles] = {}
    for number, instruction in _instructions(text):
        word, _, rest = instruction.partition(" ")
        keyword = word.upper()
        if keyword == "FROM":
            found = _FROM.match(instruction)
            base = found.group(1).lower() if found is not None else ""
            files = EnvFiles()
            if base in stages:  # built from an earlier stage: its values, not followed
                files.covered(UnsettledValue(
                    f"{shown}:{number}: the image is built from the stage `{base}`, whose "
                    "environment specgate does not follow", shown, number,
                    origin="repository", what=base,
                ))
            if found is not None and found.group(2):
                stages[found.group(2).lower()] = files
        elif keyword == "ENV":
            _env(rest.strip(), files, shown, number)
    return files


def _env(rest: str, files: EnvFiles, shown: str, number: int) -> None:
    """One ``ENV`` instruction's keys into ``files``."""
    first = rest.split(None, 1)
    if not first:
        return
    if "=" not in first[0]:  # ENV <key> <value>: the rest of the line
        name, value = first[0], (first[1] if len(first) > 1 else "")
        _one(name, value.strip(), files, shown, number)
        return
    pairs = _PAIR.findall(rest)
    if " ".join(f"{k}={v}" for k, v in pairs) != " ".join(rest.split()):
        # a value with a blank in it (quoted or escaped): the keys of the line not followed
        for name in re.findall(rf"(?:^|\s)({_NAME})=", rest):
            files.unset(name, _why(name, "its value holds quotes or escapes with blanks",
                                   shown, number, "repository"))
        return
    for name, value in pairs:
        _one(name, value, files, shown, number)


def _one(name: str, value: str, files: EnvFiles, shown: str, number: int) -> None:
    if _PLAIN.fullmatch(value):
        files.set(name, value.strip("'\"") if value[:1] in "'\"" else value, shown, number)
    elif "$" in value:
        files.unset(name, _why(name, f"its value {value[:40]!r} is replaced from the build's "
                               "variables (a --build-arg, the base image's environment)",
                               shown, number, "outside"))
    else:
        files.unset(name, _why(name, "its value holds quotes or escapes specgate does not "
                               "follow", shown, number, "repository"))


def _why(name: str, why: str, shown: str, number: int, origin: str) -> UnsettledValue:
    return UnsettledValue(f"`{name}`: {why}", shown, number, origin=origin, what=name)
