"""The job summary: GitHub-flavoured Markdown for ``$GITHUB_STEP_SUMMARY``.

GitHub refuses a step summary over 1 MiB whole (actions/runner
``FileCommandManager.cs``, ``AttachmentSizeLimit``), counting what earlier steps
already wrote to the file; :func:`render` therefore takes a byte budget and
cuts whole rows, ending with a note of what was left out.
"""

from __future__ import annotations

from specgate.findings import Finding
from specgate.numbers import fmt
from specgate.report import DeploymentReport, RunReport
from specgate.reporters.chart import speedup_chart
from specgate.reporters.safe_text import visible

SUMMARY_LIMIT_BYTES = 1024 * 1024
_ICON = {"ready": "✅", "actionable": "⚠️", "fail": "❌", "error": "⛔"}
_NOTE_RESERVE = 256


def md(text: str) -> str:
    """Text made safe inside a Markdown table cell (no pipes, tags or line breaks)."""
    return (
        visible(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
    )


def _v(value: float | int | None, suffix: str = "") -> str:
    return "—" if value is None else fmt(value) + suffix


def _deployment_lines(path: str, report: DeploymentReport) -> list[str]:
    m = report.metrics
    tile = "—" if m.tile_aligned is None else ("yes" if m.tile_aligned else "no")
    if m.tile_aligned is False and m.tile_aligned_draft_length is not None:
        tile += f" (tile-aligned D {m.tile_aligned_draft_length})"
    if m.draft_length is not None and m.verify_tokens not in (None, m.draft_length + 1):
        tile += f" at N_verify {m.verify_tokens} (tree)"
    declared = md(report.declared_mechanism or "—")
    if report.declared is not None:
        declared += f" ({report.declared.name})"
    lines = [
        "",
        f"### {_ICON[report.status]} `{md(path)}` — {md(report.name)}: {report.status}",
        "",
        "| AL | D | ρ | theoretical speedup | claimed speedup | D* | tile aligned | AL floor |",
        "|---|---|---|---|---|---|---|---|",
        f"| {_v(m.accept_length)} | {_v(m.draft_length)} | {_v(m.draft_depth_ratio)} "
        f"| {_v(m.theoretical_speedup, 'x')} | {_v(m.claimed_speedup, 'x')} "
        f"| {_v(m.attention_optimal_draft_length)} | {tile} | {_v(m.accept_length_floor.value)} |",
        "",
        f"**Mechanism:** declared {declared}; recommended **{report.recommended.name}** "
        f"(ρ ≈ {fmt(report.recommended.draft_depth_ratio_hint)}). {md(report.recommended.reason)} "
        f"Best for: {md(report.recommended.best_for)}",
    ]
    chart = speedup_chart(report)
    if chart is not None:
        lines += ["", chart]
    if report.findings:
        lines += ["", "| severity | code | line | message |", "|---|---|---|---|"]
        lines += [_finding_row(f, path) for f in report.findings]
    if report.next_actions:
        lines += ["", "**Next actions**", ""]
        lines += [f"{i}. {md(a)}" for i, a in enumerate(report.next_actions, 1)]
    return lines


def _finding_row(finding: Finding, path: str) -> str:
    where = "—" if finding.line is None else str(finding.line)
    if finding.file is not None and finding.file != path:
        where = f"{md(finding.file)}:{where}"
    return (
        f"| {finding.severity} | {finding.code} {finding.name} | {where} | {md(finding.message)} |"
    )


def _arrow(before: object, after: object) -> str:
    def shown(value: object) -> str:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return fmt(value)
        return "—" if value is None else md(str(value))

    return shown(after) if before == after else f"{shown(before)} → {shown(after)}"


def _changes(run: RunReport) -> list[str]:
    """Before → after rows (``check --baseline``) for each deployment whose AL,
    theoretical speedup, claim or config digest differs from the base revision."""
    rows = []
    ref = None
    for file in run.files:
        for d in file.deployments:
            base = d.baseline
            if base is None or base.get("new"):
                continue
            ref = base.get("ref")
            m = d.metrics
            digest = d.inputs.get("config_digest")
            pairs = (
                (base.get("accept_length"), m.accept_length),
                (base.get("theoretical_speedup"), m.theoretical_speedup),
                (base.get("claimed_speedup"), m.claimed_speedup),
                (base.get("config_digest"), digest),
            )
            if all(_same(b, a) for b, a in pairs):
                continue
            z = base.get("z")
            al = _arrow(*pairs[0]) + ("" if z is None else f" (z {fmt(z)})")
            config = "same" if pairs[3][0] == pairs[3][1] else "changed"
            rows.append(
                f"| `{md(file.path)}` | {md(d.name)} | {al} | {_arrow(*pairs[1])} "
                f"| {_arrow(*pairs[2])} | {config} |"
            )
    if not rows:
        return []
    return [
        "",
        f"### Changes since `{md(str(ref))}`",
        "",
        "| file | deployment | AL | theoretical speedup | claimed speedup | config |",
        "|---|---|---|---|---|---|",
        *rows,
    ]


def _same(before: object, after: object) -> bool:
    if isinstance(before, float | int) and isinstance(after, float | int):
        return abs(before - after) < 5e-5
    return before == after


def render(run: RunReport, budget_bytes: int = SUMMARY_LIMIT_BYTES) -> str:
    """The summary Markdown, at most ``budget_bytes`` UTF-8 bytes (cut by whole rows).

    Returns an empty string when not even the heading fits.
    """
    counts = run.counts()
    head = [
        f"## {_ICON[run.status]} specgate: {run.status}",
        "",
        f"{len(run.files)} file(s), {run.deployment_count} deployment(s): "
        + ", ".join(f"{counts[k]} {k}" for k in ("fail", "warn", "info", "note"))
        + (f" ({run.suppressed} suppressed)" if run.suppressed else ""),
    ]
    body: list[str] = _changes(run)
    for file in run.files:
        if file.error is not None:
            body += ["", f"### {_ICON['error']} `{md(file.path)}`: error", "", md(file.error)]
            continue
        if file.findings:
            body += [
                "",
                f"### `{md(file.path)}`: file-level findings",
                "",
                "| severity | code | line | message |",
                "|---|---|---|---|",
            ]
            body += [_finding_row(f, file.path) for f in file.findings]
        for deployment in file.deployments:
            body += _deployment_lines(file.path, deployment)
    out: list[str] = []
    used = 0
    lines = head + body
    for index, line in enumerate(lines):
        size = len(line.encode("utf-8")) + 1
        if used + size > budget_bytes - _NOTE_RESERVE:
            left = len(lines) - index
            note = (
                f"\n_… {left} more line(s) left out to keep the job summary under GitHub's "
                "1 MiB limit; run `specgate check --format text` for every finding._"
            )
            if used + len(note.encode("utf-8")) + 1 > budget_bytes:
                return "".join(s + "\n" for s in out) if out else ""
            out.append(note)
            break
        out.append(line)
        used += size
    return "".join(line + "\n" for line in out)
