"""A Compose service that builds its image runs what its Dockerfile builds
(docs/engines.md#built-images).

Every expected version is worked by hand from the Dockerfile reference
(docs.docker.com/reference/dockerfile/: "Understand how ARG and FROM interact" — an ARG
before the first FROM is in scope for FROM only, and inside a stage after a valueless
``ARG NAME``; "Using ARG variables" — ENV overrides an ARG of the same name; a
``--build-arg`` replaces a declared ARG's default; ``--target`` picks a stage by name) and
the Compose file reference ("Build support": ``context`` relative to the project folder,
``dockerfile`` relative to the context, ``args`` as a mapping or ``NAME=value`` list, a
bare ``NAME`` taken from the environment; with ``image`` and ``build`` and no
``pull_policy`` Compose pulls the image first). docker/docs#19500: a COPY source with
``..`` above the context is stripped by BuildKit and refused by the legacy builder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.integration.test_engine_checks import Run, check, found  # noqa: F401

from specgate.inputs.engines import read_engine_file

COMMAND = (
    '    command: ["--model", "m", "--speculative-config", '
    "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}']\n"
)


def _service(build: str, extra: str = "") -> str:
    return f"services:\n  vllm:\n{extra}    build:{build}\n{COMMAND}"


def _read(root: Path, compose: str, files: dict[str, str], at: str = "compose.yaml"
          ) -> tuple[str | None, str, tuple[str, ...]]:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in {at: compose, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")
    config = read_engine_file(root / at, at)
    assert config.engine == "vllm"
    return config.version, config.version_source, config.notes


CTX = "\n      context: .\n"
TWO_STAGES = (
    "FROM vllm/vllm-openai:v0.27.1 AS serve\n"
    "FROM python:3.11-slim AS tools\n"
)


@pytest.mark.parametrize(
    ("build", "dockerfile", "version"),
    [
        # build: PATH, Dockerfile in it, the global ARG's default
        (" .", "ARG TAG=v0.29.0\nFROM vllm/vllm-openai:${TAG}\n", "0.29.0"),
        # build.args replaces the default (a mapping, then a list)
        (CTX + "      args:\n        TAG: v0.27.1\n",
         "ARG TAG=v0.29.0\nFROM vllm/vllm-openai:$TAG\n", "0.27.1"),
        (CTX + "      args:\n        - TAG=v0.27.1\n",
         "ARG TAG=v0.29.0\nFROM vllm/vllm-openai:${TAG}\n", "0.27.1"),
        # ${TAG:-word}: the word when TAG has no value
        (" .", "ARG TAG\nFROM vllm/vllm-openai:${TAG:-v0.30.0}\n", "0.30.0"),
        # the last stage is built; target picks another (stage names without case)
        (" .", TWO_STAGES, None),
        (CTX + "      target: SERVE\n", TWO_STAGES, "0.27.1"),
        # a stage continuing another starts from its image
        (" .", "FROM vllm/vllm-openai:v0.27.1 AS base\nFROM base AS final\nRUN echo hi\n",
         "0.27.1"),
        # a pin installed over the base image's engine is what runs
        (" .", "FROM vllm/vllm-openai:v0.27.1\nRUN pip install --no-cache-dir vllm==0.29.0\n",
         "0.29.0"),
        (" .", "FROM python:3.11\nRUN python3 -m pip install 'vllm[flashinfer]==0.30.0' && "
         "rm -rf /root/.cache\n", "0.30.0"),
        # a stage ARG with no value takes the global one; uv pip; a double-quoted word
        (" .", 'ARG V=0.29.0\nFROM python:3.11\nARG V\nRUN uv pip install --system "vllm==${V}"\n',
         "0.29.0"),
        # ENV beats the ARG of the same name
        (" .", "FROM python:3.11\nARG V=0.29.0\nENV V=0.30.0\nRUN pip install vllm==$V\n",
         "0.30.0"),
        # exec form
        (" .", 'FROM python:3.11\nRUN ["pip", "install", "vllm==0.29.0"]\n', "0.29.0"),
        # BuildKit joins a continued line as it is (parser.go@ca4838f8: line += next line),
        # dropping comment and empty lines inside
        (" .", "FROM python:3.11\nRUN pip install \\\n# a comment\n\n    vllm==0.2\\\n9.0\n",
         "0.29.0"),
    ],
)
def test_the_built_image_s_version(
    tmp_path: Path, build: str, dockerfile: str, version: str | None
) -> None:
    found, source, _notes = _read(tmp_path, _service(build), {"Dockerfile": dockerfile})
    assert found == version
    if version is not None:
        assert source == ("requirement" if "RUN" in dockerfile and "==" in dockerfile
                          else "image")


@pytest.mark.parametrize(
    ("build", "dockerfile", "why"),
    [
        # no default, no build argument: Docker would make it empty (an invalid reference)
        (" .", "ARG TAG\nFROM vllm/vllm-openai:${TAG}\n", "no default"),
        # a bare NAME and a null value are the process environment's
        (CTX + "      args:\n        - TAG\n", "ARG TAG=v0.29.0\nFROM vllm/vllm-openai:${TAG}\n",
         "not set in the repository"),
        (CTX + "      args:\n        TAG:\n", "ARG TAG=v0.29.0\nFROM vllm/vllm-openai:${TAG}\n",
         "not set in the repository"),
        # the machine's platform
        (" .", "FROM vllm/vllm-openai:v0.27.1-${TARGETARCH}\n", "not set in the repository"),
        # a global ARG is not seen inside a stage without ARG NAME there
        (" .", "ARG V=0.29.0\nFROM python:3.11\nRUN pip install vllm==${V}\n",
         "not set in the repository"),
        # the newest at build time replaces the base image's engine
        (" .", "FROM vllm/vllm-openai:v0.27.1\nRUN pip install -U vllm\n", "no version"),
        (CTX + "      target: nothere\n", TWO_STAGES, "names no stage"),
        (" .", "# escape=`\nFROM vllm/vllm-openai:v0.27.1\n", "escape"),
        # a $ in single quotes is kept as written: not read
        (" .", "FROM python:3.11\nARG V=0.29.0\nRUN pip install 'vllm==$V'\n", "single quotes"),
        # a float build argument: Go prints 0.10 as 0.1, so it is not read
        (CTX + "      args:\n        V: 0.10\n",
         "FROM python:3.11\nARG V\nRUN pip install vllm==$V\n", "not set in the repository"),
        (" .", "FROM vllm/vllm-openai:v0.27.1\nRUN <<EOF\npip install vllm==0.29.0\nEOF\n",
         "heredoc"),
    ],
)
def test_what_the_build_does_not_settle_pins_nothing(
    tmp_path: Path, build: str, dockerfile: str, why: str
) -> None:
    version, source, notes = _read(tmp_path, _service(build), {"Dockerfile": dockerfile})
    assert (version, source) == (None, "assumed-newest")
    assert any(why in note for note in notes), notes


def test_a_requirements_file_copied_from_the_context(tmp_path: Path) -> None:
    dockerfile = (
        "FROM python:3.11\nWORKDIR /app\nCOPY requirements.txt .\n"
        "RUN pip install -r requirements.txt\n"
    )
    files = {"Dockerfile": dockerfile, "requirements.txt": "vllm==0.30.0\n"}
    assert _read(tmp_path, _service(" ."), files)[:2] == ("0.30.0", "requirement")


def test_a_context_in_the_parent_folder(tmp_path: Path) -> None:
    # the compose file in deploy/, the context the repository's top: COPY reads the top's
    # requirements.txt (the Dockerfile path is relative to the context)
    build = "\n      context: ..\n      dockerfile: deploy/Dockerfile\n"
    dockerfile = (
        "FROM python:3.11\nCOPY requirements.txt /srv/\n"
        "RUN pip install -r /srv/requirements.txt\n"
    )
    files = {"deploy/Dockerfile": dockerfile, "requirements.txt": "vllm==0.29.0\n"}
    found = _read(tmp_path, _service(build), files, at="deploy/compose.yaml")
    assert found[:2] == ("0.29.0", "requirement")


@pytest.mark.parametrize(
    "dockerfile",
    [
        # above the context: BuildKit strips the .., the legacy builder refuses it
        "FROM python:3.11\nCOPY ../requirements.txt /srv/\n"
        "RUN pip install -r /srv/requirements.txt\n",
        # copied after the RUN
        "FROM python:3.11\nRUN pip install -r /srv/requirements.txt\nCOPY requirements.txt /srv/\n",
        # relative to the base image's WORKDIR, which is not known
        "FROM python:3.11\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n",
    ],
)
def test_a_requirements_file_not_known_to_be_there(tmp_path: Path, dockerfile: str) -> None:
    files = {"sub/Dockerfile": dockerfile, "sub/requirements.txt": "vllm==0.29.0\n",
             "requirements.txt": "vllm==0.29.0\n"}
    assert _read(tmp_path, _service(" ./sub"), files)[:2] == (None, "assumed-newest")


def test_an_image_beside_build_is_pulled_first(tmp_path: Path) -> None:
    dockerfile = "FROM vllm/vllm-openai:v0.27.1\n"
    image = "    image: vllm/vllm-openai:v0.29.0\n"
    assert _read(tmp_path, _service(" .", image), {"Dockerfile": dockerfile})[0] == "0.29.0"
    built = image + "    pull_policy: build\n"
    assert _read(tmp_path / "b", _service(" .", built), {"Dockerfile": dockerfile})[0] == "0.27.1"


@pytest.mark.parametrize("build", [" ../outside", " /etc", " https://github.com/x/y.git"])
def test_a_context_outside_the_repository_is_not_read(tmp_path: Path, build: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.27.1\n", "utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    assert _read(repo, _service(build), {})[:2] == (None, "assumed-newest")


def test_a_dockerfile_symlinked_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "Dockerfile.out"
    outside.write_text("FROM vllm/vllm-openai:v0.27.1\n", "utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside, repo / "Dockerfile")
    assert _read(repo, _service(" ."), {})[:2] == (None, "assumed-newest")


def test_a_pre_release_pin_in_a_run_line(tmp_path: Path) -> None:
    # docs/engines.md#pre-releases: between 0.10.2 and 0.11.0
    dockerfile = "FROM python:3.11\nRUN pip install vllm==0.11.0rc1\n"
    assert _read(tmp_path, _service(" ."), {"Dockerfile": dockerfile})[:2] == (
        None, "requirement"
    )


def test_a_copied_requirements_file_symlinked_out_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "req.txt"
    outside.write_text("vllm==0.29.0\n", "utf-8")
    repo = tmp_path / "repo"
    dockerfile = (
        "FROM python:3.11\nCOPY requirements.txt /srv/\n"
        "RUN pip install -r /srv/requirements.txt\n"
    )
    (repo / ".git").mkdir(parents=True)
    os.symlink(outside, repo / "requirements.txt")
    assert _read(repo, _service(" ."), {"Dockerfile": dockerfile})[:2] == (
        None, "assumed-newest"
    )


TRT_SERVICE = (
    "services:\n  trt:\n    build: .\n    volumes:\n      - ./spec.yml:/opt/spec.yml\n"
    "    command: trtllm-serve qwen --max_num_tokens 1024 "
    "--extra_llm_api_options /opt/spec.yml --backend trt\n"
)


@pytest.mark.parametrize(
    ("tag", "severity"),
    [
        # the options file a built service's command names is read at the built image's
        # release: TensorRT-LLM's Eagle-on-trt refusal (lifetime from 1.2.0,
        # tests/integration/test_trtllm_backend.py) fails at 1.2.0
        ("1.2.0", "fail"),
        # and warns at its candidate (docs/engines.md#pre-releases)
        ("1.2.0rc6", "warn"),
    ],
)
def test_an_options_file_is_read_at_the_built_image_s_release(
    check: Run,  # noqa: F811
    tag: str,
    severity: str,
) -> None:
    from tests.integration.test_trtllm_backend import _HEADS, LOAD, OPTIONS

    files = {
        "c.specgate.yaml": "version: 1\ndeployments:\n  - name: d\n    model:\n      name: m\n"
        "      hf_config: config.json\n    speculation:\n      enabled: true\n"
        "      engine: trtllm\n      engine_config: compose.yaml\n"
        "    evidence:\n      accept_length: 2.0\n      cache_coherence_eval: true\n",
        "config.json": json.dumps({**_HEADS, "architectures": ["Qwen2ForCausalLM"]}),
        "compose.yaml": TRT_SERVICE,
        "Dockerfile": f"FROM nvcr.io/nvidia/tensorrt-llm/release:{tag}\n",
        "spec.yml": OPTIONS,
    }
    _code, dep = check(files)
    assert [s for s, _, m in found(dep, "SG307") if LOAD in m] == [severity]
    notes = dep["inputs"]["engine"]["notes"]
    assert not any("speculation.engine_version 1.2.0" in n for n in notes), notes


# trial3/14: the built image's ENTRYPOINT is the Dockerfile stage chain's own, else the
# base image's (Dockerfile reference, ENTRYPOINT: inherited unless redefined; CMD and
# ENTRYPOINT of the base image, vllm/vllm-openai's ["vllm", "serve"] at
# vllm-project/vllm docker/Dockerfile@dead20ba). A Compose `command:` follows it.
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
POSITIONAL = (
    f'    command: ["{MODEL}", "--speculative-config", '
    "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}']\n"
)


def _served(root: Path, dockerfile: str, extra: str = "") -> tuple[str | None, int | None]:
    compose = f"services:\n  api:\n{extra}    build: .\n{POSITIONAL}"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "compose.yaml").write_text(compose, "utf-8")
    (root / "Dockerfile").write_text(dockerfile, "utf-8")
    from specgate.core.errors import InputError

    try:
        config = read_engine_file(root / "compose.yaml", "compose.yaml")
    except InputError:
        return None, None
    return config.target_model, config.draft_length


@pytest.mark.parametrize(
    "dockerfile",
    [
        # trial3/14's build/Dockerfile: no ENTRYPOINT of its own
        "FROM vllm/vllm-openai:v0.30.0\nRUN pip install --no-cache-dir flashinfer-python\n",
        # through a registry mirror, and through a stage that continues another
        "FROM registry.example.com:5000/mirror/vllm/vllm-openai:v0.30.0\n",
        "FROM vllm/vllm-openai:v0.30.0 AS base\nFROM base\nRUN echo hi\n",
        # its own exec-form ENTRYPOINT naming the program
        'FROM python:3.11\nRUN pip install vllm==0.30.0\nENTRYPOINT ["vllm", "serve"]\n',
        # the last ENTRYPOINT counts; a later stage continuing it keeps it
        'FROM python:3.11 AS a\nENTRYPOINT ["python3"]\nENTRYPOINT ["vllm", "serve"]\n'
        "FROM a\n",
    ],
)
def test_a_built_image_runs_its_entrypoint(tmp_path: Path, dockerfile: str) -> None:
    assert _served(tmp_path, dockerfile) == (MODEL, 3)


@pytest.mark.parametrize(
    "dockerfile",
    [
        # its own ENTRYPOINT replaces the base image's: the model is python3's argument
        'FROM vllm/vllm-openai:v0.30.0\nENTRYPOINT ["python3", "launch.py"]\n',
        # the shell form runs /bin/sh -c and takes no arguments
        "FROM vllm/vllm-openai:v0.30.0\nENTRYPOINT vllm serve\n",
        # a base image whose ENTRYPOINT is not known
        "FROM example.com/team/server:1\n",
        # the base is not settled (an ARG with no value)
        "ARG BASE\nFROM ${BASE}\n",
    ],
)
def test_a_built_image_whose_entrypoint_is_not_known_is_not_read_as_vllm(
    tmp_path: Path, dockerfile: str
) -> None:
    assert _served(tmp_path, dockerfile)[0] != MODEL


def test_an_image_beside_build_runs_the_pulled_image(tmp_path: Path) -> None:
    # Compose pulls image: first (no pull_policy): its ENTRYPOINT, not the Dockerfile's
    dockerfile = "FROM vllm/vllm-openai:v0.30.0\n"
    assert _served(tmp_path, dockerfile, "    image: example.com/team/api:1\n")[0] != MODEL
    policy = "    image: example.com/team/api:1\n    pull_policy: build\n"
    assert _served(tmp_path, dockerfile, policy) == (MODEL, 3)
