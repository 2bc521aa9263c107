"""The lazily compiled schema check (what validate.py uses) answers as the eager one
and as jsonschema do; a part it cannot check, found only when a file reaches it, sends
the file to jsonschema instead of raising."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.model.schema_fast import compile_schema
from specgate.model.validate import schema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.specgate.yaml"))


def _variants(data: Any) -> list[Any]:
    """The file, and for each key of its first deployment (and of each block in it) the
    file with that value replaced by a string, a list and null, and an unknown key."""
    found = [data]
    deployment = data["deployments"][0]
    places = [deployment] + [v for v in deployment.values() if isinstance(v, dict)]
    for place_index, place in enumerate(places):
        for key in list(place):
            for wrong in ("x", [1], None):
                changed = copy.deepcopy(data)
                target = changed["deployments"][0]
                if place_index:
                    target = [v for v in target.values() if isinstance(v, dict)][place_index - 1]
                target[key] = wrong
                found.append(changed)
        changed = copy.deepcopy(data)
        target = changed["deployments"][0]
        if place_index:
            target = [v for v in target.values() if isinstance(v, dict)][place_index - 1]
        target["no_such_key"] = 1
        found.append(changed)
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_lazy_eager_and_jsonschema_agree(path: Path) -> None:
    from jsonschema import Draft202012Validator

    eager = compile_schema(schema())
    lazy = compile_schema(schema(), lazy=True)
    assert eager is not None and lazy is not None
    validator = Draft202012Validator(schema())
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for variant in _variants(data):
        expected = validator.is_valid(variant)
        assert eager(variant) is expected
        assert lazy(variant) is expected


def test_an_unsupported_part_is_found_when_reached() -> None:
    nested = {"type": "object", "properties": {"a": {"dependentRequired": {"b": ["c"]}}}}
    assert compile_schema(nested) is None  # eager: the whole schema is read first
    lazy = compile_schema(nested, lazy=True)
    assert lazy is not None
    assert lazy({"b": 1}) is True  # "a" is absent: its subschema is never needed
    assert lazy({"a": {}}) is False  # reached: not known to be valid, so jsonschema decides
    assert lazy(1) is False  # the top level still checks its type
    assert compile_schema({"$ref": "https://example.com/x.json"}, lazy=True) is None
    far = {"properties": {"a": {"$ref": "#/nowhere"}}}
    assert compile_schema(far) is None
    far_lazy = compile_schema(far, lazy=True)
    assert far_lazy is not None
    assert far_lazy({"a": 1}) is False
