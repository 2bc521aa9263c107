"""docs/theory.md#step-time-model's step-time model, pure functions: every number worked out by
hand.

The hand derivations are written out step by step in the comments beside each test (an
independent implementation of the documented formulas agreed with every one).
GPU figures: data/gpus.json (A100 312 TFLOP/s BF16, 2.039 TB/s;
H100/H200 989 BF16, 1979 FP8, 3.35 / 4.8 TB/s; L40S 733 FP8, 0.864 TB/s, 32 GB/s PCIe).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from specgate.theory import step_time as st
from specgate.theory.gpus import gpu_table

A100 = st.Machine(2.039e12, 312e12)
H100 = st.Machine(3.35e12, 989e12)
LLAMA8 = st.Shape(8.03e9, 8.03e9, layers=32, query_heads=32, kv_heads=8, head_dim=128,
                  hidden_size=4096)
LLAMA8_COUNTED = LLAMA8._replace(parameters=8_030_261_248, active_parameters=8_030_261_248)
LLAMA70 = st.Shape(70_553_706_496, 70_553_706_496, layers=80, query_heads=64, kv_heads=8,
                   head_dim=128, hidden_size=8192)
MIXTRAL = st.Shape(46.7e9, 12.9e9, experts=8, experts_per_token=2, layers=32, query_heads=32,
                   kv_heads=8, head_dim=128, hidden_size=4096)
DEEPSEEK = st.Shape(671_026_419_200, 37_552_297_472, experts=256, experts_per_token=8,
                    layers=61, query_heads=128, kv_heads=128, hidden_size=7168,
                    kv_lora_rank=512, rope_head_dim=64)


def test_kv_and_attention_per_token() -> None:
    # K_tok = 2·32·8·128·2 = 131,072 B; A_tok = 4·32·32·128 = 524,288 FLOP
    assert st.kv_bytes_per_token(LLAMA8) == 131_072
    assert st.attention_flops_per_token(LLAMA8) == 524_288
    # Llama-3.1-70B: 2·80·8·128·2 = 327,680 B
    assert st.kv_bytes_per_token(LLAMA70) == 327_680
    # MLA: K_tok = 61·(512 + 64)·2 = 70,272 B (not 2·61·128·128·2 = 3,997,696);
    # A_tok = 2·61·128·(2·512 + 64) = 16,990,208 FLOP
    assert st.kv_bytes_per_token(DEEPSEEK) == 70_272
    assert st.attention_flops_per_token(DEEPSEEK) == 16_990_208
    # a stated K_tok wins; an FP8 cache halves the computed one
    assert st.kv_bytes_per_token(LLAMA8._replace(kv_bytes_per_token=1000.0)) == 1000.0
    assert st.kv_bytes_per_token(LLAMA8, 1.0) == 65_536


def test_kv_per_gpu_under_tensor_parallelism() -> None:
    # GQA: K_tok·ceil(KV/t)/KV; Llama-3.1-405B (KV 8) at t 16 reads K_tok/8, not /16
    llama405 = LLAMA8._replace(kv_heads=8)
    assert st.kv_bytes_per_gpu(llama405, 516_096, 16) == 516_096 / 8
    assert st.kv_bytes_per_gpu(LLAMA70, 327_680, 4) == 81_920  # ceil(8/4)/8 = 1/4
    # MLA: the latent is on every rank; attention data-parallel: 1/t of the sequences
    assert st.kv_bytes_per_gpu(DEEPSEEK, 70_272, 8) == 70_272
    assert st.kv_bytes_per_gpu(DEEPSEEK, 70_272, 8, data_parallel=True) == 70_272 / 8


def test_query_heads_per_kv_per_rank() -> None:
    # Qwen2-57B-A14B (H 28, KV 4) at t 2: (28/2)/ceil(4/2) = 7; DeepSeek-V3 MLA at t 8: 16
    qwen = st.Shape(1.0, 1.0, query_heads=28, kv_heads=4)
    assert st.query_heads_per_kv_rank(qwen, 2) == 7
    assert st.query_heads_per_kv_rank(DEEPSEEK, 8) == 16
    assert st.query_heads_per_kv_rank(DEEPSEEK, 1) == 128
    assert st.query_heads_per_kv_rank(st.Shape(1.0, 1.0, query_heads_per_kv=Fraction(5)), 4) == 5


def test_expert_split_and_reads() -> None:
    # Mixtral 46.7 B / 12.9 B, k 2 of 8: P_e = 33.8 / 0.75 = 45.0667 B, P_s = 1.6333 B;
    # P_read(4) = 1.6333 + 45.0667·(1 − 0.75⁴ = 0.68359375) = 32.4406 B; P_read(1) = P_act
    shared, routed = st.expert_split(MIXTRAL)
    assert routed / 1e9 == pytest.approx(45.0667, abs=5e-5)
    assert shared / 1e9 == pytest.approx(1.6333, abs=5e-5)
    assert st.read_parameters(MIXTRAL, 4) / 1e9 == pytest.approx(32.4406, abs=5e-5)
    assert st.read_parameters(MIXTRAL, 1) / 1e9 == pytest.approx(12.9, abs=1e-9)
    # the most any routing can read: P_s + P_e·min(1, k·x/E): x = 1 → P_act, x ≥ 4 → P
    assert st.read_parameters(MIXTRAL, 1, "any") / 1e9 == pytest.approx(12.9)
    assert st.read_parameters(MIXTRAL, 4, "any") / 1e9 == pytest.approx(46.7)
    assert st.read_parameters(LLAMA8, 100) == 8.03e9


def test_design_worked_llama8b_a100_batch128_32k() -> None:
    # docs/theory.md#step-time-model: κ = 128·32,000·131,072 / 16.06e9 = 33.4291; n* = 153.0162,
    # B·N/n* = 640/153.0162 = 4.1826; β = (4.1826 + 33.4291)/(1 + 33.4291) = 1.0924
    work = st.Workload(128, 32_000)
    assert st.kv_to_weight_ratio(LLAMA8, A100, work) == pytest.approx(33.4291, abs=5e-5)
    assert st.verify_cost_ratio(LLAMA8, A100, work, 5) == pytest.approx(1.0924, abs=5e-5)
    # computed P 8,030,261,248: κ = 33.4280, β still 1.0924
    assert st.kv_to_weight_ratio(LLAMA8_COUNTED, A100, work) == pytest.approx(33.4280, abs=5e-5)
    assert st.verify_cost_ratio(LLAMA8_COUNTED, A100, work, 5) == pytest.approx(1.0924, abs=5e-5)
    # without the KV term: docs/theory.md#cost-model's 4.1826
    assert st.verify_cost_ratio(LLAMA8, A100, st.Workload(128), 5) == pytest.approx(
        4.1826, abs=5e-5
    )


def test_design_worked_mixtral_batch1() -> None:
    # β = P_read(4)/P_read(1) = 32.4406 / 12.9 = 2.5148 (memory-bound: 0.33 ms of FLOPs ≪
    # 31.8 ms of reads); routing-free lower bound 1; with c̄ 4000: KV 0.2571 ms,
    # T(1,1) = 12.9104 ms, T(1,4) = 32.0773 ms → 2.4846
    assert st.verify_cost_ratio(MIXTRAL, A100, st.Workload(1), 4) == pytest.approx(
        2.5148, abs=5e-5
    )
    assert st.verify_cost_ratio(MIXTRAL, A100, st.Workload(1), 4, routing="any") == 1.0
    assert st.verify_cost_ratio(MIXTRAL, A100, st.Workload(1, 4000), 4) == pytest.approx(
        2.4846, abs=5e-5
    )
    assert st.expert_read_ratio(MIXTRAL, st.Workload(1), 4) == pytest.approx(2.5148, abs=5e-5)
    assert st.expert_read_ratio(LLAMA8, st.Workload(1), 4) is None


def test_moe_medium_batch_with_tensor_parallel_all_reduce() -> None:
    # Qwen2-57B-A14B on 2 × A100, B 80, c̄ 1000, N 4 (worked.md case 3):
    # T_lin 28.1553 / 28.1547 ms, KV 1.1249 ms, T_comm(80) = 56·(10 µs + 80·3584·2/300e9)
    # = 0.6670 ms, T_comm(320) = 0.9882 ms → β = 30.2684 / 29.9467 = 1.0107
    qwen = st.Shape(57_408_658_944, 14_249_270_784, experts=64, experts_per_token=8,
                    layers=28, query_heads=28, kv_heads=4, head_dim=128, hidden_size=3584)
    machine = A100._replace(tensor_parallel=2, allreduce_bandwidth=300e9,
                            allreduce_latency=10e-6)
    assert st.allreduce_time(qwen, machine, 80) == pytest.approx(0.6670e-3, abs=5e-8)
    assert st.verify_cost_ratio(qwen, machine, st.Workload(80, 1000), 4) == pytest.approx(
        1.0107, abs=5e-5
    )


def test_fp8_peak_keeps_n_star() -> None:
    # Llama-3.1-70B-FP8 on H100, B 128, N 4: FP8 peak 1979 with 1-byte weights:
    # n* = 1979/6.7 = 295.3731, β = 512/295.3731 = 1.7334; with c̄ (BF16 KV) the KV reads
    # lower it: 256 → 1.6365, 512 → 1.5623, 532 → 1.5572, 1000 → 1.4600, 2000 → 1.3350
    fp8 = st.Machine(3.35e12, 1979e12, weight_bytes=1.0)
    assert st.verify_cost_ratio(LLAMA70, fp8, st.Workload(128), 4) == pytest.approx(
        1.7334, abs=5e-5
    )
    for context, beta in ((256, 1.6365), (512, 1.5623), (532, 1.5572), (1000, 1.4600),
                          (2000, 1.3350)):
        assert st.verify_cost_ratio(LLAMA70, fp8, st.Workload(128, context), 4) == (
            pytest.approx(beta, abs=5e-5)
        )
    # v2's bug, BF16 peak with 1-byte weights: n* = 147.6119, β = 3.4686
    bug = st.Machine(3.35e12, 989e12, weight_bytes=1.0)
    assert st.verify_cost_ratio(LLAMA70, bug, st.Workload(128), 4) == pytest.approx(
        3.4686, abs=5e-5
    )


def test_pcie_all_reduce() -> None:
    # Llama-3.1-70B FP8 on 4 × L40S, B 16, c̄ 2000, N 4 (worked.md case 5):
    # T_lin 20.4148 ms, KV 3.0341 ms, T_comm 3.5661 / 9.4643 ms → β = 32.9132/27.0150 =
    # 1.2183; t_ar 0 → 1.2321; t_ar 50 µs → 1.1765; no all-reduce → 1.0000
    l40s = st.Machine(0.864e12, 733e12, tensor_parallel=4, weight_bytes=1.0,
                      allreduce_bandwidth=32e9, allreduce_latency=10e-6)
    work = st.Workload(16, 2000)
    assert st.allreduce_time(LLAMA70, l40s, 16) == pytest.approx(3.5661e-3, abs=5e-8)
    assert st.allreduce_time(LLAMA70, l40s, 64) == pytest.approx(9.4643e-3, abs=5e-8)
    assert st.verify_cost_ratio(LLAMA70, l40s, work, 4) == pytest.approx(1.2183, abs=5e-5)
    assert st.verify_cost_ratio(LLAMA70, l40s._replace(allreduce_latency=0.0), work, 4) == (
        pytest.approx(1.2321, abs=5e-5)
    )
    assert st.verify_cost_ratio(LLAMA70, l40s._replace(allreduce_latency=50e-6), work, 4) == (
        pytest.approx(1.1765, abs=5e-5)
    )
    no_comm = l40s._replace(allreduce_bandwidth=None, allreduce_latency=None)
    assert st.verify_cost_ratio(LLAMA70, no_comm, work, 4) == pytest.approx(1.0, abs=5e-5)


def test_prefill_tokens_share_the_step() -> None:
    # Llama-3.1-8B on H100, B 64, c̄ 4000, N 4, C 512 (worked.md case 6): n* = 295.2239,
    # x = 576 → 1.9511, x = 768 → 2.6014, κ = 2.0892 → β = 4.6906/4.0403 = 1.1610; C 0 → 1
    assert st.verify_cost_ratio(LLAMA8_COUNTED, H100, st.Workload(64, 4000, 512), 4) == (
        pytest.approx(1.1610, abs=5e-5)
    )
    assert st.verify_cost_ratio(LLAMA8_COUNTED, H100, st.Workload(64, 4000), 4) == 1.0


def test_mla_moe_tensor_parallel() -> None:
    # DeepSeek-V3 on H200 TP8, FP8 weights, B 32, c̄ 4000, N 2, M 64 (worked.md case 7):
    # P_read 434.2753 / 585.3094 B → T_lin 11.3093 / 15.2424 ms; KV 1.8739 ms;
    # T_comm 1.4377 / 1.6553 ms → β = 18.7716/14.6209 = 1.2839
    h200 = st.Machine(4.8e12, 1979e12, tensor_parallel=8, weight_bytes=1.0,
                      allreduce_bandwidth=450e9, allreduce_latency=10e-6, tile_rows=64)
    work = st.Workload(32, 4000)
    assert st.read_parameters(DEEPSEEK, 32) / 1e9 == pytest.approx(434.2753, abs=5e-4)
    assert st.read_parameters(DEEPSEEK, 64) / 1e9 == pytest.approx(585.3094, abs=5e-4)
    assert st.verify_cost_ratio(DEEPSEEK, h200, work, 2) == pytest.approx(1.2839, abs=5e-5)
    # at TP1, G = 128 > 64 rows: tiles(1) = 2, tiles(2) = 4
    assert st.step_time(DEEPSEEK, h200._replace(tensor_parallel=1), work, 2).tiles == 4


def test_attention_tiles_are_costed() -> None:
    # Llama-3.1-8B, H100, B 4, c̄ 131,072, tree N 64 (worked.md case 8): G·N = 256 rows →
    # 2 tiles; κ = 4·131,072·131,072/(2·8,030,261,248) = 4.2788 →
    # β = (1 + 2·4.2788)/(1 + 4.2788) = 1.8106
    work = st.Workload(4, 131_072)
    assert st.step_time(LLAMA8_COUNTED, H100, work, 64).tiles == 2
    assert st.verify_cost_ratio(LLAMA8_COUNTED, H100, work, 64) == pytest.approx(
        1.8106, abs=5e-5
    )


def test_tree_depths_at_batch_16() -> None:
    # H100, B 16, no context (worked.md case 12): β(N) = max(1, 16·N/295.2239):
    # N 5 → 1, 13 → 1, 25 → 1.3549, 33 → 1.7885
    for n, beta in ((5, 1.0), (13, 1.0), (25, 1.3549), (33, 1.7885)):
        assert st.verify_cost_ratio(LLAMA8, H100, st.Workload(16), n) == pytest.approx(
            beta, abs=5e-5
        )


def test_maverick_all_reduce_rescues_the_measured_point() -> None:
    # TRT-LLM PR #5146, Llama-4-Maverick FP8 on H200 TP8, concurrency 4, N 4 (worked.md
    # case 14): with T_comm β = (1.5561 + 1.0212)/(0.6798 + 0.9753) = 1.5572; expert
    # term alone 59.7527/26.1036 = 2.2891 (its ceiling 2.90/2.2891 = 1.2669 < the measured
    # 1.67: why the uniform-routing term stays out of the proven β)
    maverick = st.Shape(400_711_848_960, 17_184_691_200, experts=128, experts_per_token=1,
                        layers=48, query_heads=40, kv_heads=8, head_dim=128, hidden_size=5120)
    h200 = st.Machine(4.8e12, 1979e12, tensor_parallel=8, weight_bytes=1.0,
                      allreduce_bandwidth=450e9, allreduce_latency=10e-6)
    assert st.verify_cost_ratio(maverick, h200, st.Workload(4), 4) == pytest.approx(
        1.5572, abs=5e-5
    )
    alone = h200._replace(tensor_parallel=1, allreduce_bandwidth=None, allreduce_latency=None)
    assert st.verify_cost_ratio(maverick, alone, st.Workload(4), 4) == pytest.approx(
        2.2891, abs=5e-5
    )


def test_qwen3_moe_small_and_medium_batch() -> None:
    # Qwen3-30B-A3B on H100, N 4 (worked.md case 15): B 1 → 8.1372/3.3530 = 2.4268;
    # B 32 → 30.5246/26.8564 = 1.1366
    qwen = st.Shape(30_532_122_624, 3_353_032_704, experts=128, experts_per_token=8,
                    layers=48, query_heads=32, kv_heads=4, head_dim=128, hidden_size=2048)
    assert st.verify_cost_ratio(qwen, H100, st.Workload(1), 4) == pytest.approx(2.4268, abs=5e-5)
    assert st.verify_cost_ratio(qwen, H100, st.Workload(32), 4) == pytest.approx(
        1.1366, abs=5e-5
    )


def test_fp8_weights_on_a100_run_bf16_math() -> None:
    # worked.md case 16: A100 has no FP8: 1-byte weights at the BF16 peak, n* = 76.5081,
    # B 64, N 4: β = 256/76.5081 = 3.3461; INT8 (W8A8) 624: n* 153.0162, β 1.6730
    w8 = st.Machine(2.039e12, 312e12, weight_bytes=1.0)
    assert st.verify_cost_ratio(LLAMA70, w8, st.Workload(64), 4) == pytest.approx(
        3.3461, abs=5e-5
    )
    assert st.verify_cost_ratio(LLAMA70, w8._replace(peak_flops=624e12), st.Workload(64), 4) == (
        pytest.approx(1.6730, abs=5e-5)
    )


def test_gpu_table_dense_peaks_per_dtype() -> None:
    # data sheets (sparse figures halved): H100 SXM FP8 3,958 sparse → 1,979 dense; A100
    # has no FP8 tensor cores, INT8 624 dense; B200 FP4 9,000 dense; every row sourced
    table = gpu_table()
    assert table["h100-sxm"].peak("fp8") == 1979
    assert table["h100-sxm"].peak("bf16") == 989 == table["h100-sxm"].peak_tflops
    assert table["a100-80gb"].peak("fp8") is None
    assert table["a100-80gb"].peak("int8") == 624
    assert table["b200"].peak("fp4") == 9000
    assert table["l40s"].allreduce_gbps == 32
    assert all(row.sources and row.allreduce_gbps for row in table.values())
