"""Options files inside a container followed through its volumes (issue 24, the
``docker run -v … trtllm-serve … --extra_llm_api_options /cfg/spec.yaml`` form).

Expectations are Docker's and Compose's documented semantics, worked by hand:

- ``docker run -v HOST:CONTAINER[:OPTIONS]`` (docs.docker.com/reference/cli/docker/
  container/run/#volume; docker/cli ``cli/command/container/opts.go`` since v23.0): an
  absolute HOST or one starting with ``.`` is a bind mount (a relative one made absolute
  against the working directory); any other HOST (``trt``) is a named volume.
- ``--mount type=bind,source=…,target=…`` (docker/cli ``opts/mount.go``; ``src``/``dst``
  aliases; ``type`` defaults to ``volume``).
- Compose ``volumes:`` short and long syntax, a relative source resolved against the
  Compose file's folder (compose-spec ``05-services.md#volumes``).
- A script's working directory (``$PWD``, ``$(pwd)``, ``./``) is read as the script's
  own folder, and the note says so (docs/engines.md#containers).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.inputs.volumes import Bind, compose_binds, map_inside, parse_mount, parse_volume

REAL = Path(__file__).parent.parent / "data/real/tensorrt-llm/config"
MTP3 = REAL / "curated-qwen3.8-low-latency-mtp3.yaml"
IMAGE = "nvcr.io/nvidia/tensorrt-llm/release:1.2.0"
TAIL = f"{IMAGE} trtllm-serve Qwen/Qwen3.8-235B-A22B --extra_llm_api_options /cfg/mtp3.yaml\n"


@pytest.mark.parametrize(
    ("value", "bind"),
    [
        ("./trt:/cfg", Bind("./trt:/cfg", "/cfg", "./trt", True)),
        ("./trt:/cfg:ro", Bind("./trt:/cfg:ro", "/cfg", "./trt", True)),
        ("$PWD/trt:/cfg:z", Bind("$PWD/trt:/cfg:z", "/cfg", "trt", True)),
        ("${PWD}/trt:/cfg/", Bind("${PWD}/trt:/cfg/", "/cfg", "trt", True)),
        ("$(pwd)/trt:/cfg", Bind("$(pwd)/trt:/cfg", "/cfg", "trt", True)),
        ("`pwd`:/cfg", Bind("`pwd`:/cfg", "/cfg", ".", True)),
        ("/data/models:/models", Bind("/data/models:/models", "/models", "/data/models")),
        # a bare name is a named volume, never a path
        ("trt:/cfg", Bind("trt:/cfg", "/cfg", None)),
        ("$PWDX/trt:/cfg", Bind("$PWDX/trt:/cfg", "/cfg", None)),
        # an anonymous volume names no host side
        ("/cfg", None),
    ],
)
def test_run_volume_syntax(value: str, bind: Bind | None) -> None:
    assert parse_volume(value) == bind


@pytest.mark.parametrize(
    ("value", "bind"),
    [
        ("type=bind,source=./trt,target=/cfg", ("/cfg", "./trt", True)),
        ("type=bind,src=$(pwd)/trt,dst=/cfg,readonly", ("/cfg", "trt", True)),
        ("type=bind,source=/srv/trt,destination=/cfg", ("/cfg", "/srv/trt", False)),
        # type defaults to volume: a named volume
        ("source=trt,target=/cfg", ("/cfg", None, False)),
        # the daemon refuses a relative bind source not starting with ./
        ("type=bind,source=trt,target=/cfg", ("/cfg", None, False)),
    ],
)
def test_run_mount_syntax(value: str, bind: tuple[str, str | None, bool]) -> None:
    got = parse_mount(value)
    assert got is not None
    assert (got.inside, got.host, got.cwd) == bind


def test_compose_short_and_long_syntax() -> None:
    binds = compose_binds(
        ["./trt:/cfg:ro", "cache:/root/.cache",
         {"type": "bind", "source": "./models", "target": "/models", "read_only": True},
         {"type": "volume", "source": "data", "target": "/data"}, "~/cfg:/home-cfg"]
    )
    assert [(b.inside, b.host, b.cwd) for b in binds] == [
        ("/cfg", "./trt", False), ("/root/.cache", None, False),
        ("/models", "./models", False), ("/data", None, False),
        # Compose expands ~ to the home folder: a bind, never a named volume
        ("/home-cfg", "~/cfg", False),
    ]


def test_the_deepest_mount_wins() -> None:
    binds = (Bind("a", "/cfg", "./a"), Bind("b", "/cfg/sub", "./b"), Bind("c", "/", "./c"))
    assert map_inside(binds, "/cfg/sub/x.yaml") == (binds[1], "x.yaml")
    assert map_inside(binds, "/cfg/x.yaml") == (binds[0], "x.yaml")
    assert map_inside(binds, "/other/x.yaml") == (binds[2], "other/x.yaml")
    assert map_inside(binds[:2], "/cfgx/x.yaml") is None


def _repo(tmp_path: Path, script: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    (tmp_path / "serving/trt").mkdir(parents=True, exist_ok=True)
    shutil.copy(MTP3, tmp_path / "serving/trt/mtp3.yaml")
    path = tmp_path / "serving/serve.sh"
    path.write_text(script, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "option",
    [
        '-v "$(pwd)/trt:/cfg"', '-v "$PWD/trt:/cfg:ro"', "-v ${PWD}/trt:/cfg:z",
        "-v ./trt:/cfg", "--volume=./trt/:/cfg", "--mount type=bind,source=./trt,target=/cfg",
        # the deeper mount shadows the shallower one
        "-v /data:/ -v ./trt:/cfg",
    ],
)
def test_docker_run_volume_maps_the_options_file(tmp_path: Path, option: str) -> None:
    script = f"#!/bin/sh\ndocker run --gpus all --rm {option} -e HF_TOKEN=x \\\n  {TAIL}"
    path = _repo(tmp_path, script)
    config = read_engine_file(path, "serving/serve.sh")
    # the curated MTP file: decoding_type MTP, num_nextn_predict_layers 3
    assert (config.path, config.mechanism, config.draft_length) == (
        "serving/trt/mtp3.yaml", "mtp", 3
    )
    assert (config.version, config.version_source) == ("1.2.0", "image")
    # the working directory is an assumption, and the note says so
    assert "read as run from the script's own folder" in config.notes[0]
    assert "assumes that working directory" in config.notes[0]


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("-v trt:/cfg", "the volume 'trt:/cfg' mounts a named volume there"),
        ("-v /data/models:/models", "none of the command's volumes ('/data/models:/models') "
         "covers it"),
        ("-v /:/cfg", "mounts the absolute host path '/'"),
        ("", "no volume of the file maps it to the repository"),
    ],
)
def test_a_volume_that_does_not_map_says_why(tmp_path: Path, option: str, said: str) -> None:
    path = _repo(tmp_path, f"docker run --rm {option} {TAIL}")
    with pytest.raises(InputError) as info:
        read_engine_file(path, "serving/serve.sh")
    assert info.value.reason.startswith("no speculative decoding configured in serving/serve.sh")
    assert said in info.value.reason


def test_a_hostile_volume_never_reads_outside(tmp_path: Path) -> None:
    (tmp_path / "mtp3.yaml").write_text(MTP3.read_text(encoding="utf-8"), "utf-8")
    path = _repo(tmp_path / "repo", f"docker run -v ../..:/cfg {TAIL}")
    with pytest.raises(InputError, match="leaves the repository"):
        read_engine_file(path, "serving/serve.sh")
    secret = tmp_path / "secret"
    secret.mkdir()
    shutil.copy(MTP3, secret / "mtp3.yaml")
    path = _repo(tmp_path / "repo2", f"docker run -v ./link:/cfg {TAIL}")
    (tmp_path / "repo2/serving/link").symlink_to(secret)
    with pytest.raises(InputError, match="leaves the repository"):
        read_engine_file(path, "serving/serve.sh")


def test_the_working_directory_is_the_scripts_own_folder(tmp_path: Path) -> None:
    # written to run from the repository's top: from its own folder, $PWD/serving/trt
    # is serving/serving/trt, which does not exist; the message names the volume
    path = _repo(tmp_path, f'docker run -v "$PWD/serving/trt:/cfg" {TAIL}')
    with pytest.raises(InputError) as info:
        read_engine_file(path, "serving/serve.sh")
    reason = info.value.reason
    # not found under the assumed folder: the deployment is not read (SG312), the run
    # goes on; the message names the volume, the assumption and the path tried
    assert reason.startswith("no speculative decoding configured in serving/serve.sh")
    assert "'$PWD/serving/trt:/cfg' read as run from the script's own folder" in reason
    assert "maps it to serving/serving/trt/mtp3.yaml, which does not exist" in reason


def test_compose_long_syntax_maps_relative_to_the_file(tmp_path: Path) -> None:
    path = _repo(tmp_path, "")
    compose = tmp_path / "serving/compose.yaml"
    compose.write_text(
        "services:\n  trt:\n    image: " + IMAGE + "\n    volumes:\n"
        "      - {type: bind, source: ./trt, target: /cfg, read_only: true}\n"
        "    command: " + TAIL.split(" ", 1)[1],
        encoding="utf-8",
    )
    config = read_engine_file(compose, "serving/compose.yaml")
    assert (config.path, config.draft_length) == ("serving/trt/mtp3.yaml", 3)
    # Compose defines the folder: no assumption is said
    assert "assumes" not in config.notes[0]
    del path


def test_mount_fields_are_read_as_docker_reads_them() -> None:
    # docker/cli opts/mount.go@02cae2f7: one CSV record; the type's value is lowercased,
    # keys are matched as written (`Type=` is "unexpected key", so nothing is bound).
    upper = parse_mount("type=BIND,source=./trt,target=/cfg")
    assert upper is not None and (upper.inside, upper.host, upper.cwd) == ("/cfg", "./trt", True)
    wrong_key = parse_mount("Type=bind,source=./trt,target=/cfg")
    assert wrong_key is not None and wrong_key.host is None
    quoted = parse_mount('type=bind,"source=./t,x",target=/cfg')
    assert quoted is not None and quoted.host == "./t,x"
