"""A fast yes/no check of a claims file against the JSON Schema, without jsonschema.

Importing :mod:`jsonschema` (and ``referencing``, ``attrs``, ``rpds``) costs about a
third of a one-file check. Most files are valid, so :func:`is_valid` answers "valid
or not" with a small interpreter of the keywords our schema uses; only a file it
finds invalid is handed to :mod:`jsonschema`, which words the errors (validate.py).

Correctness: the answer must equal ``jsonschema.Draft202012Validator(schema)
.is_valid(data)``. The keywords are implemented as JSON Schema 2020-12 defines
them (https://json-schema.org/draft/2020-12/json-schema-validation): ``integer``
accepts a float with no fractional part and ``bool`` is never a number, as in
jsonschema's type checker; ``format``, ``description`` and other annotations
assert nothing. A schema holding any keyword not in :data:`KNOWN` makes
:func:`compile_schema` return ``None``, and the caller then always asks jsonschema
(so a keyword added later can never be skipped silently). tests/test_schema_fast.py
compares both on generated documents.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

#: Keywords that assert nothing (annotations and identifiers).
ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "format",
     "deprecated", "readOnly", "writeOnly", "$defs"}
)
#: Keywords this module implements.
KNOWN = ANNOTATIONS | frozenset(
    {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
     "minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "properties",
     "required", "additionalProperties", "patternProperties", "propertyNames",
     "minProperties", "maxProperties", "anyOf", "allOf", "oneOf", "not", "$ref"}
)


class Unsupported(Exception):
    """The schema uses a keyword (or a ``$ref``) this module does not implement."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _is_number,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and math.isfinite(v) and v.is_integer()),
}


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


class _Compiler:
    def __init__(self, root: Mapping[str, Any], *, lazy: bool = False) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}
        self.lazy = lazy

    def sub(self, schema: Any) -> Check:
        """The check of a subschema: compiled now, or (``lazy``) at its first use, as a
        file reaches a fraction of the schema (the blocks and keys it holds)."""
        if not self.lazy:
            return self.compile(schema)
        compiled: list[Check] = []

        def check(value: Any) -> bool:
            if not compiled:
                compiled.append(self.compile(schema))
            return compiled[0](value)

        return check

    def ref(self, pointer: str) -> Check:
        if not pointer.startswith("#/"):
            raise Unsupported(f"$ref {pointer}")
        if pointer not in self.refs:
            target: Any = self.root
            for raw in pointer[2:].split("/"):
                part = raw.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, dict) or part not in target:
                    raise Unsupported(f"$ref {pointer}")
                target = target[part]
            slot: list[Check] = []

            def deferred(value: Any) -> bool:  # a $ref may refer to itself
                return slot[0](value)

            self.refs[pointer] = deferred
            slot.append(self.sub(target))
        return self.refs[pointer]

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return lambda _v: True
        if schema is False:
            return lambda _v: False
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        unknown = set(schema) - KNOWN
        if unknown:
            raise Unsupported(", ".join(sorted(unknown)))
        checks: list[Check] = [self._keyword(k, v, schema) for k, v in schema.items()]
        checks = [c for c in checks if c is not None]
        if not checks:
            return lambda _v: True
        if len(checks) == 1:
            return checks[0]

        def every(v: Any) -> bool:
            for check in checks:  # noqa: SIM110 - a loop: no generator per node
                if not check(v):
                    return False
            return True

        return every

    def _keyword(self, key: str, value: Any, schema: Mapping[str, Any]) -> Any:
        if key in ANNOTATIONS:
            return None
        if key == "$ref":
            return self.ref(value)
        if key == "type":
            names = [value] if isinstance(value, str) else list(value)
            tests = [_TYPES[n] for n in names]
            if len(tests) == 1:
                return tests[0]  # the common case: no generator per node
            return lambda v: any(t(v) for t in tests)
        if key == "enum":
            if value and all(type(e) is str for e in value):
                # A string equals a string member exactly when it is in the set; any
                # other value is compared member by member, as below.
                members = frozenset(value)
                return lambda v: v in members if type(v) is str else any(
                    _equal(v, e) for e in value
                )
            return lambda v: any(_equal(v, e) for e in value)
        if key == "const":
            return lambda v: _equal(v, value)
        if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            return _bound(key, value)
        if key in ("minLength", "maxLength"):
            # Lengths count code points, as Python's len() does.
            if key == "minLength":
                return lambda v: not isinstance(v, str) or len(v) >= value
            return lambda v: not isinstance(v, str) or len(v) <= value
        if key == "pattern":
            search = _searcher(value)
            return lambda v: not isinstance(v, str) or search(v)
        if key == "items":
            item = self.sub(value)
            return lambda v: not isinstance(v, list) or all(item(x) for x in v)
        if key == "minItems":
            return lambda v: not isinstance(v, list) or len(v) >= value
        if key == "maxItems":
            return lambda v: not isinstance(v, list) or len(v) <= value
        if key == "minProperties":
            return lambda v: not isinstance(v, dict) or len(v) >= value
        if key == "maxProperties":
            return lambda v: not isinstance(v, dict) or len(v) <= value
        if key == "required":
            return lambda v: not isinstance(v, dict) or all(k in v for k in value)
        if key == "properties":
            props = {k: self.sub(s) for k, s in value.items()}

            def properties(v: Any) -> bool:
                if not isinstance(v, dict):
                    return True
                for k, item in v.items():
                    check = props.get(k)
                    if check is not None and not check(item):
                        return False
                return True

            return properties
        if key == "patternProperties":
            pats = [(re.compile(p), self.sub(s)) for p, s in value.items()]
            return lambda v: not isinstance(v, dict) or all(
                check(v[k]) for k in v for pattern, check in pats if pattern.search(k)
            )
        if key == "additionalProperties":
            return self._additional(value, schema)
        if key == "propertyNames":
            name_check = self.compile(value)
            return lambda v: not isinstance(v, dict) or all(name_check(k) for k in v)
        if key in ("anyOf", "allOf", "oneOf"):
            subs = [self.compile(s) for s in value]
            if key == "anyOf":
                return lambda v: any(s(v) for s in subs)
            if key == "allOf":
                return lambda v: all(s(v) for s in subs)
            return lambda v: sum(1 for s in subs if s(v)) == 1
        if key == "not":
            sub = self.compile(value)
            return lambda v: not sub(v)
        raise Unsupported(key)  # pragma: no cover - KNOWN and this dispatch agree

    def _additional(self, value: Any, schema: Mapping[str, Any]) -> Check:
        known = set(schema.get("properties", {}))
        patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
        extra = self.sub(value)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for k, item in v.items():
                if k in known or any(p.search(k) for p in patterns):
                    continue
                if not extra(item):
                    return False
            return True

        return check


def _searcher(pattern: str) -> Callable[[str], bool]:
    """Whether ``pattern`` matches somewhere in a string; compiled at its first use, as
    most files hold none of the few values the schema's patterns judge."""
    compiled: list[re.Pattern[str]] = []

    def search(text: str) -> bool:
        if not compiled:
            compiled.append(re.compile(pattern))
        return compiled[0].search(text) is not None

    return search


def _bound(key: str, limit: float) -> Check:
    # One closure per keyword: the keyword is not looked at again for every value.
    if key == "minimum":
        return lambda v: not _is_number(v) or bool(v >= limit)
    if key == "maximum":
        return lambda v: not _is_number(v) or bool(v <= limit)
    if key == "exclusiveMinimum":
        return lambda v: not _is_number(v) or bool(v > limit)
    return lambda v: not _is_number(v) or bool(v < limit)


_NOT_COMPILED = (Unsupported, re.error, KeyError, TypeError)


def compile_schema(schema: Mapping[str, Any], *, lazy: bool = False) -> Check | None:
    """A function ``data → bool`` equal to jsonschema's ``is_valid`` for ``schema``,
    or ``None`` when the schema uses something this module does not implement.

    With ``lazy``, the subschemas of keys, items and references are compiled when a
    value first reaches them (a one-file check compiles a fraction of the schema, 1 %
    of its instructions saved: ``benchmarks/startup_instructions.py``); ``None`` then
    speaks for the top level only, and a part found unsupported when reached makes
    the function answer ``False`` ("not known to be valid": the caller asks jsonschema,
    as it does for ``None``)."""
    try:
        check = _Compiler(schema, lazy=lazy).compile(schema)
    except _NOT_COMPILED:
        return None
    if not lazy:
        return check

    def checked(value: Any) -> bool:
        try:
            return check(value)
        except _NOT_COMPILED:
            return False

    return checked
