"""A Compose ``command:`` / Kubernetes ``args:`` under an image whose ENTRYPOINT is not
known is that ENTRYPOINT's arguments, not a program (trial3/14): the first word (a model
id) is never said to be the program the serving config runs. Docker's rule: the command
is appended to the image's ENTRYPOINT (Dockerfile reference, "Understand how CMD and
ENTRYPOINT interact"; Kubernetes: args are appended to the image's ENTRYPOINT when no
command is given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.unread import UnreadEngine

SC = "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}'"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _reason(root: Path, compose: str, files: dict[str, str] | None = None) -> str:
    (root / ".git").mkdir(exist_ok=True)
    (root / "compose.yaml").write_text(compose, "utf-8")
    for name, text in (files or {}).items():
        (root / name).write_text(text, "utf-8")
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(root / "compose.yaml", "compose.yaml")
    return caught.value.reason


def test_an_unknown_image_s_arguments(tmp_path: Path) -> None:
    compose = (
        "services:\n  api:\n    image: example.com/team/llm-server:1.2\n"
        f'    command: ["{MODEL}", "--speculative-config", {SC}]\n'
    )
    reason = _reason(tmp_path, compose)
    assert "the ENTRYPOINT of image example.com/team/llm-server:1.2" in reason
    assert f"with `{MODEL}` … as its arguments" in reason
    assert f"runs {MODEL}" not in reason


def test_a_built_image_whose_base_is_not_known(tmp_path: Path) -> None:
    compose = (
        f'services:\n  api:\n    build: .\n    command: ["{MODEL}", "--speculative-config", {SC}]\n'
    )
    reason = _reason(tmp_path, compose, {"Dockerfile": "FROM example.com/team/base:1\n"})
    assert "the ENTRYPOINT of the image service api builds" in reason
