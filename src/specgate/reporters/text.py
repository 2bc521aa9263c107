"""The default text format: one matcher-friendly line per finding, then a
metrics block per deployment and a closing status line.

``path:line:col: severity SGnnn name: message``
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specgate.check.report import DeploymentReport, RunReport
from specgate.core.findings import Finding
from specgate.core.numbers import fmt
from specgate.reporters.safe_text import safe_line, visible
from specgate.reporters.tally import (
    FindingKey,
    counts_sentence,
    finding_key,
    owner_text,
    owners,
)

if TYPE_CHECKING:
    from specgate.analysis.derived import Metrics

_COLOURS = {
    "fail": "31",
    "warn": "33",
    "info": "36",
    "note": "2",
    "error": "31",
    "ready": "32",
    "actionable": "33",
}


def _paint(text: str, key: str, colour: bool) -> str:
    return f"\x1b[{_COLOURS[key]}m{text}\x1b[0m" if colour else text


def _status(report: DeploymentReport, colour: bool) -> str:
    """The deployment's status, with its unchanged fails under ``--only-new``
    (``ready (1 unchanged fail at base)``, docs/reports.md#status)."""
    return _paint(report.status_label, report.status, colour)


def finding_line(
    finding: Finding, *, fallback_file: str | None = None, colour: bool = False, owner: str = ""
) -> str:
    """``path:line:col: severity SGnnn name: message`` (parts without a place omitted);
    with ``owner`` (a finding in a file outside its claims file,
    :func:`~specgate.reporters.tally.owner_text`), `` (deployment chat in c.specgate.yaml)``
    after the message."""
    file = finding.file or fallback_file
    where = ""
    if file is not None:
        where = file
        if finding.line is not None:
            where += f":{finding.line}:{finding.column or 1}"
        where += ": "
    severity = _paint(finding.severity, finding.severity, colour)
    # A file named "::error file=x::y.specgate.yaml" must not start a workflow command
    # when this text is printed in a GitHub Actions log (pre-commit in CI).
    state = f" [{finding.baseline_state}]" if finding.baseline_state is not None else ""
    return (
        safe_line(where, prefix="./")
        + f"{severity} {finding.code} {finding.name}: "
        + visible(finding.message)
        + (f" ({visible(owner)})" if owner else "")
        + state
    )


#: What a reader is told when G is unknown but the tile rule applies.
G_UNKNOWN = "G unknown (state model.hf_config, or model.query_heads with model.kv_heads)"


def _grouping(report: DeploymentReport) -> str | None:
    """``G 4 per rank (TP 8)``, ``G 8``, ``G 8 (TP not stated)``; ``None`` when unknown."""
    m = report.metrics
    if m.query_heads_per_kv is None:
        return None
    text = f"G {fmt(m.query_heads_per_kv)}"
    grouping = m.grouping
    if grouping.per_rank:
        return text + f" per rank (TP {grouping.tensor_parallel})"
    if grouping.tensor_parallel is None:
        return text + " (TP not stated)"
    return text


def _tile_line(report: DeploymentReport, tile: str) -> list[str]:
    """G when known; D* and the tile alignment when the tile rule applies too
    (``G unknown (state …)`` when it applies without G); the AL floor when there is one:
    only what is known and bears on the deployment."""
    m = report.metrics
    parts: list[str] = []
    g = _grouping(report)
    if g is not None:
        parts.append(g)
        # D* and the alignment only where the tile rule applies (the job summary's
        # rule): elsewhere "tile aligned no (tile-aligned D 31)" reads as advice.
        if report.tile_rule_applies and m.attention_optimal_draft_length is not None:
            parts.append(f"D* {m.attention_optimal_draft_length}")
        if report.tile_rule_applies and m.tile_aligned is not None:
            parts.append(f"tile aligned {tile}")
    elif report.tile_rule_applies:
        parts.append(G_UNKNOWN)
    floor = floor_words(m)
    if floor is not None:
        parts.append(f"AL floor {floor}")
    return ["    " + ", ".join(parts)] if parts else []


def floor_words(m: Metrics) -> str | None:
    """The AL floor as SG102 judges it: with D only a maximum and the default floor, both
    prices — the fewest passes (what fails use) and D (what only warns), e.g. ``1.32 at 2
    passes, 3.3 at D 20`` (docs/theory.md#d-is-a-maximum); else the floor alone."""
    floor = m.accept_length_floor
    if floor.value is None:
        return None
    at_d = m.accept_length_floor_at_d
    if (
        floor.source != "default"
        or at_d is None
        or m.draft_length is None
        or not abs(at_d - floor.value) > 5e-5
    ):
        return fmt(floor.value)
    return f"{fmt(floor.value)} at {fmt(m.fail_passes)} passes, {fmt(at_d)} at D {m.draft_length}"


#: What a deployment with ``speculation.enabled: false`` shows instead of its numbers.
DISABLED = "speculation disabled (speculation.enabled: false)"


def _disabled_block(report: DeploymentReport, colour: bool) -> list[str]:
    """A deployment that does not speculate: no AL, ρ, β, floor or recommendation (all
    defaults of a speculation that does not run), only G and D* where the tile rule
    applies and G is known, the numbers SG202 plans a first D with."""
    m = report.metrics
    text = DISABLED
    g = _grouping(report)
    if report.tile_rule_applies and g is not None:
        text += f"; {g}"
        if m.attention_optimal_draft_length is not None:
            text += f", D* {m.attention_optimal_draft_length}"
    return [
        f"  deployment {visible(report.name)}: {_status(report, colour)}",
        f"    {text}",
        *(f"    next: {visible(action)}" for action in report.next_actions),
    ]


def metrics_block(report: DeploymentReport, *, colour: bool = False) -> list[str]:
    """The indented per-deployment summary lines (:func:`_disabled_block` for a
    deployment that does not speculate); D* and the tile alignment only where the tile
    rule applies (``workload.attention_dominated``), as in the job summary."""
    if report.deployment.speculation.enabled is False:
        return _disabled_block(report, colour)
    if any(f.code in ("SG001", "SG002") for f in report.findings):
        # not judged (the file breaks the schema): no metrics of defaults
        return [
            f"  deployment {visible(report.name)}: {_status(report, colour)}",
            "    not judged: the file breaks the schema",
            *(f"    next: {visible(action)}" for action in report.next_actions),
        ]
    m = report.metrics
    tile = "—" if m.tile_aligned is None else ("yes" if m.tile_aligned else "no")
    if m.tile_aligned_draft_length is not None and not m.tile_aligned:
        tile += f" (tile-aligned D {m.tile_aligned_draft_length})"
    d_text = "D unknown (state speculation.draft_length)"
    if m.draft_length is not None:
        d_text = f"D {m.draft_length}"
        if m.verify_tokens not in (None, m.draft_length + 1):
            d_text += f" (tree: N_verify {m.verify_tokens})"
    declared = (
        f"{report.declared_mechanism} ({report.declared.name})"
        if report.declared is not None
        else (report.declared_mechanism or "—")
    )
    estimate = report.deployment.accept_length_estimate
    al_text = "AL unknown (state evidence.accept_length or evidence.metrics)"
    if m.accept_length is not None:
        al_text = f"AL {fmt(m.accept_length)}"
        if estimate is not None:
            al_text += f" (estimate, {visible(estimate.format)})"
    speedups = [
        f"{name} {fmt(value)}x"
        for name, value in (("theoretical", m.theoretical_speedup), ("claimed", m.claimed_speedup))
        if value is not None
    ]
    rho = ""
    if m.draft_depth_ratio is not None:
        rho = f"ρ {fmt(m.draft_depth_ratio)}" + (
            f" ({m.draft_depth_ratio_source})" if m.draft_depth_ratio_source != "stated" else ""
        )
    beta = f"β {fmt(m.verify_cost_ratio)}"
    if m.verify_cost is not None and abs(m.verify_cost.value - m.proven_verify_cost_ratio) > 5e-5:
        beta += f" (proven β {fmt(m.proven_verify_cost_ratio)}, what fails use)"
    first = [al_text, d_text, rho, beta]
    if speedups:
        first.append("speedup " + ", ".join(speedups))
    lines = [
        f"  deployment {visible(report.name)}: {_status(report, colour)}",
        "    " + ", ".join(part for part in first if part),
        *_tile_line(report, tile),
    ]
    if report.deployment.speculation_enabled:
        advised = report.advised
        lines.append(
            f"    mechanism: declared {declared}"
            + (
                f", recommended {advised.name} (ρ ≈ {fmt(advised.draft_depth_ratio_hint)})"
                if advised is not None
                else ""
            )
        )
    assumed = report.version_assumed
    if assumed is not None:
        lines.append(f"    engine version: {visible(assumed)}")
    for action in report.next_actions:
        lines.append(f"    next: {visible(action)}")
    return lines


def details_lines(finding: Finding) -> list[str]:
    """``    details: …`` under a finding's line (``--verbose``); none without details."""
    return [f"    details: {visible(finding.details)}"] if finding.details else []


def render(
    run: RunReport, *, colour: bool = False, quiet: bool = False, verbose: bool = False
) -> str:
    """The whole text report, ending with a newline; ``quiet`` keeps only the
    finding and error lines (empty when there are none); ``verbose`` adds each
    finding's details on an indented line under it.

    A finding line identical to one already printed (deployments that share an engine
    config get the same finding about its line, one per deployment) is printed once;
    the closing tally still counts every deployment's findings and says how many
    lines were repeats. A finding in a file outside its claims file names the
    deployments it belongs to after its message."""
    lines: list[str] = []
    belongs = owners(run)
    printed: set[FindingKey] = set()
    baseline_codes = run.baseline_codes
    for file in run.files:
        if file.error is not None:
            # the line an input error has on standard error too (cli.output.say)
            lines.append(f"{_paint('specgate', 'error', colour)}: {visible(file.error)}")
            continue
        for finding in sorted(file.all_findings(), key=Finding.sort_key):
            key = finding_key(finding, file.path)
            if key in printed:
                continue
            printed.add(key)
            owner = owner_text(belongs.get((key, None), []))
            lines.append(finding_line(finding, fallback_file=file.path, colour=colour, owner=owner))
            if verbose:
                lines.extend(details_lines(finding))
        for finding in sorted(file.all_findings(suppressed=True), key=Finding.sort_key):
            if finding.suppressed is not None and finding.code in baseline_codes:
                # the gate against the base revision, silenced: never only a count
                said = (finding_key(finding, file.path), finding.suppressed)
                owner = owner_text(belongs.get(said, []))
                lines.append(
                    finding_line(finding, fallback_file=file.path, colour=colour, owner=owner)
                    + visible(f" [suppressed: {finding.suppressed}]")
                )
                if verbose:
                    lines.extend(details_lines(finding))
    if quiet:
        return "".join(line + "\n" for line in lines)
    for file in run.files:
        if file.error is None and file.deployments:
            lines.append(
                safe_line(file.path, prefix="./") + f": {_paint(file.status, file.status, colour)}"
            )
            for deployment in file.deployments:
                lines.extend(metrics_block(deployment, colour=colour))
    lines.append(f"specgate: {_paint(run.status, run.status, colour)} — {counts_sentence(run)}")
    return "\n".join(lines) + "\n"
