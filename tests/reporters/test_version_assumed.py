"""Text output and the job summary say once per deployment when the engine version is
not pinned (an image ``latest``), and which version the config was read at: the newest
specgate's engine data knows (knowledge(engine).newest_text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.inputs.knowledge import knowledge

EAGLE3 = '{"method": "eagle3", "model": "/models/eagle", "num_speculative_tokens": 3}'
CLAIMS = """version: 1
deployments:
  - name: {name}
    speculation:
      enabled: true
      engine: vllm
      engine_config: compose.yaml
    evidence:
      accept_length: 2.5
"""


def _repo(tmp_path: Path, image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compose.yaml").write_text(
        f"services:\n  vllm:\n    image: {image}\n"
        f"    command: [\"/models/llama\", \"--speculative-config\", '{EAGLE3}']\n"
    )
    (tmp_path / "c.specgate.yaml").write_text(
        CLAIMS.format(name="a") + "\n".join(CLAIMS.format(name="b").splitlines()[2:]) + "\n"
    )


def test_not_pinned_said_once_per_deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path, "vllm/vllm-openai:latest", monkeypatch)
    main(["check", "c.specgate.yaml", "--summary", "s.md"])
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line.strip().startswith("engine version:")]
    assert len(lines) == 2  # deployments a and b
    newest = knowledge("vllm").newest_text
    assert all("latest" in line and newest in line for line in lines)
    summary = (tmp_path / "s.md").read_text()
    assert summary.count("**Engine version:**") == 2


def test_pinned_tag_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    newest = knowledge("vllm").newest_text
    _repo(tmp_path, f"vllm/vllm-openai:v{newest}", monkeypatch)
    main(["check", "c.specgate.yaml", "--summary", "s.md"])
    assert "engine version:" not in capsys.readouterr().out
    assert "**Engine version:**" not in (tmp_path / "s.md").read_text()
