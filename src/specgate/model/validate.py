"""Schema validation of a parsed claims file (rule SG001), with locations.

The JSON Schema (draft 2020-12) ships in the package (``data/claims-v1.schema.json``).
A valid file is recognised by :mod:`specgate.model.schema_fast` without importing
:mod:`jsonschema` (a third of a one-file check's start-up); a file it finds
invalid is checked with :mod:`jsonschema`, which finds every error. Each error
becomes one :class:`Violation`
with a message in our words and the node it concerns: an unknown key points at
that key, a missing key at the mapping that lacks it, a bad value at the value.
Non-finite numbers (``.nan``, ``.inf``), which JSON Schema cannot express, are
found by a walk of the data.
"""

import json
import math
import re
import sys
from functools import cache
from typing import Any, NamedTuple

from specgate.core.data import read_data
from specgate.load.document import NodePath


class Violation(NamedTuple):
    """One schema violation: the node it concerns and a one-line message."""

    path: NodePath
    message: str


@cache
def schema() -> dict[str, Any]:
    """The claims-file JSON Schema v1 as a dict."""
    text = schema_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def schema_text() -> str:
    """The JSON Schema as shipped (what ``specgate schema`` prints)."""
    return read_data("claims-v1.schema.json")


@cache
def _fast() -> Any:
    from specgate.model.schema_fast import compile_schema

    return compile_schema(schema(), lazy=True)


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:37] + "...")
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


_TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
}


def _where(path: NodePath) -> str:
    from specgate.load.document import format_path

    return format_path(path) or "the file"


def _messages(error: Any) -> list[Violation]:
    path: NodePath = tuple(error.absolute_path)
    kind = error.validator
    value = error.instance
    spec = error.validator_value
    if kind == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        out = []
        patterns = error.schema.get("patternProperties", {})
        for key in value:
            if key in known or any(re.search(p, key) for p in patterns):
                continue
            import difflib

            hint = difflib.get_close_matches(key, known, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            out.append(
                Violation((*path, key), f"unknown key {key!r} in {_where(path)}{suggestion}")
            )
        return out
    if kind == "required":
        missing = [k for k in spec if k not in value]
        return [Violation(path, f"{_where(path)} is missing required key {k!r}") for k in missing]
    where = _where(path)
    if path and path[-1] == "engine_version" and kind in ("type", "pattern", "minLength"):
        return [Violation(path, _engine_version_message(where, value))]
    if kind == "type":
        wanted = _TYPE_WORDS.get(spec, spec) if isinstance(spec, str) else " or ".join(spec)
        message = f"{where} must be {wanted}, got {_describe(value)}"
        if spec == "string" and isinstance(value, float):  # a version such as 0.10
            message += (
                " (a number: YAML reads an unquoted 0.10 as 0.1); put the value in quotes "
                "as you wrote it"
            )
    elif kind == "minimum":
        message = f"{where} must be ≥ {spec}, got {_describe(value)}"
    elif kind == "exclusiveMinimum":
        message = f"{where} must be > {spec}, got {_describe(value)}"
    elif kind == "maximum":
        message = f"{where} must be ≤ {spec}, got {_describe(value)}"
    elif kind == "enum":
        message = f"{where} must be one of {', '.join(map(str, spec))}, got {_describe(value)}"
        if isinstance(value, str):
            from specgate.core.suggest import hint as did_you_mean

            message += did_you_mean(value, [str(choice) for choice in spec])
    elif kind == "const":
        message = f"{where} must be {spec}, got {_describe(value)}"
    elif kind == "minItems":
        message = f"{where} must hold at least {spec} item(s)"
    elif kind == "minLength":
        message = f"{where} must not be empty"
    elif kind == "anyOf" and path and path[-1] in ("hf_config", "engine_config", "draft_hf_config"):
        if isinstance(value, dict):
            # A mapping chose the {path, pointer} branch: its own errors (an unknown
            # key, a missing path, a wrong type) at the keys they concern.
            mapping_errors = [e for e in error.context if e.relative_schema_path[0] == 1]
            found = [v for e in mapping_errors for v in _messages(e)]
            if found:
                return found
        message = f"{where} must be a path or a mapping {{path, pointer}}"
    elif kind == "propertyNames":
        message = f"{where} keys must be whole numbers (accepted draft tokens), got {value!r}"
    else:
        message = f"{where}: {error.message}"
    return [Violation(path, message)]


def _finite(data: object) -> bool:
    """Whether every number in ``data`` is finite (and an integer within float range):
    the walk of :func:`_non_finite` without building a path per node, which a valid
    file (nearly every file) never needs."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float):
            if not math.isfinite(node):
                return False
        elif isinstance(node, int) and abs(node) > sys.float_info.max:
            return False
    return True


def _engine_version_message(where: str, value: object) -> str:
    """``engine_version`` that is not a version: a number YAML made of an unquoted
    version (``0.10`` → 0.1, so the number shown would mislead), or text that does not
    start with a release number (``banana``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (
            f"{where} must be a quoted version: YAML reads an unquoted version as a number "
            "(0.10 becomes 0.1); quote it as written, e.g. engine_version: '0.10'"
        )
    return (
        f"{where} must be an engine version such as '0.27.1', 'v0.5.4' or 'b7000', "
        f"got {_describe(value)}"
    )


def _non_finite(data: object, path: NodePath) -> list[Violation]:
    if _finite(data):
        return []
    found: list[Violation] = []
    stack: list[tuple[object, NodePath]] = [(data, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            shown = "NaN" if math.isnan(node) else ("infinity" if node > 0 else "-infinity")
            found.append(Violation(where, f"{_where(where)} must be a finite number, got {shown}"))
        elif (
            isinstance(node, int) and not isinstance(node, bool) and abs(node) > sys.float_info.max
        ):
            digits = len(str(abs(node)))
            found.append(
                Violation(
                    where,
                    f"{_where(where)} must be a finite number, got an integer of {digits} digits",
                )
            )
        elif isinstance(node, dict):
            stack.extend((v, (*where, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(node))
    return found


def _bad_names(data: object) -> list[Violation]:
    """Deployment names holding an invisible character or spaces at an end
    (:func:`specgate.core.names.name_problem`), which JSON Schema's patterns cannot
    express by Unicode category."""
    from specgate.core.names import name_problem

    deployments = data.get("deployments") if isinstance(data, dict) else None
    found: list[Violation] = []
    for index, raw in enumerate(deployments if isinstance(deployments, list) else []):
        name = raw.get("name") if isinstance(raw, dict) else None
        problem = name_problem(name) if isinstance(name, str) else None
        if problem is not None:
            path: NodePath = ("deployments", index, "name")
            found.append(Violation(path, f"{_where(path)} {name!r} {problem}"))
    return found


def validate(data: object) -> list[Violation]:
    """All schema violations of ``data`` (a parsed claims file), in document order
    of their paths; non-finite numbers are reported once, as non-finite."""
    violations = _non_finite(data, ()) + _bad_names(data)
    fast = _fast()
    if not violations and fast is not None and fast(data):
        return []
    flagged = {v.path for v in violations}
    seen: set[Violation] = set(violations)
    for error in _validator().iter_errors(data):
        if tuple(error.absolute_path) in flagged:
            continue
        # jsonschema reports `required` once per missing key, each error naming
        # the whole list: keep every violation once.
        for violation in _messages(error):
            if violation not in seen:
                seen.add(violation)
                violations.append(violation)
    return violations
