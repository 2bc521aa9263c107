"""The job summary: GitHub-flavoured Markdown for ``$GITHUB_STEP_SUMMARY``.

Layout (docs/reports.md#job-summary): the status line; a table of what failed (input errors,
then findings, most severe first) with links to the lines; the deployments that
need attention, failing ones first, each with its numbers (only the known ones; G, D* and tile rows
only where the tile rule applies, i.e. attention-dominated decode), mechanism,
chart and next actions; passing deployments folded in ``<details>``; suppressed
findings with their reasons. With ``--only-new`` the table lists new findings first,
then updated ones, each marked, and the findings unchanged since the base revision
follow folded in ``<details>`` (they count toward nothing).

Everything that comes from the checked repository (names, paths, messages) goes
through :func:`md`: HTML, Markdown links and images, emphasis, code, tables and
bare-URL autolinks are neutralised, so a deployment named
``[Approve](https://evil.example)`` shows as text.

GitHub refuses a step summary over 1 MiB whole (actions/runner
``FileCommandManager.cs``, ``AttachmentSizeLimit``), counting what earlier steps
already wrote to the file; :func:`render` therefore takes a byte budget and cuts
whole lines, ending with a note of what was left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING
from urllib.parse import quote

from specgate.check.report import DeploymentReport, FileReport, RunReport
from specgate.core.findings import SEVERITY_RANK, Finding
from specgate.core.numbers import fmt
from specgate.reporters.chart import speedup_chart
from specgate.reporters.safe_text import visible
from specgate.reporters.tally import FindingKey, counts_sentence, finding_key
from specgate.reporters.text import floor_words

if TYPE_CHECKING:
    from specgate.analysis.derived import Metrics

SUMMARY_LIMIT_BYTES = 1024 * 1024
_ICON = {"ready": "✅", "actionable": "⚠️", "fail": "❌", "error": "⛔"}
_SEVERITY_ICON = {"fail": "❌", "warn": "⚠️", "info": "ℹ️", "note": "📝"}
_NOTE_RESERVE = 320
# ASCII punctuation with a meaning inside a line (CommonMark §2.4: any of it may be
# backslash-escaped): links and images ([ ] !), emphasis (* _ ~), code (`), tables
# (|), math ($), headings (#), and the backslash itself.
_MARKDOWN = re.compile(r"([\\`*_\[\]!|~#$])")
_AUTOLINK = re.compile(r"(?i)(://|www\.|@)")
_ZERO_WIDTH_SPACE = "\u200b"


def md(text: str) -> str:
    """Untrusted ``text`` as inert Markdown (inside a table cell or a line).

    Control characters are shown as escapes, HTML special characters become
    entities, Markdown punctuation is backslash-escaped, and a zero-width space
    breaks ``://``, ``www.`` and ``@`` so GitHub's autolinker makes no link.
    """
    shown = visible(text)
    shown = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    shown = _AUTOLINK.sub(lambda m: m.group(1)[0] + _ZERO_WIDTH_SPACE + m.group(1)[1:], shown)
    return _MARKDOWN.sub(r"\\\1", shown)


def message_cell(finding: Finding) -> str:
    """A finding's message as a table cell's Markdown, its details folded in an inline
    ``<details>`` after it (both escaped: a cell holds no line break)."""
    cell = md(finding.message)
    if finding.details:
        cell += f" <details><summary>details</summary>{md(finding.details)}</details>"
    return cell


def link_base(
    server: str | None, repository: str | None, sha: str | None
) -> str | None:
    """``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA/`` when all three are
    set and look like what GitHub sets (else ``None``: no links)."""
    if not (server and repository and sha):
        return None
    if not server.startswith("https://") or not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        return None
    if not re.fullmatch(r"[0-9a-fA-F]{7,64}", sha):
        return None
    return f"{server.rstrip('/')}/{repository}/blob/{sha}/"


class _Places:
    """Turns a shown path (and line) into Markdown text, linked when possible."""

    def __init__(self, repo_paths: Mapping[str, str | None], base: str | None) -> None:
        self.repo_paths = repo_paths
        self.base = base

    def __call__(self, shown: str, line: int | None) -> str:
        text = md(shown) + ("" if line is None else f":{line}")
        repo_path = self.repo_paths.get(shown)
        if self.base is None or repo_path is None:
            return text
        try:
            encoded = quote(repo_path.encode("utf-8", "surrogateescape"), safe="/")
        except UnicodeEncodeError:
            return text
        url = self.base + encoded + ("" if line is None else f"#L{line}")
        return f"[{text}]({url})"


def _v(value: float | Fraction | bool | None, suffix: str = "") -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return fmt(value) + suffix


def _metric_rows(report: DeploymentReport) -> list[str]:
    """A two-column table of the numbers that are known (no rows of "—")."""
    m = report.metrics
    al = _v(m.accept_length)
    estimate = report.deployment.accept_length_estimate
    if estimate is not None and al:
        al += f" (**estimate**, {md(estimate.format)}" + (
            f": {md(estimate.note)})" if estimate.note else ")"
        )
    rows: list[tuple[str, str]] = [
        ("accept length AL", al),
        ("draft length D", _v(m.draft_length)),
        (
            "draft depth ratio ρ",
            _v(m.draft_depth_ratio)
            + (f" ({m.draft_depth_ratio_source})" if m.draft_depth_ratio_source else ""),
        ),
        (
            "verify cost β",
            "" if m.verify_cost is None else f"{fmt(m.verify_cost.value)} ({m.verify_cost.source})",
        ),
        *(
            [("proven verify cost β (what fails use)", fmt(m.proven_verify_cost_ratio))]
            if m.verify_cost is not None
            and abs(m.verify_cost.value - m.proven_verify_cost_ratio) > 5e-5
            else []
        ),
        ("theoretical speedup AL / (β + ρ·passes)", _v(m.theoretical_speedup, "x")),
        ("measured speedup", _v(m.measured_speedup, "x")),
        ("claimed speedup", _v(m.claimed_speedup, "x")),
        ("AL floor", floor_words(m) or ""),
    ]
    if m.optimal_draft_length is not None:
        best = m.optimal_draft_length
        rows.append(
            (
                "optimal D (measured profile)",
                f"{best.draft_length} ({fmt(best.speedup)}x, gain {fmt(best.gain)})",
            )
        )
    if m.draft_length is not None and m.verify_tokens not in (None, m.draft_length + 1):
        rows.append(("N_verify (tree)", _v(m.verify_tokens)))
    if report.tile_rule_applies:
        tile = _v(m.tile_aligned)
        if m.tile_aligned is False and m.tile_aligned_draft_length is not None:
            tile += f" (next aligned D {m.tile_aligned_draft_length})"
        rows += [
            ("query heads per KV head G", _grouping(m)),
            ("attention-optimal D*", _v(m.attention_optimal_draft_length)),
            ("tile aligned", tile),
        ]
    shown = [(name, value) for name, value in rows if value]
    if not shown:
        return []
    return ["| metric | value |", "|---|---|", *(f"| {n} | {v} |" for n, v in shown)]


def _grouping(m: Metrics) -> str:
    """G, and which G: per rank at a known TP, else the model's (TP not stated)."""
    if m.query_heads_per_kv is None:
        return "unknown (state model.hf_config, or model.query_heads with model.kv_heads)"
    text = _v(m.query_heads_per_kv)
    if m.grouping.per_rank:
        return f"{text} per rank (TP {m.grouping.tensor_parallel})"
    return text + (" (TP not stated)" if m.grouping.tensor_parallel is None else "")


#: The schema findings that stop every other rule (check.run.evaluate).
SCHEMA_BLOCKING = frozenset({"SG001", "SG002"})


def _icon(report: DeploymentReport) -> str:
    """The status icon; a ``ready`` deployment with unchanged fails (``--only-new``)
    gets no green check (docs/reports.md#status)."""
    return "🟠" if report.status == "ready" and report.unchanged_fails else _ICON[report.status]


def _deployment_block(
    file: FileReport, report: DeploymentReport, place: _Places, *, charts: bool
) -> list[str]:
    lines = [
        "",
        f"#### {_icon(report)} {md(report.name)} ({place(file.path, None)}): "
        f"{report.status_label}",
        "",
    ]
    if report.deployment.speculation.enabled is False:
        # No AL, ρ, β, floor or recommendation: defaults of a speculation that does not
        # run; G and D* where the tile rule applies (what SG202 plans a first D with).
        lines.append("Speculation disabled (`speculation.enabled: false`).")
        m = report.metrics
        if report.tile_rule_applies and m.query_heads_per_kv is not None:
            rows = [("query heads per KV head G", _grouping(m))]
            if m.attention_optimal_draft_length is not None:
                rows.append(("attention-optimal D*", _v(m.attention_optimal_draft_length)))
            lines += ["", "| metric | value |", "|---|---|", *(f"| {n} | {v} |" for n, v in rows)]
        if report.next_actions:
            lines += ["", "**Next actions**", ""]
            lines += [f"{i}. {md(a)}" for i, a in enumerate(report.next_actions, 1)]
        return lines
    if any(f.code in SCHEMA_BLOCKING for f in report.findings):
        # a deployment whose file breaks the schema was not judged: no metrics of it
        # (their defaults, "ρ 0.15 typical", read as a verdict), only the findings' actions
        lines.append("Not judged: the file breaks the schema (fix the SG001/SG002 findings).")
        if report.next_actions:
            lines += ["", "**Next actions**", ""]
            lines += [f"{i}. {md(a)}" for i, a in enumerate(report.next_actions, 1)]
        return lines
    lines += _metric_rows(report)
    declared = md(report.declared_mechanism or "not stated")
    if report.declared is not None:
        declared += f" ({report.declared.name})"
    advised = report.advised
    if report.deployment.speculation_enabled:
        lines += [
            "",
            f"**Mechanism:** declared {declared}"
            + (
                f"; recommended **{advised.name}** (ρ ≈ {fmt(advised.draft_depth_ratio_hint)}). "
                f"{md(advised.reason)}"
                if advised is not None
                else "."
            ),
        ]
    assumed = report.version_assumed
    if assumed is not None:
        lines += ["", f"**Engine version:** {md(assumed)}"]
    if charts:
        chart = speedup_chart(report)
        if chart is not None:
            lines += ["", chart]
    if report.next_actions:
        lines += ["", "**Next actions**", ""]
        lines += [f"{i}. {md(a)}" for i, a in enumerate(report.next_actions, 1)]
    return lines


_STATE_RANK = {"new": 0, "updated": 1}


def _failure_rows(run: RunReport, place: _Places, *, unchanged: bool = False) -> list[str]:
    """The findings table's rows: input errors, then findings, most severe first; with
    ``--only-new`` new ones before updated ones, and ``unchanged`` picks the findings
    unchanged since the base revision instead (no input errors)."""
    rows: list[str] = []
    for file in run.files:
        if file.error is not None and not unchanged:
            where = place(file.error_location_file, file.error_line)
            rows.append(f"| {_ICON['error']} | input error | {where} | {md(file.error)} |")
    findings: list[tuple[Finding, str, str]] = []
    for file in run.files:
        findings += [(f, file.path, "") for f in file.findings]
        for deployment in file.deployments:
            findings += [(f, file.path, deployment.name) for f in deployment.findings]
    findings = [t for t in findings if (t[0].baseline_state == "unchanged") == unchanged]
    findings.sort(
        key=lambda t: (
            _STATE_RANK.get(t[0].baseline_state or "", 0),
            SEVERITY_RANK[t[0].severity],
            *t[0].sort_key(),
        )
    )
    # One row per finding as the text report prints it: deployments that share a
    # referenced file raise the same finding at its line, and the row names them all.
    owners: dict[FindingKey, list[str]] = {}
    first: dict[FindingKey, tuple[Finding, str]] = {}
    for finding, path, owner in findings:
        key = finding_key(finding, path)
        first.setdefault(key, (finding, path))
        named = owners.setdefault(key, [])
        if owner and owner not in named:
            named.append(owner)
    for key, (finding, path) in first.items():
        where = place(finding.file or path, finding.line)
        subject = ", ".join(md(owner) for owner in owners[key])
        state = f", {finding.baseline_state}" if finding.baseline_state is not None else ""
        rows.append(
            f"| {_SEVERITY_ICON[finding.severity]} {finding.severity}{state} "
            f"| {finding.code} {finding.name} | {where} "
            f"| {subject + ': ' if subject else ''}{message_cell(finding)} |"
        )
    return rows


def _arrow(before: object, after: object) -> str:
    def shown(value: object) -> str:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return fmt(value)
        return "—" if value is None else md(str(value))

    return shown(after) if before == after else f"{shown(before)} → {shown(after)}"


def _changes(run: RunReport) -> list[str]:
    """Before → after rows (``check --baseline``) for each deployment whose AL,
    theoretical speedup, measured speedup, claim or config digest differs from the base
    revision."""
    rows = []
    ref = None
    for file in run.files:
        for d in file.deployments:
            base = d.baseline
            if base is None or base.get("new"):
                continue
            ref = base.get("ref")
            m = d.metrics
            digest = d.config_digest
            pairs = (
                (base.get("accept_length"), m.accept_length),
                (base.get("theoretical_speedup"), m.theoretical_speedup),
                (base.get("claimed_speedup"), m.claimed_speedup),
                (base.get("config_digest"), digest),
                (base.get("measured_speedup"), m.measured_speedup),
            )
            if all(_same(b, a) for b, a in pairs):
                continue
            z = base.get("z")
            al = _arrow(*pairs[0]) + ("" if z is None else f" (z {fmt(z)})")
            config = (
                "not read at REF" if pairs[3][0] is None
                else "same" if pairs[3][0] == pairs[3][1] else "changed"
            )
            rows.append(
                f"| {md(file.path)} | {md(d.name)} | {al} | {_arrow(*pairs[1])} "
                f"| {_arrow(*pairs[4])} | {_arrow(*pairs[2])} | {config} |"
            )
    if not rows:
        return []
    return [
        "",
        f"### Changes since {md(_short(str(ref)))}",
        "",
        "| file | deployment | AL | theoretical speedup | measured speedup | claimed speedup "
        "| config |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]


def _short(ref: str) -> str:
    """A full commit id shortened to 12 digits (the Action's base commit), else ``ref``."""
    return ref[:12] if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", ref) else ref


def _same(before: object, after: object) -> bool:
    if isinstance(before, float | int) and isinstance(after, float | int):
        return abs(before - after) < 5e-5
    return before == after


def _suppressed_rows(run: RunReport, place: _Places) -> list[str]:
    rows = []
    for file in run.files:
        silenced = list(file.suppressed_findings)
        for deployment in file.deployments:
            silenced += deployment.suppressed_findings
        for finding in sorted(silenced, key=Finding.sort_key):
            where = place(finding.file or file.path, finding.line)
            rows.append(
                f"| {finding.code} {finding.name} | {where} "
                f"| {md(finding.suppressed or '')} | {message_cell(finding)} |"
            )
    return rows


def _baseline_suppressed(run: RunReport, place: _Places) -> list[str]:
    """A warning right under the headline when findings of the baseline rules
    (SG401–SG403, which compare with the base revision) are suppressed in this run:
    a configuration ``ignore``, ``--ignore`` or a suppression the base already had
    silenced the gate, and a reviewer should see it first."""
    baseline_codes = run.baseline_codes
    found = [
        f
        for f in run.all_findings(suppressed=True)
        if f.suppressed is not None and f.code in baseline_codes
    ]
    if not found:
        return []
    items = [
        f"- {f.code} {f.name} at {place(f.file or '', f.line)}: {md(f.suppressed or '')}"
        for f in sorted(found, key=Finding.sort_key)
    ]
    return [
        "",
        f"> **Baseline gate suppressed**: {len(found)} finding(s) of the rules that compare "
        "with the base revision are suppressed in this run.",
        "",
        *items,
    ]


def _unchanged(run: RunReport, place: _Places) -> list[str]:
    """``--only-new``: the findings unchanged since the base revision, folded."""
    rows = _failure_rows(run, place, unchanged=True) if run.only_new else []
    if not rows:
        return []
    return [
        "",
        "<details>",
        f"<summary>{len(rows)} finding(s) unchanged since the base revision "
        "(not counted)</summary>",
        "",
        "| | rule | where | message |",
        "|---|---|---|---|",
        *rows,
        "",
        "</details>",
    ]


def _document(
    run: RunReport,
    repo_paths: Mapping[str, str | None],
    base: str | None,
    charts: bool,
    notes: Sequence[str] = (),
) -> list[str]:
    place = _Places(repo_paths, base)
    lines = [
        f"## {_ICON[run.status]} specgate: {run.status}",
        "",
        counts_sentence(run),
    ]
    for note in notes:
        lines += ["", f"> **Note:** {md(note)}"]
    lines += _baseline_suppressed(run, place)
    failures = _failure_rows(run, place)
    if failures:
        lines += [
            "",
            "### Findings",
            "",
            "| | rule | where | message |",
            "|---|---|---|---|",
            *failures,
        ]
    lines += _unchanged(run, place)
    lines += _changes(run)
    # failing deployments before actionable ones (each group in file order)
    attention = [
        (f, d) for status in ("fail", "actionable") for f in run.files for d in f.deployments
        if d.status == status
    ]
    ready = [(f, d) for f in run.files for d in f.deployments if d.status == "ready"]
    passing = [(f, d) for f, d in ready if not d.unchanged_fails]
    # --only-new: ready only because its fails are unchanged since the base revision;
    # never under "passing" (docs/reports.md#status)
    held = [(f, d) for f, d in ready if d.unchanged_fails]
    if attention:
        lines += ["", "### Deployments that need attention"]
        for file, deployment in attention:
            lines += _deployment_block(file, deployment, place, charts=charts)
    if held:
        lines += ["", "### Ready, with fails unchanged since the base revision"]
        for file, deployment in held:
            lines += _deployment_block(file, deployment, place, charts=False)
    if passing:
        lines += [
            "",
            "<details>",
            f"<summary>{len(passing)} passing deployment(s)</summary>",
        ]
        for file, deployment in passing:
            lines += _deployment_block(file, deployment, place, charts=False)
        lines += ["", "</details>"]
    silenced = _suppressed_rows(run, place)
    if silenced:
        lines += [
            "",
            "### Suppressed findings",
            "",
            "| rule | where | why | message |",
            "|---|---|---|---|",
            *silenced,
        ]
    return lines


def render(
    run: RunReport,
    budget_bytes: int = SUMMARY_LIMIT_BYTES,
    *,
    repo_paths: Mapping[str, str | None] | None = None,
    links: str | None = None,
    charts: bool = True,
    notes: Sequence[str] = (),
) -> str:
    """The summary Markdown, at most ``budget_bytes`` UTF-8 bytes (cut by whole lines).

    Args:
        run: the report.
        budget_bytes: what the summary file's 1 MiB budget leaves.
        repo_paths: shown path → path relative to the git top-level (for links).
        links: :func:`link_base`'s address, or ``None`` for no links.
        charts: draw the speedup chart of each deployment that needs attention.
        notes: sentences about the run itself shown under the heading (a verdict
            switched off by a configuration file).

    Returns an empty string when not even the heading fits.
    """
    lines = _document(run, repo_paths or {}, links, charts, notes)
    out: list[str] = []
    used = 0
    folded = False
    for index, line in enumerate(lines):
        size = len(line.encode("utf-8", "backslashreplace")) + 1
        if used + size > budget_bytes - _NOTE_RESERVE:
            left = len(lines) - index
            note = (
                ("\n</details>\n" if folded else "\n")
                + f"_… {left} more line(s) left out to keep the job summary under GitHub's "
                "1 MiB limit; run `specgate check --format text` for every finding._"
            )
            if used + len(note.encode("utf-8")) + 1 > budget_bytes:
                return "".join(s + "\n" for s in out) if out else ""
            out.append(note)
            break
        if line == "<details>":
            folded = True
        elif line == "</details>":
            folded = False
        out.append(line)
        used += size
    return "".join(line + "\n" for line in out)
