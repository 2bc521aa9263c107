"""Prose around commands: the shell code blocks of Markdown text.

Recipes, model cards and guides publish the command inside prose: a Markdown
``guide:`` scalar of a vLLM recipe, a README, a ``.txt`` copied from the docs.
The prose is no shell text (an apostrophe in "Meta's" is no quote,
docs/engines.md#what-users-publish), so when text holds a fenced code block (CommonMark 4.5: a line
of three or more backticks or tildes, closed by a line of the same character at least as long, or
by the end of the text), only the content of the blocks whose info string names a
shell (or none) is read as shell; everything else — the prose, the fence lines,
``python``/``yaml``/``json`` blocks — is not. In a console block (its lines
prompted with ``$ ``) only the prompted lines and their ``\\`` continuations are
commands: the rest is the output they printed.

Text without a fence line is left as it is: a shell script stays a shell script.
"""

from __future__ import annotations

import re

#: Info strings of a fenced block whose content is shell (first word, lower case).
SHELL_INFO = frozenset(
    {
        "",
        "bash",
        "sh",
        "shell",
        "zsh",
        "ksh",
        "dash",
        "console",
        "terminal",
        "shell-session",
        "sh-session",
        "shellsession",
        "bash-session",
        "text",
        "txt",
        "plaintext",
        "plain",
        "none",
    }
)

_FENCE_RE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_PROMPT_RE = re.compile(r"[ \t]*\$[ \t]")


def prose_blocks(text: str) -> list[tuple[int, int]] | None:
    """The ``(start, end)`` offsets of the shell in ``text`` when it holds a fenced
    code block, in order; None when it holds none (the whole text is shell).

    Each range covers whole lines of one block's content (for a console block,
    one prompted command with its continuation lines). Linear in the text.
    """
    if "```" not in text and "~~~" not in text:
        return None
    lines = _lines(text)
    blocks: list[tuple[int, int]] = []
    fenced = False
    index = 0
    while index < len(lines):
        start, end = lines[index]
        opening = _FENCE_RE.fullmatch(text, start, end)
        if opening is None or (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            index += 1
            continue
        fenced = True
        fence = opening.group(1)
        info = opening.group(2).strip().lstrip("{.").split(" ", 1)[0].rstrip("}").lower()
        first = index + 1
        index = first
        while index < len(lines):
            row = _FENCE_RE.fullmatch(text, *lines[index])
            if (
                row is not None
                and row.group(1)[0] == fence[0]
                and len(row.group(1)) >= len(fence)
                and not row.group(2).strip()
            ):
                break
            index += 1
        if info in SHELL_INFO and first < index:
            blocks.extend(_commands_of_block(text, lines[first:index]))
        index += 1  # past the closing fence (or the end)
    return blocks if fenced else None


def masked(text: str, blocks: list[tuple[int, int]]) -> str:
    """``text`` with every character outside ``blocks`` but line breaks made a blank:
    the same length and the same lines, so offsets and line numbers still hold."""
    out: list[str] = []
    at = 0
    for start, end in blocks:
        out.append(_blank(text[at:start]))
        out.append(text[start:end])
        at = end
    out.append(_blank(text[at:]))
    return "".join(out)


def _blank(chunk: str) -> str:
    return re.sub(r"[^\n]", " ", chunk) if chunk.strip() else chunk


def _lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each line, without its line break."""
    out: list[tuple[int, int]] = []
    at = 0
    while at <= len(text):
        end = text.find("\n", at)
        if end < 0:
            out.append((at, len(text)))
            break
        out.append((at, end))
        at = end + 1
    return out


def _commands_of_block(text: str, rows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The shell of one block: all of it, or in a console block the prompted lines
    and the lines their trailing ``\\`` continues onto."""
    if not any(_PROMPT_RE.match(text, start, end) for start, end in rows):
        return [(rows[0][0], rows[-1][1])]
    out: list[tuple[int, int]] = []
    continued = False
    for start, end in rows:
        if continued or _PROMPT_RE.match(text, start, end):
            out.append((start, end))
            continued = text[start:end].rstrip().endswith("\\")
    return out
