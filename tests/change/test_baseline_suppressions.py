"""A change cannot silence its own baseline gate with an inline suppression
(newuser finding F19; docs/change-gate.md#base-policy "a pull request cannot loosen its own gate",
docs/trust.md#suppressions "suppressions are visible"): an ``ignore[SG401]`` that the claims file
did not have at the base revision leaves SG401 standing and says why; one the base already
had suppresses as before. Suppressed baseline findings are named in the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.git_repo import Repo, Run

from specgate.cli.main import main

from .test_baseline import claims, codes


def in_force(report: Any) -> list[str]:
    found = report["files"][0]["deployments"][0]["findings"]
    return sorted(f["code"] for f in found if not f.get("suppressed"))


def silenced(report: Any) -> list[str]:
    found = report["files"][0]["deployments"][0]["findings"]
    return sorted(f["code"] for f in found if f.get("suppressed"))


IGNORE = "  # specgate: ignore[SG401] -- fine"


def _with_ignore(text: str) -> str:
    return text.replace("accept_length: 2.0", "accept_length: 2.0" + IGNORE).replace(
        "accept_length: 2.5", "accept_length: 2.5" + IGNORE
    )


def test_a_suppression_added_by_the_change_does_not_silence_sg401(
    repo: Repo, run_json: Run
) -> None:
    # 2.5 → 2.0 is a 20 % drop (> 5 %): SG401
    repo.write({"specgate.yaml": claims(al=2.5)})
    repo.commit()
    repo.write({"specgate.yaml": _with_ignore(claims(al=2.0))})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    assert code == 1
    assert "SG401" in in_force(report)
    assert "SG005" not in codes(report)  # the directive is not "unused"
    finding = next(
        f for f in report["files"][0]["deployments"][0]["findings"] if f["code"] == "SG401"
    )
    # Contract change: the message says the refusal; its why (naming a file, it made
    # messages run past 200 characters) opens the details
    assert "(not suppressed: a change cannot silence its own baseline gate)" in finding["message"]
    assert "not in the claims file at the base revision" in finding["details"]
    # without --baseline there is no SG401 and the directive is simply unused
    code, report, _ = run_json("check")
    assert "SG401" not in codes(report)


def test_a_suppression_the_base_had_still_silences(repo: Repo, run_json: Run) -> None:
    repo.write({"specgate.yaml": _with_ignore(claims(al=2.5))})
    repo.commit()
    repo.write({"specgate.yaml": _with_ignore(claims(al=2.0))})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    assert code == 0
    assert "SG401" not in in_force(report)
    assert silenced(report) == ["SG401"]


def test_suppressed_baseline_findings_are_named_at_the_top_of_the_summary(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--ignore`` belongs to the workflow, not the claims: it still silences, but
    the summary says so up front."""
    repo.write({"specgate.yaml": claims(al=2.5)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.0)})
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["check", "--baseline", "HEAD", "--ignore", "SG401", "--format", "github"]) == 0
    capsys.readouterr()
    text = summary.read_text(encoding="utf-8")
    warning = text.index("Baseline gate suppressed")
    block = text[warning : text.index("passing deployment")]
    assert "- SG401 accept-length-regression at specgate.yaml" in block
    assert "ignored on the command line" in block


@pytest.mark.parametrize(
    "config",
    ['[tool.specgate]\nignore = ["SG401"]\n', '[tool.specgate]\nselect = ["SG1", "SG2"]\n'],
    ids=["ignore", "select"],
)
def test_a_configuration_the_change_added_does_not_silence_sg401(
    repo: Repo, run_json: Run, config: str
) -> None:
    repo.write({"specgate.yaml": claims(al=2.5)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.0), "pyproject.toml": config})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    assert code == 1 and "SG401" in in_force(report)
    finding = next(
        f for f in report["files"][0]["deployments"][0]["findings"] if f["code"] == "SG401"
    )
    # Contract change: the why moved from the message to the details (as above)
    assert "at the base revision" in finding["details"]
    assert "cannot silence its own baseline gate" in finding["message"]


def test_a_configuration_the_base_had_still_silences(repo: Repo, run_json: Run) -> None:
    repo.write(
        {"specgate.yaml": claims(al=2.5), "pyproject.toml": '[tool.specgate]\nignore = ["SG401"]\n'}
    )
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.0)})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    assert code == 0 and silenced(report) == ["SG401"]


def test_text_output_names_a_suppressed_baseline_finding(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write({"specgate.yaml": claims(al=2.5)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.0)})
    assert main(["check", "--baseline", "HEAD", "--ignore", "SG401"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "SG401" in ln)
    assert line.startswith("specgate.yaml:") and "[suppressed: ignored on the command line" in line
