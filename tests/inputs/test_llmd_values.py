"""Helm values of the llm-d ModelService chart (v0.4.0), read as its decode Deployment
runs them.

Worked from ``llm-d-incubation/llm-d-modelservice:charts/llm-d-modelservice/templates/
_helpers.tpl@6ab49a0e`` (``vllmServeModelCommand``: ``command: ["vllm", "serve"]``,
``args``: the model from ``modelArtifacts.uri`` — ``hf://M`` gives ``M`` — then
``--port``, ``--tensor-parallel-size T`` when ``parallelism.tensor`` > 1,
``--served-model-name modelArtifacts.name`` and the container's ``args``) and
``decode-deployment.yaml@ab68329d`` (rendered when ``decode.create`` and not
``multinode``).
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
VALUES = f"""\
modelArtifacts:
  name: meta-llama/Llama-3.1-8B-Instruct
  uri: hf://meta-llama/Llama-3.1-8B-Instruct
decode:
  replicas: 2
  parallelism:
    tensor: 4
  containers:
  - name: vllm
    image: ghcr.io/llm-d/llm-d:v0.2.0
    modelCommand: vllmServe
    args:
      - --max-model-len
      - "16384"
      - --speculative-config
      - '{SPEC}'
"""


def _read(tmp_path: Path, text: str) -> EngineConfig:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "values.yaml").write_text(text, "utf-8")
    return read_engine_file(tmp_path / "values.yaml", "values.yaml")


def test_the_decode_container_is_vllm_serve(tmp_path: Path) -> None:
    c = _read(tmp_path, VALUES)
    assert (c.engine, c.mechanism, c.draft_length) == ("vllm", "eagle3", 3)
    assert (c.tensor_parallel_size, c.max_model_len) == (4, 16384)
    assert c.target_model == "meta-llama/Llama-3.1-8B-Instruct"
    assert c.spans["tensor_parallel_size"].line == 7  # decode.parallelism.tensor
    assert c.spans["target_model"].line == 3  # modelArtifacts.uri
    assert c.spans["max_model_len"].line == 14  # the "16384" item


def test_the_default_uri_renders_the_model_name(tmp_path: Path) -> None:
    # values.yaml@b5d214f5: uri: "hf://{{ .Values.modelArtifacts.name }}"
    c = _read(tmp_path, VALUES.replace("  uri: hf://meta-llama/Llama-3.1-8B-Instruct\n", ""))
    assert c.target_model == "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize(
    "change",
    [("decode:\n", "multinode: true\ndecode:\n"), ("  replicas: 2\n", "  create: false\n")],
)
def test_no_decode_deployment_no_configuration(tmp_path: Path, change: tuple[str, str]) -> None:
    with pytest.raises(InputError, match="speculative"):
        _read(tmp_path, VALUES.replace(*change))
