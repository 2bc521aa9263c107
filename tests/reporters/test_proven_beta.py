"""The proven β a fail uses is named wherever it differs from the estimate (newuser-r4
#6): SG104's message, the text metrics line and the job summary table.

Hand values: EAGLE-3 on Llama-3.1-8B (H100 SXM: 989 TFLOP/s BF16, 3.35 TB/s), 256
sequences, D 3, no context length: n* = 989·2/(2·3.35) = 295.2 and B·N = 1024, so the
roofline estimate is β = 1024/295.2 = 3.4686 (the reviewer's figure); with no context
length the proven β is 1 (README, "What it checks"). SG104: 2.8 / (1 + 0.05·3) = 2.4348.
"""

from __future__ import annotations

from collections.abc import Callable

from specgate.check.report import FileReport, RunReport
from specgate.reporters import summary, text

BATCH = """\
version: 1
deployments:
  - name: chat-8b-batch256
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}
    workload: {concurrency: 256}
    hardware: {gpu: h100-sxm}
    evidence: {accept_length: 2.8, cache_coherence_eval: true}
    claims: {speedup: 3.0}
"""


def test_sg104_names_the_proven_beta_and_the_report_shows_both(
    check_text: Callable[..., FileReport],
) -> None:
    report = check_text(BATCH)
    (sg104,) = [f for f in report.all_findings() if f.code == "SG104"]
    assert "with the proven β 1 = 2.8 / (1 + 0.05·3) = 2.4348x" in sg104.message
    (deployment,) = report.deployments
    line = text.metrics_block(deployment)[1]
    assert "β 3.4686 (proven β 1, what fails use)" in line
    table = summary.render(RunReport(report.status, (report,)), charts=False)
    assert "| verify cost β | 3.4686 (roofline) |" in table
    assert "| proven verify cost β (what fails use) | 1 |" in table


def test_no_proven_label_where_the_two_agree(check_text: Callable[..., FileReport]) -> None:
    # one sequence: β = 1 estimated and proven; S = 2.8 / 1.15 = 2.4348 < 3
    report = check_text(BATCH.replace("concurrency: 256", "concurrency: 1"))
    (sg104,) = [f for f in report.all_findings() if f.code == "SG104"]
    assert "proven" not in sg104.message
    assert "2.8 / (1 + 0.05·3) = 2.4348x" in sg104.message
    (deployment,) = report.deployments
    assert "proven" not in text.metrics_block(deployment)[1]
    table = summary.render(RunReport(report.status, (report,)), charts=False)
    assert "proven verify cost" not in table
