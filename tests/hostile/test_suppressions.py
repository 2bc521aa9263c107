"""Suppressions are visible and auditable: JSON, SARIF, SG005, SG004 (docs/trust.md#suppressions).

The motivating report: `# specgate: ignore[SG104]` hid a 9x over-claim without a trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import BASE, InProcess

OVERCLAIM = BASE + "    claims:\n      speedup: 9\n"  # SG104: 9x over AL / (β + ρ·passes) = 2.087x


def _findings(data: dict) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for file in data["files"]:
        out += file["findings"]
        for deployment in file["deployments"]:
            out += deployment["findings"]
    return out


@pytest.mark.parametrize(
    ("directive", "reason"),
    [
        (
            "# specgate: ignore[SG104] -- vendor figure, re-measure in Q3",
            "vendor figure, re-measure in Q3",
        ),
        ("# specgate: ignore[claimed-speedup-over-theory] marketing number", "marketing number"),
        ("#specgate:ignore[SG104,SG204]--two", "two"),
        ("# specgate: ignore[SG104]", "no reason given"),
    ],
)
def test_an_inline_suppression_stays_in_json_and_sarif(
    sg: InProcess, repo: Path, directive: str, reason: str
) -> None:
    text = OVERCLAIM.replace("      speedup: 9\n", f"      speedup: 9  {directive}\n")
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code == 0  # suppressed: the status is ready
    data = result.json()
    (suppressed,) = [f for f in _findings(data) if f.get("suppressed")]
    assert suppressed["code"] == "SG104"
    assert suppressed["line"] == 13
    assert suppressed["justification"] == f"inline: {reason}"
    assert data["summary"]["suppressed"] == 1
    assert data["summary"]["fail"] == 0

    log = json.loads(sg(["check", "--format", "sarif", "c.specgate.yaml"], repo).out)
    (result_entry,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "SG104"]
    assert result_entry["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": f"inline: {reason}"}
    ]


def test_configuration_ignore_is_an_external_suppression(sg: InProcess, repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.specgate]\nignore = ["SG104"]\n', "utf-8")
    (repo / "c.specgate.yaml").write_text(OVERCLAIM, "utf-8")
    log = json.loads(sg(["check", "--format", "sarif", "c.specgate.yaml"], repo).out)
    (entry,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "SG104"]
    assert entry["suppressions"][0]["kind"] == "external"
    assert "pyproject.toml" in entry["suppressions"][0]["justification"]
    cli = json.loads(
        sg(["check", "--format", "sarif", "--ignore", "SG104", "c.specgate.yaml"], repo).out
    )
    (entry,) = [r for r in cli["runs"][0]["results"] if r["ruleId"] == "SG104"]
    assert entry["suppressions"][0]["justification"] == "ignored on the command line (--ignore)"


@pytest.mark.parametrize(
    ("placement", "line"),
    [
        ("    evidence:  # specgate: ignore[SG104] -- stale\n", 9),  # covers its own line
        ("    # specgate: ignore[SG105] -- stale\n", 9),  # alone: covers the next line
    ],
)
def test_unused_suppression_is_sg005(sg: InProcess, repo: Path, placement: str, line: int) -> None:
    text = BASE.replace(
        "    evidence:\n",
        placement if placement.startswith("    evidence") else placement + "    evidence:\n",
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    findings = _findings(result.json())
    sg005 = [f for f in findings if f["code"] == "SG005"]
    assert len(sg005) == 1
    assert sg005[0]["severity"] == "warn"
    assert sg005[0]["line"] == line
    assert result.code == 0  # a warning: actionable, not fail
    assert sg(["check", "--strict", "c.specgate.yaml"], repo).code == 1


@pytest.mark.parametrize(
    "directive", ["# specgate: ignore", "# specgate: ignore -- because", "# specgate: ignore[]"]
)
def test_bare_ignore_is_sg004_and_suppresses_nothing(
    sg: InProcess, repo: Path, directive: str
) -> None:
    text = OVERCLAIM.replace("      speedup: 9\n", f"      speedup: 9  {directive}\n")
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code == 1  # SG104 still fails
    codes = sorted(f["code"] for f in _findings(result.json()) if not f.get("suppressed"))
    assert codes == ["SG004", "SG104"]
    sg004 = next(f for f in _findings(result.json()) if f["code"] == "SG004")
    assert sg004["line"] == 13
    assert "names no rule" in sg004["message"]


def test_suppressed_counts_in_text_and_statistics(sg: InProcess, repo: Path) -> None:
    text = OVERCLAIM.replace(
        "      speedup: 9\n", "      speedup: 9  # specgate: ignore[SG104] -- x\n"
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    assert "(1 suppressed)" in sg(["check", "c.specgate.yaml"], repo).out
    stats = sg(["check", "--statistics", "c.specgate.yaml"], repo).out
    assert "    0  SG104  fail  claimed-speedup-over-theory (1 suppressed)" in stats
