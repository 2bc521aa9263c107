"""``docker compose up SERVICE...``: the services it starts, against Docker Compose v2.

``up`` loads the project through ``p.WithServices`` → ``ToProject(services)``, which
enables the named services' profiles and keeps the named services and what they
``depends_on`` (``cmd/compose/up.go@v5.5.0``, ``pkg/compose/loader.go``
``postProcessProject``; compose-go ``types/project.go@e70e961c``
``WithSelectedServices``, ``ForEachService``). ``docker compose config SERVICE...``
goes through the same ``ToProject`` (``cmd/compose/config.go@v2.40.3``,
``runConfigInterpolate``), so the services it prints are the ones ``up`` starts
(``--no-deps`` then drops the dependencies: ``upOptions.apply``,
``IgnoreDependencies``). The oracle is Docker Compose v2.40.3 (``SPECGATE_COMPOSE2``,
as in ``test_compose_include_oracle``).

For random projects (``depends_on`` as a list or a mapping, a ``required: false``
dependency that is not defined, ``profiles``, ``scale: 0``) and random ``up`` lines
(options from ``up``'s table between the names), specgate keeps exactly the services
Compose starts, or leaves the line unread (None); where Compose refuses the names
(no such service), specgate reads nothing.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.compose_project import Project
from specgate.inputs.engines.compose_up import _started, up_launch
from specgate.inputs.engines.read import load_engine_document

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None
CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "3")) * 8
NAMES = ["a", "b", "c", "d", "e"]
OPTIONS = ["-d", "--no-deps", "--pull never", "-t 5", "--attach a", "--wait", "-dV",
           "--exit-code-from a", "--no-color"]


def _project(rng: random.Random) -> dict[str, Any]:
    services: dict[str, Any] = {}
    for i, name in enumerate(NAMES):
        service: dict[str, Any] = {"image": "busybox"}
        later = NAMES[i + 1:]
        if later and rng.random() < 0.6:
            deps = rng.sample(later, rng.randint(1, len(later)))
            if rng.random() < 0.5:
                service["depends_on"] = deps
            else:
                service["depends_on"] = {d: {"condition": "service_started"} for d in deps}
                if rng.random() < 0.3:
                    service["depends_on"]["gone"] = {"condition": "service_started",
                                                     "required": False}
        if rng.random() < 0.08:
            service["profiles"] = ["gpu"]
        if rng.random() < 0.06:
            service["scale"] = 0
        services[name] = service
    return {"services": services}


def _line(rng: random.Random) -> str:
    words = rng.sample(NAMES + ["zz"] * (rng.random() < 0.1), rng.randint(1, 3))
    words += rng.sample(OPTIONS, rng.randint(0, 3))
    rng.shuffle(words)
    return "docker compose up " + " ".join(words)


def _compose(top: Path, line: str, home: Path) -> set[str] | None:
    assert COMPOSE2 is not None
    words = line.split()[3:]
    names, i = [], 0
    no_deps = "--no-deps" in words
    takes = {"--pull", "-t", "--attach", "--exit-code-from"}
    while i < len(words):
        if words[i] in takes:
            i += 2
            continue
        if not words[i].startswith("-"):
            names.append(words[i])
        i += 1
    out = subprocess.run([COMPOSE2, "config", *names], cwd=top, text=True,
                         capture_output=True, timeout=60, check=False,
                         env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)})
    if out.returncode != 0:
        return None
    started = set(yaml.safe_load(out.stdout)["services"])
    return started & set(names) if no_deps else started


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
def test_up_starts_the_named_services_and_their_dependencies(tmp_path: Path) -> None:
    rng = random.Random(27)
    agreed = unread = 0
    wrong: list[str] = []
    for n in range(CASES):
        top = tmp_path / f"p{n}"
        (top / ".git").mkdir(parents=True)
        data = _project(rng)
        (top / "compose.yaml").write_text(yaml.safe_dump(data), "utf-8")
        line = _line(rng)
        (top / "serve.sh").write_text(line + "\n", "utf-8")
        script = load_engine_document(top / "serve.sh", "serve.sh")
        (source,) = commands_of(script.data, script, (), script.data)
        launch = up_launch(source.command.argv)
        assert launch is not None
        model = load_engine_document(top / "compose.yaml", "compose.yaml")
        project = Project(((top / "compose.yaml", "compose.yaml"),), False, ())
        ours = _started(model, project, [(source.command, launch)], top)
        theirs = _compose(top, line, tmp_path)
        if ours is None:
            unread += 1
        elif theirs is not None and set(ours.data["services"]) == theirs:
            agreed += 1
        else:
            wrong.append(f"{line}: ours {sorted(ours.data['services'])} compose {theirs} "
                         f"{data}")
    assert not wrong, "\n".join(wrong[:3])
    assert agreed >= CASES // 3, (agreed, unread)
