"""Compose projects of several files against ``docker-compose config`` (never a wrong
settled value).

Generated projects hold a base file and two overlays that override services'
``command`` (list or string), ``environment`` (list or mapping, names shared with the
base) and ``image``; each project is read through every way a script names its files
(docs/engines.md#containers): ``-f a -f b [-f c]`` in both orders, ``COMPOSE_FILE`` in
the ``.env`` (with and without ``COMPOSE_PATH_SEPARATOR``), ``COMPOSE_FILE`` exported by
the script, a ``compose.yaml`` + ``compose.override.yaml`` found from a folder below,
and the same ``compose.yaml`` named by ``-f`` (read alone). For every ``docker compose
run SERVICE`` line specgate gives the argv, environment and image Compose's model gives
(``docker-compose config`` 1.29 with the same files and environment, run from the
script's folder; the run line's own rules as in ``test_compose_run_oracle``), or leaves
the line unjoined; never another value. A Compose file the claims file names, with
``COMPOSE_FILE`` in the ``.env`` beside it listing it first, in the middle or alone, is
the model ``docker-compose config`` builds in that folder, service by service. The forms
generated are ones where
docker-compose 1.29 and compose-go agree (command and image replaced, environment merged
name by name with the later file winning; no ``extends`` across files; the ``.env``
beside the files).

Services with ``env_file:`` run through ``--project-directory DIR`` and ``-f`` (with
an overlay that adds its own ``env_file``): the paths are taken from the project's
working folder and the overlay's joined after the base's, as ``docker-compose config``
gives (the same as Compose v2: compose-go ``paths/resolve.go@e70e961c`` and
``override/merge.go@e70e961c``, ``mergeToSequence``).

Skipped when ``docker-compose`` is not installed. ``SPECGATE_ORACLE_CASES`` sets the
number of projects.
"""

from __future__ import annotations

import os
import random
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.oracle.test_compose_run_oracle import COMPOSE, IMAGES, _expected

from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.in_container import in_container
from specgate.inputs.engines.placed import Joined
from specgate.inputs.engines.read import load_engine_document

PROJECTS = int(os.environ.get("SPECGATE_ORACLE_CASES", "3"))
SERVICES = 6
TAG = "v0.27.1"

#: (the script's words before ``run``, the .env lines, the variables the script
#: exports, the script's folder below the project)
VARIANTS: list[tuple[str, list[str], dict[str, str], str]] = [
    ("-f base.yaml -f prod.yaml", [], {}, ""),
    ("-f prod.yaml -f base.yaml -f extra.yaml", [], {}, ""),
    ("", ["COMPOSE_FILE=base.yaml:prod.yaml:extra.yaml"], {}, ""),
    ("", ["COMPOSE_PATH_SEPARATOR=,", "COMPOSE_FILE=base.yaml,prod.yaml"], {}, ""),
    ("", ["COMPOSE_FILE=base.yaml"], {"COMPOSE_FILE": "base.yaml:extra.yaml"}, ""),
    ("", [], {}, "sub"),  # compose.yaml + compose.override.yaml found up
    ("-f compose.yaml", [], {}, ""),  # named: read without its override
]


def _command(rng: random.Random, tag: str) -> Any:
    words = [f"/models/{tag}", "--speculative-num-steps", str(rng.randint(1, 9))]
    return words if rng.random() < 0.5 else " ".join(words)


def _environment(rng: random.Random, names: list[str], tag: str) -> Any:
    values = {name: f"{tag}-{name}" for name in names}
    if rng.random() < 0.5:
        return [f"{k}={v}" for k, v in values.items()]
    return values


def _files(rng: random.Random) -> dict[str, dict[str, Any]]:
    base: dict[str, Any] = {}
    prod: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for i in range(SERVICES):
        name = f"s{i}"
        base[name] = {"image": rng.choice(sorted(IMAGES)), "command": _command(rng, "base"),
                      "environment": _environment(rng, ["HF_HOME", "A", "B"], "base")}
        for overlay, tag in ((prod, "prod"), (extra, "extra")):
            over: dict[str, Any] = {}
            if rng.random() < 0.5:
                over["command"] = _command(rng, tag)
            if rng.random() < 0.5:
                over["environment"] = _environment(rng, rng.sample(["B", "C", "HF_HOME"], 2), tag)
            if rng.random() < 0.3:
                over["image"] = rng.choice(sorted(IMAGES))
            if over:
                overlay[name] = over
    return {
        "base.yaml": {"services": base},
        "prod.yaml": {"services": prod},
        "extra.yaml": {"services": extra},
        "compose.yaml": {"services": base},
        "compose.override.yaml": {"services": prod},
    }


def _config(folder: Path, home: Path, words: str, exported: dict[str, str]) -> Any:
    assert COMPOSE is not None
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), **exported}
    out = subprocess.run(
        [COMPOSE, *words.split(), "config"], check=False, cwd=folder, capture_output=True,
        text=True, timeout=120, env=env,
    )
    assert out.returncode == 0, out.stderr
    return yaml.safe_load(out.stdout)["services"]


def run_corpus(projects: int, tmp: Path, seed: int = 24) -> dict[str, Any]:
    """Counts over ``projects`` × :data:`VARIANTS` × :data:`SERVICES` run lines."""
    rng = random.Random(seed)
    agreed = unsettled = 0
    wrong: list[str] = []
    for n in range(projects):
        top = tmp / f"p{n}"
        (top / ".git").mkdir(parents=True)
        (top / "sub").mkdir()
        for name, data in _files(rng).items():
            (top / name).write_text(yaml.safe_dump(data), "utf-8")
        for k, (words, dotenv, exported, below) in enumerate(VARIANTS):
            folder = top / below if below else top
            # the .env of the script's folder: docker-compose 1.29 reads that one alone,
            # compose-go that one first, then the found file's folder's (its own test)
            for where in {top, folder}:
                (where / ".env").write_text("\n".join([f"TAG={TAG}", *dotenv]) + "\n", "utf-8")
            oracle = _config(folder, tmp, words, exported)
            program = rng.choice(["docker compose", "docker-compose"])
            lines = [" ".join(w for w in [program, words, "run", f"s{i}"] if w)
                     for i in range(SERVICES)]
            exports = "".join(f"export {k}={v}\n" for k, v in exported.items())
            script = folder / f"serve{k}.sh"
            script.write_text(exports + "\n".join(lines) + "\n", "utf-8")
            shown = f"{below}/{script.name}" if below else script.name
            doc = load_engine_document(script, shown)
            sources = commands_of(doc.data, doc, (), doc.data)
            assert len(sources) == len(lines)
            for line, source, i in zip(lines, sources, range(SERVICES), strict=True):
                joined = in_container(source, script)
                if not isinstance(joined, Joined):
                    unsettled += 1
                    continue
                service = oracle[f"s{i}"]
                argv, env = _expected(service, line)
                ours = (list(joined.command.argv), dict(joined.command.env.items()))
                if ours == (argv, env) and joined.image == service["image"]:
                    agreed += 1
                else:
                    wrong.append(f"{shown}: {line!r}: ours {ours!r} {joined.image!r} "
                                 f"compose {(argv, env)!r} {service['image']!r}")
    return {"agreed": agreed, "unsettled": unsettled, "wrong": wrong}


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose (1.29) not installed")
def test_compose_projects_agree_with_compose_or_are_unsettled(tmp_path: Path) -> None:
    counts = run_corpus(PROJECTS, tmp_path)
    assert not counts["wrong"], "\n".join(counts["wrong"][:3])
    # every line here is settled: the files are all inside, no variable is unset
    assert counts["unsettled"] == 0
    assert counts["agreed"] == PROJECTS * len(VARIANTS) * SERVICES


def _normal(service: dict[str, Any]) -> tuple[Any, dict[str, str], Any]:
    """A service's command (split as shellwords splits a string), environment (a list
    read item by item, the last of a name winning) and image."""
    command = service.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        raw = dict(item.partition("=")[::2] for item in raw)
    env = {str(k): "" if v is None else str(v) for k, v in raw.items()}
    return command, env, service.get("image")


def named_corpus(projects: int, tmp: Path, seed: int = 25) -> dict[str, Any]:
    """A Compose file the claims file names, with ``COMPOSE_FILE`` in the ``.env``
    beside it listing it among the others: specgate's model against ``docker-compose
    config`` in that folder, service by service."""
    rng = random.Random(seed)
    agreed = 0
    wrong: list[str] = []
    orders = ["base.yaml:prod.yaml", "prod.yaml:base.yaml:extra.yaml", "base.yaml"]
    for n in range(projects):
        top = tmp / f"n{n}"
        (top / ".git").mkdir(parents=True)
        for name, data in _files(rng).items():
            (top / name).write_text(yaml.safe_dump(data), "utf-8")
        for order in orders:
            (top / ".env").write_text(f"TAG={TAG}\nCOMPOSE_FILE={order}\n", "utf-8")
            oracle = _config(top, tmp, "", {})
            model = load_engine_document(top / "base.yaml", "base.yaml").data["services"]
            for name, service in oracle.items():
                if _normal(model[name]) == _normal(service):
                    agreed += 1
                else:
                    wrong.append(f"{order} {name}: ours {_normal(model[name])!r} "
                                 f"compose {_normal(service)!r}")
    return {"agreed": agreed, "wrong": wrong}


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose (1.29) not installed")
def test_a_named_file_listed_in_compose_file_agrees_with_compose(tmp_path: Path) -> None:
    counts = named_corpus(PROJECTS, tmp_path)
    assert not counts["wrong"], "\n".join(counts["wrong"][:3])
    assert counts["agreed"] == PROJECTS * 3 * SERVICES


#: (the words before ``run``) for a project in ``deploy/`` whose services name their
#: ``env_file:`` relative paths, with an ``e.env`` of another value in each other
#: folder: Compose takes the path from the project's working folder,
#: ``--project-directory`` when given, else the first ``-f`` file's folder
#: (compose-go ``paths/resolve.go@e70e961c``, ``ResolveRelativePaths``:
#: ``services.*.env_file.*.path`` joined to the working folder, which
#: ``cli/options.go@e70e961c`` ``WithWorkingDirectory`` sets so)
ENV_FILE_VARIANTS = [
    "--project-directory deploy",
    "--project-directory=deploy",
    "-f deploy/compose.yaml",
    "--project-directory other -f deploy/compose.yaml",
    "--project-directory deploy -f deploy/compose.yaml",
    "-f deploy/compose.yaml -f deploy/prod.yaml",
    "--project-directory other -f deploy/compose.yaml -f deploy/prod.yaml",
]


def env_file_corpus(tmp: Path, seed: int = 26) -> dict[str, Any]:
    """``docker compose --project-directory DIR`` / ``-f`` run lines of services with
    ``env_file:`` against ``docker-compose config`` with the same words, from the
    script's folder: counts agreed, unsettled, wrong."""
    rng = random.Random(seed)
    top = tmp / "pd"
    (top / ".git").mkdir(parents=True)
    base: dict[str, Any] = {}
    prod: dict[str, Any] = {}
    for i in range(SERVICES):
        base[f"s{i}"] = {"image": "vllm/vllm-openai:v0.26.0",
                         "command": ["/models/m", "--x", str(i)],
                         "env_file": rng.choice(["e.env", ["e.env", "f.env"], "./e.env"])}
        if rng.random() < 0.5:
            prod[f"s{i}"] = {"env_file": "f.env", "environment": {"B": f"prod{i}"}}
    for folder in ("deploy", "other", ""):
        where = top / folder if folder else top
        where.mkdir(exist_ok=True)
        tag = folder or "top"
        (where / "e.env").write_text(f"A={tag}-e\nB={tag}-b\n", "utf-8")
        (where / "f.env").write_text(f"B={tag}-f\nC={tag}-c\n", "utf-8")
    (top / "deploy" / "compose.yaml").write_text(yaml.safe_dump({"services": base}), "utf-8")
    (top / "deploy" / "prod.yaml").write_text(yaml.safe_dump({"services": prod}), "utf-8")
    agreed = unsettled = 0
    wrong: list[str] = []
    for k, words in enumerate(ENV_FILE_VARIANTS):
        oracle = _config(top, tmp, words, {})
        program = rng.choice(["docker compose", "docker-compose"])
        lines = [f"{program} {words} run s{i}" for i in range(SERVICES)]
        script = top / f"serve{k}.sh"
        script.write_text("\n".join(lines) + "\n", "utf-8")
        doc = load_engine_document(script, script.name)
        sources = commands_of(doc.data, doc, (), doc.data)
        for line, source, i in zip(lines, sources, range(SERVICES), strict=True):
            joined = in_container(source, script)
            if not isinstance(joined, Joined):
                unsettled += 1
                continue
            argv, env = _expected(oracle[f"s{i}"], line)
            ours = (list(joined.command.argv), dict(joined.command.env.items()))
            if ours == (argv, env):
                agreed += 1
            else:
                wrong.append(f"{line!r}: ours {ours!r} compose {(argv, env)!r}")
    return {"agreed": agreed, "unsettled": unsettled, "wrong": wrong}


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose (1.29) not installed")
def test_env_file_paths_are_taken_from_the_project_directory_as_compose_takes_them(
    tmp_path: Path,
) -> None:
    counts = env_file_corpus(tmp_path)
    assert not counts["wrong"], "\n".join(counts["wrong"][:3])
    # every file is inside the repository and every variable set: all settled
    assert counts["unsettled"] == 0
    assert counts["agreed"] == len(ENV_FILE_VARIANTS) * SERVICES
