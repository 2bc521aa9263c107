"""Configuration ([tool.specgate], --config) and inline suppressions, layer by layer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from specgate.cli.main import main

# AL 1.5 at D = 3: below the default floor min(2, 1 + 3/2) = 2 → SG102 (fail).
# cache_coherence_eval false → SG105 (warn). ρ given, so no SG204.
CLAIMS = """\
version: 1
deployments:
  - name: chat
    speculation:
      enabled: true
      draft_length: 3
      draft_depth_ratio: 0.15
    evidence:
      accept_length: 1.5
      cache_coherence_eval: false
"""
# docs/theory.md#al-floor-and-guideline moved the default floor from 2 to break-even × 1.1; ρ 0.15
# (v1: 0.05) keeps AL 1.5 below it: (1 + 0.15·3) · 1.1 = 1.595 > 1.5 (S = 1.5 / 1.45 = 1.03 ≥ 1: no
# SG106).


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.specgate.yaml").write_text(CLAIMS, encoding="utf-8")
    return tmp_path


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main([*args, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def _codes(report: dict, *, suppressed: bool = False) -> list[str]:  # type: ignore[type-arg]
    """Codes of the findings in force (with ``suppressed``: only the suppressed ones,
    which the JSON report keeps, marked)."""
    found = []
    for file in report["files"]:
        entries = list(file["findings"])
        for deployment in file["deployments"]:
            entries += deployment["findings"]
        found += [f["code"] for f in entries if f.get("suppressed", False) == suppressed]
    return sorted(found)


def test_defaults_without_configuration(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, report = _run(["check"], capsys)
    assert code == 1
    assert _codes(report) == ["SG102", "SG105"]


def test_pyproject_ignore_and_floor_apply(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "pyproject.toml").write_text(
        '[tool.specgate]\nignore = ["cache-coherence-missing"]\nmin-accept-length = 1.5\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(repo)
    code, report = _run(["check"], capsys)
    # Floor 1.5: AL 1.5 is not below it (strict); SG105 ignored by name.
    assert code == 0
    assert _codes(report) == []
    assert report["files"][0]["deployments"][0]["metrics"]["accept_length_floor"] == 1.5


def test_cli_beats_configuration(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "pyproject.toml").write_text(
        '[tool.specgate]\nmin-accept-length = 1.5\nfail-on = "never"\n', encoding="utf-8"
    )
    monkeypatch.chdir(repo)
    code, report = _run(["check"], capsys)
    assert code == 0  # fail-on never from the file
    assert _codes(report) == ["SG105"]
    code, report = _run(["check", "--min-accept-length", "1.6", "--fail-on", "fail"], capsys)
    assert code == 1  # the flags win: floor 1.6 > AL 1.5, and fail-on fail
    assert _codes(report) == ["SG102", "SG105"]


def test_nearest_pyproject_wins_and_search_stops_at_git_top(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "pyproject.toml").write_text('[tool.specgate]\nignore = ["SG102"]\n', encoding="utf-8")
    (repo / "deploy" / "pyproject.toml").write_text(
        '[tool.specgate]\nignore = ["SG105"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(repo)
    _, report = _run(["check"], capsys)
    assert _codes(report) == ["SG102"]  # deploy/pyproject.toml is nearer
    # A pyproject above the git top-level is not read.
    outer = repo.parent / "pyproject.toml"
    assert not outer.exists()


def test_select_prefix_and_per_file_ignores(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "specgate.toml").write_text(
        'select = ["SG1"]\n[per-file-ignores]\n"deploy/*.specgate.yaml" = ["SG102"]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(repo)
    _, report = _run(["check", "--config", "specgate.toml"], capsys)
    assert _codes(report) == ["SG105"]


def test_unknown_rule_in_configuration_is_reported(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "pyproject.toml").write_text(
        '[tool.specgate.per-file-ignores]\n"*.yaml" = [\n  "SG105",\n  "SG999",\n]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(repo)
    _, report = _run(["check"], capsys)
    findings = report["files"][0]["findings"]
    # "SG999" stands on line 4 of pyproject.toml; the finding is located there.
    # (In select and ignore an unknown rule is an input error: see test_newuser_fixes.)
    assert [(f["code"], f.get("file"), f["line"]) for f in findings] == [
        ("SG004", "pyproject.toml", 4)
    ]


@pytest.mark.parametrize(
    "toml",
    [
        '[tool.specgate]\nfail_on = "fail"\n',  # unknown key (snake case)
        '[tool.specgate]\nfail-on = "sometimes"\n',
        '[tool.specgate]\nmin-accept-length = 0.5\n',
        '[tool.specgate]\nignore = ["SG001"]\n',  # schema rules cannot be ignored
        "[tool.specgate\n",  # TOML syntax error
    ],
)
def test_bad_configuration_is_an_input_error(
    repo: Path, toml: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "pyproject.toml").write_text(toml, encoding="utf-8")
    monkeypatch.chdir(repo)
    assert main(["check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "pyproject.toml" in err[0]


def test_inline_suppressions(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = repo / "deploy" / "chat.specgate.yaml"
    text = CLAIMS.replace(
        "      accept_length: 1.5\n",
        "      # specgate: ignore[SG102] measured before the drafter fix\n"
        "      accept_length: 1.5\n",
    ).replace(
        "cache_coherence_eval: false\n",
        "cache_coherence_eval: false  # specgate: ignore[cache-coherence-missing, SG001, nope]\n",
    )
    claims.write_text(text, encoding="utf-8")
    code, report = _run(["check", str(claims)], capsys)
    findings = report["files"][0]["findings"]
    # Both rules suppressed; the two bad references are reported where they stand (line 11).
    assert sorted((f["code"], f["line"], f["message"]) for f in findings) == [
        ("SG004", 11, "ignore[SG001] cannot be suppressed (fix the file)"),
        ("SG004", 11, "ignore[nope] names no rule"),
    ]
    # The suppressed findings stay in the report, marked, with the directive's reason.
    kept = report["files"][0]["deployments"][0]["findings"]
    assert [(f["code"], f["suppressed"], f["justification"]) for f in kept] == [
        ("SG102", True, "inline: measured before the drafter fix"),
        ("SG105", True, "inline: no reason given"),
    ]
    assert report["summary"]["suppressed"] == 2
    assert code == 0  # SG004 is a warning: actionable, not fail


def test_directive_alone_covers_only_the_next_line(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = repo / "deploy" / "chat.specgate.yaml"
    text = CLAIMS.replace(
        "    evidence:\n", "    # specgate: ignore[SG102]\n    evidence:\n"
    )
    claims.write_text(text, encoding="utf-8")
    _, report = _run(["check", str(claims)], capsys)
    # The finding is two lines further down: nothing suppressed, and the stale
    # directive itself is SG005.
    assert _codes(report) == ["SG005", "SG102", "SG105"]


def test_json_claims_files_use_configuration_only(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = repo / "deploy" / "chat.specgate.json"
    claims.write_text(
        json.dumps(
            {
                "version": 1,
                "deployments": [
                    {
                        "name": "chat # specgate: ignore[SG102]",
                        # ρ 0.15: floor 1.595 > AL 1.5 under docs/theory.md#al-floor-and-guideline
                        # (see CLAIMS)
                        "speculation": {"enabled": True, "draft_length": 3,
                                        "draft_depth_ratio": 0.15},
                        "evidence": {"accept_length": 1.5, "cache_coherence_eval": True},
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    _, report = _run(["check", str(claims)], capsys)
    assert _codes(report) == ["SG102"]
