"""A deployment with speculation off whose serving config speculates nothing: the two
agree, so the run goes on (real-configs review: a plain `vllm serve` script and SGLang
launchers with the speculative flags commented out stopped the run with exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.cli.main import main

CLAIMS = """\
version: 1
deployments:
  - name: plain
    speculation:
      enabled: {enabled}
      engine: vllm
      engine_config: serve.sh
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2\n"
        "  # --speculative-config '{\"method\": \"eagle3\"}'\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_off_and_nothing_configured_agree(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(CLAIMS.format(enabled="false"), encoding="utf-8")
    code = main(["check", "c.specgate.yaml", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["files"][0]["error"] is None
    assert report["files"][0]["deployments"][0]["status"] == "ready"


def test_on_and_nothing_configured_is_a_finding_not_a_stop(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Contract change (issue 24, degrade never stop): this was exit 2. The file parses,
    # so what specgate cannot read in it is SG312 on the deployment, at serve.sh, and
    # the deployment is still judged on what the claims file states.
    (repo / "c.specgate.yaml").write_text(CLAIMS.format(enabled="true"), encoding="utf-8")
    code = main(["check", "c.specgate.yaml", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    # SG312 warns (nothing about the engine was read to fail on); the run fails on the
    # claims file's own gap only (SG101: enabled with no accept length).
    assert code == 1
    (file,) = report["files"]
    assert file["error"] is None
    (deployment,) = file["deployments"]
    (sg312,) = [f for f in deployment["findings"] if f["code"] == "SG312"]
    assert sg312["severity"] == "warn"
    assert sg312["file"] == "serve.sh"
    assert "no speculative decoding configured in serve.sh" in sg312["message"]
    fails = {f["code"] for f in deployment["findings"] if f["severity"] == "fail"}
    assert fails == {"SG101"}
