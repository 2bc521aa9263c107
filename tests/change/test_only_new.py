"""``check --baseline REF --only-new`` on real git histories (issue 26; README, "The
change gate").

Every repository here holds two claims files, each with one deployment at D 3, ρ 0.05
(stated), AL 2.4, so the theoretical speedup is 2.4 / (1 + 0.05·3) = 2.087x:

- ``trt.specgate.yaml``: ``trt-70b`` claims 2.0x against a measured 1.8x, SG107 on
  main already (2.0 > 1.8 + 5·10⁻⁵; 2.0 < 2.087 so SG104 is silent);
- ``vllm.specgate.yaml``: ``vllm-8b`` claims 1.9x against a measured 1.9x: clean.

SG107's excess is claim / measured speedup: 2.0 / 1.8 = 1.1111 on main.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.support.git_repo import Repo, Run

from specgate.cli.main import main

SARIF_SCHEMA = Path(__file__).parent.parent / "data" / "sarif" / "sarif-schema-2.1.0.json"


def deployment(name: str, *, measured: float, claim: float, extra: str = "") -> str:
    return (
        "version: 1\n"
        f"{extra}"
        "deployments:\n"
        f"  - name: {name}\n"
        "    speculation:\n"
        "      enabled: true\n"
        "      mechanism: eagle3\n"
        "      draft_length: 3\n"
        "      draft_depth_ratio: 0.05\n"
        "    evidence:\n"
        "      cache_coherence_eval: true\n"
        "      accept_length: 2.4\n"
        f"      measured_speedup: {measured}\n"
        "    claims:\n"
        f"      speedup: {claim}\n"
    )


MAIN = {
    "trt.specgate.yaml": deployment("trt-70b", measured=1.8, claim=2.0),
    "vllm.specgate.yaml": deployment("vllm-8b", measured=1.9, claim=1.9),
}


def findings(report: dict[str, Any]) -> list[tuple[str, str, str, str | None]]:
    """(file, deployment, code, baseline_state) of every finding."""
    out = []
    for file in report["files"]:
        for f in file["findings"]:
            out.append((file["path"], "", f["code"], f.get("baseline_state")))
        for d in file["deployments"]:
            for f in d["findings"]:
                out.append((file["path"], d["name"], f["code"], f.get("baseline_state")))
    return sorted(out)


@pytest.fixture
def on_main(repo: Repo) -> Repo:
    repo.write(MAIN)
    repo.commit("main")
    return repo


def test_a_finding_already_on_main_is_unchanged_and_passes(on_main: Repo, run_json: Run) -> None:
    # The change touches only vllm-8b (its AL 2.4 → 2.5, theory 2.5/1.15 = 2.174x, still clean).
    on_main.write({"vllm.specgate.yaml": MAIN["vllm.specgate.yaml"].replace("2.4", "2.5")})
    on_main.commit("vllm only")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    assert findings(report) == [("trt.specgate.yaml", "trt-70b", "SG107", "unchanged")]
    assert code == 0
    assert report["status"] == "ready"
    assert report["summary"]["fail"] == 0
    assert report["summary"]["unchanged"] == 1
    # Without --only-new the same change fails on what main already has.
    code, report, _ = run_json("check", "--baseline", "HEAD~1")
    assert code == 1
    assert findings(report) == [("trt.specgate.yaml", "trt-70b", "SG107", None)]


def test_a_new_finding_fails_beside_an_unchanged_one(on_main: Repo, run_json: Run) -> None:
    # vllm-8b now measures 1.7x and still claims 1.9x: SG107 (1.9 > 1.7), new.
    on_main.write({"vllm.specgate.yaml": deployment("vllm-8b", measured=1.7, claim=1.9)})
    on_main.commit("vllm worse")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    got = findings(report)
    assert ("trt.specgate.yaml", "trt-70b", "SG107", "unchanged") in got
    assert ("vllm.specgate.yaml", "vllm-8b", "SG107", "new") in got
    # the measured speedup fell 1.9 → 1.7 (10.5 %, more than the 2 % allowed): SG404,
    # a regression rule, compares with REF itself: new
    assert ("vllm.specgate.yaml", "vllm-8b", "SG404", "new") in got
    assert code == 1
    assert report["status"] == "fail"
    statuses = {d["name"]: d["status"] for f in report["files"] for d in f["deployments"]}
    assert statuses == {"trt-70b": "ready", "vllm-8b": "fail"}


def test_a_renamed_deployment_keeps_its_identity(on_main: Repo, run_json: Run) -> None:
    # trt-70b → trt-70b-v2, same configuration: --baseline pairs them (same config
    # digest), so the SG107 it had on main is the same finding.
    on_main.write({"trt.specgate.yaml": deployment("trt-70b-v2", measured=1.8, claim=2.0)})
    on_main.commit("rename")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    assert findings(report) == [("trt.specgate.yaml", "trt-70b-v2", "SG107", "unchanged")]
    trt = report["files"][0]["deployments"][0]
    assert trt["baseline"]["renamed_from"] == "trt-70b"
    assert code == 0


def test_lines_and_messages_are_not_the_identity(on_main: Repo, run_json: Run) -> None:
    # A comment block above moves SG107 down 3 lines, and a measured 1.8 written 1.80
    # changes nothing the rule reads: still the same finding.
    moved = deployment("trt-70b", measured=1.8, claim=2.0, extra="# a\n# b\n# c\n")
    on_main.write({"trt.specgate.yaml": moved})
    on_main.commit("comments")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    assert findings(report) == [("trt.specgate.yaml", "trt-70b", "SG107", "unchanged")]
    assert report["files"][0]["deployments"][0]["findings"][0]["line"] == 14 + 3
    assert code == 0


def test_a_finding_made_worse_is_updated(on_main: Repo, run_json: Run) -> None:
    # The measured speedup falls 1.8 → 1.6 under the same 2.0x claim: SG107's excess
    # grows from 2.0/1.8 = 1.1111 to 2.0/1.6 = 1.25, so the finding is updated.
    on_main.write({"trt.specgate.yaml": deployment("trt-70b", measured=1.6, claim=2.0)})
    on_main.commit("worse")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    states = {c: s for _, d, c, s in findings(report) if d == "trt-70b"}
    assert states["SG107"] == "updated"
    assert code == 1


def test_a_finding_made_better_stays_unchanged(on_main: Repo, run_json: Run) -> None:
    # The claim comes down 2.0 → 1.9 against the measured 1.8: excess 1.0556 < 1.1111.
    on_main.write({"trt.specgate.yaml": deployment("trt-70b", measured=1.8, claim=1.9)})
    on_main.commit("better")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    assert findings(report) == [("trt.specgate.yaml", "trt-70b", "SG107", "unchanged")]
    assert code == 0


def test_a_new_claims_file_is_all_new(on_main: Repo, run_json: Run) -> None:
    on_main.write({"sglang.specgate.yaml": deployment("sglang-8b", measured=1.5, claim=1.9)})
    on_main.commit("new file")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    got = findings(report)
    assert ("sglang.specgate.yaml", "sglang-8b", "SG107", "new") in got
    assert code == 1


def test_only_new_without_a_baseline_is_a_usage_error(
    on_main: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--only-new"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--only-new needs --baseline REF" in err
    assert err.count("\n") == 1


def test_the_configuration_at_the_base_revision_decides(on_main: Repo, run_json: Run) -> None:
    # only-new set by the change itself does not apply to that change ...
    on_main.write({"pyproject.toml": "[tool.specgate]\nonly-new = true\n"})
    on_main.commit("config")
    code, report, _ = run_json("check", "--baseline", "HEAD~1")
    assert code == 1
    assert findings(report) == [("trt.specgate.yaml", "trt-70b", "SG107", None)]
    # ... and applies to the next one, whose base has it; --no-only-new overrides it.
    on_main.write({"vllm.specgate.yaml": MAIN["vllm.specgate.yaml"].replace("2.4", "2.5")})
    on_main.commit("next")
    code, report, _ = run_json("check", "--baseline", "HEAD~1")
    assert code == 0
    assert findings(report) == [("trt.specgate.yaml", "trt-70b", "SG107", "unchanged")]
    code, _, _ = run_json("check", "--baseline", "HEAD~1", "--no-only-new")
    assert code == 1


def test_config_only_new_must_be_a_boolean(on_main: Repo, run_json: Run) -> None:
    on_main.write({"pyproject.toml": '[tool.specgate]\nonly-new = "yes"\n'})
    code, _, err = run_json("check")
    assert code == 2
    assert "only-new must be true or false" in err


def _sarif(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["check", *args, "--format", "sarif"])
    return code, json.loads(capsys.readouterr().out)


def test_sarif_baseline_state_and_identity_fingerprint(
    on_main: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    _, before = _sarif(capsys=capsys)
    moved = deployment("trt-70b", measured=1.8, claim=2.0, extra="# a\n")
    on_main.write(
        {
            "trt.specgate.yaml": moved,
            "vllm.specgate.yaml": deployment("vllm-8b", measured=1.7, claim=1.9),
        }
    )
    on_main.commit("head")
    code, log = _sarif("--baseline", "HEAD~1", "--only-new", capsys=capsys)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    results = log["runs"][0]["results"]
    by_uri = {
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"]): r
        for r in results
    }
    trt = by_uri[("trt.specgate.yaml", "SG107")]
    vllm = by_uri[("vllm.specgate.yaml", "SG107")]
    assert trt["baselineState"] == "unchanged"
    assert vllm["baselineState"] == "new"
    assert {r["baselineState"] for r in results} <= {"new", "unchanged", "updated"}
    # the identity's hash did not move with the line (14 → 15)
    (old,) = [r for r in before["runs"][0]["results"] if r["ruleId"] == "SG107"]
    assert old["locations"][0]["physicalLocation"]["region"]["startLine"] == 14
    assert trt["locations"][0]["physicalLocation"]["region"]["startLine"] == 15
    key = "specgateIdentity/v1"
    assert trt["partialFingerprints"][key] == old["partialFingerprints"][key]
    assert vllm["partialFingerprints"][key] != trt["partialFingerprints"][key]
    assert "baselineState" not in old  # no --only-new: no state
    assert code == 1


def test_text_and_summary_put_new_findings_first(
    on_main: Repo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    on_main.write({"vllm.specgate.yaml": deployment("vllm-8b", measured=1.7, claim=1.9)})
    on_main.commit("head")
    summary = tmp_path / "summary.md"
    code = main(["check", "--baseline", "HEAD~1", "--only-new", "--summary", str(summary)])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    (trt_line,) = [line for line in lines if line.startswith("trt.specgate.yaml:14:16: fail SG107")]
    assert trt_line.endswith(" [unchanged]")
    (vllm_line,) = [
        line for line in lines if line.startswith("vllm.specgate.yaml:14:16: fail SG107")
    ]
    assert vllm_line.endswith(" [new]")
    assert "(1 unchanged at the base revision, not counted)" in lines[-1]
    text = summary.read_text(encoding="utf-8")
    table, _, folded = text.partition("<details>\n<summary>1 finding(s) unchanged")
    assert "| ❌ fail, new | SG107 claim-over-measurement |" in table
    assert "trt-70b" not in table.split("### Deployments")[0]
    assert "| ❌ fail, unchanged | SG107 claim-over-measurement |" in folded.split("</details>")[0]



def test_a_deployment_ready_only_by_an_unchanged_fail_is_not_shown_passing(
    on_main: Repo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the newcomer's report: trt-70b carries SG107 (2.0x claimed > 1.8x measured) from
    # main, unchanged; it counts toward no status (exit 0) yet must not read as passing
    on_main.write({"vllm.specgate.yaml": MAIN["vllm.specgate.yaml"].replace("2.4", "2.5")})
    on_main.commit("vllm only")
    summary = tmp_path / "summary.md"
    code = main(["check", "--baseline", "HEAD~1", "--only-new", "--summary", str(summary)])
    out = capsys.readouterr().out
    assert code == 0
    assert "  deployment trt-70b: ready (1 unchanged fail at base)" in out.splitlines()
    assert "  deployment vllm-8b: ready" in out.splitlines()
    text = summary.read_text(encoding="utf-8")
    held, _, passing = text.partition("<summary>1 passing deployment(s)</summary>")
    assert "### Ready, with fails unchanged since the base revision" in held
    assert "#### 🟠 trt-70b (trt.specgate.yaml): ready (1 unchanged fail at base)" in held
    assert "trt-70b" not in passing and "#### ✅ vllm-8b" in passing


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_change_that_judges_nothing_differently_adds_nothing(repo: Repo, run_json: Run) -> None:
    """The project's examples (vLLM, SGLang and TensorRT-LLM serving configs, model
    configs, metrics; engine issues among their findings) at REF, and a head that only
    adds a comment to every claims file: every finding is unchanged, and the run that
    fails without --only-new passes with it."""
    import shutil

    shutil.copytree(EXAMPLES, repo.root / "examples")
    repo.commit("examples")
    for claims in sorted((repo.root / "examples").glob("*/*.specgate.yaml")):
        text = claims.read_text(encoding="utf-8")
        claims.write_text(text.replace("version: 1\n", "version: 1\n# reviewed\n", 1), "utf-8")
    repo.commit("comments")
    code, plain, _ = run_json("check", "--baseline", "HEAD~1")
    assert code == 1
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    assert code == 0
    assert report["status"] == "ready"
    got = findings(report)
    assert [state for *_, state in got] == ["unchanged"] * len(got)
    assert [f[:3] for f in got] == [f[:3] for f in findings(plain)]
    codes = {code for _, _, code, _ in got}
    assert {"SG304", "SG104", "SG309"} <= codes  # an engine issue, a claim, a metrics file
    assert report["summary"]["unchanged"] == len(got)


def test_next_actions_answer_only_what_counts(on_main: Repo, run_json: Run) -> None:
    # trt-70b keeps its SG107 (unchanged) and drops cache_coherence_eval: SG105 (warn),
    # new. The deployment is actionable (the unchanged fail counts for nothing) and its
    # next actions answer SG105 alone.
    without = deployment("trt-70b", measured=1.8, claim=2.0).replace(
        "      cache_coherence_eval: true\n", ""
    )
    on_main.write({"trt.specgate.yaml": without})
    on_main.commit("no rollback evidence")
    code, report, _ = run_json("check", "--baseline", "HEAD~1", "--only-new")
    trt = report["files"][0]["deployments"][0]
    states = {f["code"]: f["baseline_state"] for f in trt["findings"]}
    assert states == {"SG105": "new", "SG107": "unchanged"}
    assert trt["status"] == "actionable"
    assert code == 0  # fail-on fail: actionable does not fail
    (action,) = trt["next_actions"]
    assert action.startswith("Compare greedy outputs with and without speculation")
    code, report, _ = run_json("check", "--baseline", "HEAD~1")
    trt = report["files"][0]["deployments"][0]
    assert len(trt["next_actions"]) == 2  # without --only-new: SG107's and SG105's
