"""The job summary's Mermaid chart and the i.i.d. inversion behind its curve."""

from __future__ import annotations

import pytest

from specgate.check.run import CheckOptions, check_document
from specgate.load.read import parse_text
from specgate.reporters.chart import speedup_chart
from specgate.reporters.summary import render
from specgate.theory import formulas as theory


def test_iid_rate_inverts_published_figures() -> None:
    # MiniCPM3 EAGLE-3 (its model card), AL 2.47 at D = 6 ⇔ i.i.d. α ≈ 0.61.
    alpha = theory.iid_acceptance_rate(2.47, 6)
    assert alpha == pytest.approx(0.61, abs=0.005)
    # α = 0.8, D = 4 gives AL 3.3616 (1 + .8 + .64 + .512 + .4096); the inverse gives 0.8 back.
    assert theory.iid_acceptance_rate(3.3616, 4) == pytest.approx(0.8, abs=1e-6)
    assert theory.iid_acceptance_rate(1.0, 4) == pytest.approx(0.0, abs=1e-9)
    assert theory.iid_acceptance_rate(0.9, 4) is None  # AL < 1: no α fits
    assert theory.iid_acceptance_rate(5.5, 4) is None  # AL > 1 + D
    assert theory.iid_acceptance_rate(2.0, 0) is None


CLAIMS = """\
version: 1
deployments:
  - name: chat "8b"
    speculation:
      enabled: true
      draft_length: 7
      draft_depth_ratio: 0.1
    evidence:
      accept_length: 5
      cache_coherence_eval: true
      next:
        draft_length: 14
        accept_length: 5.2
    claims:
      speedup: 2.5
"""


def _report():  # type: ignore[no-untyped-def]
    return check_document(parse_text(CLAIMS, "c.specgate.yaml", json_syntax=False), CheckOptions())


def test_chart_marks_measured_points_and_claim() -> None:
    chart = speedup_chart(_report().deployments[0])
    assert chart is not None
    lines = chart.splitlines()
    assert lines[0] == "```mermaid"
    assert lines[1] == "xychart-beta"
    assert '"chat \'8b\': speedup S(d)' in lines[2]  # quotes in names cannot break the title
    xs = [int(x) for x in lines[3].split("[")[1].rstrip("]").split(", ")]
    # docs/theory.md#optimal-draft-length / the issue: only the measured draft lengths (v1 drew 1 …
    # 16 with zero bars)
    assert xs == [7, 14]
    bars = lines[5].removeprefix("    bar [").rstrip("]").split(", ")
    # Measured: 5 / (1 + 0.1·7) = 2.9412 at D = 7; 5.2 / (1 + 0.1·14) = 2.1667 at D = 14.
    assert bars == ["2.9412", "2.1667"]
    assert lines[6] == "    line [2.5, 2.5]"  # the claim, flat


def test_chart_over_a_profile_marks_d_opt() -> None:
    # docs/theory.md#optimal-draft-length: m = [.7, .4, .2, .1, .05, .02, .01], D 7, ρ 0.1: S(1…7) =
    # 1.7/1.1, 2.1/1.2, 2.3/1.3, 2.4/1.4, 2.45/1.5, 2.47/1.6, 2.48/1.7 = 1.5455, 1.75, 1.7692,
    # 1.7143, 1.6333, 1.54375 (the binary float lies just below the half: 1.5437), 1.4588; D_opt 3
    # (+21.3 %)
    text = (
        "version: 1\ndeployments:\n  - name: p\n    speculation:\n      enabled: true\n"
        "      draft_length: 7\n      draft_depth_ratio: 0.1\n    evidence:\n"
        "      cache_coherence_eval: true\n      metrics:\n        format: per-position\n"
        "        marginal: [0.7, 0.4, 0.2, 0.1, 0.05, 0.02, 0.01]\n"
    )
    report = check_document(parse_text(text, "c.specgate.yaml", json_syntax=False), CheckOptions())
    chart = speedup_chart(report.deployments[0])
    assert chart is not None
    lines = chart.splitlines()
    assert "D_opt = 3" in lines[2]
    assert lines[3].endswith("[1, 2, 3, 4, 5, 6, 7]")
    assert lines[5] == "    bar [1.5455, 1.75, 1.7692, 1.7143, 1.6333, 1.5437, 1.4588]"
    assert "D_opt = 3 (S 1.7692x, +21.3 % against D = 7)" in chart


def test_chart_needs_al_and_d() -> None:
    text = CLAIMS.replace("      draft_length: 7\n", "")
    report = check_document(parse_text(text, "c.specgate.yaml", json_syntax=False), CheckOptions())
    assert speedup_chart(report.deployments[0]) is None


def test_one_measured_draft_length_draws_no_chart() -> None:
    # Issue 17's adopter walk: a deployment measured at D 5 only drew one bar (S(5), the
    # table's theoretical speedup again). Without evidence.next there is one point: no chart.
    text = CLAIMS.split("      next:", maxsplit=1)[0] + "    claims:\n      speedup: 2.5\n"
    report = check_document(parse_text(text, "c.specgate.yaml", json_syntax=False), CheckOptions())
    assert speedup_chart(report.deployments[0]) is None


def test_summary_keeps_the_chart_whole_when_cutting() -> None:
    report = _report()
    from specgate.check.report import RunReport

    run = RunReport(status=report.status, files=(report,))
    full = render(run)
    assert "```mermaid" in full
    # A budget that ends inside the chart drops the whole chart, never half a fence.
    cut_at = full.index("```mermaid") + 40
    cut = render(run, budget_bytes=cut_at + 256)
    assert cut.count("```") % 2 == 0
    assert len(cut.encode("utf-8")) <= cut_at + 256
