"""What the text status line and the job summary's heading both say: which findings are
the same finding repeated (deployments that share a referenced file each raise it at
its line), and the run's counts with deployments and findings told apart.

``13 files, 13 deployments (1 fail, 2 actionable, 10 ready); findings: 2 fail, 3 warn,
2 info, 14 note (1 repeated for deployments that share a file, printed once)``
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from specgate.check.report import RunReport
from specgate.core.findings import Finding

#: A finding's identity as printed: where, what and the message (not its deployment).
FindingKey = tuple[str | None, int | None, int | None, str, str, str, str]


def finding_key(finding: Finding, fallback_file: str | None) -> FindingKey:
    """Two findings with the same key print as the same line (``path:line:col: severity
    SGnnn name: message``); the column defaults to 1 as the text line shows it."""
    column = finding.column or 1 if finding.line is not None else None
    return (
        finding.file or fallback_file,
        finding.line,
        column,
        finding.severity,
        finding.code,
        finding.name,
        finding.message,
    )


def first_of_each(pairs: Iterable[tuple[Finding, str]]) -> Iterator[tuple[Finding, str]]:
    """``(finding, fallback file)`` pairs without the repeats of an earlier pair's key."""
    seen: set[FindingKey] = set()
    for finding, fallback in pairs:
        key = finding_key(finding, fallback)
        if key not in seen:
            seen.add(key)
            yield finding, fallback


def repeated(run: RunReport) -> int:
    """How many (unsuppressed) findings repeat one already counted: printed once."""
    pairs = [(f, file.path) for file in run.files for f in file.all_findings()]
    return len(pairs) - sum(1 for _ in first_of_each(pairs))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def counts_sentence(run: RunReport) -> str:
    """``N files (k unreadable), M deployments (a fail, b actionable, c ready);
    findings: …``: deployment statuses and finding severities never in one list."""
    errors = sum(1 for f in run.files if f.error is not None)
    files = _plural(len(run.files), "file")
    if errors:
        files += f" ({errors} unreadable)"
    statuses = [d.status for f in run.files for d in f.deployments]
    deployments = _plural(len(statuses), "deployment")
    by_status = ", ".join(
        f"{statuses.count(s)} {s}" for s in ("fail", "actionable", "ready") if s in statuses
    )
    if by_status:
        deployments += f" ({by_status})"
    counts = run.counts()
    tally = ", ".join(f"{counts[k]} {k}" for k in ("fail", "warn", "info", "note"))
    if run.suppressed:
        tally += f" ({run.suppressed} suppressed)"
    if run.only_new:
        tally += f" ({run.unchanged} unchanged at the base revision, not counted)"
    repeats = repeated(run)
    if repeats:
        tally += f" ({repeats} repeated for deployments that share a file, printed once)"
    return f"{files}, {deployments}; findings: {tally}"
