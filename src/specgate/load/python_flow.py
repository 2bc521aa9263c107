"""What a Python script runs and what its names hold, read statically (never run): the
flow :mod:`specgate.load.python_generate` reads a transformers script by.

- :func:`live_nodes`: the statements that may run (a branch on a constant that never runs
  and a function nothing names are skipped);
- :func:`bindings`: how often each name is bound anywhere, and the one value of a name
  bound exactly once (so a read of it can only see that value, or fail);
- :class:`Order`: whether a statement runs before a call on every route.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

#: a model's methods that return the model (``.to(device)``, ``.eval()``)
MODEL_METHODS = ("to", "eval", "cuda", "half", "bfloat16", "float")
_TOKENIZER_WORDS = ("Tokenizer", "Processor")


def is_tokenizer(made: ast.Call) -> bool:
    """``made`` is ``SomeTokenizer.from_pretrained(…)`` (or a ``Processor``)."""
    return (
        isinstance(made.func, ast.Attribute)
        and made.func.attr == "from_pretrained"
        and any(w in (called_name(made.func.value) or "") for w in _TOKENIZER_WORDS)
    )


def imported_roots(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module.split(".")[0]


def live_nodes(tree: ast.Module) -> list[ast.AST]:
    """The simple statements and expressions that may run, at any depth: a branch on a
    constant that never runs is skipped (``if False:``, ``while 0:``, the ``else`` of
    ``if True:``); a function's body counts once live code names it (a call, a callback,
    a decorator, a method by its attribute)."""
    functions: dict[str, list[list[ast.stmt]]] = {}
    live: list[ast.AST] = []

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(stmt.name, []).append(stmt.body)
                live.extend(stmt.decorator_list)
                live.extend(d for d in (*stmt.args.defaults, *stmt.args.kw_defaults) if d)
                if stmt.decorator_list:  # a decorator may call it
                    live.append(ast.Name(id=stmt.name, ctx=ast.Load()))
            elif isinstance(stmt, ast.ClassDef):
                live.extend(stmt.decorator_list + stmt.bases)
                walk(stmt.body)
            elif isinstance(stmt, (ast.If, ast.While)) and isinstance(stmt.test, ast.Constant):
                if stmt.test.value:
                    walk(stmt.body)
                    if isinstance(stmt, ast.If):
                        continue
                walk(stmt.orelse)
            elif isinstance(
                stmt, (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith,
                       ast.Try, ast.Match)
            ):
                for child in ast.iter_child_nodes(stmt):
                    if isinstance(child, (ast.expr, ast.withitem)):
                        live.append(child)
                    elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                        live.extend(n for n in (getattr(child, "type", None),
                                                getattr(child, "guard", None)) if n)
                        walk(child.body)
                for name in ("body", "orelse", "finalbody"):
                    walk(getattr(stmt, name, []))
            else:
                live.append(stmt)

    walk(tree.body)
    named: set[str] = set()
    index = 0
    while index < len(live):
        node = live[index]
        index += 1
        for sub in ast.walk(node):
            called = called_name(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else None
            if called is not None and called in functions and called not in named:
                named.add(called)
                for body in functions[called]:
                    walk(body)
    return live


def bindings(tree: ast.Module) -> tuple[dict[str, int], dict[str, ast.expr]]:
    """How often each name is bound anywhere in the file, and the value of a name bound
    exactly once, by a plain ``NAME = value``."""
    count: dict[str, int] = {}
    value: dict[str, ast.expr] = {}

    def bind(name: str) -> None:
        count[name] = count.get(name, 0) + 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bind(node.id)
        elif isinstance(node, ast.arg):
            bind(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bind(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name)
                bind(name)  # another scope may bind it: never settled
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bind(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bind(node.rest)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            value[node.targets[0].id] = node.value
    return count, {k: v for k, v in value.items() if count.get(k) == 1}


def called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


class Order:
    """Which statement runs before which call, from one walk of the tree.

    A statement runs before a call on every route when it stands in a statement list (the
    module's or a function's body) before a later statement of that list holding the call
    outside any branch, loop or nested definition; or when it is a module-level statement
    and the call stands so in a module-level function that only module-level statements
    after it name (``main()`` under ``if __name__ == "__main__":``)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        #: a statement's list owner and index in it
        self.place: dict[int, tuple[int, int]] = {}
        #: a node held plainly by a statement of a list: that list's owner and index
        self.plain: dict[int, tuple[int, int]] = {}
        #: module-level indexes of the statements naming each module-level function
        self.named_at: dict[str, list[int]] = {}
        self.functions = {
            id(f): f.name
            for f in tree.body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        names = set(self.functions.values())
        for owner in ast.walk(tree):
            if not isinstance(owner, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            top = owner is tree
            for index, stmt in enumerate(owner.body):
                self.place[id(stmt)] = (id(owner), index)
                plain = isinstance(stmt, (ast.Expr, ast.Assign, ast.Return))
                if not (plain or top):
                    continue
                for node in ast.walk(stmt):
                    if plain:
                        self.plain[id(node)] = (id(owner), index)
                    if top and isinstance(node, ast.Name) and node.id in names:
                        self.named_at.setdefault(node.id, []).append(index)

    def earlier(self, stmt: ast.stmt, call: ast.Call) -> bool:
        """Whether ``stmt`` runs before ``call`` on every route (see the class doc)."""
        place, held = self.place.get(id(stmt)), self.plain.get(id(call))
        if place is None or held is None:
            return False
        if held[0] == place[0]:
            return held[1] > place[1]
        name = self.functions.get(held[0])
        if place[0] != id(self.tree) or name is None:
            return False
        users = self.named_at.get(name, [])
        return bool(users) and all(
            i > place[1]
            and not isinstance(self.tree.body[i], (ast.FunctionDef, ast.AsyncFunctionDef))
            for i in users
        )


def keys_set(call: ast.Call, config: ast.expr) -> list[str | None] | None:
    """The keys ``call`` sets on the object ``config`` when it is ``config.update(k=v, …)``
    or ``setattr(config, "k", v)`` (None for a key not written as a literal name); None
    for any other call."""
    if isinstance(call.func, ast.Attribute) and call.func.value is config:
        if call.func.attr != "update" or call.args:
            return None
        return [k.arg for k in call.keywords]
    if (
        isinstance(call.func, ast.Name)
        and call.func.id == "setattr"
        and len(call.args) == 3
        and call.args[0] is config
        and not call.keywords
    ):
        name = call.args[1]
        return [name.value if isinstance(name, ast.Constant) and isinstance(
            name.value, str) else None]
    return None


def rebinds_by_name(call: ast.Call) -> bool:
    """``globals()``/``locals()``/``vars()`` (a scope's names as a mapping), or
    ``setattr``/``delattr`` with a name that is no literal: any name or attribute
    (a model's ``generation_config``, a kwargs dict) may change."""
    assert isinstance(call.func, ast.Name)
    if call.func.id in ("globals", "locals", "vars"):
        return not call.args
    if call.func.id in ("setattr", "delattr"):
        name = call.args[1] if len(call.args) > 1 else None
        return not (isinstance(name, ast.Constant) and isinstance(name.value, str))
    return False



def from_pretrained_id(
    node: ast.expr, constant: Callable[[ast.expr], object] | None = None
) -> tuple[str, ast.expr] | None:
    """``"id"`` of ``Cls.from_pretrained("id", …)`` (``.to(…)``/``.eval()`` after it too);
    with ``constant`` (the module's :class:`~specgate.load.python_values.Origins`, as a
    function giving a settled value or None), also of ``Cls.from_pretrained(MODEL_ID)``
    with ``MODEL_ID = "id"`` a module constant bound once."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MODEL_METHODS
    ):
        node = node.func.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "from_pretrained"
    ):
        first = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "pretrained_model_name_or_path"), None
        )
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value, first
        if first is not None and constant is not None:
            value = constant(first)
            if isinstance(value, str):
                return value, first
    return None

