"""``specgate check --statistics``: how many findings each rule raised (as ruff's
``--statistics``), instead of the findings themselves.

Text: one line per rule, most frequent first (``count  code  name``), suppressed
findings counted apart. JSON: a list of ``{"code", "name", "severity", "count",
"suppressed"}``.
"""

from __future__ import annotations

import json
from collections import Counter

from specgate.check.report import RunReport


def rows(run: RunReport) -> list[tuple[str, str, str, int, int]]:
    """(code, name, severity, count in force, count suppressed), most frequent first."""
    active: Counter[str] = Counter()
    silenced: Counter[str] = Counter()
    about: dict[str, tuple[str, str]] = {}
    for finding in run.all_findings(suppressed=True):
        about[finding.code] = (finding.name, finding.severity)
        (silenced if finding.suppressed is not None else active)[finding.code] += 1
    ordered = sorted(about, key=lambda code: (-active[code], -silenced[code], code))
    return [(c, *about[c], active[c], silenced[c]) for c in ordered]


def render(run: RunReport, *, json_format: bool = False) -> str:
    """The statistics as text lines or a JSON list; input errors are counted too."""
    table = rows(run)
    errors = sum(1 for f in run.files if f.error is not None)
    if json_format:
        data = [
            {"code": c, "name": n, "severity": s, "count": k, "suppressed": x}
            for c, n, s, k, x in table
        ]
        return json.dumps({"rules": data, "input_errors": errors}, indent=2) + "\n"
    lines = []
    for code, name, severity, count, silenced in table:
        extra = f" ({silenced} suppressed)" if silenced else ""
        lines.append(f"{count:>5}  {code}  {severity:<4}  {name}{extra}")
    if errors:
        lines.append(f"{errors:>5}  input error{'s' if errors != 1 else ''} (file not read)")
    return "".join(line + "\n" for line in lines)
