"""SGLang's --json-model-override-args read as the engine reads it: Python's json.loads
(0.5.23 configs/model_config.py:612), an object's keys set on the config
(utils/hf_transformers/config.py:356-357)."""

from __future__ import annotations

import json

import pytest

from specgate.inputs.engines._source import UNSETTLED, Opt
from specgate.inputs.engines.model_override import model_override, overridden
from specgate.inputs.knowledge import knowledge
from specgate.load.document import Span

_KEY = "json_model_override_args"


def _read(value: object) -> tuple[object, str]:
    return model_override(knowledge("sglang"), {_KEY: Opt(value, Span(1, 1))})


@pytest.mark.parametrize(
    "text",
    ['{"a": 1, "a": 2}', '{"x": NaN}', "{}", '{"text_config": {"b": 3}}'],
)
def test_a_settled_object_is_what_json_loads_gives(text: str) -> None:
    # the engine's own parser is Python's json module: duplicates keep the last, NaN is read
    got, doubt = _read(text)
    assert doubt == ""
    assert json.dumps(got) == json.dumps(json.loads(text))


@pytest.mark.parametrize("value", ["{", "[1]", '"x"', "[" * 100_000, UNSETTLED, 5])
def test_anything_else_is_in_doubt(value: object) -> None:
    got, doubt = _read(value)
    assert got is None and doubt


def test_not_set_is_not_in_doubt() -> None:
    assert model_override(knowledge("sglang"), {}) == (None, "")


def test_override_sets_keys_of_each_config_read() -> None:
    facts = {"target.read": True, "target.keys": ["a"], "target.config.a": 1,
             "target.mtp_known": 0}
    got = overridden(facts, {"num_nextn_predict_layers": 1, "text_config": {"b": 2}})
    assert got["target.keys"] == ["a", "num_nextn_predict_layers", "text_config"]
    assert got["target.config.num_nextn_predict_layers"] == 1
    assert got["target.config.text_config.b"] == 2
    assert got["target.mtp_known"] is None  # derived from several keys: not known now
    assert "draft.keys" not in got  # no draft config read
