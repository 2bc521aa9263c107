"""Decorators that only register a function, read statically (never run): the function
then runs as written, so a launcher call in its body is read
(docs/engines.md#command-lines-and-launchers).

A function that live code never names runs only through its decorators. Most decorators
may do anything (wrap, rewrite, replace the function); these two only record it and hand
it back, and the library later calls it with no argument of the script's:

- FastAPI's ``X.on_event("startup")``, ``X`` bound once at module level to
  ``FastAPI(...)`` or ``APIRouter(...)`` of ``fastapi``: ``APIRouter.on_event`` adds the
  function as an event handler and returns it unchanged, and ``FastAPI.on_event`` is
  ``self.router.on_event`` (fastapi 0.136.3 routing.py lines 4932-4956, applications.py
  line 4579); Starlette runs each startup handler with no arguments;
- Modal's ``modal.enter(...)``: ``_PartialFunction`` keeps the function as ``raw_f``, and
  the container binds it to the class's instance alone before calling it
  (modal-labs/modal-client modal/partial_function.py at 0550195e,
  ``_find_callables_for_obj``).

Every decorator of the function must be one of them, the names they stand on bound once
in the module, and ``on_event``'s event the literal ``"startup"``. Any other decorator
(``atexit.register`` too: a launch at the interpreter's exit is no serving form) keeps the
call unread (SG312).
"""

from __future__ import annotations

import ast
from collections import Counter

_APPS = frozenset({"FastAPI", "APIRouter"})


def registered_functions(tree: ast.Module) -> set[int]:
    """``id`` of each function definition in ``tree`` (module level or in a module-level
    class) whose decorators only register it (module doc)."""
    bound = _bindings(tree)
    imported = _imports(tree, bound)
    apps = {
        stmt.targets[0].id
        for stmt in tree.body
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and bound[stmt.targets[0].id] == 1
        and isinstance(stmt.value, ast.Call)
        and _names(stmt.value.func, imported, "fastapi", _APPS)
    }
    out: set[int] = set()
    for stmt in tree.body:
        inner = stmt.body if isinstance(stmt, ast.ClassDef) else [stmt]
        for node in inner:
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.decorator_list
                and all(_registers(d, imported, apps) for d in node.decorator_list)
            ):
                out.add(id(node))
    return out


def _registers(node: ast.expr, imported: dict[str, str], apps: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    if _on_event(node, apps):
        return True
    return (
        not node.args
        and _names(node.func, imported, "modal", frozenset({"enter"}))
        and all(k.arg is not None and isinstance(k.value, ast.Constant) for k in node.keywords)
    )


def _on_event(node: ast.Call, apps: set[str]) -> bool:
    return (
        isinstance(node.func, ast.Attribute)
        and node.func.attr == "on_event"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in apps
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "startup"
    )


def _names(func: ast.expr, imported: dict[str, str], module: str, wanted: frozenset[str]) -> bool:
    """Whether ``func`` is ``module.NAME`` (the module imported once under its name) or a
    name imported once from ``module``, with NAME in ``wanted``."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return imported.get(func.value.id) == module and func.attr in wanted
    if isinstance(func, ast.Name):
        return any(imported.get(func.id) == f"{module}.{name}" for name in wanted)
    return False


def _imports(tree: ast.Module, bound: Counter[str]) -> dict[str, str]:
    """Names bound once, by a module-level import, to ``modal``/``fastapi`` or a member
    of one (``"modal"``, ``"fastapi.FastAPI"``)."""
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name in ("modal", "fastapi"):
                    out[alias.asname or alias.name] = alias.name
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module in (
            "modal", "fastapi"
        ):
            for alias in stmt.names:
                out[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    return {name: what for name, what in out.items() if bound[name] == 1}


def _bindings(tree: ast.Module) -> Counter[str]:
    """How many times each name is bound anywhere in ``tree`` (assignments, ``def``,
    ``class``, imports, ``global`` declarations count as re-bindings too)."""
    counts: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                counts[alias.asname or alias.name.split(".")[0]] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                counts[name] += 2
        elif isinstance(node, ast.arg):
            counts[node.arg] += 1
    return counts
