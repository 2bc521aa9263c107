"""A KServe InferenceService on the Hugging Face runtime, read as the vLLM command it runs.

Worked from the sources at a commit: the runtime
(``kserve/kserve:config/runtimes/kserve-huggingfaceserver.yaml@0a9dd8d0``) runs its
container with ``--model_name={{.Name}}`` and the InferenceService's ``args``; the server
(``python/huggingfaceserver/huggingfaceserver/__main__.py@00397f1e``) takes its own
flags (``--model_id``, ``--backend``, ``--max_model_len`` whose dest is vLLM's
``max_model_len``, …) and builds vLLM's engine arguments from the rest with
``model = model_id or model_dir``; ``--backend`` defaults to ``auto``, which picks vLLM
only when it is installed and supports the architecture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.inputs.types import EngineConfig

SPEC = (
    '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
)


def _isvc(args: list[str], storage: str = "") -> str:
    lines = "".join(f"        - '{a}'\n" for a in args)
    return (
        "apiVersion: serving.kserve.io/v1beta1\n"
        "kind: InferenceService\n"
        "metadata:\n"
        "  name: llama3\n"
        "spec:\n"
        "  predictor:\n"
        "    model:\n"
        "      modelFormat:\n"
        "        name: huggingface\n"
        + (f"      storageUri: {storage}\n" if storage else "")
        + "      args:\n"
        + lines
    )


def _read(tmp_path: Path, text: str) -> EngineConfig:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "isvc.yaml").write_text(text, "utf-8")
    return read_engine_file(tmp_path / "isvc.yaml", "isvc.yaml")


def test_the_args_vllm_receives(tmp_path: Path) -> None:
    c = _read(
        tmp_path,
        _isvc(
            [
                "--model_name=llama3",
                "--model_id=meta-llama/Llama-3.1-8B-Instruct",
                "--backend=vllm",
                "--max_model_len=16384",
                "--tensor-parallel-size=2",
                "--speculative-config",
                SPEC,
            ]
        ),
    )
    assert (c.engine, c.mechanism, c.draft_length) == ("vllm", "eagle3", 3)
    assert (c.tensor_parallel_size, c.max_model_len) == (2, 16384)
    assert c.target_model == "meta-llama/Llama-3.1-8B-Instruct"  # --model_id
    assert c.spans["max_model_len"].line == 14  # the args item, line 11 + 3
    assert c.spans["target_model"].line == 12


def test_without_model_id_the_model_is_the_storage_uri(tmp_path: Path) -> None:
    c = _read(
        tmp_path,
        _isvc(["--backend=vllm", "--speculative-config", SPEC], "hf://Qwen/Qwen3-8B"),
    )
    assert c.target_model == "Qwen/Qwen3-8B"


@pytest.mark.parametrize("backend", [[], ["--backend=auto"], ["--backend=huggingface"]])
def test_a_backend_chosen_at_start_is_refused_at_its_line(
    tmp_path: Path, backend: list[str]
) -> None:
    with pytest.raises(InputError) as caught:
        _read(tmp_path, _isvc(["--model_id=m/x", *backend, "--speculative-config", SPEC]))
    assert "--backend=vllm" in caught.value.reason
    assert caught.value.line == (12 if backend else 10)
