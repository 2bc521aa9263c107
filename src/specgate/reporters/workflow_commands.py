"""GitHub Actions workflow commands, built exactly as the official toolkit builds them.

A workflow command is one line on stdout that the Actions runner turns into an
annotation, an output, a mask, and so on::

    ::error title=specgate (SG104),file=claims.yaml,line=12,col=16::claimed 3x, theory 1.04x

Every function here is pure (``str`` in, ``str`` out, no I/O, no trailing newline)
and reproduces @actions/core 3.0.1 byte for byte:

* actions/toolkit ``packages/core/src/command.ts``: ``issueCommand``, the ``Command``
  class's ``toString``, ``escapeData`` and ``escapeProperty``;
* actions/toolkit ``packages/core/src/utils.ts``: ``toCommandValue`` (how a non-string
  value becomes text) and ``toCommandProperties`` (the annotation property order
  title, file, line, endLine, col, endColumn).

The runner reads such a line back in actions/runner ``src/Runner.Common/ActionCommand.cs``
(``TryParseV2``); its decoding tables (``_escapeDataMappings``,
``_escapePropertyMappings``) are the exact inverse of the escaping below, applied with
``%25`` last. Two runner quirks that no escaping can avoid (the toolkit has them too):

* the runner strips leading ``=`` from every property value (it splits ``key=value``
  with ``StringSplitOptions.RemoveEmptyEntries``), so a value made only of ``=`` is lost;
* it trims white space (not CR/LF, which are escaped) off the end of the whole property
  block, so the *last* property's value loses trailing spaces, tabs and the like.

``annotation`` puts ``line`` and ``col`` last, so a title or file keeps its trailing
white space whenever a line number is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

__all__ = [
    "ANNOTATION_LEVELS",
    "AnnotationLevel",
    "PropertyValue",
    "annotation",
    "escape_data",
    "escape_property",
    "format_command",
]

PropertyValue: TypeAlias = str | int | None
"""A property value as callers hand it over; ``None`` means "absent"."""

AnnotationLevel: TypeAlias = Literal["error", "warning", "notice"]

ANNOTATION_LEVELS: frozenset[str] = frozenset({"error", "warning", "notice"})
"""The three workflow commands that create annotations."""

_MISSING_COMMAND = "missing.command"
"""What the toolkit's ``Command`` constructor writes when the command name is empty."""


def escape_data(text: str) -> str:
    """Escape a command's message (the part after the second ``::``).

    Mirrors ``escapeData`` in actions/toolkit ``packages/core/src/command.ts``:
    ``%`` becomes ``%25`` first (so nothing is encoded twice), then CR becomes ``%0D``
    and LF becomes ``%0A``. ``:`` and ``,`` stay as they are: the runner takes the
    message to be everything after the first ``::`` that follows the command name, so
    a literal ``::`` in the message is harmless. The runner decodes with ``%0D``,
    ``%0A``, ``%25`` (actions/runner ``ActionCommand.cs``, ``_escapeDataMappings``).

    >>> escape_data("50% done\\r\\nnext: a,b")
    '50%25 done%0D%0Anext: a,b'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (``key=VALUE`` between the command name and ``::``).

    Mirrors ``escapeProperty`` in actions/toolkit ``packages/core/src/command.ts``:
    as :func:`escape_data`, plus ``:`` becomes ``%3A`` and ``,`` becomes ``%2C``, in
    that order. The runner decodes with ``%0D``, ``%0A``, ``%3A``, ``%2C``, ``%25``
    (actions/runner ``ActionCommand.cs``, ``_escapePropertyMappings``). ``=`` is not
    escaped: the runner splits each ``key=value`` on its first ``=`` only.

    >>> escape_property("dir,x/a:b%.yaml")
    'dir%2Cx/a%3Ab%25.yaml'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command_value(value: str | int) -> str:
    """Turn a property value into text as ``toCommandValue`` does (toolkit ``utils.ts``).

    Strings pass through; anything else is ``JSON.stringify``-ed. For the types
    accepted here that is ``true`` for ``True`` and the decimal digits for an ``int``
    (identical to JavaScript for every integer up to 2**53 in magnitude).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    raise TypeError(f"workflow command property values are str or int, not {type(value).__name__}")


def format_command(command: str, properties: Mapping[str, PropertyValue], message: str) -> str:
    """Build one workflow command line exactly as @actions/core's ``issueCommand`` does.

    Mirrors ``Command.toString`` in actions/toolkit ``packages/core/src/command.ts``:

    * the line is ``::`` + ``command``; an empty command name becomes
      ``missing.command``, as in the toolkit;
    * if ``properties`` has at least one key, a single space follows, then every
      property whose value is truthy as ``key=escape_property(value)``, joined by
      ``,``, in the mapping's order. Falsy values (``None``, ``""``, ``0``,
      ``False``) are dropped, as the toolkit's ``if (val)`` guard drops them. As in the
      toolkit, a non-empty mapping whose values are all falsy still yields the space
      (``::error ::msg``), which the runner reads as a command without properties;
    * then ``::`` and ``escape_data(message)``.

    Keys are written verbatim, as the toolkit writes them: they must be plain names
    (no space, ``,``, ``=`` or ``:``; not integer-like strings, which JavaScript would
    reorder). The result has no line terminator; ``issueCommand`` appends ``os.EOL``.

    >>> format_command("warning", {"file": "a.yaml", "line": 0}, "x")
    '::warning file=a.yaml::x'
    >>> format_command("notice", {}, "hello")
    '::notice::hello'
    """
    parts = [f"::{command or _MISSING_COMMAND}"]
    if properties:
        rendered = [
            f"{key}={escape_property(_command_value(value))}"
            for key, value in properties.items()
            if value
        ]
        parts.append(" " + ",".join(rendered))
    parts.append("::" + escape_data(message))
    return "".join(parts)


def annotation(
    level: AnnotationLevel,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """Build an ``::error``, ``::warning`` or ``::notice`` line.

    Byte-identical to what @actions/core's ``error``/``warning``/``notice(message,
    props)`` prints when ``props`` holds exactly the arguments given here that are not
    ``None`` (``line`` as ``startLine``, ``col`` as ``startColumn``): properties come in
    the toolkit's order (``toCommandProperties`` in actions/toolkit
    ``packages/core/src/utils.ts``: title, file, line, endLine, col, endColumn; this
    function has no end positions), falsy values are dropped (so ``line=0`` and
    ``title=""`` vanish), and with no arguments at all the line is ``::level::message``.

    ``file`` should be relative to the repository root with ``/`` separators (see the
    runner's ``IssueCommandExtension`` in ``ActionCommandManager.cs``); ``line`` and
    ``col`` start at 1.

    >>> annotation("error", "bad", file="a.yaml", line=3, col=1, title="R001: x")
    '::error title=R001%3A x,file=a.yaml,line=3,col=1::bad'
    """
    if level not in ANNOTATION_LEVELS:
        raise ValueError(f"annotation level must be error, warning or notice, not {level!r}")
    properties: dict[str, PropertyValue] = {}
    if not (file is None and line is None and col is None and title is None):
        properties = {"title": title, "file": file, "line": line, "col": col}
    return format_command(level, properties, message)
