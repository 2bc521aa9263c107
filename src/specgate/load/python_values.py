"""Where a Python launcher's non-literal keyword value is set, read statically (never run).

:class:`Origins` (or :func:`origin_of`, for one value) answers for a value such as
``speculative_model=DRAFT``
(docs/engines.md#unsettled-values):

- ``"outside"``: the environment or the command line the deployment supplies, as
  Python reads them: ``os.environ["X"]``, ``os.environ.get("X")`` and
  ``os.getenv("X")`` without a default (or with ``None``), ``sys.argv[i]`` (also
  through ``from os import environ, getenv`` and ``from sys import argv``), or
  ``int``/``float``/``str`` of one of them; a name bound once, at the module's top
  level and unconditionally, to such an expression counts as it (never when the file
  may re-bind names otherwise: ``globals()``, ``setattr``, ``exec``…);
- ``"settled"`` with the value: a literal, ``os.environ.get("X", 5)`` / ``os.getenv("X", "5")``
  with a literal default, which is what the script runs with when the environment
  sets none (as the shell reads ``${X:-5}``: the interpreter run with an empty
  environment agrees);
- ``"outside"`` too: ``A if TEST else B`` whose test reads only the caller's values
  (``len(sys.argv) > 1``) and whose branches are literals or the caller's, and
  ``argparse``'s ``args.x`` of a plain argument (:mod:`specgate.load.python_argparse`);
- ``"repository"``: anything else (a call, an attribute of an object the file
  builds, ``argparse``'s ``args.x`` the file may decide, a name bound in a loop, a
  branch, a function or more than once, a name read before its one binding runs, a
  name bound to a dict or list that is read anywhere else too, which may change it in
  place): the file decides the value in a way specgate does not follow.

A dict literal, and a call of the builtin ``dict`` with keyword arguments alone
(``dict(method="ngram", num_speculative_tokens=4)``; ``dict`` bound nowhere in the module
and no ``builtins`` named), is judged value by value: settled when every value is (then
the dict with them), the repository's when any value is, else outside. A module constant
bound once to either is followed when the read asked about is the name's only read.

Bounds: a name is followed at most :data:`MAX_HOPS` times (``A = B``, ``B = C``…); the
file is at most 1 MiB and parsed by :func:`ast.parse` before (its nesting bounded there).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import NamedTuple

from specgate.core.errors import UnsettledValue
from specgate.load.python_argparse import ArgparseReads
from specgate.load.python_environ import EnvironWrites


class Part(NamedTuple):
    """The part of a value that decides its origin, for a message: ``text`` the read or
    expression as written (``os.environ['DRAFT']``, ``draft()``; at most 60
    characters), ``line`` its 1-based line, and ``name`` the module-level name the
    keyword reaches it through (``DRAFT``), None when the keyword holds it directly."""

    text: str
    line: int
    name: str | None = None


_Judged = tuple[str, object, Part | None]

#: How many ``A = B`` hops a name is followed before the value counts as the repository's.
MAX_HOPS = 8

_CONVERSIONS = frozenset({"int", "float", "str"})


def _bindings(tree: ast.Module) -> tuple[dict[str, ast.expr], set[str], dict[str, int]]:
    """(names bound exactly once, at top level, by ``NAME = expr``: their values;
    names bound anywhere else or more than once; the module-level index of each
    once-bound name's statement)."""
    top: dict[str, ast.expr] = {}
    where: dict[str, int] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] = counts.get(node.name, 0) + 1
        elif isinstance(node, ast.arg):
            counts[node.arg] = counts.get(node.arg, 0) + 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                counts[bound] = counts.get(bound, 0) + 1
    for index, stmt in enumerate(tree.body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            top[stmt.targets[0].id] = stmt.value
            where[stmt.targets[0].id] = index
    once = {name: value for name, value in top.items() if counts.get(name) == 1}
    rebound = {name for name, count in counts.items() if count != 1 or name not in once}
    return once, rebound, {name: where[name] for name in once}


class _Uses:
    """Where each name read of the module stands: the module-level statement holding it,
    and whether inside a module-level function (read when the function runs)."""

    def __init__(self, tree: ast.Module) -> None:
        self.top: dict[int, tuple[int, bool]] = {}
        #: how many times each name is read anywhere in the module
        self.reads: dict[str, int] = {}
        functions = {
            index: stmt.name
            for index, stmt in enumerate(tree.body)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        named: dict[str, list[int]] = {}
        for index, stmt in enumerate(tree.body):
            deferred = index in functions
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self.top[id(node)] = (index, deferred)
                    self.reads[node.id] = self.reads.get(node.id, 0) + 1
                    named.setdefault(node.id, []).append(index)
        #: for each module-level function's statement: the first module-level statement
        #: that may run it, one naming it (a call, a callback, another function's body)
        #: or its own when decorated (a decorator may call it); absent: nothing runs it
        self.first_run: dict[int, int] = {}
        for index, name in functions.items():
            stmt = tree.body[index]
            assert isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            users = [i for i in named.get(name, []) if i != index]
            if stmt.decorator_list or any(isinstance(n, ast.Call) for n in ast.walk(stmt.args)):
                users.append(index)
            if users:
                self.first_run[index] = min(users)

    def bound_before(self, node: ast.Name, bound_at: int) -> bool:
        """Whether the module binds ``node``'s name (at statement ``bound_at``) before
        Python reads ``node``: a read at module level stands in a later statement; a
        read in a module-level function runs only once a statement naming the function
        runs, so the binding stands before the first such statement (a function nothing
        names never runs: its read sees nothing). A read found nowhere: not known."""
        at = self.top.get(id(node))
        if at is None:
            return False
        index, deferred = at
        if not deferred:
            return bound_at < index
        first = self.first_run.get(index)
        return first is None or bound_at < first


def _imports(tree: ast.Module) -> dict[str, str]:
    """Names bound by imports of ``os``/``sys`` and their members, to what they are
    (``"os"``, ``"sys"``, ``"os.environ"``, ``"os.getenv"``, ``"sys.argv"``)."""
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name in ("os", "sys"):
                    out[alias.asname or alias.name] = alias.name
        elif isinstance(stmt, ast.ImportFrom) and stmt.module in ("os", "sys") and not stmt.level:
            for alias in stmt.names:
                full = f"{stmt.module}.{alias.name}"
                if full in ("os.environ", "os.getenv", "sys.argv"):
                    out[alias.asname or alias.name] = full
    return out


#: Calls that may re-bind a module's names without an assignment (``globals()["D"] = 7``).
_REBINDERS = frozenset({"globals", "vars", "locals", "setattr", "exec", "eval", "compile",
                        "__import__", "import_module", "modules"})


def _rebinds(tree: ast.Module) -> bool:
    """Whether ``tree`` may re-bind a name by a route no assignment shows."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _REBINDERS:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _REBINDERS:
            return True
    return False


class _Origins:
    def __init__(self, tree: ast.Module) -> None:
        self.once, self.rebound, self.bound_at = _bindings(tree)
        self.uses = _Uses(tree)
        self.imported = _imports(tree)
        # names are followed only when nothing may re-bind them behind an assignment
        self.follow = not _rebinds(tree)
        # a builtin may be replaced through the builtins module (`builtins.dict = f`)
        self.tampers = any(
            (isinstance(n, ast.Name) and n.id in ("builtins", "__builtins__"))
            or (isinstance(n, ast.alias) and n.name.split(".")[0] == "builtins")
            or (isinstance(n, ast.Attribute) and n.attr == "__builtins__")
            for n in ast.walk(tree)
        )
        self.environ = EnvironWrites(tree, self.named)
        self.argparse = ArgparseReads(tree)

    def written_env(self, node: ast.expr, key: ast.expr | None) -> _Judged | None:
        """The repository's verdict on the environment read ``node`` of ``key`` when the
        module may write that key itself (``load_dotenv()``, ``os.environ["D"] = "7"``):
        what the read gets is then not the deployment's, nor the default."""
        literal = key.value if isinstance(key, ast.Constant) else None
        write = self.environ.of(literal if isinstance(literal, str) else None)
        if write is None:
            return None
        exact = self.environ.exact.get(literal) if isinstance(literal, str) else None
        anchor = next((n for n in ast.walk(node) if isinstance(n, ast.Name)), None)
        if (
            exact is not None and self.environ.every is None and anchor is not None
            and self.uses.bound_before(anchor, exact[1])
        ):
            return "settled", exact[0], None  # os.environ["D"] = "7" ran before the read
        text = f"{_text(node, 40)}, after {write[1]} at line {write[2]}"
        return "repository", None, Part(text, node.lineno)

    def chosen(self, node: ast.IfExp, hops: int) -> _Judged:
        """``int(sys.argv[1]) if len(sys.argv) > 1 else 4``: where the test reads only
        what the caller supplies (``sys.argv``, the environment), the value is the
        caller's (or the literal they leave in place), as the shell's ``${1:-4}`` is;
        the repository's where the test or either branch is."""
        if not self.callers_only(node.test):
            return "repository", None, _part(node)
        judged = [self.judge(branch, hops) for branch in (node.body, node.orelse)]
        for kind, value, part in judged:
            if kind == "repository":
                return kind, value, part
        outside = next((j for j in judged if j[0] == "outside"), None)
        return outside or ("outside", _text(node), _part(node))

    def callers_only(self, node: ast.expr) -> bool:
        """Whether ``node`` (a condition) reads nothing but literals, ``sys.argv`` and
        environment keys the module never writes, through ``len``/comparisons."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Compare):
            return all(self.callers_only(n) for n in (node.left, *node.comparators))
        if isinstance(node, ast.BoolOp):
            return all(self.callers_only(n) for n in node.values)
        if isinstance(node, ast.UnaryOp):
            return self.callers_only(node.operand)
        named = self.named(node)
        if named == "sys.argv":
            return True
        if named == "os.environ":
            return self.environ.of(None) is None
        if isinstance(node, ast.Subscript) and self.named(node.value) == "sys.argv":
            return self.callers_only(node.slice)
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and any(
            self.builtin(node.func, name) for name in ("len", *_CONVERSIONS)
        ):
            return self.callers_only(node.args[0])
        if isinstance(node, (ast.Subscript, ast.Call)):  # os.environ["D"], os.getenv("D")
            return self.expression(node, MAX_HOPS)[0] in ("outside", "settled")
        return False

    def named(self, node: ast.expr) -> str | None:
        """``os.environ`` / ``os.getenv`` / ``sys.argv`` when ``node`` names it."""
        if isinstance(node, ast.Name):
            full = self.imported.get(node.id)
            return full if full is not None and "." in full else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = self.imported.get(node.value.id)
            if module in ("os", "sys"):
                full = f"{module}.{node.attr}"
                return full if full in ("os.environ", "os.getenv", "sys.argv") else None
        return None

    def judge(self, node: ast.expr, hops: int) -> _Judged:
        if isinstance(node, ast.Dict):
            return self.mapping(node, hops)
        try:
            return "settled", ast.literal_eval(node), None
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        return self.expression(node, hops)

    def builtin(self, func: ast.expr, name: str) -> bool:
        """Whether ``func`` is the builtin ``name``: the module binds that name nowhere
        (no assignment, ``def``, parameter or import of it) and names no ``builtins``
        module through which it may be replaced."""
        return (
            isinstance(func, ast.Name)
            and func.id == name
            and name not in self.rebound
            and name not in self.once
            and not self.tampers
        )

    def keywords(self, node: ast.Call, hops: int) -> _Judged:
        """``dict(k=v, …)`` of keyword arguments alone: the dict of them, judged value by
        value as a dict literal (``**x`` is excluded before this is asked)."""
        return self.pairs([(k.arg, k.value) for k in node.keywords if k.arg is not None], hops)

    def mapping(self, node: ast.Dict, hops: int) -> _Judged:
        """A dict literal (``speculative_config={..., "num_speculative_tokens": D}``):
        settled when every value is, the repository's when any is, else outside."""
        pairs: list[tuple[str, ast.expr]] = []
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return "repository", None, _part(key if key is not None else value)
            pairs.append((key.value, value))
        return self.pairs(pairs, hops)

    def pairs(self, pairs: list[tuple[str, ast.expr]], hops: int) -> _Judged:
        """The dict of ``pairs`` (a later key wins, as in Python), judged value by value."""
        out: dict[str, object] = {}
        outside: tuple[object, Part | None] | None = None
        for key, value in pairs:
            kind, found, part = self.judge(value, hops)
            if kind == "repository":
                return kind, None, part
            if kind == "outside":
                outside = outside if outside is not None else (found, part)
            out[key] = found
        if outside is not None:
            return "outside", *outside
        return "settled", out, None

    def entries(self, node: ast.expr, hops: int = 0) -> list[tuple[str, ast.expr]] | None:
        """The ``(key, value)`` pairs of the dict ``node`` is written as, when each
        key holds its own value whatever the others hold: a dict literal of string
        keys, ``dict(k=v, …)`` of the builtin ``dict``, or a module constant bound
        once to either, read after its binding, whose only read is ``node`` (not
        changed in place). None otherwise (a name read twice, ``**x``, a computed key)."""
        if isinstance(node, ast.Dict):
            pairs: list[tuple[str, ast.expr]] = []
            for key, value in zip(node.keys, node.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    return None
                pairs.append((key.value, value))
            return pairs
        if (
            isinstance(node, ast.Call) and self.builtin(node.func, "dict") and not node.args
            and all(k.arg is not None for k in node.keywords)
        ):
            return [(k.arg, k.value) for k in node.keywords if k.arg is not None]
        if (
            isinstance(node, ast.Name) and self.follow and hops < MAX_HOPS
            and node.id in self.once and self.uses.reads.get(node.id) == 1
            and self.uses.bound_before(node, self.bound_at[node.id])
        ):
            return self.entries(self.once[node.id], hops + 1)
        return None

    def expression(self, node: ast.expr, hops: int) -> _Judged:
        if isinstance(node, ast.Subscript):  # os.environ["X"], sys.argv[1]
            if self.named(node.value) == "os.environ":
                return self.written_env(node, node.slice) or ("outside", _text(node), _part(node))
            if self.named(node.value) == "sys.argv":
                return "outside", _text(node), _part(node)
            return "repository", None, _part(node)
        if isinstance(node, ast.Call) and not any(k.arg is None for k in node.keywords):
            func = node.func
            getter = self.named(func) == "os.getenv" or (
                isinstance(func, ast.Attribute)
                and func.attr == "get"
                and self.named(func.value) == "os.environ"
            )
            if node.keywords and node.keywords[0].arg != "default":
                getter = False
            if getter and 1 <= len(node.args) + len(node.keywords) <= 2 and node.args:
                written = self.written_env(node, node.args[0])
                if written is not None:
                    return written
                default = node.args[1] if len(node.args) == 2 else (
                    node.keywords[0].value if node.keywords else None
                )
                if default is None or (
                    isinstance(default, ast.Constant) and default.value is None
                ):
                    return "outside", _text(node), _part(node)
                if isinstance(default, ast.Constant) and isinstance(
                    default.value, (str, int, float)
                ) and not isinstance(default.value, bool):
                    return "settled", default.value, None
                return "repository", None, _part(node)
            if self.builtin(func, "dict") and not node.args:
                return self.keywords(node, hops)
            if (
                isinstance(func, ast.Name)
                and func.id in _CONVERSIONS
                and func.id not in self.rebound
                and func.id not in self.once
                and len(node.args) == 1
                and not node.keywords
            ):
                kind, value, part = self.judge(node.args[0], hops)
                if kind != "settled":
                    return kind, value, part
                kind, value = _converted(func.id, value)
                return kind, value, (_part(node) if kind == "repository" else None)
            return "repository", None, _part(node)
        if isinstance(node, ast.IfExp):
            return self.chosen(node, hops)
        if self.follow and self.argparse.callers(node):  # args.d: the command line's
            return "outside", _text(node), _part(node)
        if isinstance(node, ast.Name) and self.follow and hops < MAX_HOPS and node.id in self.once:
            if not self.uses.bound_before(node, self.bound_at[node.id]):
                # read before its one binding runs (NameError), or not known to be after it
                return "repository", None, _part(node)
            kind, value, part = self.judge(self.once[node.id], hops + 1)
            # a dict or list may be changed in place (`spec["k"] = 7`, `spec.update(…)`,
            # a function it is passed to): followed only when this is its one read
            if (
                kind == "settled"
                and isinstance(value, (dict, list, tuple, set))
                and self.uses.reads.get(node.id) != 1
            ):
                return "repository", None, Part(node.id, self.once[node.id].lineno)
            if part is not None:  # named as the keyword reaches it: the outermost name
                part = part._replace(name=node.id)
            return kind, value, part
        return "repository", None, _part(node)


def _text(node: ast.expr, limit: int = 60) -> str:
    """``node`` as written, at most ``limit`` characters."""
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError):
        return "…"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _part(node: ast.expr) -> Part:
    return Part(_text(node), node.lineno)


def _converted(kind: str, value: object) -> tuple[str, object]:
    """``int``/``float``/``str`` of a settled value, as Python converts it; a value
    the conversion refuses is the repository's (the script would stop)."""
    try:
        if kind == "int" and isinstance(value, (str, int)):
            return "settled", int(value)
        if kind == "float" and isinstance(value, (str, int, float)):
            return "settled", float(value)
        if kind == "str":
            return "settled", str(value)
    except (ValueError, OverflowError):
        pass
    return "repository", None


class Origins:
    """Where the values of one module's keyword arguments are set (module doc). The
    module is walked once, when the first value is asked about, so a file of many
    keywords costs one walk, not one per keyword."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self._origins: _Origins | None = None

    def of(self, node: ast.expr) -> tuple[str, object]:
        """``("outside", the read as written)`` (``os.environ['DRAFT']``), ``("settled",
        value)`` or ``("repository", None)`` for ``node``, a value in the module."""
        kind, value, _ = self.verdict(node)
        return kind, value

    def verdict(self, node: ast.expr) -> tuple[str, object, Part | None]:
        """:meth:`of`, and the :class:`Part` that decides an origin not settled (the
        read set outside, or the expression not followed, and the name it reaches
        ``node`` through); None for a settled value, or when no part can be named."""
        try:
            if self._origins is None:
                self._origins = _Origins(self.tree)
            return self._origins.judge(node, 0)
        except (RecursionError, MemoryError):  # nesting past the interpreter's own limits
            return "repository", None, None

    def scalar(self, node: ast.expr) -> object:
        """``node``'s value when settled to a string or number (a module constant bound
        once to a literal, ``os.getenv("X", "d")``), else None."""
        kind, value = self.of(node)
        return value if kind == "settled" and isinstance(value, (str, int, float)) else None

    def read_early(self, node: ast.Name) -> bool:
        """Whether ``node`` reads a name bound once at module level where Python may not
        have run that binding yet (a read above it, or in a function a statement before
        it may call): a ``NameError``, never the bound value."""
        try:
            if self._origins is None:
                self._origins = _Origins(self.tree)
        except (RecursionError, MemoryError):
            return True
        origins = self._origins
        bound_at = origins.bound_at.get(node.id)
        return bound_at is not None and not origins.uses.bound_before(node, bound_at)

    def keywise(
        self, node: ast.expr
    ) -> list[tuple[str, ast.expr, tuple[str, object, Part | None]]] | None:
        """Each key of the dict ``node`` is written as (:meth:`_Origins.entries`) with
        its own :meth:`verdict`, a later key winning as in Python; None when ``node``
        is no such dict. One key's value never changes another's: vLLM reads each key
        of ``speculative_config`` as a field of its own (``SpeculativeConfig``,
        vllm/config/speculative.py at v0.32.0)."""
        try:
            if self._origins is None:
                self._origins = _Origins(self.tree)
            pairs = self._origins.entries(node)
            if pairs is None:
                return None
            judged = {key: (value, self._origins.judge(value, 0)) for key, value in pairs}
        except (RecursionError, MemoryError):
            return None
        return [(key, value, verdict) for key, (value, verdict) in judged.items()]

    def written(self, node: ast.expr) -> ast.expr:
        """Where a settled ``node``'s value is written: through the module constants it
        names (``SPEC`` → its ``{…}`` or ``dict(…)``), for positions; ``node`` itself
        otherwise. Ask only of a value :meth:`verdict` settled."""
        for _ in range(MAX_HOPS):
            origins = self._origins
            if not (isinstance(node, ast.Name) and origins is not None
                    and node.id in origins.once):
                break
            node = origins.once[node.id]
        return node


def bound_value(
    bound: Mapping[str, ast.expr], origins: Origins, node: ast.expr
) -> ast.expr | None:
    """What the name ``node`` is bound once to, by ``bound`` (a reader's own table of
    names bound once), unless it is read before that binding runs
    (:meth:`Origins.read_early`: a ``NameError``); None for anything else."""
    if isinstance(node, ast.Name) and node.id in bound:
        return None if origins.read_early(node) else bound[node.id]
    return None


def origin_of(node: ast.expr, tree: ast.Module) -> tuple[str, object]:
    """Where the value of ``node`` (a keyword's value in ``tree``) is set (see
    :class:`Origins`, which reads many values of one module at the cost of one walk)."""
    return Origins(tree).of(node)


def unsettled_keyword(
    name: str,
    node: ast.expr,
    verdict: tuple[str, object, Part | None],
    *,
    shown: str,
    at: tuple[int, int],
    reader: str,
) -> UnsettledValue:
    """The :class:`UnsettledValue` of the speculative keyword ``name=node`` (at ``at``,
    line and column, in ``shown``) that :meth:`Origins.verdict` judged not settled
    (``verdict``), for ``reader`` (``"a Python launcher"``). Its ``what`` names the
    variable or read (``DRAFT``, ``sys.argv[2]``), never a cut of the keyword's whole
    value; ``source`` says where a variable gets its value (``os.environ['DRAFT'],
    serve.py:4``); the reason holds the value as written (at most 300 characters).
    """
    origin, _, part = verdict
    origin = "outside" if origin == "outside" else "repository"
    what, source = _text(node), ""
    if part is not None:
        what = part.name or part.text
        if part.name is not None and part.name != part.text:
            source = f"{part.text}, {shown}:{part.line}"
    how = (
        "read from the environment or the command line" if origin == "outside"
        else "not a literal"
    )
    return UnsettledValue(
        f"{name} not read: {how} ({_text(node, 300)}); specgate reads {reader}'s "
        "literal values and never runs it: write the value inline",
        shown,
        at[0],
        origin=origin,
        what=what,
        column=at[1],
        source=source,
    )


def settled_keyword(
    origins: Origins, name: str, node: ast.expr, *, shown: str, at: tuple[int, int],
    reader: str,
) -> object:
    """The value of the speculative keyword ``name=node`` (no literal) when ``origins``
    settles it to a scalar (``int(os.getenv("K", "5"))``: 5).

    Raises:
        UnsettledValue: otherwise (:func:`unsettled_keyword`): SG313 for the environment
            or ``sys.argv``, SG314 for the repository (docs/engines.md#unsettled-values).
    """
    verdict = origins.verdict(node)
    if verdict[0] == "settled":
        if verdict[1] is None or isinstance(verdict[1], (str, int, float)):
            return verdict[1]
        verdict = ("repository", None, verdict[2])  # a container: not followed here
    raise unsettled_keyword(name, node, verdict, shown=shown, at=at, reader=reader)
