"""``specgate doctor`` flags for theory v2 (DESIGN.md §5, §8): same parsing rules as the
other flags (a bad value is a usage error, exit 2, one line)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specgate.cli import main


def doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["doctor", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


BASE = ["--speculative-decoding", "--cache-coherence-eval"]


def test_roofline_from_concurrency_and_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    # §8.1: H100, B 128, D 3, AL 2.8, ρ 0.05: β 1.7343, S 1.4860
    code, report, _ = doctor(
        [*BASE, "--accept-length=2.8", "--draft-length=3", "--draft-depth-ratio=0.05",
         "--concurrency=128", "--gpu=h100-sxm"], capsys)
    assert code == 0
    m = report["metrics"]
    assert (m["verify_cost_ratio"], m["theoretical_speedup"]) == (1.7343, 1.486)
    assert m["verify_cost_source"] == "roofline"


def test_tree_and_single_pass(capsys: pytest.CaptureFixture[str]) -> None:
    # tree depth 4, 10 nodes: S 3.2 / 1.2 = 2.6667
    _, report, _ = doctor([*BASE, "--accept-length=3.2", "--draft-length=4",
                           "--verify-tokens=11", "--draft-depth-ratio=0.05"], capsys)
    assert report["metrics"]["theoretical_speedup"] == 2.6667
    # one pass, D 15, AL 6.1, ρ 0.15: 6.1 / 1.15 = 5.3043
    _, report, _ = doctor([*BASE, "--accept-length=6.1", "--draft-length=15",
                           "--draft-passes=single", "--draft-depth-ratio=0.15"], capsys)
    assert report["metrics"]["theoretical_speedup"] == 5.3043
    assert report["metrics"]["draft_passes"] == "single"


def test_measured_speedup_and_min_gain(capsys: pytest.CaptureFixture[str]) -> None:
    # measured 1.05 at D 2, AL 1.89: ρ measured; SG102 is then the gain test (1.05 < 1.1)
    argv = [*BASE, "--accept-length=1.89", "--draft-length=2", "--measured-speedup=1.05"]
    code, report, _ = doctor(argv, capsys)
    assert code == 1
    assert "SG102" in [f["code"] for f in report["findings"]]
    assert report["metrics"]["draft_depth_ratio_source"] == "measured"
    code, report, _ = doctor([*argv, "--min-gain=0"], capsys)
    assert "SG102" not in [f["code"] for f in report["findings"]]
    # a measured 0.9 is a net loss
    code, report, _ = doctor([*BASE, "--accept-length=1.89", "--draft-length=2",
                              "--measured-speedup=0.9"], capsys)
    assert "SG106" in [f["code"] for f in report["findings"]]


def test_per_position_gives_d_opt(capsys: pytest.CaptureFixture[str]) -> None:
    # §8.6: D_opt 3, S 1.7692, gain 0.2128 → SG205
    _, report, _ = doctor(
        [*BASE, "--accept-length=2.48", "--draft-length=7", "--draft-depth-ratio=0.1",
         "--per-position=0.7,0.4,0.2,0.1,0.05,0.02,0.01"], capsys)
    assert report["metrics"]["optimal_draft_length"] == {
        "draft_length": 3, "speedup": 1.7692, "gain": 0.2128,
    }
    assert "SG205" in [f["code"] for f in report["findings"]]


def test_throughput_region_without_concurrency_is_sg207(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, report, _ = doctor([*BASE, "--accept-length=2.8", "--draft-length=3",
                           "--draft-depth-ratio=0.05", "--latency-region=throughput",
                           "--gpu=h100-sxm"], capsys)
    assert "SG207" in [f["code"] for f in report["findings"]]


@pytest.mark.parametrize(
    "argv",
    [
        ["--verify-tokens=0"],
        ["--verify-tokens=2.5"],
        ["--draft-length=4", "--verify-tokens=4"],  # below 1 + D
        ["--draft-passes=twice"],
        ["--concurrency=0"],
        ["--concurrency=abc"],
        ["--gpu=h100"],
        ["--measured-speedup=0"],
        ["--measured-speedup=nan"],
        ["--per-position=0.8,x"],
        ["--per-position=0.8,1.2"],
        ["--per-position=" + ",".join(["0.5"] * 2000)],
        ["--min-gain=-0.1"],
    ],
)
def test_bad_values_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["doctor", *argv])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
