"""Exit codes 0/1/2 (docs/reports.md#exit-codes, README.md#command-line), in-process through
``main(argv)`` and through the installed console script and ``python -m specgate``; every error is
one line on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specgate.cli.main import main

CLEAN = """\
version: 1
deployments:
  - name: chat-8b
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}
    evidence: {accept_length: 2.4, cache_coherence_eval: true}
    claims: {speedup: 2}
"""
# 2.4 / (1 + 0.05·3) = 2.4 / 1.15 = 2.087 ≥ 2: clean

FAILING = """\
version: 1
deployments:
  - name: chat-70b
    speculation: {enabled: true, draft_length: 7, draft_depth_ratio: 0.05}
    evidence: {accept_length: 3.2, cache_coherence_eval: true}
    claims: {speedup: 3}
"""
# 3.2 / 1.35 = 2.370 < 3: SG104 fail

ACTIONABLE = """\
version: 1
deployments:
  - name: chat-8b
    speculation: {enabled: true, draft_length: 3, draft_depth_ratio: 0.05}
    evidence: {accept_length: 2.4}
"""
# no cache_coherence_eval: SG105 warn only

DOCTOR_ACCEPTANCE = [
    "doctor",
    "--speculative-decoding",
    "--accept-length=1.4",
    "--draft-length=7",
    "--draft-depth-ratio=0.05",
    "--claimed-speedup=3",
    "--json",
]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "clean.specgate.yaml").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "failing.specgate.yaml").write_text(FAILING, encoding="utf-8")
    (tmp_path / "actionable.specgate.yaml").write_text(ACTIONABLE, encoding="utf-8")
    (tmp_path / "broken.specgate.yaml").write_text("version: 1\ndeployments: [\n", "utf-8")
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "empty-folder" / "README.md").write_text("no claims here\n", "utf-8")
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> None:
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert err.startswith("specgate")


# --- check ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "clean.specgate.yaml"], 0),
        (["check", "failing.specgate.yaml"], 1),
        (["check", "failing.specgate.yaml", "--fail-on", "never"], 0),
        (["check", "failing.specgate.yaml", "--fail-on", "actionable"], 1),
        (["check", "actionable.specgate.yaml"], 0),
        (["check", "actionable.specgate.yaml", "--strict"], 1),
        (["check", "actionable.specgate.yaml", "--fail-on", "actionable"], 1),
        (["check", "clean.specgate.yaml", "--strict"], 0),
        # floor 2.5 > AL 2.4 → SG102
        (["check", "clean.specgate.yaml", "--min-accept-length", "2.5"], 1),
        (["check", "clean.specgate.yaml", "--min-accept-length", "1"], 0),
    ],
)
def test_check_exit_codes(
    work: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: int
) -> None:
    code, out, err = run(argv, capsys)
    assert code == expected
    assert err == ""
    assert out.splitlines()[-1].startswith("specgate: ")


def test_quiet_prints_finding_lines_and_no_quiet_undoes_it(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The pre-commit hook's entry ends in --quiet; a user's `args: [--no-quiet]` follow it.
    code, out, _ = run(["check", "failing.specgate.yaml", "--quiet"], capsys)
    assert code == 1
    assert out.splitlines() == [
        line for line in out.splitlines() if line.startswith("failing.specgate.yaml:")
    ]
    assert " fail SG104 " in out
    code, out, _ = run(["check", "failing.specgate.yaml", "--quiet", "--no-quiet"], capsys)
    assert code == 1
    assert out.splitlines()[-1].startswith("specgate: fail — 1 file, 1 deployment")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "does-not-exist.yaml"],
        ["check", "empty-folder"],
        ["check", "clean.specgate.yaml", "--min-accept-length", "0.5"],
        ["check", "clean.specgate.yaml", "--min-accept-length", "abc"],
        ["check", "clean.specgate.yaml", "--format", "xml"],
        ["check", "clean.specgate.yaml", "--fail-on", "sometimes"],
    ],
)
def test_check_usage_errors_exit_2_with_one_line(
    work: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    one_error_line(err)


def test_missing_path_names_the_path(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(["check", "does-not-exist.yaml"], capsys)
    assert "does-not-exist.yaml" in err


@pytest.mark.parametrize("fail_on", ["fail", "never", "actionable"])
def test_unparseable_file_exits_2_whatever_fail_on(
    work: Path, capsys: pytest.CaptureFixture[str], fail_on: str
) -> None:
    code, out, _ = run(["check", "broken.specgate.yaml", "--fail-on", fail_on], capsys)
    assert code == 2
    assert "broken.specgate.yaml:" in out


def test_unparseable_file_does_not_stop_the_others(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        ["check", "broken.specgate.yaml", "failing.specgate.yaml", "--format", "json"], capsys
    )
    assert code == 2
    report = json.loads(out)
    assert [f["path"] for f in report["files"]] == ["broken.specgate.yaml", "failing.specgate.yaml"]
    assert report["files"][0]["status"] == "error"
    assert report["files"][0]["deployments"] == []
    assert report["files"][0]["error"].startswith("broken.specgate.yaml:")
    assert report["files"][1]["status"] == "fail"


def test_schema_violation_exits_1_not_2(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "typo.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: x\n"
        "    speculation: {enabled: true, draft_lenght: 3}\n",
        "utf-8",
    )
    code, out, _ = run(["check", "typo.specgate.yaml"], capsys)
    assert code == 1
    assert "SG001" in out


def test_folder_search_finds_default_names_and_skips_venvs(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = work / "tree"
    (tree / "deploy").mkdir(parents=True)
    (tree / "deploy" / "chat.specgate.yaml").write_text(CLEAN, "utf-8")
    (tree / "specgate.json").write_text(
        json.dumps({"version": 1, "deployments": [{"name": "j"}]}), "utf-8"
    )
    (tree / "node_modules").mkdir()
    (tree / "node_modules" / "specgate.yaml").write_text(FAILING, "utf-8")
    (tree / ".venv").mkdir()
    (tree / ".venv" / "specgate.yaml").write_text(FAILING, "utf-8")
    (tree / "other.yaml").write_text(FAILING, "utf-8")
    code, out, _ = run(["check", "tree", "--format", "json"], capsys)
    assert code == 0
    paths = [f["path"] for f in json.loads(out)["files"]]
    assert paths == ["tree/deploy/chat.specgate.yaml", "tree/specgate.json"]


def test_a_file_named_explicitly_is_checked_whatever_its_name(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "claims.txt").write_text(FAILING, "utf-8")
    code, out, _ = run(["check", "claims.txt"], capsys)
    assert code == 1
    assert "SG104" in out


def test_no_path_means_the_current_folder(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", "--format", "json", "--fail-on", "never"], capsys)
    # broken.specgate.yaml is among them → 2
    assert code == 2
    assert len(json.loads(out)["files"]) == 4


# --- doctor --------------------------------------------------------------------------------


def test_doctor_acceptance_check(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(DOCTOR_ACCEPTANCE, capsys)
    assert code == 1
    assert err == ""
    report = json.loads(out)
    assert report["status"] == "fail"
    assert "SG104" in [f["code"] for f in report["findings"]]
    # 1.4 / (1 + 0.05·7) = 1.4 / 1.35 = 1.0370
    assert report["metrics"]["theoretical_speedup"] == 1.037
    # also: AL 1.4 < floor 2 (SG102) and no cache-coherence evidence (SG105)
    assert sorted(f["code"] for f in report["findings"]) == ["SG102", "SG104", "SG105"]


def test_doctor_clean_and_strict(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["doctor", "--speculative-decoding", "--accept-length=2.4", "--draft-length=3"]
    clean = [*base, "--draft-depth-ratio=0.05", "--cache-coherence-eval"]
    assert run(clean, capsys)[0] == 0
    # no --cache-coherence-eval: SG105 warn → 0, and 1 with --strict
    warned = [*base, "--draft-depth-ratio=0.05"]
    assert run(warned, capsys)[0] == 0
    assert run([*warned, "--strict"], capsys)[0] == 1


def test_doctor_judges_numbers_without_speculative_decoding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # AL 5 > 1 + 3 = 4: SG103 fires even without --speculative-decoding
    code, out, _ = run(
        ["doctor", "--accept-length=5", "--draft-length=3", "--draft-depth-ratio=0.05", "--json"],
        capsys,
    )
    assert code == 1
    assert [f["code"] for f in json.loads(out)["findings"]] == ["SG103"]


@pytest.mark.parametrize(
    "argv",
    [
        ["doctor", "--accept-length=abc"],
        ["doctor", "--draft-length=2.5"],
        ["doctor", "--claimed-speedup=0"],
        ["doctor", "--min-accept-length=0.5"],
        ["doctor", "--query-heads=64"],
        ["doctor", "--kv-heads=8"],
        ["doctor", "--next-accept-length=3"],
        ["doctor", "--next-draft-length=5"],
        ["doctor", "--query-heads=64", "--kv-heads=8", "--query-heads-per-kv=4"],
        ["doctor", "--no-such-flag"],
        ["frobnicate"],
    ],
)
def test_doctor_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    one_error_line(err)


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([], capsys)[0] == 2


# --- the installed entry points ------------------------------------------------------------


def launchers() -> list[list[str]]:
    script = shutil.which("specgate", path=str(Path(sys.executable).parent))
    assert script is not None, "the console script is not installed beside the interpreter"
    return [[script], [sys.executable, "-m", "specgate"]]


@pytest.mark.parametrize("launcher", launchers(), ids=["console-script", "python-m"])
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "clean.specgate.yaml"], 0),
        (["check", "failing.specgate.yaml"], 1),
        (["check", "failing.specgate.yaml", "--fail-on", "never"], 0),
        (["check", "actionable.specgate.yaml", "--strict"], 1),
        (["check", "does-not-exist.yaml"], 2),
        (["check", "empty-folder"], 2),
        (["check", "broken.specgate.yaml", "--fail-on", "never"], 2),
        (["check", "clean.specgate.yaml", "--min-accept-length", "0.5"], 2),
        (["doctor", "--accept-length=abc"], 2),
        (["doctor", "--query-heads=64"], 2),
        (["doctor", "--next-draft-length=5"], 2),
        (DOCTOR_ACCEPTANCE, 1),
    ],
)
def test_installed_entry_points(
    work: Path, launcher: list[str], argv: list[str], expected: int
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    done = subprocess.run(
        [*launcher, *argv], cwd=work, capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == expected, done.stderr
    assert "Traceback" not in done.stderr
    if expected == 2 and "broken.specgate.yaml" not in argv:
        # a usage error: one line on stderr, nothing on stdout
        assert done.stderr.count("\n") == 1
        assert done.stdout == ""
    if argv is DOCTOR_ACCEPTANCE:
        report = json.loads(done.stdout)
        assert report["status"] == "fail"
        assert report["metrics"]["theoretical_speedup"] == 1.037


# --- files the user names for writing ------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["--output", "missing/report.txt"], {}),
        (["--summary", "missing/summary.md"], {}),
        (["--format", "github"], {"GITHUB_OUTPUT": "missing/outputs.txt"}),
    ],
    ids=["output", "summary", "github-output"],
)
def test_unwritable_output_path_is_a_usage_error(
    work: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    env: dict[str, str],
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = main(["check", "clean.specgate.yaml", *argv])
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert code == 2
    one_error_line(err)
    assert "missing" in err
