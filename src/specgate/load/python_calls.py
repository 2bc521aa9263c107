"""Which launcher calls of a Python file run, read statically (never run).

:func:`launcher_calls` returns the ``LLM(...)``/``EngineArgs(...)``/``AsyncEngineArgs(...)``/
``Engine(...)`` calls that may run when the file runs as a script, by what they call:

- a name bound by ``from vllm import LLM`` or ``from vllm import LLM as E`` (then ``E(...)``),
  by ``E = vllm.LLM``, or a launcher name no statement binds (a snippet without imports);
- an attribute ``vllm.LLM``/``v.LLM``/``sgl.Engine`` (any object: ``self.engine.LLM`` too);
- ``getattr(vllm, "LLM")(...)`` with a literal name.

Code that never runs is skipped: the body of ``if False:``/``if 0:``/``while False:`` (and
the ``else`` of ``if True:``), the ``else`` of ``if __name__ == "__main__":`` and a function
no live code names (a decoy ``def unused(): LLM(...)``). A function live code names, a
method, a lambda and a branch on a runtime condition count as running: several calls are
then read as several deployments.

When the file may run a launcher by a route these rules cannot follow, the reading is
unsettled (:class:`Unsettled`, at the line): a launcher name re-bound by a ``def``,
``class`` or other assignment, ``getattr(module, name)`` with a name that is no literal,
a launcher passed on rather than called (``partial(LLM, …)``), ``exec``/``eval``/
``__import__``/``importlib``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

#: Launcher calls read, by the called name (``vllm.LLM`` and ``LLM`` alike).
CALLS = frozenset({"LLM", "EngineArgs", "AsyncEngineArgs", "Engine"})
#: Engine packages whose module objects are followed.
ENGINE_MODULES = ("vllm", "sglang", "tensorrt_llm")
_DYNAMIC = frozenset({"exec", "eval", "__import__", "import_module", "compile"})


class Unsettled(Exception):
    """The calls that run cannot be told statically (``reason``, at ``line``)."""

    def __init__(self, reason: str, line: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def _falsy(test: ast.expr) -> bool | None:
    """True/False for a test with a constant outcome, None otherwise."""
    if isinstance(test, ast.Constant):
        return not bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _falsy(test.operand)
        return None if inner is None else not inner
    return None


def _is_main(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


@dataclass
class _Reader:
    modules: set[str] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)
    rebound: dict[str, int] = field(default_factory=dict)
    functions: dict[str, list[ast.AST]] = field(default_factory=dict)
    live: list[ast.AST] = field(default_factory=list)
    #: functions whose decorators only register them (:mod:`.registering`): they run
    registered: set[int] = field(default_factory=set)

    # --- statements -------------------------------------------------------------
    def statements(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(stmt.name, stmt.lineno)
            self.live.extend(stmt.decorator_list)
            self.live.extend(stmt.args.defaults + [d for d in stmt.args.kw_defaults if d])
            self.functions.setdefault(stmt.name, []).append(stmt)
            if stmt.decorator_list:  # a decorator may call it
                self.functions[stmt.name].append(ast.Name(id=stmt.name, ctx=ast.Load()))
            if id(stmt) in self.registered:  # FastAPI's startup, Modal's enter: it runs
                self.live.append(ast.Name(id=stmt.name, ctx=ast.Load()))
            return
        if isinstance(stmt, ast.ClassDef):
            self.bind(stmt.name, stmt.lineno)
            self.live.extend(stmt.decorator_list + stmt.bases)
            for item in stmt.body:  # methods count as running when live code names them
                self.statement(item)
            return
        if isinstance(stmt, ast.If):
            falsy = _falsy(stmt.test)
            self.live.append(stmt.test)
            if _is_main(stmt.test) or falsy is False:
                self.statements(stmt.body)
            elif falsy is True:
                self.statements(stmt.orelse)
            else:
                self.statements(stmt.body)
                self.statements(stmt.orelse)
            return
        if isinstance(stmt, ast.While) and _falsy(stmt.test) is True:
            self.statements(stmt.orelse)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.imports(stmt)
            return
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            target = stmt.targets[0].id
            launcher = self.resolve(stmt.value)
            if launcher is not None:
                self.names[target] = launcher
                return
            if isinstance(stmt.value, ast.Name) and stmt.value.id in self.modules:
                self.modules.add(target)
                return
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.bind(node.id, node.lineno)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                self.statement(child)
            elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                self.live.append(child)
                self.statements(child.body)
            elif isinstance(child, ast.expr):
                self.live.append(child)

    def imports(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """Bind engine modules and launcher names (``import vllm as v``,
        ``from vllm import LLM as E``); any other import re-binds its names."""
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                root = alias.name.split(".")[0]
                bound = alias.asname or root
                if root in ENGINE_MODULES:
                    self.modules.add(bound)
                else:
                    self.bind(bound, stmt.lineno)
        else:
            engine = (stmt.module or "").split(".")[0] in ENGINE_MODULES
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                bound = alias.asname or alias.name
                if engine and alias.name in CALLS:
                    self.names[bound] = alias.name
                elif engine and alias.name in ENGINE_MODULES:
                    self.modules.add(bound)
                else:
                    self.bind(bound, stmt.lineno)

    def bind(self, name: str, line: int) -> None:
        if name in CALLS or name in self.names:
            self.rebound.setdefault(name, line)

    # --- expressions ------------------------------------------------------------
    def resolve(self, func: ast.expr) -> str | None:
        """The launcher ``func`` names, or None."""
        if isinstance(func, ast.Name):
            if func.id in self.names:
                return self.names[func.id]
            return func.id if func.id in CALLS else None
        if isinstance(func, ast.Attribute):
            return func.attr if func.attr in CALLS else None
        if (
            isinstance(func, ast.Call)
            and isinstance(func.func, ast.Name)
            and func.func.id == "getattr"
            and len(func.args) >= 2
        ):
            name = func.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                return name.value if name.value in CALLS else None
        return None


def launcher_calls(tree: ast.Module) -> list[ast.Call]:
    """The launcher calls of ``tree`` that may run, in source order (see module doc).

    Raises:
        Unsettled: a launcher may run by a route not followed (at its line).
    """
    from specgate.load.registering import registered_functions

    reader = _Reader(registered=registered_functions(tree))
    reader.statements(tree.body)
    for name, line in reader.rebound.items():
        if name in CALLS or name in reader.names:
            raise Unsettled(f"{name} is bound to something else on line {line}", line)
    # functions run when live code names them (a call, a callback, a decorator)
    pending = list(reader.live)
    seen_functions: set[str] = set()
    calls: list[ast.Call] = []
    stack = pending
    while stack:
        node = stack.pop()
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Name, ast.Attribute)):
                named = sub.id if isinstance(sub, ast.Name) else sub.attr
                if named in reader.functions and named not in seen_functions:
                    seen_functions.add(named)
                    for definition in reader.functions[named]:
                        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            inner = _Reader(
                                set(reader.modules), dict(reader.names), {}, reader.functions
                            )
                            inner.statements(definition.body)
                            for bad, line in inner.rebound.items():
                                raise Unsettled(
                                    f"{bad} is bound to something else on line {line}", line
                                )
                            stack.extend(inner.live)
            _judge(sub, reader, calls)
    unique = {id(c): c for c in calls}
    return sorted(unique.values(), key=lambda c: (c.lineno, c.col_offset))


def _judge(node: ast.AST, reader: _Reader, calls: list[ast.Call]) -> None:
    """Collect ``node`` when it is a launcher call; raise :class:`Unsettled` when it
    reaches a launcher by a route not followed."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in _DYNAMIC:
            raise Unsettled(f"{func.id}(...) may run any code", node.lineno)
        if isinstance(func, ast.Attribute) and func.attr in _DYNAMIC:
            raise Unsettled(f"{func.attr}(...) may run any code", node.lineno)
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            target, name = node.args[0], node.args[1]
            literal = isinstance(name, ast.Constant) and isinstance(name.value, str)
            if isinstance(target, ast.Name) and target.id in reader.modules and not literal:
                raise Unsettled("getattr on an engine module with a name that is no literal",
                                node.lineno)
        if reader.resolve(func) is not None:
            calls.append(node)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if _names_launcher(arg, reader):
                raise Unsettled("a launcher passed on rather than called", node.lineno)


def _names_launcher(node: ast.expr, reader: _Reader) -> bool:
    if isinstance(node, ast.Name):
        return node.id in reader.names or node.id in CALLS
    if isinstance(node, ast.Attribute):
        return node.attr in CALLS
    return False
