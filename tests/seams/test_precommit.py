"""The pre-commit hook as a user runs it (ecosystem.md docs/rules.md, README.md#github-action),
fully offline.

pre-commit installs the hook's environment with ``pip install .`` from a git clone of
the hook repository; here that repository is a committed copy of the working tree, and
pip may only read the session's wheelhouse (``PIP_NO_INDEX=1``). ``try-repo`` uses a
fresh store every time (one test), ``run`` with a local ``repo:``/``rev:`` config shares
one ``PRE_COMMIT_HOME`` across tests, so that environment installs once.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from ._support import BIN, FIXTURES, PROJECT, clean_env, git, make_repo, value_position
from .conftest import ProjectCopy

pytestmark = pytest.mark.seams

PRE_COMMIT = BIN / "pre-commit"
FAILING = FIXTURES / "failing.specgate.yaml"
SERVED_CLAIMS = """\
version: 1
deployments:
  - name: chat-8b-eagle3
    model:
      name: meta-llama/Llama-3.1-8B-Instruct
    speculation:
      enabled: true
      engine: vllm
      engine_config: serving/vllm-serve
      draft_depth_ratio: 0.05
    evidence:
      accept_length: 3.1
      cache_coherence_eval: true
"""
PASSING = FIXTURES / "passing.specgate.yaml"
ACTIONABLE = FIXTURES / "actionable.specgate.yaml"  # one warning: exit 0, exit 1 with --strict
# File names that argparse would read as options if they reached the command line.
HOSTILE_NAMES = ("--fail-on=never", "--output=victim.txt", "--format=json", "--ignore=SG102")
VICTIM = "a file the user keeps\n"
NOT_CLAIMS = FIXTURES / "not-claims.yaml"
HOOK = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))[0]

if not PRE_COMMIT.exists():  # pragma: no cover - the test extra installs it
    pytest.skip(f"pre-commit is not installed next to {BIN}", allow_module_level=True)


@pytest.fixture(scope="session")
def precommit_env(
    offline_pip: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """Offline pip, a private PRE_COMMIT_HOME and TMPDIR (nothing written elsewhere)."""
    home = tmp_path_factory.mktemp("pre-commit-home")
    temp = tmp_path_factory.mktemp("pre-commit-tmp")
    return clean_env(
        {
            **offline_pip,
            "PRE_COMMIT_HOME": str(home),
            "TMPDIR": str(temp),
            "PRE_COMMIT_COLOR": "never",
        }
    )


def _pre_commit(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRE_COMMIT), *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )


def _user_repo(root: Path, *, failing: bool, config: str | None = None) -> Path:
    files: dict[str, str | Path] = {
        "specgate.yaml": PASSING,
        "deploy/.specgate.yml": PASSING,
        "config/not-claims.yaml": NOT_CLAIMS,
        "config/settings.json": '{"claims": false}\n',
    }
    if failing:
        files["svc/chat.specgate.yaml"] = FAILING
    if config is not None:
        files[".pre-commit-config.yaml"] = config
    return make_repo(root, files)


def _config(project: ProjectCopy, args: list[str] | None = None) -> str:
    hook: dict[str, object] = {"id": "specgate"}
    if args is not None:
        hook["args"] = args
    return yaml.safe_dump(
        {"repos": [{"repo": str(project.path), "rev": project.sha, "hooks": [hook]}]}
    )


def _assert_text_findings(output: str) -> None:
    text = FAILING.read_text(encoding="utf-8")
    for code, needle in (("SG102", "accept_length:"), ("SG104", "speedup:")):
        line, col = value_position(text, needle)
        assert re.search(
            rf"^svc/chat\.specgate\.yaml:{line}:{col}: fail {code} ", output, re.MULTILINE
        ), output
    assert "::error" not in output  # text format, not GitHub workflow commands


def _assert_only_finding_lines(output: str) -> None:
    """The hook printed finding lines only: no metrics, next actions or status line.
    pre-commit prints the hook's output after its result line and the ``- hook id:``,
    ``- exit code:``, ``- duration:`` lines."""
    lines = output.splitlines()
    result = next(
        i for i, line in enumerate(lines) if re.match(r"^specgate\.+(Passed|Failed)$", line)
    )
    hook = [line for line in lines[result + 1 :] if line.strip()]
    while hook and re.match(r"^- (hook id|exit code|duration): ", hook[0]):
        hook.pop(0)
    assert hook, output
    for line in hook:
        assert re.match(r"^[^:\s]+:\d+:\d+: (fail|warn|info|note) SG\d{3} ", line), output


def test_try_repo_as_a_user(
    project_copy: ProjectCopy, precommit_env: dict[str, str], tmp_path: Path
) -> None:
    assert git(project_copy.path, "status", "--porcelain") == ""  # try-repo uses HEAD as is
    repo = _user_repo(tmp_path / "user", failing=True)
    done = _pre_commit(
        repo,
        precommit_env,
        "try-repo",
        str(project_copy.path),
        "specgate",
        "--all-files",
        "--verbose",
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    _assert_text_findings(done.stdout)
    _assert_only_finding_lines(done.stdout)
    assert "not-claims" not in output
    assert "settings.json" not in output
    assert git(repo, "status", "--porcelain") == ""  # the hook changed no file


def test_run_with_local_repo_config(
    project_copy: ProjectCopy, precommit_env: dict[str, str], tmp_path: Path
) -> None:
    # --no-quiet prints the whole report: both claims files were checked, the other
    # YAML and JSON files were not.
    passing = _user_repo(
        tmp_path / "passing", failing=False, config=_config(project_copy, ["--no-quiet"])
    )
    done = _pre_commit(passing, precommit_env, "run", "--all-files", "--verbose")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"^specgate\.+Passed$", done.stdout, re.MULTILINE), output
    assert re.search(r"^specgate\.yaml: ready$", done.stdout, re.MULTILINE), output
    assert re.search(r"^deploy/\.specgate\.yml: ready$", done.stdout, re.MULTILINE), output
    assert "specgate: ready — 2 files" in done.stdout
    assert "not-claims" not in output
    assert ".pre-commit-config.yaml" not in done.stdout

    failing = _user_repo(tmp_path / "failing", failing=True, config=_config(project_copy))
    done = _pre_commit(failing, precommit_env, "run", "--all-files")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert re.search(r"^specgate\.+Failed$", done.stdout, re.MULTILINE), output
    _assert_text_findings(done.stdout)
    _assert_only_finding_lines(done.stdout)
    assert "not-claims" not in output
    assert git(failing, "status", "--porcelain") == ""

    # Both runs shared one store: the hook environment was installed once.
    store = Path(precommit_env["PRE_COMMIT_HOME"])
    assert len(list(store.glob("repo*/py_env-*"))) == 1


def test_hook_receives_every_file() -> None:
    """docs/change-gate.md#changed-files: no ``files``/``types`` filter (a serving config without an
    extension, a ``.jsonl`` record): any changed file runs the hook."""
    for key in ("files", "types", "types_or", "exclude_types"):
        assert key not in HOOK


def test_commit_of_a_serving_config_alone_checks_its_claims(
    project_copy: ProjectCopy, precommit_env: dict[str, str], tmp_path: Path
) -> None:
    """The commit that breaks a claim by editing only the serving config fails, and
    the output names the claims file that reads that config."""
    repo = make_repo(
        tmp_path / "served",
        {
            "deploy/chat.specgate.yaml": SERVED_CLAIMS,
            "deploy/serving/vllm-serve": "speculative-config:\n  method: eagle3\n"
            "  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n  num_speculative_tokens: 3\n",
            "notes.txt": "unrelated\n",
            ".pre-commit-config.yaml": _config(project_copy),
        },
    )
    clean = _pre_commit(repo, precommit_env, "run", "--all-files")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # D 3 -> 1: AL 3.1 was measured at D = 3, as HEAD shows (the hook compares with
    # HEAD, newuser-r4 #2): the evidence is stale for the new config (SG403).
    (repo / "deploy/serving/vllm-serve").write_text(
        "speculative-config:\n  method: eagle3\n"
        "  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n  num_speculative_tokens: 1\n",
        encoding="utf-8",
    )
    git(repo, "add", "deploy/serving/vllm-serve")
    staged = git(repo, "diff", "--cached", "--name-only").split()
    assert staged == ["deploy/serving/vllm-serve"]
    done = _pre_commit(repo, precommit_env, "run")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert re.search(r"^specgate\.+Failed$", done.stdout, re.MULTILINE), output
    assert "deploy/chat.specgate.yaml" in done.stdout, output
    assert " SG403 " in done.stdout, output


def test_hook_manifest_fields() -> None:
    assert HOOK["id"] == "specgate"
    assert HOOK["name"]
    assert HOOK["description"]
    assert HOOK["language"] == "python"
    # --quiet: only finding lines, as the README says (review #11); --no-quiet in args undoes it
    assert HOOK["entry"] == "specgate check --staged --quiet"
    assert HOOK["pass_filenames"] is False  # H7: no file name reaches the command line
    assert HOOK["minimum_pre_commit_version"] == "2.9.0"
    assert "args" not in HOOK  # text output: no --format in the hook


def test_file_names_never_become_options(
    project_copy: ProjectCopy, precommit_env: dict[str, str], tmp_path: Path
) -> None:
    """Hostile finding H7: committed files named ``--fail-on=never``,
    ``--output=victim.txt``… neither pass a failing claims file nor overwrite a file,
    in a commit (staged files) and with ``--all-files``."""
    files: dict[str, str | Path] = {
        "specgate.yaml": PASSING,
        "victim.txt": VICTIM,
        ".pre-commit-config.yaml": _config(project_copy),
    }
    repo = make_repo(tmp_path / "hostile", files)
    for name in HOSTILE_NAMES:
        (repo / name).write_text("", encoding="utf-8")
    (repo / "svc").mkdir()
    shutil.copyfile(FAILING, repo / "svc/chat.specgate.yaml")
    git(repo, "add", "--all")
    done = _pre_commit(repo, precommit_env, "run")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert re.search(r"^specgate\.+Failed$", done.stdout, re.MULTILINE), output
    _assert_text_findings(done.stdout)
    assert "files were modified by this hook" not in output
    assert (repo / "victim.txt").read_text(encoding="utf-8") == VICTIM

    git(repo, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "hostile names")
    done = _pre_commit(repo, precommit_env, "run", "--all-files")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    _assert_text_findings(done.stdout)
    assert (repo / "victim.txt").read_text(encoding="utf-8") == VICTIM
    assert git(repo, "status", "--porcelain") == ""


def test_from_ref_to_ref(
    project_copy: ProjectCopy, precommit_env: dict[str, str], tmp_path: Path
) -> None:
    """``--from-ref``/``--to-ref`` (as on pre-push): the files changed between the
    two commits decide, not the staged ones, not every file."""
    repo = _user_repo(tmp_path / "refs", failing=False, config=_config(project_copy))
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "notes.txt").write_text("unrelated\n", encoding="utf-8")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "notes")
    notes = git(repo, "rev-parse", "HEAD").strip()
    (repo / "svc").mkdir()
    shutil.copyfile(FAILING, repo / "svc/chat.specgate.yaml")
    git(repo, "add", "--all")
    git(repo, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "a failing claim")
    head = git(repo, "rev-parse", "HEAD").strip()
    # base...notes touches no claims file: the failing one in the work tree is not checked.
    done = _pre_commit(
        repo, precommit_env, "run", "--from-ref", base, "--to-ref", notes, "--verbose"
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"^specgate\.+Passed$", done.stdout, re.MULTILINE), output
    assert "specgate: no claims file is affected by the changed files" in done.stdout

    done = _pre_commit(repo, precommit_env, "run", "--from-ref", notes, "--to-ref", head)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert re.search(r"^specgate\.+Failed$", done.stdout, re.MULTILINE), output
    _assert_text_findings(done.stdout)


def test_users_args_still_apply(
    project_copy: ProjectCopy, precommit_env: dict[str, str], tmp_path: Path
) -> None:
    """``args`` in the user's config follow the entry and are options: ``--strict``
    fails a warning that passes without it."""
    files: dict[str, str | Path] = {"specgate.yaml": ACTIONABLE}
    plain = make_repo(
        tmp_path / "plain", {**files, ".pre-commit-config.yaml": _config(project_copy)}
    )
    done = _pre_commit(plain, precommit_env, "run", "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    strict = make_repo(
        tmp_path / "strict",
        {**files, ".pre-commit-config.yaml": _config(project_copy, ["--strict"])},
    )
    done = _pre_commit(strict, precommit_env, "run", "--all-files")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert re.search(r"^specgate\.+Failed$", done.stdout, re.MULTILINE), output
    assert re.search(r"^specgate\.yaml:\d+:\d+: warn SG", done.stdout, re.MULTILINE), output
    _assert_only_finding_lines(done.stdout)
