"""Environment files a container starts with (new-user trial D3): a variable set in
``docker run --env-file FILE`` or a Compose service's ``env_file:`` is what the engine
reads, and one the files leave unsettled is SG313 / SG314, never read as unset (which
judged the engine's default D, 16 for llama.cpp at b6000, in place of the one that runs).
docs/engines.md#environment-files.

Expected values are worked by hand: LLAMA_ARG_DRAFT_MAX stands for --draft-max
(llama.cpp common/arg.cpp ``set_env``, data/engines/llamacpp.json); the claimed 2× passes
at D 4 (AL / (β + ρ·D) = 3 / (1 + 0.1·4) = 2.1429) and fails at D 16 (3 / 2.6 = 1.1538).
Which value docker and Compose give each line is held to the runners in
tests/oracle/test_env_files_oracle.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

from specgate.cli.main import main

IMAGE = "ghcr.io/ggml-org/llama.cpp:server-cuda-b6000"
CLAIMS = """version: 1
deployments:
  - name: llama
    speculation:
      enabled: true
      engine_config: {serving}
      draft_depth_ratio: 0.1{stated}
    evidence:
      accept_length: 3.0
      cache_coherence_eval: true
    claims:
      speedup: 2.0
"""


def check(tmp: Path, files: dict[str, str], serving: str, stated: str = "") -> tuple[int, Any]:
    (tmp / ".git").mkdir()
    for name, text in files.items():
        (tmp / name).write_text(text)
    (tmp / "c.specgate.yaml").write_text(CLAIMS.format(serving=serving, stated=stated))
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(tmp)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", "--format", "json", "c.specgate.yaml"])
    finally:
        os.chdir(here)
    (dep,) = json.loads(out.getvalue())["files"][0]["deployments"]
    return code, dep


def codes(dep: Any) -> list[str]:
    return [f["code"] for f in dep["findings"]]


def run_sh(options: str) -> str:
    return f"#!/bin/sh\ndocker run --gpus all {options} {IMAGE} -m /m.gguf -md /d.gguf\n"


def test_docker_run_env_file_sets_d(tmp_path: Path) -> None:
    env = "# draft\nLLAMA_ARG_DRAFT_MAX=4\n"
    code, dep = check(tmp_path, {"run.sh": run_sh("--env-file llama.env"), "llama.env": env},
                      "run.sh")
    assert dep["inputs"]["engine"]["draft_length"] == 4
    assert "SG104" not in codes(dep) and code == 0


def test_e_wins_over_the_env_file(tmp_path: Path) -> None:
    # docker/cli ReadKVEnvStrings: the files first, then every -e
    files = {"run.sh": run_sh("-e LLAMA_ARG_DRAFT_MAX=4 --env-file llama.env"),
             "llama.env": "LLAMA_ARG_DRAFT_MAX=16\n"}
    _, dep = check(tmp_path, files, "run.sh")
    assert dep["inputs"]["engine"]["draft_length"] == 4


def test_compose_env_file_sets_d_under_environment(tmp_path: Path) -> None:
    compose = (
        f"services:\n  llama:\n    image: {IMAGE}\n    env_file: [a.env, b.env]\n"
        "    command: -m /m.gguf -md /d.gguf\n"
    )
    # b.env after a.env wins (docker-compose 1.29 resolve_environment)
    files = {"compose.yaml": compose, "a.env": "LLAMA_ARG_DRAFT_MAX=16\n",
             "b.env": "LLAMA_ARG_DRAFT_MAX='4'\n"}
    code, dep = check(tmp_path, files, "compose.yaml")
    assert dep["inputs"]["engine"]["draft_length"] == 4
    assert code == 0
    # environment: wins over every env_file
    compose2 = compose.replace("    command:", "    environment: {LLAMA_ARG_DRAFT_MAX: 4}\n"
                               "    command:").replace("[a.env, b.env]", "a.env")
    (tmp_path / "x").mkdir()
    _, dep = check(tmp_path / "x", {"compose.yaml": compose2, "a.env": files["a.env"]},
                   "compose.yaml")
    assert dep["inputs"]["engine"]["draft_length"] == 4


def test_a_missing_env_file_is_the_deployments(tmp_path: Path) -> None:
    # the file is not in the repository: it may set LLAMA_ARG_* when the container
    # starts, so D is not read as the default: SG313 at the --env-file line, claims D used
    code, dep = check(tmp_path, {"run.sh": run_sh("--env-file /etc/llama.env")}, "run.sh",
                      stated="\n      mechanism: draft_model\n      draft_length: 4")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG313"]
    # `docker run --gpus all --env-file ` is 33 characters: the file's name at column 34
    assert (hit["file"], hit["line"], hit["column"], hit["severity"]) == ("run.sh", 2, 34, "warn")
    assert "/etc/llama.env" in hit["message"] and "`LLAMA_ARG_" in hit["message"]
    assert "SG104" not in codes(dep) and code == 0


def test_e_name_from_the_environment_is_the_deployments(tmp_path: Path) -> None:
    # `-e LLAMA_ARG_DRAFT_MAX` with nothing in the script setting it: docker passes the
    # value of the environment it runs in
    _, dep = check(tmp_path, {"run.sh": run_sh("-e LLAMA_ARG_DRAFT_MAX")}, "run.sh",
                   stated="\n      mechanism: draft_model\n      draft_length: 4")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG313"]
    assert hit["message"].startswith("`LLAMA_ARG_DRAFT_MAX`")


def test_a_value_compose_readers_differ_on_is_the_repositorys(tmp_path: Path) -> None:
    compose = (
        f"services:\n  llama:\n    image: {IMAGE}\n    env_file: llama.env\n"
        "    command: -m /m.gguf -md /d.gguf\n"
    )
    files = {"compose.yaml": compose, "llama.env": "A=1\nLLAMA_ARG_DRAFT_MAX=${D:-4}\n"}
    code, dep = check(tmp_path, files, "compose.yaml",
                      stated="\n      mechanism: draft_model\n      draft_length: 4")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG314"]
    assert (hit["file"], hit["line"]) == ("llama.env", 2)
    assert code == 1


def test_the_command_line_flag_wins_over_an_unread_file(tmp_path: Path) -> None:
    # --draft-max on the command line wins over LLAMA_ARG_DRAFT_MAX, so the finding
    # names another variable the unread file may set (--spec-type: the method)
    script = run_sh("--env-file /etc/llama.env").replace("-md /d.gguf", "-md /d.gguf --draft-max 4")
    _, dep = check(tmp_path, {"run.sh": script}, "run.sh")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG313"]
    assert hit["message"].startswith("`LLAMA_ARG_SPEC_TYPE`")
    assert "LLAMA_ARG_DRAFT_MAX" not in hit["message"]


def test_compose_run_reads_the_services_env_file(tmp_path: Path) -> None:
    # `docker compose run llama` runs the service with its env_file (under -e)
    compose = (
        f"services:\n  llama:\n    image: {IMAGE}\n    env_file: llama.env\n"
        "    command: -m /m.gguf -md /d.gguf\n"
    )
    files = {"compose.yaml": compose, "llama.env": "LLAMA_ARG_DRAFT_MAX=4\n",
             "run.sh": "#!/bin/sh\ndocker compose run --rm llama\n"}
    _, dep = check(tmp_path, files, "run.sh")
    assert dep["inputs"]["engine"]["draft_length"] == 4


def manifest(env: str, config_map: str = "LLAMA_ARG_DRAFT_MAX: \"4\"") -> str:
    """A ConfigMap `spec` and a Deployment whose container takes ``env`` (lines at its
    indentation)."""
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spec\ndata:\n"
        f"  {config_map}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llama\nspec:\n"
        "  template:\n    spec:\n      containers:\n        - name: server\n"
        f"          image: {IMAGE}\n"
        '          args: ["-m", "/m.gguf", "-md", "/d.gguf"]\n' + env
    )


ENV_FROM = "          envFrom:\n            - configMapRef: {name: spec}\n"
VALUE_FROM = (
    "          env:\n            - name: LLAMA_ARG_DRAFT_MAX\n              valueFrom:\n"
    "                configMapKeyRef: {name: spec, key: LLAMA_ARG_DRAFT_MAX}\n"
)


def test_kubernetes_env_from_a_config_map_in_the_manifest(tmp_path: Path) -> None:
    # Kubernetes, "Configure a Pod to Use a ConfigMap": envFrom sets every key of the
    # ConfigMap; valueFrom.configMapKeyRef one. Both give D 4 (line 6 of the manifest)
    for name, env in (("from", ENV_FROM), ("key", VALUE_FROM)):
        (tmp_path / name).mkdir()
        code, dep = check(tmp_path / name, {"deploy.yaml": manifest(env)}, "deploy.yaml")
        assert dep["inputs"]["engine"]["draft_length"] == 4, name
        assert code == 0


def test_kubernetes_env_is_over_env_from(tmp_path: Path) -> None:
    # "the value defined by env takes precedence over envFrom"
    env = ENV_FROM + "          env:\n            - {name: LLAMA_ARG_DRAFT_MAX, value: \"4\"}\n"
    _, dep = check(tmp_path, {"deploy.yaml": manifest(env, 'LLAMA_ARG_DRAFT_MAX: "16"')},
                   "deploy.yaml")
    assert dep["inputs"]["engine"]["draft_length"] == 4


def test_kubernetes_secrets_are_the_clusters(tmp_path: Path) -> None:
    # a Secret (or a ConfigMap not in the manifest) is supplied by the cluster: SG313,
    # never the engine's default D read in its place
    secret = VALUE_FROM.replace("configMapKeyRef", "secretKeyRef")
    _, dep = check(tmp_path, {"deploy.yaml": manifest(secret)}, "deploy.yaml",
                   stated="\n      mechanism: draft_model\n      draft_length: 4")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG313"]
    assert hit["message"].startswith("`LLAMA_ARG_DRAFT_MAX`")
    assert "SG104" not in codes(dep)


def test_compose_environment_name_without_a_value_is_the_deployments(tmp_path: Path) -> None:
    # `environment: [LLAMA_ARG_DRAFT_MAX]`: Compose passes the value of the environment
    # it runs in (held to docker-compose 1.29 in tests/oracle/test_env_files_oracle.py)
    compose = (
        f"services:\n  llama:\n    image: {IMAGE}\n    command: -m /m.gguf -md /d.gguf\n"
        "    environment:\n      - LLAMA_ARG_DRAFT_MAX\n"
    )
    _, dep = check(tmp_path, {"compose.yaml": compose}, "compose.yaml",
                   stated="\n      mechanism: draft_model\n      draft_length: 4")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG313"]
    assert (hit["file"], hit["line"]) == ("compose.yaml", 6)
    assert hit["message"].startswith("`LLAMA_ARG_DRAFT_MAX`")


def test_env_files_past_the_bound_are_not_read(tmp_path: Path) -> None:
    # 65 names of one file (MAX_ENV_FILES is 64): not read 65 times, the variables not
    # settled (SG314 at the command), never read as unset
    options = " ".join(["--env-file llama.env"] * 65)
    _, dep = check(tmp_path, {"run.sh": run_sh(options), "llama.env": "LLAMA_ARG_DRAFT_MAX=4\n"},
                   "run.sh", stated="\n      mechanism: draft_model\n      draft_length: 4")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG314"]
    assert hit["file"] == "run.sh" and "65 environment files" in hit["details"]
