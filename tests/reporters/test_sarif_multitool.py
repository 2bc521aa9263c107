"""Our SARIF through Microsoft's SARIF Multitool: the schema plus GitHub's ingestion rules.

``Sarif.Multitool validate --rule-kind "Gh;Sarif"`` runs the SARIF spec rules (SARIFnnnn)
and the GitHub Advanced Security rules (GHnnnn) that code scanning applies on upload
(ecosystem notes README.md#github-action). The tool is pinned by
tests/sarif-multitool/package-lock.json:

    npm ci --prefix tests/sarif-multitool

The platform binary is called directly (the npm ``bin`` wrapper re-splits ``;`` through
``sh``). It is a self-contained .NET app; globalization-invariant mode spares it libicu.
"""

from __future__ import annotations

import io
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main

HERE = Path(__file__).parent.parent  # tests/
DATA = HERE / "data" / "sarif"
PACKAGES = HERE / "sarif-multitool" / "node_modules" / "@microsoft"
INSTALL = "npm ci --prefix tests/sarif-multitool"


def _binary() -> Path:
    if sys.platform == "win32":
        return PACKAGES / "sarif-multitool-win32" / "Sarif.Multitool.exe"
    folder = "sarif-multitool-darwin" if sys.platform == "darwin" else "sarif-multitool-linux"
    return PACKAGES / folder / "Sarif.Multitool"


MULTITOOL = _binary()

pytestmark = pytest.mark.skipif(
    not MULTITOOL.is_file() or (sys.platform == "linux" and platform.machine() != "x86_64"),
    reason=f"SARIF Multitool not installed (run `{INSTALL}`; linux-x64, macOS or Windows)",
)


def sarif_of(*paths: Path) -> str:
    out = io.StringIO()
    main(["check", "--format", "sarif", *map(str, paths)], stdout=out)
    return out.getvalue()


def validate(log_text: str, folder: Path) -> dict[str, Any]:
    """Run the multitool on ``log_text``; its own SARIF log of what it found."""
    target = folder / "specgate.sarif"
    target.write_text(log_text, encoding="utf-8")
    report = folder / "multitool.sarif"
    env = {**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"}
    completed = subprocess.run(
        [
            str(MULTITOOL),
            "validate",
            str(target),
            "--rule-kind",
            "Gh;Sarif",
            "--output",
            str(report),
            "--log",
            "ForceOverwrite",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    loaded: dict[str, Any] = json.loads(report.read_text(encoding="utf-8-sig"))
    return loaded


def problems(report: dict[str, Any]) -> list[str]:
    """Errors and warnings the multitool reported, and its own execution failures.

    A result without ``level`` is a warning (SARIF §3.27.10 default)."""
    found: list[str] = []
    for run in report["runs"]:
        for result in run.get("results", []):
            level = result.get("level", "warning")
            if level in ("error", "warning"):
                message = result.get("message", {})
                found.append(
                    f"{level} {result.get('ruleId')}: "
                    f"{message.get('text') or message.get('arguments')}"
                )
        for invocation in run.get("invocations", []):
            if not invocation.get("executionSuccessful", True):
                found.append("the multitool's own run failed")
            for note in invocation.get("toolExecutionNotifications", []):
                if note.get("level", "warning") in ("error", "warning"):
                    found.append(f"notification: {note.get('message')}")
    return found


@pytest.fixture
def as_the_action(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Action's environment: its own repository and ref give the docs address, the
    SARIF helpUri and informationUri (rules/docs.py)."""
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_ACTION_REPOSITORY", "acme/specgate")
    monkeypatch.setenv("GITHUB_ACTION_REF", "v1")


@pytest.mark.usefixtures("as_the_action")
def test_failing_fixture_passes_github_and_sarif_rules(tmp_path: Path) -> None:
    report = validate(sarif_of(DATA / "failing.specgate.yaml"), tmp_path)
    assert problems(report) == []


@pytest.mark.usefixtures("as_the_action")
def test_unparseable_file_notification_passes_too(tmp_path: Path) -> None:
    text = sarif_of(DATA / "failing.specgate.yaml", DATA / "broken.specgate.yaml")
    assert json.loads(text)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert problems(validate(text, tmp_path)) == []


def test_outside_the_action_only_the_information_uri_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No docs address and no published repository: specgate names no page that does not
    # exist (docs/reports.md#sarif), and SARIF2005's advice to provide informationUri is all that is
    # left — the one problem, and only that one.
    for name in (
        "GITHUB_ACTION_REPOSITORY",
        "GITHUB_ACTION_REF",
        "SPECGATE_ACTION_REPOSITORY",
        "SPECGATE_ACTION_REF",
    ):
        monkeypatch.delenv(name, raising=False)
    assert problems(validate(sarif_of(DATA / "failing.specgate.yaml"), tmp_path)) == [
        "warning SARIF2005: ['runs[0].tool.driver', 'specgate']"
    ]


def test_help_uris_from_the_composite_actions_env_and_docs_url_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # new-user defect 10: inside the composite Action the addresses come from
    # SPECGATE_ACTION_REPOSITORY/_REF (action.yml, from github.action_repository/_ref in
    # the step's env); `--docs-url` sets them anywhere (reportingDescriptor.helpUri, SARIF
    # 2.1.0, section 3.49.12: an absolute URI of the rule's primary documentation)
    for name in ("GITHUB_ACTION_REPOSITORY", "GITHUB_ACTION_REF"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("SPECGATE_ACTION_REPOSITORY", "acme/specgate")
    monkeypatch.setenv("SPECGATE_ACTION_REF", "v1")
    text = sarif_of(DATA / "failing.specgate.yaml")
    rules = json.loads(text)["runs"][0]["tool"]["driver"]["rules"]
    assert {r["id"]: r["helpUri"] for r in rules}["SG104"] == (
        "https://github.com/acme/specgate/blob/v1/docs/rules.md#sg104-claimed-speedup-over-theory"
    )
    assert problems(validate(text, tmp_path)) == []
    for name in ("SPECGATE_ACTION_REPOSITORY", "SPECGATE_ACTION_REF"):
        monkeypatch.delenv(name)
    out = io.StringIO()
    given = ["--docs-url", "https://docs.example/specgate/rules.html"]
    main(["check", "--format", "sarif", *given, str(DATA / "failing.specgate.yaml")], stdout=out)
    rules = json.loads(out.getvalue())["runs"][0]["tool"]["driver"]["rules"]
    assert all(r["helpUri"].startswith("https://docs.example/specgate/rules.html#") for r in rules)
    # no repository is known, so informationUri stays absent: SARIF2005's advice alone
    assert problems(validate(out.getvalue(), tmp_path)) == [
        "warning SARIF2005: ['runs[0].tool.driver', 'specgate']"
    ]


def test_the_multitool_catches_a_missing_help(tmp_path: Path) -> None:
    # Negative control (ecosystem notes README.md#github-action): without help, GH2012 fires, so an
    # empty problem list above means the GitHub rules really ran.
    log = json.loads(sarif_of(DATA / "failing.specgate.yaml"))
    del log["runs"][0]["tool"]["driver"]["rules"][0]["help"]
    found = problems(validate(json.dumps(log), tmp_path))
    assert any(p.startswith("error GH2012") for p in found), found


def test_suppressions_backslashes_and_help_uris_pass_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/trust.md#suppressions: suppressed results carry `suppressions`, names and file names with
    # backslashes stay valid, helpUri appears with a known docs address.
    (tmp_path / ".git").mkdir()
    claims = tmp_path / "a\\b.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: 'C:\\models\\x'\n    speculation:\n"
        "      enabled: true\n      mechanism: eagle3\n      draft_length: 3\n"
        "      draft_depth_ratio: 0.05\n    evidence:\n      accept_length: 2.4\n"
        "      cache_coherence_eval: true\n    claims:\n"
        "      speedup: 9  # specgate: ignore[SG104] -- vendor figure\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_ACTION_REPOSITORY", "acme/specgate")
    monkeypatch.setenv("GITHUB_ACTION_REF", "v1")
    text = sarif_of(claims)
    log = json.loads(text)
    (result,) = log["runs"][0]["results"]
    assert result["suppressions"][0]["justification"] == "inline: vendor figure"
    assert all("helpUri" in rule for rule in log["runs"][0]["tool"]["driver"]["rules"])
    assert problems(validate(text, tmp_path)) == []


def test_deployments_of_a_shared_file_pass_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/reports.md#deployments-that-share-a-file: results.properties.deployments on two SG303s
    # at one place of a shared draft config
    from tests.reporters.test_shared_file_owner import DRAFT, deployment, target

    (tmp_path / ".git").mkdir()
    (tmp_path / "draft.json").write_text(DRAFT, "utf-8")
    (tmp_path / "target-a.json").write_text(target(131072), "utf-8")
    (tmp_path / "target-b.json").write_text(target(65536), "utf-8")
    body = deployment("chat", "target-a.json") + deployment("code", "target-b.json")
    (tmp_path / "c.specgate.yaml").write_text("version: 1\ndeployments:\n" + body, "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_ACTION_REPOSITORY", "acme/specgate")
    monkeypatch.setenv("GITHUB_ACTION_REF", "v1")
    text = sarif_of(Path("c.specgate.yaml"))
    results = json.loads(text)["runs"][0]["results"]
    assert [
        r["properties"]["deployments"][0]["name"] for r in results if r["ruleId"] == "SG303"
    ] == [
        "chat",
        "code",
    ]
    assert problems(validate(text, tmp_path)) == []
