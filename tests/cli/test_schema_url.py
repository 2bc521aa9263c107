"""The versioned ``$schema`` URL scheme for editors (README.md#install-releases-and-tags, issue 17):
the schema file at the release tag in this project's repository. While no repository is published
(``core/project.py`` REPOSITORY is None) nothing promises a URL; once it is, ``specgate
schema`` gives the schema that ``$id`` and ``specgate init`` writes the modeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate import __version__
from specgate.cli.main import main
from specgate.core import project

URL = (
    f"https://raw.githubusercontent.com/acme/specgate/v{__version__}/"
    "src/specgate/data/claims-v1.schema.json"
)


def test_the_scheme() -> None:
    assert project.schema_url("1.2.3", "acme/specgate") == (
        "https://raw.githubusercontent.com/acme/specgate/v1.2.3/"
        "src/specgate/data/claims-v1.schema.json"
    )
    # the path is the schema's path in a checkout: the URL names a file that exists at
    # the tag
    root = Path(__file__).resolve().parents[2]
    assert (root / project.SCHEMA_PATH).is_file()


def test_unpublished_nothing_is_promised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert project.REPOSITORY is None  # nothing is published yet (README, "Install")
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["$id"] == "urn:specgate:claims:v1"
    assert main(["schema", "--url"]) == 2
    assert "no published repository" in capsys.readouterr().err
    target = tmp_path / "specgate.yaml"
    assert main(["init", str(target)]) == 0
    text = target.read_text("utf-8")
    assert not text.startswith("# yaml-language-server:")
    assert "#   # yaml-language-server: $schema=./specgate.schema.json" in text


def test_published_schema_and_init_use_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(project, "REPOSITORY", "acme/specgate")
    assert main(["schema", "--url"]) == 0
    assert capsys.readouterr().out == URL + "\n"
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["$id"] == URL
    target = tmp_path / "specgate.yaml"
    assert main(["init", str(target)]) == 0
    capsys.readouterr()
    lines = target.read_text("utf-8").splitlines()
    assert lines[0] == f"# yaml-language-server: $schema={URL}"
    assert not any("specgate.schema.json" in line for line in lines)
    # the starter still passes with its modeline
    assert main(["check", str(target), "--strict"]) == 0
