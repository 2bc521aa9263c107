"""Validate action.yml, the example workflow and the hook manifest with the ecosystem's
own offline validators (ecosystem.md README.md#github-action): check-jsonschema's vendored
SchemaStore schemas, zizmor (pedantic persona, offline) and ``pre-commit validate-manifest``.

The executables come from the environment that runs the tests; a test is skipped only
when its tool is not installed there.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ._support import BIN, PROJECT, clean_env

pytestmark = pytest.mark.seams

ACTION = "action.yml"
WORKFLOW = "docs/examples/workflow.yml"
RELEASE = ".github/workflows/release.yml"
REFRESH = ".github/workflows/refresh-engine-data.yml"
HOOKS = ".pre-commit-hooks.yaml"


def _tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed next to {BIN}")
    return path


def _run(*command: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=PROJECT,
        env=clean_env({"NO_COLOR": "1"}),
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("schema", "path"),
    [
        ("vendor.github-actions", ACTION),
        ("vendor.github-workflows", WORKFLOW),
        ("vendor.github-workflows", RELEASE),
        ("vendor.github-workflows", REFRESH),
    ],
)
def test_check_jsonschema_builtin_schema(schema: str, path: str) -> None:
    done = _run(_tool("check-jsonschema"), "--builtin-schema", schema, path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


def test_zizmor_pedantic_offline_finds_nothing() -> None:
    # Pedantic is zizmor's strictest persona (it also flags e.g. `${{ github.action_path }}`
    # in `run:`); exit codes 11-14 mean findings.
    done = _run(
        _tool("zizmor"), "--offline", "--persona", "pedantic", ACTION, WORKFLOW, RELEASE, REFRESH
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings" in done.stdout


def test_pre_commit_validate_manifest() -> None:
    done = _run(_tool("pre-commit"), "validate-manifest", HOOKS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_validators_reject_a_broken_manifest(tmp_path: Path) -> None:
    """The validators are not vacuous: a hook without ``entry`` and an action step without
    ``shell`` are rejected."""
    hooks = tmp_path / "hooks.yaml"
    hooks.write_text("- id: x\n  name: x\n  language: python\n", encoding="utf-8")
    assert _run(_tool("pre-commit"), "validate-manifest", hooks).returncode != 0
    action = tmp_path / "action.yml"
    action.write_text(
        "name: x\ndescription: x\nruns:\n  using: composite\n  steps:\n    - run: echo hi\n",
        encoding="utf-8",
    )
    done = _run(_tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", action)
    assert done.returncode != 0, done.stdout
