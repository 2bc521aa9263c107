"""``inputs.engine.target_model`` in the JSON report: the served model the engine
config names (the value the config digest uses, docs/change-gate.md#config-digest), ``null`` when
the config names none (the digest then falls back to ``model.name``, which is not an
input read from the engine config and so is not reported here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
SC = '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'


def _engine_json(
    tmp_path: Path,
    command: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> dict[str, Any]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving/serve.sh").write_text(command, encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model: {name: claims-name}\n"
        "    speculation:\n      enabled: false\n      engine: vllm\n"
        "      engine_config: serving/serve.sh\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    main(["check", "--format", "json", "c.specgate.yaml"])
    report = json.loads(capsys.readouterr().out)
    engine: dict[str, Any] = report["files"][0]["deployments"][0]["inputs"]["engine"]
    return engine


def test_target_model_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    command = f"vllm serve --port 8000 --speculative-config '{SC}' {LLAMA}\n"
    engine = _engine_json(tmp_path, command, monkeypatch, capsys)
    assert engine["target_model"] == LLAMA
    assert (engine["mechanism"], engine["draft_length"]) == ("ngram", 4)


def test_no_target_model_is_null(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    command = f"vllm serve --port 8000 --speculative-config '{SC}'\n"
    engine = _engine_json(tmp_path, command, monkeypatch, capsys)
    assert "target_model" in engine
    assert engine["target_model"] is None
