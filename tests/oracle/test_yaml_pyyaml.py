"""PyYAML as the oracle of specgate's ``pyyaml`` dialect (issue 25: never a wrong
settled value).

vLLM's ``--config``, SGLang's ``--config`` and TensorRT-LLM's ``--extra_llm_api_options``
read their files with ``yaml.safe_load``. A generated corpus of engine configs (YAML 1.1
scalars, explicit tags, anchors and merge keys, two ``<<`` in one mapping) is read by
both; for every document specgate either reads what ``yaml.safe_load`` gives or refuses
it (an :class:`InputError`: the value is unsettled), never another value.

A fixed seed and :data:`CASES` documents in CI; ``SPECGATE_ORACLE_CASES=100000`` runs more.
"""

from __future__ import annotations

import datetime
import math
import os
import random
from typing import Any

import pytest
import yaml

from specgate.core.errors import InputError
from specgate.load.yaml_loader import load_yaml

CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "3000"))

SCALARS = [
    "010", "-010", "+010", "0", "00", "08", "09", "0o10", "0b101", "0b", "0x1F", "0x_1",
    "1_000", "1__0", "1:30", "190:20:30", "12:60", "-1:30", "7", "+7", "-0", "3.0", "1.",
    ".5", "1e3", "1.5e3", "1.5e+3", "1.5E-3", "1_0.5", "6.8523015e+5", "685.230_15e+03",
    ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "yes", "No", "on", "OFF", "y", "n", "Yes",
    "true", "False", "TRUE", "~", "null", "Null", "", "=", "abc", "eagle", "ngram",
    "'010'", '"7"', "'yes'", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "0x", "-0b1",
    "0o", "1_", "_1", "1:3a",
]
TAGS = ["!!int", "!!float", "!!bool", "!!null", "!!str"]
#: Text keys (an engine looks its fields up by text; ``yes``/``1`` keys, which Python's
#: dict folds together as True == 1, have no image in specgate's text-keyed data).
KEYS = ["num_speculative_tokens", "method", "k", "x", "=", "ab", "'yes'", '"1"']


def _scalar(rng: random.Random) -> str:
    text = rng.choice(SCALARS)
    if rng.random() < 0.15:
        return f"{rng.choice(TAGS)} {text or repr('')}"
    return text


def _mapping(rng: random.Random, indent: str, depth: int) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(KEYS)
        if depth < 2 and rng.random() < 0.2:
            lines.append(f"{indent}{key}:")
            lines += _mapping(rng, indent + "  ", depth + 1)
        else:
            lines.append(f"{indent}{key}: {_scalar(rng)}")
    return lines


def _document(rng: random.Random) -> str:
    """A config with up to three anchored bases and a target merging some of them."""
    lines: list[str] = []
    bases = rng.randint(0, 3)
    for b in range(bases):
        lines.append(f"base{b}: &b{b}")
        lines += _mapping(rng, "  ", 1)
    lines.append("speculative_config:")
    body: list[str] = []
    for _ in range(rng.randint(0, 2)):
        body += _mapping(rng, "  ", 1)
    for _ in range(rng.randint(0, 3) if bases else 0):
        if rng.random() < 0.3:
            picks = ", ".join(f"*b{rng.randrange(bases)}" for _ in range(rng.randint(1, 3)))
            body.append(f"  <<: [{picks}]")
        else:
            body.append(f"  <<: *b{rng.randrange(bases)}")
    rng.shuffle(body) if rng.random() < 0.3 else None
    return "\n".join(lines + (body or ["  k: 1"])) + "\n"


def _key(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _Skip(Exception):
    """The oracle's data has no image in specgate's (a key of another type colliding
    with a text key)."""


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            text = _key(key)
            if text in out:
                raise _Skip(text)
            out[text] = _normal(item)
        return out
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (datetime.date, datetime.datetime)) and isinstance(b, str):
        # specgate keeps a timestamp as its text (docs: nothing it reads is a date);
        # the engine sees a date, which no number or method specgate settles can be.
        return True
    return type(a) is type(b) and a == b


def run_corpus(cases: int, seed: int = 25) -> dict[str, int | list[str]]:
    """Counts over ``cases`` generated documents: agreed, unsettled (specgate refuses),
    skipped (oracle refuses too, or keys collide), and the disagreeing texts."""
    rng = random.Random(seed)
    agreed = unsettled = skipped = 0
    wrong: list[str] = []
    for _ in range(cases):
        text = _document(rng)
        try:
            oracle = _normal(yaml.safe_load(text))
        except Exception:  # the engine's reader refuses it (IndexError on "!!float ''" too)
            oracle = _Skip
        try:
            ours: Any = load_yaml(text, "c.yaml", dialect="pyyaml").data
        except InputError:
            if oracle is _Skip:
                skipped += 1
            else:
                unsettled += 1
            continue
        if oracle is _Skip:
            wrong.append(text)  # a value the engine's reader refuses, read as settled
        elif _same(oracle, ours):
            agreed += 1
        else:
            wrong.append(text)
    return {"agreed": agreed, "unsettled": unsettled, "skipped": skipped, "wrong": wrong}


def test_pyyaml_dialect_agrees_with_safe_load_or_is_unsettled() -> None:
    counts = run_corpus(CASES)
    wrong = counts["wrong"]
    assert isinstance(wrong, list)
    assert not wrong, f"{len(wrong)} of {CASES} read otherwise than yaml.safe_load:\n{wrong[0]}"
    assert counts["agreed"] > CASES // 3  # a third at least holds values both settle


D2 = "a: &a {num_speculative_tokens: 4}\nb: &b {num_speculative_tokens: 7}\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # two merge keys: the later one (PyYAML 6.0.2 and 6.0.3 alike for this key)
        (D2 + "c:\n  <<: *a\n  <<: *b\n", 7),
        # an explicit key beats every merge
        (D2 + "c:\n  num_speculative_tokens: 5\n  <<: [*a, *b]\n", 5),
        ("a: 0\nc: {num_speculative_tokens: !!int 010}\n", 8),  # construct_yaml_int: octal
        ("a: 0\nc: {num_speculative_tokens: !!float 010}\n", 10.0),  # float("010")
    ],
)
def test_merge_and_tags_as_pyyaml(text: str, expected: object) -> None:
    assert yaml.safe_load(text)["c"]["num_speculative_tokens"] == expected  # the oracle
    value = load_yaml(text, "c.yaml", dialect="pyyaml").data["c"]["num_speculative_tokens"]
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    "text",
    [
        # a list of maps: 6.0.2 takes the earlier map (4), 6.0.3 the later (7)
        D2 + "c:\n  <<: [*a, *b]\n",
        # a one-character key: 6.0.2 takes the later merge key (7), 6.0.3 the first met (4)
        "a: &a {x: 4}\nb: &b {x: 7}\nc:\n  <<: *a\n  <<: *b\n",
    ],
)
def test_merges_pyyaml_releases_read_apart_are_unsettled(text: str) -> None:
    with pytest.raises(InputError, match="depends on the PyYAML release"):
        load_yaml(text, "c.yaml", dialect="pyyaml")


@pytest.mark.parametrize("text", ["x: !!int 0o10\n", "x: !!bool YeS\n", "x: =\n", "x: <<\n"])
def test_tagged_forms_pyyaml_reads_otherwise_are_unsettled(text: str) -> None:
    with pytest.raises(InputError):
        load_yaml(text, "c.yaml", dialect="pyyaml")


def test_go_yaml_refuses_two_merge_keys() -> None:
    # go-yaml v3 decode.go (d.uniqueKeys): "mapping key "<<" already defined"
    text = "a: &a {x: 4}\nb: &b {x: 7}\nc:\n  <<: *a\n  <<: *b\n"
    with pytest.raises(InputError, match="second merge key"):
        load_yaml(text, "compose.yaml", dialect="go")
