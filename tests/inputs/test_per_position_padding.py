"""A per-position list zero-padded past D is padding, not evidence measured at another D
(issue 17). vLLM's offline ``examples/offline_inference/spec_decode.py`` prints
``acceptance at token i`` for a list longer than k: ``0.85, 0.85, 0.85, 0, 0, 0`` at k = 3."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from specgate.check.report import FileReport
from specgate.inputs.metrics.inline import per_position_acceptance

CLAIMS = """\
version: 1
deployments:
  - name: d
    speculation: {{enabled: true, mechanism: eagle3, draft_length: {d}, draft_depth_ratio: 0.05}}
    evidence:
      cache_coherence_eval: true
      metrics: {{format: per-position, {key}: {rates}}}
"""

PADDED = "[0.85, 0.85, 0.85, 0, 0, 0]"


def codes(report: FileReport) -> set[str]:
    return {f.code for d in report.deployments for f in d.findings}


def test_padding_past_d_is_read_as_measured_at_d(check_text: Callable[..., FileReport]) -> None:
    # D 3: positions 4-6 are 0, so the list was measured at D 3; AL = 1 + 3 × 0.85 = 3.55
    report = check_text(CLAIMS.format(d=3, key="marginal", rates=PADDED))
    (dep,) = report.deployments
    assert "SG309" not in codes(report)
    assert dep.metrics.accept_length == pytest.approx(3.55)
    acceptance = dep.deployment.inputs.acceptance  # type: ignore[union-attr]
    assert acceptance is not None
    assert acceptance.draft_length == 3
    assert acceptance.marginal == (0.85, 0.85, 0.85)
    assert acceptance.note == "positions 4–6 are 0: read as padding past D = 3"


def test_conditional_rates_padded_past_d(check_text: Callable[..., FileReport]) -> None:
    # conditional [0.9, 0.5, 0, 0] at D 2: marginals 0.9, 0.45, 0, 0 → padding past D 2;
    # AL = 1 + 0.9 + 0.45 = 2.35
    report = check_text(CLAIMS.format(d=2, key="conditional", rates="[0.9, 0.5, 0, 0]"))
    (dep,) = report.deployments
    assert "SG309" not in codes(report)
    assert dep.metrics.accept_length == pytest.approx(2.35)


def test_padding_between_the_nonzero_part_and_the_list_length(
    check_text: Callable[..., FileReport],
) -> None:
    # D 5 lies between the non-zero part (3) and the length (6): positions 6 is 0
    # padding, positions 4-5 zero rates at D 5; no SG309
    report = check_text(CLAIMS.format(d=5, key="marginal", rates=PADDED))
    assert "SG309" not in codes(report)


def test_rates_past_d_are_still_stale_evidence(check_text: Callable[..., FileReport]) -> None:
    # D 2 but position 3 accepted 0.85: measured at D ≥ 3 (not "D = 6")
    report = check_text(CLAIMS.format(d=2, key="marginal", rates=PADDED))
    (message,) = [f.message for d in report.deployments for f in d.findings if f.code == "SG309"]
    assert "measured at D ≥ 3" in message


def test_a_list_shorter_than_d_is_still_stale(check_text: Callable[..., FileReport]) -> None:
    # D 8 and six positions: a list is never shorter than the k it was measured at
    report = check_text(CLAIMS.format(d=8, key="marginal", rates=PADDED))
    (message,) = [f.message for d in report.deployments for f in d.findings if f.code == "SG309"]
    assert "measured at D = 6" in message


def test_an_unpadded_list_keeps_its_length() -> None:
    # no trailing zero: D is the length whatever the deployment says
    acceptance = per_position_acceptance((0.7, 0.5, 0.3), draft_length=2)
    assert acceptance.draft_length == 3
    assert acceptance.note is None
    # D unknown: the length
    assert per_position_acceptance((0.85, 0, 0)).draft_length == 3


def test_doctor_reads_padding_past_d(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from specgate.cli.main import main

    main(["doctor", "--speculative-decoding", "--cache-coherence-eval", "--draft-length=3",
          "--draft-depth-ratio=0.05", "--per-position=0.85,0.85,0.85,0,0,0", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert "SG309" not in {f["code"] for f in report["findings"]}
    assert report["metrics"]["accept_length"] == 3.55
