"""What Compose's schema refuses before any service starts (trial3/11;
docs/engines.md#containers).

Compose v2 validates every file of the project against the Compose specification's
schema (compose-go ``loader/loader.go``@e70e961c: ``schema.Validate`` after each file is
merged; ``schema/compose-spec.json``: ``command`` and ``entrypoint`` are
``#/$defs/command``, null, a string or an array whose items are strings, and
``healthcheck.test`` a string or an array of strings). A list item YAML reads as a
number, a boolean or null (``- 3``, ``- 0.80``, ``- true``) stops ``docker compose``:
``validating compose.yaml: services.sglang.command.10 must be a string``. No service of
the project starts, so a deployment read from it fails (SG312, :class:`NotStarted`), at
the item, whatever the command would configure.
"""

from __future__ import annotations

from collections.abc import Mapping

from specgate.inputs.engines.unread import NotStarted
from specgate.load.document import Document, NodePath

#: A service's keys whose list items must be strings (``schema/compose-spec.json``).
_STRING_LISTS: tuple[NodePath, ...] = (("command",), ("entrypoint",), ("healthcheck", "test"))


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict | list):
        return "a mapping" if isinstance(value, dict) else "a list"
    return "a number"


def _written(doc: Document, at: NodePath, line: int, column: int) -> str:
    """The item as the file writes it (``0.80``, not ``0.8``), "" when not known."""
    if doc.origin(at) is not None or not doc.text:
        return ""
    lines = doc.text.split("\n", line)
    if len(lines) < line:
        return ""
    rest = lines[line - 1][column - 1 :]
    for stop in ",]}#":
        rest = rest.split(stop, 1)[0]
    return rest.strip()


def refuse_non_strings(doc: Document) -> None:
    """Raise :class:`NotStarted` at the first item (in file order) of a service's
    ``command``, ``entrypoint`` or ``healthcheck.test`` list that is no string, when the
    Compose model ``doc`` holds one (module doc)."""
    services = doc.data.get("services") if isinstance(doc.data, Mapping) else None
    if not isinstance(services, Mapping):
        return
    found: list[tuple[int, int, NodePath, object]] = []
    for name, service in services.items():
        for key in _STRING_LISTS:
            value: object = service
            for part in key:
                value = value.get(part) if isinstance(value, Mapping) else None
            if not isinstance(value, list):
                continue
            for index, item in enumerate(value):
                if not isinstance(item, str):
                    at: NodePath = ("services", str(name), *key, index)
                    span = doc.locate(at)
                    found.append((span.line, span.column, at, item))
                    break
    if not found:
        return
    line, column, at, item = min(found, key=lambda f: (f[0], f[1]))
    dotted = ".".join(str(part) for part in at)
    written = _written(doc, at, line, column) or repr(item)
    raise NotStarted(
        f"Compose refuses the project before any service starts: \"{dotted} must be a "
        f"string\" (compose-go schema/compose-spec.json@e70e961c): the item {written[:40]} "
        f"is {_kind(item)} in YAML; quote it (\"{written[:40]}\")",
        doc.file, doc.locate(at), speculates=True,
    )
