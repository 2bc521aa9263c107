"""A ``command`` / ``entrypoint`` / ``healthcheck.test`` list item that is no string,
against Docker Compose v2 itself (trial3/11; docs/engines.md#containers).

``docker compose config`` (``SPECGATE_COMPOSE2``) refuses each project below that holds
one ("validating compose.yaml: services.a.command.1 must be a string"); specgate fails
the deployment (SG312 :class:`NotStarted`) naming the same path, at the item's line,
and reads the others. Skipped when the binary is not there; the by-hand test holds the
line and column counted on the file.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from specgate.inputs.engines.read import load_engine_document
from specgate.inputs.engines.unread import NotStarted

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None
HEAD = "services:\n  a:\n    image: vllm/vllm-openai:v0.30.0\n"
#: name → (the service's lines, the path Compose names, or None: Compose reads it)
PROJECTS: dict[str, tuple[str, str | None]] = {
    "int": ("    command: [m, --x, 3]\n", "services.a.command.2"),
    "float": ("    command:\n      - m\n      - 0.80\n", "services.a.command.1"),
    "bool": ("    command: [m, true]\n", "services.a.command.1"),
    "null": ("    entrypoint: [vllm, null]\n", "services.a.entrypoint.1"),
    "healthcheck": ("    healthcheck:\n      test: [CMD, 1]\n", "services.a.healthcheck.test.1"),
    "quoted": ('    command: [m, "3", "0.80", "true"]\n', None),
    "string-command": ("    command: m --x 3\n", None),
    "interpolated": ('    command: [m, "${N:-3}"]\n', None),
}


def _refused(top: Path, home: Path) -> str | None:
    assert COMPOSE2 is not None
    out = subprocess.run(
        [COMPOSE2, "config"], check=False, cwd=top, capture_output=True, text=True,
        timeout=120, env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)},
    )
    return None if out.returncode == 0 else out.stderr


def _project(tmp: Path, name: str) -> Path:
    top = tmp / name
    (top / ".git").mkdir(parents=True)
    (top / "compose.yaml").write_text(HEAD + PROJECTS[name][0], "utf-8")
    return top


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_compose_refuses_what_specgate_fails(tmp_path: Path, name: str) -> None:
    top = _project(tmp_path, name)
    refused = _refused(top, tmp_path)
    path = PROJECTS[name][1]
    if path is None:
        assert refused is None
        load_engine_document(top / "compose.yaml", "compose.yaml")
        return
    assert refused is not None and f"{path} must be a string" in refused
    with pytest.raises(NotStarted, match=f'"{path} must be a string"'):
        load_engine_document(top / "compose.yaml", "compose.yaml")


def test_the_finding_sits_at_the_item(tmp_path: Path) -> None:
    # "float": line 6 is `      - 0.80`, the item at column 9 (6 spaces, `-`, a space)
    top = _project(tmp_path, "float")
    with pytest.raises(NotStarted) as caught:
        load_engine_document(top / "compose.yaml", "compose.yaml")
    assert (caught.value.line, caught.value.column) == (6, 9)
    assert caught.value.severity == "fail"
    assert "the item 0.80 is a number in YAML" in caught.value.reason
