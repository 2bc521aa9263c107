"""The served model after flags that take several words, read by specgate and by a real
``argparse`` parser (differential test; docs/engines.md#command-lines-and-launchers).

vLLM's own ``vllm serve`` parser (0.33.0: ``FlexibleArgumentParser`` with the serve
subcommand, built as scripts/record_engine_parsers.py builds it, run in vllm 0.33.0 on
2026-12-03) was asked which options' actions have ``nargs`` '+', '*' or a count above 1:
the fifteen of :data:`MANY`, every one '+' (``--hf-token`` is '?': one word at most).
argparse's '+' takes every following word it reads as an argument (``A+``, greedy), so
``vllm serve --lora-target-modules q_proj v_proj`` serves no positional model: argparse
gives ``model_tag`` nothing (``lora_target_modules = ['q_proj', 'v_proj']``); specgate
read ``v_proj`` as the model, because its table took one word for the flag.

The oracle is the interpreter running the test: an ``argparse.ArgumentParser`` with every
option string of the recorded 0.33.0 parser (data/engines/parsers/vllm-0.33.0.json), a
switch where it takes no value, ``nargs='+'`` for :data:`MANY`, one value otherwise, and
``vllm serve``'s one positional ``model_tag`` (``nargs='?'``). For every command it parses,
:func:`specgate.inputs.engines.target.interspersed_model` names its ``model_tag`` word, or
None (unsettled: an option whose arity specgate's table does not know), never another
word. Commands argparse refuses are not compared (the server does not start).
"""

from __future__ import annotations

import argparse
import random
from typing import NoReturn

from specgate.inputs.engines import target
from specgate.inputs.parsers import recorded_parser

#: vLLM 0.33.0's options whose action takes several words (asked of the parser, above)
MANY = (
    "--lora-modules", "--api-key", "--allowed-media-domains", "--served-model-name",
    "--sleep-preserve-parameter-names", "--logits-processors", "--ignore-patterns",
    "--numa-bind-nodes", "--numa-bind-cpus", "--kv-cache-dtype-skip-layers",
    "--cpu-offload-params", "--offload-params", "--lora-target-modules",
    "--collect-detailed-traces", "--cudagraph-capture-sizes",
)
SEED = 24
COMMANDS = 6000


class _Raising(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _serve() -> _Raising:
    parser = recorded_parser("vllm", "0.33.0")
    real = _Raising(prog="vllm serve", add_help=False, allow_abbrev=False)
    real.add_argument("model_tag", nargs="?")
    for i, (option, takes) in enumerate(parser.options.items()):
        if option == "--help":
            continue
        if not takes:
            real.add_argument(option, dest=f"o{i}", action="store_true")
        elif option in MANY:
            real.add_argument(option, dest=f"o{i}", nargs="+")
        else:
            real.add_argument(option, dest=f"o{i}")
    return real


def _model(real: _Raising, argv: list[str]) -> tuple[bool, str | None]:
    try:
        return True, real.parse_args(argv).model_tag
    except ValueError:
        return False, None


def test_every_many_flag_is_in_the_table() -> None:
    arity = target.arity("vllm")
    assert {f for f in MANY if arity.get(f[2:]) != "many"} == set()


def test_the_recorded_parsers_agree_with_the_table() -> None:
    # the recorder keeps each option's nargs (scripts/record_engine_parsers.py `several`):
    # 0.33.0's are the ones asked above, and every recorded '+', '*' or count above 1 of a
    # vLLM parser is `many` in cli_arity (a new release's must be added there)
    from specgate.inputs.knowledge import knowledge

    recorded = recorded_parser("vllm", "0.33.0").nargs
    assert recorded is not None
    assert {o for o, n in recorded.items() if n == "+"} == set(MANY)
    assert {o: n for o, n in recorded.items() if n != "+"} == {"--hf-token": "?"}
    arity = target.arity("vllm")
    for version in knowledge("vllm").parser_versions:
        several = recorded_parser("vllm", version).nargs or {}
        for option, nargs in several.items():
            if nargs in ("+", "*") or (isinstance(nargs, int) and nargs > 1):
                assert arity.get(option[2:]) == "many", (version, option)


def test_a_many_flag_takes_the_words_after_it() -> None:
    arity = target.arity("vllm")
    # worked by hand from argparse's 'A+' (greedy): the flag takes q_proj and v_proj
    argv = ["--lora-target-modules", "q_proj", "v_proj"]
    assert _model(_serve(), argv) == (True, None)
    assert target.interspersed_model(argv, 0, arity) is None
    # the model before the flag, or after another option, is the model
    argv = ["org/m", "--logits-processors", "a.B", "c.D", "--port", "8000"]
    assert _model(_serve(), argv) == (True, "org/m")
    assert target.interspersed_model(argv, 0, arity) == 0
    argv = ["--served-model-name", "a", "b", "--port", "8000", "org/m"]
    assert _model(_serve(), argv) == (True, "org/m")
    assert target.interspersed_model(argv, 0, arity) == 5
    # -5 is an argument to argparse (_negative_number_matcher), so the flag takes it too
    argv = ["--cudagraph-capture-sizes", "1", "-5", "org/m"]
    assert _model(_serve(), argv) == (True, None)
    assert target.interspersed_model(argv, 0, arity) is None


def _vocabulary() -> list[str]:
    parser = recorded_parser("vllm", "0.33.0")
    switches = [o for o, takes in parser.options.items() if not takes and o != "--help"][:12]
    ones = ["--port", "--max-model-len", "--seed", "--speculative-config", "--hf-token"]
    # the model words, values, and words argparse reads as arguments or options
    plain = ["org/m", "q_proj", "8", "-5", "-.5", "-1e3", "x", "-", "a.b", "-x y", "a b"]
    ones.append('--speculative-config={"method": "ngram"}')
    return [*MANY, *switches, *ones, *plain, "--"]


def test_the_model_after_many_flags_is_argparse_s() -> None:
    real, arity = _serve(), target.arity("vllm")
    words = _vocabulary()
    rng = random.Random(SEED)
    compared = 0
    for _ in range(COMMANDS):
        argv = [rng.choice(words) for _ in range(rng.randrange(1, 8))]
        if "--hf-token" in argv:
            continue  # nargs '?': specgate's table reads it as one value (target.py)
        parsed, model = _model(real, argv)
        if not parsed:
            continue
        compared += 1
        index = target.interspersed_model(argv, 0, arity)
        read = None if index is None else argv[index]
        assert read in (None, model), argv
        if read is None and model is not None:
            # only an option the table does not know (a switch read as taking a value),
            # or a - word holding a space (argparse reads it by the parser's options)
            assert any(
                (w.startswith("--") and w[2:] not in arity) or (w[:1] == "-" and " " in w)
                for w in argv
            ), argv
    assert compared > 800
