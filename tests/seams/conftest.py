"""Shared fixtures for the seam tests: the Action and the pre-commit hook as users run them.

Everything runs offline. One session builds, once:

- ``project_copy``: a copy of the project's working tree (tracked files plus untracked,
  not ignored ones) committed in a fresh git repository, so pre-commit can clone it and
  ``$GITHUB_ACTION_PATH`` can point at it without builds writing into the real checkout;
- ``wheelhouse``: wheels of the project, its runtime dependencies and its build backend,
  so every later ``pip install`` runs with ``PIP_NO_INDEX=1`` and ``PIP_FIND_LINKS``.

Select these tests with ``pytest -m seams`` (or deselect them with ``-m "not seams"``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ._support import PROJECT, git


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "seams: end-to-end tests of the Action and the pre-commit hook (slower; offline)",
    )


@dataclass(frozen=True)
class ProjectCopy:
    """The project's current working tree, committed in a git repository of its own."""

    path: Path
    sha: str


@pytest.fixture(scope="session")
def project_copy(tmp_path_factory: pytest.TempPathFactory) -> ProjectCopy:
    listed = git(PROJECT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    root = tmp_path_factory.mktemp("project") / "specgate"
    root.mkdir()
    for name in filter(None, listed.split("\0")):
        source = PROJECT / name
        if not source.is_file():  # deleted in the working tree but still in the index
            continue
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "--all")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "specgate working tree under test")
    return ProjectCopy(root, git(root, "rev-parse", "HEAD").strip())


@pytest.fixture(scope="session")
def wheelhouse(project_copy: ProjectCopy, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of specgate, its runtime dependencies (PyYAML, jsonschema and its
    dependencies, prometheus_client) and its build backend (setuptools, wheel).

    Built with pip's configured indexes (on this machine, local ones); every install
    after this one is offline.
    """
    house = tmp_path_factory.mktemp("wheelhouse")
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_NO_INDEX", "VIRTUAL_ENV")}
    for what in (
        [str(project_copy.path)],  # specgate and its runtime dependencies
        ["setuptools>=69", "wheel"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "-w", str(house), *what],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"pip wheel {what} failed:\n{done.stderr}"
    names = {wheel.name.split("-")[0].lower() for wheel in house.glob("*.whl")}
    assert {
        "specdec_gate", "pyyaml", "jsonschema", "prometheus_client", "setuptools"
    } <= names
    return house


@pytest.fixture(scope="session")
def offline_pip(wheelhouse: Path) -> dict[str, str]:
    """Environment variables that make pip install from the wheelhouse only."""
    return {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
