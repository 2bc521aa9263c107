"""``check --baseline REF --only-new``: each finding marked ``new``, ``unchanged`` or
``updated`` against the findings the rules make on the base revision, and the
unchanged ones left out of every status (README, "Only new findings").

A finding's identity is its rule, its deployment and what it is about: the JSON
path without the deployment's index (``claims.speedup``) and, for an engine issue,
the key of the serving config (``subject``). The deployment is the one
``--baseline`` compares it with (:mod:`specgate.change.match`: by name, else a
renamed one with its configuration), so a rename keeps the identity. Lines,
columns and the numbers or words of a message are never part of it.

Against the findings of that identity at REF:

- ``new``: none at REF; the deployment or the claims file is new or unreadable at
  REF; more findings of the identity than at REF (which one is the added one cannot
  be told, so none is hidden); or a regression rule (SG401–SG404, SG410, SG412),
  which compares with REF by itself. The evidence rules SG405–SG409 and SG411 judge
  the head alone and are compared like any other.
- ``updated``: a more severe level than at REF, or a larger ``excess`` (how far
  past its bound the deployment is, in the rule's unit: SG102 floor / AL, SG104
  claim / bound, SG107 claim / measured speedup) than at REF by more than 10⁻⁹.
- ``unchanged``: otherwise. It is still reported, and changes no status.

Findings silenced by a suppression keep no state: they change no status anyway.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING

from specgate.core.findings import SEVERITY_RANK, Finding, status_of, worst
from specgate.rules.registry import BASELINE_CODES

if TYPE_CHECKING:
    from specgate.change.baseline import BaseFindings
    from specgate.check.report import DeploymentReport, FileReport

NEW, UNCHANGED, UPDATED = "new", "unchanged", "updated"
EXCESS_TOLERANCE = 1e-9
"""An excess larger than at REF by at most this much is the same (float rounding)."""

_DEPLOYMENT_INDEX = re.compile(r"^deployments\[\d+\]\.?")

Identity = tuple[str, str, str]


REGRESSION_CODES = BASELINE_CODES | {"SG410"}
"""The rules that compare with the base revision (SG401–SG404, SG410 baseline
unreadable, SG412 deployment removed): what they say is what the change did."""


def regression(code: str) -> bool:
    """Whether ``code`` is a regression rule (:data:`REGRESSION_CODES`): always ``new``."""
    return code in REGRESSION_CODES


def identity(finding: Finding) -> Identity:
    """(rule, what the finding is about, the key it names) within its deployment or
    file: the JSON path without the deployment index, and ``subject``."""
    return (finding.code, _DEPLOYMENT_INDEX.sub("", finding.path, count=1), finding.subject or "")


def _worse(head: Finding, base: Finding) -> bool:
    if SEVERITY_RANK[head.severity] < SEVERITY_RANK[base.severity]:
        return True
    return (
        head.excess is not None
        and base.excess is not None
        and head.excess > base.excess + EXCESS_TOLERANCE
    )


def states(head: tuple[Finding, ...], base: tuple[Finding, ...] | None) -> tuple[Finding, ...]:
    """``head`` with each finding's ``baseline_state`` set against ``base`` (the
    same deployment's or file's findings at REF; ``None``: nothing to compare with)."""
    if base is None:
        return tuple(f._replace(baseline_state=NEW) for f in head)
    at_base: dict[Identity, list[Finding]] = defaultdict(list)
    for finding in base:
        at_base[identity(finding)].append(finding)
    at_head: dict[Identity, int] = defaultdict(int)
    for finding in head:
        at_head[identity(finding)] += 1
    # Several of one identity: the most severe (then largest excess) pair up first.
    for found in at_base.values():
        found.sort(key=_order)
    taken: dict[Identity, int] = defaultdict(int)
    marked: dict[int, str] = {}
    for index in sorted(range(len(head)), key=lambda i: _order(head[i])):
        finding = head[index]
        key = identity(finding)
        before = at_base.get(key, [])
        if regression(finding.code) or at_head[key] > len(before):
            marked[index] = NEW
            continue
        pair = before[taken[key]]
        taken[key] += 1
        marked[index] = UPDATED if _worse(finding, pair) else UNCHANGED
    return tuple(f._replace(baseline_state=marked[i]) for i, f in enumerate(head))


def _order(finding: Finding) -> tuple[int, float]:
    return (SEVERITY_RANK[finding.severity], -(finding.excess or 0.0))


def counted(findings: tuple[Finding, ...]) -> list[Finding]:
    """The findings that count toward a status: all but the unchanged ones."""
    return [f for f in findings if f.baseline_state != UNCHANGED]


def _deployment(report: DeploymentReport) -> DeploymentReport:
    findings = states(report.findings, report.base_findings)
    status = status_of(counted(findings))
    if len(report.action_codes) != len(report.next_actions):
        return report._replace(findings=findings, status=status)  # not from evaluate
    live = {f.code for f in counted(findings)}
    pairs = zip(report.action_codes, report.next_actions, strict=True)
    kept = [(code, action) for code, action in pairs if code in live]
    return report._replace(
        findings=findings,
        status=status,
        next_actions=() if status == "ready" else tuple(a for _, a in kept),
        action_codes=() if status == "ready" else tuple(c for c, _ in kept),
    )


def mark(report: FileReport, base: BaseFindings | None) -> FileReport:
    """``report`` (one claims file, checked with ``--baseline``) with every finding
    marked and the statuses worked out from the counted findings; ``base``: the
    file's findings at REF (``None``: the file is new or unreadable at REF)."""
    deployments = tuple(_deployment(d) for d in report.deployments)
    findings = states(report.findings, None if base is None else base.file)
    if not any(f.baseline_state == UNCHANGED for d in deployments for f in d.findings) and not any(
        f.baseline_state == UNCHANGED for f in findings
    ):
        return report._replace(findings=findings, deployments=deployments)
    statuses = [d.status for d in deployments] + [status_of(counted(findings))]
    return report._replace(findings=findings, deployments=deployments, status=worst(statuses))
