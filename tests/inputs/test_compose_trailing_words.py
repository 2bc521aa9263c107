"""A ``# note`` in a Compose folded ``command: >`` reaches vLLM as words (trial3/15;
docs/engines.md#containers): compose-go splits a string command with go-shellwords (no
comments), and vLLM 0.32.0's parser refuses the words no option takes ("unrecognized
arguments: # D tuned on 2025-06 traffic", as the CI's vLLM 0.32.0 says:
tests/integration/test_live_vllm_trailing.py).

Hand-worked place: line 6 of the file is
``      --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}'  # D tuned``:
6 spaces, the flag at 7-26, a space, the quoted JSON at 28-77 (50 characters: the
quotes, ``{``, ``"method": "ngram", `` 19, ``"num_speculative_tokens": 3`` 27, ``}``), two
spaces, ``#`` at 80.
"""

from __future__ import annotations

from pathlib import Path

from specgate.inputs.engines.read import read_engine_file

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.32.0
    command: >
      meta-llama/Llama-3.1-8B-Instruct
      --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}'  # D tuned
"""


def _read(tmp: Path, text: str) -> tuple[int, list[tuple[str, str | None, str]]]:
    (tmp / ".git").mkdir(exist_ok=True)
    (tmp / "compose.yaml").write_text(text, "utf-8")
    config = read_engine_file(tmp / "compose.yaml", "compose.yaml")
    assert config.draft_length == 3
    issues = [(i.code, i.severity, i.message) for i in config.issues if i.code == "SG307"]
    span = config.spans.get("setting:positional")
    return (span.column if span is not None else 0), issues


def test_a_hash_in_a_folded_command_is_words_vllm_refuses(tmp_path: Path) -> None:
    column, issues = _read(tmp_path, COMPOSE)
    ((_code, severity, message),) = issues
    assert column == 80 and severity is None  # the rule's own severity: fail
    assert "(# D tuned)" in message
    assert "unrecognized arguments: # D tuned" in message


def test_no_finding_without_the_words(tmp_path: Path) -> None:
    # the note on its own line as a YAML comment after the block: not in the scalar
    text = COMPOSE.replace("  # D tuned", "") + "    # D tuned\n"
    assert _read(tmp_path, text)[1] == []
    # a list command: the item holds the JSON alone
    listed = COMPOSE.replace(
        "command: >\n      meta-llama/Llama-3.1-8B-Instruct\n      --speculative-config "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'  # D tuned\n",
        "command: [meta-llama/Llama-3.1-8B-Instruct, --speculative-config, "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3}']  # D tuned\n",
    )
    assert _read(tmp_path, listed)[1] == []
