"""``check --baseline``: renaming a deployment does not escape the comparison, and a
deployment gone from the head is said (review hostile-r4 defect 4); SG402's "new
evidence" is a real change, not one within the base's noise (defect 6).

The head lowers AL 2.9 → 2.6: −10.34 % (0.3 / 2.9), past SG401's 5 % default.
"""

from __future__ import annotations

import pytest
from tests.change.test_baseline_hostile import _codes
from tests.support.git_repo import Repo, Run

from specgate.core.names import name_key, name_problem


def inline(*, name: str = "d1", al: str = "2.9", claim: str = "2.0", model: str = "m/A",
           mechanism: str = "eagle3", workload: str = "chat") -> str:  # fmt: skip
    return (
        "version: 1\ndeployments:\n"
        f"  - name: {name}\n"
        f"    model: {{name: {model}, query_heads: 32, kv_heads: 8, parameters_b: 8}}\n"
        f"    speculation: {{enabled: true, mechanism: {mechanism}, draft_length: 4, "
        "draft_depth_ratio: 0.05}\n"
        f"    workload: {{name: {workload}}}\n"
        f"    evidence: {{accept_length: {al}, cache_coherence_eval: true}}\n"
        f"    claims: {{speedup: {claim}}}\n"
    )


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("d1", "d1"),
        ("D1", "d1"),
        ("d\u200b1", "d1"),  # zero-width space, Cf
        ("\u202ed1\u202c", "d1"),  # bidi override and pop, Cf
        ("\u2066d1\u2069", "d1"),  # bidi isolate, Cf
        ("  chat   8b ", "chat 8b"),
        ("\uff24\uff11", "d1"),  # full-width D and 1: NFKC compatibility forms
        ("STRASSE", "strasse"),
        ("Stra\u00dfe", "strasse"),  # full case folding: ß → ss
    ],
)
def test_name_key_by_hand(written: str, key: str) -> None:
    assert name_key(written) == key


def test_name_problem_by_hand() -> None:
    assert name_problem("d1") is None and name_problem("chat 8b") is None
    assert "U+200B" in (name_problem("d\u200b1") or "")
    assert "U+2067" in (name_problem("\u2067d1") or "")
    assert name_problem(" d1") == name_problem("d1\t") == "starts or ends with whitespace"


@pytest.mark.parametrize("name", ['"d\\u200b1"', '"d1 "', '"\\u202ed1"'])
def test_an_invisible_or_padded_name_is_sg001_at_its_line(
    repo: Repo, run_json: Run, name: str
) -> None:
    repo.write({"c.specgate.yaml": inline(name=name)})
    code, report, _ = run_json("check", "c.specgate.yaml")
    found = [f for d in report["files"][0]["deployments"] for f in d["findings"]]
    assert code == 1
    assert [(f["code"], f["line"]) for f in found if f["code"] == "SG001"] == [("SG001", 3)]


@pytest.mark.parametrize("renamed", ["D1", "'\\uff24\\uff11'", "d1-v2", "chat-eagle"])
def test_a_renamed_deployment_is_compared(repo: Repo, run_json: Run, renamed: str) -> None:
    repo.write({"c.specgate.yaml": inline()})
    repo.commit()
    repo.write({"c.specgate.yaml": inline(name=renamed, al="2.6")})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    block = report["files"][0]["deployments"][0]["baseline"]
    assert code == 1 and "SG401" in _codes(report)
    assert block["new"] is False and block["accept_length"] == pytest.approx(2.9)
    assert block["renamed_from"] == "d1"


def test_a_vanished_deployment_is_said_in_every_format(
    repo: Repo, run_json: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    # d1 is gone and the new deployment has another model and mechanism: it is new,
    # and d1's disappearance is SG412 (a warning: exit 0, never silent).
    from specgate.cli.main import main

    repo.write({"c.specgate.yaml": inline()})
    repo.commit()
    repo.write({"c.specgate.yaml": inline(name="x9", model="m/B", mechanism="ngram")})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert report["files"][0]["deployments"][0]["baseline"]["new"] is True
    file_codes = [f["code"] for f in report["files"][0]["findings"]]
    assert code == 0 and file_codes == ["SG412"]
    for fmt in ("text", "github", "sarif"):
        summary = repo.root / "summary.md"
        main(["check", "--baseline", "HEAD", "--format", fmt, "--summary", str(summary),
              "c.specgate.yaml"])  # fmt: skip
        out, _ = capsys.readouterr()
        assert "SG412" in out and "'d1'" in out, fmt
        assert "SG412" in summary.read_text("utf-8")


def test_a_vanished_deployment_in_a_fresh_process(repo: Repo) -> None:
    """verify-r4: in a process where no deployment had a baseline view yet, SG412's
    rule was not registered and the run died with KeyError 'SG412' (exit 3). The
    command, in its own process: exit 0 (SG412 warns) in every format."""
    import subprocess
    import sys
    from pathlib import Path

    repo.write({"c.specgate.yaml": inline()})
    repo.commit()
    repo.write({"c.specgate.yaml": inline(name="x9", model="m/B", mechanism="ngram")})
    program = Path(sys.executable).with_name("specgate")
    for fmt in ("text", "json", "github"):
        done = subprocess.run(
            [str(program), "check", "--baseline", "HEAD", "--format", fmt, "c.specgate.yaml"],
            cwd=repo.root, capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, (fmt, done.stderr)
        assert "SG412" in done.stdout and "internal error" not in done.stderr, fmt


def test_a_deployment_moved_to_another_file_has_not_vanished(repo: Repo, run_json: Run) -> None:
    repo.write({"c.specgate.yaml": inline()})
    repo.commit()
    repo.write({"c.specgate.yaml": inline(name="x9", model="m/B", mechanism="ngram"),
                "other/c.specgate.yaml": inline()})  # fmt: skip
    _, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert report["files"][0]["findings"] == []


def test_another_workload_is_not_a_rename(repo: Repo, run_json: Run) -> None:
    # Same model and mechanism, but the new deployment states another workload: it is
    # new (not compared with d1's AL), and d1 vanished.
    repo.write({"c.specgate.yaml": inline()})
    repo.commit()
    repo.write({"c.specgate.yaml": inline(name="code", al="2.6", workload="code")})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert "SG401" not in _codes(report)
    assert [f["code"] for f in report["files"][0]["findings"]] == ["SG412"] and code == 0


@pytest.mark.parametrize(
    ("base_al", "head_al", "fires"),
    [
        ("2.9", "2.9", True),
        ("2.9", "2.9000001", True),  # the review's 1e-7
        ("2.9", "2.91", True),  # 0.01 <= half a unit of "2.9" = 0.05
        ("2.9", "2.94", True),  # 0.04 <= 0.05
        ("2.9", "2.96", False),  # 0.06 > 0.05: a real change
        ("2.90", "2.91", False),  # "2.90" is written to 0.005: 0.01 > 0.005
        ("2.90", "2.904", True),  # 0.004 <= 0.005
    ],
)
def test_sg402_new_evidence_is_beyond_the_base_precision(
    repo: Repo, run_json: Run, base_al: str, head_al: str, fires: bool
) -> None:
    # The claim goes 2.0 -> 2.4 (the theory allows it: AL 2.9 / (1 + 0.05 * 4) = 2.4167).
    repo.write({"c.specgate.yaml": inline(al=base_al)})
    repo.commit()
    repo.write({"c.specgate.yaml": inline(al=head_al, claim="2.4")})
    _, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert ("SG402" in _codes(report)) is fires
