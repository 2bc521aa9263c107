"""A Compose service's ``build:`` as Docker Compose v2 settles it (docs/engines.md#built-images).

For random ``build`` sections (a path, or a mapping with ``context``, ``dockerfile``,
``target`` and ``args`` as a mapping or a ``NAME=value`` list; values as strings, numbers,
booleans, null, bare names, and ``${VAR}`` interpolated from ``.env`` or left to the
environment), ``docker compose config`` prints the context, Dockerfile, target and build
arguments Compose passes to the builder. specgate agrees on every value it settles: a
build argument it settles has Compose's value, and one Compose takes from the process
environment (set here, ``FROMENV``) or prints in Go's own way (a float, a boolean) is
unsettled. The oracle is Docker Compose v2.40.3 (``SPECGATE_COMPOSE2``, as in
``test_compose_include_oracle``).
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.core.errors import InputError
from specgate.inputs import compose_build
from specgate.inputs import dockerfile as df
from specgate.inputs.engines.read import load_engine_document

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None
CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "3")) * 8
VALUES: list[Any] = [
    "v0.10.2", 7, "", None, 0.10, True, "a=b", "${TAG:-v1}", "${SET_IN_DOTENV}",
    "${NOT_SET}", "${NOT_SET:-dflt}", "x${SET_IN_DOTENV}y",
]


def _build(rng: random.Random) -> Any:
    context = rng.choice([".", "sub", "./sub"])
    if rng.random() < 0.2:
        return context
    build: dict[str, Any] = {"context": context}
    if rng.random() < 0.5:
        build["dockerfile"] = rng.choice(["Dockerfile", "Dockerfile.x"])
    if rng.random() < 0.3:
        build["target"] = rng.choice(["serve", "base"])
    names = rng.sample(["TAG", "V", "FROMENV", "W", "X"], rng.randint(1, 4))
    if rng.random() < 0.5:
        build["args"] = {name: rng.choice(VALUES) for name in names}
    else:
        build["args"] = [
            name if rng.random() < 0.2 else f"{name}={rng.choice(VALUES)}" for name in names
        ]
    return build


def _compose(top: Path, home: Path) -> dict[str, Any] | None:
    assert COMPOSE2 is not None
    out = subprocess.run(
        [COMPOSE2, "config", "--format", "json"], check=False, cwd=top, capture_output=True,
        text=True, timeout=120,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(home), "FROMENV": "envval"},
    )
    if out.returncode != 0:
        return None
    services: dict[str, Any] = yaml.safe_load(out.stdout)["services"]
    return services


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
def test_build_sections_settle_as_compose_settles_them(tmp_path: Path) -> None:
    rng = random.Random(27)
    compared = settled = 0
    for case in range(CASES):
        top = tmp_path / f"p{case}"
        (top / ".git").mkdir(parents=True)
        (top / "sub").mkdir()
        (top / ".env").write_text("SET_IN_DOTENV=fromdotenv\n", "utf-8")
        services = {f"s{i}": {"build": _build(rng)} for i in range(3)}
        text = yaml.safe_dump({"services": services}, sort_keys=False)
        (top / "compose.yaml").write_text(text, "utf-8")
        theirs = _compose(top, tmp_path)
        try:
            doc = load_engine_document(top / "compose.yaml", "compose.yaml")
        except InputError:
            continue  # specgate reads nothing of a file it does not settle
        if theirs is None:
            continue
        for name in services:
            build = doc.data["services"][name]["build"]
            mapping = build if isinstance(build, dict) else {"context": build}
            want = theirs[name]["build"]
            context = compose_build._inside(top, mapping.get("context", "."), "context")
            assert str(context) == want["context"], (text, name)
            assert mapping.get("dockerfile", "Dockerfile") == want["dockerfile"]
            assert mapping.get("target") == want.get("target")
            ours = compose_build._args(doc, name, mapping.get("args"))
            for key, value in ours.items():
                compared += 1
                if value != df.UNSET:
                    settled += 1
                    assert want.get("args", {}).get(key) == value, (text, name, key)
    assert compared and settled  # the cases reached both kinds
