"""Random prefixes of the engines' recorded flags, read by specgate and by a real
``argparse`` parser built from the same recorded option strings (differential test).

For every parser recorded (data/engines/parsers/: vLLM 0.27.1 and 0.32.0, SGLang 0.5.23),
1,000 words per parser from a fixed seed: a prefix (3 characters or more) of one of its
long option strings, with ``=7`` appended to one in five. The interpreter running the test
is the oracle: ``argparse.ArgumentParser(allow_abbrev=…)`` with one argument per recorded
option string, asked with ``parse_known_args``. specgate must agree on every word, at
two levels: its model of the parser (:meth:`RecordedParser.read`: the option read, or
"ambiguous" with the matches argparse names, in its order) and its reading of a command
line (:func:`resolve_flag`: the flag specgate reads is the one the engine reads; a word
the engine refuses, e.g. vLLM's ``--max-`` ("could match --max-log-len,
--max-model-len, …"), is read as no flag).

The engines' recorded interpreter is 3.11.7, whose argparse reads ``--`` words as every
Python from 3.10 does; the model is built with the running interpreter's version, so the
single-dash rules it applies are those of the argparse it is compared with.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import replace
from typing import NoReturn

import pytest

from specgate.core.errors import InputError
from specgate.inputs.cmdline import FlagSpec, canonical_flag, resolve_flag
from specgate.inputs.engines import sglang, vllm
from specgate.inputs.parsers import RecordedParser, recorded_parser

RECORDED = [("vllm", "0.27.1", vllm.FLAGS), ("vllm", "0.32.0", vllm.FLAGS),
            ("sglang", "0.5.23", sglang.FLAGS)]
WORDS_PER_PARSER = 1000
SEED = 23


class _Raising(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _argparse(parser: RecordedParser) -> tuple[_Raising, list[str]]:
    options = list(parser.options)
    real = _Raising(prog=parser.engine, add_help=False, allow_abbrev=parser.allow_abbrev)
    for i, option in enumerate(options):
        # one destination per option string: the one set names the option read
        real.add_argument(option, dest=f"o{i}", nargs="?", const="", default=None)
    return real, options


def _ask(real: _Raising, options: list[str], word: str) -> tuple[str, tuple[str, ...]]:
    try:
        namespace, extras = real.parse_known_args([word])
    except ValueError as exc:
        message = str(exc)
        assert message.startswith("ambiguous option: "), message
        matches = message.split(" could match ", 1)[1]
        return "ambiguous", tuple(matches.split(", "))
    hit = [options[int(k[1:])] for k, v in vars(namespace).items() if v is not None]
    if hit:
        return "flag", tuple(hit)
    assert extras == [word]
    return "unrecognized", ()


def _words(parser: RecordedParser, rng: random.Random) -> list[str]:
    options = list(parser.options)
    words = []
    for _ in range(WORDS_PER_PARSER):
        option = rng.choice(options)
        word = option[: rng.randrange(3, len(option) + 1)]
        words.append(word + "=7" if rng.random() < 0.2 else word)
    return words


def _wanted(spec: FlagSpec, answer: tuple[str, tuple[str, ...]]) -> str | None:
    """The flag specgate should read for argparse's answer: the option's own flag when
    specgate reads it (directly or as an alias), else none."""
    kind, matches = answer
    if kind != "flag":
        return None
    option = canonical_flag(matches[0], spec)
    known = {canonical_flag(k, spec): k for k in spec.known}
    aliases = {canonical_flag(a, spec): c for a, c in spec.aliases.items()}
    return known.get(option) or aliases.get(option)


@pytest.mark.parametrize(("engine", "version", "flags"), RECORDED)
def test_specgate_reads_every_prefix_as_argparse_does(
    engine: str, version: str, flags: FlagSpec
) -> None:
    parser = replace(recorded_parser(engine, version), python=tuple(sys.version_info[:3]))
    real, options = _argparse(parser)
    spec = replace(flags, engine_parser=lambda: parser)
    rng = random.Random(f"{SEED}-{engine}-{version}")
    kinds: dict[str, int] = {}
    for word in _words(parser, rng):
        truth = _ask(real, options, word)
        kinds[truth[0]] = kinds.get(truth[0], 0) + 1
        assert parser.read(word) == truth, word
        try:
            read = resolve_flag(word.partition("=")[0], spec)
        except InputError as exc:  # pragma: no cover - a recorded parser never raises
            pytest.fail(f"{word}: {exc}")
        assert read == _wanted(spec, truth), word
    # the sample holds both kinds the engine answers: a unique prefix and an ambiguous one
    assert kinds.get("flag", 0) > 100 and kinds.get("ambiguous", 0) > 100, kinds


def test_an_ambiguous_prefix_is_read_as_no_flag() -> None:
    # vLLM 0.32.0's parser (its recorded options): "--max-" starts --max-log-len,
    # --max-model-len, --max-num-batched-tokens, …: argparse refuses it, so no value is read
    # (before: it was read as --max-model-len, the one of them specgate reads)
    parser = recorded_parser("vllm", "0.32.0")
    answer, matches = parser.read("--max-")
    assert answer == "ambiguous" and "--max-model-len" in matches and len(matches) > 2
    assert resolve_flag("--max-", vllm.FLAGS) is None
    assert resolve_flag("--max-model", vllm.FLAGS) == "--max-model-len"  # unique: --max-model-len


@pytest.mark.parametrize(
    ("python", "word", "answer"),
    [
        # a made-up parser with -tp and -tpx (single-dash long options) and --tokens
        ((3, 11, 7), "-t", ("ambiguous", ("-tp", "-tpx"))),
        ((3, 11, 7), "-tpx=4", ("flag", ("-tpx",))),  # the text before '=' is an option
        # before gh-124345 a single-dash word is not split at '=' to match prefixes:
        ((3, 11, 7), "-tpy=4", ("unrecognized", ())),
        ((3, 12, 6), "-tpy=4", ("unrecognized", ())),
        ((3, 13, 0), "-tpy=4", ("unrecognized", ())),
        ((3, 13, 0), "-tp=4", ("flag", ("-tp",))),
        # "-tpx" and "-tp" both start with "-tp": ambiguous unless exact
        ((3, 11, 7), "-tp", ("flag", ("-tp",))),
        ((3, 11, 7), "--tok=3", ("flag", ("--tokens",))),
        ((3, 11, 7), "--tok_", ("unrecognized", ())),  # SGLang-like: '_' is not '-'
        ((3, 11, 7), "-5", ("positional", ())),
        ((3, 11, 7), "--a b", ("positional", ())),
    ],
)
def test_argparse_rules_by_python_version(
    python: tuple[int, ...], word: str, answer: tuple[str, tuple[str, ...]]
) -> None:
    parser = RecordedParser(
        engine="x", version="1", options={"-tp": True, "-tpx": True, "--tokens": True},
        allow_abbrev=True, underscores=False, source="made up", python=python,
    )
    assert parser.read(word) == answer


@pytest.mark.parametrize(
    ("python", "answer"),
    [
        ((3, 11, 7), ("unrecognized", ())),  # the prefix is "-abc=4": no option starts so
        ((3, 12, 6), ("unrecognized", ())),
        ((3, 13, 0), ("unrecognized", ())),
        ((3, 12, 7), ("flag", ("-abcd",))),  # gh-124345: the prefix is "-abc"
        ((3, 13, 1), ("flag", ("-abcd",))),
        ((3, 14, 0), ("flag", ("-abcd",))),
    ],
)
def test_a_single_dash_prefix_with_a_value(
    python: tuple[int, ...], answer: tuple[str, tuple[str, ...]]
) -> None:
    parser = RecordedParser(
        engine="x", version="1", options={"-abcd": True}, allow_abbrev=True,
        underscores=False, source="made up", python=python,
    )
    assert parser.read("-abc=4") == answer


def test_single_dash_equals_split_follows_the_running_python() -> None:
    # the interpreter is the oracle: the model built with its version agrees with its argparse
    parser = RecordedParser(
        engine="x", version="1", options={"-tpx": True, "-tpy": True, "-abc": True},
        allow_abbrev=True, underscores=False, source="made up",
        python=tuple(sys.version_info[:3]),
    )
    real, options = _argparse(parser)
    for word in ("-a=1", "-ab=1", "-tp=1", "-tpx=1", "-t", "-abc", "-ab", "-x=1"):
        assert parser.read(word) == _ask(real, options, word), word
