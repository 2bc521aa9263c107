"""The economics cases (tests/data/economics, docs/theory.md#cost-model): the verdict each deserves,
and the same judgment on inputs the cases do not show (the kind, not the instance).

Expected values are worked by hand in the comments from the cases' numbers.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from specgate.check.report import DeploymentReport
from specgate.check.run import CheckOptions, check_file

CASES = Path(__file__).resolve().parent.parent / "data" / "economics"


def judge(path: Path, shown: str | None = None) -> DeploymentReport:
    report = check_file(path, shown or path.name, CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    return deployment


def codes(deployment: DeploymentReport) -> set[str]:
    return {f.code for f in deployment.findings}


@pytest.mark.parametrize(
    "case",
    [
        # claimed 0.885x (69.79 → 61.79 tok/s), no AL: SG101 and the slowdown
        "report-01-vllm8439-ngram-slower/specgate.yaml",
        "report-01-vllm8439-ngram-slower/as-posted.specgate.yaml",
        # QwQ-32B EAGLE, claimed 0.967x (61 → 59 tok/s)
        "report-18-sglang6949-eagle-slower-qwq/specgate.yaml",
        # transformers assisted generation, claimed 0.9x, no AL
        "report-21-transformers36337-assisted-slower/specgate.yaml",
        # llama.cpp MTP, claimed 0.88x (26.7 → 23.5 tok/s)
        "report-31-llamacpp-mtp-slower-than-baseline/specgate.yaml",
    ],
)
def test_a_slowdown_fails_sg106(case: str) -> None:
    deployment = judge(CASES / case)
    assert "SG106" in codes(deployment)
    assert deployment.status == "fail"
    (finding,) = [f for f in deployment.findings if f.code == "SG106"]
    assert finding.path.endswith("claims.speedup")
    assert "if you meant +" in finding.message


def test_transformers_next_action_fits_the_engine() -> None:
    deployment = judge(CASES / "report-21-transformers36337-assisted-slower/specgate.yaml")
    (action,) = [a for a in deployment.next_actions if "Measure AL on the served" in a]
    assert "transformers" in action
    assert "vllm:spec_decode" not in action


def test_eagle_k2_is_not_failed_by_a_fixed_floor() -> None:
    # D 2, AL 1.89, no ρ: default floor 1.1 (ρ 0); the seed's 2 is SG110's guideline
    for name in ("specgate.yaml", "rho-hint.specgate.yaml"):
        deployment = judge(CASES / "report-30-vllm-eagle-k2-floor" / name)
        assert "SG102" not in codes(deployment)
        assert "SG110" in codes(deployment)
        assert deployment.status == "actionable"


def test_ngram_d8_al_1_8_passes_the_floor() -> None:
    # theory/t3: n-gram D 8 (from the engine config), AL 1.8, ρ 0: S = 1.8, floor 1.1
    deployment = judge(CASES / "theory-t3/specgate.yaml")
    assert deployment.metrics.accept_length_floor.value == pytest.approx(1.1)
    assert deployment.metrics.theoretical_speedup == pytest.approx(1.8)
    assert codes(deployment) <= {"SG308"}  # D is a maximum for n-gram: info only


@pytest.mark.parametrize(
    "case",
    ["report-02-vllm19254-ngram-high-load", "report-03-vllm17984-draft-batch32"],
)
def test_throughput_without_hardware_says_beta_was_assumed(case: str) -> None:
    deployment = judge(CASES / case / "specgate.yaml")
    assert "SG207" in codes(deployment)
    assert deployment.metrics.verify_cost is not None
    assert deployment.metrics.verify_cost.source == "assumed"


def _with(case: str, tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / case
    shutil.copytree(CASES / case, folder)
    claims = folder / "specgate.yaml"
    text = claims.read_text(encoding="utf-8")
    assert old in text
    claims.write_text(text.replace(old, new), encoding="utf-8")
    return claims


def test_ngram_at_600_sequences_on_h100_is_at_risk(tmp_path: Path) -> None:
    # report-02 with concurrency 600 on an H100-SXM: n* = 295.22; D 3 (N 4):
    # β = (600·4 / 295.22) / (600 / 295.22) = 4; AL 2.4 (pooled log), ρ 0 stated:
    # S = 2.4 / 4 = 0.6 < 1 and the claimed 1.2 > 0.6. docs/theory.md#proven-verify-cost (v2 failed
    # it, SG104 + SG106): without workload.context_length the KV reads, which only lower β, are
    # unknown, so the proven β is 1 (S ≤ 2.4): SG112 warns and names the context length.
    claims = _with(
        "report-02-vllm19254-ngram-high-load", tmp_path,
        "      latency_region: throughput\n",
        "      latency_region: throughput\n      concurrency: 600\n"
        "    hardware:\n      gpu: h100-sxm\n",
    )
    deployment = judge(claims)
    m = deployment.metrics
    assert m.verify_cost_ratio == pytest.approx(4.0)
    assert m.verify_cost is not None and m.verify_cost.bound == "upper"
    assert m.proven_verify_cost_ratio == 1.0
    assert m.theoretical_speedup == pytest.approx(0.6)
    assert "SG112" in codes(deployment)
    assert not {"SG104", "SG106"} & codes(deployment)
    found = next(f for f in deployment.findings if f.code == "SG112")
    assert "workload.context_length" in found.details  # Contract change: in details


def test_draft_model_at_batch_64_on_h100_is_at_risk(tmp_path: Path) -> None:
    # report-03 at 64 sequences on an H100-SXM: D 5 (N 6): β = 384 / 295.22 = 1.3007;
    # S = 3 / (1.3007 + 0.05·5) = 1.9346 < the claimed 2.0. docs/theory.md#proven-verify-cost (v2:
    # SG104): the proven β without a context length is 1, 3 / 1.25 = 2.4 ≥ 2.0: SG112, not SG104
    claims = _with(
        "report-03-vllm17984-draft-batch32", tmp_path,
        "      latency_region: throughput\n",
        "      latency_region: throughput\n      concurrency: 64\n"
        "    hardware:\n      gpu: h100-sxm\n",
    )
    deployment = judge(claims)
    assert deployment.metrics.theoretical_speedup == pytest.approx(1.9346, abs=5e-5)
    assert "SG112" in codes(deployment)
    assert "SG104" not in codes(deployment)


@pytest.mark.parametrize(
    "case",
    ["report-13-vllm9565-eagle-paper-claim", "report-14-sglang11948-eagle3-qwen3-8b"],
)
def test_paper_claims_stay_caught(case: str) -> None:
    deployment = judge(CASES / case / "specgate.yaml")
    assert "SG104" in codes(deployment)
    assert deployment.status == "fail"


def test_rate_turned_into_al_is_sg109() -> None:
    # r = 1.0 at D 16 written as AL 17 = 1 + D: every draft accepted on every step
    deployment = judge(CASES / "report-23-llamacpp3919-accept-100pct/rate-as-al.specgate.yaml")
    assert "SG109" in codes(deployment)
    assert "SG103" not in codes(deployment)


def test_d0_costs_nothing(tmp_path: Path) -> None:
    # theory/t5 reads D = 0 from a config the engine refuses (SG307); stated in the claims
    # file, D = 0 has passes 0, N_verify 1, no default floor, S = AL / β = 1: nothing fails
    claims = tmp_path / "d0.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: d0\n    speculation:\n      enabled: true\n"
        "      mechanism: eagle3\n      draft_length: 0\n      draft_depth_ratio: 0.05\n"
        "    evidence:\n      accept_length: 1.0\n      cache_coherence_eval: true\n",
        encoding="utf-8",
    )
    deployment = judge(claims)
    m = deployment.metrics
    assert (m.passes, m.verify_tokens, m.theoretical_speedup) == (0, 1, 1)
    assert m.accept_length_floor.value is None
    assert deployment.status == "ready"
    # the case itself: vLLM refuses num_speculative_tokens 0 (SG307, vllm/config/
    # speculative.py "Expected num_speculative_tokens to be greater than zero"), and a value
    # the engine refuses never runs, so no rule reads it as the served D (as −2 goes;
    # docs/trust.md#one-cause-one-finding): D is unknown, the bound uses passes 0, and the
    # default floor is break-even (β 1 + ρ 0.05·0) × 1.1 = 1.1 > AL 1, which SG102 fails on
    # the measured AL alone (AL 1 gains nothing at any D)
    case = judge(CASES / "theory-t5/specgate.yaml")
    assert case.metrics.draft_length is None
    assert case.metrics.accept_length_floor.value == pytest.approx(1.1)
    assert codes(case) == {"SG307", "SG102"}


def test_trtllm_zero_draft_length_is_not_read_as_d0(tmp_path: Path) -> None:
    # the same kind on TensorRT-LLM: max_draft_len 0 is refused by the engine (SG307) and not
    # read as the served D: D unknown, the default floor (β 1 + ρ 0.02·0) × 1.1 = 1.1 > AL 1
    # (SG102 on the measured AL), and no SG103 / SG109 priced at a D that never runs
    (tmp_path / "extra.yaml").write_text(
        "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 0\n", encoding="utf-8"
    )
    claims = tmp_path / "d0.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: d0\n    speculation:\n      enabled: true\n"
        "      engine: trtllm\n      engine_config: extra.yaml\n      draft_depth_ratio: 0.02\n"
        "    evidence:\n      accept_length: 1\n      cache_coherence_eval: true\n",
        encoding="utf-8",
    )
    deployment = judge(claims)
    assert deployment.metrics.draft_length is None
    assert deployment.metrics.accept_length_floor.value == pytest.approx(1.1)
    assert codes(deployment) == {"SG307", "SG102"}


def test_typical_rho_guideline_is_not_priced_at_an_adaptive_maximum(tmp_path: Path) -> None:
    # transformers assisted generation: a draft model (typical ρ ≈ 0.15) with a confidence
    # cut-off, so num_assistant_tokens = 12 is only a maximum (SG308). AL 2.2 is
    # above the trained-drafter guideline min(2, 1 + 12/2) = 2. Pricing every step at the
    # maximum would give a floor of (1 + 0.15 · 12) · 1.1 = 3.08 > 2.2, a warning built on a
    # guessed ρ times a D the engine rarely drafts: SG110 (b) must stay silent.
    (tmp_path / "generation_config.json").write_text(
        '{"assistant_model": "HuggingFaceTB/SmolLM2-135M-Instruct", '
        '"num_assistant_tokens": 12, "assistant_confidence_threshold": 0.4, '
        '"do_sample": false}\n',
        encoding="utf-8",
    )
    claims = tmp_path / "claims.specgate.yaml"
    claims.write_text(
        "version: 1\n"
        "deployments:\n"
        "  - name: assisted\n"
        "    speculation:\n"
        "      enabled: true\n"
        "      engine: transformers\n"
        "      engine_config: generation_config.json\n"
        "    evidence:\n"
        "      accept_length: 2.2\n"
        "      cache_coherence_eval: true\n",
        encoding="utf-8",
    )
    found = codes(judge(claims))
    assert "SG308" in found
    assert "SG110" not in found
