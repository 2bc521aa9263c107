"""``inputs.engine`` reports the draft model and the draft TP that runs
(docs/engines.md#what-users-publish)."""

from __future__ import annotations

from pathlib import Path

from specgate.check.run import CheckOptions, check_file
from specgate.reporters.json_report import inputs_json


def test_draft_model_and_filled_draft_tp(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(
        "model: meta-llama/Llama-3.1-70B-Instruct\n"
        "tensor-parallel-size: 4\n"
        "speculative-config:\n"
        "  method: eagle3\n"
        "  model: yuhuili/EAGLE3-LLaMA3.3-Instruct-70B\n"
        "  num_speculative_tokens: 3\n",
        encoding="utf-8",
    )
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation:\n      enabled: false\n"
        "      engine_config: serve.yaml\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    inputs = report.deployments[0].deployment.inputs
    assert inputs is not None
    engine = inputs_json(inputs)["engine"]
    # No draft TP stated: vLLM fills the target's (SpeculativeConfig._verify_and_get_draft_tp,
    # v0.32.0), so the EAGLE-3 head runs at TP 4.
    assert engine["draft_model"] == "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B"
    assert engine["draft_tensor_parallel_size"] == 4
    assert engine["tensor_parallel_size"] == 4
