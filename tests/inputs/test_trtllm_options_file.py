"""A ``trtllm-serve`` command that names its LLM-API options file
(``--extra_llm_api_options`` / ``--config``): the file is followed like a referenced
engine config, confined to the repository.

The options file is the published TensorRT-LLM
``examples/configs/curated/qwen3.8-low-latency-mtp3.yaml`` (tests/data/real/SOURCES.md):
``decoding_type: MTP`` (line 28) and ``max_draft_len: 3`` (line 29) ⇒ D 3, N_verify 4;
``tensor_parallel_size: 16`` (line 4); no ``model:`` key. ``"  max_draft_len: "`` is 17
characters, so D's value starts at column 18. Flag names and the positional MODEL:
``tensorrt_llm/commands/serve.py`` (data/engines/trtllm.json).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.follow import named_files
from specgate.load.document import Span

REAL = Path(__file__).parent.parent / "data/real/tensorrt-llm/config"
MTP3 = REAL / "curated-qwen3.8-low-latency-mtp3.yaml"
QWEN = "Qwen/Qwen3.8-235B-A22B"


def _repo(tmp_path: Path, file: str, text: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    (tmp_path / "serving/configs").mkdir(parents=True, exist_ok=True)
    shutil.copy(MTP3, tmp_path / "serving/configs/mtp3.yaml")
    target = tmp_path / "serving" / file
    target.write_text(text, encoding="utf-8")
    return target


def _read(path: Path) -> tuple[str, str | None, int | None, int | None, int | None]:
    c = read_engine_file(path, f"serving/{path.name}")
    assert c.engine == "trtllm"
    assert c.spans["draft_length"] == Span(29, 18)
    return c.path, c.mechanism, c.draft_length, c.verify_tokens, c.tensor_parallel_size


def test_a_shell_command_names_a_relative_options_file(tmp_path: Path) -> None:
    command = f"trtllm-serve --tp_size 16 {QWEN} \\\n  --extra_llm_api_options configs/mtp3.yaml\n"
    path = _repo(tmp_path, "serve.sh", command)
    assert _read(path) == ("serving/configs/mtp3.yaml", "mtp", 3, 4, 16)
    config = read_engine_file(path, "serving/serve.sh")
    # MODEL after an option (click parses interspersed arguments)
    assert config.target_model == QWEN
    assert config.notes[0] == (
        "speculative configuration read from serving/configs/mtp3.yaml, the options file "
        "that --extra_llm_api_options names in serving/serve.sh:2"
    )


def test_config_spelling_subcommand_and_switch(tmp_path: Path) -> None:
    command = f"trtllm-serve serve --trust_remote_code {QWEN} --config ./configs/mtp3.yaml\n"
    path = _repo(tmp_path, "serve.sh", command)
    assert _read(path)[1:3] == ("mtp", 3)
    assert read_engine_file(path, "serving/serve.sh").target_model == QWEN


COMPOSE = f"""\
services:
  trtllm:
    image: nvcr.io/nvidia/tensorrt-llm/release:1.2.0
    volumes:
      - ./configs:/cfg:ro
    command: trtllm-serve {QWEN} --extra_llm_api_options /cfg/mtp3.yaml
"""


def test_a_container_path_is_followed_through_the_volume(tmp_path: Path) -> None:
    path = _repo(tmp_path, "compose.yaml", COMPOSE)
    assert _read(path) == ("serving/configs/mtp3.yaml", "mtp", 3, 4, 16)
    config = read_engine_file(path, "serving/compose.yaml")
    assert config.target_model == QWEN
    # the version comes from the command's file (its image tag)
    assert (config.version, config.version_source) == ("1.2.0", "image")


def test_the_options_files_model_wins(tmp_path: Path) -> None:
    path = _repo(tmp_path, "serve.sh", f"trtllm-serve {QWEN} --config configs/mtp3.yaml\n")
    options = tmp_path / "serving/configs/mtp3.yaml"
    options.write_text("model: other/model\n" + MTP3.read_text(encoding="utf-8"), "utf-8")
    assert read_engine_file(path, "serving/serve.sh").target_model == "other/model"


@pytest.mark.parametrize(
    ("written", "reason"),
    [
        ("../../outside.yaml", "leaves the repository"),
        ("configs/missing.yaml", "does not exist"),
        ("/etc/passwd", "a path inside the container"),
    ],
)
def test_hostile_paths_are_input_errors_at_the_command(
    tmp_path: Path, written: str, reason: str
) -> None:
    (tmp_path / "outside.yaml").write_text(MTP3.read_text(encoding="utf-8"), "utf-8")
    path = _repo(tmp_path / "repo", "serve.sh", f'trtllm-serve {QWEN} --config "{written}"\n')
    with pytest.raises(InputError) as info:
        read_engine_file(path, "serving/serve.sh")
    assert reason in info.value.reason
    assert info.value.line == 1


def test_a_nul_byte_in_the_path_is_an_input_error(tmp_path: Path) -> None:
    # YAML's "\\0" escape puts a NUL byte in the command string
    text = f'command: "trtllm-serve {QWEN} --config configs/nul\\0.yaml"\n'
    path = _repo(tmp_path, "compose.yaml", text)
    with pytest.raises(InputError, match="NUL byte") as info:
        read_engine_file(path, "serving/compose.yaml")
    assert info.value.line == 1


def test_a_symlink_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text(MTP3.read_text(encoding="utf-8"), "utf-8")
    path = _repo(tmp_path / "repo", "serve.sh", f"trtllm-serve {QWEN} --config configs/link.yaml\n")
    os.symlink(secret, tmp_path / "repo/serving/configs/link.yaml")
    with pytest.raises(InputError, match="leaves the repository"):
        read_engine_file(path, "serving/serve.sh")


def test_a_volume_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "mtp3.yaml").write_text(MTP3.read_text(encoding="utf-8"), "utf-8")
    text = COMPOSE.replace("./configs:/cfg:ro", "../..:/cfg:ro")
    path = _repo(tmp_path / "repo", "compose.yaml", text)
    with pytest.raises(InputError, match="leaves the repository"):
        read_engine_file(path, "serving/compose.yaml")


def test_the_options_file_is_followed_once(tmp_path: Path) -> None:
    # an options file holding only another command that names a file: not followed again
    path = _repo(tmp_path, "serve.sh", f"trtllm-serve {QWEN} --config configs/next.yaml\n")
    (tmp_path / "serving/configs/next.yaml").write_text(
        "launch: trtllm-serve m --config mtp3.yaml\n", "utf-8"
    )
    with pytest.raises(InputError, match="no speculative decoding configured in "):
        read_engine_file(path, "serving/serve.sh")


def test_two_different_options_files_ask_for_a_pointer(tmp_path: Path) -> None:
    text = (
        f"trtllm-serve {QWEN} --config configs/mtp3.yaml\n"
        f"trtllm-serve {QWEN} --config configs/other.yaml\n"
    )
    path = _repo(tmp_path, "serve.sh", text)
    with pytest.raises(InputError, match="2 launch commands name options files"):
        read_engine_file(path, "serving/serve.sh")


def test_many_options_files_are_named_five_then_counted(tmp_path: Path) -> None:
    # one line however many commands a hostile file holds: five named, then a count
    text = "".join(f"trtllm-serve {QWEN} --config configs/c{i}.yaml\n" for i in range(1000))
    path = _repo(tmp_path, "serve.sh", text)
    with pytest.raises(InputError) as err:
        read_engine_file(path, "serving/serve.sh")
    assert err.value.reason == (
        "1000 launch commands name options files in serving/serve.sh: 'configs/c0.yaml' at /, "
        "'configs/c1.yaml' at /, 'configs/c2.yaml' at /, 'configs/c3.yaml' at /, "
        "'configs/c4.yaml' at / and 995 more; choose one with `pointer:`"
    )


def test_findings_point_at_the_options_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path, "compose.yaml", COMPOSE)
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation:\n      enabled: true\n"
        "      engine: trtllm\n      draft_length: 4\n"
        "      engine_config: serving/compose.yaml\n    evidence: {accept_length: 2.0}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--format", "json", "c.specgate.yaml"])
    report = json.loads(capsys.readouterr().out)
    deployment = report["files"][0]["deployments"][0]
    # the claims file says D 4, the options file D 3: SG301 on the claims line (line 7,
    # "      draft_length: " 20 characters) naming max_draft_len's line
    # (docs/trust.md#one-cause-one-finding)
    (finding,) = [f for f in deployment["findings"] if f["code"] == "SG301"]
    assert ("file" not in finding, finding["line"], finding["column"]) == (True, 7, 21)
    (related,) = finding["related"]
    assert (related["file"], related["line"], related["column"]) == (
        "serving/configs/mtp3.yaml",
        29,
        18,
    )
    assert deployment["inputs"]["engine"]["target_model"] == QWEN
    assert code == 1


def test_named_files_for_the_change_gate(tmp_path: Path) -> None:
    # what a caller copying referenced files at REF must also copy (no disk lookups)
    path = _repo(tmp_path, "compose.yaml", COMPOSE)
    assert named_files(path, "serving/compose.yaml") == ["serving/configs/mtp3.yaml"]
    text = f"trtllm-serve {QWEN} --config ../../../etc/x.yaml\ntrtllm-serve m --config a.yaml\n"
    path = _repo(tmp_path, "serve.sh", text)
    assert named_files(path, "serving/serve.sh") == ["serving/a.yaml"]
    path.write_text("vllm serve m --port 8000\n", "utf-8")
    assert named_files(path, "serving/serve.sh") == []


EXTRA = REAL / "llm-api-extra-llm-api-config.yml"


def test_command_numbers_fill_what_the_options_file_leaves_out(tmp_path: Path) -> None:
    # the curated file states tensor_parallel_size 16 and max_seq_len 9472: it wins
    command = f"trtllm-serve {QWEN} --tp_size 8 --max_seq_len 4096 --config configs/mtp3.yaml\n"
    path = _repo(tmp_path, "serve.sh", command)
    c = read_engine_file(path, "serving/serve.sh")
    assert (c.tensor_parallel_size, c.max_model_len) == (16, 9472)
    # examples/llm-api/extra-llm-api-config.yml states neither: the command's stand
    # (MTP with num_nextn_predict_layers 8 ⇒ D 8)
    shutil.copy(EXTRA, tmp_path / "serving/configs/mtp3.yaml")
    c = read_engine_file(path, "serving/serve.sh")
    assert (c.draft_length, c.tensor_parallel_size, c.max_model_len) == (8, 8, 4096)
    assert "tensor_parallel_size 8 from --tp_size in serving/serve.sh:1" in c.notes
    assert "tensor_parallel_size" not in c.spans  # the value stands in another file


def test_a_command_number_that_is_not_an_integer_is_an_input_error(tmp_path: Path) -> None:
    path = _repo(
        tmp_path, "serve.sh", f"trtllm-serve {QWEN} --tp_size 1e999 --config configs/mtp3.yaml\n"
    )
    with pytest.raises(InputError, match="--tp_size must be an integer") as info:
        read_engine_file(path, "serving/serve.sh")
    assert info.value.line == 1


def test_the_long_tensor_parallel_name_is_the_same_option(tmp_path: Path) -> None:
    # serve.py@00209af1: @click.option("--tensor_parallel_size", "--tp_size"): one
    # option, two names; click matches them exactly, so the dashed spelling is no option
    # (click answers "No such option") and sets nothing specgate reads
    command = f"trtllm-serve {QWEN} --tensor_parallel_size 8 --config configs/mtp3.yaml\n"
    path = _repo(tmp_path, "serve.sh", command)
    shutil.copy(EXTRA, tmp_path / "serving/configs/mtp3.yaml")  # states no TP of its own
    c = read_engine_file(path, "serving/serve.sh")
    assert c.tensor_parallel_size == 8
    assert "tensor_parallel_size 8 from --tensor_parallel_size in serving/serve.sh:1" in c.notes
    path.write_text(command.replace("--tensor_parallel_size", "--tensor-parallel-size"), "utf-8")
    c = read_engine_file(path, "serving/serve.sh")
    assert c.tensor_parallel_size is None  # neither the command nor the file states one
