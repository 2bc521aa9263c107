"""What a Python launcher writes to ``os.environ``, read statically (never run), so that a
later ``os.getenv("D", "4")`` is not settled to its default when the file itself may
set D (trial 3 finding 18; docs/engines.md#unsettled-values).

A write names its key when it is written as a literal: ``os.environ["D"] = "7"``,
``os.environ["D"] += …``, ``del os.environ["D"]``, ``os.environ.setdefault("D", …)``,
``os.environ.pop("D")``, ``os.environ.update(D="7")``. Any other write may set any key:
``load_dotenv()`` (python-dotenv, and ``dotenv``/``environs`` imported at all),
``os.environ.update(mapping)``, ``os.environ |= {…}``, ``os.environ.clear()``, a
rebinding of ``os.environ``, or ``os.environ`` handed on as a value (``f(os.environ)``,
``env = os.environ``), whose receiver may change it. Where in the file the write
stands is not followed: a write anywhere makes every read of its key the
repository's, but one: a key written once, by a top-level ``os.environ["D"] = "7"``, is
``"7"`` where the read runs after that statement (as a module constant bound once is
followed). ``os.putenv`` is not a write here: it changes the process environment
but not ``os.environ``, which ``os.getenv`` reads (Python docs, ``os.putenv``; Python
3.11 run with a stub engine agrees, tests/oracle/test_environ_writes_oracle.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

#: ``os.environ`` methods that only read it
_READS = frozenset({
    "get", "copy", "keys", "items", "values", "__contains__", "__getitem__", "__iter__",
    "__len__", "encodevalue", "decodevalue",
})
#: methods that write one key, named by their first argument
_KEYED = frozenset({"setdefault", "pop", "__setitem__", "__delitem__"})
#: modules whose loaders write ``os.environ`` from a file (python-dotenv, environs)
_LOADERS = frozenset({"dotenv", "environs"})
_LOADER_CALLS = frozenset({"load_dotenv", "read_env"})

#: a write: the key it names (None: any key), and the write as written with its line
Write = tuple[str | None, str, int]


def _literal_key(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _shown(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError):
        text = "…"
    return text if len(text) <= 40 else text[:39] + "…"


class EnvironWrites:
    """The writes to ``os.environ`` anywhere in one module."""

    def __init__(self, tree: ast.Module, named: Callable[[ast.expr], str | None]) -> None:
        self.keys: dict[str, Write] = {}
        self.every: Write | None = None
        #: per key, how many writes name it
        self.count: dict[str, int] = {}
        #: keys written once, by a top-level ``os.environ["K"] = "literal"``: the
        #: literal and the index of that statement in the module's body
        self.exact: dict[str, tuple[str, int]] = {}
        parents: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        imports: list[ast.AST] = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [
                    alias.name for alias in node.names
                ]
                if any(m.split(".")[0] in _LOADERS for m in modules):
                    imports.append(node)  # its loader may be called under any name
            elif isinstance(node, ast.Call) and self._loader(node.func):
                self._add(None, node)
            elif isinstance(node, (ast.Name, ast.Attribute)) and named(node) == "os.environ":
                self._use(node, parents)
        for node in imports:  # named only when no call of a loader is
            self._add(None, node)
        for index, stmt in enumerate(tree.body):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(
                stmt.targets) == 1 else None
            key = _literal_key(target.slice) if isinstance(target, ast.Subscript) else None
            if (
                isinstance(stmt, ast.Assign) and isinstance(target, ast.Subscript)
                and named(target.value) == "os.environ" and key is not None
                and self.count.get(key) == 1 and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                self.exact[key] = (stmt.value.value, index)

    @staticmethod
    def _loader(func: ast.expr) -> bool:
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else "")
        return name in _LOADER_CALLS

    def _add(self, key: str | None, node: ast.AST) -> None:
        write: Write = (key, _shown(node), getattr(node, "lineno", 0))
        if key is None:
            self.every = self.every or write
        else:
            self.keys.setdefault(key, write)
            self.count[key] = self.count.get(key, 0) + 1

    def _use(self, node: ast.Name | ast.Attribute, parents: dict[int, ast.AST]) -> None:
        """Judge one occurrence of ``os.environ`` by what holds it."""
        parent = parents.get(id(node))
        if isinstance(node.ctx, (ast.Store, ast.Del)):  # os.environ = …, os.environ |= …
            self._add(None, parent or node)
        elif isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                self._add(_literal_key(parent.slice), parents.get(id(parent), parent))
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            call = parents.get(id(parent))
            if parent.attr in _READS:
                return
            if not (isinstance(call, ast.Call) and call.func is parent):
                self._add(None, parent)  # a method handed on (`f = os.environ.update`)
            elif parent.attr in _KEYED and call.args:
                self._add(_literal_key(call.args[0]), call)
            elif parent.attr == "update" and not call.args and all(
                k.arg is not None for k in call.keywords
            ):
                for keyword in call.keywords:
                    self._add(keyword.arg, call)
            else:
                self._add(None, call)
        elif isinstance(parent, ast.Compare) and node is not parent.left:
            return  # "D" in os.environ
        else:
            self._add(None, parent or node)  # handed on: its receiver may change it

    def of(self, key: str | None) -> Write | None:
        """The write that may set ``key`` (None: a key not written as a literal)."""
        if self.every is not None:
            return self.every
        if key is None:
            return next(iter(self.keys.values()), None)
        return self.keys.get(key)
