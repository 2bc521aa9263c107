"""``vllm serve MODEL --config FILE.yaml``: a command whose speculative configuration
is in its options YAML; the file is followed like a referenced engine config.

The YAML is the published vLLM recipe ``OpenAI/GPT-OSS_EAGLE3_Hopper.yaml``
(vllm-project/recipes @8959cf64, tests/data/real/SOURCES.md), the file the recipe runs
with ``vllm serve openai/gpt-oss-120b --config GPT-OSS_EAGLE3_Hopper.yaml``. Line 5:
``speculative-config: '{"model":"nvidia/gpt-oss-120b-Eagle3-v3","num_speculative_tokens":7,
"method":"eagle3",…}'`` ⇒ EAGLE-3, D 7, N_verify 8 (test_engines_real.py).

vLLM's order (``vllm/utils/argparse_utils.py`` @c836a6fe, ``_pull_args_from_config``):
the command line wins over the file, and a positional model over the file's ``model:``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file

RECIPE = Path(__file__).parent.parent / "data/real/vllm/config/recipes-GPT-OSS_EAGLE3_Hopper.yaml"
MODEL = "openai/gpt-oss-120b"


def _repo(tmp_path: Path, command: str, yaml_prefix: str = "") -> Path:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    (tmp_path / "serving/configs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "serving/configs/eagle3.yaml").write_text(
        yaml_prefix + RECIPE.read_text(encoding="utf-8"), "utf-8"
    )
    script = tmp_path / "serving/serve.sh"
    script.write_text(command, "utf-8")
    return script


def test_the_config_file_of_vllm_serve_is_followed(tmp_path: Path) -> None:
    path = _repo(tmp_path, f"vllm serve {MODEL} --config configs/eagle3.yaml -tp 1\n")
    c = read_engine_file(path, "serving/serve.sh")
    assert (c.engine, c.path, c.mechanism, c.draft_length, c.verify_tokens) == (
        "vllm",
        "serving/configs/eagle3.yaml",
        "eagle3",
        7,
        8,
    )
    assert c.spans["draft_length"].line == 5
    assert c.draft_model == "nvidia/gpt-oss-120b-Eagle3-v3"
    assert c.target_model == MODEL
    assert c.notes[0].startswith("speculative configuration read from serving/configs/eagle3.yaml")


@pytest.mark.parametrize(
    ("command", "prefix", "target"),
    [
        # the positional model wins over the file's model: key (cli > config)
        (f"vllm serve {MODEL} --config configs/eagle3.yaml\n", "model: other/model\n", MODEL),
        # positional after the options
        (f"vllm serve --config configs/eagle3.yaml --port 8000 {MODEL}\n", "", MODEL),
        # the file's model when the command names none
        ("vllm serve --config configs/eagle3.yaml\n", f"model: {MODEL}\n", MODEL),
        # the API server module has --config too; its --model wins over the file's
        (
            "python -m vllm.entrypoints.openai.api_server --config configs/eagle3.yaml "
            f"--model {MODEL}\n",
            "model: other/model\n",
            MODEL,
        ),
    ],
)
def test_which_model_wins(tmp_path: Path, command: str, prefix: str, target: str) -> None:
    c = read_engine_file(_repo(tmp_path, command, prefix), "serving/serve.sh")
    assert (c.mechanism, c.draft_length, c.target_model) == ("eagle3", 7, target)


def test_a_config_file_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    shutil.copy(RECIPE, tmp_path / "eagle3.yaml")
    path = _repo(tmp_path / "repo", f"vllm serve {MODEL} --config ../../eagle3.yaml\n")
    with pytest.raises(InputError, match="leaves the repository") as info:
        read_engine_file(path, "serving/serve.sh")
    assert info.value.line == 1


def test_a_claims_engine_limits_what_is_followed(tmp_path: Path) -> None:
    # engine: sglang names no options file here: nothing is followed
    path = _repo(tmp_path, f"vllm serve {MODEL} --config configs/eagle3.yaml\n")
    with pytest.raises(InputError) as info:
        read_engine_file(path, "serving/serve.sh", engine="sglang")
    assert info.value.reason.startswith("no speculative decoding configured in serving/serve.sh")


def test_the_command_line_tensor_parallel_size_wins(tmp_path: Path) -> None:
    # cli > config: -tp 2 over the file's tensor-parallel-size 4
    command = f"vllm serve {MODEL} -tp 2 --config configs/eagle3.yaml\n"
    c = read_engine_file(_repo(tmp_path, command, "tensor-parallel-size: 4\n"), "serving/serve.sh")
    assert (c.draft_length, c.tensor_parallel_size) == (7, 2)
    assert "tensor_parallel_size 2 from -tp in serving/serve.sh:1" in c.notes


@pytest.mark.parametrize(("tp", "ignored"), [("4", True), ("1", False)])
def test_the_commands_tensor_parallel_size_judges_the_draft_tp(
    tmp_path: Path, tp: str, ignored: bool
) -> None:
    # The recipe states "draft_tensor_parallel_size":1 and no TP of its own; the command
    # states the target's. vLLM's EAGLE proposer runs at the target's TP, so a draft TP
    # of 1 beside --tensor-parallel-size 4 is silently ignored (SG307, as when the TP is
    # in the file; vllm-project/vllm issue 31345), and beside 1 it is what runs.
    path = _repo(
        tmp_path, f"vllm serve {MODEL} --config configs/eagle3.yaml --tensor-parallel-size {tp}\n"
    )
    c = read_engine_file(path, "serving/serve.sh")
    assert c.tensor_parallel_size == int(tp)
    messages = [i.message for i in c.issues if i.field == "draft_tensor_parallel_size"]
    if ignored:
        # a rewrite no claim rests on: a warn (docs/engines.md#refusals-and-rewrites); the served
        # draft TP is 4
        assert messages == [
            "vLLM runs eagle3 drafters at the target's tensor parallel size (4): "
            "draft_tensor_parallel_size 1 is silently ignored "
            "(vllm-project/vllm:vllm/v1/spec_decode/llm_base_proposer.py@v0.32.0)"
        ]
        assert [i.severity for i in c.issues if i.field == "draft_tensor_parallel_size"] == [
            "warn"
        ]
        assert c.draft_tensor_parallel_size == 4
    else:
        assert messages == []
        assert c.draft_tensor_parallel_size == 1
