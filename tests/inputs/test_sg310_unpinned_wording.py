"""SG310 on an unpinned version says the recorded fact first, then why it may apply
(new-user trial 2026-12-02, defect 11: "may not exist in vLLM releases before 0.27.1
(version unknown: the settings imply them)" read as the opposite of what is recorded)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.oracle.replay import releases_refusing_key

from specgate.cli.main import main

FOLDER = (
    Path(__file__).resolve().parent.parent
    / "data" / "published-2026-12" / "05-vllm-southfreebird-mlp-speculator-v0-keys"
)


def test_sg310_names_what_is_recorded_and_the_version_the_settings_imply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(FOLDER, tmp_path / "f")
    monkeypatch.chdir(tmp_path / "f")
    main(["check", "claims.specgate.yaml", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    (dep,) = report["files"][0]["deployments"]
    found = {f["message"]: f for f in dep["findings"] if f["code"] == "SG310"}
    # disable_logprobs is refused by every recorded vLLM release, 0.19.1 the oldest (the
    # engines' answers, tests/data/engine_oracle, read here so a new recording needs no
    # edit; tests/oracle/test_recorded_former_keys.py holds the boundary); the file pins
    # no version and its disable_by_batch_size is absent from 0.17.0 on, so the newest
    # release the settings allow is 0.16.0, where disable_logprobs's presence is not
    # recorded: a warning
    refused = ", ".join(releases_refusing_key("vllm", "disable_logprobs"))
    message = (
        f"disable_logprobs in speculative_config is refused by vLLM {refused} (a key of "
        "older releases); the version is not pinned and may be one without it; the settings "
        "used put it at vLLM 0.16.0, where it is not recorded: state "
        "speculation.engine_version to pin the version you run"
    )
    # message and details read together (docs/reports.md#message-and-details)
    # (a message past 200 characters, as the list of recorded releases grows, may be cut
    # inside that list: compared word by word, whichever separator the cut left)
    def words(text: str) -> str:
        return " ".join(text.replace(";", " ").replace(",", " ").split())

    said = {f"{m}; {f['details']}": f for m, f in found.items()}
    (finding,) = [f for text, f in said.items() if words(text).startswith(words(message))]
    assert finding["severity"] == "warn"
    assert not any("may not exist" in m for m in found)
