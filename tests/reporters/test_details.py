"""A finding's details travel beside its message in every format: JSON ``details``,
SARIF result ``properties.details``, the job summary's ``<details>`` in the message
cell, the text report's indented line with ``--verbose`` only; annotations carry the
message alone. Details hold text a pull request controls, escaped as the message is."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.reporters.test_sarif import assert_schema_valid, schema

from specgate.cli.main import main

__all__ = ["schema"]  # the fixture, imported for its name

#: SG405 at the drafter's revision: the contradiction in the message, why it matters in
#: details (a revision is text the pull request writes).
CLAIMS = (
    "version: 1\ndeployments:\n  - name: d\n    speculation:\n      enabled: true\n"
    "      mechanism: eagle3\n      draft_length: 3\n      draft_depth_ratio: 0.05\n"
    "      draft_revision: 'x|<b>y</b>'\n"
    "    evidence:\n      accept_length: 2.5\n      cache_coherence_eval: true\n"
    "      provenance: {draft_revision: abc1234}\n"
)
WHY = "a fine-tuned or updated drafter accepts differently, so the AL describes another model"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "c.specgate.yaml").write_text(CLAIMS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(["check", "c.specgate.yaml", *argv])
    return capsys.readouterr().out


def test_json_carries_details(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(_out(capsys, "--format", "json"))
    findings = report["files"][0]["deployments"][0]["findings"]
    (sg405,) = [f for f in findings if f["code"] == "SG405"]
    assert sg405["message"] == (
        "the evidence was measured on the drafter's revision 'abc1234' but the deployment "
        "serves 'x|<b>y</b>' (speculation.draft_revision)"
    )
    assert sg405["details"] == WHY
    assert all(f["details"] == "" for f in findings if f["code"] != "SG405")


def test_text_shows_details_with_verbose_only(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _out(capsys)
    assert "details:" not in plain
    verbose = _out(capsys, "--verbose").splitlines()
    at = next(i for i, line in enumerate(verbose) if " SG405 " in line)
    assert verbose[at + 1] == f"    details: {WHY}"
    assert sum(line.startswith("    details: ") for line in verbose) == 1


def test_sarif_puts_details_in_properties(
    repo: Path, capsys: pytest.CaptureFixture[str], schema: dict[str, Any]
) -> None:
    log = json.loads(_out(capsys, "--format", "sarif"))
    assert_schema_valid(log, schema)
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "SG405"]
    assert result["properties"]["details"] == WHY
    assert WHY not in result["message"]["text"]
    others = [r for r in log["runs"][0]["results"] if r["ruleId"] != "SG405"]
    assert all("details" not in r["properties"] for r in others)


def test_summary_folds_details_in_the_cell_escaped(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = repo / "summary.md"
    _out(capsys, "--format", "github", "--summary", str(summary))
    text = summary.read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if "SG405" in line and line.startswith("|")]
    assert row.endswith(f" <details><summary>details</summary>{WHY}</details> |")
    # the revision the pull request wrote is inert: no cell break, no tag
    assert "x\\|&lt;b&gt;y&lt;/b&gt;" in row


def test_annotations_carry_the_message_alone(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _out(capsys, "--format", "github", "--summary", str(repo / "s.md"))
    (line,) = [line for line in out.splitlines() if "SG405" in line]
    assert WHY not in line
