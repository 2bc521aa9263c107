"""The job summary lists failing deployments before actionable ones (docs/reports.md#job-summary,
issue 17: an actionable deployment above the failing one)."""

from __future__ import annotations

from collections.abc import Callable

from specgate.check.report import FileReport, RunReport
from specgate.reporters import summary

# first in the file: an SG105 warn (no cache-coherence evidence) → actionable;
# second: claimed 3x over AL 2 / (1 + 0.05·3) = 1.739x → SG104 fail
CLAIMS = """\
version: 1
deployments:
  - name: warned-first
    speculation: {enabled: true, draft_length: 3, draft_depth_ratio: 0.05}
    evidence: {accept_length: 2.4}
  - name: failing-second
    speculation: {enabled: true, draft_length: 3, draft_depth_ratio: 0.05}
    evidence: {accept_length: 2, cache_coherence_eval: true}
    claims: {speedup: 3}
  - name: warned-third
    speculation: {enabled: true, draft_length: 2, draft_depth_ratio: 0.05}
    evidence: {accept_length: 1.9}
"""


def test_failing_deployments_come_first(check_text: Callable[..., FileReport]) -> None:
    file = check_text(CLAIMS)
    assert [d.status for d in file.deployments] == ["actionable", "fail", "actionable"]
    text = summary.render(RunReport("fail", (file,)), charts=False)
    headings = [line for line in text.splitlines() if line.startswith("#### ")]
    assert [h.split()[2] for h in headings] == ["failing-second", "warned-first", "warned-third"]
    assert headings[0].endswith(": fail")
