"""Command lines as users commit them: split like a POSIX shell, then parse flags.

Shapes:
- :func:`split_commands` turns text (a ``.txt`` file, a YAML scalar) into a list of
  :class:`Command`: the argv words of each simple command, the environment
  assignments written before it (``VAR=1 python …``, ``export VAR=1``) and, per
  word, the 0-based offset of the line it starts on (relative to the text).
- :func:`parse_flags` turns argv words into ``{canonical long flag: Flag}`` using a
  :class:`FlagSpec` (the engine's known long flags, short aliases, booleans).

Splitting follows POSIX ``sh`` word rules as :mod:`shlex` applies them (quotes,
backslash escapes), in a tokenizer of this module that is linear in the text.
Before splitting, backslash-newline continuations are joined (so is a line that
starts with a flag, as llama-swap's ``cmd: |`` blocks expect), a leading
``$ `` / ``# `` prompt is dropped, and a backslash left standing alone between
spaces (what a YAML plain or folded scalar makes of a ``\\`` continuation) is
treated as a continuation too. ``{placeholders}`` are ordinary words. Commands are
separated by newlines and unquoted ``;``, ``&&``, ``||``, ``|``, ``&`` (a quoted or
escaped ``;``, find's ``-exec`` terminator, is a word, as in ``sh``).

Flag parsing follows Python :mod:`argparse` (SGLang's launcher, vLLM's CLI):
``--flag value``, ``--flag=value``, boolean flags without a value, the last of a
repeated flag wins, and — when ``FlagSpec.allow_abbrev`` — a long flag may be
abbreviated (``--speculative-algo`` → ``--speculative-algorithm``). With the engine's
recorded parser (``FlagSpec.engine_parser``) a word is read exactly as that parser reads
it (:mod:`specgate.inputs.parsers`): one it refuses as ambiguous is read as no flag.
Without one, a prefix unique among the known long flags is that flag and an ambiguous
prefix is an :class:`~specgate.core.errors.InputError` listing the candidates, as
argparse refuses it (cpython ``Lib/argparse.py``, ``_parse_optional`` /
``_get_option_tuples``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from specgate.core.errors import InputError, LimitReached
from specgate.core.limits import current_budget
from specgate.inputs.flags import Flag, FlagSpec, canonical_flag, parse_flags, resolve_flag
from specgate.inputs.prose import masked, prose_blocks
from specgate.inputs.shell_flow import Flow
from specgate.inputs.shell_params import (
    ARRAY_RE,
    PARAMETER_SCAN,
    Hit,
    Overspent,
    ScanLimit,
    Segments,
    Shell,
    assign_array,
    builtin,
    closes_array,
    dropped,
    parameter_end,
)
from specgate.inputs.shell_script import HereDocs, redirecting, script_part

_T = TypeVar("_T")
#: ``set -a``, ``set -ea``, ``set -o allexport``: every later assignment is exported
_ALLEXPORT_RE = re.compile(r"-[a-zA-Z]*a[a-zA-Z]*|allexport")
#: one assignment: its value, the (0-based line, 1-based column) of its word, and why
#: the value is not settled (None: settled)
_Assigned = tuple[str, tuple[int, int], "Hit | None"]
__all__ = [
    "Command",
    "Flag",
    "FlagSpec",
    "canonical_flag",
    "parse_flags",
    "resolve_flag",
    "split_commands",
]
_OPERATORS = frozenset({";", "&&", "||", "|", "&", ";;"})
_SEPARATOR_CHARS = frozenset(";&|\n")
_PROMPT_RE = re.compile(r"^[ \t]*\$[ \t]+", re.MULTILINE)
_FLAG_LINE_RE = re.compile(r"\n(?=[ \t]*-)")
_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")

_BLANKS_RE = re.compile(r"[ \t\x0b\f]+")
_SEPARATORS_RE = re.compile(r"[;&|\n]+")
_PLAIN_RE = re.compile(r"[^ \t\x0b\f;&|\n\\\\'\"]+")
_DQ_STOP_RE = re.compile(r'["\\\\]')
#: a word whose parts are kept: it may expand (``$``, a backquote) or open or close
#: an array assignment (``A=(``, ``…)``)
_EXPANDED_RE = re.compile(r"[$`()]")
#: where a comment ends: a newline, or the line break before a line that starts with a
#: flag (joined to the command above as a form feed)
_LINE_END_RE = re.compile(r"[\n\f]")
_SCRIPT_BLANKS_RE = re.compile(r"(?:[ \t]|\\\n)+")
_SCRIPT_PLAIN_RE = re.compile(r"(?:[^ \t;&|\n\\\\'\"`$]|\$(?!\())+")
#: a redirection word (``>/dev/null``, ``2>&1``; alone, ``>``, its target follows)
_REDIRECTION_RE = re.compile(r"[0-9]*(?:>>|>&|>\||>|<<-|<<|<&|<>|<|&>>|&>)(?=(.*))")
_BLANK_RE = re.compile(r"\s")
_ELEMENT_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\[[^\]]*\]\+?=")
_LONE_BACKSLASH_RE = re.compile(r"(?:(?<=[ \t])|^)\\(?:[ \t]+|$)", re.MULTILINE)


@dataclass(frozen=True)
class Command:
    """One simple command.

    Attributes:
        argv: the words after any leading ``NAME=value`` assignments.
        env: ``NAME → value`` from leading assignments and earlier ``export`` lines.
        lines: per word of ``argv``, the 0-based line (within the split text) it starts on.
        columns: per word, the 1-based column it starts at on that line.
        env_at: per name of ``env``, the (0-based line, 1-based column) of the
            ``NAME=value`` word that set it (an ``export`` line or the prefix).
        unresolved: per index of a word of ``argv`` that the text does not settle
            (:class:`~specgate.inputs.shell_params.Shell` hits: ``"$@"`` without
            ``set --``, a variable from the environment or a sourced file, …), what it
            is and whether the shell splits it (it may then add several words).
        env_why: per name of ``env``, the hit that leaves its value unsettled
            (``export A=$B`` with B from the environment: the value holds ``$B`` as
            written), None when it is settled.
        env_any: why any other name may be in the environment too (a sourced file not
            read, ``set -a``), None when only ``env``'s are.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    lines: tuple[int, ...] = ()
    columns: tuple[int, ...] = ()
    env_at: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    unresolved: Mapping[int, Hit] = field(default_factory=dict)
    env_why: Mapping[str, Hit | None] = field(default_factory=dict)
    env_any: str | None = None


def split_commands(
    text: str,
    *,
    file: str | None = None,
    line: int | None = None,
    arguments: tuple[str, ...] | None = None,
    variables: tuple[tuple[str, str], ...] = (),
    script: bool = False,
) -> list[Command]:
    """Split shell text into simple commands, as a POSIX shell would.

    Args:
        text: one or more command lines (continuations, quotes spanning lines,
            ``$ `` prompts, ``#`` comments allowed).
        file, line: where the text stands (1-based line of its first character),
            for error messages.
        arguments: the script's positional parameters when known (``sh -c 'SCRIPT'
            NAME ARGS…`` gives ARGS); None: its caller's, unknown.
        variables: variables set before the script runs (a container's literal
            ``env``), as ``(name, value)`` pairs.
        script: the text is a shell script a shell runs (``serve.sh``, an ``sh -c``
            script): its lines are joined exactly as bash and dash join them (only an
            unquoted backslash-newline; no flag line, prompt or lone backslash joined;
            CR is a character of its word), here-documents are skipped, and ``&``
            after ``<``/``>`` belongs to a redirection (:mod:`.shell_flow` follows the
            rest).

    Returns:
        the commands in order; an empty list for text holding none. ``export NAME=v``
        commands are not returned but feed the ``env`` of later commands.

    Raises:
        InputError: unbalanced quotes or a dangling escape.
        LimitReached: shell-variable expansion ran out of the file's budget (at the
            line of the word it could not expand).
    """
    try:
        return list(_split_once(text, arguments, variables, script))
    except _SplitError as exc:
        where = None if line is None else line + exc.line
        if exc.limit:
            raise LimitReached(exc.reason, file, where) from None
        raise InputError(f"cannot split command line: {exc.reason}", file, where) from None


@lru_cache(maxsize=8)
def _split_once(
    text: str,
    arguments: tuple[str, ...] | None = None,
    variables: tuple[tuple[str, str], ...] = (),
    script: bool = False,
) -> tuple[Command, ...]:
    """:func:`split_commands` without the message placement, cached: the engine search
    and the reader ask about the same text, which is split once (each split is linear
    in the text; a 1 MB command line was split twice).

    Raises:
        _SplitError: with ``line`` set to the 0-based line of the failing word.
    """
    # Prose around the commands (a Markdown guide, a recipe's `guide:` text): only
    # the shell code blocks are shell; every other character becomes a blank, so
    # offsets and lines stay as in the text (an apostrophe in prose is no quote).
    blocks = None if script else prose_blocks(text)
    if blocks is not None:
        text = masked(text, blocks)
    cleaned = text if script else _loosely_joined(text)
    # Line breaks (newlines and continuation tabs) indexed once: a word's line and
    # column come from a binary search, so splitting stays linear in the text
    # (a 240 KB one-line command used to take 42 s: a count and rfind per word).
    breaks = [i for i, ch in enumerate(cleaned) if ch in "\n\x0b\f"]
    words: list[str] = []
    segments: list[Segments | None] = []
    word_lines: list[tuple[int, int]] = []
    commands: list[Command] = []
    exported = _Exports()
    shell = Shell(current_budget(len(text)))
    shell.positional = None if arguments is None else list(arguments)
    shell.values.update(variables)
    flow = Flow(script=script)
    try:
        if blocks is not None:
            # each code block is its own paste: a quote left open in one does not
            # run on into the next block
            for start, end in blocks:
                for _ in _tokens(cleaned[start:end], start, comments=True):
                    pass
        array_open = False  # inside A=( … ) across lines (bash arrays span lines)
        for word, start, separator, parts in _tokens(cleaned, comments=True, script=script):
            if separator:
                if not (array_open and not word.strip("\n")):
                    _emit(
                        words,
                        segments,
                        word_lines,
                        commands,
                        exported=exported,
                        shell=shell,
                        flow=flow,
                        separator=word,
                    )
                    words, segments, word_lines = [], [], []
                continue
            if cleaned[start] == "#":  # an unquoted # starting a word ('#' is a word)
                continue  # a comment (to its line's end: what follows is a joined line)
            if array_open or ((not words or _ASSIGN_RE.match(words[-1])) and ARRAY_RE.match(word)):
                array_open = not closes_array(parts, opening=not array_open)
            words.append(word)
            segments.append(parts)
            before = bisect.bisect_left(breaks, start)
            column = start - (breaks[before - 1] if before else -1)
            word_lines.append((before, column))
        _emit(
            words,
            segments,
            word_lines,
            commands,
            exported=exported,
            shell=shell,
            flow=flow,
            separator="",
        )
    except _SplitError as exc:
        if exc.start >= 0:
            exc.line = bisect.bisect_left(breaks, exc.start)
        raise
    return tuple(commands)


def _loosely_joined(text: str) -> str:
    """``text`` with the joins of a command line that no shell runs (a ``.txt``, a YAML
    scalar): same-length rewrites keep every offset, so a word's line is still
    countable (a continuation's newline becomes a vertical tab: whitespace, still a
    line); a ``$ `` prompt and a lone backslash are dropped; a line starting with a
    flag continues the command above (no shell runs "--x" as a program; launchers
    such as llama-swap join a block's lines this way)."""
    cleaned = text.replace("\\\r\n", "  \x0b").replace("\\\n", " \x0b").replace("\r\n", " \n")
    cleaned = _PROMPT_RE.sub(lambda m: " " * len(m.group(0)), cleaned)
    cleaned = _LONE_BACKSLASH_RE.sub(lambda m: " " * len(m.group(0)), cleaned)
    return _FLAG_LINE_RE.sub("\f", cleaned)


class _SplitError(Exception):
    """Unbalanced quotes or a dangling escape in the word starting at ``start``; or,
    with ``limit``, the expansion budget spent in a word of 0-based ``line`` (``start``
    -1: the line is known already)."""

    def __init__(self, reason: str, start: int, *, line: int = 0, limit: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.start = start
        self.line = line
        self.limit = limit


def _tokens(
    text: str, base: int = 0, *, comments: bool = False, script: bool = False
) -> Iterator[tuple[str, int, bool, Segments | None]]:
    """The words of ``text`` as ``(word, start offset, is a separator run, parts)``.

    The word rules of :class:`shlex.shlex` in POSIX mode with
    ``punctuation_chars=";&|\\n"``, ``whitespace_split`` and no comment characters
    (what this module used before), in one left-to-right pass: blanks are
    ``" \\t\\v\\f"``; a run of ``;&|`` and newlines is one separator token; a
    backslash outside quotes takes the next character literally; single quotes
    take everything up to the next ``'``; inside double quotes a backslash escapes
    only ``"`` and ``\\`` (shlex's rule; it is kept before any other character); a
    quoted empty string is a word. With ``comments``, a ``#`` starting a word starts a
    comment (POSIX 2.3), one word up to the end of the line: a quote in it is none
    (``# don't``), and an apostrophe inside a word (a letter on both sides) whose quote
    would run past the end of its line is prose, a letter ("Meta's model" in text
    around a command: no shell script opens a multi-line string inside a word). Each
    word is built from slices joined once, so
    the pass is linear in the text (shlex adds one character at a time to a string,
    quadratic in a word's length: a 1 MB word took 30 s). ``parts`` (for a word
    holding ``$``, else None) are its pieces with their quoting (:data:`Segments`),
    for parameter expansion; ``base`` is added to offsets in errors. With ``script``
    (a text a shell runs, :func:`split_commands`), the rules are bash's and dash's:
    blanks are space and tab, an unquoted backslash-newline (also inside double
    quotes) is removed, ``&`` next to ``<``/``>`` is part of a redirection word, a
    comment ends at the newline, a quote is always a quote, and the body of a
    here-document (``<<EOF``, ``<<-EOF``) is skipped up to its delimiter line.

    Raises:
        _SplitError: "No closing quotation" or "No escaped character" (shlex's
            messages), with the offset of the word they occur in.
    """
    end = len(text)
    i = 0
    scan = [end + PARAMETER_SCAN]  # what the ${…} scans may read together (linear)
    blanks_re, plain_re = (
        (_SCRIPT_BLANKS_RE, _SCRIPT_PLAIN_RE)
        if script
        else (
            _BLANKS_RE,
            _PLAIN_RE,
        )
    )
    heredocs = HereDocs()
    while True:
        blanks = blanks_re.match(text, i)
        if blanks:
            i = blanks.end()
        if i >= end:
            return
        start = i
        separators = None if script and redirecting(text, i) else _SEPARATORS_RE.match(text, i)
        if separators:
            i = separators.end()
            if script and heredocs.pending and "\n" in separators.group():
                i = heredocs.skip(text, text.index("\n", start) + 1)
            yield separators.group(), start, True, None
            continue
        if comments and text[i] == "#":
            # a comment runs to the end of the line: a quote in it is no quote (a
            # flag line joined after it is not comment: bash ends it at the newline)
            i = _end_of_line(text, i, script=script)
            yield text[start:i], start, False, None
            continue
        parts: list[str] = []
        kinds: list[int] = []
        while i < end:
            plain = plain_re.match(text, i)
            if plain:
                i = _plain(text, plain, parts, kinds, scan, base=base)
                continue
            ch = text[i]
            if ch == "\\":
                if i + 1 >= end:
                    raise _SplitError("No escaped character", base + start)
                if not (script and text[i + 1] == "\n"):  # a shell removes both
                    parts.append(text[i + 1])
                    kinds.append(1)
                i += 2
            elif ch == "'":
                i = _single_quoted(
                    text, i, base + start, parts, kinds, prose=comments and not script
                )
            elif ch == '"':
                i = _double_quoted(text, i + 1, base + start, parts, kinds, script=script)
            elif script and (taken := script_part(text, i, parts, kinds)) is not None:
                i = taken
            else:  # a blank or a separator ends the word
                break
        word = "".join(parts)
        if script:
            heredocs.note(word, parts, kinds)
        yield (
            word,
            start,
            False,
            (tuple(zip(parts, kinds, strict=True)) if _EXPANDED_RE.search(word) else None),
        )


def _plain(
    text: str,
    plain: re.Match[str],
    parts: list[str],
    kinds: list[int],
    scan: list[int],
    *,
    base: int = 0,
) -> int:
    """Append an unquoted run (kind 0), cut at a ``${`` whose closing brace lies past
    it (a blank or quote inside the braces: kind 3); the offset after what was taken."""
    run, i = plain.group(), plain.start()
    at = run.find("${")
    try:
        close = parameter_end(text, i + at, scan) if at >= 0 else None
    except ScanLimit:
        raise _SplitError(
            f"no closing brace for this ${{ within {PARAMETER_SCAN:,} characters (or the "
            "text's scan budget); specgate will not read the command without it",
            base + i + at,
            limit=True,
        ) from None
    if close is None:
        parts.append(run)
        kinds.append(0)
        return plain.end()
    if at:
        parts.append(run[:at])
        kinds.append(0)
    parts.append(text[i + at : close])
    kinds.append(3)
    return close


def _single_quoted(
    text: str, i: int, start: int, parts: list[str], kinds: list[int], *, prose: bool
) -> int:
    """Append the inside of the single-quoted string opening at ``i`` (or, with
    ``prose``, the apostrophe of prose it is: :func:`_apostrophe`); the offset after."""
    close = text.find("'", i + 1)
    if prose and _apostrophe(text, i, close):
        parts.append("'")
        kinds.append(1)
        return i + 1
    if close < 0:
        raise _SplitError("No closing quotation", start)
    parts.append(text[i + 1 : close])
    kinds.append(1)
    return close + 1


def _apostrophe(text: str, at: int, close: int) -> bool:
    """Whether the ``'`` at ``at`` (its next ``'`` at ``close``, -1 for none) is an
    apostrophe of prose: a letter before and after it, and no close on its line."""
    if not (0 < at < len(text) - 1 and text[at - 1].isalpha() and text[at + 1].isalpha()):
        return False
    # a line break before the close (searched no further than it: linear in the text)
    return close < 0 or text.find("\n", at, close) >= 0


def _double_quoted(
    text: str, i: int, start: int, parts: list[str], kinds: list[int], *, script: bool = False
) -> int:
    """Append the inside of a double-quoted string opening before ``i`` (its text as
    kind 2, an escaped ``"`` or ``\\`` as kind 1; with ``script``, also ``$`` and a
    backquote, and a backslash-newline removed, POSIX 2.2.3); the offset after its
    closing quote."""
    while True:
        stop = _DQ_STOP_RE.search(text, i)
        if stop is None:
            raise _SplitError("No closing quotation", start)
        at = stop.start()
        parts.append(text[i:at])
        kinds.append(2)
        if text[at] == '"':
            return at + 1
        if at + 1 >= len(text):
            raise _SplitError("No escaped character", start)
        escaped = text[at + 1]
        if script and escaped == "\n":
            pass
        elif escaped in ('"\\$`' if script else '"\\'):
            parts.append(escaped)
            kinds.append(1)
        else:  # shlex keeps the backslash; the pair is literal either way
            parts.append("\\" + escaped)
            kinds.append(1)
        i = at + 2


def _end_of_line(text: str, i: int, *, script: bool) -> int:
    """Where the comment at ``i`` ends: its newline (or, in a text no shell runs, the
    form feed of a joined flag line), else the text's end."""
    if script:
        stop = text.find("\n", i)
        return len(text) if stop < 0 else stop
    found = _LINE_END_RE.search(text, i)
    return len(text) if found is None else found.start()


class _Exports:
    """Variables exported so far in one text, shared by all its commands: each
    command sees the exports made before it (``upto``) without copying them, so a
    script alternating ``export``s and commands costs linear, not quadratic, work."""

    def __init__(self) -> None:
        self.serial = 0
        self.log: dict[str, list[tuple[int, _Assigned]]] = {}
        #: why any other name may be exported too (``set -a``: every later assignment
        #: is), None while only the ``export``s are
        self.any: str | None = None

    def add(self, name: str, assigned: _Assigned) -> None:
        self.log.setdefault(name, []).append((self.serial, assigned))
        self.serial += 1

    def lookup(self, name: str, upto: int) -> _Assigned | None:
        """The last export of ``name`` made before serial ``upto``."""
        entries = self.log.get(name)
        if not entries:
            return None
        index = bisect.bisect_left(entries, upto, key=lambda entry: entry[0]) - 1
        return None if index < 0 else entries[index][1]


class _Env(Mapping[str, _T]):
    """A command's environment: its own ``NAME=value`` prefixes over the exports made
    before it. ``part`` 0 gives values, 1 the (line, column) of the assignment, 2 why
    the value is not settled (None: settled)."""

    def __init__(
        self,
        exports: _Exports,
        upto: int,
        own: dict[str, _Assigned],
        part: int,
    ) -> None:
        self._exports = exports
        self._upto = upto
        self._own = own
        self._part = part

    def _entry(self, name: str) -> _Assigned | None:
        own = self._own.get(name)
        return own if own is not None else self._exports.lookup(name, self._upto)

    def __getitem__(self, name: str) -> _T:
        entry = self._entry(name)
        if entry is None:
            raise KeyError(name)
        return entry[self._part]  # type: ignore[return-value]

    def __iter__(self) -> Iterator[str]:
        yield from self._own
        for name, entries in self._exports.log.items():
            if name not in self._own and entries[0][0] < self._upto:
                yield name

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _emit(
    words: list[str],
    segments: list[Segments | None],
    lines: list[tuple[int, int]],
    commands: list[Command],
    *,
    exported: _Exports,
    shell: Shell,
    flow: Flow,
    separator: str,
) -> None:
    """Record one simple command (or an ``export``, added to ``exported``; or plain
    ``NAME=value`` assignments, shell variables for the words of later commands).
    Assignment values are expanded as one word; the command's words are expanded and
    split into fields (:meth:`Shell.fields`), each field at its word's place. What the
    command runs only on some paths, or what a builtin sets, leaves its variables
    unsettled (:class:`~specgate.inputs.shell_flow.Flow`; ``separator`` ends it).

    Raises:
        _SplitError: (``limit``) the expansion budget spent, at the word's line.
    """
    first, last, conditional = flow.enter(words, segments, shell, separator)
    try:
        _emit_expanded(
            words[first:last],
            segments[first:last],
            lines[first:last],
            commands,
            exported=exported,
            shell=shell,
            flow=flow,
            conditional=conditional,
        )
    except Overspent:
        raise _SplitError(
            f"shell-variable expansion passes its budget of {shell.allowance:,} characters "
            "for this file (its length plus 64 KiB); specgate will not read the command "
            "without its variables",
            -1,
            line=shell.line,
            limit=True,
        ) from None


def _set(shell: Shell, flow: Flow, name: str, value: str, *, conditional: bool) -> bool:
    """Set ``name`` as a persisting assignment does; False when it is left unsettled
    instead (run on some paths only, or the name is ``readonly``)."""
    if name.endswith("+"):
        flow.settle(shell, name[:-1], "is appended to with `+=` (bash only)")
        return False
    if name == "IFS":
        shell.ifs_changed = True
    if conditional and flow.caller_chosen and name not in flow.readonly:
        # in a getopts loop or `case "$1"`: the caller's arguments choose the path, so
        # the value is theirs unless it holds the repository's own (`D=$(…)`)
        taint = shell.tainted.get(name)
        why = "is set on paths the deployment chooses (the script's arguments or environment)"
        flow.settle(shell, name, why, from_file=taint is not None and taint[1])
        return False
    if conditional or name in flow.readonly:
        why = "is set on some paths only" if conditional else "is readonly"
        flow.settle(shell, name, why)
        return False
    shell.values[name] = value
    shell.fresh.add(name)
    return True


def _assignments(
    words: list[str],
    segments: list[Segments | None],
    lines: list[tuple[int, int]],
    own: dict[str, _Assigned],
    *,
    shell: Shell,
    flow: Flow,
    conditional: bool,
) -> int:
    """Read the ``NAME=value`` words (and redirections) a command starts with into
    ``own``; arrays are assigned, ``A[i]=`` and ``NAME+=`` leave NAME unsettled. The
    index of the first other word."""
    first = 0
    while first < len(words) and (
        _ASSIGN_RE.match(words[first])
        or _REDIRECTION_RE.match(words[first])
        or _ELEMENT_RE.match(words[first])
    ):
        shell.line = lines[first][0]
        if _REDIRECTION_RE.match(words[first]):  # `>/dev/null NAME=v`: still assigns
            first += 2 if _REDIRECTION_RE.fullmatch(words[first]) else 1
            continue
        if ARRAY_RE.match(words[first]) and segments[first] is not None:
            name = words[first].partition("=")[0].rstrip("+")
            first = assign_array(words, segments, first, shell)
            if conditional or name in flow.readonly:
                flow.settle(shell, name, "is set on some paths only")
            continue
        element = _ELEMENT_RE.match(words[first])
        if element is not None:  # A[1]=v: bash sets one element, dash runs a command
            flow.settle(shell, element.group(1), "has an element set (`A[i]=`)")
            first += 1
            continue
        name, value = _assignment(words[first], segments[first], shell)
        if name.endswith("+"):  # NAME+=v: bash appends, dash runs a command "NAME+=v"
            flow.settle(shell, name[:-1], "is appended to with `+=` (bash only)")
        else:
            own[name] = (value, lines[first], _why(shell, name))
        first += 1
    return first


def _emit_expanded(
    words: list[str],
    segments: list[Segments | None],
    lines: list[tuple[int, int]],
    commands: list[Command],
    *,
    exported: _Exports,
    shell: Shell,
    flow: Flow,
    conditional: bool,
) -> None:
    own: dict[str, _Assigned] = {}
    first = _assignments(
        words, segments, lines, own, shell=shell, flow=flow, conditional=conditional
    )
    if first >= len(words):
        _assign(own, exported, shell, flow, conditional=conditional)
        return
    shell.line = lines[first][0]
    if shell.fields(words[first], segments[first]) == ["export"] and not any(
        w.startswith(("-", "+")) for w in words[first + 1 :]
    ):
        for index in range(first + 1, len(words)):
            flow.declares("export", words[index : index + 1], segments[index : index + 1], shell)
            if _ASSIGN_RE.match(words[index]):
                shell.line = lines[index][0]
                name, value = _assignment(words[index], segments[index], shell)
                if _set(shell, flow, name, value, conditional=conditional):
                    exported.add(name, (value, lines[index], _why(shell, name)))
        return
    argv: list[str] = []
    rest: list[tuple[int, int]] = []
    unresolved: dict[int, Hit] = {}
    shell.assigned.clear()
    for index in range(first, len(words)):
        shell.line = lines[index][0]
        shell.clear()
        items = shell.fields(words[index], segments[index])
        if shell.hits and not items:  # it left no word here (`${EXTRA:-}`): it stands
            unresolved.setdefault(len(argv), shell.hits[0])  # before the next word
        for item in items:
            hit = shell.hit_of(item) if shell.hits else None
            if hit is not None:
                unresolved.setdefault(len(argv), hit)
            argv.append(item)
            rest.append(lines[index])
    shell.clear()
    if conditional:  # `: ${D:=7} &` assigns in a subshell, or on some paths only
        for name in shell.assigned:
            flow.settle(shell, name, "is set by `${…:=…}` on some paths only")
    if not argv:
        _assign(own, exported, shell, flow, conditional=conditional)
        return
    flow.assigns(argv, shell, list(own))
    flow.declares(argv[0], words[first + 1 :], segments[first + 1 :], shell)
    if conditional and argv[0] in ("set", "shift"):
        if shell.positional is not None or argv[0] == "set":  # the script's own doing
            shell.positional_why = f"the arguments, changed by `{argv[0]}` on some paths only"
        shell.positional = None  # on some paths only
        return
    if argv[0] == "set" and any(_ALLEXPORT_RE.match(w) for w in argv[1:]):
        exported.any = exported.any or "`set -a` exports every later assignment"
    if builtin(argv, shell):
        return
    if flow.no_program(argv, unresolved):
        return
    redefined = flow.redefined_hit(argv[0])
    if redefined is not None:
        unresolved.setdefault(len(argv), redefined)
    upto = exported.serial
    commands.append(
        Command(
            tuple(argv),
            _Env[str](exported, upto, own, 0),
            tuple(n for n, _ in rest),
            tuple(c for _, c in rest),
            _Env[tuple[int, int]](exported, upto, own, 1),
            unresolved,
            _Env[Hit | None](exported, upto, own, 2),
            exported.any or (f"{shell.opaque} may export any variable" if shell.opaque else None),
        )
    )


def _assign(
    own: dict[str, _Assigned], exported: _Exports, shell: Shell, flow: Flow, *,
    conditional: bool,
) -> None:
    """Plain ``NAME=value`` assignments (no command): shell variables, and the new value
    of a name exported before (bash and dash keep a variable exported when it is
    assigned again: ``export S=$V2; S=1`` gives the engine 1); one left unsettled
    (assigned on some paths only) leaves the exported value unsettled too."""
    for name, (value, at, why) in own.items():
        settled = _set(shell, flow, name, value, conditional=conditional)
        if name in exported.log:
            exported.add(name, (value, at, why if settled else _why(shell, name)))


def _why(shell: Shell, name: str) -> Hit | None:
    """The hit that leaves the value just assigned to ``name`` unsettled (it holds a
    ``$B`` from the environment, a ``$(…)``: :func:`_assignment` taints it), None when
    it is settled."""
    tainted = shell.tainted.get(name)
    return (tainted[0], False, tainted[1]) if tainted is not None else None


def _assignment(word: str, parts: Segments | None, shell: Shell) -> tuple[str, str]:
    """``NAME=value`` → (NAME, the value expanded as one word)."""
    name, _, value = word.partition("=")
    if parts is None:  # nothing expanded: the value as written, settled
        shell.tainted.pop(name, None)
        return name, value
    # drop "NAME=" from the parts (it stands, unquoted, at the start of the first)
    shell.clear()
    joined = shell.joined(value, dropped(parts, len(name) + 1))
    if shell.hits:  # X=$Y, X=$(cmd): what X holds is not settled here
        # the unsettled texts left in the value as written mark the fields they reach
        kept = tuple(t for t in shell.hit_shown if t and t in joined)
        # a text with blanks is split across fields when the name is expanded unquoted:
        # then it marks no field and the whole word is unsettled
        whole = len(kept) == len(shell.hits) and not any(_BLANK_RE.search(t) for t in kept)
        refs = kept if whole else None
        from_file = any(hit[2] for hit in shell.hits)
        # where: the script's own line (the file's, for a whole-file script)
        why = f"{name} is set on line {shell.line + 1} of the script from {shell.hits[0][0]}"
        shell.tainted[name] = (why, from_file, refs)
    else:
        shell.tainted.pop(name, None)
    shell.clear()
    return name, joined
