"""Compose interpolation: ``${VAR}`` in a Compose file's values filled in from the
``.env`` file beside it, as ``docker compose`` does before it reads the file.

Rules (Docker Compose reference, "Interpolation",
https://docs.docker.com/reference/compose-file/interpolation/, and the Compose
Specification chapter 12): ``$VAR`` and ``${VAR}`` substitute; ``${VAR:-default}``
gives ``default`` when VAR is unset or empty, ``${VAR-default}`` only when unset;
``${VAR:?err}`` / ``${VAR?err}`` stop Compose with an error when VAR is unset (or,
with ``:``, empty): one ``.env`` does not set is the environment's to set, so unsettled
like a ``${VAR}`` (new-user trial D4), one ``.env`` sets empty an input error;
``${VAR:+alt}`` / ``${VAR+alt}`` give ``alt`` when VAR is set (and not empty), else
nothing; defaults nest (``${A:-${B:-x}}``); ``$$`` is a
literal ``$``; any other ``$`` stays as written. Values are interpolated, keys are
not. A variable ``.env`` does not set reads its default when that is not empty (the
file's own value, as :mod:`specgate.inputs.shell_params` reads ``${D:-3}``); with no
default, an empty one or ``:+`` it is *unsettled* (the shell environment that runs
``docker compose`` may set it; specgate cannot see it: hostile review r4 defect 2):
its node is recorded (:attr:`Document.unsettled`), the reference without a default
stays as written (Compose would make it empty, warning).

``.env`` syntax: compose-go's dotenv parser, followed exactly
(:mod:`specgate.load.dotenv`: ``KEY=value``, ``KEY: value``, ``export``, a bare ``KEY``
taken from the environment, quoted values over several lines); unquoted and
double-quoted values are themselves interpolated from the variables above them.

Bounds: ``.env`` is read like any referenced file (inside the repository, at most
1 MiB); what interpolation adds over the whole Compose file is at most its length
plus the ``.env`` length plus 64 KiB (:data:`specgate.core.limits.EXPANSION_ALLOWANCE`),
past which the file is refused (never read differently); nesting is at most
:data:`_DEPTH` deep.
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Mapping, Sequence
from pathlib import Path

from specgate.core.errors import InputError, LimitReached, UnreadForm
from specgate.core.limits import EXPANSION_ALLOWANCE
from specgate.core.paths import PathProblem, confined
from specgate.load.document import Document, NodePath
from specgate.load.read import read_text

_NAME = r"[_A-Za-z][_A-Za-z0-9]*"
_DEPTH = 8


class _Unsettled(Exception):
    """A reference no ``.env`` variable or default settles (its text)."""


class _Interpolator:
    def __init__(
        self,
        env: Mapping[str, str],
        allowance: int,
        shown: str,
        unknown: frozenset[str] = frozenset(),
    ) -> None:
        self.env = env
        #: names the environment sets to a value not known here: never settled
        self.unknown = unknown
        self.left = allowance
        self.shown = shown
        self.unsettled: list[str] = []
        #: the names whose values were taken, in order
        self.used: list[str] = []

    def text(self, value: str, depth: int = 0) -> str:
        """``value`` interpolated; unsettled references kept as written."""
        return self.traced(value, depth)[0]

    def traced(self, value: str, depth: int = 0) -> tuple[str, tuple[int, ...]]:
        """:meth:`text`, with per character of the result the offset in ``value`` of
        what it came from: itself when kept as written, the ``$`` of the reference
        whose value (or default) it is part of."""
        if "$" not in value:
            return value, tuple(range(len(value)))
        out: list[str] = []
        back: list[int] = []
        i, end = 0, len(value)
        while i < end:
            at = value.find("$", i)
            if at < 0:
                out.append(value[i:])
                back.extend(range(i, end))
                break
            out.append(value[i:at])
            back.extend(range(i, at))
            size = len(out)
            i = self._one(value, at, out, depth)
            piece = "".join(out[size:])
            kept = piece == value[at:i]
            back.extend(range(at, i) if kept else [at] * len(piece))
        return "".join(out), tuple(back)

    def _spend(self, piece: str) -> str:
        self.left -= len(piece)
        if self.left < 0:
            raise LimitReached(
                "Compose interpolation passes its budget (the file's length plus its "
                f".env's plus {EXPANSION_ALLOWANCE:,} characters); specgate will not "
                "read the file without its variables",
                self.shown,
            )
        return piece

    def _one(self, value: str, at: int, out: list[str], depth: int) -> int:
        """Interpolate the ``$`` at ``at`` into ``out``; the offset after it."""
        nxt = value[at + 1 : at + 2]
        if nxt == "$":
            out.append("$")
            return at + 2
        bare = re.compile(_NAME).match(value, at + 1)
        if bare is not None:
            name = bare.group()
            if name in self.env and name not in self.unknown:
                self.used.append(name)
                out.append(self._spend(self.env[name]))
            else:
                self.unsettled.append(value[at : bare.end()])
                out.append(value[at : bare.end()])
            return bare.end()
        if nxt != "{":
            out.append("$")
            return at + 1
        close = _closing(value, at + 2)
        if close is None:
            out.append(value[at:])
            return len(value)
        out.append(self._braced(value[at + 2 : close], value[at : close + 1], depth))
        return close + 1

    def _braced(self, inner: str, whole: str, depth: int) -> str:
        match = re.match(rf"({_NAME})(?:(:?[-?+])(.*))?$", inner, re.DOTALL)
        if match is None:
            # ${VAR/foo/bar} and the like: Compose refuses the file (docker-compose 1.29.2:
            # 'Invalid interpolation format for "command" option'), a form specgate does not
            # read: SG312 on the deployment, never the end of the run (issue 24)
            raise UnreadForm(
                f"Compose interpolation: {whole[:60]!r} is not a form Compose reads "
                "(it stops with 'Invalid interpolation format')"
            )
        if depth >= _DEPTH:
            raise LimitReached(f"Compose interpolation nested over {_DEPTH} deep", self.shown)
        name, operator, word = match.group(1), match.group(2), match.group(3) or ""
        if name in self.unknown:
            self.unsettled.append(whole)
            return whole
        known = self.env.get(name)
        if not operator:
            if known is None:
                self.unsettled.append(whole)
                return whole
            self.used.append(name)
            return self._spend(known)
        if known is None and not (operator[-1] == "-" and word):
            # an empty default or ``:+`` states nothing: what runs is the environment's
            # (a default that is not empty is the file's own value, as in the shell)
            self.unsettled.append(whole)
        empty = known is None or (operator.startswith(":") and not known)
        kind = operator[-1]
        if kind == "+":
            return "" if empty else self.text(word, depth + 1)
        if not empty:
            self.used.append(name)
            return self._spend(str(known))
        if kind == "?" and known is None:
            # Compose stops unless the environment it runs in sets it: the deployment's
            # value (unsettled above, as written), never the end of the run
            return whole
        if kind == "?":
            # .env sets it empty: Compose stops unless the environment it runs in sets it,
            # which beats .env (docker-compose 1.29.2 runs `${SPEC:?msg}` with SPEC= in
            # .env and SPEC=abc in the environment): the deployment's value, as written
            self.unsettled.append(whole)
            return whole
        return self.text(word, depth + 1)


def _closing(value: str, start: int) -> int | None:
    """The offset of the ``}`` closing a ``${`` whose name starts at ``start``."""
    depth = 1
    i = start
    while i < len(value):
        if value.startswith("${", i):
            depth, i = depth + 1, i + 2
            continue
        if value[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def parse_dotenv(
    text: str,
    shown: str,
    outer: Mapping[str, str] | None = None,
    lines: dict[str, int] | None = None,
    unsettled: set[str] | None = None,
) -> dict[str, str]:
    """The variables of a ``.env`` file (syntax in the module docstring), each value
    interpolated from ``outer`` (the environment Compose runs in) and the ones above it
    (compose-go ``dotenv/env.go@e70e961c``, ``GetEnvFromFile``: the current
    environment is looked up first); ``unsettled`` gets the names whose value holds a
    reference nothing settles (the environment Compose runs in may set it).

    Raises:
        InputError: a statement Compose refuses (:mod:`specgate.load.dotenv`, at its line).
    """
    from specgate.load.dotenv import parse_statements

    env: dict[str, str] = {}
    allowance = EXPANSION_ALLOWANCE + len(text)
    known = dict(outer or {})
    interpolate = _Interpolator(ChainMap(known, env), allowance, shown)
    names: set[str] = set() if unsettled is None else unsettled

    def expand(value: str) -> tuple[str, bool]:
        interpolate.unsettled.clear()
        interpolate.unknown = frozenset(names)  # a name above read unsettled stays so
        return interpolate.text(value), not interpolate.unsettled

    parse_statements(text, shown, known.get, expand, env, lines=lines, unsettled=names)
    return env


def is_compose(data: object) -> bool:
    """A Compose file: a top-level ``services`` mapping and no Kubernetes ``kind``."""
    return (
        isinstance(data, Mapping)
        and isinstance(data.get("services"), Mapping)
        and "kind" not in data
        and "apiVersion" not in data
    )


def interpolated(
    doc: Document,
    path: Path,
    dotenvs: Sequence[tuple[Path, str]] | None = None,
    outer: Mapping[str, str] | None = None,
    unknown: frozenset[str] = frozenset(),
) -> Document:
    """``doc`` (a Compose file read from ``path``) with its values interpolated from
    the ``.env`` beside it (none there: no variables), and the node paths of values
    an unsettled reference stays in (:attr:`Document.unsettled`, with that text).

    ``dotenvs`` (each a ``.env`` path and how it is shown) replaces the ``.env``
    beside the file: the project's ``.env`` files, the first to set a name wins
    (compose-go ``types/mapping.go@e70e961c``, ``Mapping.Merge``); ``outer`` is the
    environment ``docker compose`` runs in (a script's exported variables), which wins
    over every ``.env`` (``cli/options.go@e70e961c``: ``WithOsEnv`` is applied first);
    ``unknown`` the names it sets to values not known here (a reference to one is
    unsettled, whatever ``.env`` or a default says).

    Raises:
        InputError: a ``.env`` that leads out of the repository, cannot be read or
            parsed; a required variable unset; an unsupported form.
        LimitReached: the interpolation budget spent.
    """
    if dotenvs is None:
        dotenvs = [(path.parent / ".env", str(Path(doc.file).parent / ".env"))]
    env, origin, env_length, loose = _environment(dotenvs, outer)
    work = _Interpolator(
        env, EXPANSION_ALLOWANCE + len(doc.text) + env_length, doc.file, unknown | loose
    )
    unsettled: dict[NodePath, str] = {}
    via: dict[NodePath, str] = {}
    written: dict[NodePath, tuple[str, tuple[int, ...]]] = {}

    def walk(node: object, where: NodePath) -> object:
        if isinstance(node, str):
            work.unsettled.clear()
            work.used.clear()
            try:
                value, back = work.traced(node)
            except InputError as exc:
                if exc.file is not None:
                    raise
                kind = UnreadForm if isinstance(exc, UnreadForm) else InputError
                span = doc.locate(where)
                raise kind(exc.reason, doc.file, span.line, span.column) from None
            if work.unsettled:
                unsettled[where] = work.unsettled[0]
            if work.used:
                setting = _setting(work.used, origin)
                if setting is not None:
                    via[where] = setting
            if value != node:
                written[where] = (node, back)
            return value
        if isinstance(node, Mapping):
            return {key: walk(value, (*where, key)) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(item, (*where, i)) for i, item in enumerate(node)]
        return node

    data = walk(doc.data, ())
    return doc._replace(
        data=data, unsettled=unsettled, via={**doc.via, **via}, written=written
    )


def _environment(
    dotenvs: Sequence[tuple[Path, str]], outer: Mapping[str, str] | None
) -> tuple[dict[str, str], dict[str, str], int, frozenset[str]]:
    """The variables a Compose project is interpolated with: ``outer`` (the environment
    ``docker compose`` runs in) over the ``.env`` files, the first to set a name winning;
    where each ``.env`` name is set (``compose/.env:2``); the ``.env`` files' length; the
    names whose ``.env`` value holds a reference nothing settles."""
    env: dict[str, str] = dict(outer or {})
    env_length = 0
    #: where each name the .env files set is set (the first file that sets it wins)
    origin: dict[str, str] = {}
    unsettled: set[str] = set()
    for dotenv, shown_env in dotenvs:
        env_text = dotenv_text(dotenv, shown_env)
        env_length += len(env_text)
        lines: dict[str, int] = {}
        loose: set[str] = set()
        for name, value in parse_dotenv(env_text, shown_env, outer or {}, lines, loose).items():
            if name not in env:
                origin[name] = f"{shown_env}:{lines[name]}"
                if name in loose:
                    unsettled.add(name)
            env.setdefault(name, value)
    return env, origin, env_length, frozenset(unsettled)


def interpolated_words(
    words: Sequence[str],
    dotenvs: Sequence[tuple[Path, str]],
    shown: str,
    outer: Mapping[str, str] | None = None,
    unknown: frozenset[str] = frozenset(),
) -> tuple[list[str], str | None]:
    """``words`` (an ``include:`` entry's paths, compose-go ``loadIncludeConfig``
    interpolating each entry with the project's variables) interpolated as
    :func:`interpolated` interpolates a value, and the first reference no variable or
    default settles (its text, as written), None when all are settled.

    Raises:
        InputError: as :func:`interpolated`.
    """
    env, _, env_length, loose = _environment(dotenvs, outer)
    work = _Interpolator(
        env, EXPANSION_ALLOWANCE + sum(map(len, words)) + env_length, shown, unknown | loose
    )
    out: list[str] = []
    first: str | None = None
    for word in words:
        work.unsettled.clear()
        out.append(work.text(word))
        if work.unsettled and first is None:
            first = work.unsettled[0]
    return out, first


def _setting(used: Sequence[str], origin: Mapping[str, str]) -> str | None:
    """Where the ``.env`` variables a value read are set (``compose/.env:2 (D)``; several:
    ``compose/.env:2 (D), compose/.env:3 (M)``), at most 4 named; None when none of them
    is a ``.env``'s (the environment docker compose runs in sets them)."""
    named = [f"{origin[name]} ({name})" for name in dict.fromkeys(used) if name in origin]
    if not named:
        return None
    return ", ".join(named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4 else "")


def dotenv_text(dotenv: Path, shown: str) -> str:
    """The text of a ``.env`` file inside the repository ("" when there is none, and
    under the change gate when git ignores it: no commit holds it, so a clone of the
    revision has none; docs/change-gate.md#baseline).

    Raises:
        InputError: one that leads out of the repository or cannot be read.
    """
    try:
        found = confined(dotenv)
    except PathProblem as exc:
        if dotenv.exists() or dotenv.is_symlink():
            raise InputError(str(exc), shown) from None
        return ""
    from specgate.core.revision_tree import ignored_by_git

    if ignored_by_git(dotenv):
        return ""
    return read_text(found, shown)
