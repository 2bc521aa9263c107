"""``docker compose run`` in a script, joined with its service, against Compose.

The service's model (image, command, entrypoint, environment, after ``.env``
interpolation and the override file) is what ``docker-compose config`` prints (Debian's
docker-compose 1.29: ``config`` needs no daemon). What the ``run`` line then changes is
Compose's own rule, ``docker/compose:pkg/compose/run.go@v5.5.0`` (``applyRunOptions``):
a COMMAND replaces the service's ``command``; ``--entrypoint`` (split by shellwords,
``cmd/compose/run.go``) replaces its ``entrypoint`` and, with no COMMAND, clears the
``command``; ``-e NAME=value`` overrides its ``environment``. The container then runs
ENTRYPOINT + CMD (docs.docker.com/reference/dockerfile/#understand-how-cmd-and-entrypoint-
interact; compose-spec ``05-services.md``: an ``entrypoint`` drops the image's CMD), the
image's own ENTRYPOINT being its Dockerfile's (``image-entrypoints.json``).

The ``run`` options (each a value-taking option of ``cmd/compose/run.go@v5.5.0`` or a
switch) and the global ones before ``run`` (``cmd/compose/compose.go``) are skipped by
the recorded tables: a value word taken for the SERVICE would show as a wrong or an
unsettled service here. specgate must give Compose's argv and environment, or leave the
line unjoined (unsettled); never another value.

Skipped when ``docker-compose`` is not installed (``.ci/run`` installs it when it can).
``SPECGATE_ORACLE_CASES`` sets the number of projects.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.in_container import in_container
from specgate.inputs.engines.placed import Joined
from specgate.inputs.engines.read import load_engine_document

COMPOSE = shutil.which("docker-compose")
PROJECTS = int(os.environ.get("SPECGATE_ORACLE_CASES", "3"))
SERVICES = 8
IMAGES = {
    # image → (ENTRYPOINT, CMD) of its Dockerfile (image-entrypoints.json)
    "vllm/vllm-openai:v0.26.0": (["vllm", "serve"], []),
    "vllm/vllm-openai:${TAG}": (["vllm", "serve"], []),
    "lmsysorg/sglang:v0.5.4": ([], []),
    "ghcr.io/ggml-org/llama.cpp:server-cuda-b9733": (["/app/llama-server"], []),
}
RUN_OPTIONS = [
    "--rm", "-T", "-d", "-e X=1", "-eY=2", "--env=Z=3", "--name n1", "-v a:/b",
    "-p 8000:8000", "-w /w", "-u 1000", "-l k=v", "--service-ports", "--no-deps",
    "--dry-run", "-e HF_HOME=/over", "--use-aliases", "-P", "--pull never",
]
ENTRYPOINTS = ["--entrypoint 'python3 -m x'", "--entrypoint=/bin/serve", "--entrypoint ''"]
GLOBALS = ["", "-p proj", "--project-directory .", "--profile p", "--ansi never"]


def _service(rng: random.Random, i: int, dotenv: list[str]) -> dict[str, Any]:
    service: dict[str, Any] = {"image": rng.choice(sorted(IMAGES))}
    words = ["/models/m", "--speculative-num-steps", str(i), "--x"]
    form = rng.random()
    if form < 0.4:
        service["command"] = words
    elif form < 0.7:
        service["command"] = " ".join(words)
    if rng.random() < 0.3:
        service["entrypoint"] = rng.choice([["python3", "-m", "srv"], "python3 -m srv", []])
    var = f"V{i}"
    if rng.random() < 0.5:
        dotenv.append(f"{var}=from-env")
    env: Any = {"HF_HOME": "/cache", "A": f"${{{var}:-d}}"}
    if rng.random() < 0.5:
        env = [f"{k}={v}" for k, v in env.items()]
    service["environment"] = env
    return service


def _line(rng: random.Random, name: str, override: bool) -> str:
    options = rng.sample(RUN_OPTIONS, rng.randint(0, 4))
    if rng.random() < 0.3:
        options.append(rng.choice(ENTRYPOINTS))
    rng.shuffle(options)
    globals_ = rng.choice(GLOBALS + ([] if override else ["-f compose.yaml"]))
    program = rng.choice(["docker compose", "docker-compose"])
    command = rng.choice(["", "/m2 --y 1", "-c 'a b'"])
    return " ".join(w for w in [program, globals_, "run", *options, name, command] if w)


def _expected(service: dict[str, Any], line: str) -> tuple[list[str], dict[str, str]]:
    """The argv and environment by Compose's rules (module doc), from the service
    ``docker-compose config`` printed and the run line's words."""
    words = shlex.split(line)
    at = words.index("run") + 1
    run_entrypoint: list[str] | None = None
    env_over: dict[str, str] = {}
    takes_value = {"-e", "--name", "-v", "-p", "-w", "-u", "-l", "--entrypoint", "--pull"}
    while words[at].startswith("-"):
        word = words[at]
        name, eq, inline = word.partition("=")
        if word.startswith("-e") and not word.startswith("--") and len(word) > 2:
            name, eq, inline = "-e", "=", word[2:]
        value = inline if eq else None
        if name in takes_value and not eq:
            at += 1
            value = words[at]
        if name in ("-e", "--env") and value is not None:
            key, _, val = value.partition("=")
            env_over[key] = val
        if name == "--entrypoint" and value is not None:
            run_entrypoint = shlex.split(value)
        at += 1
    run_command = words[at + 1:]
    entrypoint = run_entrypoint
    if entrypoint is None and service.get("entrypoint") is not None:
        raw = service["entrypoint"]
        entrypoint = shlex.split(raw) if isinstance(raw, str) else list(raw)
    command: list[str] | None
    if run_command:
        command = run_command
    elif run_entrypoint is not None:
        command = []
    elif service.get("command") is not None:
        raw = service["command"]
        command = shlex.split(raw) if isinstance(raw, str) else list(raw)
    else:
        command = None
    image_entry, image_cmd = IMAGES[_image_key(service["image"])]
    if entrypoint is not None:
        argv = entrypoint + (command or [])
    else:
        argv = image_entry + (command if command is not None else image_cmd)
    env = {k: "" if v is None else str(v) for k, v in (service.get("environment") or {}).items()}
    env.update(env_over)
    return argv, env


def _image_key(image: str) -> str:
    return "vllm/vllm-openai:${TAG}" if image.startswith("vllm/vllm-openai:v0.2") and \
        image != "vllm/vllm-openai:v0.26.0" else image


def run_corpus(projects: int, tmp: Path, seed: int = 24) -> dict[str, Any]:
    """Counts over ``projects`` × :data:`SERVICES` run lines: agreed, unsettled, wrong."""
    assert COMPOSE is not None
    rng = random.Random(seed)
    agreed = unsettled = 0
    wrong: list[str] = []
    for n in range(projects):
        folder = tmp / f"p{n}"
        folder.mkdir()
        (folder / ".git").mkdir()
        dotenv = ["TAG=v0.27.1"]
        services = {f"s{i}": _service(rng, i, dotenv) for i in range(SERVICES)}
        (folder / "compose.yaml").write_text(yaml.safe_dump({"services": services}), "utf-8")
        override = rng.random() < 0.4
        if override:
            (folder / "compose.override.yaml").write_text(
                yaml.safe_dump({"services": {"s0": {"command": ["/over", "--z"]}}}), "utf-8"
            )
        (folder / ".env").write_text("\n".join(dotenv) + "\n", "utf-8")
        lines = [_line(rng, name, override) for name in services]
        (folder / "serve.sh").write_text("\n".join(lines) + "\n", "utf-8")
        out = subprocess.run(
            [COMPOSE, "config"], check=False, cwd=folder, capture_output=True, text=True,
            timeout=120, env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp)},
        )
        assert out.returncode == 0, out.stderr
        oracle = yaml.safe_load(out.stdout)["services"]
        script = folder / "serve.sh"
        doc = load_engine_document(script, "serve.sh")
        sources = commands_of(doc.data, doc, (), doc.data)
        assert len(sources) == len(lines)
        for line, source, name in zip(lines, sources, services, strict=True):
            joined = in_container(source, script)
            if not isinstance(joined, Joined):
                unsettled += 1
                continue
            argv, env = _expected(oracle[name], line)
            ours = (list(joined.command.argv), dict(joined.command.env.items()))
            if ours == (argv, env) and joined.image == oracle[name]["image"]:
                agreed += 1
            else:
                wrong.append(f"{line!r}: ours {ours!r} compose {(argv, env)!r}")
    return {"agreed": agreed, "unsettled": unsettled, "wrong": wrong}


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose (1.29) not installed")
def test_compose_run_agrees_with_compose_or_is_unsettled(tmp_path: Path) -> None:
    counts = run_corpus(PROJECTS, tmp_path)
    assert not counts["wrong"], "\n".join(counts["wrong"][:3])
    assert counts["agreed"] > PROJECTS * SERVICES // 2
