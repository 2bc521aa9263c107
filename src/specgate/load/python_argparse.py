"""Which attributes of a Python launcher's ``argparse`` result are the caller's command
line, read statically (never run): ``args.num_spec_tokens`` after
``parser.add_argument("--num-spec-tokens", type=int, default=4)`` and
``args = parser.parse_args()`` is what the caller passes, or the literal default they
leave in place, as the shell's ``${1:-4}`` is (trial 3 finding 10;
docs/engines.md#unsettled-values).

An attribute counts only where nothing else in the module may decide it:

- every ``parse_args`` call takes no argument (it reads ``sys.argv``; cpython
  ``Lib/argparse.py``, ``parse_known_args``: ``args = _sys.argv[1:]`` when None), and
  the module calls no ``parse_known_args``/``parse_intermixed_args``, ``set_defaults``,
  ``add_subparsers``, ``add_mutually_exclusive_group`` nor ``add_argument_group``
  (each may add or change a destination);
- the name read (``args``) is bound only by ``NAME = X.parse_args()`` or ``NAME = f()``
  where every ``return`` of the module's function ``f`` is ``X.parse_args()``, and no
  attribute of it is assigned or deleted anywhere;
- exactly one ``add_argument`` has the attribute as its destination (``dest=``, else its
  first long option with ``-`` as ``_``, else its first option without dashes), with
  no ``action`` but ``"store"``, no ``nargs``, a ``type`` of ``int``/``float``/``str`` or
  none, and a ``default`` that is a literal or none.
"""

from __future__ import annotations

import ast

_PARSE = "parse_args"
#: calls that may add or change a destination, or parse other words
_REFUSED = frozenset({
    "parse_known_args", "parse_intermixed_args", "parse_known_intermixed_args",
    "set_defaults", "add_subparsers", "add_mutually_exclusive_group", "add_argument_group",
})
_TYPES = frozenset({"int", "float", "str"})


def _method(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
    )


def _destination(call: ast.Call) -> str | None:
    """The destination ``add_argument`` gives, as argparse derives it."""
    for keyword in call.keywords:
        if keyword.arg == "dest":
            value = keyword.value
            return value.value if isinstance(value, ast.Constant) and isinstance(
                value.value, str) else None
    options = [a.value for a in call.args if isinstance(a, ast.Constant)
               and isinstance(a.value, str)]
    if len(options) != len(call.args) or not options:
        return None
    long = [o for o in options if o.startswith("--")]
    chosen = long[0][2:] if long else options[0].lstrip("-")
    return chosen.replace("-", "_") or None


def _plain(call: ast.Call) -> bool:
    """Whether the argument stores one word as given (or its literal default)."""
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is None or keyword.arg == "nargs":
            return False
        if keyword.arg == "action" and not (
            isinstance(value, ast.Constant) and value.value == "store"
        ):
            return False
        if keyword.arg == "type" and not (
            isinstance(value, ast.Name) and value.id in _TYPES
        ):
            return False
        if keyword.arg == "default":
            try:
                ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return False
    return True


class ArgparseReads:
    """The ``NAME.attr`` reads of one module that are the caller's command line."""

    def __init__(self, tree: ast.Module) -> None:
        self.names: set[str] = set()
        self.destinations: dict[str, int] = {}
        self._plain: set[str] = set()
        functions: dict[str, list[ast.Return]] = {}
        calls: list[ast.Call] = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[node.name] = [
                    n for n in ast.walk(node) if isinstance(n, ast.Return)
                ]
            elif isinstance(node, ast.Call):
                calls.append(node)
        for call in calls:
            attr = call.func.attr if isinstance(call.func, ast.Attribute) else ""
            if attr in _REFUSED or (attr == _PARSE and (call.args or call.keywords)):
                return  # nothing is read as the caller's
            if attr == "add_argument":
                dest = _destination(call)
                if dest is not None:
                    self.destinations[dest] = self.destinations.get(dest, 0) + 1
                    if _plain(call):
                        self._plain.add(dest)
        parsers = {
            name for name, returns in functions.items()
            if returns and all(r.value is not None and _method(r.value, _PARSE) for r in returns)
        }
        stores: dict[str, int] = {}
        parsed: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, ast.arg):
                stores[node.arg] = stores.get(node.arg, 0) + 1
            elif isinstance(node, ast.alias):
                bound = node.asname or node.name.split(".")[0]
                stores[bound] = stores.get(bound, 0) + 1
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name
            ):
                value = node.value
                if _method(value, _PARSE) or (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id in parsers and not value.args and not value.keywords
                ):
                    name = node.targets[0].id
                    parsed[name] = parsed.get(name, 0) + 1
        #: attributes assigned or deleted on any object (``a.num_spec_tokens = 7`` on
        #: the result handed to a function under another name)
        self._changed = {
            n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del))
        }
        self.names = {name for name, count in parsed.items() if stores.get(name) == count}

    def callers(self, node: ast.expr) -> bool:
        """Whether ``node`` (``args.num_spec_tokens``) is one such read."""
        return (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.names
            and self.destinations.get(node.attr) == 1
            and node.attr in self._plain
            and node.attr not in self._changed
        )
