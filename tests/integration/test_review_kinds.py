"""Kinds from the new-user review (newuser.md) end to end: vLLM Medusa's draft passes,
vLLM's refusal of a draft model before 0.12, one SG307 per cause."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_engine_reports import check, deployment

MEDUSA = (
    "vllm serve lmsys/vicuna-7b-v1.3 --speculative-config "
    '\'{"method": "medusa", "model": "FasterDecoding/medusa-vicuna-7b-v1.3", '
    '"num_speculative_tokens": 4}\'\n'
)
CLAIMS = """version: 1
deployments:
  - name: m
    speculation:
      enabled: true
{speculation}    evidence:
      accept_length: 2.5
      cache_coherence_eval: true
    claims:
      speedup: 2.2
"""


def test_vllm_medusa_drafts_in_one_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # vllm/v1/spec_decode/medusa.py MedusaProposer.propose (0.27.1, 0.32.0): one model
    # forward, argmax of each head ⇒ passes 1: S = 2.5 / (1 + 0.05·1) = 2.381 ≥ 2.2
    # (Medusa-1 on Vicuna-7B published 2.18x). Charged per token it would be
    # 2.5 / (1 + 0.05·4) = 2.0833 < 2.2, a fail.
    spec = (
        "      engine_config: serving/serve.sh\n"
        "      engine_version: 0.10.1.1\n"
        "      draft_depth_ratio: 0.05\n"
    )
    code, report = check(
        tmp_path,
        {"c.specgate.yaml": CLAIMS.format(speculation=spec), "serving/serve.sh": MEDUSA},
        monkeypatch,
        capsys,
    )
    dep = deployment(report)
    assert [f["code"] for f in dep["findings"] if f["severity"] == "fail"] == []
    assert dep["metrics"]["draft_passes"] == "single"
    assert dep["metrics"]["draft_overhead"] == 0.05  # ρ·1
    assert round(dep["metrics"]["theoretical_speedup"], 4) == 2.381
    assert code == 0


def test_medusa_without_engine_config_names_draft_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No engine file says how the heads run: per-token (the v1 meaning) fails at
    # 2.0833x, and the next action names speculation.draft_passes.
    spec = "      mechanism: medusa\n      draft_length: 4\n      draft_depth_ratio: 0.05\n"
    code, report = check(
        tmp_path, {"c.specgate.yaml": CLAIMS.format(speculation=spec)}, monkeypatch, capsys
    )
    dep = deployment(report)
    (sg104,) = [f for f in dep["findings"] if f["code"] == "SG104"]
    assert "2.0833x" in sg104["message"]
    assert any("speculation.draft_passes: single" in a for a in dep["next_actions"])
    assert code == 1
