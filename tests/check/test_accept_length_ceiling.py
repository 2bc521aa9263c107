"""AL has a ceiling whatever D is (docs/claims-file.md#evidence): AL ≤ 1 + D (each step
accepts at most D draft tokens plus the bonus token) and D ≤ 1,024 (specgate's bound,
docs/trust.md#bounded-work), so an AL above 1,025 is SG001 at its value even when the
deployment states no D. A new-user trial wrote ``accept_length: 1e308`` without D and
the file was "ready"."""

from __future__ import annotations

from pathlib import Path

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

CLAIMS = """\
version: 1
deployments:
  - name: a
    speculation: {enabled: true, mechanism: eagle3, draft_depth_ratio: 0.05}
    evidence: {cache_coherence_eval: true, accept_length: AL}
"""


def _sg001(tmp_path: Path, al: str) -> list[tuple[int, int]]:
    (tmp_path / "c.yaml").write_text(CLAIMS.replace("AL", al), encoding="utf-8")
    report = check_file(tmp_path / "c.yaml", "c.yaml", CheckOptions())
    return [
        (f.line, f.column)
        for d in report.deployments
        for f in d.findings
        if f.code == "SG001"
    ]


def test_an_al_past_1025_is_sg001_at_its_value(tmp_path: Path) -> None:
    # "    evidence: {cache_coherence_eval: true, accept_length: " is 58 characters
    assert _sg001(tmp_path, "1e308") == [(5, 59)]
    assert _sg001(tmp_path, "1025.5") == [(5, 59)]


def test_an_al_of_1025_is_within_the_ceiling(tmp_path: Path) -> None:
    assert _sg001(tmp_path, "1025") == []
    assert _sg001(tmp_path, "2.4") == []
