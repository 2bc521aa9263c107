"""A Compose string ``command:`` / ``entrypoint:`` split as Compose splits it
(trial3/15; docs/engines.md#containers).

compose-go decodes a string command with ``shellwords.Parse`` (``types/command.go``@e70e961c,
``ShellCommand.DecodeMapstructure``; ``github.com/mattn/go-shellwords`` v1.0.12, the
version its ``go.mod`` pins; ``ParseEnv`` and ``ParseBacktick`` off), not with a shell:

- words are separated by space, tab, carriage return and line feed;
- ``#`` is a character like any other: there are no comments (a ``# note`` after the
  options of a folded ``command: >`` reaches the engine as the words ``#``, ``note``);
- ``'…'`` and ``"…"`` quote (``''`` is an empty word); a backslash outside single quotes
  takes the next character as it is, inside double quotes too;
- ``$`` is text (Compose has already interpolated the file);
- an unquoted ``;``, ``&``, ``|``, ``<`` or ``>`` ends the command: the words after it are
  dropped (before ``>``, a word starting with a digit is dropped too).

Where versions of go-shellwords differ (a backquote, ``(``, ``)``) or the string does
not parse (a quote left open, a backslash at the end), nothing is settled here: None.
A string a shell would read as several commands or with variable assignments
(``export X=1``, ``X=1 vllm …``) is still read as a shell runs it
(:func:`compose_words`); Compose runs its words without a shell.
"""

from __future__ import annotations

from collections.abc import Sequence

from specgate.inputs.cmdline import Command
from specgate.load.compose_env import is_compose
from specgate.load.document import Document, NodePath

_SPACE = frozenset(" \t\r\n")


def shellwords_command(text: str) -> Command | None:
    """The one command go-shellwords gives for ``text`` (words, and where each starts:
    0-based line, 1-based column, as :class:`Command` holds them), None when not settled
    (module doc)."""
    if any(c in text for c in "`()"):
        return None
    words: list[str] = []
    starts: list[int] = []
    buf: list[str] = []
    start = -1
    got = False
    escaped = single = double = False
    for i, char in enumerate(text):
        if escaped:
            buf.append(char)
            escaped, got = False, True
            continue
        if char == "\\":
            if single:
                buf.append(char)
            else:
                escaped = True
                start = i if start < 0 else start
            continue
        if char in _SPACE:
            if single or double:
                buf.append(char)
            elif got:
                words.append("".join(buf))
                starts.append(start)
                buf, start, got = [], -1, False
            continue
        if start < 0:
            start = i
        if char == '"' and not single:
            got = got or double
            double = not double
            continue
        if char == "'" and not double:
            got = got or single
            single = not single
            continue
        if char in ";&|<>" and not (single or double):
            if char == ">" and buf and buf[0] in "0123456789":
                got = False
            break
        buf.append(char)
        got = True
    else:
        if escaped or single or double:
            return None
    if got:
        words.append("".join(buf))
        starts.append(start)
    lines = tuple(text.count("\n", 0, at) for at in starts)
    columns = tuple(at - (text.rfind("\n", 0, at) + 1) + 1 for at in starts)
    return Command(argv=tuple(words), lines=lines, columns=columns)


def compose_words(
    node: str, doc: Document, path: NodePath, shell: Sequence[Command]
) -> list[Command] | None:
    """The command of a Compose service's string ``command`` / ``entrypoint`` at
    ``path`` of ``doc`` as go-shellwords splits it, where ``shell`` (the string split as
    a shell would) is one command with no variable assignment: then no shell syntax is
    at stake, and the words are Compose's (a ``#`` and what follows are words). None
    elsewhere: the caller keeps ``shell`` (an ``export`` line, ``NAME=value`` before the
    program or several commands are read as a shell runs them)."""
    compose = len(path) == 3 and path[0] == "services" and path[2] in ("command", "entrypoint")
    if not compose or not is_compose(doc.data) or len(shell) > 1 or any(c.env for c in shell):
        return None
    command = shellwords_command(node)
    return [command] if command is not None and command.argv else None
