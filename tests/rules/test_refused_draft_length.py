"""One cause, one finding (docs/trust.md#one-cause-one-finding): a draft length the engine
refuses never runs, so no rule reads it as the served D — 0 goes as −2 does (trial-a
defect 3). vLLM refuses num_speculative_tokens ≤ 0 ("Expected num_speculative_tokens to be
greater than zero", vllm/config/speculative.py), TensorRT-LLM max_draft_len 0 for Eagle
("max_draft_len must be > 0 for Eagle", tensorrt_llm/llmapi/llm_args.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from specgate.check.report import FileReport

Check = Callable[..., FileReport]

CLAIMS = """\
version: 1
deployments:
  - name: c
    speculation:
      enabled: true
      mechanism: {mechanism}
      engine: vllm
      engine_version: "0.11.0"
      engine_config: serve.sh
    evidence: {{accept_length: 2.5, cache_coherence_eval: true}}
"""
SERVE = (
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
    "'{{\"method\":\"{method}\",{extra}\"num_speculative_tokens\":{d}}}'\n"
)


@pytest.mark.parametrize("d", [0, -2])
@pytest.mark.parametrize(("mechanism", "extra"), [
    ("ngram", '"prompt_lookup_max":4,'),
    ("eagle3", '"model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",'),
])
def test_a_refused_num_speculative_tokens_is_sg307_alone(
    check_text: Check, tmp_path: Path, d: int, mechanism: str, extra: str
) -> None:
    """AL 2.5 with D 0 read as served gave SG103 "AL 2.5 exceeds 1 + D = 1" and, for the
    n-gram proposer, SG308 "D = 0 is a maximum": both rest on a D that never runs."""
    (tmp_path / "serve.sh").write_text(
        SERVE.format(method=mechanism, extra=extra, d=d), encoding="utf-8"
    )
    report = check_text(CLAIMS.format(mechanism=mechanism), name="c.specgate.yaml")
    findings = list(report.all_findings())
    assert [f.severity for f in findings if f.code == "SG307"] == ["fail"]
    assert not {"SG103", "SG308", "SG301", "SG109"} & {f.code for f in findings}
    (deployment,) = report.deployments
    assert deployment.metrics.draft_length is None


SGLANG = """\
version: 1
deployments:
  - name: c
    speculation:
      enabled: true
      mechanism: eagle3
      engine: sglang
      engine_version: "0.5.5"
      engine_config: sg.sh
    evidence: {accept_length: 2.5, cache_coherence_eval: true}
"""


@pytest.mark.parametrize("steps", [0, -2])
def test_an_invalid_sglang_step_count_is_not_priced_as_d(
    check_text: Check, tmp_path: Path, steps: int
) -> None:
    """SGLang's resolution keeps speculative_num_steps 0 or −2 (SG307 warns: a draft needs at
    least 1, where the workers refuse it is not confirmed); the reader reports what SGLang
    resolves, but no rule prices it as D: no SG103 "AL 2.5 exceeds 1 + D = 1" (or "= −1")."""
    (tmp_path / "sg.sh").write_text(
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path "
        f"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B --speculative-num-steps {steps} "
        "--speculative-eagle-topk 2 --speculative-num-draft-tokens 4\n",
        encoding="utf-8",
    )
    report = check_text(SGLANG, name="c.specgate.yaml")
    codes = {f.code for f in report.all_findings()}
    assert "SG307" in codes
    assert not {"SG103", "SG308", "SG301", "SG109"} & codes
    (deployment,) = report.deployments
    assert deployment.metrics.draft_length is None
