"""A Mermaid ``xychart-beta`` of theoretical speedup against D for the job summary.

The curve is the i.i.d. model (Leviathan et al. 2023, arXiv:2211.17192, eq. 1)
through the measured point: α is fitted so that E(α, D) equals the measured AL,
then AL(D′) = E(α, D′) and speedup(D′) = AL(D′) / (1 + ρ·D′). Measured points
(the current D, and ``evidence.next`` when given) are bars; the claimed speedup
is a flat line. GitHub renders Mermaid in job summaries.
"""

from __future__ import annotations

import math

from specgate import theory
from specgate.numbers import fmt
from specgate.report import DeploymentReport
from specgate.reporters.safe_text import visible

MAX_POINTS = 32


def _label(text: str) -> str:
    # Mermaid titles are quoted strings: no quotes, backticks, markup, link or image
    # characters, and no "://" (a deployment name is text from the checked repository).
    cleaned = visible(text).replace('"', "'").replace("`", "'").replace("://", ": //")
    return "".join(ch for ch in cleaned if ch not in "<>&;#[]()!*_$|~\\")[:60]


def speedup_chart(report: DeploymentReport) -> str | None:
    """The fenced Mermaid block, or ``None`` without both AL and D (or AL out of range)."""
    m = report.metrics
    al, d = m.accept_length, m.draft_length
    if al is None or d is None or d < 1:
        return None
    alpha = theory.iid_acceptance_rate(al, d)
    if alpha is None:
        return None
    rho = m.draft_depth_ratio or 0.0
    increase = m.draft_increase
    next_d = m.next_draft_length if increase is not None else None
    top = max(d, next_d or 0) + 2
    step = max(1, math.ceil(top / MAX_POINTS))
    xs = list(range(1, top + 1, step))
    for needed in (d, next_d):
        if needed is not None and needed not in xs:
            xs.append(needed)
    xs.sort()
    model = [theory.theoretical_speedup(theory.iid_accept_length(alpha, x), x, rho) for x in xs]
    measured = [0.0] * len(xs)
    measured[xs.index(d)] = m.theoretical_speedup or 0.0
    if next_d is not None and increase is not None:
        measured[xs.index(next_d)] = increase.next_speedup
    values = model + measured
    if m.claimed_speedup is not None:
        values.append(m.claimed_speedup)
    ceiling = max(values) * 1.15
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{_label(report.name)}: speedup vs D (ρ = {fmt(rho)}, α ≈ {fmt(alpha)})"',
        f'    x-axis "draft length D" [{", ".join(str(x) for x in xs)}]',
        f'    y-axis "speedup (x)" 0 --> {fmt(ceiling)}',
        f"    bar [{', '.join(fmt(v) for v in measured)}]",
        f"    line [{', '.join(fmt(v) for v in model)}]",
    ]
    if m.claimed_speedup is not None:
        lines.append(f"    line [{', '.join(fmt(m.claimed_speedup) for _ in xs)}]")
    lines.append("```")
    caption = "_Bars: measured AL/(1+ρD); curve: i.i.d. model through the measured AL" + (
        "; flat line: claimed speedup._" if m.claimed_speedup is not None else "._"
    )
    return "\n".join(lines) + "\n\n" + caption
