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


@pytest.mark.parametrize(
    ("words", "image", "command", "globals_read"),
    [
        # docker/cli cli/flags/options.go@v29.7.2: --context/-c, -H/--host, --log-level/-l
        # take a value, -D/--debug is a switch; cli/cobra.go HandleGlobalFlags stops at
        # the first command word (SetInterspersed(false)).
        (
            "docker --context x -H tcp://h:2376 --log-level debug run --gpus all img a",
            "img", ("a",), (("context", "x"), ("host", "tcp://h:2376"), ("log-level", "debug")),
        ),
        ("docker -D -c prod container run img", "img", None,
         (("debug", None), ("context", "prod"))),
        ("docker -l=warn run img", "img", None, (("log-level", "warn"),)),
        # podman cmd/podman/root.go@v5.8.2: --remote/-r a switch, --connection/-c a value;
        # --log-level is on pFlags (PersistentFlags), so `run` takes it too.
        (
            "podman --remote --connection c run --log-level debug img x",
            "img", ("x",), (("remote", None), ("connection", "c")),
        ),
        ("podman -r run --root /var/x img", "img", None, (("remote", None),)),
        # nerdctl cmd/nerdctl/main.go@v2.3.5: --namespace (persistent) and its alias -n
        ("nerdctl --namespace k8s.io run --namespace k8s.io img", "img", None,
         (("namespace", "k8s.io"),)),
        ("nerdctl -n k8s.io -H unix:///c.sock run img", "img", None,
         (("n", "k8s.io"), ("H", "unix:///c.sock"))),
        # docker/compose cmd/compose/compose.go@v5.5.0: -f/--file, -p, --project-directory
        # on the root; --dry-run persistent, so also after `run`.
        (
            "docker compose -f a.yml --project-directory d -p p run --dry-run --rm svc c",
            "svc", ("c",), (("file", "a.yml"), ("project-directory", "d"), ("project-name", "p")),
        ),
        ("docker --context x compose -f a.yml run svc", "svc", None,
         (("context", "x"), ("file", "a.yml"))),
    ],
)
def test_global_options_before_run(
    words: str,
    image: str,
    command: tuple[str, ...] | None,
    globals_read: tuple[tuple[str, str | None], ...],
) -> None:
    launch = read_runner(words.split())
    assert launch is not None and launch.unsettled is None
    assert (launch.target, launch.command, launch.globals) == (image, command, globals_read)


@pytest.mark.parametrize(
    "words",
    [
        "docker --bogus run img",  # docker refuses an option it does not define
        "docker --context run img",  # --context takes `run` as its value: no run follows
        "podman run --remote img",  # --remote is on the root's Flags(), not persistent
        "docker run --context x img",  # docker's globals are not persistent
    ],
)
def test_a_refused_global_is_unsettled_or_not_a_run(words: str) -> None:
    launch = read_runner(words.split())
    assert launch is None or launch.unsettled is not None


def test_other_subcommands_after_globals_are_not_runs() -> None:
    assert read_runner(["docker", "--context", "x", "build", "."]) is None
    assert read_runner(["docker", "compose", "-f", "a.yml", "up", "svc"]) is None


def test_global_tables_are_the_sources_at_a_tag() -> None:
    data = json.loads(read_data("container-runners.json"))
    programs = {g["program"]: g for g in data["globals"]}
    assert set(programs) == {"docker", "podman", "nerdctl", "compose"}
    for table in programs.values():
        assert table["source"]["tag"] and len(table["source"]["commit"]) == 40
    assert programs["docker"]["options"]["host"] == {
        "short": "H", "value": True, "persistent": False
    }
    assert programs["podman"]["options"]["log-level"]["persistent"] is True
    assert programs["compose"]["options"]["file"]["short"] == "f"
