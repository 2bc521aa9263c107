"""A Mermaid ``xychart-beta`` of the speedup S(d) at the measured draft lengths, for the
job summary (docs/theory.md#optimal-draft-length).

Bars are S(d) = AL(d) / (β + ρ·passes(d)) only where AL(d) was measured: every d of a
per-position profile (AL(d) = 1 + Σ_{i≤d} m_i), the current D, and ``evidence.next``'s
D. No bar stands for a draft length never measured, and nothing is extrapolated; with one
measured draft length there is no chart (docs/reports.md#job-summary: charts only where they help).
The optimal draft length D_opt is named in the title and the caption; the claimed speedup
is a flat line. GitHub renders Mermaid in job summaries.
"""

from __future__ import annotations

from specgate.check.report import DeploymentReport
from specgate.core.numbers import fmt
from specgate.reporters.safe_text import visible

#: At most this many bars (a profile may be long); D and D_opt are always kept.
MAX_POINTS = 32


def _label(text: str) -> str:
    # Mermaid titles are quoted strings: no quotes, backticks, markup, link or image
    # characters, and no "://" (a deployment name is text from the checked repository).
    cleaned = visible(text).replace('"', "'").replace("`", "'").replace("://", ": //")
    return "".join(ch for ch in cleaned if ch not in "<>&;#[]()!*_$|~\\")[:60]


def _thin(points: dict[int, float], keep: set[int]) -> dict[int, float]:
    """At most MAX_POINTS of ``points``, evenly spread, always holding ``keep``."""
    if len(points) <= MAX_POINTS:
        return points
    xs = sorted(points)
    step = len(xs) / (MAX_POINTS - len(keep))
    chosen = {xs[int(i * step)] for i in range(MAX_POINTS - len(keep))} | (keep & set(xs))
    return {x: points[x] for x in sorted(chosen)}


def measured_speedups(report: DeploymentReport) -> dict[int, float]:
    """S(d) at every measured draft length d, in ascending order of d."""
    m = report.metrics
    points: dict[int, float] = {}
    if m.optimal_draft_length is not None:
        points.update({p.draft_length: p.speedup for p in m.optimal_draft_length.curve})
    if m.draft_length is not None and m.theoretical_speedup is not None:
        points[m.draft_length] = m.theoretical_speedup
    if m.draft_increase is not None and m.next_draft_length is not None:
        points[m.next_draft_length] = m.draft_increase.next_speedup
    return dict(sorted(points.items()))


def speedup_chart(report: DeploymentReport) -> str | None:
    """The fenced Mermaid block, or ``None`` with fewer than two measured draft lengths
    (one bar is the table's theoretical speedup again, not a comparison)."""
    m = report.metrics
    if m.draft_length is None or m.draft_length < 1:
        return None
    optimal = m.optimal_draft_length
    keep = {m.draft_length} | ({optimal.draft_length} if optimal else set())
    points = _thin(measured_speedups(report), keep)
    if len(points) < 2:
        return None  # one bar compares nothing: the table already has S(D)
    xs = list(points)
    values = list(points.values())
    top = max([*values, m.claimed_speedup or 0.0]) * 1.15
    title = (
        f"{_label(report.name)}: speedup S(d) (ρ = {fmt(m.draft_depth_ratio or 0)}, "
        f"β = {fmt(m.verify_cost_ratio)})"
    )
    if optimal is not None:
        title += f", D_opt = {optimal.draft_length}"
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{title}"',
        f'    x-axis "draft length d" [{", ".join(str(x) for x in xs)}]',
        f'    y-axis "speedup (x)" 0 --> {fmt(top)}',
        f"    bar [{', '.join(fmt(v) for v in values)}]",
    ]
    if m.claimed_speedup is not None:
        lines.append(f"    line [{', '.join(fmt(m.claimed_speedup) for _ in xs)}]")
    lines.append("```")
    caption = "_Bars: S(d) = AL(d) / (β + ρ·passes) at the measured draft lengths"
    if optimal is not None:
        caption += (
            f"; D_opt = {optimal.draft_length} (S {fmt(optimal.speedup)}x, "
            f"{optimal.gain * 100:+.1f} % against D = {m.draft_length})"
        )
    caption += "; flat line: claimed speedup._" if m.claimed_speedup is not None else "._"
    return "\n".join(lines) + "\n\n" + caption
