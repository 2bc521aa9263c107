"""Positional words after a command's options that its engine refuses (trial3/15;
docs/engines.md#containers).

``vllm serve MODEL --speculative-config '{…}' # D tuned`` (a Compose ``command: >``
whose ``#`` is text: compose-go splits a string command with go-shellwords, which has no
comments) gives vLLM the words ``#``, ``D``, ``tuned`` after the options. argparse
(``python/cpython:Lib/argparse.py``, ``_parse_known_args``) consumes each option's
values by its ``nargs``; the positional words left over once the command's positionals
are filled (``model_tag``, ``nargs="?"``, taken by the leading ``MODEL``) are extras,
and vLLM's ``parse_args`` stops: "error: unrecognized arguments: # D tuned".

The walk is judged only where every step is known: the leading words fill the
positionals exactly; each option word is one the recorded parser at the version in force
names exactly or by its prefix (:class:`~specgate.inputs.parsers.RecordedParser`), its
``nargs`` the same in every recorded parser that kept ``nargs`` (1, ``"?"`` or a count:
``"+"``, ``"*"`` take every word after them, so nothing is judged), its values no word
starting with ``-``; no ``--``, no ``--config`` (FlexibleArgumentParser reads the file's
arguments in), no dotted ``--a.b`` word, no ``-O`` word (both rewritten before argparse),
and no word that may stand for several or none. Else nothing is said.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from specgate.inputs.knowledge import knowledge
from specgate.inputs.parsers import RecordedParser, engine_spelling, recorded_parser

#: At most this many words are walked (a command is short; past it, nothing is judged).
_WORDS = 512
#: FlexibleArgumentParser options that bring in arguments of their own.
_EXPANDING = frozenset({"--config"})


@cache
def _nargs(engine: str, option: str) -> object:
    """The ``nargs`` of ``option`` in every recorded parser of ``engine`` that kept
    ``nargs`` and names it (absent from the map: exactly one value), or ``"?!"`` when
    they differ or none names it."""
    seen: set[str] = set()
    for version in knowledge(engine).parser_versions:
        parser = recorded_parser(engine, version)
        if parser.nargs is None or option not in parser.options:
            continue
        seen.add(repr(parser.nargs.get(option, 1)))
    if len(seen) != 1:
        return "?!"
    (only,) = seen
    return {"1": 1, "'?'": "?"}.get(only, "*" if not only.isdigit() else int(only))


def _parser(engine: str, version: str | None) -> RecordedParser | None:
    data = knowledge(engine)
    if version is None or version not in data.parser_versions:
        return None
    return recorded_parser(engine, version)


def trailing_extras(
    engine: str, argv: Sequence[str], first_option: int, version: str | None
) -> list[int] | None:
    """The indices in ``argv`` of the positional words after its options (from
    ``first_option``, the first word starting with ``-``) that no option takes, when the
    walk is judged (module doc); None otherwise. The caller has checked that the
    leading words fill the command's positionals."""
    parser = _parser(engine, version)
    if parser is None or len(argv) > _WORDS:
        return None
    extras: list[int] = []
    i = first_option
    while i < len(argv):
        word = argv[i]
        if not word or any(c in word for c in "$`*?") or word.startswith("-O") or word == "--":
            return None
        answer, options = parser.read(word)
        if answer == "positional":
            if word.startswith("-"):
                return None  # a negative number or a word with a space: not judged
            extras.append(i)
            i += 1
            continue
        if answer != "flag":
            return None  # refused as such elsewhere, or not read
        option = options[0]
        spelled = engine_spelling(word, parser.underscores)
        if option in _EXPANDING or "." in spelled.partition("=")[0]:
            return None
        if "=" in spelled or not parser.options[option]:
            i += 1
            continue
        taken = _taken(_nargs(engine, option), argv, i + 1)
        if taken is None:
            return None
        i += 1 + taken
    return extras


def _taken(nargs: object, argv: Sequence[str], at: int) -> int | None:
    """How many words after an option its ``nargs`` takes, None when not judged."""
    def plain(index: int) -> bool:
        return index < len(argv) and not argv[index].startswith("-")

    if nargs == 1:
        return 1 if plain(at) else None
    if nargs == "?":
        return 1 if plain(at) else 0
    if isinstance(nargs, int) and 0 <= nargs <= 16:
        return nargs if all(plain(at + k) for k in range(nargs)) else None
    return None
