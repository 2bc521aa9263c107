"""A transformers script whose generate() is given its own generation_config over a value
set on the model's config is SG312 at that assignment, not exit 2 for the claims file
(issue 24): transformers takes the model's value only when 4.50.0 or later saved the
model (`_prepare_generation_config`, generation/utils.py@v5.19.0), which the script does
not say. Line 4, column 1: the assignment starts the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file

SCRIPT = """\
from transformers import AutoModelForCausalLM, GenerationConfig
model = AutoModelForCausalLM.from_pretrained("m")
assistant = AutoModelForCausalLM.from_pretrained("d")
model.generation_config.num_assistant_tokens = 5
config = GenerationConfig(max_new_tokens=10)
model.generate(input_ids, assistant_model=assistant, generation_config=config)
"""
CLAIMS = """\
version: 1
deployments:
  - name: a
    speculation: {enabled: true, engine_config: gen.py, mechanism: draft_model, draft_length: 5}
    evidence: {accept_length: 2}
  - name: b
    speculation: {enabled: true, mechanism: ngram, draft_length: 3}
    evidence: {accept_length: 2}
"""


def test_a_model_config_value_under_an_explicit_config_is_sg312(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "gen.py").write_text(SCRIPT, "utf-8")
    (tmp_path / "s.yaml").write_text(CLAIMS, "utf-8")
    monkeypatch.chdir(tmp_path)
    report = check_file(Path("s.yaml"), "s.yaml", CheckOptions())
    assert report.error is None, report.error
    first, other = report.deployments
    (sg312,) = [f for f in first.findings if f.code == "SG312"]
    assert (sg312.file, sg312.line, sg312.column, sg312.severity) == ("gen.py", 4, 1, "warn")
    assert sg312.message.startswith("model.generation_config.num_assistant_tokens not read")
    assert other.name == "b" and other.metrics.accept_length == 2
