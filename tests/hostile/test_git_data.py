"""Git's own data is outside the repository (hostile review r4, defect 9).

``.git/config`` holds the ``http.…extraheader`` where actions/checkout keeps its token;
``engine_config: .git/config``, ``metrics.path: .git/config``, a symlink ``cfg.txt ->
.git/config`` and ``measure --before .git/config`` were opened, parsed and hashed, and
``measure`` quoted a line of it. The one confinement check
(:func:`specgate.core.paths.confined`) now refuses any component spelled ``.git`` (any
case, as written or where a symlink leads), with the message of a path outside.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specgate.core.paths import OUTSIDE, PathEscape, confined

from .conftest import BASE, InProcess

CONFIG = (
    '[core]\n\trepositoryformatversion = 0\n[http "https://github.com/"]\n'
    "\textraheader = AUTHORIZATION: basic c2VjcmV0\n"
)


@pytest.fixture
def git_repo(repo: Path) -> Path:
    (repo / ".git" / "config").write_text(CONFIG, "utf-8")
    (repo / "cfg.txt").symlink_to(".git/config")
    (repo / "sub").mkdir()
    (repo / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n", "utf-8")  # a submodule
    return repo


@pytest.mark.parametrize(
    "written", [".git/config", ".GIT/config", "cfg.txt", "sub/.git", "./x/../.git/config"]
)
def test_confined_refuses_git_data_like_a_path_outside(git_repo: Path, written: str) -> None:
    # ".GIT/config" does not exist on a case-sensitive disk: refused before existence,
    # so the answer does not tell what exists
    with pytest.raises(PathEscape) as caught:
        confined(git_repo / written, top=git_repo)
    assert str(caught.value) == OUTSIDE == "leads out of the repository; not read"
    with pytest.raises(PathEscape):
        confined(git_repo / written)  # the repository holding the path
    with pytest.raises(PathEscape):
        confined(git_repo / written, top=git_repo, must_exist=False)  # a write


def test_names_that_only_contain_git_stay_inside(git_repo: Path) -> None:
    for name in (".gitignore", ".github", "x.git", ".gitmodules"):
        (git_repo / name).write_text("x\n", "utf-8")
        assert confined(git_repo / name, top=git_repo) == (git_repo / name).resolve()


def _claims(repo: Path, name: str, evidence: str = "", speculation: str = "") -> None:
    text = BASE.replace("      draft_length: 3\n", f"      draft_length: 3\n{speculation}")
    text = text.replace("      accept_length: 2.4\n", evidence or "      accept_length: 2.4\n")
    (repo / name).write_text(text, "utf-8")


@pytest.mark.parametrize("written", [".git/config", ".GIT/config", "cfg.txt"])
def test_check_refuses_engine_config_and_metrics_in_git_data(
    sg: InProcess, git_repo: Path, written: str
) -> None:
    _claims(git_repo, "e.specgate.yaml", speculation=f"      engine_config: {written}\n")
    _claims(
        git_repo,
        "m.specgate.yaml",
        evidence=f"      metrics: {{format: vllm-prometheus, path: {written}}}\n",
    )
    # the same message as a path that climbs out (inputs/paths.py: "leaves the repository")
    engine = sg(["check", "e.specgate.yaml"], git_repo)
    assert engine.code == 2
    assert f"speculation.engine_config '{written}' leaves the repository" in engine.out
    metrics = sg(["check", "m.specgate.yaml"], git_repo)
    assert metrics.code == 2
    assert f"path '{written}' leaves the repository" in metrics.out
    assert "extraheader" not in engine.out + engine.err + metrics.out + metrics.err


@pytest.mark.parametrize("written", [".git/config", "cfg.txt"])
def test_measure_refuses_git_data_without_quoting_it(
    sg: InProcess, git_repo: Path, written: str
) -> None:
    result = sg(["measure", "--before", written, "--after", written], git_repo)
    assert result.code == 2
    assert result.err == f"specgate: --before {written}: {OUTSIDE}\n"
    assert "[core]" not in result.out + result.err


def test_a_claims_file_inside_git_data_is_refused(sg: InProcess, git_repo: Path) -> None:
    os.makedirs(git_repo / ".git" / "x")
    _claims(git_repo / ".git" / "x", "c.specgate.yaml")
    result = sg(["check", ".git/x/c.specgate.yaml"], git_repo)
    assert result.code == 2
    assert "leads out of the repository" in result.out + result.err
