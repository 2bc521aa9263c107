"""``specgate doctor`` flags for theory v2 (README.md#command-line, docs/theory.md#cost-model): same
parsing rules as the other flags (a bad value is a usage error, exit 2, one line)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specgate.cli.main import main


def doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["doctor", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


BASE = ["--speculative-decoding", "--cache-coherence-eval"]


def test_roofline_from_concurrency_and_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/theory.md#cost-model: H100, B 128, D 3, AL 2.8, ρ 0.05: β 1.7343, S 1.4860
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
    # measured 1.05 at D 2, AL 1.89: ρ derived from it (docs/theory.md#which-rho names it
    # "derived"); SG102 is then the gain test (1.05 < 1.1)
    argv = [*BASE, "--accept-length=1.89", "--draft-length=2", "--measured-speedup=1.05"]
    code, report, _ = doctor(argv, capsys)
    assert code == 1
    assert "SG102" in [f["code"] for f in report["findings"]]
    assert report["metrics"]["draft_depth_ratio_source"] == "derived"
    code, report, _ = doctor([*argv, "--min-gain=0"], capsys)
    assert "SG102" not in [f["code"] for f in report["findings"]]
    # a measured 0.9 is a net loss
    code, report, _ = doctor([*BASE, "--accept-length=1.89", "--draft-length=2",
                              "--measured-speedup=0.9"], capsys)
    assert "SG106" in [f["code"] for f in report["findings"]]


def test_per_position_gives_d_opt(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/theory.md#optimal-draft-length: D_opt 3, S 1.7692, gain 0.2128 → SG205
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


# --- --per-position is judged as the claims file's inline per-position metrics ---------------


def _codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


def test_a_rising_profile_that_misses_the_al_is_sg305(capsys: pytest.CaptureFixture[str]) -> None:
    # m2 = 0.7 > m1 = 0.6 rises, and 1 + (0.6 + 0.7 + 0.2 + 0.05) = 2.55 ≠ AL 2.2
    code, report, _ = doctor(
        [*BASE, "--draft-depth-ratio=0.05", "--accept-length=2.2", "--draft-length=4",
         "--per-position=0.6,0.7,0.2,0.05"], capsys)
    assert code == 1
    assert report["status"] == "fail"
    assert "SG305" in _codes(report)


def test_a_profile_far_below_the_al_is_sg305(capsys: pytest.CaptureFixture[str]) -> None:
    # 1 + 4 × 0.1 = 1.4, not the stated AL 3.5 (|1.4 − 3.5| > 0.02)
    code, report, _ = doctor(
        [*BASE, "--draft-depth-ratio=0.05", "--accept-length=3.5", "--draft-length=4",
         "--per-position=0.1,0.1,0.1,0.1"], capsys)
    assert code == 1
    assert "SG305" in _codes(report)


def test_a_profile_longer_than_d_is_sg309(capsys: pytest.CaptureFixture[str]) -> None:
    # five positions were measured at D = 5; the deployment drafts D = 4
    code, report, _ = doctor(
        [*BASE, "--draft-depth-ratio=0.05", "--draft-length=4",
         "--per-position=0.7,0.5,0.3,0.2,0.1"], capsys)
    assert code == 1
    assert "SG309" in _codes(report)


def test_a_profile_alone_gives_the_al(capsys: pytest.CaptureFixture[str]) -> None:
    # AL = 1 + 0.7 + 0.4 + 0.2 = 2.3; ρ 0.05, D 3: S = 2.3 / 1.15 = 2
    code, report, _ = doctor(
        [*BASE, "--draft-depth-ratio=0.05", "--draft-length=3", "--per-position=0.7,0.4,0.2"],
        capsys)
    assert code == 0
    assert report["metrics"]["accept_length"] == 2.3
    assert report["metrics"]["theoretical_speedup"] == 2.0
    assert "SG305" not in _codes(report) and "SG309" not in _codes(report)


# --- the doctor accepts what a claims file may hold, and no more (limits.py) -----------------


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--draft-length=1025"], "'1025' is not a whole number from 0 to 1,024"),
        (["--draft-length=1e9"], "'1e9' is not a whole number from 0 to 1,024"),
        (["--next-accept-length=3", "--next-draft-length=2000"], "from 0 to 1,024"),
        (["--verify-tokens=1026"], "'1026' is not a whole number from 1 to 1,025"),
        (["--query-heads=70000", "--kv-heads=8"], "'70000' is not a whole number from 1 to 65,536"),
        (["--query-heads-per-kv=0.5"], "0.5 must be ≥ 1"),
        (["--query-heads-per-kv=1e300"], "1e300 must be ≤ 65,536"),
        (
            ["--query-heads=8", "--kv-heads=16"],
            "--kv-heads 16 exceeds --query-heads 8: every KV head serves at least one query head",
        ),
    ],
)
def test_values_a_claims_file_may_not_hold_are_usage_errors(
    flags: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, err = doctor([*BASE, "--accept-length=2", "--draft-length=3", *flags], capsys)
    assert code == 2
    assert report == {}
    assert said in err
    assert err.count("\n") == 1
