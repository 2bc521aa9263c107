"""Golden outputs of one realistic failing claims file in the text, json and github
formats. The expected files under tests/data/core/golden/ were written by hand from
docs/rules.md, docs/reports.md and the rule message templates, then read against the output;
theory v2 moved the AL floor (docs/theory.md#al-floor-and-guideline), ρ
(docs/theory.md#which-rho), tiles (docs/theory.md#attention-tiles) and added SG110/SG206 and
the metrics of docs/reports.md#json-report, each value re-worked by hand (1.4 / 1.35 · 1.1 = 1.485;
3.1 / 3 = 1.0333). Issue 26 raised the parallel-draft-head ρ hint to 0.14 (docs/validation.md):
at D 40, S = 3.1 / (1 + 0.14·40) = 3.1 / 6.6 = 0.4697, at D 48 3.1 / 7.72 = 0.4016 (Δ −0.0681),
break-even AL 6.6 and the default floor 6.6 · 1.1 = 7.26. Issue 26 gave every finding details
(the sources of AL, β, ρ and passes; G·N_verify = 4·41 = 164 rows, ceil(164 / 128) = 2 tiles).

The file is checked from a temporary git repository as ``deploy/claims.specgate.yaml``,
so every format shows the same path (relative to the current folder and to the git
top-level).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from specgate.cli.main import main

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "core" / "golden"
FORMATS = {"text": "expected.txt", "json": "expected.json", "github": "expected.github.txt"}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "deploy").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    shutil.copy(GOLDEN / "claims.specgate.yaml", root / "deploy" / "claims.specgate.yaml")
    monkeypatch.chdir(root)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return root


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_golden_output(repo: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "deploy/claims.specgate.yaml", "--format", fmt])
    out, err = capsys.readouterr()
    expected = (GOLDEN / FORMATS[fmt]).read_text(encoding="utf-8")
    assert err == ""
    assert code == 1
    if fmt == "json":
        assert json.loads(out) == json.loads(expected)
    assert out == expected


def test_golden_json_findings_are_ordered_by_line(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "deploy/claims.specgate.yaml", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    for deployment in report["files"][0]["deployments"]:
        places = [(f["line"], f["column"]) for f in deployment["findings"]]
        assert places == sorted(places)
