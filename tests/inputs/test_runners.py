"""Container runners' command lines read as their pflag option tables read them.

Each expectation is worked out by hand from the runner's source recorded in
container-runners.json (which options take a value) and spf13/pflag's parsing rules
(flag.go: parseArgs, parseLongArg, parseSingleShortArg; SetInterspersed(false)).
"""

from __future__ import annotations

import json

import pytest

from specgate.core.data import read_data
from specgate.inputs.runners import read_runner

TRTLLM_TEXT = (
    "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 "
    "-v /models:/models -e HF_TOKEN -p 8000:8000 --rm -it "
    "nvcr.io/nvidia/tensorrt-llm/release:1.2.0 "
    "trtllm-serve /models/llama --extra_llm_api_options spec.yaml"
)
TRTLLM = TRTLLM_TEXT.split()


def test_docker_run_trtllm_serve() -> None:
    launch = read_runner(TRTLLM)
    assert launch is not None and launch.unsettled is None
    assert launch.target == "nvcr.io/nvidia/tensorrt-llm/release:1.2.0"
    assert launch.command == ("trtllm-serve", "/models/llama", "--extra_llm_api_options",
                              "spec.yaml")
    # -e takes a value (VarP "env"), -it are two switches (BoolVarP interactive, tty).
    assert ("env", "HF_TOKEN") in launch.options
    assert ("interactive", None) in launch.options and ("tty", None) in launch.options


@pytest.mark.parametrize(
    ("words", "image", "command"),
    [
        # A shorthand taking a value takes the rest of its word.
        ("docker run -p8000:8000 -eA=1 img serve", "img", ("serve",)),
        # -e=VALUE: pflag drops the '=' after a shorthand.
        ("docker run -e=A=1 img", "img", None),
        # A switch with '=value' is one word; the next word is the image.
        ("docker run --rm=false img x", "img", ("x",)),
        # Options end at the image: later '-' words are the command's.
        ("docker run img --rm -p 1", "img", ("--rm", "-p", "1")),
        # '--' ends the options.
        ("docker run --rm -- img x", "img", ("x",)),
        # -h is --hostname in docker run (takes a value), not help.
        ("docker run -h box img", "img", None),
        ("/usr/bin/docker container run -d --name v img", "img", None),
        ("podman run --tls-verify img", "img", None),  # an OptionalBoolFlag: a switch
        ("podman run --tls-verify=false --rmi img a", "img", ("a",)),
        ("nerdctl run --gpus all -d img a", "img", ("a",)),
        ("docker compose run --rm -T --service-ports vllm", "vllm", None),
        ("docker-compose run -e A=1 vllm serve m", "vllm", ("serve", "m")),
    ],
)
def test_image_and_command(words: str, image: str, command: tuple[str, ...] | None) -> None:
    launch = read_runner(words.split())
    assert launch is not None and launch.unsettled is None, launch
    assert (launch.target, launch.command) == (image, command)


@pytest.mark.parametrize(
    "words",
    [
        "docker run --no-such-option img",   # pflag: unknown flag
        "docker run -Z img",                 # unknown shorthand
        "docker run --gpus",                 # flag needs an argument
        "docker run --rm",                   # no IMAGE
        "docker compose run --gpus all svc",  # compose run has no --gpus
        "docker run ---x img",               # bad flag syntax
    ],
)
def test_what_the_runner_refuses_is_unsettled(words: str) -> None:
    launch = read_runner(words.split())
    assert launch is not None and launch.unsettled is not None and launch.target is None


@pytest.mark.parametrize(
    ("words", "entrypoint"),
    [
        (["docker", "run", "--entrypoint", "python3", "img", "-m", "x"], ("python3",)),
        (["docker", "run", "--entrypoint=", "img"], ()),
        (["podman", "run", "--entrypoint", '["python3", "-m", "x"]', "img"],
         ("python3", "-m", "x")),
        (["podman", "run", "--entrypoint", "python3 -m x", "img"], ("python3 -m x",)),
        (["nerdctl", "run", "--entrypoint", "a", "--entrypoint", "b", "img"], ("a", "b")),
        (["docker", "compose", "run", "--entrypoint", "python3 -m 'x y'", "svc"],
         ("python3", "-m", "x y")),
    ],
)
def test_entrypoint_read_as_each_runner_reads_it(
    words: list[str], entrypoint: tuple[str, ...]
) -> None:
    launch = read_runner(words)
    assert launch is not None and launch.unsettled is None
    assert launch.entrypoint == entrypoint


def test_not_a_runner() -> None:
    assert read_runner(["docker", "build", "."]) is None
    assert read_runner(["vllm", "serve", "m"]) is None
    assert read_runner([]) is None


def test_tables_are_the_sources_at_a_tag() -> None:
    data = json.loads(read_data("container-runners.json"))
    docker = next(r for r in data["runners"] if r["runner"] == "docker run")
    assert docker["source"]["repo"] == "docker/cli" and docker["source"]["tag"]
    # opts.go: flags.Var(&copts.gpus, "gpus", …) takes a value; BoolVar "rm" does not.
    assert docker["options"]["gpus"]["value"] is True
    assert docker["options"]["rm"]["value"] is False
    assert docker["options"]["env"]["short"] == "e"
