"""A container command run on an image with no ENTRYPOINT that starts the server says
so (issue 24: "serving config runs m, which is not an engine specgate reads" left the
reader guessing). lmsysorg/sglang sets no ENTRYPOINT or CMD (sgl-project/sglang
docker/Dockerfile@924d890f, read in full: FROM, ENV, RUN, WORKDIR only; the entry in
data/image-entrypoints.json), so a Kubernetes ``args`` without ``command`` (a Compose
``command`` without ``entrypoint``) is the whole argv: its first word is the program.
The finding names the image, says the first word is the program, and says what to write
(SGLang's launch command, ``python3 -m sglang.launch_server``). Columns counted by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.unread import UnreadEngine

# line 11: 10 spaces, `args:` at 11-15, a space, `[` at 17, the quote of "m" at 18
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sgl\nspec:\n"
    "  template:\n    spec:\n      containers:\n        - name: sgl\n"
    "          image: lmsysorg/sglang:v0.5.2\n"
    '          args: ["m", "--speculative-algorithm", "EAGLE3"]\n'
)
# line 4: 4 spaces, `command:` at 5-12, a space, `[` at 14, the quote at 15
COMPOSE = (
    "services:\n  sglang:\n    image: lmsysorg/sglang:v0.5.4-cu129\n"
    '    command: ["meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3"]\n'
)


CASES = {
    "deploy.yaml": (DEPLOYMENT, (11, 18), "m", "args"),
    "compose.yaml": (COMPOSE, (4, 15), "meta-llama/Llama-3.1-8B-Instruct", "command"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_first_word_is_the_program(name: str, tmp_path: Path) -> None:
    text, place, program, key = CASES[name]
    (tmp_path / name).write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / name, name)
    error = caught.value
    assert (error.line, error.column) == place
    reason = error.reason
    assert reason.startswith(f"serving config runs `{program}` as the program: image lmsysorg/")
    assert "has no ENTRYPOINT that starts the SGLang server" in reason
    assert f"the first word of {key} is the program the container runs" in reason
    assert f"start {key} with `python3 -m sglang.launch_server`" in reason
    assert "sgl-project/sglang:docker/Dockerfile@924d890f" in reason
    assert error.speculates


def test_an_entrypoint_override_is_not_this_case(tmp_path: Path) -> None:
    # Compose `entrypoint:` replaces the image's: its words are the program, not the
    # image's missing ENTRYPOINT (the message is the plain one)
    text = COMPOSE.replace("    command:", '    entrypoint: ["m2"]\n    command:')
    (tmp_path / "compose.yaml").write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert "ENTRYPOINT" not in caught.value.reason


# A first word that is a flag (issue 24): the container runs `--model-path` as its
# program and never starts. Kubernetes ("Define a Command and Arguments for a
# Container": args without command run as the arguments of the image's ENTRYPOINT, and
# the image here has none, so args is the whole command) and Docker (`docker run IMAGE
# ARGS` with no ENTRYPOINT runs ARGS: docs.docker.com "ENTRYPOINT"/"CMD" interaction)
# agree. It was read as SGLang's flags and judged as a server that starts. A warning,
# pinned tag or not: the Dockerfile was read at one commit (924d890f), so what it says
# of any tag's image is an assumption (docs/trust.md: an assumption may warn, never fail).

# line 11: 10 spaces, `args:` at 11-15, a space, `[` at 17, the quote of "--model-path" at 18
FLAG_DEPLOYMENT = DEPLOYMENT.replace(
    '["m", "--speculative-algorithm", "EAGLE3"]',
    '["--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE", '
    '"--speculative-num-steps", "3"]',
)
# line 4: 4 spaces, `command:` at 5-12, a space, the plain scalar at 14
FLAG_COMPOSE = (
    "services:\n  sglang:\n    image: lmsysorg/sglang:{tag}\n"
    "    command: --model-path Qwen/Qwen3-8B --speculative-algorithm EAGLE\n"
)
# line 2: `docker `1-7, `run `8-11, `--gpus `12-18, `all `19-22, the image (28 characters)
# 23-50, a space, `--model-path` at 52
FLAG_RUN = (
    "#!/bin/sh\ndocker run --gpus all lmsysorg/sglang:v0.5.4-cu129 --model-path "
    "Qwen/Qwen3-8B --speculative-algorithm EAGLE\n"
)
# TensorRT-LLM's release image sets no ENTRYPOINT either (NVIDIA/TensorRT-LLM
# docker/Dockerfile.multi@2340c776, stage `release`); line 4 as FLAG_COMPOSE
FLAG_TRTLLM = (
    "services:\n  trt:\n    image: nvcr.io/nvidia/tensorrt-llm/release:1.2.0\n"
    "    command: --extra_llm_api_options spec.yaml\n"
)

FLAG_CASES = {
    "k8s pinned": ("deploy.yaml", FLAG_DEPLOYMENT, (11, 18), "args", ""),
    "compose latest": ("compose.yaml", FLAG_COMPOSE.format(tag="latest"), (4, 14), "command",
                       ""),
    "compose variable tag": ("compose.yaml", FLAG_COMPOSE.format(tag="${TAG}"), (4, 14),
                             "command", ""),
    "compose pinned": ("compose.yaml", FLAG_COMPOSE.format(tag="v0.5.4-cu129"), (4, 14),
                       "command", ""),
    "docker run": ("run.sh", FLAG_RUN, (2, 52), "the command after the image", ""),
}


@pytest.mark.parametrize("case", list(FLAG_CASES))
def test_a_flag_as_the_first_word_is_the_program(case: str, tmp_path: Path) -> None:
    name, text, place, key, severity = FLAG_CASES[case]
    (tmp_path / name).write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / name, name)
    error = caught.value
    assert (error.line, error.column) == place
    assert error.reason.startswith(
        "serving config runs `--model-path` as the program: image lmsysorg/sglang:"
    )
    assert f"the first word of {key} is the program the container runs" in error.reason
    assert f"start {key} with `python3 -m sglang.launch_server`" in error.reason
    assert error.speculates
    assert error.severity == severity


def test_every_image_without_a_server_entrypoint(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(FLAG_TRTLLM)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    error = caught.value
    assert (error.line, error.column) == (4, 14)
    assert "has no ENTRYPOINT that starts the TensorRT-LLM server" in error.reason
    assert "start command with `trtllm-serve`" in error.reason
    assert error.severity == ""


def test_the_launch_command_written_is_read(tmp_path: Path) -> None:
    # the same args after `python3 -m sglang.launch_server`: SGLang's configuration
    text = FLAG_DEPLOYMENT.replace('["--model-path"', '["python3", "-m", '
                                   '"sglang.launch_server", "--model-path"')
    (tmp_path / "deploy.yaml").write_text(text)
    config = read_engine_file(tmp_path / "deploy.yaml", "deploy.yaml")
    assert config.engine == "sglang"


def test_the_finding_warns_on_the_deployment(tmp_path: Path) -> None:
    # end to end: SG312 at 11:18, a warning (the Dockerfile at the pinned tag is an
    # assumption), not a ready SGLang server judged on flags it never receives
    from tests.rules.test_env_files import check

    _, dep = check(tmp_path, {"deploy.yaml": FLAG_DEPLOYMENT}, "deploy.yaml")
    (finding,) = [f for f in dep["findings"] if f["code"] == "SG312"]
    assert (finding["file"], finding["line"], finding["column"]) == ("deploy.yaml", 11, 18)
    assert finding["severity"] == "warn"
    assert not [f for f in dep["findings"] if f["code"] == "SG307"]


def test_a_docker_run_in_a_yaml_string(tmp_path: Path) -> None:
    # a `docker run` held in a YAML string (a CI step): the same finding, at the string
    # (line 2: `  - run: ` is 2 spaces, `-` 3, a space, `run:` 5-8, a space, the value at 10)
    text = ("steps:\n  - run: docker run lmsysorg/sglang:v0.5.2 --model-path Q "
            "--speculative-algorithm EAGLE\n")
    (tmp_path / "ci.yaml").write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / "ci.yaml", "ci.yaml")
    error = caught.value
    assert (error.line, error.column) == (2, 10)
    assert "the first word of the command after the image is the program" in error.reason
    assert error.severity == ""
