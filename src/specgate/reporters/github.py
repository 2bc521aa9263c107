"""The GitHub format: workflow-command annotations and step outputs.

GitHub keeps only 10 annotations per level per step (actions/runner
``ExecutionContext.AddIssue``, ``_maxCountPerIssueType``), so the 10 most severe
of each level are emitted, then one notice tells how many more there are and
where; that notice counts within the 10 notices.

Notes (severity ``note``: what the theory assumed, never a change to the status) are
not annotations: they would land on lines a pull request never touched and ask
nothing of it. They stay in the job summary, JSON, SARIF and the ``note-count`` output.
"""

from __future__ import annotations

from collections.abc import Mapping

from specgate.check.report import RunReport
from specgate.core.findings import SEVERITY_RANK, Finding
from specgate.core.workflow_text import LEGACY_PREFIX
from specgate.reporters.safe_text import visible
from specgate.reporters.tally import SaidKey, finding_key, owner_text, owners
from specgate.reporters.workflow_commands import AnnotationLevel, annotation

ANNOTATIONS_PER_LEVEL = 10
LEVEL: dict[str, AnnotationLevel] = {
    "fail": "error",
    "warn": "warning",
    "info": "notice",
}


def _title(finding: Finding, owner: str = "") -> str:
    """``specgate (SG104)``; with ``--only-new`` ``specgate (SG104, new)``; a finding in a
    file outside its claims file names its deployments (``owner``,
    :func:`~specgate.reporters.tally.owner_text`): ``specgate (SG303) for deployment chat
    in c.specgate.yaml``, so two deployments' findings at one place can be told apart."""
    state = f", {finding.baseline_state}" if finding.baseline_state is not None else ""
    return f"specgate ({finding.code}{state})" + (f" for {visible(owner)}" if owner else "")


def _level(finding: Finding) -> AnnotationLevel:
    """The annotation level: the severity's, a notice for a finding unchanged since the
    base revision (``--only-new``: it counts toward nothing)."""
    return "notice" if finding.baseline_state == "unchanged" else LEVEL[finding.severity]


def _error(
    message: str, *, file: str | None = None, line: int | None = None, col: int | None = None
) -> str:
    """An input-error annotation; like every annotation here, its text shows control
    characters as escapes (ESC, NEL, U+2028 would otherwise reach the log raw)."""
    return annotation(
        "error",
        visible(message),  # a file named in the message is escaped with it
        file=file,  # an attachable path (_attachable), escaped as a property
        line=line,
        col=col,
        title="specgate (input error)",
    )


#: Characters a ``file=`` property may hold as they are, though not printable: the
#: toolkit's escapeProperty writes CR and LF as ``%0D`` and ``%0A``, which the runner
#: decodes back (a tab stands in the line harmlessly).
_PROPERTY_SAFE = frozenset("\t\r\n")


def _attachable(repo_path: str | None) -> str | None:
    """``repo_path`` when an annotation can name it in ``file=``, as it is: the property is
    escaped as actions/toolkit ``packages/core/src/command.ts`` ``escapeProperty`` does
    (``%``, CR, LF, ``:``, ``,``), which the runner decodes back to the file's own name,
    so a ``\\n`` written in its place would name no file (D12.4). A path holding ``##[``
    or another control character (which :func:`visible` must escape for the log, so
    ``file=`` would name no file either) is named in the message instead, escaped, like a
    file outside the repository."""
    if repo_path is None or LEGACY_PREFIX in repo_path:
        return None
    if not all(ch.isprintable() or ch == " " or ch in _PROPERTY_SAFE for ch in repo_path):
        return None
    return repo_path


def _annotate(
    finding: Finding,
    fallback: str,
    repo_paths: Mapping[str, str | None],
    belongs: Mapping[SaidKey, list[tuple[str, str]]],
) -> str:
    shown = finding.file or fallback
    title = _title(finding, owner_text(belongs.get((finding_key(finding, fallback), None), [])))
    repo_path = _attachable(repo_paths.get(shown))
    message = visible(f"{finding.name}: {finding.message}")
    if repo_path is None:
        where = visible(shown) + (f":{finding.line}:{finding.column}" if finding.line else "")
        return annotation(_level(finding), f"{where}: {message}", title=title)
    return annotation(
        _level(finding),
        message,
        file=repo_path,
        line=finding.line,
        col=finding.column,
        title=title,
    )


def render(
    run: RunReport,
    repo_paths: Mapping[str, str | None],
    *,
    summary_written: bool,
) -> str:
    """All workflow commands of the run, one per line, ending with a newline.

    Args:
        run: the report.
        repo_paths: each shown file path → its path relative to the git top-level
            (``/`` separators), or ``None`` for a file outside any repository (then
            the annotation carries no ``file``/``line``/``col`` and names the path
            in its message).
        summary_written: whether a job summary holds every finding (the overflow
            notice points there, else at ``--format text``).
    """
    lines: list[str] = []
    errors: list[tuple[Finding, str]] = []
    belongs = owners(run)
    for file in run.files:
        if file.error is not None:
            located = file.error_location_file
            repo_path = _attachable(repo_paths.get(located))
            if repo_path is None:
                lines.append(_error(file.error))
            else:
                prefix = located + (
                    f":{file.error_line}" + (f":{file.error_column}" if file.error_column else "")
                    if file.error_line
                    else ""
                )
                reason = file.error.removeprefix(prefix).removeprefix(": ")
                lines.append(
                    _error(reason, file=repo_path, line=file.error_line, col=file.error_column)
                )
            continue
        errors.extend((f, file.path) for f in file.all_findings() if f.severity in LEVEL)

    by_level: dict[str, list[tuple[Finding, str]]] = {"error": [], "warning": [], "notice": []}
    ranked = sorted(
        errors,
        key=lambda p: (
            p[0].baseline_state == "unchanged",
            SEVERITY_RANK[p[0].severity],
            *p[0].sort_key(),
        ),
    )
    for finding, fallback in ranked:
        by_level[_level(finding)].append((finding, fallback))

    # Two deployments sharing a referenced file can raise the same finding at the same
    # place: one annotation says it.
    for level, pairs in by_level.items():
        seen: set[str] = set()
        unique = []
        for finding, fallback in pairs:
            rendered = _annotate(finding, fallback, repo_paths, belongs)
            if rendered not in seen:
                seen.add(rendered)
                unique.append((finding, fallback))
        by_level[level] = unique

    input_errors = len(lines)
    error_room = max(ANNOTATIONS_PER_LEVEL - input_errors, 0)
    omitted = max(len(by_level["error"]) - error_room, 0)
    omitted += max(len(by_level["warning"]) - ANNOTATIONS_PER_LEVEL, 0)
    notice_room = ANNOTATIONS_PER_LEVEL
    if omitted or len(by_level["notice"]) > ANNOTATIONS_PER_LEVEL:
        notice_room -= 1
    omitted += max(len(by_level["notice"]) - notice_room, 0)

    rooms = {"error": error_room, "warning": ANNOTATIONS_PER_LEVEL, "notice": notice_room}
    for level in ("error", "warning", "notice"):
        for finding, fallback in by_level[level][: rooms[level]]:
            lines.append(_annotate(finding, fallback, repo_paths, belongs))
    if omitted:
        where = (
            "the job summary lists every finding"
            if summary_written
            else "run `specgate check --format text` to see every finding"
        )
        lines.append(
            annotation(
                "notice",
                f"{omitted} more finding{'s' if omitted != 1 else ''} not shown as annotations "
                f"(GitHub keeps {ANNOTATIONS_PER_LEVEL} per level per step); {where}.",
                title="specgate",
            )
        )
    return "".join(line + "\n" for line in lines)


def render_outputs(run: RunReport) -> str:
    """Step outputs for ``$GITHUB_OUTPUT``: ``status``, ``fail-count``, ``warn-count``,
    ``info-count`` (info findings), ``note-count``; one ``name=value`` line each."""
    counts = run.counts()
    pairs = [
        ("status", run.status),
        ("fail-count", counts["fail"]),
        ("warn-count", counts["warn"]),
        ("info-count", counts["info"]),
        ("note-count", counts["note"]),
    ]
    return "".join(f"{name}={value}\n" for name, value in pairs)
