"""Compose's merge tags ``!reset`` and ``!override`` against Docker Compose v2 itself
(trial3/08; docs/engines.md#containers).

Each project below is read by specgate (``load_engine_document`` on ``compose.yaml``:
the override file merged in, ``extends`` applied) and by ``docker compose config``
(``SPECGATE_COMPOSE2``, the Go binary; compose-go ``loader/reset.go``); for every
service both give the same command, environment, image, ports and profiles. Skipped
when the binary is not there; the values the tests without the binary assert were
worked out from compose-spec ``13-merge.md`` ("Reset value", "Replace value").
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.core.errors import InputError
from specgate.inputs.engines._source import env_items
from specgate.inputs.engines.read import load_engine_document

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None
BASE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.30.0
    ports: ["8000:8000"]
    profiles: ["gpu"]
    environment: {A: "1", B: "2"}
    command: [m, --speculative-config, '{"method": "ngram", "num_speculative_tokens": 3}']
"""

#: name → files (compose.yaml and the rest)
PROJECTS: dict[str, dict[str, str]] = {
    "override-ports": {
        "compose.yaml": BASE,
        "compose.override.yaml": (
            'services:\n  vllm:\n    ports: !override ["127.0.0.1:8001:8000"]\n'
        ),
    },
    "override-environment": {
        "compose.yaml": BASE,
        "compose.override.yaml": "services:\n  vllm:\n    environment: !override {A: '9'}\n",
    },
    "reset-environment-and-profiles": {
        "compose.yaml": BASE,
        "compose.override.yaml": (
            "services:\n  vllm:\n    environment: !reset {}\n    profiles: !reset []\n"
        ),
    },
    "override-scalar-image": {
        "compose.yaml": BASE,
        "compose.override.yaml": (
            "services:\n  vllm:\n    image: !override vllm/vllm-openai:v0.31.0\n"
        ),
    },
    "reset-command-item": {
        "compose.yaml": BASE.replace(
            "command: [m,", "command: [m, !reset --drop,"
        ),
    },
    "extends-reset-profiles": {
        "compose.yaml": BASE + (
            "  chat:\n    extends: {service: vllm}\n    profiles: !reset []\n"
            "    environment: !override {C: '3'}\n"
        ),
    },
    "extends-other-file": {
        "compose.yaml": (
            "services:\n  chat:\n    extends: {file: base.yaml, service: vllm}\n"
            "    ports: !reset []\n"
        ),
        "base.yaml": BASE,
    },
    "reset-in-the-first-file": {
        "compose.yaml": BASE.replace('ports: ["8000:8000"]', "ports: !reset []"),
    },
}


def _config(top: Path, home: Path) -> dict[str, Any]:
    assert COMPOSE2 is not None
    out = subprocess.run(
        [COMPOSE2, "--profile", "gpu", "config"], check=False, cwd=top, capture_output=True,
        text=True, timeout=120, env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)},
    )
    assert out.returncode == 0, out.stderr
    services: dict[str, Any] = yaml.safe_load(out.stdout)["services"]
    return services


def _project(tmp: Path, name: str) -> Path:
    top = tmp / name
    (top / ".git").mkdir(parents=True)
    for rel, text in PROJECTS[name].items():
        (top / rel).write_text(text, "utf-8")
    return top


def _specgate(top: Path) -> dict[str, Any]:
    data = load_engine_document(top / "compose.yaml", "compose.yaml").data
    assert isinstance(data, dict)
    services: dict[str, Any] = data["services"]
    return services


def _ports(ports: object) -> list[str]:
    """Compose's long form of ports as the short text (published and target only)."""
    out = []
    for port in ports if isinstance(ports, list) else []:
        if isinstance(port, dict):
            host = f"{port['host_ip']}:" if "host_ip" in port else ""
            out.append(f"{host}{port.get('published', '')}:{port['target']}")
        else:
            out.append(str(port))
    return out


def _env(block: object) -> dict[str, str]:
    return {name: "" if v is None else str(v) for name, v, _ in env_items(block)}


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_merge_tags_build_the_model_compose_builds(tmp_path: Path, name: str) -> None:
    top = _project(tmp_path, name)
    oracle = _config(top, tmp_path)
    mine = _specgate(top)
    assert sorted(mine) == sorted(oracle)
    for service, want in oracle.items():
        got = mine[service]
        assert got.get("command") == want.get("command"), service
        assert _env(got.get("environment")) == _env(want.get("environment")), service
        assert got.get("image") == want.get("image"), service
        assert _ports(got.get("ports")) == _ports(want.get("ports")), service
        assert got.get("profiles") == want.get("profiles"), service


def test_merge_tags_by_hand(tmp_path: Path) -> None:
    """The values compose-spec 13-merge.md gives: ``!override`` replaces the base's
    value (no merge), ``!reset`` removes it, in the override file, under ``extends``
    and in a file's own list."""
    override = _specgate(_project(tmp_path, "override-environment"))["vllm"]
    assert _env(override["environment"]) == {"A": "9"}
    assert override["ports"] == ["8000:8000"]
    reset = _specgate(_project(tmp_path, "reset-environment-and-profiles"))["vllm"]
    assert "environment" not in reset and "profiles" not in reset
    item = _specgate(_project(tmp_path, "reset-command-item"))["vllm"]
    assert item["command"][:2] == ["m", "--speculative-config"]
    chat = _specgate(_project(tmp_path, "extends-reset-profiles"))["chat"]
    assert "profiles" not in chat and _env(chat["environment"]) == {"C": "3"}
    assert chat["ports"] == ["8000:8000"]
    other = _specgate(_project(tmp_path, "extends-other-file"))["chat"]
    assert "ports" not in other and other["image"] == "vllm/vllm-openai:v0.30.0"


def test_a_merge_tag_outside_compose_stays_an_error(tmp_path: Path) -> None:
    """Only Compose knows the merge tags: a Kubernetes manifest holding one is refused
    at the tag's line and column; an unknown tag in a Compose file too."""
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nspec: !reset {}\n", "utf-8")
    with pytest.raises(InputError, match="unsupported tag !reset") as caught:
        load_engine_document(manifest, "pod.yaml")
    assert (caught.value.line, caught.value.column) == (3, 7)
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  a:\n    ports: !merge []\n", "utf-8")
    with pytest.raises(InputError, match="unsupported tag !merge") as caught:
        load_engine_document(compose, "compose.yaml")
    assert (caught.value.line, caught.value.column) == (3, 12)
