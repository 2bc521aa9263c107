"""An AL marked ``estimate`` in JSON is called an estimate on every surface: the text
output's metrics and finding lines, the job summary, SARIF messages and the annotations
(docs/reports.md#job-summary; issue 17: "an AL marked estimate in JSON is not called one in the text
or the job summary")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.git_repo import Repo

from specgate.cli.main import main

# llama-server timings: draft_n 400, accepted 240, predicted 500. llama.cpp gives r only;
# the labelled estimate takes each step to emit its accepted drafts plus one token:
# steps = 500 − 240 = 260, AL = 500 / 260 = 1.9231 (an estimate). ρ 0.5, D 4:
# S = 1.9231 / (1 + 0.5·4) = 0.641x; break-even 3, floor 3.3 → SG102 and SG106, which
# warn: a fail never rests on an estimated AL (newuser review, defect 4).
TIMINGS = '{"timings": {"draft_n": 400, "draft_n_accepted": 240, "predicted_n": 500}}\n'
CLAIMS = """\
version: 1
deployments:
  - name: edge
    speculation:
      {enabled: true, mechanism: draft_model, draft_length: 4, draft_depth_ratio: 0.5,
       engine: llamacpp}
    evidence:
      cache_coherence_eval: true
      metrics: {format: llamacpp-timings, path: timings.json}
"""
LABEL = "AL 1.9231 (an estimate from llamacpp-timings data)"


def check(repo: Repo, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    repo.write({"c.specgate.yaml": CLAIMS, "timings.json": TIMINGS})
    assert main(["check", "c.specgate.yaml", *args]) == 0  # warnings only
    return capsys.readouterr().out


def test_json_marks_the_estimate(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(check(repo, capsys, "--format", "json"))
    (dep,) = report["files"][0]["deployments"]
    assert dep["inputs"]["acceptance"]["estimate"] is True
    assert dep["metrics"]["accept_length"] == 1.9231
    messages = {f["code"]: f["message"] for f in dep["findings"]}
    assert messages["SG102"].startswith(LABEL + " is below the floor 3.3")
    assert messages["SG106"].startswith(LABEL + " at cost")


def test_text_says_estimate(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    out = check(repo, capsys)
    assert "    AL 1.9231 (estimate, llamacpp-timings), D 4," in out
    assert f"warn SG102 accept-length-below-floor: {LABEL} is below" in out


def test_summary_says_estimate(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    check(repo, capsys, "--summary", "s.md")
    text = Path("s.md").read_text("utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| accept length AL |"))
    assert row.startswith("| accept length AL | 1.9231 (**estimate**, llamacpp-timings: ")
    assert f"edge: {LABEL} is below the floor" in text


def test_sarif_and_annotations_say_estimate(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    sarif = json.loads(check(repo, capsys, "--format", "sarif"))
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
    assert sum(LABEL in t for t in texts) == 2  # SG102 and SG106
    annotations = check(repo, capsys, "--format", "github")
    assert sum(LABEL in line for line in annotations.splitlines()) == 2


def test_a_stated_al_is_no_estimate(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    # the stated AL 3.4 wins over the timings (SG301 names the disagreement): not labelled
    stated = CLAIMS.replace("      cache_coherence_eval: true\n",
                            "      cache_coherence_eval: true\n      accept_length: 3.4\n")
    repo.write({"c.specgate.yaml": stated, "timings.json": TIMINGS})
    main(["check", "c.specgate.yaml"])
    out = capsys.readouterr().out
    assert "estimate" not in out
    assert "    AL 3.4, D 4," in out
