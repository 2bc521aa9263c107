"""Where a Python launcher's keyword value is set (specgate.load.python_values), worked
by hand from Python's semantics; Python itself checks the same forms in
tests/oracle/test_value_origin.py."""

from __future__ import annotations

import ast

import pytest

from specgate.load import python_values
from specgate.load.python_launcher import load_python_launcher
from specgate.load.python_values import Origins, Part, origin_of


def value(source: str) -> tuple[str, object]:
    """The origin of the last line's expression, in the module of every line."""
    tree = ast.parse(source)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    return origin_of(last.value, tree)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\nos.environ['D']", ("outside", "os.environ['D']")),
        ("import os as o\no.getenv('D')", ("outside", "o.getenv('D')")),
        ("from os import environ as e\ne.get('D', None)", ("outside", "e.get('D', None)")),
        ("import sys\nsys.argv[2]", ("outside", "sys.argv[2]")),
        ("import os\nD = os.environ['D']\nE = D\nE", ("outside", "os.environ['D']")),
        # a default written in the file is what Python gives when the environment is empty
        ("import os\nint(os.getenv('D', '7'))", ("settled", 7)),
        ("import os\nos.environ.get('D', default=3)", ("settled", 3)),
        ("import os\n{'method': 'ngram', 'k': int(os.getenv('D', '2'))}",
         ("settled", {"method": "ngram", "k": 2})),
        ("import os\n{'k': os.environ['D'], 'm': 'ngram'}", ("outside", "os.environ['D']")),
        # the repository's: calls, names bound twice or in a function, re-binding routes
        ("import os\nint(os.getenv('D', 'x'))", ("repository", None)),  # int('x') raises
        ("import os\nos.getenv('D', default_d())", ("repository", None)),
        ("def f():\n    return 3\nf()", ("repository", None)),
        ("import os\nD = os.environ['D']\nD = 3\nD", ("repository", None)),
        ("import os\nD = os.environ['D']\ndef g():\n    global D\n    D = 3\nD",
         ("repository", None)),
        ("D = 4\nglobals()['D'] = 7\nD", ("repository", None)),
        # a dict bound once and read once: what Python passes (D8)
        ("S = {'k': 4}\nS", ("settled", {"k": 4})),
        ("S = dict(k=4, m='x')\nS", ("settled", {"k": 4, "m": "x"})),
        ("dict(k=4)", ("settled", {"k": 4})),
        # a dict changed in place, or read elsewhere (which may change it): not settled
        ("S = {'k': 4}\nS['k'] = 7\nS", ("repository", None)),
        ("S = {'k': 4}\nS.update(k=7)\nS", ("repository", None)),
        ("S = {'k': 4}\nprint(S)\nS", ("repository", None)),
        # dict shadowed, re-bound or reachable through builtins: not the builtin
        ("dict = lambda **k: {}\ndict(k=4)", ("repository", None)),
        ("def dict(**k):\n    return {}\ndict(k=4)", ("repository", None)),
        ("from collections import OrderedDict as dict\ndict(k=4)", ("repository", None)),
        ("import builtins\nbuiltins.dict = list\ndict(k=4)", ("repository", None)),
        ("dict({'k': 4})", ("repository", None)),  # a positional argument: not followed
        ("import os\ndict(k=os.environ['D'])", ("outside", "os.environ['D']")),
        ("import argparse\nargs = argparse.ArgumentParser().parse_args()\nargs.d",
         ("repository", None)),
        ("environ = {'D': 3}\nenviron['D']", ("repository", None)),  # not os.environ
        ("D = 6\nD", ("settled", 6)),
    ],
)
def test_origin_worked_by_hand(source: str, expected: tuple[str, object]) -> None:
    assert value(source) == expected


def test_the_module_is_walked_once_however_many_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []
    real = python_values._Origins

    def counting(tree: ast.Module) -> python_values._Origins:
        built.append(tree)
        return real(tree)

    monkeypatch.setattr(python_values, "_Origins", counting)
    keywords = ", ".join(f"speculative_k{i}=int(os.getenv('D', '{i}'))" for i in range(200))
    doc = load_python_launcher(f"import os\nfrom vllm import LLM\nLLM(model='m', {keywords})\n",
                               "serve.py")
    assert isinstance(doc.data, dict) and doc.data["speculative_k199"] == 199
    assert len(built) == 1


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # the read, its line, and the outermost name the last line reaches it through
        ("import os\nD = os.environ['D']\nE = D\nE", ("outside", Part("os.environ['D']", 2, "E"))),
        ("import sys\nint(sys.argv[2])", ("outside", Part("sys.argv[2]", 2))),
        ("import os\nDRAFT = os.environ['DRAFT']\n{'method': 'draft_model', 'model': DRAFT}",
         ("outside", Part("os.environ['DRAFT']", 2, "DRAFT"))),
        ("def pick():\n    return 4\n{'method': 'ngram', 'k': pick()}",
         ("repository", Part("pick()", 3))),
        ("import os\nD = os.environ['D']\nD = 3\nD", ("repository", Part("D", 4))),
        ("D = 6\nD", ("settled", None)),
    ],
)
def test_the_part_that_decides_is_named(source: str, expected: tuple[str, Part | None]) -> None:
    tree = ast.parse(source)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    kind, _, part = Origins(tree).verdict(last.value)
    assert (kind, part) == expected
