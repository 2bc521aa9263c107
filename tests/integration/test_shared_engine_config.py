"""Two deployments that reference one engine config (F18).

Each deployment gets the findings about that file's lines (JSON: once per deployment);
the text report prints each identical line once and its tally still counts every
deployment's findings, saying how many lines were repeats. The engine config is a
llama-server command line with the ``--draft-max``/``--draft-min`` flags llama.cpp
removed (SG310 at b11312, the pinned build; unpinned they imply b8942 and warn,
docs/engines.md#versions) and ``--draft-p-min`` (SG308, D a maximum).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run

SERVE = (
    "llama-server -m target.gguf -md draft.gguf --spec-type draft-simple --draft-max 16 "
    "--draft-min 0 --draft-p-min 0.75\n"
)
DEPLOYMENT = (
    "  - name: {name}\n    model: {{name: m}}\n"
    "    speculation: {{enabled: true, engine_version: b11312, engine_config: serving/llama.txt}}\n"
    "    evidence: {{accept_length: 2.5, cache_coherence_eval: true}}\n"
)


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving/llama.txt").write_text(SERVE, encoding="utf-8")
    claims = "version: 1\ndeployments:\n" + "".join(
        DEPLOYMENT.format(name=n) for n in ("chat-a", "chat-b")
    )
    (tmp_path / "c.specgate.yaml").write_text(claims, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_text_prints_a_shared_finding_once(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["check", "c.specgate.yaml"], capsys)
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("serving/llama.txt:")]
    # --draft-max (SG310, SG308 at its word) and --draft-min (SG310): three lines, once.
    assert len(lines) == len(set(lines)) == 3
    # Per deployment 2 fail (SG310 ×2), 1 info (SG308), 1 note (SG204 at its own line):
    # the tally counts both deployments; three lines were repeats.
    assert out.rstrip().endswith(
        "findings: 4 fail, 0 warn, 2 info, 2 note "
        "(3 repeated for deployments that share a file, printed once)"
    )
    assert out.count("  deployment chat-a: fail") == out.count("  deployment chat-b: fail") == 1


def test_json_keeps_each_deployment_s_findings(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(["check", "--format", "json", "c.specgate.yaml"], capsys)
    (file,) = json.loads(out)["files"]
    for dep in file["deployments"]:
        assert sorted(f["code"] for f in dep["findings"]) == ["SG204", "SG308", "SG310", "SG310"]


def test_distinct_findings_are_all_printed(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A second engine config for chat-b: nothing is a repeat, no note in the tally.
    (shared / "serving/other.txt").write_text(SERVE, encoding="utf-8")
    claims = (shared / "c.specgate.yaml").read_text(encoding="utf-8")
    head, _, tail = claims.partition("  - name: chat-b")
    tail = tail.replace("serving/llama.txt", "serving/other.txt")
    (shared / "c.specgate.yaml").write_text(head + "  - name: chat-b" + tail, encoding="utf-8")
    _, out, _ = run(["check", "c.specgate.yaml"], capsys)
    assert len([line for line in out.splitlines() if line.startswith("serving/")]) == 6
    assert "printed once" not in out


# --- the job summary, annotations and SARIF say a shared finding once too (review #19) ---

HEADING = (
    "1 file, 2 deployments (2 fail); findings: 4 fail, 0 warn, 2 info, 2 note "
    "(3 repeated for deployments that share a file, printed once)"
)


def _summary_rows(summary: str, place: str) -> list[str]:
    return [line for line in summary.splitlines() if line.startswith("| ") and place in line]


def test_summary_lists_a_shared_finding_once_naming_both_deployments(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = run(
        ["check", "--format", "github", "--summary", "s.md", "c.specgate.yaml"], capsys
    )
    assert code == 1
    summary = (shared / "s.md").read_text(encoding="utf-8")
    # The heading tells deployments (2, both failing) from findings (the text's tally).
    assert summary.splitlines()[2] == HEADING
    rows = _summary_rows(summary, "serving/llama.txt")
    # SG310 at --draft-max and at --draft-min, SG308 at --draft-p-min's word: three rows.
    assert sorted(row.split(" | ")[1] for row in rows) == [
        "SG308 adaptive-draft-length",
        "SG310 engine-setting-removed",
        "SG310 engine-setting-removed",
    ]
    assert all(" | chat-a, chat-b: " in row for row in rows), rows


def test_summary_names_a_deployment_once_when_two_files_share_its_name(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The review's case: two claims files, each with a deployment of the same name.
    one = "version: 1\ndeployments:\n" + DEPLOYMENT.format(name="chat")
    (shared / "c.specgate.yaml").write_text(one, encoding="utf-8")
    (shared / "d.specgate.yaml").write_text(one, encoding="utf-8")
    run(["check", "--format", "github", "--summary", "s.md", "."], capsys)
    summary = (shared / "s.md").read_text(encoding="utf-8")
    assert summary.splitlines()[2] == HEADING.replace("1 file,", "2 files,")
    rows = _summary_rows(summary, "serving/llama.txt")
    assert len(rows) == 3
    assert all(" | chat: " in row for row in rows), rows


def test_annotations_and_sarif_say_a_shared_finding_once(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(["check", "--format", "github", "c.specgate.yaml"], capsys)
    assert len([line for line in out.splitlines() if "file=serving/llama.txt" in line]) == 3
    _, out, _ = run(["check", "--format", "sarif", "c.specgate.yaml"], capsys)
    results = json.loads(out)["runs"][0]["results"]
    places = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in results
    ]
    shared_places = [p for p in places if p[1] == "serving/llama.txt"]
    assert len(shared_places) == len(set(shared_places)) == 3
    # SG204 sits on each deployment's own line of the claims file: both stay.
    assert sum(1 for p in places if p[0] == "SG204") == 2


def test_step_outputs_count_each_deployment_s_findings(
    shared: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # action.yml: the counts are the text tally's (once per deployment), not the rows.
    monkeypatch.setenv("GITHUB_OUTPUT", str(shared / "out.txt"))
    run(["check", "--format", "github", "c.specgate.yaml"], capsys)
    lines = (shared / "out.txt").read_text(encoding="utf-8").splitlines()
    assert lines == [
        "status=fail",
        "fail-count=4",
        "warn-count=0",
        "info-count=2",
        "note-count=2",
    ]
