"""Make untrusted text (deployment names, file paths, messages quoting values)
safe to print in line-oriented output.

A claims file is user input: a deployment named ``"x\\n::error::y"`` must not
become a GitHub workflow command in the text log, and an ANSI escape sequence
must not reach the terminal. Control characters (C0, DEL, C1), the Unicode line
separators and lone surrogates (undecodable file names, ``"\\ud800"`` in JSON)
are shown as backslash escapes instead.

The GitHub runner reads a log line as a command when, after leading white space,
it starts with ``::`` (``ActionCommand.TryParseV2``), or when it holds ``##[``
anywhere (the legacy ``ActionCommand.TryParse``): :func:`visible` writes every
``##[`` as ``##\\[`` (:func:`specgate.core.workflow_text.defuse`, the one rule for
every channel) and :func:`safe_line` makes sure no line we print from untrusted text
starts with ``::``.
"""

from __future__ import annotations

import re

from specgate.core.workflow_text import defuse

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: What the runner takes for a workflow command at the start of a line.
COMMAND_STARTS = ("::", "##[")


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``)
    and every ``##[`` as ``##\\[`` (:func:`~specgate.core.workflow_text.defuse`): a line
    holding it can be neither broken nor read as a legacy workflow command."""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() or ch == " " else _escape(ch) for ch in text)
    return defuse(text)


def starts_command(line: str) -> bool:
    """Whether the runner would read ``line`` as a workflow command."""
    return line.lstrip().startswith(COMMAND_STARTS)


def safe_line(text: str, prefix: str = "> ") -> str:
    """:func:`visible` text that cannot start a workflow command: a line that would
    (a file named ``::error file=x::y.specgate.yaml``) gets ``prefix`` in front
    (``./`` suits a line that starts with a relative path)."""
    shown = visible(text)
    if not starts_command(shown):
        return shown
    return prefix + shown.lstrip()


#: Compiled on first use (``re``'s cache) by :func:`json_text` alone: the lone-surrogate
#: range costs about a millisecond to compile, which text output and the doctor never need.
_JSON_UNSAFE = "[\x85\u2028\u2029\ud800-\udfff]"


def json_text(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters that some
    readers take for line breaks (NEL, U+2028, U+2029) and lone surrogates written as
    ``\\uXXXX`` escapes, which every JSON reader decodes back, and every ``##[`` as
    ``##\\u005b`` (:func:`~specgate.core.workflow_text.defuse`: JSON printed in a CI log
    is a log line too). Such characters can only stand inside JSON strings, where the
    escape means the same character."""
    return defuse(re.sub(_JSON_UNSAFE, lambda m: f"\\u{ord(m.group()):04x}", text), "\\u005b")
