"""The engine package's requirement in the Python project files beside an engine config
(docs/engines.md#versions): ``requirements*.txt`` / ``constraints*.txt`` with the files
their ``-r`` / ``-c`` lines include, ``pyproject.toml`` ``[project].dependencies``, and
``uv.lock`` ``[[package]]`` entries.

A requirement is read as pip reads one (PEP 508 ``name[extras] specifiers ; marker``;
PEP 440 operators ``==``, ``===``, ``!=``, ``~=``, ``>=``, ``<=``, ``>``, ``<``, and ``==X.*``):
the specifiers are judged under PEP 440 over the engine's ``releases`` list
(:func:`admitted`, :mod:`specgate.inputs.pep440`): requirements admitting one listed
release and nothing newer pin it (``vllm==0.16`` → 0.16.0); several admitted
(``vllm==0.20.*``) narrow the releases considered to them (docs/engines.md#versions).
A direct reference (``vllm @ https://…``) or a line not of this form pins nothing.

Hostile input: every file is read through :func:`specgate.load.read.read_text`
(size-capped, a base revision's file when one is read), an include is followed only
inside the repository (:func:`specgate.core.paths.confined`: no ``..`` or symlink out),
at most :data:`MAX_DEPTH` deep and :data:`MAX_FILES` files in all.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from specgate.core.errors import InputError
from specgate.inputs.knowledge import Version
from specgate.load.read import read_text

#: ``-r`` / ``-c`` includes followed from a requirements file, at most this deep.
MAX_DEPTH = 4
#: Requirement files read for one engine config, includes counted.
MAX_FILES = 16

_OPERATOR = r"(?:===|==|!=|~=|>=|<=|>|<)"
_CLAUSE = re.compile(r"\s*(" + _OPERATOR + r")\s*([A-Za-z0-9_.+!*-]{1,64})\s*")
_LINE = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]{0,99})\s*(?:\[[\w,\s-]{0,64}\])?\s*"
    r"((?:" + _OPERATOR + r")[^;#]*)?(;[^#]*)?$"
)
_INCLUDE = re.compile(r"^\s*(-r|--requirement|-c|--constraint)(?:\s+|=)(\S+)\s*$")


def normal(name: str) -> str:
    """A package name as the index compares it (PEP 503: ``Mlx_LM`` → ``mlx-lm``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Requirement:
    """One requirement on the engine package: ``text`` as written (for the report),
    ``clauses`` (operator, version text), ``where`` the file it is in."""

    text: str
    clauses: tuple[tuple[str, str], ...]
    where: str

    @property
    def exact(self) -> str | None:
        """The version an exact ``==`` / ``===`` pins alone, else None."""
        if len(self.clauses) == 1 and self.clauses[0][0] in ("==", "===") and (
            not self.clauses[0][1].endswith("*")
        ):
            return self.clauses[0][1]
        return None


@dataclass
class Found:
    """What the project files say of the package: its requirements, and why some were
    not read (``unread``: a file or include not followed; then nothing found counts)."""

    requirements: list[Requirement] = field(default_factory=list)
    unread: str | None = None
    files: int = 0


def admitted(requirements: list[Requirement], releases: tuple[Version, ...]) -> list[Version]:
    """The ``releases`` every requirement admits under PEP 440 (pip installs the newest
    of those, :mod:`specgate.inputs.pep440`), in order; a clause pip refuses admits none."""
    from specgate.inputs.pep440 import clause_test

    tests = [clause_test(op, text) for r in requirements for op, text in r.clauses]
    if any(test is None for test in tests):
        return []
    return [v for v in releases if all(test(v) for test in tests if test is not None)]


def bounded_above(requirements: list[Requirement], releases: tuple[Version, ...]) -> bool:
    """Whether a clause admits no release newer than the newest listed one: an exact
    ``==X`` / ``===X``, or a ``<``, ``<=``, ``~=`` or ``==X.*`` clause that already
    leaves the newest listed release out (its admitted releases stop below it, so no
    later release is admitted either; a family ``==0.34.*`` the newest is in may grow)."""
    from specgate.inputs.pep440 import clause_test

    for r in requirements:
        for op, text in r.clauses:
            if op in ("==", "===") and not text.endswith("*"):
                return True
            test = clause_test(op, text)
            bounding = op in ("<", "<=", "~=", "==") and test is not None and releases
            if bounding and test is not None and not test(releases[-1]):
                return True
    return False


def bounded_below(requirements: list[Requirement]) -> bool:
    """Whether a clause bounds the release from below (``>=``, ``>``, ``==``, ``~=``)."""
    return any(op in (">=", ">", "==", "===", "~=") for r in requirements for op, _ in r.clauses)


def from_line(line: str, package: str, where: str) -> Requirement | None:
    """``line`` as a requirement on ``package`` (PEP 508, comment dropped), else None."""
    text = line.split(" #", 1)[0].strip()
    found = _LINE.match(text)
    if found is None or normal(found.group(1)) != normal(package) or not found.group(2):
        return None
    clauses: list[tuple[str, str]] = []
    for part in found.group(2).split(","):
        clause = _CLAUSE.fullmatch(part)
        if clause is None:
            return None
        clauses.append((clause.group(1), clause.group(2)))
    return Requirement(text, tuple(clauses), where)


def requirement_files(
    files: list[Path], packages: tuple[str, ...], shown: Callable[[Path], str]
) -> Found:
    """The requirements on ``packages`` in ``files`` and the files their ``-r``/``-c``
    lines include (relative to the including file, inside the repository), depth
    first, each file once."""
    from specgate.core.paths import PathProblem, confined, repository_top

    found = Found()
    seen: set[Path] = set()
    stack = [(path, 0) for path in reversed(files)]
    while stack and found.unread is None:
        path, depth = stack.pop()
        real = path.resolve()
        if real in seen:
            continue
        seen.add(real)
        found.files += 1
        if found.files > MAX_FILES:
            found.unread = f"more than {MAX_FILES} requirement files"
            break
        try:
            text = read_text(path, shown(path))
        except InputError as exc:
            found.unread = f"{shown(path)} unreadable ({exc.reason})"
            break
        for line in text.splitlines()[:4096]:
            include = _INCLUDE.match(line)
            if include is not None:
                if depth + 1 > MAX_DEPTH:
                    found.unread = f"{shown(path)} includes deeper than {MAX_DEPTH} files"
                    break
                try:
                    top = repository_top(path.parent)
                    target = confined(path.parent / include.group(2), top=top)
                except PathProblem as exc:
                    found.unread = f"{include.group(2)} included by {shown(path)}: {exc}"
                    break
                stack.append((target, depth + 1))
                continue
            for package in packages:
                requirement = from_line(line, package, shown(path))
                if requirement is not None:
                    found.requirements.append(requirement)
    return found


def _toml(path: Path, shown: str, found: Found) -> dict[str, object] | None:
    """``path`` parsed as TOML (Python's own reader), None with ``found.unread`` set when
    it cannot be read or parsed."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        data: dict[str, object] = tomllib.loads(read_text(path, shown))
        return data
    except InputError as exc:
        found.unread = f"{shown} unreadable ({exc.reason})"
    except tomllib.TOMLDecodeError as exc:
        found.unread = f"{shown} unreadable (TOML syntax error: {exc})"
    return None


def pyproject(path: Path, packages: tuple[str, ...], shown: str) -> Found:
    """The requirements on ``packages`` in ``pyproject.toml``'s ``[project].dependencies``
    (PEP 621); a file TOML refuses is not read."""
    found = Found(files=1)
    data = _toml(path, shown, found)
    if data is None:
        return found
    project = data.get("project")
    dependencies = project.get("dependencies") if isinstance(project, dict) else None
    for item in dependencies[:4096] if isinstance(dependencies, list) else ():
        for package in packages:
            requirement = from_line(item, package, shown) if isinstance(item, str) else None
            if requirement is not None:
                found.requirements.append(requirement)
    return found


def uv_lock(path: Path, packages: tuple[str, ...], shown: str) -> Found:
    """Each ``[[package]]`` of ``uv.lock`` named one of ``packages``, as an exact pin
    (a lock names the version it installs)."""
    found = Found(files=1)
    data = _toml(path, shown, found)
    if data is None:
        return found
    names = {normal(p) for p in packages}
    entries = data.get("package")
    for entry in entries[:65536] if isinstance(entries, list) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        version = entry.get("version")
        if normal(entry["name"]) in names and isinstance(version, str):
            found.requirements.append(
                Requirement(f"{entry['name']} {version}", (("==", version),), shown)
            )
    return found
