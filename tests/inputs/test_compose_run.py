"""``docker compose run SERVICE [COMMAND]`` in a script, read as the service's container.

Expectations worked by hand from Compose's source at ``docker/compose@v5.5.0``:
``cmd/compose/run.go`` (``runCommand``: SERVICE is ``args[0]``, COMMAND ``args[1:]``;
``--entrypoint`` split by ``shellwords.Parse``) and ``pkg/compose/run.go``
(``applyRunOptions``: a COMMAND replaces the service's ``command``; ``--entrypoint``
replaces its ``entrypoint`` and, without a COMMAND, sets ``command`` to ``[]``;
``-e`` overrides ``environment``), then Docker's ENTRYPOINT + CMD
(docs.docker.com/reference/dockerfile/#understand-how-cmd-and-entrypoint-interact) with
``vllm/vllm-openai``'s ENTRYPOINT ``vllm serve`` (its Dockerfile, image-entrypoints.json).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.options import CheckOptions
from specgate.check.run import check_file
from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.in_container import in_container
from specgate.inputs.engines.placed import Joined
from specgate.inputs.engines.read import load_engine_document

SPEC = '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'
COMPOSE = f"""\
services:
  vllm:
    image: vllm/vllm-openai:v0.26.0
    command: ["/models/llama", "--speculative-config", '{SPEC}']
    environment:
      HF_HOME: /cache
  sglang:
    image: lmsysorg/sglang:v0.5.4
    entrypoint: python3 -m sglang.launch_server
    command: --model-path m --speculative-num-steps 3
  built:
    build: .
    command: ["serve"]
"""


def _joined(tmp_path: Path, line: str, files: dict[str, str] | None = None) -> object:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in (files if files is not None else {"compose.yaml": COMPOSE}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    script = tmp_path / "serve.sh"
    script.write_text(line + "\n", "utf-8")
    doc = load_engine_document(script, "serve.sh")
    (source,) = commands_of(doc.data, doc, (), doc.data)
    return in_container(source, script)


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        # the service's command after the image's ENTRYPOINT
        ("docker compose run --rm vllm",
         ("vllm", "serve", "/models/llama", "--speculative-config", SPEC)),
        # a COMMAND replaces the service's command, not the image's ENTRYPOINT
        ("docker compose run vllm /m2 --max-model-len 4096",
         ("vllm", "serve", "/m2", "--max-model-len", "4096")),
        # --entrypoint replaces the ENTRYPOINT and, with no COMMAND, clears the command
        ("docker compose run --entrypoint 'python3 -m srv' vllm", ("python3", "-m", "srv")),
        ("docker compose run --entrypoint=/bin/x vllm a b", ("/bin/x", "a", "b")),
        # --entrypoint '' clears it: the COMMAND is the program
        ("docker compose run --entrypoint= vllm trtllm-serve m", ("trtllm-serve", "m")),
        # a service entrypoint: string split as shellwords, the command after it
        ("docker-compose run sglang", ("python3", "-m", "sglang.launch_server", "--model-path",
                                       "m", "--speculative-num-steps", "3")),
        # every value-taking option of run.go skipped by its table, and globals before run
        ("docker --context c compose -p p --project-directory . run -e A -v a:/b -w /w "
         "-u 1 -l k=v -p 8000:8000 --name n --pull never -T --no-deps vllm x",
         ("vllm", "serve", "x")),
    ],
)
def test_the_service_s_container_command(tmp_path: Path, line: str, argv: tuple[str, ...]) -> None:
    joined = _joined(tmp_path, line)
    assert isinstance(joined, Joined)
    assert joined.command.argv == argv


def test_environment_and_image(tmp_path: Path) -> None:
    joined = _joined(tmp_path, "docker compose run -e HF_HOME=/x -e B=2 vllm")
    assert isinstance(joined, Joined)
    assert dict(joined.command.env.items()) == {"HF_HOME": "/x", "B": "2"}
    assert joined.image == "vllm/vllm-openai:v0.26.0"


def test_file_option_and_dotenv(tmp_path: Path) -> None:
    files = {
        "deploy/serving.yaml": "services:\n  v:\n    image: vllm/vllm-openai:${TAG}\n"
                               "    command: [m]\n",
        "deploy/.env": "TAG=v0.27.1\n",
    }
    joined = _joined(tmp_path, "docker compose -f deploy/serving.yaml run v", files)
    assert isinstance(joined, Joined)
    assert (joined.command.argv, joined.image) == (("vllm", "serve", "m"),
                                                   "vllm/vllm-openai:v0.27.1")


@pytest.mark.parametrize(
    ("line", "files"),
    [
        ("docker compose run nosuch", None),  # a service the file does not define
        ("docker compose run built", None),  # built here: its ENTRYPOINT is not known
        ("docker compose -f compose.yaml -f b.yaml run vllm", None),  # b.yaml: no such file
        ("docker compose -f - run vllm", None),  # standard input
        # in a folder below the script's: Compose looks up, never down
        ("docker compose run vllm", {"sub/compose.yaml": COMPOSE}),
        # a variable no file sets
        ("docker compose run v",
         {"compose.yaml": "services:\n  v:\n    image: vllm/vllm-openai\n"
                          "    command: [\"${MODEL}\"]\n"}),
    ],
)
def test_what_is_not_settled_stays_as_written(
    tmp_path: Path, line: str, files: dict[str, str] | None
) -> None:
    joined = _joined(tmp_path, line, files)
    assert not isinstance(joined, Joined)


def test_a_check_reads_the_service_d_and_version(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yaml").write_text(COMPOSE, "utf-8")
    (tmp_path / "serve.sh").write_text("#!/bin/sh\ndocker compose run --rm vllm\n", "utf-8")
    c = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    assert (c.engine, c.mechanism, c.draft_length) == ("vllm", "ngram", 4)
    assert (c.version, c.version_source) == ("0.26.0", "image")  # the service's image tag
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 6,"
        " engine_config: serve.sh}\n",
        "utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    assert any(f.code == "SG301" for f in report.deployments[0].findings)  # 6 vs served 4


def test_a_compose_file_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "compose.yaml").write_text(COMPOSE, "utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    joined = _joined(repo, "docker compose -f ../outside/compose.yaml run vllm", {})
    assert not isinstance(joined, Joined)
    (repo / "link.yaml").symlink_to(outside / "compose.yaml")
    joined = _joined(repo, "docker compose -f link.yaml run vllm", {})
    assert not isinstance(joined, Joined)


# podman-compose (containers/podman-compose:podman_compose.py@v1.6.0): argparse, so
# abbreviations and -eA=1 are read as argparse reads them;
# compose_run_update_container_from_args sets a non-empty --entrypoint over the service's
# and a non-empty COMMAND over its command (the command is kept with --entrypoint);
# container_to_args splits strings with shlex.
@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("podman-compose run vllm",
         ("vllm", "serve", "/models/llama", "--speculative-config", SPEC)),
        ("podman-compose -p x run --entry 'python3 -m x' vllm",
         ("python3", "-m", "x", "/models/llama", "--speculative-config", SPEC)),
        ("podman-compose run -eA=1 --volu a:/b vllm /m2", ("vllm", "serve", "/m2")),
        # podman compose: docker-compose and podman-compose agree here
        ("podman --remote compose run vllm /m2", ("vllm", "serve", "/m2")),
    ],
)
def test_podman_compose(tmp_path: Path, line: str, argv: tuple[str, ...]) -> None:
    joined = _joined(tmp_path, line)
    assert isinstance(joined, Joined)
    assert joined.command.argv == argv


@pytest.mark.parametrize(
    ("line", "files"),
    [
        # podman compose runs docker-compose or podman-compose, whichever the machine
        # has: with --entrypoint and no COMMAND, docker compose clears the command and
        # podman-compose keeps it, so the container command is not known
        ("podman compose run --entrypoint 'python3 -m x' vllm", None),
        ("podman-compose run -e A vllm", None),  # podman-compose stops on -e NAME
        ("podman-compose -h run vllm", None),  # prints help
        ("podman-compose --bogus run vllm", None),  # argparse refuses it
        # every default name present is merged by podman-compose: not followed
        ("podman-compose run vllm", {"compose.yaml": COMPOSE, "docker-compose.yml": COMPOSE}),
        # podman-compose's own interpolation is not followed
        ("podman-compose run v",
         {"compose.yaml": "services:\n  v:\n    image: vllm/vllm-openai:${T:-v0.26.0}\n"}),
    ],
)
def test_podman_compose_not_settled(
    tmp_path: Path, line: str, files: dict[str, str] | None
) -> None:
    assert not isinstance(_joined(tmp_path, line, files), Joined)


@pytest.mark.parametrize(
    "line",
    ["docker compose run vllm", "/usr/bin/docker-compose run vllm", "podman-compose run vllm"],
)
def test_a_run_line_without_a_flag_word_is_read(tmp_path: Path, line: str) -> None:
    # the line itself holds no `-` flag: the flags come from the service's command
    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yaml").write_text(COMPOSE, "utf-8")
    (tmp_path / "serve.sh").write_text(f"#!/bin/sh\nset -e\n{line}\n", "utf-8")
    c = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    assert (c.engine, c.draft_length) == ("vllm", 4)
    assert c.spans["draft_length"].line == 3  # placed at the run line's SERVICE word


def test_a_service_loaded_once_per_read(tmp_path: Path) -> None:
    # many lines naming services of one Compose file: it is loaded (and spends the
    # script's node budget) once, so 200 lines are read, not refused at the bound
    (tmp_path / ".git").mkdir()
    services = "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.26.0\n    command: [m, --x, '{i}']\n"
        for i in range(300)
    )
    (tmp_path / "compose.yaml").write_text(COMPOSE + services, "utf-8")
    (tmp_path / "serve.sh").write_text("docker compose run vllm\n" * 200, "utf-8")
    doc = load_engine_document(tmp_path / "serve.sh", "serve.sh")
    from specgate.core.limits import file_budget

    with file_budget(len(doc.data)):
        joined = [in_container(s, tmp_path / "serve.sh")
                  for s in commands_of(doc.data, doc, (), doc.data)]
    assert len(joined) == 200 and all(isinstance(j, Joined) for j in joined)
