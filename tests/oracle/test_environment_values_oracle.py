"""Compose ``environment:`` values against Docker Compose v2 itself (docs/engines.md
#environment-values): a value written with interpolation (``SGLANG_ENABLE_SPEC_V2:
${SPEC_V2}``) is the value Compose gives the container, or unsettled; never its text as
written (which SGLang reads as "not a truth word": spec v2 off, a wrong settled value).

The oracle is Docker Compose v2.40.3 (``SPECGATE_COMPOSE2``, as in
``test_compose_include_oracle``): ``docker compose config --format json`` run with an
environment that sets none of the variables, from the project folder with its ``.env``.
``config`` writes each literal ``$`` of a value as ``$$`` (so that its output loads
again: ``E: $$A`` gives ``$$A``), so its values are read with ``$$`` → ``$``.

For every value form, in the map and the list form of ``environment:``, a value specgate
settles equals Compose's; the values it leaves unsettled are exactly those that hold a
reference no ``.env`` and no default settles (worked by hand from the Compose
interpolation rules, compose_env.py's docstring), and Compose gives each of them another
value when the environment it runs in sets the variable (so they are the environment's).
Skipped when the binary is not there.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from specgate.inputs.engines._source import UNSETTLED
from specgate.inputs.engines.environment import sibling_env
from specgate.inputs.engines.read import load_engine_document

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None

#: the project's .env: A set, EMPTY set empty (U, V are set by nothing)
DOTENV = "A=1\nEMPTY=\nB=${A}x\n"
#: value form → whether it is unsettled (hand-worked: a reference with no .env value
#: and no default that is not empty, or ``:+`` / ``+`` on a name .env does not set)
FORMS: dict[str, bool] = {
    "${A}": False, "$A": False, "${A:-d}": False, "${U:-d}": False, "${U-d}": False,
    "${EMPTY:-d}": False, "${EMPTY-d}": False, "${A:+alt}": False, "${A+alt}": False,
    "${EMPTY:+alt}": False, "${A:?need A}": False, "$$A": False, "$${U}": False,
    "a$$b": False, "pre${A}post": False, "${U:-${A}}": False, "${B}": False, "1": False,
    "${U}": True, "$U": True, "${U:+alt}": True, "${U+alt}": True, "${A}${U}": True,
    "${U:-}": True, "${V:-$U}": True, "${U:?need U}": True,
}
#: the forms Compose stops on when the environment does not set the name
STOPS = {"${U:?need U}"}


def _compose(forms: list[str]) -> str:
    lines = ["services:", "  m:", "    image: x", "    environment:"]
    lines += [f"      E{i}: {json.dumps(form)}" for i, form in enumerate(forms)]
    lines += ["  l:", "    image: x", "    environment:"]
    lines += [f"      - {json.dumps(f'E{i}={form}')}" for i, form in enumerate(forms)]
    return "\n".join(lines) + "\n"


def _config(top: Path, home: Path, outer: dict[str, str]) -> dict[str, Any]:
    assert COMPOSE2 is not None
    out = subprocess.run(
        [COMPOSE2, "config", "--format", "json"], check=False, cwd=top, capture_output=True,
        text=True, timeout=120,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(home), **outer},
    )
    assert out.returncode == 0, out.stderr
    services: dict[str, Any] = json.loads(out.stdout)["services"]
    return {
        name: {k: str(v).replace("$$", "$") for k, v in svc["environment"].items()}
        for name, svc in services.items()
    }


def _specgate(top: Path) -> dict[str, dict[str, object]]:
    doc = load_engine_document(top / "compose.yaml", "compose.yaml")
    return {
        service: {k: o.value for k, o in sibling_env(doc, ("services", service, "image")).items()}
        for service in ("m", "l")
    }


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
def test_environment_values_are_composes_or_unsettled(tmp_path: Path) -> None:
    forms = [f for f in FORMS if f not in STOPS]
    top = tmp_path / "p"
    (top / ".git").mkdir(parents=True)
    (top / "compose.yaml").write_text(_compose(forms), "utf-8")
    (top / ".env").write_text(DOTENV, "utf-8")
    oracle = _config(top, tmp_path, {})
    outer = _config(top, tmp_path, {"U": "u", "V": "v"})
    ours = _specgate(top)
    for service in ("m", "l"):
        for i, form in enumerate(forms):
            name = f"E{i}"
            if FORMS[form]:
                assert ours[service][name] is UNSETTLED, (service, form)
                assert outer[service][name] != oracle[service][name], (service, form)
            else:
                assert ours[service][name] == oracle[service][name], (service, form)


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
def test_a_required_variable_is_the_environments(tmp_path: Path) -> None:
    """``${U:?need U}``: Compose stops unless the environment it runs in sets U, and
    then gives its value: unsettled."""
    top = tmp_path / "p"
    (top / ".git").mkdir(parents=True)
    (top / "compose.yaml").write_text(_compose(sorted(STOPS)), "utf-8")
    assert _config(top, tmp_path, {"U": "u"})["m"]["E0"] == "u"
    assert _specgate(top)["m"]["E0"] is UNSETTLED
