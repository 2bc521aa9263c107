"""Make untrusted text (deployment names, file paths, messages quoting values)
safe to print in line-oriented output.

A claims file is user input: a deployment named ``"x\\n::error::y"`` must not
become a GitHub workflow command in the text log, and an ANSI escape sequence
must not reach the terminal. Control characters (C0, DEL, C1) and the Unicode
line separators are shown as backslash escapes instead.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else _escape(ch) for ch in text)
