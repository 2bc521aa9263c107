"""The served id against the claims file's model: what a fail needs (newuser-r4 #1).

A fail of SG301 on the served model needs a contradiction that is certain: another
size, another family, or a version each id names and the other lacks. Ids that
differ in words only (Meta's own rename ``Meta-Llama-3.1-8B-Instruct`` →
``Llama-3.1-8B-Instruct``, HF redirects the old name; an owner's prefix; a quantized
variant) warn. A served id that names another precision (``…-FP8-dynamic``, ``-AWQ``)
beside a BF16 config makes the config another checkpoint's: its precision is not
stated (the proven β is the lowest over the precisions) and SG301 warns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.rules.test_rules import claims, dep
from tests.rules.test_served_model import LLAMA8, Check, _check, _sg301, _sg301_details, _write

from specgate.model.served_model import named_precision


@pytest.mark.parametrize(
    ("name", "served", "severity"),
    [
        # Meta's former name of the same repository (HF redirects it): words only
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct", "warn"),
        ("meta-llama/Llama-3.1-8B-Instruct", "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "warn"),
        # not the reviewer's: a base and its instruct tune, a dated revision added
        ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-Base", "warn"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324", "warn"),
        # certain: another size, another version, another model of the family
        ("Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "fail"),
        ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "fail"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "fail"),
        ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "fail"),
    ],
)
def test_sg301_fails_only_a_certain_contradiction_of_the_ids(
    tmp_path: Path, check_text: Check, name: str, served: str, severity: str
) -> None:
    model = _write(tmp_path, served)
    model["name"] = name
    report = _check(check_text, model)
    ((got, text, _line),) = _sg301(report)
    assert got == severity
    assert name in text and served in text
    if severity == "warn":
        assert "differ only in the words" in _sg301_details(report)[0]


@pytest.mark.parametrize(
    ("served", "expected"),
    [
        ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", ("FP8", "8-bit")),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", ("GPTQ-Int4", "4-bit")),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", ("AWQ", "4-bit")),
        ("nvidia/Llama-3.1-8B-Instruct-NVFP4", ("NVFP4", "4-bit")),
        ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", ("quantized-w8a8", "8-bit")),
        ("TheBloke/Llama-2-7B-GPTQ", ("GPTQ", "quantized")),
        ("meta-llama/Llama-3.1-8B-Instruct", None),
        ("/models/Qwen3-14B-Q4_K_M.gguf", ("Q4_K_M", "4-bit")),
    ],
)
def test_named_precision_reads_the_variant_words(
    served: str, expected: tuple[str, str] | None
) -> None:
    assert named_precision(served) == expected


def _fp8_served(tmp_path: Path, check_text: Check, served: str, **hardware: Any) -> dict[str, Any]:
    """The reviewer's fp8-bs256 deployment: EAGLE-3 D 3 on H100 at bs 256, ctx 4000,
    AL 2.6, ρ 0.05, claim 2.1, served ``served`` with the BF16 base's config.json."""
    model = _write(tmp_path, served, LLAMA8)
    (tmp_path / "serve.sh").write_text(
        f"vllm serve {served} --speculative-config "
        '\'{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", '
        '"num_speculative_tokens": 3}\'\n',
        encoding="utf-8",
    )
    deployment = dep(
        rho=0.05, al=2.6, claim=2.1, model=model,
        speculation={"engine": "vllm", "engine_config": "serve.sh", "engine_version": "0.32.0"},
        workload={"concurrency": 256, "context_length": 4000},
        hardware={"gpu": "h100-sxm", "tensor_parallel": 1, **hardware},
    )
    report = check_text(claims(deployment))
    (found,) = report.deployments
    return {"report": report, "deployment": found}


def test_a_served_fp8_checkpoint_beside_a_bf16_config_is_not_priced_bf16(
    tmp_path: Path, check_text: Check
) -> None:
    # newuser-r4 #1: priced BF16 the proven β was 1 + 0.2638·0.38 = 1.1003 (the
    # reviewer's hand value) and SG104 failed 2.1 > 2.6 / (1.1003 + 0.15) = 2.0796. The
    # precision is not stated, so the proven β is at most the one with FP8 stated,
    # which the reviewer worked out as 1.0529: 2.6 / (1.0529 + 0.15) = 2.1614 ≥ 2.1.
    got = _fp8_served(tmp_path, check_text, "RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic")
    report, found = got["report"], got["deployment"]
    codes = {(f.code, f.severity) for f in report.all_findings()}
    assert ("SG104", "fail") not in codes
    assert found.metrics.proven_verify_cost_ratio <= 1.0529 + 5e-5
    (warned,) = [t for s, t, _ in _sg301(report) if "weight precision" in t]
    assert "torch_dtype bfloat16" in warned
    assert "RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic (FP8: 8-bit weights)" in warned


def test_a_served_awq_checkpoint_beside_a_bf16_config_warns_too(
    tmp_path: Path, check_text: Check
) -> None:
    # not the reviewer's: a 4-bit AWQ checkpoint of the same model
    got = _fp8_served(tmp_path, check_text, "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4")
    report = got["report"]
    (warned,) = [t for s, t, _ in _sg301(report) if "weight precision" in t]
    assert "AWQ-INT4: 4-bit weights" in warned
    assert ("SG104", "fail") not in {(f.code, f.severity) for f in report.all_findings()}


def test_stated_weight_bytes_settle_the_precision_and_nothing_warns(
    tmp_path: Path, check_text: Check
) -> None:
    # the reviewer's fp8-bs256-stated: weight_bytes 1, FP8 compute stated → proven β
    # 1.0529 (his hand value), no precision warning
    got = _fp8_served(
        tmp_path, check_text, "RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic",
        weight_bytes=1, compute_dtype="fp8",
    )
    assert [t for s, t, _ in _sg301(got["report"]) if "weight precision" in t] == []
    assert got["deployment"].metrics.proven_verify_cost_ratio == pytest.approx(1.0529, abs=5e-5)


def test_a_config_that_declares_the_served_precision_is_read(
    tmp_path: Path, check_text: Check
) -> None:
    # the FP8 checkpoint's own config (quantization_config fp8) beside its id: agrees
    data = json.loads(LLAMA8.read_text(encoding="utf-8"))
    data["quantization_config"] = {"quant_method": "fp8", "activation_scheme": "dynamic"}
    config = tmp_path / "fp8-config.json"
    config.write_text(json.dumps(data), encoding="utf-8")
    model = _write(tmp_path, "RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", config)
    report = _check(check_text, model)
    assert [t for s, t, _ in _sg301(report) if "weight precision" in t] == []
