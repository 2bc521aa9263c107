"""Findings of two deployments at one place in a file they share
(docs/reports.md#deployments-that-share-a-file): text, GitHub annotations and SARIF name the
claims file and deployment each belongs to; the message does not.

The draft config ``draft.json`` holds ``"max_position_embeddings": 2048`` on line 4:
two spaces, the 25-character quoted key (cols 3-27), ``:`` (28), a space (29), the value at
col 30. Deployment ``chat`` serves a target with 131072 positions, ``code`` one with 65536:
both are past 2048, so each gets an SG303 at draft.json:4:30 with its own target's number.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.reporters.tally import owner_text

DRAFT = """\
{
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "max_position_embeddings": 2048
}
"""


def target(positions: int) -> str:
    return json.dumps(
        {"num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": positions}
    )


def deployment(name: str, hf_config: str) -> str:
    return (
        f"  - name: {name}\n"
        f"    model: {{hf_config: {hf_config}}}\n"
        "    speculation: {enabled: true, mechanism: eagle3, draft_length: 3,"
        " draft_depth_ratio: 0.05, draft_hf_config: draft.json}\n"
        "    evidence: {accept_length: 2.5, cache_coherence_eval: true}\n"
    )


SG303_CHAT = (
    "draft max_position_embeddings 2048 is below the target's max_position_embeddings "
    "131072 (target-a.json)"
)
SG303_CODE = (
    "draft max_position_embeddings 2048 is below the target's max_position_embeddings "
    "65536 (target-b.json)"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    (root / "draft.json").write_text(DRAFT, "utf-8")
    (root / "target-a.json").write_text(target(131072), "utf-8")
    (root / "target-b.json").write_text(target(65536), "utf-8")
    monkeypatch.chdir(root)
    return root


def run(fmt: str, capsys: pytest.CaptureFixture[str], *files: str) -> list[str]:
    main(["check", *files, "--format", fmt])
    return capsys.readouterr().out.splitlines()


def sg303(lines: list[str]) -> list[str]:
    return [line for line in lines if "SG303" in line]


def test_owner_text_forms() -> None:
    assert owner_text([]) == ""
    assert owner_text([("c.yaml", "chat")]) == "deployment chat in c.yaml"
    assert owner_text([("c.yaml", "chat"), ("c.yaml", "code")]) == (
        "deployments chat, code in c.yaml"
    )
    assert owner_text([("x.yaml", "a"), ("y.yaml", "b")]) == (
        "deployment a in x.yaml; deployment b in y.yaml"
    )
    seven = [("c.yaml", f"d{i}") for i in range(7)]
    assert owner_text(seven) == "deployments d0, d1, d2, d3, d4 in c.yaml; and 2 more deployments"


def test_text_names_each_deployment(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = "version: 1\ndeployments:\n" + deployment("chat", "target-a.json")
    (repo / "c.specgate.yaml").write_text(claims + deployment("code", "target-b.json"), "utf-8")
    assert sg303(run("text", capsys, "c.specgate.yaml")) == [
        f"draft.json:4:30: warn SG303 draft-context-too-short: {SG303_CHAT}"
        " (deployment chat in c.specgate.yaml)",
        f"draft.json:4:30: warn SG303 draft-context-too-short: {SG303_CODE}"
        " (deployment code in c.specgate.yaml)",
    ]


def test_one_line_for_the_same_finding_names_both(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # both serve target-a: the same message at the same place, printed once, naming both;
    # a second claims file with a third deployment joins it after a ";"
    body = deployment("chat", "target-a.json") + deployment("code", "target-a.json")
    (repo / "c.specgate.yaml").write_text("version: 1\ndeployments:\n" + body, "utf-8")
    (repo / "d.specgate.yaml").write_text(
        "version: 1\ndeployments:\n" + deployment("batch", "target-a.json"), "utf-8"
    )
    assert sg303(run("text", capsys, "c.specgate.yaml", "d.specgate.yaml")) == [
        f"draft.json:4:30: warn SG303 draft-context-too-short: {SG303_CHAT}"
        " (deployments chat, code in c.specgate.yaml; deployment batch in d.specgate.yaml)"
    ]


def test_github_title_names_the_deployment_escaped(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a name with ',' and ':' (escaped %2C and %3A in the title property, as the toolkit's
    # escapeProperty does) and '%' (%25, first)
    claims = "version: 1\ndeployments:\n" + deployment("'a,b:50%'", "target-a.json")
    (repo / "c.specgate.yaml").write_text(claims + deployment("code", "target-b.json"), "utf-8")
    assert sg303(run("github", capsys, "c.specgate.yaml")) == [
        "::warning title=specgate (SG303) for deployment a%2Cb%3A50%25 in c.specgate.yaml,"
        f"file=draft.json,line=4,col=30::draft-context-too-short: {SG303_CHAT}",
        "::warning title=specgate (SG303) for deployment code in c.specgate.yaml,"
        f"file=draft.json,line=4,col=30::draft-context-too-short: {SG303_CODE}",
    ]


def test_sarif_properties_name_the_deployment(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = "version: 1\ndeployments:\n" + deployment("chat", "target-a.json")
    (repo / "c.specgate.yaml").write_text(claims + deployment("code", "target-b.json"), "utf-8")
    main(["check", "c.specgate.yaml", "--format", "sarif"])
    log = json.loads(capsys.readouterr().out)
    results = [r for r in log["runs"][0]["results"] if r["ruleId"] == "SG303"]
    claims_file = {"uri": "c.specgate.yaml", "uriBaseId": "%SRCROOT%"}
    assert [(r["message"]["text"], r["properties"]["deployments"]) for r in results] == [
        (SG303_CHAT, [{"claimsFile": claims_file, "name": "chat"}]),
        (SG303_CODE, [{"claimsFile": claims_file, "name": "code"}]),
    ]
    # the message stays free of the name; a finding in the claims file names none
    others = [r for r in log["runs"][0]["results"] if r["ruleId"] != "SG303"]
    in_claims = [
        r
        for r in others
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "c.specgate.yaml"
    ]
    assert all("deployments" not in r["properties"] for r in in_claims)
