"""`specgate init` writes a starter claims file that passes, and never overwrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.model.validate import schema


def test_init_writes_a_ready_starter_and_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "specgate.yaml"
    assert main(["init", str(target)]) == 0
    text = target.read_text(encoding="utf-8")
    assert main(["check", str(target), "--strict"]) == 0  # ready: no finding at all
    capsys.readouterr()
    target.write_text("# mine\n", encoding="utf-8")
    assert main(["init", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "# mine\n"
    # Every key the schema knows for a deployment appears with a comment, except the
    # engine-native references (documented separately).
    deployment = schema()["$defs"]["deployment"]["properties"]
    for block in ("model", "speculation", "workload", "evidence", "claims", "policy"):
        assert f"    {block}:" in text
        for key in deployment[block]["properties"]:
            if key in {
                "hf_config",
                "engine",
                "engine_config",
                "engine_version",
                "draft_hf_config",
                "metrics",
            }:
                continue
            # A key may be shown as a commented-out alternative ("# size: large  # …").
            lines = [ln.strip().removeprefix("# ") for ln in text.splitlines()]
            line = next((ln for ln in lines if ln.startswith(f"{key}:")), None)
            assert line is not None, f"{key} is not shown"
            assert "#" in line or key == "next", f"{key} has no explanatory comment"


@pytest.mark.parametrize("name", ["new.json", "new.toml"])
def test_init_refuses_names_that_are_not_yaml(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path / name)]) == 2
    assert "give a .yaml or .yml name" in capsys.readouterr().err
    assert not (tmp_path / name).exists()


def test_init_into_an_existing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Contract change: a folder was refused ("is a folder"); the newcomer's
    # `specgate init t/` expects t/specgate.yaml, and an existing folder is alike
    folder = tmp_path / "deploy.yaml"
    folder.mkdir()
    assert main(["init", str(folder)]) == 0
    assert (folder / "specgate.yaml").is_file()
    assert f"wrote {folder / 'specgate.yaml'}:" in capsys.readouterr().out


def test_init_into_a_new_folder_named_with_a_slash(tmp_path: Path) -> None:
    assert main(["init", f"{tmp_path / 't'}/"]) == 0
    assert (tmp_path / "t" / "specgate.yaml").is_file()


def test_init_into_a_folder_holding_a_starter_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "specgate.yaml").write_text("x: 1\n", encoding="utf-8")
    assert main(["init", f"{tmp_path}/"]) == 2
    assert "already exists (not overwritten)" in capsys.readouterr().err
    assert (tmp_path / "specgate.yaml").read_text(encoding="utf-8") == "x: 1\n"
