"""``docker-compose config`` as the oracle of specgate's Compose reading (issue 25:
never a wrong settled value).

Debian's ``docker-compose`` (1.29; ``config`` needs no daemon) builds the model of
generated projects: interpolation from ``.env`` (``${D}``, ``${D:-4}``, ``${D-4}``, ``$D``,
``$$``), the override file Compose merges by default (also over a service another
extends, which the extending service does not see), ``extends`` and ``environment``
lists naming a variable twice. For every service specgate reads the command and the
environment Compose gives, or leaves them unsettled (a ``${VAR}`` no file sets);
never another value. Where Compose v2 differs from 1.29, compose-go decides
(:mod:`specgate.load.compose_files` cites it): no generated form here is one of those.

Skipped when ``docker-compose`` is not installed (``.ci/run`` installs it when it can).
Each project holds :data:`SERVICES` services; ``SPECGATE_ORACLE_CASES`` sets the
number of projects (CI: :data:`PROJECTS`).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.core.errors import InputError
from specgate.inputs.engines import load_engine_document
from specgate.inputs.engines._source import env_items
from specgate.inputs.engines.environment import sibling_env
from specgate.load.document import Document

COMPOSE = shutil.which("docker-compose")
PROJECTS = int(os.environ.get("SPECGATE_ORACLE_CASES", "3"))
SERVICES = 12


# (${V:+alt} is Compose v2 only: 1.29 refuses it)
REFS = ["${V}", "${V:-4}", "${V-4}", "$V", "${V:-}", "x$$V", "${V}0"]
DOTENV = ["V=7", "V=", 'V="7"', "V='7'", "V=7 # seven", "export V=6", None]


def _service(
    rng: random.Random, i: int, dotenv: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The base file's services for case ``i`` and the override's (maybe empty)."""
    var = f"V{i}"
    ref = rng.choice(REFS).replace("V", var)
    line = rng.choice(DOTENV)
    if line is not None:
        dotenv.append(line.replace("V", var, 1))
    spec = '{"method": "ngram", "num_speculative_tokens": ' + ref + "}"
    command = ["--model", "m", "--speculative-config", spec]
    env: Any = [f"A{i}=1", f"A{i}=2"] if rng.random() < 0.5 else {f"A{i}": "1", f"B{i}": 3}
    name = f"s{i}"
    base: dict[str, Any] = {}
    if rng.random() < 0.3:
        base[f"{name}base"] = {"image": "vllm/vllm-openai", "command": command,
                               "environment": [f"C{i}=1"]}
        base[name] = {"extends": f"{name}base", "environment": env}
    else:
        base[name] = {"image": "vllm/vllm-openai", "command": command, "environment": env}
    over: dict[str, Any] = {}
    if rng.random() < 0.5:
        over[name] = {}
        if rng.random() < 0.6:
            seven = '{"method": "ngram", "num_speculative_tokens": 7}'
            over[name]["command"] = [*command[:3], seven]
        if rng.random() < 0.6:
            over[name]["environment"] = [f"A{i}=9"]
    if f"{name}base" in base and rng.random() < 0.5:
        # the override changes the extended service: Compose applies extends within
        # each file first, so the extending service keeps the base file's values
        nine = '{"method": "ngram", "num_speculative_tokens": 9}'
        over[f"{name}base"] = {"command": [*command[:3], nine], "environment": [f"C{i}=9"]}
    return base, over


def _project(rng: random.Random, folder: Path) -> None:
    dotenv: list[str] = []
    services: dict[str, Any] = {}
    overrides: dict[str, Any] = {}
    for i in range(SERVICES):
        base, over = _service(rng, i, dotenv)
        services.update(base)
        overrides.update(over)
    (folder / "compose.yaml").write_text(yaml.safe_dump({"services": services}), "utf-8")
    override = folder / rng.choice(["compose.override.yaml", "docker-compose.override.yml"])
    if overrides:
        override.write_text(yaml.safe_dump({"services": overrides}), "utf-8")
    (folder / ".env").write_text("\n".join(dotenv) + "\n", "utf-8")


def _env(block: object) -> dict[str, str]:
    return {name: "" if v is None else str(v) for name, v, _ in env_items(block)}


def _service_env(doc: Document, name: str) -> dict[str, str]:
    """The environment specgate gives a service's command (what fills its ``$VAR``)."""
    found = sibling_env(doc, ("services", name, "command"))
    return {key: "" if opt.value is None else str(opt.value) for key, opt in found.items()}


def _unescape(node: Any) -> Any:
    if isinstance(node, str):
        return node.replace("$$", "$")
    if isinstance(node, dict):
        return {k: _unescape(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_unescape(v) for v in node]
    return node


def run_corpus(projects: int, tmp: Path, seed: int = 25) -> dict[str, Any]:
    """Counts over ``projects`` × :data:`SERVICES` services: agreed, unsettled, wrong."""
    assert COMPOSE is not None
    rng = random.Random(seed)
    agreed = unsettled = 0
    wrong: list[str] = []
    for n in range(projects):
        folder = tmp / f"p{n}"
        folder.mkdir()
        _project(rng, folder)
        out = subprocess.run(
            [COMPOSE, "config"],
            check=False,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp)},
        )
        assert out.returncode == 0, out.stderr
        # `config` prints a model Compose can read again: each "$" written "$$"
        oracle = _unescape(yaml.safe_load(out.stdout)["services"])
        try:
            doc = load_engine_document(folder / "compose.yaml", "compose.yaml")
        except InputError:
            unsettled += SERVICES
            continue
        assert isinstance(doc.data, dict)
        ours = doc.data["services"]
        for name, theirs in oracle.items():
            if name.endswith("base"):
                continue
            if any(p[:2] == ("services", name) for p in doc.unsettled):
                unsettled += 1
                continue
            mine = ours[name]
            their_env = {k: "" if v is None else str(v)
                         for k, v in (theirs.get("environment") or {}).items()}
            same = mine.get("command") == theirs.get("command") and (
                _service_env(doc, name) == their_env
            )
            if same:
                agreed += 1
            else:
                wrong.append(f"{folder}: {name}: ours {mine!r} compose {theirs!r}")
    return {"agreed": agreed, "unsettled": unsettled, "wrong": wrong}


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose (1.29) not installed")
def test_compose_reading_agrees_with_docker_compose_or_is_unsettled(tmp_path: Path) -> None:
    counts = run_corpus(PROJECTS, tmp_path)
    assert not counts["wrong"], "\n".join(counts["wrong"][:3])
    assert counts["agreed"] > PROJECTS * SERVICES // 3


def _spec(d: int) -> str:
    """A flow list holding the flag and its JSON (a YAML double-quoted string)."""
    inner = '{\\"method\\": \\"ngram\\", \\"num_speculative_tokens\\": ' + str(d) + "}"
    return f'["--speculative-config", "{inner}"]'


def test_override_and_a_repeated_environment_name(tmp_path: Path) -> None:
    # worked by hand: the override's command (D 7) replaces the base's (D 4); A listed
    # twice keeps its last value, 2
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai\n"
        f"    command: {_spec(4)}\n"
        "    environment:\n      - A=1\n      - A=2\n",
        "utf-8",
    )
    (tmp_path / "docker-compose.override.yml").write_text(
        f"services:\n  vllm:\n    command: {_spec(7)}\n", "utf-8"
    )
    doc = load_engine_document(tmp_path / "compose.yaml", "compose.yaml")
    assert isinstance(doc.data, dict)
    service = doc.data["services"]["vllm"]
    assert service["command"][1] == '{"method": "ngram", "num_speculative_tokens": 7}'
    assert _env(service["environment"]) == {"A": "2"}
