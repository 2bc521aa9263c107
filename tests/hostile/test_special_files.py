"""Files that are not regular files, and findings repeated across deployments."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from specgate.cli.main import main


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_a_fifo_with_a_claims_name_is_an_input_error_not_a_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "pipe.specgate.yaml")
    assert main(["check", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "pipe.specgate.yaml: not a regular file" in out


def test_shared_model_config_finding_is_annotated_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "models").mkdir()
    # MLA (kv_lora_rank) → SG306 for every deployment that reads this config, at line 1.
    (tmp_path / "models" / "ds.json").write_text(
        '{"num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512}\n',
        encoding="utf-8",
    )
    deployment = (
        "  - name: {name}\n    model:\n      hf_config: models/ds.json\n"
        "    speculation:\n      enabled: false\n"
    )
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n"
        + deployment.format(name="a")
        + deployment.format(name="b"),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    main(["check", "c.specgate.yaml", "--format", "github"])
    notices = [ln for ln in capsys.readouterr().out.splitlines() if "(SG306)" in ln]
    assert len(notices) == 1
    assert "file=models/ds.json,line=1," in notices[0]
