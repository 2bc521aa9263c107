"""``specgate doctor``'s flags for the step-time inputs (docs/theory.md#step-time-inputs): each is
the claims-file key of its name; bad combinations are usage errors (exit 2) naming the flag.
Numbers worked by hand (tests/rules/test_theory_v3.py has the same cases as files)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specgate.cli.main import main

BASE = ["--speculative-decoding", "--cache-coherence-eval"]
LLAMA8 = ["--parameters-b=8.03", "--layers=32", "--query-heads=32", "--kv-heads=8",
          "--head-dim=128", "--hidden-size=4096"]


def doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["doctor", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


def test_context_length_prices_the_kv_cache(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/theory.md#step-time-model: Llama-3.1-8B on A100, B 128, c̄ 32,000, D 4: κ = 33.4291, β =
    # 1.0924; with the precision (BF16 weights and KV) and TP 1 stated the proven bound is the
    # same model β with host overhead allowed (newuser review defect 7): 1 + 0.0924·0.38
    # = 1.0351
    code, report, _ = doctor([*BASE, *LLAMA8, "--accept-length=3.428", "--draft-length=4",
                              "--draft-depth-ratio=0.3", "--concurrency=128", "--gpu=a100-80gb",
                              "--context-length=32000", "--prefill-tokens-per-step=0",
                              "--tensor-parallel=1", "--weight-bytes=2", "--compute-dtype=bf16",
                              "--kv-cache-bytes=2"], capsys)
    m = report["metrics"]
    assert m["verify_cost_ratio"] == 1.0924
    assert m["proven_verify_cost_ratio"] == 1.0351
    assert m["verify_cost_bound"] == "exact"
    assert m["kv_to_weight_ratio"] == 33.4291
    assert m["verify_cost_left_out"] == []
    assert code == 0


def test_experts_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # Mixtral B 1, D 3: β 2.5148 (upper), expert reads ×2.5148, S 0.6746 → SG112
    _, report, _ = doctor([*BASE, "--accept-length=2", "--draft-length=3",
                           "--draft-depth-ratio=0.15", "--parameters-b=46.7",
                           "--active-parameters-b=12.9", "--experts=8", "--experts-per-token=2",
                           "--gpu=a100-80gb"], capsys)
    m = report["metrics"]
    assert (m["verify_cost_ratio"], m["expert_read_ratio"]) == (2.5148, 2.5148)
    assert m["verify_cost_bound"] == "upper"
    assert m["proven_verify_cost_ratio"] == 1
    assert "SG112" in [f["code"] for f in report["findings"]]


def test_tensor_parallel_and_all_reduce(capsys: pytest.CaptureFixture[str]) -> None:
    # 4 × L40S, FP8 (--weight-bytes 1, compute dtype fp8 by default), Llama-3.1-70B
    # shapes, B 16, c̄ 2000: β 1.2183 (α 10 µs); modelled at α 50 µs 1.17651, proven with
    # host overhead (newuser review defect 7) 1 + 0.17651·0.38 = 1.0671; stating α 0 makes
    # the estimate 1.2321 and the proven 1 + 0.2321·0.38 = 1.0882
    argv = [*BASE, "--parameters-b=70.553706496", "--layers=80", "--query-heads=64",
            "--kv-heads=8", "--head-dim=128", "--hidden-size=8192", "--accept-length=2.5",
            "--draft-length=3", "--draft-depth-ratio=0.05", "--concurrency=16",
            "--context-length=2000", "--prefill-tokens-per-step=0", "--gpu=l40s",
            "--weight-bytes=1", "--tensor-parallel=4"]
    _, report, _ = doctor(argv, capsys)
    m = report["metrics"]
    assert (m["verify_cost_ratio"], m["proven_verify_cost_ratio"]) == (1.2183, 1.0671)
    _, report, _ = doctor([*argv, "--allreduce-latency-us=0"], capsys)
    m = report["metrics"]
    assert (m["verify_cost_ratio"], m["proven_verify_cost_ratio"]) == (1.2321, 1.0882)
    _, report, _ = doctor([*argv, "--allreduce-gbps=16"], capsys)
    assert report["metrics"]["verify_cost_ratio"] > 1.2183  # a slower link costs more


def test_compute_dtype_flag(capsys: pytest.CaptureFixture[str]) -> None:
    # A100, 1-byte weights, B 64, N 4: BF16 math β 3.3461; --compute-dtype int8: 1.6730
    argv = [*BASE, "--accept-length=2.8", "--draft-length=3", "--draft-depth-ratio=0.05",
            "--concurrency=64", "--gpu=a100-80gb", "--weight-bytes=1"]
    _, report, _ = doctor(argv, capsys)
    assert report["metrics"]["verify_cost_ratio"] == 3.3461
    _, report, _ = doctor([*argv, "--compute-dtype=int8"], capsys)
    assert report["metrics"]["verify_cost_ratio"] == 1.673


def test_tree_level_nodes_and_measured_points(capsys: pytest.CaptureFixture[str]) -> None:
    # worked.md case 12: D_opt 2 (S 2.1818, gain 0.3773) with levels 4,8,12,8 on H100, B 16
    _, report, _ = doctor([*BASE, "--draft-length=4", "--verify-tokens=33",
                           "--tree-level-nodes=4,8,12,8", "--draft-depth-ratio=0.05",
                           "--concurrency=16", "--gpu=h100-sxm",
                           "--per-position=0.8,0.6,0.45,0.3"], capsys)
    assert report["metrics"]["optimal_draft_length"] == {
        "draft_length": 2, "speedup": 2.1818, "gain": 0.3773}
    # worked.md case 10 at N 6: β 1.55 (chord), proven 1.35
    _, report, _ = doctor([*BASE, "--accept-length=3", "--draft-length=5",
                           "--draft-depth-ratio=0.02",
                           "--verify-cost-ratio-at=2:1.05,4:1.2,8:1.9"], capsys)
    m = report["metrics"]
    assert (m["verify_cost_ratio"], m["proven_verify_cost_ratio"]) == (1.55, 1.35)


@pytest.mark.parametrize(("flags", "words"), [
    (["--parameters-b=46.7", "--active-parameters-b=50"],
     "--active-parameters-b 50 is above the total 46.7 B (--parameters-b)"),
    (["--experts=8", "--experts-per-token=10"], "10 experts per token but only 8"),
    (["--query-heads=32", "--kv-heads=8", "--tensor-parallel=3"],
     "--tensor-parallel 3 does not divide the 32 query heads"),
    (["--tree-level-nodes=4,8", "--verify-tokens=33"],
     "--tree-level-nodes adds up to 12 nodes but N_verify − 1 = 32"),
    (["--verify-cost-ratio-at=4:1.2,4:1.3"], "verify tokens must increase"),
    (["--verify-cost-ratio-at=4:0.9"], "the ratio from 1 to 10^6"),
    (["--compute-dtype=fp6"], "invalid choice"),
])
def test_bad_combinations_are_usage_errors(
    flags: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = doctor([*BASE, "--accept-length=2", "--draft-length=2", *flags], capsys)
    assert code == 2
    assert words in err
    assert "Traceback" not in err
