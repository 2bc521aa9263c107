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


#: A printed finding with its suppression (``None`` in force): what one SARIF result says.
SaidKey = tuple[FindingKey, str | None]
#: At most this many deployments are named after a finding; the rest are counted.
OWNERS_SHOWN = 5


def owners(run: RunReport) -> dict[SaidKey, list[tuple[str, str]]]:
    """The claims file and deployment of each finding located outside its claims file
    (a shared model config, serving config or metrics file), by what is printed: two
    deployments that share a file raise findings at the same place, and a line that
    does not name them cannot be told apart (docs/reports.md#deployments-that-share-a-file).
    Each key lists its ``(claims file, deployment name)`` pairs once, in report order;
    findings in their claims file (located there, the JSON path names the deployment)
    and file-level findings have no entry."""
    found: dict[SaidKey, list[tuple[str, str]]] = {}
    for file in run.files:
        for deployment in file.deployments:
            for finding in (*deployment.findings, *deployment.suppressed_findings):
                if finding.file is None or finding.file == file.path:
                    continue
                key = (finding_key(finding, file.path), finding.suppressed)
                pairs = found.setdefault(key, [])
                if (file.path, deployment.name) not in pairs:
                    pairs.append((file.path, deployment.name))
    return found


def owner_text(pairs: list[tuple[str, str]]) -> str:
    """``deployment chat in c.specgate.yaml``; ``deployments chat, code in
    c.specgate.yaml``; ``deployment a in x.yaml; deployment b in y.yaml``; past
    :data:`OWNERS_SHOWN` deployments, ``; and 3 more deployments``. Names and paths as
    written (untrusted: the caller escapes them for its channel); ``""`` for none."""
    shown = pairs[:OWNERS_SHOWN]
    by_file: dict[str, list[str]] = {}
    for path, name in shown:
        by_file.setdefault(path, []).append(name)
    parts = [
        f"{'deployment' if len(names) == 1 else 'deployments'} {', '.join(names)} in {path}"
        for path, names in by_file.items()
    ]
    rest = len(pairs) - len(shown)
    if rest:
        parts.append(f"and {_plural(rest, 'more deployment')}")
    return "; ".join(parts)


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
