"""Launchers of engines specgate does not read are named as such (docs/engines.md#not-read), never
"no speculative decoding configured"; the launchers are data (unread-launchers.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.core.data import read_data
from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.unread import launchers

DATA = json.loads(read_data("unread-launchers.json"))


def error(tmp_path: Path, name: str, text: str) -> InputError:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_engine_file(tmp_path / name, name)
    return info.value


def test_every_launcher_names_its_source() -> None:
    for entry in DATA["launchers"]:
        source = entry["source"]
        assert {"repo", "file", "confirmed"} <= set(source), entry["engine"]
        assert entry["programs"] or entry["images"] or entry["fork_of"], entry["engine"]
        assert all(flag.startswith("-") or flag.isupper() for flag in entry["speculative"])


@pytest.mark.parametrize("launcher", launchers(), ids=lambda x: x.engine)
def test_each_launcher_is_named_by_its_program(tmp_path: Path, launcher: object) -> None:
    from specgate.inputs.engines.unread import Launcher

    assert isinstance(launcher, Launcher)
    # a fork (ik_llama.cpp) builds another engine's program: named by a flag only it has
    program = sorted(launcher.programs or launcher.fork_programs)[0]
    flags = " ".join(f"{flag} 3" for flag in launcher.speculative if flag.startswith("-"))
    if not launcher.programs:
        flags += f" {launcher.fork_flags[0]}"
    exc = error(tmp_path, "serve.sh", f"# start it\n{program} serve some/model {flags}\n")
    named = f"serving config launches {launcher.engine}, which specgate does not read"
    assert exc.reason.startswith(named)
    assert "no speculative decoding configured" not in exc.reason
    assert exc.line == 2  # the launch's own line
    for flag in launcher.speculative:
        if flag.startswith("-"):
            assert flag in exc.reason


def test_tgi_speculate_in_a_compose_service_is_read(tmp_path: Path) -> None:
    # Contract change: TGI is an engine specgate reads (inputs/engines/tgi.py), no longer
    # an unread launcher; the service's command sets --speculate 2 (D 2, N_verify 3).
    text = (
        "services:\n"
        "  tgi:\n"
        "    image: ghcr.io/huggingface/text-generation-inference:3.0.1\n"  # line 3
        "    command: --model-id org/model --speculate 2\n"
    )
    (tmp_path / "compose.yaml").write_text(text, encoding="utf-8")
    c = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert (c.engine, c.draft_length, c.verify_tokens) == ("tgi", 2, 3)
    assert c.spans["draft_length"].line == 4


def test_lmdeploy_flags_are_not_read_as_sglang(tmp_path: Path) -> None:
    # --speculative-algorithm / --speculative-num-draft-tokens are SGLang spellings too:
    # the program (lmdeploy) decides, not the flags
    exc = error(
        tmp_path,
        "run.txt",
        "lmdeploy serve api_server Qwen/Qwen3-8B --speculative-algorithm eagle3 "
        "--speculative-draft-model org/eagle3 --speculative-num-draft-tokens 3\n",
    )
    assert exc.reason.startswith("serving config launches LMDeploy, which specgate does not read")


def test_mlx_lm_as_a_python_module_is_read(tmp_path: Path) -> None:
    # Contract change: MLX-LM is read (inputs/engines/mlxlm.py); --num-draft-tokens is
    # unset, so D is the parser's default 3 (mlx_lm/server.py@v0.31.3).
    (tmp_path / "run.sh").write_text(
        "python3 -m mlx_lm.server --model a --draft-model b\n", encoding="utf-8"
    )
    c = read_engine_file(tmp_path / "run.sh", "run.sh")
    assert (c.engine, c.mechanism, c.draft_length, c.draft_model) == (
        "mlxlm", "draft_model", 3, "b"
    )


def test_a_file_configuring_a_read_engine_beside_one_is_read(tmp_path: Path) -> None:
    text = (
        "ollama serve &\nvllm serve m --speculative-config.method ngram "
        "--speculative-config.num_speculative_tokens 4\n"
    )
    (tmp_path / "both.sh").write_text(text, encoding="utf-8")
    c = read_engine_file(tmp_path / "both.sh", "both.sh")
    assert (c.engine, c.mechanism, c.draft_length) == ("vllm", "ngram", 4)


def test_nothing_launched_stays_no_speculative_decoding(tmp_path: Path) -> None:
    exc = error(tmp_path, "run.sh", "vllm serve m --tensor-parallel-size 2\n")
    assert exc.reason.startswith("no speculative decoding configured")


def test_speculation_off_agrees_with_a_launch_that_sets_no_speculative_flag(
    tmp_path: Path,
) -> None:
    from specgate.check.run import CheckOptions, check_file

    (tmp_path / "tgi.sh").write_text(
        "text-generation-launcher --model-id org/m --num-shard 2\n", encoding="utf-8"
    )
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model: {name: org/m}\n"
        "    speculation:\n      enabled: false\n      engine_config: tgi.sh\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    assert report.deployments[0].deployment.inputs is not None
    assert report.deployments[0].deployment.inputs.engine is None


def test_a_launch_that_speculates_is_an_error_even_with_speculation_off(tmp_path: Path) -> None:
    from specgate.inputs.engines import configures_nothing

    exc = error(
        tmp_path,
        "lmdeploy.sh",
        "lmdeploy serve api_server m --speculative-algorithm eagle3 "
        "--speculative-draft-model d\n",
    )
    assert not configures_nothing(exc)  # enabled: false does not make it agree


def test_a_container_run_of_the_tgi_image_is_read(tmp_path: Path) -> None:
    # Contract change: the TGI image's launcher is read by its flags (clap, exact names).
    (tmp_path / "run.sh").write_text(
        "docker run --gpus all ghcr.io/huggingface/text-generation-inference:3.0.1 "
        "--model-id org/m --speculate 2\n",
        encoding="utf-8",
    )
    c = read_engine_file(tmp_path / "run.sh", "run.sh")
    assert (c.engine, c.draft_length, c.target_model) == ("tgi", 2, "org/m")


# real-r4 defect 2: the engine comes from the program word, never from a flag spelling
# alone. Rapid-MLX (raullenchai/Rapid-MLX #2175) and Aphrodite copy vLLM's flags; a
# program that is no engine specgate reads, with speculative flags, is an input error.
@pytest.mark.parametrize(
    ("command", "program", "flags"),
    [
        (
            "rapid-mlx serve qwen3.5-9b-4bit --speculative-config "
            "'{\"method\":\"mtp\",\"num_speculative_tokens\":3}'",
            "rapid-mlx",
            "--speculative-config",
        ),
        (
            "aphrodite run meta-llama/Llama-3.1-8B-Instruct --speculative-model "
            "meta-llama/Llama-3.2-1B-Instruct --num-speculative-tokens 5",
            "aphrodite",
            "--speculative-model, --num-speculative-tokens",
        ),
        (
            "CUDA_VISIBLE_DEVICES=0 exec /opt/bin/my-server --spec-type draft-mtp "
            "--spec-draft-n-max 2",
            "/opt/bin/my-server",
            "--spec-type, --spec-draft-n-max",
        ),
    ],
)
def test_another_program_with_engine_flags_is_not_read_as_that_engine(
    tmp_path: Path, command: str, program: str, flags: str
) -> None:
    exc = error(tmp_path, "serve.sh", f"#!/bin/sh\n{command}\n")
    assert exc.reason.startswith(
        f"serving config runs {program}, which is not an engine specgate reads"
    )
    assert f"its {flags} not checked" in exc.reason
    assert "state speculation.mechanism and speculation.draft_length" in exc.reason
    assert exc.line == 2


def test_another_program_in_a_compose_command_list(tmp_path: Path) -> None:
    text = (
        "services:\n"
        "  mlx:\n"
        "    command: [rapid-mlx, serve, m, --speculative-config, "  # line 3
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4}']\n"
    )
    exc = error(tmp_path, "compose.yaml", text)
    assert exc.reason.startswith("serving config runs rapid-mlx, which is not an engine")
    assert exc.line == 3


# real-r4 defect 4: vLLM's examples/offline_inference/spec_decode.py is a script, not
# the server; specgate does not read its argv: say so, never "no speculative decoding
# configured" (vllm-project/vllm PR #24344 runs it with --method ngram --num_spec_tokens 5)
@pytest.mark.parametrize(
    ("command", "script", "flags"),
    [
        (
            "python3 examples/offline_inference/spec_decode.py --method ngram "
            "--num_spec_tokens 5 --prompt_lookup_max 5 --prompt_lookup_min 2 --tp 1",
            "examples/offline_inference/spec_decode.py",
            "--num_spec_tokens",
        ),
        (
            "python bench/run_eagle.py --speculative-config '{\"method\": \"eagle3\"}'",
            "bench/run_eagle.py",
            "--speculative-config",
        ),
    ],
)
def test_a_python_script_is_said_not_read(
    tmp_path: Path, command: str, script: str, flags: str
) -> None:
    exc = error(tmp_path, "cmd.txt", command + "\n")
    assert exc.reason.startswith(
        f"serving config runs the Python script {script}, which specgate does not read"
    )
    assert f"its {flags} not checked" in exc.reason
    assert "no speculative decoding configured" not in exc.reason


@pytest.mark.parametrize(
    ("command", "engine"),
    [
        # the program names the engine: read as that engine
        ("vllm serve m --speculative-config '{\"method\": \"ngram\", "
         "\"num_speculative_tokens\": 4, \"prompt_lookup_max\": 3}'", "vllm"),
        ("python3 -m vllm.entrypoints.openai.api_server --model m --speculative-config "
         "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 3}'",
         "vllm"),
        ("python3 -m sglang.launch_server --model-path m --speculative-algorithm NGRAM",
         "sglang"),
        ("llama-server -m t.gguf -md d.gguf --spec-draft-n-max 4", "llamacpp"),
        # a runner of another program: the flags decide, as before
        ("docker run --gpus all vllm/vllm-openai:v0.32.0 --model m --speculative-config "
         "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 3}'",
         "vllm"),
        # llama.cpp's program of builds before the llama- prefix (table former_programs)
        ("./speculative -m t.gguf -md d.gguf --draft 8", "llamacpp"),
    ],
)
def test_an_engine_program_is_still_read(tmp_path: Path, command: str, engine: str) -> None:
    (tmp_path / "serve.sh").write_text(command + "\n", encoding="utf-8")
    assert read_engine_file(tmp_path / "serve.sh", "serve.sh").engine == engine
