"""Flags of an engine's command line parsed as its parser reads them.

:func:`parse_flags` turns argv words into ``{canonical long flag: Flag}`` using a
:class:`FlagSpec` (the engine's known long flags, short aliases, booleans), following
Python :mod:`argparse` (SGLang's launcher, vLLM's CLI): ``--flag value``,
``--flag=value``, boolean flags without a value, the last of a repeated flag wins,
and — when ``FlagSpec.allow_abbrev`` — a long flag may be abbreviated. Whether the
word after a flag that takes a value is that value is the engine parser's rule
(``FlagSpec.argparse_values``: argparse's, else the next word whatever it is). With the
engine's recorded parser (``FlagSpec.engine_parser``) a word is read exactly as that
parser reads it (:mod:`specgate.inputs.parsers`). Re-exported by
:mod:`specgate.inputs.cmdline`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from specgate.core.errors import InputError

if TYPE_CHECKING:
    from specgate.inputs.parsers import RecordedParser

_OPERATORS = frozenset({";", "&&", "||", "|", "&", ";;"})


@dataclass(frozen=True)
class FlagSpec:
    """What an engine's parser knows about its flags.

    Attributes:
        known: canonical long flags (``--speculative-algorithm``) → True when the
            flag takes a value, False for a boolean switch.
        aliases: other spellings (short ``-md``, alternative long ``--tp-size``) →
            their canonical long flag. Aliases are matched exactly; long aliases also
            take part in abbreviation matching.
        allow_abbrev: accept unique prefixes of long flags, as argparse does.
        underscores: read ``_`` as ``-`` in a ``--`` word's name before looking it up
            (vLLM, llama.cpp: their data's ``flag_spelling``).
        underscores_to_dot: only in the name up to its first ``.`` (vLLM's
            ``FlexibleArgumentParser``: a dotted ``--KEY.SUB`` keeps ``SUB`` as written).
        joined: flags whose repeated values add up as one comma list (llama.cpp
            ``--spec-type``); for every other flag the last occurrence wins.
        engine_parser: the engine's whole parser, when it was recorded: a loader of it
            (called only for a spelling that is not a flag name). With it, a word is read
            as the engine reads it (:meth:`specgate.inputs.parsers.RecordedParser.read`):
            a unique prefix of a flag specgate reads is that flag, of another flag it is
            skipped; one the engine refuses (an abbreviation of several of its flags or
            of none) is skipped, never read as one of them (the reader reports the
            refusal, :func:`specgate.inputs.engines.parser_refusals.parser_issues`).
    """

    known: Mapping[str, bool]
    aliases: Mapping[str, str] = field(default_factory=dict)
    allow_abbrev: bool = False
    underscores: bool = False
    underscores_to_dot: bool = False
    joined: frozenset[str] = frozenset()
    engine_parser: Callable[[], RecordedParser] | None = None
    #: the word after a flag that takes one value is that value only where argparse
    #: reads it as an argument, not an option (:func:`argparse_argument`): vLLM's and
    #: SGLang's parsers (their ``flag_spelling``: argparse). False: the next word is the
    #: value whatever it is (llama.cpp's ``common_params_parse_ex``, common/arg.cpp:
    #: ``check_arg(i)`` asks only that a word follows, then ``argv[++i]``).
    argparse_values: bool = False
    #: without ``argparse_values``: whether a word starting with ``-`` after a flag that
    #: takes a value is that value (llama.cpp: any word). False (TGI's clap without
    #: ``allow_hyphen_values`` / ``allow_negative_numbers``): clap's ``Parser::is_new_arg``
    #: reads any word starting with ``-`` but ``-`` alone as a new argument, and ``--`` as
    #: the end of options, so the flag is given no value (``missing``, ``followed_by``)
    hyphen_values: bool = True
    #: whether a flag given twice is refused (TGI's clap: ``ArgAction::Set`` without
    #: ``args_override_self``, ``Parser::react``: "the argument '--speculate <SPECULATE>'
    #: cannot be used multiple times"); False: the last occurrence wins (argparse,
    #: llama.cpp)
    repeat_refused: bool = False
    #: whether the parser reads ``--flag=value`` as the flag and its value; False
    #: (llama.cpp): the whole word is looked up, so it is no flag (the reader's SG310)
    equals: bool = True


@dataclass(frozen=True)
class Flag:
    """A parsed flag: its value (``None`` for a boolean switch), the word index of the
    flag in argv, and how it was spelled."""

    value: str | None
    index: int
    spelled: str
    #: a flag that takes a value given none (the last word, or a shell operator next):
    #: its value is None; the engine's parser refuses it (``CommandSource.options``
    #: raises a RefusedValue, docs/engines.md#refused-values)
    missing: bool = False
    #: with ``missing``: the word that follows the flag, which the engine's argparse
    #: reads as an option, not as the flag's value (``--max-model-len --seed 1``)
    followed_by: str | None = None
    #: with ``missing``: the flag given again at ``index`` where its parser refuses a
    #: repeat (``FlagSpec.repeat_refused``)
    repeated: bool = False
    #: with ``followed_by``: a word vLLM's ``FlexibleArgumentParser`` takes as a dotted
    #: argument (:func:`flexible_dotted`), not one argparse reads as an option
    dotted: bool = False


def canonical_flag(name: str, spec: FlagSpec) -> str:
    """``name`` (a flag word without ``=value``) as the engine's parser spells it before
    it looks the name up: with ``spec.underscores``, ``_`` → ``-`` in a ``--`` word
    (llama.cpp's ``common_params_parse_ex``: the whole name), up to its first ``.`` with
    ``spec.underscores_to_dot`` (vLLM's ``FlexibleArgumentParser``); the rule is the
    engine's data (``flag_spelling``, docs/engines.md#flag-spellings)."""
    if not (spec.underscores and name.startswith("--")):
        return name
    if spec.underscores_to_dot:
        head, dot, rest = name[2:].partition(".")
        return "--" + head.replace("_", "-") + dot + rest
    return "--" + name[2:].replace("_", "-")


def resolve_flag(
    word: str, spec: FlagSpec, *, file: str | None = None, line: int | None = None
) -> str | None:
    """The canonical long flag ``word`` (without any ``=value``) stands for, or None.

    Exact names and aliases win; then, with ``spec.allow_abbrev``, a long flag that is
    a unique prefix of the known long names (canonical and long aliases).

    Raises:
        InputError: an abbreviation matching several flags (argparse: "ambiguous
            option"), for an engine whose parser was not recorded (``engine_parser``).
    """
    return _resolve(word, spec, _tables(spec), file=file, line=line)


@dataclass
class _Tables:
    """``spec``'s long flags and aliases by their canonical spelling, built once per
    argv (not once per word); the sorted prefix indexes are built at the first word
    that is not an exact flag, so an argv of known flags never loads the engine's
    recorded option list."""

    known: dict[str, str]
    aliases: dict[str, str]
    #: (canonical spelling, position, the flag it stands for), sorted; the position
    #: orders known flags before aliases, each in its table's order
    names: list[tuple[str, int, str]] | None = None


def _tables(spec: FlagSpec) -> _Tables:
    known = {canonical_flag(k, spec): k for k in spec.known}
    aliases = {canonical_flag(a, spec): c for a, c in spec.aliases.items()}
    return _Tables(known, aliases)


_Entry = TypeVar("_Entry", tuple[str, str], tuple[str, int, str])


def _prefixed(index: list[_Entry], name: str) -> Iterator[_Entry]:
    """The entries of the sorted ``index`` whose first field starts with ``name``, in
    index order: a binary search, then a walk over the matches only (a command line
    of 40,000 unknown flags costs 40,000 searches, not 40,000 scans of every option)."""
    for position in range(bisect.bisect_left(index, (name,)), len(index)):
        entry = index[position]
        if not entry[0].startswith(name):
            return
        yield entry


def _resolve(
    word: str,
    spec: FlagSpec,
    tables: _Tables,
    *,
    file: str | None,
    line: int | None,
) -> str | None:
    name = canonical_flag(word, spec)
    known, aliases = tables.known, tables.aliases
    if name in known:
        return known[name]
    if name in aliases:
        return aliases[name]
    if not (spec.allow_abbrev and name.startswith("--") and len(name) > 2):
        return None
    if spec.engine_parser is not None:
        answer, found = spec.engine_parser().read(name)
        if answer != "flag":
            return None  # refused by the engine (reported by the reader) or not an option
        option = canonical_flag(found[0], spec)
        return known.get(option) or aliases.get(option)
    if tables.names is None:
        pairs = [*known.items(), *aliases.items()]
        tables.names = sorted((spelled, i, flag) for i, (spelled, flag) in enumerate(pairs))
    matches: dict[str, str] = {}
    # in table order, as a scan over known flags then aliases finds them
    for spelled, _, canonical in sorted(_prefixed(tables.names, name), key=lambda e: e[1]):
        matches.setdefault(canonical, spelled)
    if len(matches) > 1:
        choices = ", ".join(sorted(matches.values()))
        raise InputError(f"ambiguous option: {word} could match {choices}", file, line)
    return next(iter(matches), None)


def parse_flags(
    argv: Sequence[str],
    spec: FlagSpec,
    *,
    file: str | None = None,
    lines: Sequence[int] | None = None,
    line: int | None = None,
) -> dict[str, Flag]:
    """Parse argv words into the flags ``spec`` knows.

    Args:
        argv: words (program name and positionals may be included; they are skipped).
        spec: the engine's flags.
        file, lines, line: for messages: per-word 0-based line offsets added to ``line``.

    Returns:
        canonical long flag → :class:`Flag` (the last occurrence). Unknown flags are
        skipped together with a following word that does not start with ``-``; words
        after ``--`` are positional arguments, never flags (argparse, click).

    Raises:
        InputError: an ambiguous abbreviation. A known flag that needs a value and has
        none (the last word, a shell operator next, or — ``spec.argparse_values`` — a
        word argparse reads as an option next) is kept with ``missing`` set (the reader
        judges it; a later occurrence does not replace it: the parser refused the
        first), not raised here: the words are also parsed to tell which engine a
        command is.
    """
    result: dict[str, Flag] = {}
    joined: dict[str, list[str]] = {}
    tables = _tables(spec)
    i = 0
    while i < len(argv):
        word = argv[i]
        where = None if line is None else line + (lines[i] if lines else 0)
        if word == "--":
            break  # argparse and click: every word after it is a positional argument
        if not word.startswith("-") or word == "-" or _is_number(word):
            i += 1
            continue
        name, eq, inline = word.partition("=")
        if eq and not spec.equals:
            i += 1  # llama.cpp: "invalid argument: --draft-max=8" (settings.unknown_spellings)
            continue
        canonical = _resolve(name, spec, tables, file=file, line=where)
        if canonical is None:
            step = 2 if not eq and i + 1 < len(argv) and not argv[i + 1].startswith("-") else 1
            i += step
            continue
        if canonical in result and result[canonical].missing:
            i += 1  # the parser stopped at the first: a later value does not mend it
            continue
        if canonical in result and spec.repeat_refused:
            # clap: "the argument '--speculate <SPECULATE>' cannot be used multiple times"
            result[canonical] = Flag(None, i, name, missing=True, repeated=True)
            i += 1
            continue
        takes_value = spec.known[canonical]
        if not takes_value:
            result[canonical] = Flag(inline if eq else None, i, name)
            i += 1
            continue
        refused = None if eq else _without_value(argv, i, name, spec, tables)
        if refused is not None:
            result[canonical] = refused
            i += 1
            continue
        value, step = (inline, 1) if eq else (argv[i + 1], 2)
        if canonical in spec.joined and canonical in result:
            # the lists add up (joined once at the end: linear in the words); the first
            # occurrence keeps its place (line)
            joined.setdefault(canonical, [str(result[canonical].value)]).append(value)
        else:
            result[canonical] = Flag(value, i, name)
        i += step
    for canonical, values in joined.items():
        first = result[canonical]
        result[canonical] = Flag(",".join(values), first.index, first.spelled)
    return result


def _without_value(
    argv: Sequence[str], i: int, name: str, spec: FlagSpec, tables: _Tables
) -> Flag | None:
    """The flag ``argv[i]`` (spelled ``name``, taking one value, no ``=``) kept as missing
    when the engine's parser gives it no value, else None (the next word is its value)."""
    if i + 1 >= len(argv) or argv[i + 1] in _OPERATORS:
        return Flag(None, i, name, missing=True)
    word = argv[i + 1]
    if spec.argparse_values:
        # argparse: "argument X: expected one argument"; the word is read as a flag next
        # (vLLM: a dotted argument, taking the word after it)
        argument = argparse_argument(word, spec, tables)
        if argument and not (spec.underscores_to_dot and flexible_dotted(word)):
            return None
        return Flag(None, i, name, missing=True, followed_by=word, dotted=argument)
    if not spec.hyphen_values and word.startswith("-") and word != "-":
        # clap: "a value is required for '--speculate <SPECULATE>' but none was supplied"
        return Flag(None, i, name, missing=True, followed_by=word)
    return None


def refused_equals(argv: Sequence[str], spec: FlagSpec) -> dict[str, Flag]:
    """The flags ``argv`` writes as ``--flag=value`` (``-md=x``) where the engine's parser
    has no such form (``spec.equals`` False, llama.cpp: common/arg.cpp@145b6280 looks the
    whole word up in ``arg_to_options`` and throws "error: invalid argument: %s"), as
    canonical flag → :class:`Flag` with the text after ``=``: what the word meant, for a
    detector to find the configuration it names (the reader reports the refusal at the
    word: ``settings.unknown_spellings``). Never a value the engine reads. Empty when the
    parser reads ``=``."""
    out: dict[str, Flag] = {}
    if spec.equals:
        return out
    tables = _tables(spec)
    for index, word in enumerate(argv):
        if word == "--":
            break
        name, eq, inline = word.partition("=")
        if not (eq and name.startswith("-")):
            continue
        canonical = _resolve(name, spec, tables, file=None, line=None)
        if canonical is not None:
            out.setdefault(canonical, Flag(inline, index, name))
    return out


def argparse_argument(word: str, spec: FlagSpec, tables: _Tables | None = None) -> bool:
    r"""Whether Python's argparse reads ``word`` as an argument (a value), not an option,
    after a flag that takes one value, as ``ArgumentParser._parse_known_args`` classes
    each word (``python/cpython:Lib/argparse.py`` at v3.11.7, the engines' recorded
    interpreter: ``_parse_optional`` None is an argument, "A"):

    - ``--`` is never one (every word after it is; a flag before it has no value);
    - an empty word, one not starting with ``-``, and ``-`` alone are;
    - an option string, ``OPTION=value``, or a unique abbreviation of an option is an
      option (several: "ambiguous option", refused); so is any other ``-`` word
      ("unrecognized arguments", or "expected one argument" for the flag before it),
    - except one shaped like a negative number (``_negative_number_matcher``:
      ``^-\d+$|^-\d*\.\d+$``, ``-5``, ``-.5``; not ``-1e3``) while the parser has no
      option so shaped (``_has_negative_number_optionals``), or one holding a space.

    With the engine's recorded parser (``spec.engine_parser``) every option string is
    known (:meth:`specgate.inputs.parsers.RecordedParser.read`); without it, the options
    specgate knows stand for the parser's (a word with a space that starts with a short
    option specgate does not know is read as an argument).
    """
    if word == "--":
        return False
    if not word.startswith("-") or word == "-":
        return True
    if spec.engine_parser is not None:
        return spec.engine_parser().read(word)[0] == "positional"
    from specgate.inputs.parsers import NEGATIVE_NUMBER

    tables = tables or _tables(spec)
    names = {**tables.known, **tables.aliases}
    spelled = canonical_flag(word, spec)
    head = spelled.partition("=")[0]
    if spelled in names or head in names:
        return False
    if NEGATIVE_NUMBER.match(word):
        return not any(NEGATIVE_NUMBER.match(name) for name in names)
    if " " in word:
        return not (word[1] != "-" and word[:2] in names)
    return False


def flexible_dotted(word: str) -> bool:
    """Whether vLLM's ``FlexibleArgumentParser.parse_args`` takes ``word`` as a dotted
    argument (``-KEY.SUB [VALUE]``) before argparse sees it: it starts with ``-`` and holds
    a ``.`` in the text before its first ``=`` (the whole word without one), as
    ``vllm/utils/argparse_utils.py`` at v0.32.0 tests ``processed_arg.startswith("-") and
    "." in processed_arg``, dropping a ``KEY=VALUE`` whose ``KEY`` has no ``.``. So
    ``--max-model-len -1.5`` gives the flag no value (vLLM 0.32.0 asked: an IndexError as
    the last word, else "unrecognized arguments"); the flag spelling's ``name-before-dot``
    rule is this parser's (docs/engines.md#flag-spellings)."""
    return word.startswith("-") and "." in word.partition("=")[0]


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True
