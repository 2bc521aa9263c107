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
    width: int = 1

    @property
    def flat(self) -> bool:
        """One name at any depth (``*.pyc``, ``build/``): only a path's last component
        can decide, so one expression is tried, not one per component."""
        return len(self.segments) == 2 and self.segments[0] == _GLOBSTAR


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
    return Pattern(tuple(segments), negated, folders_only, max(1, len(text)))


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
    if pattern.flat:  # "**" reaches every component: the last one alone decides
        last = pattern.segments[1]
        assert isinstance(last, re.Pattern)
        return bool(parts) and last.match(parts[-1]) is not None
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


#: Bytes of one ``.gitignore`` (a longer one is an input error naming it: git's own
#: templates are under 10 KB, a large monorepo's top-level file under 100 KB).
MAX_FILE_BYTES = 256 * 1024
#: Characters of distinct ``.gitignore`` text one run reads (identical files, which git
#: stores as one blob, count once).
MAX_TEXT_BYTES = 4 * 1024 * 1024
#: Distinct patterns one run compiles (a line seen again, in any file, is compiled once).
MAX_PATTERNS = 50_000
#: Matching work one run may spend: every (pattern, path) test counts
#: :data:`TEST_COST` plus the pattern's length in characters, times the path's components
#: for a pattern that spans folders. A test costs a fixed ~1 µs of interpreter work
#: before its first character (measured: a 6-character literal pattern takes as long as
#: a 20-character wildcard one), so charging characters alone let 38,015 short literal
#: patterns over 400 folders run 26–50 s within budget (issue 25); charged so, every
#: unit costs 25–60 ns whatever the patterns (benchmarks/bench_gitignore.py), and the
#: bound is reached in about 6 s on a 2-core runner, at under 25 MB.
MAX_MATCH_WORK = 200_000_000
#: The fixed cost of testing one pattern against one path (one component, for a
#: pattern that spans folders), in the units of :data:`MAX_MATCH_WORK` (characters).
TEST_COST = 20


class Spent(ValueError):
    """A run-wide bound of ``.gitignore`` matching was reached; the message says which."""


class Compiled(NamedTuple):
    """One ``.gitignore`` file's patterns and what testing a path against all of them
    costs (:data:`TEST_COST` plus its length, per pattern): ``flat_width`` once,
    ``deep_width`` once per component of the path."""

    patterns: tuple[Pattern, ...]
    flat_width: int
    deep_width: int


class Budget:
    """The ``.gitignore`` files of one run: compiled once per distinct text (and each
    distinct line once), matched within the run-wide bounds above.

    Raises (from :meth:`compile` and :meth:`verdict`):
        Spent: a bound reached; the caller names the ``.gitignore`` (an input error).
    """

    def __init__(
        self,
        work: int | None = None,
        patterns: int | None = None,
        text_bytes: int | None = None,
    ) -> None:
        work = MAX_MATCH_WORK if work is None else work
        patterns = MAX_PATTERNS if patterns is None else patterns
        text_bytes = MAX_TEXT_BYTES if text_bytes is None else text_bytes
        self.work = work
        self.patterns = patterns
        self.text_bytes = text_bytes
        self._allowance = (work, patterns, text_bytes)
        self._lines: dict[str, Pattern | None] = {}
        self._files: dict[str, Compiled] = {}

    def compile(self, text: str) -> Compiled:
        """``text`` (a whole ``.gitignore``) as :class:`Compiled`, from the cache when
        the same text was compiled before."""
        cached = self._files.get(text)
        if cached is not None:
            return cached
        self.text_bytes -= len(text)
        if self.text_bytes < 0:
            raise Spent(
                f"the .gitignore files of this run pass {self._allowance[2]:,} characters "
                "of distinct text"
            )
        found: list[Pattern] = []
        for line in text.splitlines():
            if line in self._lines:
                pattern = self._lines[line]
            else:
                pattern = self._lines[line] = parse(line)
                if pattern is not None:
                    self.patterns -= 1
                    if self.patterns < 0:
                        raise Spent(
                            f"the .gitignore files of this run pass {self._allowance[1]:,} "
                            "distinct patterns"
                        )
            if pattern is not None:
                found.append(pattern)
        flat = sum(TEST_COST + p.width for p in found if p.flat)
        deep = sum(TEST_COST + p.width for p in found if not p.flat)
        cached = self._files[text] = Compiled(tuple(found), flat, deep)
        return cached

    def verdict(self, compiled: Compiled, parts: Sequence[str], is_dir: bool) -> bool | None:
        """:func:`verdict` of ``compiled`` for ``parts``, its cost charged first."""
        self.work -= compiled.flat_width + compiled.deep_width * len(parts)
        if self.work < 0:
            raise Spent(
                f"matching the .gitignore files' patterns passes this run's budget of "
                f"{self._allowance[0]:,} (pattern tests and characters × paths tested)"
            )
        return verdict(compiled.patterns, parts, is_dir)
