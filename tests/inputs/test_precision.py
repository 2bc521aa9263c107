"""The precision a checkpoint and a serving config declare (specgate.inputs.precision).

Each config is what the named vLLM 0.32.0 reader parses (files under
vllm/model_executor/layers/quantization/), or a real config from tests/data. Expected
bytes: FP8/INT8 1; 4-bit integer 0.5; NVFP4 4 bits + an FP8 scale per 16 values = 4.5
bits = 0.5625 B; MXFP4 4 bits + an E8M0 scale per 32 = 4.25 bits = 0.53125 B.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specgate.inputs.model_config import read_model_config
from specgate.inputs.precision import read_precision, serving_precision
from specgate.load.read import parse_text

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "hf-config" / "config"


def shape_of(name: str) -> Any:
    path = REAL / name
    doc = parse_text(path.read_text(encoding="utf-8"), str(path), json_syntax=True)
    return read_model_config(doc, shown=name).precision


def triple(config: dict[str, Any]) -> tuple[float | None, str | None, float | None]:
    found = read_precision(config, config)
    assert found is not None
    return found.weight_bytes, found.compute_dtype, found.kv_cache_bytes


def test_real_configs() -> None:
    # DeepSeek-V3: quant_method fp8, block-scaled FP8 weights and activations (Fp8Config);
    # its torch_dtype bfloat16 is the KV cache's (--kv-cache-dtype auto).
    deepseek = shape_of("deepseek-ai--DeepSeek-V3_config.json")
    assert (deepseek.weight_bytes, deepseek.compute_dtype, deepseek.kv_cache_bytes) == (
        1.0, "fp8", 2.0)
    llama = shape_of("meta-llama--Meta-Llama-3.1-8B_config.json")
    assert (llama.weight_bytes, llama.compute_dtype, llama.method) == (
        2.0, "bf16", "torch_dtype bfloat16")
    # gpt-oss: MXFP4 experts, BF16 attention (modules_to_not_convert): no single b_w
    oss = shape_of("openai--gpt-oss-20b_config.json")
    assert oss.weight_bytes is None and oss.note is not None and "mixed" in oss.note
    # DeepSeek's own inference config says dtype: fp8 (inference/model.py ModelArgs)
    inference = shape_of("deepseek-v3-inference-config_671B.json")
    assert (inference.weight_bytes, inference.compute_dtype) == (1.0, "fp8")


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # compressed-tensors W8A8 FP8 (CompressedTensorsW8A8Fp8): float 8 / float 8
        ({"torch_dtype": "bfloat16", "quantization_config": {
            "quant_method": "compressed-tensors", "format": "float-quantized",
            "config_groups": {"group_0": {
                "weights": {"num_bits": 8, "type": "float", "strategy": "channel"},
                "input_activations": {"num_bits": 8, "type": "float", "dynamic": True},
                "targets": ["Linear"]}}}}, (1.0, "fp8", 2.0)),
        # compressed-tensors W8A8 INT8 (CompressedTensorsW8A8Int8)
        ({"torch_dtype": "bfloat16", "quantization_config": {
            "quant_method": "compressed-tensors",
            "config_groups": {"group_0": {
                "weights": {"num_bits": 8, "type": "int"},
                "input_activations": {"num_bits": 8, "type": "int"}}}}}, (1.0, "int8", 2.0)),
        # compressed-tensors W4A16 (pack-quantized, CompressedTensorsWNA16): weight-only
        ({"torch_dtype": "float16", "quantization_config": {
            "quant_method": "compressed-tensors", "format": "pack-quantized",
            "config_groups": {"group_0": {
                "weights": {"num_bits": 4, "type": "int", "group_size": 128},
                "input_activations": None}}}}, (0.5, "fp16", 2.0)),
        # compressed-tensors NVFP4 (CompressedTensorsW4A4Fp4): float 4, group 16
        ({"torch_dtype": "bfloat16", "quantization_config": {
            "quant_method": "compressed-tensors",
            "config_groups": {"group_0": {
                "weights": {"num_bits": 4, "type": "float", "group_size": 16},
                "input_activations": {"num_bits": 4, "type": "float", "group_size": 16}}}}},
         (0.5625, "fp4", 2.0)),
        # compressed-tensors spelled with an underscore and in compression_config
        ({"compression_config": {
            "quant_method": "compressed_tensors",
            "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float"},
                                    "input_activations": {"num_bits": 8, "type": "float"}}}}},
         (1.0, "fp8", None)),
        # ModelOpt FP8 with an FP8 KV cache (hf_quant_config style, producer modelopt):
        # vLLM resolve_kv_cache_dtype_string maps kv_cache_quant_algo FP8 to fp8
        ({"torch_dtype": "bfloat16", "quantization_config": {
            "producer": {"name": "modelopt", "version": "0.29.0"},
            "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}},
         (1.0, "fp8", 1.0)),
        # ModelOpt NVFP4 (quant_method modelopt_fp4 after normalisation)
        ({"torch_dtype": "bfloat16", "quantization_config": {
            "quant_method": "modelopt", "quant_algo": "NVFP4"}}, (0.5625, "fp4", 2.0)),
        # AutoAWQ: w_bit 4, weight-only (AutoAWQConfig.from_config reads w_bit / bits)
        ({"torch_dtype": "float16", "quantization_config": {
            "quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}},
         (0.5, "fp16", 2.0)),
        # GPTQ 8-bit (AutoGPTQConfig.from_config reads bits)
        ({"torch_dtype": "bfloat16", "quantization_config": {
            "quant_method": "gptq", "bits": 8, "group_size": 128, "desc_act": False}},
         (1.0, "bf16", 2.0)),
        # float32 checkpoint: vLLM's --dtype auto downcasts to 16 bits (_resolve_auto_dtype)
        ({"torch_dtype": "float32"}, (2.0, "bf16", 2.0)),
        # transformers ≥ 4.56 writes dtype
        ({"dtype": "float16"}, (2.0, "fp16", 2.0)),
    ],
)
def test_quantization_configs(
    config: dict[str, Any], expected: tuple[float | None, str | None, float | None]
) -> None:
    assert triple(config) == expected


def test_what_is_not_priced_says_so() -> None:
    # config groups of two precisions: no single b_w
    mixed = read_precision({"quantization_config": {
        "quant_method": "compressed-tensors",
        "config_groups": {"a": {"weights": {"num_bits": 8, "type": "float"}},
                          "b": {"weights": {"num_bits": 4, "type": "int"}}}}}, {})
    assert mixed is not None and mixed.weight_bytes is None and "different" in (mixed.note or "")
    odd = read_precision({"quantization_config": {"quant_method": "x" * 500}}, {})
    assert odd is not None and odd.weight_bytes is None and len(odd.method) < 120
    assert read_precision({"num_attention_heads": 8}, {}) is None
    assert read_precision({"torch_dtype": ["bfloat16"]}, {}) is None


def test_serving_config_options() -> None:
    # vLLM --quantization fp8 on an unquantized checkpoint: online W8A8 FP8
    served, kv = serving_precision("fp8", None, "fp8_e4m3")
    assert served is not None and (served.weight_bytes, served.compute_dtype) == (1.0, "fp8")
    assert kv == 1.0
    # an explicit float32 is kept by vLLM (only auto downcasts): 4-byte weights
    served, kv = serving_precision(None, "float32", "auto")
    assert served is not None and served.weight_bytes == 4.0 and kv is None
    # a method that needs the checkpoint's own config says nothing by itself
    assert serving_precision("awq", None, None) == (None, None)
    assert json.dumps(serving_precision(None, None, "int4_per_token_head")[1]) == "0.5"
