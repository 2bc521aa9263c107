"""``speculative_config`` written as ``dict(...)`` or through a module dict (new-user defect
D8; docs/engines.md#command-lines-and-launchers). The right values are what Python passes to
``LLM`` (the keyword arguments of the call as written: ``dict(k=v)`` is ``{"k": v}``), which
tests/oracle/test_python_constants_oracle.py checks against Python itself on generated
hostile forms; each finding sits at the line the value is written on."""

from __future__ import annotations

import pytest

from specgate.core.errors import UnsettledValue
from specgate.load.python_launcher import load_python_launcher

NGRAM4 = {"method": "ngram", "num_speculative_tokens": 4}


@pytest.mark.parametrize(
    ("head", "value", "line"),
    [
        # (the script's lines before the call, the keyword's value, the line D is written on)
        ("", 'dict(method="ngram", num_speculative_tokens=4)', 2),
        ('SPEC = {\n    "method": "ngram",\n    "num_speculative_tokens": 4,\n}\n', "SPEC", 4),
        ('SPEC = dict(\n    method="ngram",\n    num_speculative_tokens=4,\n)\n', "SPEC", 4),
        ("K = 4\n", 'dict(method="ngram", num_speculative_tokens=K)', 3),
        ('BASE = dict(method="ngram", num_speculative_tokens=4)\nSPEC = BASE\n', "SPEC", 2),
    ],
)
def test_a_static_dict_is_read_at_its_lines(head: str, value: str, line: int) -> None:
    text = f"from vllm import LLM\n{head}LLM('m', speculative_config={value})\n"
    doc = load_python_launcher(text, "launch.py")
    assert isinstance(doc.data, dict) and doc.data["speculative_config"] == NGRAM4
    assert doc.locate(("speculative_config", "num_speculative_tokens")).line == line


@pytest.mark.parametrize(
    ("head", "origin", "line"),
    [
        # changed in place, or read elsewhere: Python passes another dict
        ('SPEC = {"method": "ngram", "num_speculative_tokens": 4}\n'
         'SPEC["num_speculative_tokens"] = 7\n', "repository", 4),
        ('SPEC = dict(method="ngram", num_speculative_tokens=4)\n'
         "SPEC.update(num_speculative_tokens=8)\n", "repository", 4),
        # dict shadowed or re-bound: not the builtin
        ('dict = lambda **k: {"num_speculative_tokens": 9}\n'
         'SPEC = dict(method="ngram", num_speculative_tokens=4)\n', "repository", 4),
        ("import builtins\n"
         'SPEC = dict(method="ngram", num_speculative_tokens=4)\n', "repository", 4),
    ],
)
def test_a_dict_not_settled_is_sg313_or_sg314(head: str, origin: str, line: int) -> None:
    text = f"from vllm import LLM\n{head}LLM('m', speculative_config=SPEC)\n"
    with pytest.raises(UnsettledValue) as caught:
        load_python_launcher(text, "launch.py")
    assert (caught.value.origin, caught.value.line) == (origin, line)


def test_a_key_from_the_deployment_is_deferred_alone() -> None:
    # Contract change: a key set outside the repository no longer ends the loader's
    # reading of the dict; the keys beside it are read and that key alone is deferred
    # (SG313 at its value), the engine reader deciding whether D and the method stand
    # without it (docs/engines.md#unsettled-values). End to end this D is still SG313
    # with the claims file's values: tests/inputs/test_keywise.py.
    text = ("from vllm import LLM\nimport os\n"
            'SPEC = dict(method="ngram", num_speculative_tokens=int(os.environ["D"]))\n'
            "LLM('m', speculative_config=SPEC)\n")
    doc = load_python_launcher(text, "launch.py")
    assert doc.data == {"model": "m", "speculative_config": {"method": "ngram"}}
    ((path, exc),) = doc.deferred.items()
    assert path == ("speculative_config", "num_speculative_tokens")
    # at the value as written: line 3, column 52 (1-based) is `int(`
    assert (exc.origin, exc.line, exc.column) == ("outside", 3, 52)
    assert exc.what == "os.environ['D']"
