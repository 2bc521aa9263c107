"""The head revision cannot loosen its own change gate (hostile review defects 3 and 5).

The thresholds come from the base revision (README, "--baseline"): a pull request may
bring better evidence, never a wider slack. SG404's slack takes the head's
``measured_speedup_se`` only where it is smaller than the base's; SG401's z test only
counts a head sample that meets SG408's size (at least (sd / 0.05)² steps).
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from .conftest import InProcess

SPEEDUP = """\
version: 1
deployments:
  - name: d1
    model: {{name: x, query_heads: 64, kv_heads: 8, parameters_b: 70}}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}}
    workload: {{name: chat}}
    evidence:
      accept_length: 2.9
      cache_coherence_eval: true
      measured_speedup: {speedup}
{se}    claims: {{speedup: {speedup}}}
"""


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=folder, check=True, capture_output=True,
    )


def _change(folder: Path, base: str, head: str) -> None:
    """The base committed, the head in the work tree (``--baseline HEAD``)."""
    folder.mkdir(exist_ok=True)
    _git(folder, "init", "-q")
    (folder / "specgate.yaml").write_text(base, "utf-8")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "base")
    (folder / "specgate.yaml").write_text(head, "utf-8")


def _speedup(value: float, se: float | None) -> str:
    line = "" if se is None else f"      measured_speedup_se: {se}\n"
    return SPEEDUP.format(speedup=value, se=line)


def _findings(sg: InProcess, folder: Path) -> list[dict[str, object]]:
    result = sg(["check", "--format", "json", "--baseline", "HEAD", "specgate.yaml"], folder)
    assert result.code in (0, 1), result.err
    return list(result.json()["files"][0]["deployments"][0]["findings"])


@pytest.mark.parametrize("head_se", [5.0, 0.5, 0.05, 10000])
def test_a_head_standard_error_does_not_widen_sg404(
    sg: InProcess, tmp_path: Path, head_se: float
) -> None:
    # The review's reproducer: base 1.71x (SE 0.01), head 1.05x. With the base's SE for
    # both sides the allowance is 1.71·0.02 + √(0.01² + 0.01²) = 0.0342 + 0.0141 = 0.0483;
    # the drop is 0.66 (-38.6 %): SG404 fails whatever SE the head states.
    _change(tmp_path, _speedup(1.71, 0.01), _speedup(1.05, head_se))
    sg404 = [f for f in _findings(sg, tmp_path) if f["code"] == "SG404"]
    assert [f["severity"] for f in sg404] == ["fail"]
    assert "+ SE 0.0141" in str(sg404[0]["message"])
    assert f"this change's SE {head_se:g}" in str(sg404[0]["message"])


def test_a_smaller_head_standard_error_tightens_sg404(sg: InProcess, tmp_path: Path) -> None:
    # base 1.71x SE 0.05, head 1.62x SE 0.001: allowance 0.0342 + √(0.05² + 0.001²) =
    # 0.0342 + 0.05001 = 0.0842 < the 0.09 drop: fails (with the head's SE at 0.05 it
    # would be 0.0342 + 0.0707 = 0.1049 and pass: the head may only tighten)
    assert 1.71 * 0.02 + math.hypot(0.05, 0.001) < 0.09 < 1.71 * 0.02 + math.hypot(0.05, 0.05)
    _change(tmp_path, _speedup(1.71, 0.05), _speedup(1.62, 0.001))
    codes = {(f["code"], f["severity"]) for f in _findings(sg, tmp_path)}
    assert ("SG404", "fail") in codes
    _change(tmp_path / "same", _speedup(1.71, 0.05), _speedup(1.62, 0.05))
    assert not [f for f in _findings(sg, tmp_path / "same") if f["code"] == "SG404"]


def test_a_larger_head_standard_error_is_a_visible_warning(
    sg: InProcess, tmp_path: Path
) -> None:
    # base 1.71x SE 0.01, head 1.69x SE 0.5: a drop of 0.02 is within 0.0483, so it passes,
    # but the head's larger SE is named (it was not used)
    _change(tmp_path, _speedup(1.71, 0.01), _speedup(1.69, 0.5))
    sg404 = [f for f in _findings(sg, tmp_path) if f["code"] == "SG404"]
    assert [f["severity"] for f in sg404] == ["warn"]
    assert "measured_speedup_se 0.5 is larger" in str(sg404[0]["details"])  # Contract change
    assert sg404[0]["line"] == 11  # at the head's measured_speedup_se
    # a base without an SE: the head's SE cannot widen a slack of 0.0342 either
    _change(tmp_path / "none", _speedup(1.71, None), _speedup(1.60, 0.5))
    sg404 = [f for f in _findings(sg, tmp_path / "none") if f["code"] == "SG404"]
    assert [f["severity"] for f in sg404] == ["fail"]


HISTOGRAM = """\
version: 1
deployments:
  - name: d1
    model: {{name: x, query_heads: 64, kv_heads: 8, parameters_b: 70}}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}}
    workload: {{name: chat}}
    evidence:
      cache_coherence_eval: true
      metrics:
        format: histogram
        histogram: {histogram}
    claims: {{speedup: 2.0}}
"""
BASE_10K = "{0: 1000, 1: 1000, 2: 1000, 3: 7000}"  # AL 1 + 24,000/10,000 = 3.4


@pytest.mark.parametrize(
    "head",
    [
        "{0: 2, 1: 0, 2: 0, 3: 2}",  # the review's: AL 2.5 (-26 %), 4 steps, sd 1.73
        "{0: 3, 3: 3}",  # AL 2.5, 6 steps, sd 1.64: 1,080 needed
        "{1: 50, 2: 30, 3: 20}",  # AL 2.7 (-20.6 %), 100 steps, sd 0.785: 247 needed
    ],
)
def test_a_small_head_sample_does_not_make_an_al_drop_insignificant(
    sg: InProcess, tmp_path: Path, head: str
) -> None:
    _change(tmp_path, HISTOGRAM.format(histogram=BASE_10K), HISTOGRAM.format(histogram=head))
    codes = {(f["code"], f["severity"]) for f in _findings(sg, tmp_path)}
    assert ("SG401", "fail") in codes and ("SG408", "warn") in codes


def test_a_sufficient_head_sample_keeps_the_z_test(sg: InProcess, tmp_path: Path) -> None:
    # base {0: 160, 1: 120, 2: 80, 3: 40}: AL 2.0, sd 1.0013, SE 0.05006 (400 steps);
    # head {0: 175, 1: 130, 2: 65, 3: 30}: AL 1.875 (-6.25 %, past the 5 %), sd 0.9416,
    # 400 steps ≥ (0.9416 / 0.05)² = 354.6 needed, SE 0.04708:
    # z = −0.125 / √(0.04708² + 0.05006²) = −0.125 / 0.06872 = −1.82 > −2: noise, no SG401
    base = "{0: 160, 1: 120, 2: 80, 3: 40}"
    head = "{0: 175, 1: 130, 2: 65, 3: 30}"
    _change(tmp_path, HISTOGRAM.format(histogram=base), HISTOGRAM.format(histogram=head))
    codes = {f["code"] for f in _findings(sg, tmp_path)}
    assert "SG401" not in codes and "SG408" not in codes
    # the same drop from half the head's steps (200 < 354.6 needed): the percentage rule
    half = "{0: 88, 1: 65, 2: 32, 3: 15}"  # AL 1.87, 200 steps
    _change(tmp_path / "half", HISTOGRAM.format(histogram=base), HISTOGRAM.format(histogram=half))
    codes = {f["code"] for f in _findings(sg, tmp_path / "half")}
    assert "SG401" in codes and "SG408" in codes


def test_a_base_whose_numbers_price_nan_is_not_compared_silently(
    sg: InProcess, tmp_path: Path
) -> None:
    # the base revision read without the schema: a bandwidth of 1e-320 there prices its
    # metrics as NaN; the comparison is refused in the open (SG410), never made with NaN
    base = _speedup(1.71, 0.01).replace(
        "    workload: {name: chat}\n",
        "    workload: {name: chat}\n    hardware: {gpu: h100-sxm, memory_bandwidth_tbps: 1e-320,"
        " peak_tflops: 1e-320}\n",
    )
    _change(tmp_path, base, _speedup(1.05, 0.01))
    sg410 = [f for f in _findings(sg, tmp_path) if f["code"] == "SG410"]
    assert sg410 and "not a finite number" in str(sg410[0]["message"])
