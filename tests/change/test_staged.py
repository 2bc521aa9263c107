"""``check --staged``: the pre-commit hook's mode, which asks git for the files
instead of reading file names from its command line (docs/change-gate.md#changed-files,
docs/change-gate.md#staged; hostile finding H7: a committed file named like an option must never
become one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.git_repo import Repo, Run, git

from specgate.cli.main import main

from .test_changed import MODEL, PROM, REFERRING, SELF_CONTAINED, SERVE

# AL 1 + 1600/1000 = 2.6 measured at D = 3; with D = 1 it is above 1 + D = 2 (SG103 for
# --changed). --staged compares with HEAD (newuser-r4 #2), where the same evidence was
# measured at D = 3: the AL is stale for the new D (SG403), not an impossible one.
STALE = "SG403"
BREAK = {"deploy/serving/vllm-serve": SERVE.format(d=1)}
EVERY_CLAIMS_FILE = ["broken/x.specgate.yaml", "deploy/chat.specgate.yaml", "other/specgate.yaml"]


@pytest.fixture
def tree(repo: Repo) -> Repo:
    """test_changed's repository: a claims file reading a serving config, a model
    config and two metrics files, a self-contained one and one that does not parse."""
    repo.write(
        {
            "deploy/chat.specgate.yaml": REFERRING.format(),
            "deploy/serving/vllm-serve": SERVE.format(d=3),
            "deploy/bench/before.prom": PROM.format(drafts=0, accepted=0),
            "deploy/bench/after.prom": PROM.format(drafts=1000, accepted=1600),
            "models/llama/config.json": MODEL,
            "other/specgate.yaml": SELF_CONTAINED,
            "broken/x.specgate.yaml": "version: 1\ndeployments: [\n",
            "README.md": "hello\n",
        }
    )
    repo.commit()
    return repo


@pytest.fixture(autouse=True)
def _outside_pre_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
        monkeypatch.delenv(name, raising=False)


def _paths(report: dict[str, Any]) -> list[str]:
    return [f["path"] for f in report["files"]]


def _codes(report: dict[str, Any]) -> set[str]:
    return {f["code"] for f in report["files"][0]["deployments"][0]["findings"]}


def test_staged_serving_config_checks_its_claims(tree: Repo, run_json: Run) -> None:
    tree.write(BREAK)
    git(tree.root, "add", "deploy/serving/vllm-serve")
    code, report, _ = run_json("check", "--staged")
    assert code == 1
    assert _paths(report) == ["deploy/chat.specgate.yaml"]
    assert STALE in _codes(report) and "SG103" not in _codes(report)


def test_unstaged_change_is_not_taken(tree: Repo, run_json: Run) -> None:
    tree.write({"README.md": "staged\n"})
    git(tree.root, "add", "README.md")
    tree.write(BREAK)  # not staged: pre-commit stashes it before the hook runs
    code, report, _ = run_json("check", "--staged")
    assert code == 0
    assert report["files"] == []


def test_a_staged_serving_config_is_read_as_staged(tree: Repo, run_json: Run) -> None:
    # D12.5: D 1 staged, the work tree put back to D 3 after `git add` (no stash: a plain
    # git hook, or a run by hand). The commit holds D 1, so SG403 (the evidence of D 3
    # kept over a change of D) stands, as in test_staged_serving_config_checks_its_claims.
    tree.write(BREAK)
    git(tree.root, "add", "deploy/serving/vllm-serve")
    tree.write({"deploy/serving/vllm-serve": SERVE.format(d=3)})
    code, report, _ = run_json("check", "--staged")
    assert code == 1
    assert _paths(report) == ["deploy/chat.specgate.yaml"]
    assert STALE in _codes(report)
    assert report["files"][0]["deployments"][0]["metrics"]["draft_length"] == 1


STAGED_AL = """version: 1
deployments:
  - name: chat
    speculation: {{enabled: true, draft_length: 3, draft_depth_ratio: 0.05}}
    evidence: {{accept_length: {al}, cache_coherence_eval: true}}
    claims: {{speedup: 1.5}}
"""


def test_every_line_reads_the_index(
    repo: Repo, run_json: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    # D12.5: AL 2.0 committed, 2.5 staged, 3.0 in the work tree. The commit holds 2.5:
    # theoretical speedup AL / (β + ρ·D) = 2.5 / (1 + 0.05·3) = 2.5 / 1.15 = 2.1739x
    # (the work tree's 3.0 would give 3 / 1.15 = 2.6087x).
    repo.write({"c.specgate.yaml": STAGED_AL.format(al="2.0")})
    repo.commit()
    repo.write({"c.specgate.yaml": STAGED_AL.format(al="2.5")})
    git(repo.root, "add", "c.specgate.yaml")
    repo.write({"c.specgate.yaml": STAGED_AL.format(al="3.0")})
    code, report, _ = run_json("check", "--staged")
    metrics = report["files"][0]["deployments"][0]["metrics"]
    assert metrics["accept_length"] == 2.5
    assert metrics["theoretical_speedup"] == 2.1739
    assert main(["check", "--staged"]) == code == 0
    text = capsys.readouterr().out
    assert "AL 2.5, D 3, ρ 0.05, β 1, speedup theoretical 2.1739x, claimed 1.5x" in text
    assert "AL 3" not in text


def test_an_untracked_file_is_not_in_the_commit(repo: Repo, run_json: Run) -> None:
    # The claims file is staged; the metrics file it points at exists only in the work
    # tree (never added): the commit would not hold it, so it is read as missing.
    repo.write({"README.md": "x\n"})
    repo.commit()
    repo.write(
        {
            "c.specgate.yaml": STAGED_AL.format(al="2.0").replace(
                "cache_coherence_eval: true",
                "cache_coherence_eval: true, metrics: {format: vllm-prometheus, path: m.prom}",
            ),
        }
    )
    git(repo.root, "add", "c.specgate.yaml")
    repo.write({"m.prom": PROM.format(drafts=1000, accepted=1600)})
    _, report, _ = run_json("check", "--staged")
    said = json.dumps(report)
    assert "m.prom" in said and "not staged" in said


@pytest.mark.parametrize(
    "names",
    [
        ["--fail-on=never"],
        ["--output=victim.txt", "--format=json"],
        ["--ignore=SG103", "--select=SG001"],
        ["--config=evil.toml", "--min-accept-length=1"],
        ["-", "--stdin-filename=x.yaml", "--help", "--version"],
    ],
)
def test_file_names_never_become_options(
    tree: Repo, capsys: pytest.CaptureFixture[str], names: list[str]
) -> None:
    victim = tree.root / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    tree.write({"evil.toml": 'fail-on = "never"\n', **BREAK})
    tree.write(dict.fromkeys(names, ""))
    git(tree.root, "add", "-A", "--", ".")
    code = main(["check", "--staged", "--verbose"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "deploy/chat.specgate.yaml" in out and f" {STALE} " in out
    for name in names:
        assert f"ignored {name}: no claims file reads it" in err
    assert victim.read_text(encoding="utf-8") == "keep me\n"


def test_users_args_still_apply(
    tree: Repo, run_json: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    # pre-commit puts the user's `args` after the entry: `check --staged --fail-on never`.
    tree.write(BREAK)
    git(tree.root, "add", "deploy/serving/vllm-serve")
    assert main(["check", "--staged", "--fail-on", "never"]) == 0
    assert f" {STALE} " in capsys.readouterr().out
    code, report, _ = run_json("check", "--staged", "--ignore", STALE)
    assert (code, report["status"]) == (0, "ready")


def test_nothing_staged_checks_every_tracked_claims_file(tree: Repo, run_json: Run) -> None:
    tree.write({"untracked.specgate.yaml": "version: 1\ndeployments: [\n"})
    code, report, _ = run_json("check", "--staged")
    assert code == 2  # broken/x.specgate.yaml does not parse
    assert _paths(report) == EVERY_CLAIMS_FILE


def test_refs_from_pre_commit(tree: Repo, run_json: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    base = git(tree.root, "rev-parse", "HEAD").strip()
    tree.write(BREAK)
    head = tree.commit("D 3 -> 1")
    tree.write({"other/specgate.yaml": "version: 1\ndeployments: [\n"})
    git(tree.root, "add", "-A")  # staged, but the refs decide
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    code, report, _ = run_json("check", "--staged")
    assert code == 1
    assert _paths(report) == ["deploy/chat.specgate.yaml"]
    # A branch that forked from base: only its own changes (base...branch) count.
    git(tree.root, "stash", "-q")
    git(tree.root, "checkout", "-q", "-b", "side", base)
    tree.write({"README.md": "side\n"})
    side = tree.commit("side")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", head)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", side)
    code, report, _ = run_json("check", "--staged")
    assert (code, report["files"]) == (0, [])


@pytest.mark.parametrize(
    ("refs", "named"),
    [
        (("--output=victim.txt", "HEAD"), "PRE_COMMIT_FROM_REF"),
        (("HEAD", "-p"), "PRE_COMMIT_TO_REF"),
        (("no-such-branch", "HEAD"), "PRE_COMMIT_FROM_REF"),
        (("HEAD", ""), "PRE_COMMIT_TO_REF"),
        (("", "HEAD"), "PRE_COMMIT_FROM_REF"),
        (("HEAD:README.md", "HEAD"), "PRE_COMMIT_FROM_REF"),
    ],
)
def test_bad_refs_are_usage_errors(
    tree: Repo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    refs: tuple[str, str],
    named: str,
) -> None:
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", refs[0])
    monkeypatch.setenv("PRE_COMMIT_TO_REF", refs[1])
    assert main(["check", "--staged"]) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1
    assert not (tree.root / "victim.txt").exists()


def test_paths_do_not_go_with_staged(tree: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--staged", "other/specgate.yaml"]) == 2
    assert "--staged" in capsys.readouterr().err


def test_outside_a_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert main(["check", "--staged"]) == 2
    assert "not inside a git repository" in capsys.readouterr().err


def test_changed_by_hand_takes_option_like_names_after_double_dash(
    tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    tree.write(BREAK)
    assert main(["check", "--changed", "--", "--fail-on=never", "deploy/serving/vllm-serve"]) == 1
    assert " SG103 " in capsys.readouterr().out
