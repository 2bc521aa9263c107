"""Serving YAML read as its programs read it (issue 18): YAML 1.1 numbers for the
engines' PyYAML, go-yaml's for Compose and Kubernetes, and the Compose idiom of an
``x-`` block merged into a service read as the one configuration it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file


@pytest.mark.parametrize(
    ("literal", "depth"),
    [
        ("010", 8),  # octal for PyYAML (vLLM reads --config with yaml.safe_load)
        ("0b11", 3),
        ("1_0", 10),
        ("0x4", 4),
        ("5", 5),
    ],
)
def test_an_engine_config_file_reads_numbers_as_pyyaml(
    tmp_path: Path, literal: str, depth: int
) -> None:
    (tmp_path / ".git").mkdir()
    config = tmp_path / "v.yaml"
    config.write_text(
        "model: m\nspeculative_config:\n  method: ngram\n"
        f"  num_speculative_tokens: {literal}\n  prompt_lookup_max: 4\n",
        "utf-8",
    )
    assert read_engine_file(config, "v.yaml", engine="vllm").draft_length == depth


COMPOSE = """\
x-vllm: &vllm
  image: vllm/vllm-openai:v0.10.0
  command:
    - --model
    - m
    - --speculative-config
    - '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'
services:
  vllm:
    <<: *vllm
    ports: ["8000:8000"]
"""


def test_the_compose_x_block_merged_into_a_service_is_one_configuration(tmp_path: Path) -> None:
    # It was refused as "2 speculative configurations" (/x-vllm and /services/vllm).
    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yaml").write_text(COMPOSE, "utf-8")
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert config.engine == "vllm" and config.draft_length == 3
    assert config.pointer.startswith("/services/vllm")
    # the values stand where they are written: in the x- block
    assert config.spans["draft_length"].line == 7


def test_an_unused_x_block_configures_nothing(tmp_path: Path) -> None:
    from specgate.core.errors import InputError

    (tmp_path / ".git").mkdir()
    text = COMPOSE.replace("    <<: *vllm\n", "    image: nginx\n")
    (tmp_path / "compose.yaml").write_text(text, "utf-8")
    with pytest.raises(InputError, match="no speculative decoding configured"):
        read_engine_file(tmp_path / "compose.yaml", "compose.yaml")


def test_compose_numbers_are_go_yaml_numbers(tmp_path: Path) -> None:
    # Contract change (trial3/11): a Compose command list item 010 is the integer 8 for
    # go-yaml, and Compose's schema refuses a number there (Docker Compose v2.40.3:
    # "validating compose.yaml: services.s.command.10 must be a string"; docker-compose
    # 1.29: "services.s.command contains 8, which is an invalid type"), so the project
    # does not start: a fail at the item, not D = 8 read as if it were passed on.
    (tmp_path / ".git").mkdir()
    text = (
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.4\n    command: [python3, -m, "
        "sglang.launch_server, --model-path, m, --speculative-algorithm, EAGLE, "
        "--speculative-draft-model-path, d, --speculative-num-steps, 010, "
        "--speculative-eagle-topk, 1, --speculative-num-draft-tokens, 9]\n"
    )
    (tmp_path / "compose.yaml").write_text(text, "utf-8")
    from specgate.inputs.engines.unread import NotStarted

    with pytest.raises(NotStarted, match=r'"services\.s\.command\.10 must be a string"'):
        read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
