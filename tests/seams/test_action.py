"""The composite Action as the runner runs it (ecosystem.md README.md#github-action), offline.

Each ``run:`` step of action.yml runs as written, with bash, in a runner-like environment
(see :mod:`action_runner`); setup-python is replaced by the local interpreter and the
SARIF upload is skipped (its inputs are asserted). The install step runs once per
session, offline from the wheelhouse; later runs reuse its venv, as the steps after it do
on a real runner.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import pytest
import yaml

from ._support import FIXTURES, PROJECT, clean_env, make_repo, value_position
from .action_runner import (
    ActionRun,
    ActionRunner,
    Context,
    UnsupportedExpression,
    evaluate,
    parse_file_command,
    substitute,
)
from .conftest import ProjectCopy

pytestmark = pytest.mark.seams

FAILING = FIXTURES / "failing.specgate.yaml"
PASSING = FIXTURES / "passing.specgate.yaml"
ACTIONABLE = FIXTURES / "actionable.specgate.yaml"
BROKEN = FIXTURES / "broken.specgate.yaml"
NOT_CLAIMS = FIXTURES / "not-claims.yaml"
FAILING_TEXT = FAILING.read_text(encoding="utf-8")
REUSED_STEPS = ("python", "env", "cache", "install")


@pytest.fixture(scope="session")
def runner(
    project_copy: ProjectCopy, offline_pip: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> ActionRunner:
    """The Action at ``$GITHUB_ACTION_PATH`` = a copy of the project (so the install
    step's in-tree build never writes into the real checkout)."""
    return ActionRunner(
        project_copy.path,
        tmp_path_factory.mktemp("runner_temp"),
        python=sys.executable,
        base_env=clean_env(offline_pip),
    )


@pytest.fixture(scope="session")
def first_run(runner: ActionRunner, tmp_path_factory: pytest.TempPathFactory) -> ActionRun:
    """The whole Action from scratch, every step, default inputs, on a passing repo."""
    workspace = make_repo(
        tmp_path_factory.mktemp("first") / "repo",
        {"specgate.yaml": PASSING, "config/app.yaml": NOT_CLAIMS},
    )
    return runner.run(workspace, {})


class RunAction(Protocol):
    def __call__(self, workspace: Path, inputs: Mapping[str, str] | None = None) -> ActionRun: ...


@pytest.fixture
def run_action(runner: ActionRunner, first_run: ActionRun) -> RunAction:
    """Runs the Action on a workspace, reusing the first run's setup-python and install
    steps (same RUNNER_TEMP, same venv), as the later steps of a real job would."""
    reuse = {key: first_run.step(key) for key in REUSED_STEPS}

    def run(workspace: Path, inputs: Mapping[str, str] | None = None) -> ActionRun:
        return runner.run(workspace, inputs or {}, reuse=reuse)

    return run


def _steps_ran(run: ActionRun) -> dict[str, bool]:
    return {step.id or step.name: step.ran for step in run.steps}


# --- the whole run -------------------------------------------------------------------------


def test_full_run_installs_into_runner_temp_and_passes(
    first_run: ActionRun, runner: ActionRunner
) -> None:
    assert _steps_ran(first_run) == {
        "python": True,
        "env": True,
        "cache": True,
        "Set up uv for the install": True,  # a cache miss: uv installs
        "install": True,
        "baseline": True,
        "check": True,
        "Upload SARIF to code scanning": False,
        "Apply fail-on": True,
    }
    install = first_run.step("install")
    assert install.returncode == 0, install.stderr
    venv_python = Path(install.outputs["python"])
    assert venv_python.is_relative_to(runner.runner_temp)
    assert venv_python.parent.parent.name == "specgate-venv"
    # The tool in that venv is a real install from $GITHUB_ACTION_PATH, not the editable
    # checkout the tests run from.
    where = subprocess.run(
        [str(venv_python), "-c", "import specgate; print(specgate.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    ).stdout.strip()
    assert Path(where).is_relative_to(runner.runner_temp / "specgate-venv")
    assert not Path(where).is_relative_to(PROJECT)
    # with uv set up (the test extra installs it), uv made the environment
    if shutil.which("uv", path=str(Path(sys.executable).parent)):
        config = (runner.runner_temp / "specgate-venv" / "pyvenv.cfg").read_text("utf-8")
        assert "uv = " in config, config

    assert not first_run.failed
    assert first_run.outputs == {
        "status": "ready",
        "fail-count": "0",
        "warn-count": "0",
        "info-count": "0",
        "note-count": "0",
        "sarif-file": "",
    }
    assert first_run.annotations() == []
    assert "specgate: ready" in first_run.summary
    assert "specgate.yaml" in first_run.summary
    assert "app.yaml" not in first_run.summary + first_run.step("check").stdout
    # specgate writes no GITHUB_ENV / GITHUB_PATH (zizmor's github-env concern).
    assert all(step.env_file == "" for step in first_run.steps)


def test_every_run_step_gets_utf8_python_and_inputs_only_through_env(
    first_run: ActionRun,
) -> None:
    for step in first_run.steps:
        if step.ran and step.uses is None:
            assert step.env.get("PYTHONUTF8") == "1", step.name
    check = first_run.step("check")
    assert check.env["SPECGATE_PATHS"] == "."
    assert check.env["SPECGATE_FAIL_ON"] == ""  # the project's configuration, else fail
    assert check.outputs["exit-code"] == "0"


# --- fail-on -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "fail_on", "status", "job_fails"),
    [
        # Without [tool.specgate], an empty fail-on input (the default) means fail.
        (FAILING, "", "fail", True),
        (FAILING, "fail", "fail", True),
        (FAILING, "actionable", "fail", True),
        (FAILING, "never", "fail", False),
        (ACTIONABLE, "", "actionable", False),
        (ACTIONABLE, "fail", "actionable", False),
        (ACTIONABLE, "actionable", "actionable", True),
        (ACTIONABLE, "never", "actionable", False),
        (PASSING, "", "ready", False),
        (PASSING, "fail", "ready", False),
        (PASSING, "actionable", "ready", False),
        (PASSING, "never", "ready", False),
    ],
)
def test_fail_on_decides_the_job(
    run_action: RunAction,
    tmp_path: Path,
    *,
    fixture: Path,
    fail_on: str,
    status: str,
    job_fails: bool,
) -> None:
    workspace = make_repo(tmp_path / "repo", {"deploy/svc.specgate.yaml": fixture})
    run = run_action(workspace, {"fail-on": fail_on})
    check = run.step("check")
    # The check step always completes (it records the CLI's exit code), so the summary
    # and outputs exist whatever the verdict; the last step fails the job.
    assert check.returncode == 0, check.stderr
    assert check.outputs["exit-code"] == ("1" if job_fails else "0")
    assert run.outputs["status"] == status
    assert check.summary.startswith("## ")
    final = run.step("Apply fail-on")
    assert final.ran
    assert final.returncode == (1 if job_fails else 0)
    assert run.failed is job_fails
    assert f"status {status}" in final.stdout
    level = f"fail-on {fail_on} (the input)" if fail_on else "the project's fail-on"
    assert f"{'reaches' if job_fails else 'does not reach'} {level}" in final.stdout


def test_failing_file_annotations_outputs_and_summary(
    run_action: RunAction, first_run: ActionRun, tmp_path: Path
) -> None:
    workspace = make_repo(
        tmp_path / "repo",
        {
            "svc/chat.specgate.yaml": FAILING,
            "specgate.yaml": PASSING,
            "config/app.yaml": NOT_CLAIMS,
        },
    )
    run = run_action(workspace)
    assert run.step("install") is first_run.step("install")  # reused, not rerun
    assert run.failed
    assert run.outputs["status"] == "fail"
    assert (run.outputs["fail-count"], run.outputs["warn-count"], run.outputs["info-count"]) == (
        "2",
        "0",
        "0",
    )
    errors = run.annotations("error")
    assert len(errors) == 2
    assert run.annotations() == errors
    expected = {
        "specgate (SG102)": value_position(FAILING_TEXT, "accept_length:"),
        "specgate (SG104)": value_position(FAILING_TEXT, "speedup:"),
    }
    for error in errors:
        assert error.properties["file"] == "svc/chat.specgate.yaml"  # repo-relative, no ./
        line, col = expected[error.properties["title"]]
        assert (error.properties["line"], error.properties["col"]) == (str(line), str(col))
    summary = run.summary
    assert summary.startswith("## ")
    assert len(summary.encode("utf-8")) < 1024 * 1024  # GitHub's per-step limit
    assert "specgate: fail" in summary
    for text in (
        "svc/chat.specgate.yaml",
        "specgate.yaml",
        "chat-70b-eagle3",
        "SG102",
        "SG104",
    ):
        assert text in summary
    assert "app.yaml" not in summary
    assert "status fail reaches the project's fail-on" in run.step("Apply fail-on").stdout


@pytest.mark.parametrize("separator", [" ", "\n", "  \n\t"])
def test_working_directory_below_repo_root_keeps_repo_relative_paths(
    run_action: RunAction, tmp_path: Path, separator: str
) -> None:
    workspace = make_repo(
        tmp_path / "repo",
        {
            "top.specgate.yaml": FAILING,  # outside working-directory: never checked
            "services/chat/chat.specgate.yaml": FAILING,
            "services/chat/ok.specgate.yaml": PASSING,
            "services/batch/batch.specgate.yaml": FAILING,  # not among the paths
        },
    )
    paths = separator.join(["chat/chat.specgate.yaml", "chat/ok.specgate.yaml"])
    run = run_action(
        workspace, {"working-directory": "services", "paths": paths, "fail-on": "never"}
    )
    check = run.step("check")
    assert check.cwd == workspace / "services"
    assert check.returncode == 0, check.stderr
    assert not run.failed
    assert run.outputs["fail-count"] == "2"
    files = {a.properties.get("file") for a in run.annotations()}
    assert files == {"services/chat/chat.specgate.yaml"}
    assert "top.specgate.yaml" not in run.summary
    assert "batch.specgate.yaml" not in run.summary
    assert "ok.specgate.yaml" in run.summary


# --- fail-on from the project's configuration ---------------------------------------------


def _pyproject(fail_on: str) -> str:
    return f'[project]\nname = "claims"\n\n[tool.specgate]\nfail-on = "{fail_on}"\n'


def _local_exit_code(venv_python: str, cwd: Path) -> int:
    """``specgate check`` as a developer runs it in ``cwd`` (no CI variables)."""
    return subprocess.run(
        [venv_python, "-m", "specgate", "check"],
        cwd=cwd,
        capture_output=True,
        check=False,
        env=clean_env(),
    ).returncode


@pytest.mark.parametrize(
    ("fail_on", "job_fails", "verdict"),
    [
        ("", True, "status actionable reaches the project's fail-on"),
        ("never", False, "status actionable does not reach fail-on never (the input)"),
        ("fail", False, "status actionable does not reach fail-on fail (the input)"),
        ("actionable", True, "status actionable reaches fail-on actionable (the input)"),
    ],
)
def test_project_fail_on_applies_unless_the_input_overrides_it(
    run_action: RunAction,
    first_run: ActionRun,
    tmp_path: Path,
    *,
    fail_on: str,
    job_fails: bool,
    verdict: str,
) -> None:
    workspace = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": _pyproject("actionable"), "deploy/svc.specgate.yaml": ACTIONABLE},
    )
    run = run_action(workspace, {"fail-on": fail_on})
    check = run.step("check")
    assert check.returncode == 0, check.stderr
    assert check.outputs["exit-code"] == ("1" if job_fails else "0")
    # Summary, outputs and annotations are written whatever the verdict.
    assert run.outputs["status"] == "actionable"
    assert run.outputs["warn-count"] == "1"
    assert "specgate: actionable" in check.summary
    assert [a.command for a in run.annotations()] == ["warning"]
    final = run.step("Apply fail-on")
    assert final.returncode == (1 if job_fails else 0)
    assert run.failed is job_fails
    assert verdict in final.stdout
    if not fail_on:
        # CI and a local `specgate check` agree when the input is left empty.
        assert _local_exit_code(first_run.step("install").outputs["python"], workspace) == 1


@pytest.mark.parametrize(("fail_on", "job_fails"), [("", False), ("fail", True)])
def test_project_fail_on_never_is_overridden_by_the_input(
    run_action: RunAction, tmp_path: Path, fail_on: str, *, job_fails: bool
) -> None:
    workspace = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": _pyproject("never"), "specgate.yaml": FAILING},
    )
    run = run_action(workspace, {"fail-on": fail_on})
    assert run.outputs["status"] == "fail"
    assert run.outputs["fail-count"] == "2"
    assert len(run.annotations("error")) == 2
    assert run.step("Apply fail-on").returncode == (1 if job_fails else 0)
    assert run.failed is job_fails


def test_project_fail_on_is_found_above_the_working_directory(
    run_action: RunAction, tmp_path: Path
) -> None:
    workspace = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": _pyproject("actionable"),
            "services/chat/svc.specgate.yaml": ACTIONABLE,
        },
    )
    run = run_action(workspace, {"working-directory": "services", "paths": "chat"})
    assert run.step("check").cwd == workspace / "services"
    assert run.outputs["status"] == "actionable"
    assert "reaches the project's fail-on" in run.step("Apply fail-on").stdout
    assert run.failed


@pytest.mark.parametrize("fail_on", ["", "never"])
def test_invalid_project_fail_on_is_an_input_error_whatever_the_input(
    run_action: RunAction, tmp_path: Path, fail_on: str
) -> None:
    workspace = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": _pyproject("sometimes"), "specgate.yaml": PASSING},
    )
    run = run_action(workspace, {"fail-on": fail_on})
    check = run.step("check")
    assert check.returncode == 0
    assert check.outputs["exit-code"] == "2"
    assert "fail-on must be" in check.stderr
    assert run.outputs["status"] == "error"
    assert [e.properties["title"] for e in run.annotations("error")] == ["specgate (input error)"]
    assert "specgate: error" in run.summary
    final = run.step("Apply fail-on")
    assert final.returncode == 1
    assert "whatever fail-on says" in final.stdout


def test_project_fail_on_fails_the_job_after_the_sarif_upload(
    run_action: RunAction, runner: ActionRunner, first_run: ActionRun, tmp_path: Path
) -> None:
    has_reporter = subprocess.run(
        [first_run.step("install").outputs["python"], "-c", "import specgate.reporters.sarif"],
        capture_output=True,
        check=False,
        env=clean_env(),
    )
    if has_reporter.returncode != 0:
        pytest.skip("specgate.reporters.sarif is not in the tree")
    workspace = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": _pyproject("actionable"), "specgate.yaml": ACTIONABLE},
    )
    run = run_action(workspace, {"sarif": "true"})
    assert run.step("check").returncode == 0
    assert run.step("check").outputs["exit-code"] == "1"
    sarif_file = runner.runner_temp / "specgate.sarif"
    assert run.outputs["sarif-file"] == str(sarif_file)
    assert run.step("Upload SARIF to code scanning").ran  # uploaded before the job fails
    assert run.step("Apply fail-on").returncode == 1
    assert run.failed


# --- input errors --------------------------------------------------------------------------


@pytest.mark.parametrize("fail_on", ["fail", "actionable", "never"])
def test_unparseable_claims_file_fails_the_job_whatever_fail_on(
    run_action: RunAction, tmp_path: Path, fail_on: str
) -> None:
    workspace = make_repo(
        tmp_path / "repo",
        {"broken.specgate.yaml": BROKEN, "specgate.yaml": PASSING},
    )
    run = run_action(workspace, {"fail-on": fail_on})
    assert run.step("check").returncode == 0
    assert run.outputs["status"] == "error"
    errors = run.annotations("error")
    assert [e.properties.get("file") for e in errors] == ["broken.specgate.yaml"]
    assert "YAML" in errors[0].message
    final = run.step("Apply fail-on")
    assert final.returncode == 1
    assert "whatever fail-on says" in final.stdout
    assert run.failed


@pytest.mark.parametrize(
    "inputs",
    [
        {"paths": "no/such/file.specgate.yaml"},
        {"paths": "empty-folder"},
        {"min-accept-length": "0.5"},
        {"min-accept-length": "many"},
    ],
)
def test_usage_errors_record_status_error_and_fail(
    run_action: RunAction, tmp_path: Path, inputs: dict[str, str]
) -> None:
    workspace = make_repo(
        tmp_path / "repo", {"specgate.yaml": PASSING, "empty-folder/readme.md": "x\n"}
    )
    run = run_action(workspace, {**inputs, "fail-on": "never"})
    check = run.step("check")
    assert check.returncode == 0
    assert "specgate" in check.stderr  # the CLI's one-line reason, in the log
    assert run.outputs["status"] == "error"
    assert [e.properties["title"] for e in run.annotations("error")] == ["specgate (input error)"]
    assert "specgate: error" in run.summary
    assert run.step("Apply fail-on").returncode == 1


def test_min_accept_length_input_reaches_the_cli(run_action: RunAction, tmp_path: Path) -> None:
    workspace = make_repo(tmp_path / "repo", {"specgate.yaml": PASSING})
    run = run_action(workspace, {"min-accept-length": "3"})
    assert run.outputs["status"] == "fail"
    assert [e.properties["title"] for e in run.annotations("error")] == ["specgate (SG102)"]
    assert run.failed


@pytest.mark.parametrize(("name", "value"), [("fail-on", "warn"), ("sarif", "yes")])
def test_invalid_choice_inputs_stop_the_check_step(
    run_action: RunAction, tmp_path: Path, name: str, value: str
) -> None:
    workspace = make_repo(tmp_path / "repo", {"specgate.yaml": PASSING})
    run = run_action(workspace, {name: value})
    check = run.step("check")
    assert check.returncode == 2
    assert [e.properties["title"] for e in run.annotations("error")] == ["specgate (usage error)"]
    assert value not in check.stdout  # the raw input is never echoed into a command
    assert not run.step("Apply fail-on").ran
    assert run.failed


def test_inputs_are_data_not_shell(run_action: RunAction, tmp_path: Path) -> None:
    workspace = make_repo(tmp_path / "repo", {"specgate.yaml": PASSING})
    hostile = "$(touch pwned1) `touch pwned2` ;touch${IFS}pwned3 *.yaml"
    run = run_action(workspace, {"paths": hostile, "min-accept-length": "$(touch pwned4)"})
    assert not list(workspace.glob("pwned*"))
    assert not list(Path.cwd().glob("pwned*"))
    # Every word is a literal path (the glob too), none exists: a usage error.
    assert run.outputs["status"] == "error"
    assert run.failed


# --- SARIF ---------------------------------------------------------------------------------


def test_sarif_false_skips_the_upload(first_run: ActionRun) -> None:
    upload = first_run.step("Upload SARIF to code scanning")
    assert not upload.ran
    assert first_run.outputs["sarif-file"] == ""


def test_sarif_true_writes_and_uploads_the_report(
    run_action: RunAction, runner: ActionRunner, first_run: ActionRun, tmp_path: Path
) -> None:
    workspace = make_repo(
        tmp_path / "repo", {"svc/chat.specgate.yaml": FAILING, "specgate.yaml": PASSING}
    )
    run = run_action(workspace, {"sarif": "true", "fail-on": "never"})
    upload = run.step("Upload SARIF to code scanning")
    has_reporter = subprocess.run(
        [first_run.step("install").outputs["python"], "-c", "import specgate.reporters.sarif"],
        capture_output=True,
        check=False,
        env=clean_env(),
    )
    if has_reporter.returncode != 0:
        # Without a SARIF reporter in the tree, the Action must fail loudly, not skip.
        assert run.step("check").returncode == 1
        assert "SARIF report could not be written" in run.step("check").stdout
        assert not upload.ran
        pytest.skip("specgate.reporters.sarif is not in the tree yet; checked the loud failure")
    sarif_file = runner.runner_temp / "specgate.sarif"
    assert run.outputs["sarif-file"] == str(sarif_file)
    report = json.loads(sarif_file.read_text(encoding="utf-8"))
    assert report["version"] == "2.1.0"
    assert upload.ran
    assert upload.uses is not None
    assert upload.uses.startswith("github/codeql-action/upload-sarif@")
    assert upload.with_ == {"sarif_file": str(sarif_file), "category": "specgate"}
    assert not run.failed
    # Annotations and the summary are still written alongside the SARIF report.
    assert len(run.annotations("error")) == 2
    assert "specgate: fail" in run.summary


def _help_uris(runner: ActionRunner) -> dict[str, str | None]:
    report = json.loads((runner.runner_temp / "specgate.sarif").read_text(encoding="utf-8"))
    return {r["id"]: r.get("helpUri") for r in report["runs"][0]["tool"]["driver"]["rules"]}


def test_sarif_rules_link_the_actions_own_docs(
    run_action: RunAction, runner: ActionRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # New-user defect 10: no helpUri in code scanning. In a composite action's `run` the
    # runner leaves $GITHUB_ACTION_REPOSITORY/$GITHUB_ACTION_REF empty (actions/runner#2473;
    # this runner never sets them), so action.yml passes github.action_repository and
    # github.action_ref through the step's env, as GitHub's contexts reference says.
    monkeypatch.setattr(runner, "action_ref", ("acme/specgate", "v1"))
    monkeypatch.setitem(runner.base_env, "GITHUB_SERVER_URL", "https://github.com")
    workspace = make_repo(tmp_path / "repo", {"specgate.yaml": FAILING})
    run = run_action(workspace, {"sarif": "true", "fail-on": "never"})
    check = run.step("check")
    assert (check.env["SPECGATE_ACTION_REPOSITORY"], check.env["SPECGATE_ACTION_REF"]) == (
        "acme/specgate",
        "v1",
    )
    assert _help_uris(runner)["SG104"] == (
        "https://github.com/acme/specgate/blob/v1/docs/rules.md#sg104-claimed-speedup-over-theory"
    )
    run = run_action(
        workspace,
        {"sarif": "true", "fail-on": "never", "docs-url": "https://docs.example/rules.html"},
    )
    assert _help_uris(runner)["SG104"] == (
        "https://docs.example/rules.html#sg104-claimed-speedup-over-theory"
    )


def test_without_the_actions_address_there_is_no_help_uri(
    run_action: RunAction, runner: ActionRunner, tmp_path: Path
) -> None:
    workspace = make_repo(tmp_path / "repo", {"specgate.yaml": FAILING})
    run_action(workspace, {"sarif": "true", "fail-on": "never"})
    assert set(_help_uris(runner).values()) == {None}


# --- action.yml as data --------------------------------------------------------------------


ACTION_TEXT = (PROJECT / "action.yml").read_text(encoding="utf-8")
ACTION = yaml.safe_load(ACTION_TEXT)


def test_metadata_inputs_outputs_and_branding() -> None:
    assert ACTION["name"].strip()
    assert ACTION["description"].strip()
    assert ACTION["branding"] == {"icon": "check-circle", "color": "green"}
    defaults = {name: spec.get("default") for name, spec in ACTION["inputs"].items()}
    assert defaults == {
        "paths": ".",
        "fail-on": "",
        "min-accept-length": "",
        "python-version": "3.12",
        "working-directory": ".",
        "baseline": "auto",
        "only-new": "auto",
        "docs-url": "",
        "sarif": "false",
    }
    assert all(spec.get("description") for spec in ACTION["inputs"].values())
    assert {"status", "fail-count", "warn-count", "info-count", "sarif-file"} <= set(
        ACTION["outputs"]
    )
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.check.outputs.{name} }}}}"


def test_output_descriptions_say_what_the_code_writes() -> None:
    """Review #17: each output's description against what specgate and the action write."""
    from specgate.check.report import RunReport
    from specgate.reporters.github import render_outputs

    written = [line.split("=")[0] for line in render_outputs(RunReport("ready", ())).split()]
    assert set(ACTION["outputs"]) == {*written, "sarif-file"}  # sarif-file: the action's own
    described = {
        name: " ".join(spec["description"].split()) for name, spec in ACTION["outputs"].items()
    }
    # Every status a run can end in (check/run.py; `error` also for usage errors).
    for status in ("fail", "actionable", "ready", "error"):
        assert f"`{status}`" in described["status"]
    # A note is its own severity, not an info; infos and warnings make a deployment
    # actionable, notes never change the status.
    assert "info" not in described["note-count"]
    assert "never change the status" in described["note-count"]
    assert "actionable" in described["info-count"] and "actionable" in described["warn-count"]
    assert "suppressed findings are not counted" in described["fail-count"]


def test_run_steps_are_bash_utf8_and_template_free() -> None:
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert step["shell"] == "bash"
            assert step["env"]["PYTHONUTF8"] == "1"
            assert "${{" not in step["run"], step["name"]
            assert "GITHUB_ENV" not in step["run"]


def test_uses_are_pinned_by_full_sha_with_a_version_comment() -> None:
    pins = re.findall(r"uses: (\S+)@(\S+) # (v\d+\.\d+\.\d+)", ACTION_TEXT)
    assert {action: tag.split(".")[0] for action, _, tag in pins} == {
        "actions/cache": "v4",
        "actions/setup-python": "v5",
        "astral-sh/setup-uv": "v9",
        "github/codeql-action/upload-sarif": "v3",
    }
    assert all(re.fullmatch(r"[0-9a-f]{40}", sha) for _, sha, _ in pins)
    steps = {s.get("uses", "").split("@")[0]: s for s in ACTION["runs"]["steps"]}
    assert steps["actions/setup-python"]["with"]["update-environment"] is False
    assert steps["github/codeql-action/upload-sarif"]["with"]["category"] == "specgate"


# --- the harness itself --------------------------------------------------------------------


CONTEXT = Context({"sarif": "true", "fail-on": "fail"}, {"check": {"sarif-file": "x"}}, "/t")


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("inputs.sarif == 'true'", True),
        ("inputs.sarif == 'TRUE'", True),  # GitHub compares strings ignoring case
        ("inputs.sarif == 'true' && steps.check.outputs.sarif-file != ''", True),
        ("!(inputs.fail-on == 'never')", True),
        ("steps.check.outputs.missing || 'fallback'", "fallback"),
        ("runner.temp", "/t"),
        ("'it''s'", "it's"),
    ],
)
def test_expression_evaluator(expression: str, value: object) -> None:
    assert evaluate(expression, CONTEXT) == value


@pytest.mark.parametrize(
    "expression",
    ["github.token", "always()", "inputs.nope", "steps.later.outputs.x", "1 == 1", "env.X"],
)
def test_expression_evaluator_rejects_what_it_does_not_know(expression: str) -> None:
    with pytest.raises(UnsupportedExpression):
        evaluate(expression, CONTEXT)


def test_substitute_and_file_command_parser() -> None:
    assert substitute("a ${{ inputs.fail-on }} b ${{runner.temp}}", CONTEXT) == "a fail b /t"
    assert substitute(False, CONTEXT) == "false"
    text = "status=fail\n\nmsg<<EOF\nline 1\nx=y\nEOF\nodd=a<<b\nk<<D=\nv\nD=\nk<<D=\n"
    with pytest.raises(ValueError, match="Matching delimiter"):
        parse_file_command(text)
    assert parse_file_command(text[: -len("k<<D=\n")]) == {
        "status": "fail",
        "msg": "line 1\nx=y",
        "odd": "a<<b",
        "k": "v",
    }
    with pytest.raises(ValueError, match="empty name"):
        parse_file_command("=x\n")


# --- baseline (docs/change-gate.md#baseline)
# --------------------------------------------------------

_BASELINE_CLAIMS = """\
version: 1
deployments:
  - name: chat-8b
    speculation:
      enabled: true
      mechanism: eagle3
      draft_length: 3
      draft_depth_ratio: 0.05
    evidence:
      accept_length: {al}
      cache_coherence_eval: true
"""


def _two_commits(root: Path) -> tuple[Path, str]:
    """A repository whose base commit has AL 2.9 and whose HEAD has AL 2.6."""
    repo = make_repo(root, {"specgate.yaml": _BASELINE_CLAIMS.format(al=2.9)})
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "specgate.yaml").write_text(_BASELINE_CLAIMS.format(al=2.6), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x"],
        cwd=repo,
        check=True,
    )
    return repo, base


@pytest.mark.parametrize(
    "case",
    [
        ("pull_request", "auto", True),
        ("push", "auto", False),
        ("pull_request", "none", False),
        ("push", "HEAD~1", True),
    ],
)
def test_baseline_input(
    runner: ActionRunner, first_run: ActionRun, tmp_path: Path, case: tuple[str, str, bool]
) -> None:
    event, baseline, compared = case
    repo, base = _two_commits(tmp_path / "repo")
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps({"pull_request": {"base": {"sha": base}}}), encoding="utf-8")
    with_event = ActionRunner(
        runner.action_path,
        runner.runner_temp,
        python=runner.python,
        base_env={**runner.base_env, "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(payload)},
    )
    reuse = {key: first_run.step(key) for key in REUSED_STEPS}
    run = with_event.run(repo, {"baseline": baseline}, reuse=reuse)
    resolved = run.step("baseline").outputs["ref"]
    assert resolved == ({"auto": base, "HEAD~1": "HEAD~1"}.get(baseline, "") if compared else "")
    titles = [a.properties.get("title", "") for a in run.annotations()]
    # AL 2.9 → 2.6 is a 10.3 % drop: SG401 fails the job only when compared; on a pull
    # request only-new (auto) marks it, new (a regression rule always is).
    sg401 = "specgate (SG401, new)" if event == "pull_request" else "specgate (SG401)"
    assert (sg401 in titles) is compared
    assert run.failed is compared


def test_baseline_auto_fetches_the_base_commit_of_a_shallow_checkout(
    runner: ActionRunner, first_run: ActionRun, tmp_path: Path
) -> None:
    origin, base = _two_commits(tmp_path / "origin")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", f"file://{origin}", str(clone)],
        check=True,
        capture_output=True,
    )
    missing = subprocess.run(
        ["git", "cat-file", "-e", f"{base}^{{commit}}"], cwd=clone, check=False
    )
    assert missing.returncode != 0  # actions/checkout's default depth 1 lacks the base
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps({"pull_request": {"base": {"sha": base}}}), encoding="utf-8")
    with_event = ActionRunner(
        runner.action_path,
        runner.runner_temp,
        python=runner.python,
        base_env={
            **runner.base_env,
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(payload),
        },
    )
    reuse = {key: first_run.step(key) for key in REUSED_STEPS}
    run = with_event.run(clone, {}, reuse=reuse)
    # no shared history in a depth-1 clone: the base commit itself is the REF
    assert run.step("baseline").outputs["ref"] == base
    titles = [a.properties.get("title", "") for a in run.annotations()]
    assert "specgate (SG401, new)" in titles


@pytest.mark.parametrize(
    "case",
    [
        # (event, only-new input, the job fails)
        ("pull_request", "auto", False),
        ("merge_group", "auto", False),
        ("pull_request", "false", True),
        ("push", "auto", True),
        ("push", "true", False),
    ],
)
def test_only_new_input(
    runner: ActionRunner, first_run: ActionRun, tmp_path: Path, case: tuple[str, str, bool]
) -> None:
    """Main already has a fail (AL 1.2 below the floor 1.1·(1 + 0.05·3) = 1.265, SG102);
    the change adds a comment. Counted only when only-new is off."""
    event, only_new, fails = case
    low = _BASELINE_CLAIMS.format(al=1.2)
    repo = make_repo(tmp_path / "repo", {"specgate.yaml": low})
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "specgate.yaml").write_text("# reviewed\n" + low, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x"],
        cwd=repo,
        check=True,
    )
    payload = tmp_path / "event.json"
    payload.write_text(
        json.dumps({"pull_request": {"base": {"sha": base}}, "merge_group": {"base_sha": base}}),
        encoding="utf-8",
    )
    with_event = ActionRunner(
        runner.action_path,
        runner.runner_temp,
        python=runner.python,
        base_env={**runner.base_env, "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(payload)},
    )
    reuse = {key: first_run.step(key) for key in REUSED_STEPS}
    inputs = {"only-new": only_new}
    if event == "push":
        inputs["baseline"] = "HEAD~1"
    run = with_event.run(repo, inputs, reuse=reuse)
    assert run.failed is fails
    titles = [(a.command, a.properties.get("title", "")) for a in run.annotations()]
    if fails:
        assert ("error", "specgate (SG102)") in titles
        assert run.outputs["fail-count"] == "1"
    else:
        # still reported, as a notice, and folded in the summary
        assert ("notice", "specgate (SG102, unchanged)") in titles
        assert run.outputs["status"] == "ready"
        assert run.outputs["fail-count"] == "0"
        assert "1 finding(s) unchanged since the base revision" in run.summary


def test_only_new_true_without_a_baseline_stops_the_run(
    run_action: RunAction, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"specgate.yaml": PASSING})
    run = run_action(repo, {"only-new": "true", "baseline": "none"})
    assert run.failed
    assert run.outputs["status"] == "error"
    assert "--only-new needs --baseline REF" in run.step("check").stdout


# --- nothing from the checked repository runs (hostile case 02) ------------------------------

SHADOW = (
    'import sys; print("::notice::code from the checked-out repo ran", file=sys.stderr); '
    "raise SystemExit(0)\n"
)


@pytest.mark.parametrize(
    "shadow",
    ["yaml.py", "json.py", "specgate/__init__.py", "specgate.py", "venv.py", "pathspec.py"],
)
def test_modules_in_the_workspace_are_never_imported(
    run_action: RunAction, tmp_path: Path, shadow: str
) -> None:
    workspace = make_repo(tmp_path / "repo", {"svc/chat.specgate.yaml": FAILING, shadow: SHADOW})
    for working_directory in (".", "svc"):
        run = run_action(workspace, {"working-directory": working_directory, "paths": "."})
        check = run.step("check")
        assert "code from the checked-out repo ran" not in check.stdout + check.stderr
        assert run.outputs["status"] == "fail"  # the real check ran and failed the file
        assert run.failed


def test_every_interpreter_in_the_action_runs_isolated() -> None:
    # `python -m X` puts the current folder first on sys.path: -I must come with it.
    for step in ACTION["runs"]["steps"]:
        for line in step.get("run", "").splitlines():
            if line.lstrip().startswith("#"):
                continue
            if re.search(r'(python|PYTHON)[^ ]*"? ', line) and (" -m " in line or ".py" in line):
                assert " -I " in line, line
