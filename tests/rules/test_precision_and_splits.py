"""The step-time model's precision, per-rank G and unknown TP through the rules
(docs/theory.md#step-time-inputs, docs/theory.md#proven-verify-cost,
docs/theory.md#attention-tiles). Every number is worked by hand in the comment beside it.

GPU figures (data/gpus.json): H100-SXM 989 BF16 / 1979 FP8 TFLOP/s, 3.35 TB/s; A100
312 BF16 / 624 INT8, 2.039 TB/s. Llama-3.1-70B counted from its config: P =
70,553,706,496; K_tok = 2·80·8·128·2 = 327,680 B; A_tok = 4·80·64·128 = 2,621,440.
Llama-3.1-8B: P = 8,030,261,248, K_tok 131,072 B.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.rules.test_rules import claims, codes, dep, details, message, only

from specgate.check.report import FileReport

Check = Callable[..., FileReport]
DATA = Path(__file__).resolve().parents[1] / "data"
LLAMA8 = DATA / "real" / "hf-config" / "config" / "meta-llama--Meta-Llama-3.1-8B_config.json"
LLAMA70 = DATA / "theory" / "hf-config" / "meta-llama--Meta-Llama-3.1-70B_config.json"
#: What Meta's FP8 checkpoints declare (vLLM fbgemm_fp8.py FBGEMMFp8Config.from_config
#: reads modules_to_not_convert and activation_scale_ub): FP8 weights, dynamic per-token
#: FP8 activations.
FBGEMM_FP8 = {
    "quant_method": "fbgemm_fp8",
    "activation_scale_ub": 1200.0,
    "modules_to_not_convert": ["lm_head"],
}


def config(tmp_path: Path, source: Path, **extra: Any) -> str:
    """Copy a model config beside the claims file (with ``extra`` keys); its name."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    data = json.loads(source.read_text(encoding="utf-8"))
    data.update(extra)
    (tmp_path / source.name).write_text(json.dumps(data), encoding="utf-8")
    return source.name


def metrics(report: FileReport) -> Any:
    return only(report).metrics


# --- 1. the precision the checkpoint declares -------------------------------------------


def _seventy(tmp_path: Path, check_text: Check, hardware: dict[str, Any], **extra: Any) -> Any:
    name = config(tmp_path, LLAMA70, **extra)
    return check_text(claims(dep(
        d=3, rho=0.05, al=2.8, claim=1.8, model={"hf_config": name},
        workload={"concurrency": 128, "context_length": 2000, "prefill_tokens_per_step": 0},
        hardware={"gpu": "h100-sxm", "tensor_parallel": 1, **hardware},
    )))


def test_fp8_checkpoint_prices_one_byte_weights_at_the_fp8_peak(
    check_text: Check, tmp_path: Path
) -> None:
    # Llama-3.1-70B, fbgemm_fp8 checkpoint, H100, B 128, c̄ 2000, D 3 (N 4), TP 1:
    # b_w 1 at 1979 TFLOP/s: T_lin(512) = max(70.5537e9/3.35e12 = 21.06081 ms,
    # 2·70.5537e9·512/1979e12 = 36.50682 ms) = 36.50682 ms; T_lin(128) = 21.06081 ms;
    # KV 128·2000·327,680/3.35e12 = 25.04062 ms (8·4 = 32 rows: one tile; attention
    # FLOPs 1.356 ms are below it): β = 61.54744/46.10143 = 1.33504, S = 2.8/1.48504 =
    # 1.8855 ≥ the claimed 1.8: no fail. The proven β is the same model β with host
    # overhead allowed (newuser review defect 7): 1 + 0.33504·0.38 = 1.1273.
    report = _seventy(tmp_path, check_text, {}, quantization_config=FBGEMM_FP8)
    m = metrics(report)
    assert m.verify_cost_ratio == pytest.approx(1.33504, abs=5e-5)
    assert m.proven_verify_cost_ratio == pytest.approx(1.1273, abs=5e-5)
    precision = m.verify_cost.precision
    assert (precision.weight_bytes, precision.compute_dtype) == (1.0, "fp8")
    assert "fbgemm_fp8" in precision.weight_source
    assert precision.kv_cache_bytes == 2.0  # --kv-cache-dtype auto: the model dtype (BF16)
    assert not {"SG104", "SG106", "SG112"} & set(codes(report))


def test_bf16_checkpoint_and_the_v2_pairing(check_text: Check, tmp_path: Path) -> None:
    # The same deployment read as BF16 (the config's torch_dtype; no quantization_config):
    # T_lin(512) = 2·70.5537e9·512/989e12 = 73.05055 ms, T_lin(128) = 2·70.5537e9/3.35e12
    # = 42.12162 ms: β = 98.09117/67.16224 = 1.46051, S = 2.8/1.61051 = 1.7386 < 1.8.
    # The proven β allows host overhead (newuser review defect 7): 1 + 0.46051·0.38 =
    # 1.1750, S ≤ 2.8/1.3250 = 2.1132: the claimed 1.8 warns (SG112), a claimed 2.2 fails
    # SG104 (the precision is stated by the checkpoint, the fail rests on it).
    report = _seventy(tmp_path, check_text, {})
    assert metrics(report).verify_cost_ratio == pytest.approx(1.46051, abs=5e-5)
    assert metrics(report).proven_verify_cost_ratio == pytest.approx(1.1750, abs=5e-5)
    assert "SG112" in codes(report) and "SG104" not in codes(report)
    name = config(tmp_path, LLAMA70)
    report = check_text(claims(dep(
        d=3, rho=0.05, al=2.8, claim=2.2, model={"hf_config": name},
        workload={"concurrency": 128, "context_length": 2000, "prefill_tokens_per_step": 0},
        hardware={"gpu": "h100-sxm", "tensor_parallel": 1},
    )))
    assert "2.1132x" in message(report, "SG104")
    # v2's defect, 1-byte weights priced at the BF16 peak, is what a stated W8A16
    # deployment really runs (weight-only FP8, BF16 GEMMs): 98.09117/46.10143 = 2.12773.
    # With the weights stated and the compute dtype not, the FP8 peak pairs with them.
    report = _seventy(tmp_path, check_text, {"weight_bytes": 1, "compute_dtype": "bf16"})
    assert metrics(report).verify_cost_ratio == pytest.approx(2.12773, abs=5e-5)
    report = _seventy(tmp_path, check_text, {"weight_bytes": 1})
    assert metrics(report).verify_cost_ratio == pytest.approx(1.33504, abs=5e-5)


def test_engine_quantization_and_kv_cache_dtype(check_text: Check, tmp_path: Path) -> None:
    # vLLM --quantization fp8 on a BF16 checkpoint quantizes online (W8A8 FP8) and
    # --kv-cache-dtype fp8 stores one byte per element: Llama-3.1-8B, A100 (no FP8 peak:
    # the BF16 312 TFLOP/s), B 128, c̄ 32,000, D 4, TP 4 stated by the command.
    # κ = 128·32,000·65,536/(1·8,030,261,248) = 33.4280 (both halved); KV heads 8/4 per
    # rank. The sources say where each number was read.
    name = config(tmp_path, LLAMA8)
    (tmp_path / "serve.txt").write_text(
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 4 "
        "--quantization fp8 --kv-cache-dtype fp8 --speculative-config "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4}'\n", encoding="utf-8")
    report = check_text(claims(dep(
        al=2.0, rho=0.0, model={"hf_config": name},
        speculation={"engine": "vllm", "engine_config": "serve.txt"},
        workload={"concurrency": 128, "context_length": 32000, "prefill_tokens_per_step": 0},
        hardware={"gpu": "a100-80gb"},
    )))
    m = metrics(report)
    precision = m.verify_cost.precision
    assert (precision.weight_bytes, precision.compute_dtype, precision.kv_cache_bytes) == (
        1.0, "fp8", 1.0)
    assert precision.weight_source == "serve.txt: --quantization fp8"
    assert precision.kv_source == "serve.txt: --kv-cache-dtype"
    assert m.verify_cost.kv_to_weight_ratio == pytest.approx(33.4280, abs=5e-5)


def test_unknown_precision_bounds_the_proof(check_text: Check) -> None:
    # Claims-only Llama-3.1-8B shapes, A100, B 128, c̄ 32,000, D 4, TP 1: the estimate
    # keeps BF16 (β 1.0924, docs/theory.md#step-time-model). The weights' precision is not stated,
    # so the proven β is the lowest over the serving schemes; INT8 W8A8 (1 byte, 624 TOP/s) with
    # BF16 KV gives T_lin(640) = 2·8.03e9·640/624e12 = 16.47179 ms, T_lin(128) = max(8.03e9/
    # 2.039e12 = 3.93821, 3.29436) = 3.93821 ms, KV 128·32,000·131,072/2.039e12 =
    # 263.30108 ms: β = 279.77287/267.23929 = 1.04690, with host overhead (newuser review
    # defect 7) 1 + 0.04690·0.38 = 1.0178. A claim of 1.47 with AL 3.428 and ρ 0.3: S ≤
    # 3.428/(1.0178 + 1.2) = 1.5456 ≥ 1.47, while the estimate says 3.428/2.2924 = 1.4954
    # ≥ 1.47 too: no finding on the claim either way.
    model = {"parameters_b": 8.03, "layers": 32, "query_heads": 32, "kv_heads": 8,
             "head_dim": 128, "hidden_size": 4096}
    deployment = {
        "d": 4, "rho": 0.3, "al": 3.428, "claim": 1.47, "model": model,
        "workload": {"concurrency": 128, "context_length": 32000, "prefill_tokens_per_step": 0},
        "hardware": {"gpu": "a100-80gb", "tensor_parallel": 1},
    }
    m = metrics(check_text(claims(dep(**deployment))))
    assert m.verify_cost_ratio == pytest.approx(1.0924, abs=5e-5)
    assert m.proven_verify_cost_ratio == pytest.approx(1.0178, abs=5e-5)
    assert m.verify_cost.precision.weight_source is None  # assumed, and said so in JSON
    # stated BF16 weights and KV: the proof is docs/theory.md#step-time-model's 1.0924 with host
    # overhead, 1 + 0.0924·0.38 = 1.0351
    deployment["hardware"] = {"gpu": "a100-80gb", "tensor_parallel": 1, "weight_bytes": 2,
                              "compute_dtype": "bf16", "kv_cache_bytes": 2}
    m = metrics(check_text(claims(dep(**deployment))))
    assert m.proven_verify_cost_ratio == pytest.approx(1.0351, abs=5e-5)


# --- 2. G per rank under tensor parallelism ----------------------------------------------


def _tiles(check_text: Check, tp: int | None, d: int = 40) -> FileReport:
    hardware = {} if tp is None else {"hardware": {"tensor_parallel": tp}}
    return check_text(claims(dep(
        d=d, rho=0.01, al=3.1, model={"query_heads": 64, "kv_heads": 8},
        workload={"attention_dominated": True}, **hardware,
    )))


def test_g_per_rank_under_tensor_parallelism(check_text: Check) -> None:
    # Llama-3.1-70B heads (H 64, KV 8). TP 4: 16 query heads over max(1, 8/4) = 2 KV heads
    # per rank, G 8 (as at TP 1): D* = floor(128/8) − 1 = 15; D 40: 8·41 = 328 rows, 3
    # tiles. TP 16: 4 heads over max(1, 8/16) = 1 KV head (vLLM replicates KV heads past
    # TP = KV): G 4, D* = 31; D 40: 4·41 = 164 rows, 2 tiles, tile-aligned D 63.
    m = metrics(_tiles(check_text, 4))
    assert (m.query_heads_per_kv, m.attention_optimal_draft_length, m.attention_tiles) == (
        8, 15, 3)
    report = _tiles(check_text, 16)
    m = metrics(report)
    assert (m.query_heads_per_kv, m.attention_optimal_draft_length, m.attention_tiles) == (
        4, 31, 2)
    assert m.tile_aligned_draft_length == 63
    assert "for G = 4 per rank (TP 16: 4 query heads over 1 KV head)" in message(
        report, "SG201")
    assert "at G = 4 per rank (TP 16" in message(report, "SG206")
    # TP not stated: the model's G 8, said so
    report = _tiles(check_text, None)
    assert metrics(report).query_heads_per_kv == 8
    assert "for G = 8 (the model's; TP not stated)" in message(report, "SG201")


def test_g_per_rank_from_the_engine_config(check_text: Check, tmp_path: Path) -> None:
    # TP 16 read from `vllm serve … -tp 16` (no hardware.tensor_parallel): G 4 per rank as
    # above; D 8 from the command: 4·9 = 36 rows, one tile, D* = 31 (at TP 1: 15).
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serve.txt").write_text(
        "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 16 --speculative-config "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 8}'\n", encoding="utf-8")
    report = check_text(claims(dep(
        model={"query_heads": 64, "kv_heads": 8},
        speculation={"engine": "vllm", "engine_config": "serve.txt"},
        workload={"attention_dominated": True},
    )))
    m = metrics(report)
    assert (m.query_heads_per_kv, m.attention_optimal_draft_length, m.attention_tiles) == (
        4, 31, 1)
    assert m.grouping.tensor_parallel == 16 and m.grouping.per_rank


# --- 3. the proven β when TP is unknown ---------------------------------------------------


def test_a_fail_that_holds_at_every_tp(check_text: Check, tmp_path: Path) -> None:
    # Llama-3.1-8B (BF16 config) on H100, B 512, c̄ 100, D 3 (N 4), AL 2.5, ρ 0.05: a
    # compute-bound step. TP 1: T_lin(2048) = 2·8.0303e9·2048/989e12 = 33.25779 ms,
    # T_lin(512) = 8.31445 ms, KV 512·100·131,072/3.35e12 = 2.00325 ms: β = 35.26104/
    # 10.31770 = 3.41753, S = 2.5/3.56753 = 0.7008 < 1 at the model β. The proven β
    # allows host overhead (newuser review defect 7): 1 + 2.41753·0.38 = 1.9187, S ≤
    # 2.5/2.0687 = 1.2085 ≥ 1: with TP 1 stated no SG106, SG112 warns (0.7008 < 1.1).
    # TP unknown: the lowest β over the splits is at TP 32 (KV heads replicated past TP 8:
    # K_tok/8 per rank), α 50 µs: (1.03931 + 0.25041 + 3.2)/(0.25983 + 0.25041 + 3.2) =
    # 4.48972/3.71024 = 1.21009, with host overhead 1 + 0.21009·0.38 = 1.0798; S ≤
    # 2.5/1.2298 = 2.0328: a claim of 2.1 is above it at every TP: SG104 stands without TP.
    name = config(tmp_path, LLAMA8)

    def run(hardware: dict[str, Any], claim: float | None) -> FileReport:
        return check_text(claims(dep(
            d=3, rho=0.05, al=2.5, claim=claim, model={"hf_config": name},
            workload={"concurrency": 512, "context_length": 100, "prefill_tokens_per_step": 0},
            hardware={"gpu": "h100-sxm", **hardware},
        )))

    report = run({"tensor_parallel": 1}, None)
    assert metrics(report).verify_cost_ratio == pytest.approx(3.41753, abs=5e-5)
    assert metrics(report).proven_verify_cost_ratio == pytest.approx(1.9187, abs=5e-5)
    assert "SG106" not in codes(report) and "SG112" in codes(report)
    report = run({}, None)
    assert metrics(report).proven_verify_cost_ratio == pytest.approx(1.0798, abs=5e-5)
    assert "SG106" not in codes(report)
    assert "hardware.tensor_parallel" in details(report, "SG112")
    report = run({}, 2.1)
    assert "SG104" in codes(report)
    assert "2.0328x" in message(report, "SG104")


def test_sglang_quantization_and_kv_cache_dtype(check_text: Check, tmp_path: Path) -> None:
    # SGLang's server args `quantization: fp8` (online FP8) and `kv-cache-dtype:
    # fp8_e5m2` (one byte), TP 2: b_w 1 at FP8, b_kv 1, G per rank (32/2)/(8/2) = 4.
    name = config(tmp_path, LLAMA8)
    (tmp_path / "sglang.yaml").write_text(
        "model-path: meta-llama/Llama-3.1-8B-Instruct\nspeculative-algorithm: EAGLE3\n"
        "speculative-num-steps: 3\nspeculative-eagle-topk: 1\n"
        "speculative-num-draft-tokens: 4\nquantization: fp8\nkv-cache-dtype: fp8_e5m2\n"
        "speculative-draft-model-path: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
        "tp-size: 2\n", encoding="utf-8")
    report = check_text(claims(dep(
        al=2.5, rho=0.05, model={"hf_config": name},
        speculation={"engine": "sglang", "engine_config": "sglang.yaml"},
        workload={"concurrency": 8, "context_length": 4000, "prefill_tokens_per_step": 0},
        hardware={"gpu": "h100-sxm"},
    )))
    m = metrics(report)
    precision = m.verify_cost.precision
    assert (precision.weight_bytes, precision.compute_dtype, precision.kv_cache_bytes) == (
        1.0, "fp8", 1.0)
    assert precision.weight_source == "sglang.yaml: --quantization fp8"
    assert (m.query_heads_per_kv, m.grouping.tensor_parallel) == (4, 2)
