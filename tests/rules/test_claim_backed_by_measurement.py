"""A claim at or below the deployment's own measured speedup is backed by it: SG104
does not fail it on a bound computed from a stated ρ the measurement contradicts; SG111
names the contradiction at the stated ρ (trial-a defect 2). Values worked by hand."""

from __future__ import annotations

import json
from collections.abc import Callable

from specgate.check.report import FileReport
from specgate.cli.main import main

Check = Callable[..., FileReport]

TEXT = """\
version: 1
deployments:
  - name: c
    speculation:
      enabled: true
      mechanism: eagle3
      draft_length: 3
      draft_depth_ratio: 0.05
    evidence: {{accept_length: 2.4, cache_coherence_eval: true, measured_speedup: {measured}}}
    claims: {{speedup: {claim}}}
"""


def _found(report: FileReport) -> dict[str, tuple[str, int | None, str]]:
    return {f.code: (f.severity, f.line, f.message) for f in report.all_findings()}


def test_claim_below_the_measurement_is_not_failed_by_the_stated_rho(check_text: Check) -> None:
    """AL 2.4, D 3, ρ 0.05, β 1: bound 2.4 / (1 + 0.05·3) = 2.4 / 1.15 = 2.0870x. Measured
    2.3 > 2.0870 × 1.02 = 2.1287: the stated ρ contradicts the measurement, which allows
    ρ ≤ (2.4 / 2.3 − 1) / 3 = 0.043478 / 3 = 0.014493 → 0.0145. Claimed 2.2 ≤ 2.3: backed."""
    found = _found(check_text(TEXT.format(measured="2.3", claim="2.2")))
    assert "SG104" not in found
    severity, line, text = found["SG111"]
    assert severity == "warn"
    assert line == 8  # speculation.draft_depth_ratio, the stated value the measurement refutes
    assert "= 2.087x at the stated ρ 0.05" in text
    assert "the measurement allows ρ ≤ 0.0145" in text


def test_within_noise_nothing_fires(check_text: Check) -> None:
    """Measured 2.1 ≤ 2.1287 (2 % over 2.0870): no SG111; claimed 2.1 = measured: no SG104."""
    found = _found(check_text(TEXT.format(measured="2.1", claim="2.1")))
    assert "SG104" not in found
    assert "SG111" not in found


def test_claim_above_the_measurement_and_the_bound_still_fails(check_text: Check) -> None:
    """Claimed 2.5 > measured 2.3 and > 2.0870: SG104 and SG107 both fail, as before."""
    found = _found(check_text(TEXT.format(measured="2.3", claim="2.5")))
    assert found["SG104"][0] == "fail"
    assert found["SG107"][0] == "fail"


def test_doctor_says_the_same(capsys) -> None:  # type: ignore[no-untyped-def]
    """The trial's reproduction: no SG104 fail, SG111 warns with ρ ≤ 0.0145."""
    code = main(["doctor", "--speculative-decoding", "--cache-coherence-eval",
                 "--accept-length=2.4", "--draft-length=3", "--draft-depth-ratio=0.05",
                 "--claimed-speedup=2.2", "--measured-speedup=2.3", "--json"])
    report = json.loads(capsys.readouterr().out)
    codes = {f["code"]: f["severity"] for f in report["findings"]}
    assert codes == {"SG111": "warn"}
    assert code == 0
    (action,) = report["next_actions"]
    assert "at most 0.0145" in action
    assert "Lower --claimed-speedup" not in action
