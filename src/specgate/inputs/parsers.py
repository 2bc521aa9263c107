"""The engines' command-line parsers as recorded by running them (docs/engines.md#flag-spellings).

``scripts/record_engine_parsers.py`` builds the parser an engine's server uses (vLLM:
``FlexibleArgumentParser`` with the ``vllm serve`` subcommand; SGLang: ``argparse`` with
``ServerArgs.add_cli_args``) in the engine's own environment and writes
``specgate/data/engines/parsers/ENGINE-VERSION.json``: ``allow_abbrev``, whether ``_``
is read as ``-`` (vLLM's ``FlexibleArgumentParser``), the Python it ran on, and every long
option string (``[option, takes a value, dest]``, in the parser's order: the order
argparse names an ambiguous option's matches in).
The files are read only when a command line holds a spelling that is not a flag name
(``@cache``: at most once per version), so a check of exact spellings loads none.

How a word is read, in two steps, each as the engine's own code does it:

1. The engine's spelling rewrite, before argparse sees the word. vLLM's
   ``FlexibleArgumentParser.parse_args`` replaces ``_`` by ``-`` in a ``--`` word's name:
   the whole name before ``=`` at 0.6.1 (``vllm-project/vllm:vllm/utils.py@v0.6.1``), the
   name up to its first ``.`` (dotted ``--json-arg.key`` words keep their keys) at 0.27.1
   and 0.32.0 (``vllm-project/vllm:vllm/utils/argparse_utils.py@v0.27.1`` and
   ``@v0.32.0``, regex ``(?<=--)[^\\.]*``). SGLang passes words to argparse as written.
2. Python's ``argparse`` (``ArgumentParser._parse_optional`` and ``_get_option_tuples``,
   ``python/cpython:Lib/argparse.py``): an option string → that flag; ``NAME=value``
   whose ``NAME`` is one → that flag; else, with ``allow_abbrev``, every option string
   the word's prefix starts (a ``--`` word's prefix is the text before ``=``) is a
   match: one match → that flag, several → refused ("ambiguous option: X could match
   A, B" — option strings, not actions, are counted, in the parser's order), none →
   "unrecognized arguments" (a word holding a space, or shaped like a negative number,
   is a positional argument instead). A single-dash word (``-tp``) also matches the
   short option of its first two characters; its prefix is the whole word up to
   Python 3.12.6 and 3.13.0, the text before ``=`` from 3.12.7 and 3.13.1 (gh-124345,
   backports GH-124754 and GH-124753, merged 2024-09-29; 3.13.0 read here has the old
   rule, the 3.12.7 boundary is taken from the merge date, not from a 3.12.7 build).
   The engines' recorded interpreter (3.11.7) has the former. Double-dash words are
   read alike by every Python read (3.10 to 3.13 and the main branch).

The recorded answers (tests/data/engine_oracle/parser-*.json) are replayed against
:meth:`RecordedParser.read`, and random prefixes against a real ``argparse`` parser built
from the recorded option strings (tests/oracle/test_parser_prefixes.py).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Literal

from specgate.core.data import read_data

#: argparse's ``_negative_number_matcher`` (``python/cpython:Lib/argparse.py`` at v3.11.7,
#: the engines' recorded interpreter; no engine has an option so shaped).
NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")

Answer = Literal["flag", "ambiguous", "unrecognized", "positional"]

#: The first Python of each line whose argparse splits a single-dash word at ``=`` before
#: matching prefixes (gh-124345); lines after 3.13 have it from their first release.
_SINGLE_DASH_EQUALS: dict[tuple[int, ...], tuple[int, ...]] = {
    (3, 12): (3, 12, 7),
    (3, 13): (3, 13, 1),
}


def engine_spelling(word: str, underscores: bool) -> str:
    """``word`` as the engine's parser hands it to argparse: with ``underscores`` (vLLM's
    ``FlexibleArgumentParser``), ``_`` → ``-`` in a ``--`` word's name before its first
    ``.`` and ``=``; otherwise unchanged. Sources: the module doc."""
    if not underscores or not word.startswith("--"):
        return word
    name, eq, value = word.partition("=")
    head, dot, rest = name[2:].partition(".")
    return "--" + head.replace("_", "-") + dot + rest + eq + value


def splits_single_dash_at_equals(python: tuple[int, ...]) -> bool:
    """Whether argparse of Python ``python`` (major, minor, micro) reads ``-opt=value``
    as the prefix ``-opt`` with a value (gh-124345), not as the prefix ``-opt=value``."""
    first = _SINGLE_DASH_EQUALS.get(tuple(python[:2]))
    if first is not None:
        return tuple(python[:3]) >= first
    return tuple(python[:2]) > (3, 13)


@dataclass(frozen=True)
class RecordedParser:
    """One engine version's parser: its option strings (→ whether each takes a value),
    ``allow_abbrev``, ``underscores`` (``_`` read as ``-``), the Python version it ran on
    (``python``: major, minor, micro), and where it was recorded (``source``: file and
    version)."""

    engine: str
    version: str
    options: Mapping[str, bool]
    allow_abbrev: bool
    underscores: bool
    source: str
    python: tuple[int, ...] = (3, 11, 7)
    #: The command's positional arguments, ``(dest, nargs)`` as argparse holds them
    #: (``vllm serve``: ``(("model_tag", "?"),)``); None where the parser was recorded
    #: before the recorder kept them.
    positionals: tuple[tuple[str, object], ...] | None = None
    #: The long options whose action takes not exactly one value or none, option →
    #: ``nargs`` (``"+"``, ``"*"``, ``"?"``, a count); None where the parser was recorded
    #: before the recorder kept them. vLLM 0.33.0: fifteen ``"+"`` and ``--hf-token`` ``"?"``.
    nargs: Mapping[str, object] | None = None

    def positional_words(self) -> int | None:
        """How many positional words the command takes at most (``nargs`` None or
        ``"?"``: 1; a count: that many), None when it is not known (not recorded) or has
        no bound (``"*"``, ``"+"``, ``"..."``)."""
        if self.positionals is None:
            return None
        total = 0
        for _dest, nargs in self.positionals:
            if nargs is None or nargs == "?":
                total += 1
            elif isinstance(nargs, int) and not isinstance(nargs, bool) and nargs >= 0:
                total += nargs
            else:
                return None
        return total

    def read(self, word: str) -> tuple[Answer, tuple[str, ...]]:
        """How the parser reads the command-line word ``word`` (``=value`` included or
        not): ``("flag", (option,))``, ``("ambiguous", options it could match, in the
        parser's order)``, ``("unrecognized", ())`` (argparse: "unrecognized
        arguments") or ``("positional", ())`` (not an option to argparse)."""
        arg = engine_spelling(word, self.underscores)
        options = self.options
        if not arg or arg[0] != "-":
            return "positional", ()
        if arg in options:
            return "flag", (arg,)
        if len(arg) == 1:
            return "positional", ()
        head, eq, _ = arg.partition("=")
        if eq and head in options:
            return "flag", (head,)
        matches = self._tuples(arg)
        if len(matches) > 1:
            return "ambiguous", matches
        if matches:
            return "flag", matches
        if NEGATIVE_NUMBER.match(arg) or " " in arg:
            return "positional", ()
        return "unrecognized", ()

    @cached_property
    def _index(self) -> list[tuple[str, int]]:
        """(option string, position in the parser), sorted: a prefix's matches are one
        run of it (a binary search per word, not a scan of every option)."""
        return sorted((option, i) for i, option in enumerate(self.options))

    def _prefixed(self, prefix: str) -> list[tuple[int, str]]:
        index = self._index
        out: list[tuple[int, str]] = []
        for position in range(bisect.bisect_left(index, (prefix, -1)), len(index)):
            option, i = index[position]
            if not option.startswith(prefix):
                break
            out.append((i, option))
        return out

    def _tuples(self, arg: str) -> tuple[str, ...]:
        """argparse's ``_get_option_tuples``: the option strings ``arg`` may stand for,
        in the parser's order."""
        if arg[1] == "-":
            if not self.allow_abbrev:
                return ()
            return tuple(option for _, option in sorted(self._prefixed(arg.partition("=")[0])))
        new = splits_single_dash_at_equals(self.python)
        prefix = arg.partition("=")[0] if new else arg
        short = arg[:2]
        found = dict(self._prefixed(prefix)) if self.allow_abbrev or not new else {}
        # gh-104860: before it, a single-dash word was abbreviated even without allow_abbrev
        if short in self.options:
            found[list(self.options).index(short)] = short
        return tuple(option for _, option in sorted(found.items()))


@cache
def recorded_parser(engine: str, version: str) -> RecordedParser:
    """The parser of ``engine`` at ``version`` (``data/engines/parsers/``).

    Raises:
        OSError: no parser was recorded at that version (a programming error: the
            engine's data lists the versions recorded).
    """
    raw = json.loads(read_data(f"engines/parsers/{engine}-{version}.json"))
    source = raw["source"]
    return RecordedParser(
        engine=engine,
        version=version,
        options={name: bool(value) for name, value, _dest in raw["options"]},
        allow_abbrev=bool(raw["allow_abbrev"]),
        underscores=bool(raw["underscores"]),
        source=f"{source['file']} at {source['ref']}, the parser run by "
        "scripts/record_engine_parsers.py",
        python=tuple(int(part) for part in str(raw["python"]).split(".")[:3]),
        positionals=tuple((str(dest), nargs) for dest, nargs in raw["positionals"])
        if isinstance(raw.get("positionals"), list)
        else None,
        nargs={str(option): nargs for option, nargs in raw["nargs"]}
        if isinstance(raw.get("nargs"), list)
        else None,
    )
