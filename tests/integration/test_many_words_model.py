"""A flag that takes several words hides no served model
(docs/engines.md#command-lines-and-launchers).

vLLM 0.33.0's ``vllm serve`` parser reads ``--lora-target-modules`` with ``nargs='+'``
(asked of the parser on 2026-12-03, tests/oracle/test_many_values_oracle.py): in
``vllm serve --lora-target-modules q_proj other/x`` both words are target modules and no
model_tag is given (worked by hand from argparse's greedy 'A+'), so ``other/x`` is not
the served model. specgate read it as the model and warned SG301 (the claims file says
org/m but serve.sh says other/x).
"""

from __future__ import annotations

from pathlib import Path

from tests.integration.test_exit2_degrade import _check

NGRAM = """'{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'"""
FIRST = (
    "    model: {name: org/m}\n"
    "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
    " engine_config: lora.sh, engine_version: '0.33.0'}\n"
)


def _models(tmp_path: Path, command: str) -> list[str]:
    report = _check(tmp_path, FIRST, {"lora.sh": command})
    return [f.message for f in report.deployments[0].findings if f.code == "SG301"]


def test_words_after_a_many_flag_are_its_values(tmp_path: Path) -> None:
    command = f"vllm serve --lora-target-modules q_proj other/x --speculative-config {NGRAM}\n"
    assert _models(tmp_path, command) == []


def test_a_model_after_another_option_is_still_read(tmp_path: Path) -> None:
    command = (
        "vllm serve --lora-target-modules q_proj --port 8000 other/x"
        f" --speculative-config {NGRAM}\n"
    )
    (message,) = _models(tmp_path, command)
    assert "other/x" in message
