"""The release workflow (.github/workflows/release.yml, README.md#install-releases-and-tags): a tag
vX.Y.Z builds the sdist and wheel, checks them with twine and publishes them with
trusted publishing; every action is pinned by a full commit SHA; the first step refuses
a tag whose version, or a repository whose name, the package does not state."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def workflow() -> dict[str, object]:
    loaded = yaml.safe_load(RELEASE.read_text("utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def steps(job: str) -> list[dict[str, str]]:
    jobs = workflow()["jobs"]
    assert isinstance(jobs, dict)
    return list(jobs[job]["steps"])


def test_runs_on_version_tags_only() -> None:
    # PyYAML reads the `on` key as True (YAML 1.1)
    trigger = workflow()[True]
    assert trigger == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}


def test_every_action_is_pinned_by_a_full_sha() -> None:
    uses = [s["uses"] for job in ("build", "publish") for s in steps(job) if "uses" in s]
    assert uses
    for ref in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), ref
    text = RELEASE.read_text("utf-8")
    assert all(f"@{ref.split('@')[1]} # v" in text for ref in uses)  # with its version


def test_build_checks_with_twine_and_publishes_with_trusted_publishing() -> None:
    build = "\n".join(s.get("run", "") for s in steps("build"))
    assert "python -I -m build" in build
    assert "twine check --strict dist/*" in build
    jobs = workflow()["jobs"]
    assert isinstance(jobs, dict)
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}  # OIDC, no stored token
    assert publish["environment"]["name"] == "pypi"
    (last,) = [s for s in steps("publish") if "pypa/gh-action-pypi-publish" in s.get("uses", "")]
    assert "with" not in last or "password" not in last["with"]
    assert workflow()["permissions"] == {}


def _agree_script() -> str:
    (step,) = [s for s in steps("build") if s.get("name", "").startswith("The tag")]
    run = step["run"]
    return run.split("<<'PY'\n", 1)[1].rsplit("PY", 1)[0]


def _agree(tag: str, repository: str, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-c", _agree_script()],
        cwd=root,
        env={**os.environ, "TAG": tag, "REPOSITORY": repository},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_tag_version_and_repository_must_agree(tmp_path: Path) -> None:
    pytest.importorskip("tomllib")
    from specgate import __version__

    # this checkout: no repository is published yet, so a release is refused
    done = _agree(f"v{__version__}", "acme/specgate", ROOT)
    assert done.returncode != 0
    assert "REPOSITORY is None, not 'acme/specgate'" in done.stderr
    # a copy that names the repository: the matching tag passes, another tag does not
    for name in ("pyproject.toml", "src/specgate/__init__.py", "src/specgate/core/project.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    project = tmp_path / "src/specgate/core/project.py"
    project.write_text(
        project.read_text("utf-8").replace(
            "REPOSITORY: str | None = None", 'REPOSITORY: str | None = "acme/specgate"'
        ),
        "utf-8",
    )
    done = _agree(f"v{__version__}", "acme/specgate", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"releasing {__version__} from acme/specgate\n"
    done = _agree("v9.9.9", "acme/specgate", tmp_path)
    assert done.returncode != 0
    assert "tag v9.9.9" in done.stderr
    assert _agree(f"v{__version__}", "someone/else", tmp_path).returncode != 0
