"""What a shell script's words hold that a command line's do not (bash, dash): a
command substitution is one word however many blanks it holds, ``&`` and ``|`` next
to ``<``/``>`` belong to a redirection, and a here-document's body is data, skipped
up to its delimiter line (POSIX 2.6.3, 2.7, 2.7.4). Used by
:func:`specgate.inputs.cmdline.split_commands` for a script (``script=True``).
"""

from __future__ import annotations

import re

_HEREDOC_RE = re.compile(r"(?<!<)<<(?!<)(-?)")


def substitution_end(text: str, i: int) -> int:
    """The offset after the command substitution (``$(…)`` or a backquoted one)
    opening at ``i``: one word however many blanks it holds (POSIX 2.6.3); the text's
    end when nothing closes it (the shell refuses such a script)."""
    if text[i] == "`":
        j = i + 1
        while j < len(text) and text[j] != "`":
            j += 2 if text[j] == "\\" else 1
        return min(j + 1, len(text))
    j, depth = i + 2, 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch in "'\"":
            close = text.find(ch, j + 1)
            j = len(text) if close < 0 else close + 1
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        j += 1
        if depth == 0:
            return j
    return len(text)


def script_part(text: str, i: int, parts: list[str], kinds: list[int]) -> int | None:
    """In a script, append the command substitution or the redirection ``&``/``|``
    at ``i`` to the word (unquoted); the offset after it, None when none is there."""
    if text[i] == "`" or text.startswith("$(", i):
        close = substitution_end(text, i)
    elif redirecting(text, i):
        close = i + 1
    else:
        return None
    parts.append(text[i:close])
    kinds.append(0)
    return close


def redirecting(text: str, i: int) -> bool:
    """Whether the ``&`` or ``|`` at ``i`` belongs to a redirection (``2>&1``,
    ``&>log``, ``>|f``), not a separator (bash, dash)."""
    ch = text[i]
    if ch not in "&|":
        return False
    before = text[i - 1] if i > 0 else ""
    return before in "<>" or (ch == "&" and text.startswith(">", i + 1) and before != "&")


class HereDocs:
    """Here-documents opened on the current line (``<<EOF``, ``<<-'EOF'``): their
    bodies are data, not commands, skipped at the line's end (POSIX 2.7.4)."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, bool]] = []
        self._awaiting: bool | None = None

    def note(self, word: str, parts: list[str], kinds: list[int]) -> None:
        """Record a here-document operator in the word just read (or its delimiter)."""
        if self._awaiting is not None:
            self.pending.append((word, self._awaiting))
            self._awaiting = None
            return
        unquoted = "".join(p for p, k in zip(parts, kinds, strict=True) if k == 0)
        found = _HEREDOC_RE.search(unquoted)
        if found is None:
            return
        at = word.find(found.group(0))
        delimiter = word[at + len(found.group(0)) :] if at >= 0 else ""
        if delimiter:
            self.pending.append((delimiter, bool(found.group(1))))
        else:
            self._awaiting = bool(found.group(1))

    def skip(self, text: str, at: int) -> int:
        """The offset after the bodies of the pending here-documents starting at ``at``."""
        for delimiter, tabs in self.pending:
            while at < len(text):
                stop = text.find("\n", at)
                stop = len(text) if stop < 0 else stop
                line = text[at:stop]
                at = stop + 1
                if (line.lstrip("\t") if tabs else line) == delimiter:
                    break
        self.pending.clear()
        return min(at, len(text))
