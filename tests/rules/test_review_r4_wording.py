"""Wording of findings and reports (newuser-r4 #10, real-r4 #6), each with its value."""

from __future__ import annotations

from collections.abc import Callable

from specgate.check.report import FileReport, RunReport
from specgate.reporters import summary, text

Check = Callable[..., FileReport]

# real-r4 deployment 02 (SpecForge #339): 222.47 → 159.78 tok/s, AL 1.86, D 3 stated
MEASURED_SLOWDOWN = """\
version: 1
deployments:
  - name: qwen3-30b-a3b-eagle3-bs1
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3}
    evidence:
      accept_length: 1.86
      throughput: {baseline_tokens_per_s: 222.47, speculative_tokens_per_s: 159.78}
      cache_coherence_eval: true
"""


def test_sg102_shows_the_gain_test_floor_as_a_product(check_text: Check) -> None:
    # S = 159.78 / 222.47 = 0.7182; ρ derived, so β cancels: floor = 1.1 × 1.86 / 0.7182
    # = 2.8488 (the review's hand value)
    report = check_text(MEASURED_SLOWDOWN)
    (sg102,) = [f for f in report.all_findings() if f.code == "SG102"]
    assert "below the floor 2.8488" in sg102.message
    assert "(1 + min_gain) × AL / S_measured = 1.1 × 1.86 / 0.7182" in sg102.message


NO_CONTEXT = """\
version: 1
deployments:
  - name: chat-8b-bs256
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}
    workload: {concurrency: 256}
    hardware: {gpu: h100-sxm}
    evidence: {accept_length: 2.6, cache_coherence_eval: true}
    claims: {speedup: 2.0}
"""


def test_sg207_words_the_estimate_and_leaves_the_action_to_sg112(check_text: Check) -> None:
    # n* = 989·2/(2·3.35) = 295.2, B·N = 1024: β = 3.4686, an upper estimate without a
    # context length; S = 2.6 / (3.4686 + 0.15) = 0.7185 < 1.1 while the proven β 1
    # gives 2.6 / 1.15 = 2.2609: SG112 warns and names workload.context_length
    report = check_text(NO_CONTEXT)
    (sg207,) = [f for f in report.all_findings() if f.code == "SG207"]
    assert sg207.message.startswith(
        "β = 3.4686, an upper estimate of the step-time model, leaves out KV cache"
    )
    assert "roofline, upper" not in sg207.message
    (deployment,) = report.deployments
    # issue 26: an upper estimate of β only informs, so SG112 is a note beside SG207's
    # and the deployment is ready: no next action at all (one cause never gets two)
    assert {f.code: f.severity for f in deployment.findings} == {"SG112": "note", "SG207": "note"}
    naming = [a for a in deployment.next_actions if "workload.context_length" in a]
    assert len(naming) == 0


BROKEN = """\
version: 1
deployments:
  - name: a
    speculation: {enabled: true, draft_length: 3, draft_lenght: 4}
    evidence: {accept_length: 2}
"""


def test_a_schema_broken_deployment_shows_no_metrics(check_text: Check) -> None:
    report = check_text(BROKEN)
    (deployment,) = report.deployments
    lines = text.metrics_block(deployment)
    assert lines[1] == "    not judged: the file breaks the schema"
    assert not any("ρ" in line or "speedup" in line for line in lines)
    table = summary.render(RunReport(report.status, (report,)), charts=False)
    assert "| metric | value |" not in table and "Mechanism" not in table
    assert "Not judged: the file breaks the schema" in table


def test_the_kv_of_a_weight_quantized_checkpoint_is_named_the_model_dtype(
    check_text: Check, tmp_path: object
) -> None:
    # DeepSeek-V3's config.json: quantization_config.quant_method fp8 (FP8 weights) and
    # torch_dtype bfloat16; vLLM's --kv-cache-dtype auto stores the KV at the model dtype
    # (vllm/utils/torch_utils.py resolve_kv_cache_dtype_string, 0.32.0): 2 bytes
    import shutil
    from pathlib import Path

    from specgate.reporters.json_report import metrics_json

    root = Path(str(tmp_path))
    source = Path(__file__).resolve().parents[1] / "data/real/hf-config/config"
    shutil.copy(source / "deepseek-ai--DeepSeek-V3_config.json", root / "config.json")
    report = check_text(
        "version: 1\ndeployments:\n  - name: v3\n    model: {hf_config: config.json}\n"
        "    speculation: {enabled: true, mechanism: mtp, draft_length: 1}\n"
        "    evidence: {accept_length: 1.8, cache_coherence_eval: true}\n"
    )
    (deployment,) = report.deployments
    precision = metrics_json(deployment.metrics)["precision"]
    assert precision["kv_cache_bytes"] == 2
    assert precision["kv_cache_bytes_source"] == (
        "config.json: the model dtype (--kv-cache-dtype auto)"
    )
    assert precision["weight_bytes_source"] == "config.json: quantization_config.quant_method fp8"
