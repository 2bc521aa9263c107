"""SG107 reads a number as written as the half-open interval it rounds from (round half
up: "1.6" stands for 1.55 ≤ x < 1.65), and ``check`` and ``doctor`` share the one test
(:func:`specgate.analysis.derived.claim_rounds_measurement`; trial-a defect 1). Every
interval below is worked by hand in the case's comment."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from specgate.check.report import FileReport
from specgate.cli.main import main

Check = Callable[..., FileReport]

TEXT = """\
version: 1
deployments:
  - name: c
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3}}
    evidence: {{accept_length: 2.6, cache_coherence_eval: true, {evidence}}}
    claims: {{speedup: {claim}}}
"""

CASES = [
    # measured "1.6" = [1.55, 1.65); claim "1.7" = [1.65, 1.75): lowest claim 1.65 is not
    # below the excluded upper end 1.65 — one last-digit step up, not a rounding
    ("1.6", "1.7", "fail"),
    # measured "2.1" = [2.05, 2.15); claim "2.2" = [2.15, 2.25): 2.15 is not below 2.15
    ("2.1", "2.2", "fail"),
    # measured "1.65" = [1.645, 1.655); claim "1.7" from 1.65: 1.65 < 1.655, and 1.65
    # itself rounds half up to 1.7
    ("1.65", "1.7", "note"),
    # measured "1.649" = [1.6485, 1.6495); claim "1.65" = [1.645, 1.655): 1.645 < 1.6495
    ("1.649", "1.65", "note"),
    # claim 1.6 ≤ measured 1.63 and 1.649: below the measurement, no finding at all
    ("1.63", "1.6", None),
    ("1.649", "1.6", None),
]


def _sg107(report: FileReport) -> str | None:
    found = [f.severity for f in report.all_findings() if f.code == "SG107"]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize(("measured", "claim", "expected"), CASES)
def test_check_reads_the_half_open_interval(
    check_text: Check, measured: str, claim: str, expected: str | None
) -> None:
    report = check_text(TEXT.format(evidence=f"measured_speedup: {measured}", claim=claim))
    assert _sg107(report) == expected


@pytest.mark.parametrize(("measured", "claim", "expected"), CASES)
def test_doctor_agrees_with_check(
    capsys: pytest.CaptureFixture[str], measured: str, claim: str, expected: str | None
) -> None:
    main(["doctor", "--speculative-decoding", "--cache-coherence-eval", "--accept-length=2.6",
          "--draft-length=3", "--mechanism=eagle3", f"--claimed-speedup={claim}",
          f"--measured-speedup={measured}", "--json"])
    report = json.loads(capsys.readouterr().out)
    found = [f["severity"] for f in report["findings"] if f["code"] == "SG107"]
    assert found == ([] if expected is None else [expected])


@pytest.mark.parametrize(("base", "spec", "claim", "expected"), [
    # 12 → 18 tok/s, each ±0.5: the ratio's excluded upper end is 18.5/11.5 = 1.6087;
    # claim "1.61" from 1.605 < 1.6087: note; claim "1.7" from 1.65 ≥ 1.6087: fail
    ("12", "18", "1.61", "note"),
    ("12", "18", "1.7", "fail"),
    # 3 → 4.12 (±0.5, ±0.005): upper end 4.125/2.5 = 1.65 exactly; claim "1.7" from 1.65 is
    # not below it: fail (decided on the decimals, not on 4.12 + 0.005 in binary);
    # claim "1.6" from 1.55 < 1.65: note
    ("3", "4.12", "1.7", "fail"),
    ("3", "4.12", "1.6", "note"),
])
def test_throughput_pair_upper_end_is_excluded(
    check_text: Check, base: str, spec: str, claim: str, expected: str
) -> None:
    evidence = f"throughput: {{baseline_tokens_per_s: {base}, speculative_tokens_per_s: {spec}}}"
    report = check_text(TEXT.format(evidence=evidence, claim=claim))
    assert _sg107(report) == expected
