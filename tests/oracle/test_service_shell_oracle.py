"""Compose and the container's shell as the oracle of a service that runs its command
through ``sh -c`` (new-user trial D5: ``$$VAR`` set by the service's own ``environment:``
was called "set outside the repository"; docs/engines.md#a-services-own-shell).

Each project is run as Compose would start it, without a daemon: ``docker-compose config``
(1.29) gives the service's entrypoint, command and environment (``env_file`` under
``environment:``; ``config`` prints ``$$`` as written, and the container gets ``$``:
Compose reference, "Interpolation": "use a double-dollar sign ($$) ... to prevent
Compose from processing the value"); then ``dash``, the ``sh`` of the engines' Debian
and Ubuntu images, runs that argv with exactly that environment and a stub engine
printing its argv. specgate's reading of the Compose file must give the D the stub
received, or leave D unsettled, with the origin worked out by hand.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml
from tests.oracle import shell_oracle

from specgate.core.errors import InputError, UnsettledValue
from specgate.inputs.engines import read_engine_file

COMPOSE = shutil.which("docker-compose")
DASH = shutil.which("dash")

#: the script; $$N is the container shell's $N
SCRIPT = (
    "vllm serve m --speculative-config "
    "'{\"method\":\"eagle3\",\"model\":\"y\",\"num_speculative_tokens\":'$$N'}'"
)
HEAD = "services:\n  s:\n    image: vllm/vllm-openai:v0.11.0\n"
RUN = f"    entrypoint: [sh, -c]\n    command: [{json.dumps(SCRIPT)}]\n"

#: name -> (compose file after the service's image line, files beside it, D specgate
#: reads; or the origin of the value it leaves unsettled)
CASES: dict[str, tuple[str, dict[str, str], int | str]] = {
    "environment": (RUN + "    environment: {N: '4'}\n", {}, 4),
    "environment-list": (RUN + "    environment: [N=5]\n", {}, 5),
    "env-file": (RUN + "    env_file: n.env\n", {"n.env": "N=6\n"}, 6),
    "environment-over-env-file": (
        RUN + "    env_file: n.env\n    environment: {N: '7'}\n", {"n.env": "N=6\n"}, 7
    ),
    "dotenv-interpolated": (RUN + "    environment: {N: '${D}'}\n", {".env": "D=3\n"}, 3),
    "default-in-script": (RUN.replace("$$N", "$${N:-2}"), {}, 2),
    # the value of Compose's own environment, which nothing in the repository sets
    "environment-name-only": (RUN + "    environment: [N]\n", {}, "outside"),
    "not-set": (RUN, {}, "outside"),
    # an env_file line python-dotenv and compose-go read differently
    "env-file-not-followed": (RUN + "    env_file: n.env\n", {"n.env": 'N="${X:-8}"\n'},
                              "repository"),
    # sh -c in command: on an image with no ENTRYPOINT (SGLang's sets none)
    "command-list": (
        "    command: [sh, -c, " + json.dumps(SCRIPT) + "]\n"
        "    environment: {N: '3'}\n",
        {},
        3,
    ),
}


def specgate_reads(folder: Path) -> int | str:
    try:
        config = read_engine_file(folder / "compose.yaml", "compose.yaml", engine="vllm")
    except UnsettledValue as exc:
        return exc.origin
    except InputError as exc:
        return f"error: {exc}"
    assert config.draft_length is not None
    return config.draft_length


def write(folder: Path, name: str) -> None:
    body, files, _ = CASES[name]
    head = HEAD.replace("vllm/vllm-openai:v0.11.0", "lmsysorg/sglang:v0.5.6") if (
        name == "command-list"
    ) else HEAD
    (folder / "compose.yaml").write_text(head + body, "utf-8")
    for file, text in files.items():
        (folder / file).write_text(text, "utf-8")


@pytest.mark.parametrize("name", CASES)
def test_specgate_reads_what_was_worked_by_hand(tmp_path: Path, name: str) -> None:
    write(tmp_path, name)
    assert specgate_reads(tmp_path) == CASES[name][2]


def container_d(folder: Path) -> int | None:
    """D as the container's shell passes it to the engine (None: no engine ran)."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder)}
    config = subprocess.run(
        [str(COMPOSE), "-f", "compose.yaml", "config"], cwd=folder, env=base,
        capture_output=True, timeout=60, check=True,
    )
    service = yaml.safe_load(config.stdout)["services"]["s"]
    argv = [
        word.replace("$$", "$")
        for word in [*(service.get("entrypoint") or []), *(service.get("command") or [])]
    ]
    assert argv[:2] == ["sh", "-c"], argv
    with tempfile.TemporaryDirectory(prefix="sgsh-") as where:
        bin_dir = shell_oracle._stubs(Path(where))
        env = {
            k: str(v).replace("$$", "$")
            for k, v in (service.get("environment") or {}).items() if v is not None
        }
        run = subprocess.run(
            [str(DASH), *argv[1:]], env={"PATH": f"{bin_dir}:/usr/bin:/bin", **env},
            capture_output=True, timeout=30, check=False, cwd=where,
        )
    lines = [x for x in run.stdout.decode().splitlines() if x.startswith(shell_oracle.MARK)]
    if not lines:
        return None
    ran = json.loads(lines[-1][len(shell_oracle.MARK):])
    reading = shell_oracle.reading(shell_oracle.literal(ran), "engine.sh")
    return reading[2] if reading[0] == "vllm" else None  # type: ignore[return-value]


@pytest.mark.skipif(COMPOSE is None or DASH is None, reason="docker-compose and dash")
@pytest.mark.parametrize("name", [n for n, c in CASES.items() if isinstance(c[2], int)])
def test_the_container_shell_runs_the_d_specgate_settles(tmp_path: Path, name: str) -> None:
    write(tmp_path, name)
    assert container_d(tmp_path) == CASES[name][2]


@pytest.mark.skipif(COMPOSE is None or DASH is None, reason="docker-compose and dash")
def test_a_name_left_to_compose_runs_as_its_environment_sets_it(tmp_path: Path) -> None:
    # `environment: [N]` and a service that does not set N: what runs depends on the
    # environment docker-compose runs in (here none: no engine gets a D)
    for name in ("environment-name-only", "not-set"):
        folder = tmp_path / name
        folder.mkdir()
        write(folder, name)
        assert container_d(folder) is None


def kubernetes(env: str, args: str = json.dumps(SCRIPT.replace("$$N", "$N"))) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.11.0\n          command: [sh, -c]\n"
        f"          args: [{args}]\n" + env
    )


#: Kubernetes ("Define a Command and Arguments for a Container", "Define Environment
#: Variables for a Container"): `command` replaces the ENTRYPOINT, `args` follow it, the
#: shell sees the container's env; name -> (env lines, D or origin)
KUBERNETES: dict[str, tuple[str, int | str]] = {
    "env": ("          env: [{name: N, value: '4'}]\n", 4),
    "secret": (
        "          env:\n            - name: N\n              valueFrom:\n"
        "                secretKeyRef: {name: s, key: n}\n",
        "outside",
    ),
    "not-set": ("", "outside"),
    # the kubelet expands $(M) from the item before it (docs/engines.md#environment-values)
    "dependent": ("          env: [{name: M, value: '5'}, {name: N, value: '$(M)'}]\n", 5),
}


@pytest.mark.parametrize("name", KUBERNETES)
def test_a_kubernetes_containers_shell_sees_its_env(tmp_path: Path, name: str) -> None:
    env, expected = KUBERNETES[name]
    (tmp_path / "deploy.yaml").write_text(kubernetes(env), "utf-8")
    if isinstance(expected, str):
        with pytest.raises(UnsettledValue) as raised:
            read_engine_file(tmp_path / "deploy.yaml", "deploy.yaml", engine="vllm")
        assert raised.value.origin == expected
    else:
        config = read_engine_file(tmp_path / "deploy.yaml", "deploy.yaml", engine="vllm")
        assert config.draft_length == expected
