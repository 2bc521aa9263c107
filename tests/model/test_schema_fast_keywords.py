"""The fast schema check's specialised keywords (one-type ``type``, all-string ``enum``,
one closure per bound) answer as JSON Schema 2020-12 does; each case is decided by
hand from the spec and checked against jsonschema as well."""

from __future__ import annotations

from typing import Any

import pytest

from specgate.model.schema_fast import compile_schema

CASES: list[tuple[dict[str, Any], Any, bool]] = [
    ({"enum": ["vllm", "sglang"]}, "vllm", True),
    ({"enum": ["vllm", "sglang"]}, "VLLM", False),
    ({"enum": ["vllm", "sglang"]}, ["vllm"], False),  # an array is not a member
    ({"enum": ["vllm", "sglang"]}, {"vllm": 1}, False),
    ({"enum": ["vllm", "sglang"]}, None, False),
    ({"enum": ["1", 1]}, 1.0, True),  # 1.0 equals the member 1
    ({"enum": ["1", 1]}, True, False),  # true is not 1
    ({"type": "integer"}, 2.0, True),  # no fractional part
    ({"type": "integer"}, True, False),  # a boolean is never a number
    ({"type": "number"}, False, False),
    ({"type": ["integer", "null"]}, None, True),
    ({"minimum": 1}, 0, False),
    ({"minimum": 1}, 1, True),
    ({"minimum": 1}, "0", True),  # bounds ignore non-numbers
    ({"minimum": 1}, False, True),  # and booleans
    ({"maximum": 1}, 1.5, False),
    ({"exclusiveMinimum": 0}, 0, False),
    ({"exclusiveMinimum": 0}, 1e-9, True),
    ({"exclusiveMaximum": 1}, 1, False),
    ({"exclusiveMaximum": 1}, 0.999, True),
]


@pytest.mark.parametrize(("schema", "value", "valid"), CASES)
def test_specialised_keywords(schema: dict[str, Any], value: Any, valid: bool) -> None:
    from jsonschema import Draft202012Validator

    check = compile_schema(schema)
    assert check is not None
    assert check(value) is valid
    assert Draft202012Validator(schema).is_valid(value) is valid
