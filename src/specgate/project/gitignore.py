"""``.gitignore`` patterns matched in bounded time (git's rules, gitignore(5)).

The checked repository writes its ``.gitignore``, so a pattern must not be able to stall
the folder search: a backtracking matcher takes time exponential in the number of
wildcards (``a*a*a*a*a*a*a*a*b``, or ``a/**/a/**/a/**/…`` against a deep path). Here a
pattern is split at ``/`` into segments; each segment is one regular expression built
by :func:`fnmatch.translate`, whose ``*`` is an atomic lazy group (Python ≥ 3.11; a
look-ahead emulation before) — the first occurrence of each fixed-length piece is taken
and never revisited, so a segment matches a name in O(len(pattern) · len(name)) — and
``**`` segments are matched over path components by dynamic programming, O(segments ·
components). A path is then matched in time polynomial in the sizes of the pattern and
the path, both bounded (:data:`MAX_LINE_CHARS`, the file system's name limits).

Rules implemented (git 2.x gitignore(5)): blank lines and ``#`` comments skipped;
trailing spaces dropped unless escaped; ``\\`` escapes the next character; ``!``
negates; a trailing ``/`` matches folders only; a ``/`` at the start or in the middle
anchors the pattern to the ``.gitignore``'s folder, else it matches at any depth;
``*`` and ``?`` do not match ``/``, ``[…]`` is a class (``!`` or ``^`` negates it);
a leading ``**/`` matches in every folder, a trailing ``/**`` everything inside, a
middle ``/**/`` zero or more folders; other runs of ``*`` are one ``*``. A pattern
that matches a folder matches everything under it; the last matching pattern decides.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

#: Longer ``.gitignore`` lines are not applied (git's own paths stop at 4,096 bytes):
#: matching time grows with the pattern's length, and the files such a line would hide
#: are checked instead.
MAX_LINE_CHARS = 4096

_GLOBSTAR = "**"


class Pattern(NamedTuple):
    """One ``.gitignore`` line, parsed.

    Attributes:
        segments: the pattern's ``/``-separated parts, each a compiled expression or
            :data:`_GLOBSTAR` (``**``: any number of folders).
        negated: a ``!`` pattern (re-includes what it matches).
        folders_only: ends with ``/``: matches folders (and, through them, what
            they hold), not files.
    """

    segments: tuple[re.Pattern[str] | str, ...]
    negated: bool
    folders_only: bool


def _unescape_glob(text: str) -> str:
    """``text`` (one segment, git's escapes) in :mod:`fnmatch` syntax: ``\\*``, ``\\?``
    and ``\\[`` become one-character classes, any other ``\\x`` the character itself;
    ``[^…]`` becomes ``[!…]``; a run of ``*`` one ``*``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(f"[{nxt}]" if nxt in "*?[" else nxt)
            i += 2
            continue
        if text.startswith("[^", i):
            out.append("[!")
            i += 2
            continue
        if ch == "*":
            while i + 1 < len(text) and text[i + 1] == "*":
                i += 1
        out.append(ch)
        i += 1
    return "".join(out)


def parse(line: str) -> Pattern | None:
    """One ``.gitignore`` line as a :class:`Pattern`; ``None`` for a blank line, a
    comment, a line longer than :data:`MAX_LINE_CHARS` or one that matches nothing."""
    if len(line) > MAX_LINE_CHARS:
        return None
    text = line.rstrip("\r\n")
    stripped = text.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(text):
        stripped += " "  # an escaped trailing space is kept
    text = stripped
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated or text.startswith(("\\!", "\\#")):
        text = text[1:]
    folders_only = text.endswith("/") and not text.endswith("\\/")
    text = text[:-1] if folders_only else text  # one slash: "a//" matches nothing
    if not text:
        return None
    anchored = "/" in text
    parts = (text[1:] if text.startswith("/") else text).split("/")
    if "" in parts:  # "a//b", "//a": a path never holds an empty component
        return None
    segments: list[re.Pattern[str] | str] = [] if anchored else [_GLOBSTAR]
    for part in parts:
        if part == _GLOBSTAR:
            if not segments or segments[-1] != _GLOBSTAR:
                segments.append(_GLOBSTAR)
            continue
        segments.append(re.compile(fnmatch.translate(_unescape_glob(part))))
    if segments[-1] == _GLOBSTAR:  # "abc/**": everything inside, not abc itself
        segments.append(re.compile(r"(?s:.+)\Z"))
    return Pattern(tuple(segments), negated, folders_only)


def parse_lines(lines: Iterable[str]) -> tuple[Pattern, ...]:
    """Every applicable pattern of a ``.gitignore``'s lines, in order."""
    return tuple(p for p in map(parse, lines) if p is not None)


def matches(pattern: Pattern, parts: Sequence[str], is_dir: bool) -> bool:
    """Whether ``pattern`` matches the path ``parts`` (components relative to the
    ``.gitignore``'s folder), by dynamic programming over (segment, component). What a
    matched folder holds is not matched here: the folder search does not enter an
    ignored folder, which is git's rule (nothing below it can be re-included)."""
    if pattern.folders_only and not is_dir:
        return False
    count = len(parts)
    reach = [True] + [False] * count  # reach[j]: the segments so far match parts[:j]
    for segment in pattern.segments:
        if segment == _GLOBSTAR:
            for j in range(1, count + 1):  # zero folders, or one more
                reach[j] = reach[j] or reach[j - 1]
            continue
        assert isinstance(segment, re.Pattern)
        nxt = [False] * (count + 1)
        for j in range(count):
            if reach[j] and segment.match(parts[j]) is not None:
                nxt[j + 1] = True
        reach = nxt
        if not any(reach):
            return False
    return reach[count]


def verdict(patterns: Sequence[Pattern], parts: Sequence[str], is_dir: bool) -> bool | None:
    """``True`` (ignored), ``False`` (re-included) or ``None`` (no pattern matches):
    the last matching pattern of ``patterns`` decides."""
    for pattern in reversed(patterns):
        if matches(pattern, parts, is_dir):
            return not pattern.negated
    return None
