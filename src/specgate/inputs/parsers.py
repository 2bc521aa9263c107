"""The engines' command-line parsers as recorded by running them (docs/engines.md#flag-spellings).

``scripts/record_engine_parsers.py`` builds the parser an engine's server uses (vLLM:
``FlexibleArgumentParser`` with the ``vllm serve`` subcommand; SGLang: ``argparse`` with
``ServerArgs.add_cli_args``) in the engine's own environment and writes
``specgate/data/engines/parsers/ENGINE-VERSION.json``: ``allow_abbrev``, whether ``_``
is read as ``-`` (vLLM's ``FlexibleArgumentParser``), and every long option string
(``[option, takes a value, dest]``, in the parser's order: the order argparse names an
ambiguous option's matches in).
The files are read only when a command line holds a spelling that is not a flag name
(``@cache``: at most once per version), so a check of exact spellings loads none.

Python's argparse (3.11, the engines' interpreter; ``ArgumentParser._parse_optional`` and
``_get_option_tuples``) reads a long spelling that is not an option string, with
``allow_abbrev``, as the one option string it is a prefix of; a prefix of several is
refused ("ambiguous option: --X could match …"), a prefix of none is refused
("unrecognized arguments: --X …"); the text after ``=`` is the value. The recorded
answers (tests/data/engine_oracle/parser-*.json) are replayed against :meth:`read`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal

from specgate.core.data import read_data

Answer = Literal["flag", "ambiguous", "unrecognized"]


@dataclass(frozen=True)
class RecordedParser:
    """One engine version's parser: its long option strings (→ whether each takes a
    value), ``allow_abbrev``, ``underscores`` (``_`` read as ``-``), and where it was
    recorded (``source``: file and version)."""

    engine: str
    version: str
    options: Mapping[str, bool]
    allow_abbrev: bool
    underscores: bool
    source: str

    def read(self, word: str) -> tuple[Answer, tuple[str, ...]]:
        """How the parser reads the long spelling ``word`` (without ``=value``):
        ``("flag", (option,))``, ``("ambiguous", options it could match)`` or
        ``("unrecognized", ())``."""
        name = word
        if self.underscores and name.startswith("--"):
            name = "--" + name[2:].replace("_", "-")
        if name in self.options:
            return "flag", (name,)
        if not self.allow_abbrev or not name.startswith("--") or len(name) <= 2:
            return "unrecognized", ()
        matches = tuple(option for option in self.options if option.startswith(name))
        if len(matches) == 1:
            return "flag", matches
        if matches:
            return "ambiguous", matches
        return "unrecognized", ()


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
    )
