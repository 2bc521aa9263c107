"""Serving YAML read as the program that reads it (issue 18; specgate.load.yaml_dialects).

``num_speculative_tokens: 010`` is 8 for the engines (PyYAML ``yaml.safe_load``: vLLM
0.32 ``vllm/utils/argparse_utils.py``, SGLang 0.5.23
``sglang/srt/utils/server_args_config_parser.py``, TensorRT-LLM
``tensorrt_llm/commands/serve.py``) and for Kubernetes and Compose (go-yaml), but 10
under YAML 1.2. The PyYAML dialect is checked against PyYAML itself; the go dialect
against values worked from go-yaml v3 ``resolve.go`` (0d383ff).
"""

from __future__ import annotations

import datetime
import math
import os

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from specgate.core.errors import InputError
from specgate.load.yaml_dialects import resolve_plain, serving_dialect
from specgate.load.yaml_loader import load_yaml, load_yaml_documents

SCALE = max(1, int(os.environ.get("SPECGATE_FUZZ_SCALE", "1")))


@settings(max_examples=500 * SCALE, deadline=None, database=None)
@given(st.text(alphabet="0123456789_:.+-eExXbBoOyesnNtrufalTFYS~", max_size=10))
def test_the_pyyaml_dialect_is_pyyaml(text: str) -> None:
    try:
        loaded = yaml.safe_load(f"a: {text}\n")
    except yaml.YAMLError:
        return
    if not isinstance(loaded, dict) or "a" not in loaded:
        return
    expected = loaded["a"]
    if isinstance(expected, (datetime.date, datetime.datetime)):
        return  # a date stays text here (nothing specgate reads is one)
    _, value = resolve_plain(text, "pyyaml")
    if isinstance(expected, float) and math.isnan(expected):
        assert isinstance(value, float) and math.isnan(value)
        return
    assert value == expected and type(value) is type(expected), (text, value, expected)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # strconv.ParseInt(s, 0, 64) after dropping "_": a leading 0 is octal
        ("010", 8),
        ("-010", -8),
        ("0o10", 8),
        ("0x1F", 31),
        ("0b101", 5),
        ("1_000", 1000),
        ("9223372036854775807", 2**63 - 1),
        ("18446744073709551615", 2**64 - 1),  # ParseUint
        # not an int: yamlStyleFloat, then ParseFloat
        ("08", 8.0),
        ("1e3", 1000.0),
        ("1.5e3", 1500.0),
        (".5", 0.5),
        ("99999999999999999999", 1e20),
        # text: base 60 is "purposefully unsupported"; ParseFloat's range error
        ("1:30", "1:30"),
        ("1e400", "1e400"),
        ("0xFFFFFFFFFFFFFFFFFF", "0xFFFFFFFFFFFFFFFFFF"),
        # booleans are YAML 1.2's in go-yaml v3
        ("yes", "yes"),
        ("on", "on"),
        ("True", True),
        ("~", None),
    ],
)
def test_the_go_dialect_as_worked_from_go_yaml(text: str, value: object) -> None:
    assert resolve_plain(text, "go")[1] == value


def test_a_serving_file_is_read_in_its_readers_dialect() -> None:
    config = "speculative_config:\n  num_speculative_tokens: 010\n  enabled: yes\n"
    assert serving_dialect(config) == "pyyaml"
    engine = load_yaml_documents(config, "v.yaml", serving_dialect(config)).data
    assert engine == {"speculative_config": {"num_speculative_tokens": 8, "enabled": True}}
    manifest = "apiVersion: v1\nkind: ConfigMap\ndata:\n  n: 010\n  flag: yes\n"
    assert serving_dialect(manifest) == "go"
    assert load_yaml_documents(manifest, "m.yaml", "go").data["data"] == {"n": 8, "flag": "yes"}
    compose = "services:\n  a:\n    x: 010\n"
    assert serving_dialect(compose) == "go"
    # a claims file is YAML 1.2 (specgate is its only reader)
    assert load_yaml("n: 010\n", "c.yaml").data == {"n": 10}


def test_merge_keys_and_positions_in_a_dialect() -> None:
    text = "base: &b {n: 010}\nuse:\n  <<: *b\n  m: 0x10\n"
    doc = load_yaml(text, "v.yaml", "pyyaml")
    assert doc.data["use"] == {"n": 8, "m": 16}
    assert doc.locate(("use", "m")).line == 4


def test_huge_literals_are_refused_in_every_dialect() -> None:
    for dialect in ("pyyaml", "go"):
        with pytest.raises(InputError, match="too long") as caught:
            load_yaml("a: 1\nb: " + "1" * 5000 + "\n", "v.yaml", dialect)  # type: ignore[arg-type]
        assert caught.value.line == 2
