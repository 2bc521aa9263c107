"""``podman-compose run`` in a script, joined with its service, against podman-compose.

podman-compose 1.6.0 itself (PyPI ``podman-compose==1.6.0``) is run on generated
projects with a stand-in ``podman`` on PATH that records the argv it is given (nothing
runs in a container). The oracle is the ``podman run`` line podman-compose builds: the
``-e`` values, the ``--entrypoint`` JSON array, the image and the command after it; the
container then runs ENTRYPOINT + command as podman's ``makeCommand`` assembles them
(``containers/podman:pkg/specgen/generate/oci.go@v5.8.2``: the entrypoint given, else
the image's, then the command, else the image's CMD when no entrypoint was given), with
the image's ENTRYPOINT from its Dockerfile (``image-entrypoints.json``). The podman run
words are split by podman's recorded option table (``container-runners.json``).

specgate must give podman-compose's argv and environment, or leave the line unjoined;
never another value. Skipped when podman-compose is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.in_container import in_container
from specgate.inputs.engines.placed import Joined
from specgate.inputs.engines.read import load_engine_document
from specgate.inputs.runners import read_runner

HAVE = importlib.util.find_spec("podman_compose") is not None
PROJECTS = int(os.environ.get("SPECGATE_ORACLE_CASES", "3"))
SERVICES = 6
IMAGES = {
    "vllm/vllm-openai:v0.26.0": ["vllm", "serve"],
    "lmsysorg/sglang:v0.5.4": [],
    "ghcr.io/ggml-org/llama.cpp:server-cuda-b9733": ["/app/llama-server"],
}
RUN_OPTIONS = [
    "--rm", "-T", "-e X=1", "-eY=2", "--env=Z=3", "--name n1", "-v a:/b", "-p 8000:8000",
    "-w /w", "-u 1000", "-l k=v", "--service-ports", "--no-deps", "-e HF_HOME=/over",
    "--entrypoint 'python3 -m x'", "--entry=/bin/serve", "--volu c:/d",
]
FAKE = """#!/usr/bin/env python3
import json, os, sys
if sys.argv[1:2] == ["--version"]:
    print("podman version 5.8.2")
    sys.exit(0)
with open(os.environ["FAKE_PODMAN_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def _service(rng: random.Random, i: int) -> dict[str, Any]:
    service: dict[str, Any] = {"image": rng.choice(sorted(IMAGES))}
    words = ["/models/m", "--speculative-num-steps", str(i), "--x"]
    form = rng.random()
    if form < 0.4:
        service["command"] = words
    elif form < 0.7:
        service["command"] = " ".join(words) + " 'a b'"
    if rng.random() < 0.3:
        service["entrypoint"] = rng.choice([["python3", "-m", "srv"], "python3 -m 'srv x'"])
    env = {"HF_HOME": "/cache", "A": str(i)}
    service["environment"] = env if rng.random() < 0.5 else [f"{k}={v}" for k, v in env.items()]
    return service


def _line(rng: random.Random, name: str) -> str:
    options = rng.sample(RUN_OPTIONS, rng.randint(0, 4))
    globals_ = rng.choice(["", "-p proj", "-f compose.yaml", "--verbose", "--in-pod false"])
    command = rng.choice(["", "/m2 --y 1", "-c 'a b'"])
    return " ".join(w for w in ["podman-compose", globals_, "run", *options, name, command] if w)


def _oracle(folder: Path, line: str, fake: Path, log: Path) -> tuple[list[str], dict[str, str]]:
    """podman-compose's podman run line, as the argv and environment it gives."""
    log.unlink(missing_ok=True)
    words = shlex.split(line)
    out = subprocess.run(
        [sys.executable, "-m", "podman_compose", *words[1:]], check=False, cwd=folder,
        capture_output=True, text=True, timeout=120,
        env={"PATH": f"{fake}:{os.environ.get('PATH', '')}", "HOME": str(folder),
             "FAKE_PODMAN_LOG": str(log)},
    )
    assert out.returncode == 0, out.stderr
    runs = [json.loads(x) for x in log.read_text("utf-8").splitlines()]
    (podman,) = [args for args in runs if args[:1] == ["run"]]
    launch = read_runner(["podman", *podman])
    assert launch is not None and launch.unsettled is None and launch.target is not None
    entrypoint = None
    env: dict[str, str] = {}
    for name, value in launch.options:
        if name == "entrypoint" and value is not None:
            entrypoint = json.loads(value)
        if name == "env" and value is not None:
            key, _, val = value.partition("=")
            env[key] = val
    command = list(launch.command or ())
    image_entry = IMAGES[launch.target]
    argv = (entrypoint if entrypoint is not None else image_entry) + command
    return argv, env


def run_corpus(projects: int, tmp: Path, seed: int = 24) -> dict[str, Any]:
    rng = random.Random(seed)
    fake = tmp / "bin"
    fake.mkdir()
    (fake / "podman").write_text(FAKE, "utf-8")
    (fake / "podman").chmod(0o755)
    agreed = unsettled = 0
    wrong: list[str] = []
    for n in range(projects):
        folder = tmp / f"p{n}"
        folder.mkdir()
        (folder / ".git").mkdir()
        services = {f"s{i}": _service(rng, i) for i in range(SERVICES)}
        (folder / "compose.yaml").write_text(yaml.safe_dump({"services": services}), "utf-8")
        lines = [_line(rng, name) for name in services]
        script = folder / "serve.sh"
        script.write_text("\n".join(lines) + "\n", "utf-8")
        doc = load_engine_document(script, "serve.sh")
        sources = commands_of(doc.data, doc, (), doc.data)
        for line, source in zip(lines, sources, strict=True):
            joined = in_container(source, script)
            if not isinstance(joined, Joined):
                unsettled += 1
                continue
            argv, env = _oracle(folder, line, fake, tmp / "log")
            ours = (list(joined.command.argv), dict(joined.command.env.items()))
            if ours == (argv, env):
                agreed += 1
            else:
                wrong.append(f"{line!r}: ours {ours!r} podman-compose {(argv, env)!r}")
    return {"agreed": agreed, "unsettled": unsettled, "wrong": wrong}


@pytest.mark.skipif(not HAVE, reason="podman-compose not installed")
def test_podman_compose_run_agrees_or_is_unsettled(tmp_path: Path) -> None:
    counts = run_corpus(PROJECTS, tmp_path)
    assert not counts["wrong"], "\n".join(counts["wrong"][:3])
    assert counts["agreed"] > PROJECTS * SERVICES // 2
