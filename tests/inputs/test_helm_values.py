"""Helm values of vLLM production-stack, read as its template renders them.

The expected command words are worked by hand from the chart's template,
``vllm-project/production-stack:helm/templates/deployment-vllm-multi.yaml@f1f98227``:
``command: ["vllm", "serve", modelURL, "--host", "0.0.0.0", "--port", PORT,
(--enable-lora) …, {{- with vllmConfig }} (--enable-chunked-prefill | --no-… when the key is
set), (--enable-prefix-caching | --no-enable-prefix-caching, always inside the block),
--max-model-len, --dtype, --tensor-parallel-size, --max-num-seqs,
--gpu_memory_utilization, --max_loras (each when the key is set), extraArgs…]``;
``image: "{{ repository }}:{{ tag }}"``. ``--host``/``--port`` set nothing specgate reads
and are not rendered. A modelSpec with ``raySpec`` is rendered by another template
(ray-cluster.yaml), one with ``enabled: false`` (values.yaml@00c38d1a) not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from specgate.check.options import CheckOptions
from specgate.check.run import check_file
from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.load.helm_values import go_text, rendered
from specgate.load.yaml_loader import load_yaml_documents

DATA = Path(__file__).parent.parent / "data/real/hf-config/config"
SPEC = (
    '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
)
VALUES = f"""\
servingEngineSpec:
  modelSpec:
  - name: "llama3"
    repository: "vllm/vllm-openai"
    tag: "v0.27.1"
    modelURL: "meta-llama/Llama-3.1-8B-Instruct"
    replicaCount: 1
    vllmConfig:
      maxModelLen: 16384
      tensorParallelSize: 2
      enablePrefixCaching: false
      extraArgs:
        - "--speculative-config"
        - '{SPEC}'
"""


def _render(text: str) -> Any:
    doc = rendered(load_yaml_documents(text, "values.yaml"))
    assert doc is not None
    return doc.data


def test_the_template_s_command_words() -> None:
    (deployment,) = _render(VALUES)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "vllm/vllm-openai:v0.27.1"
    assert container["command"] == [
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        # enableChunkedPrefill not set: nothing; enablePrefixCaching false: the else branch
        "--no-enable-prefix-caching",
        "--max-model-len",
        "16384",
        "--tensor-parallel-size",
        "2",
        "--speculative-config",
        SPEC,
    ]


def test_a_values_file_is_a_deployment_of_vllm(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "values.yaml").write_text(VALUES, "utf-8")
    c = read_engine_file(tmp_path / "values.yaml", "values.yaml")
    assert (c.engine, c.mechanism, c.draft_length) == ("vllm", "eagle3", 3)
    assert (c.tensor_parallel_size, c.max_model_len) == (2, 16384)
    assert c.target_model == "meta-llama/Llama-3.1-8B-Instruct"
    assert c.draft_model == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    assert (c.version, c.version_source) == ("0.27.1", "image")  # repository:tag
    # every value points at its values key
    assert c.spans["max_model_len"].line == 9
    assert c.spans["tensor_parallel_size"].line == 10
    assert c.spans["target_model"].line == 6
    assert c.spans["draft_length"].line == 14


def test_sg303_compares_the_draft_with_the_served_16384(tmp_path: Path) -> None:
    # The SpecForge Llama-3 EAGLE-3 draft has max_position_embeddings 2048, the target
    # 131072; the chart serves --max-model-len 16384: min(131072, 16384) = 16384 > 2048.
    (tmp_path / ".git").mkdir()
    (tmp_path / "values.yaml").write_text(VALUES, "utf-8")
    for name in (
        "meta-llama--Meta-Llama-3.1-8B_config.json",
        "specforge-llama3-8B-eagle3-draft.json",
    ):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    (tmp_path / "specgate.yaml").write_text(
        "version: 1\n"
        "deployments:\n"
        "  - name: llama\n"
        "    model:\n"
        "      hf_config: meta-llama--Meta-Llama-3.1-8B_config.json\n"
        "    speculation:\n"
        "      enabled: true\n"
        "      engine_config: values.yaml\n"
        "      draft_hf_config: specforge-llama3-8B-eagle3-draft.json\n"
        "    evidence:\n"
        "      accept_length: 2\n"
        "      cache_coherence_eval: true\n",
        "utf-8",
    )
    report = check_file(tmp_path / "specgate.yaml", "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (message,) = [f.message for d in report.deployments for f in d.findings if f.code == "SG303"]
    assert message.startswith(
        "draft max_position_embeddings 2048 is below the served context 16384 "
        "(max_model_len in values.yaml)"
    )


@pytest.mark.parametrize(
    "values",
    [
        VALUES.replace("    replicaCount: 1\n", "    enabled: false\n"),
        VALUES.replace("    replicaCount: 1\n", "    raySpec: {headNode: {requestGPU: 1}}\n"),
        VALUES.replace("servingEngineSpec:\n", "servingEngineSpec:\n  enableEngine: false\n"),
    ],
)
def test_a_model_the_deployment_template_does_not_render(values: str) -> None:
    assert _render(values) == []


def test_values_go_prints_otherwise_are_not_settled() -> None:
    # Helm holds numbers as float64 and Go's %v prints 1000000 as 1e+06
    # (helm/helm#1707); below a million an integer prints as written.
    assert (go_text(16384), go_text(2.0), go_text(0.95), go_text(True)) == (
        "16384",
        "2",
        "0.95",
        "true",
    )
    assert go_text(1_000_000) is None and go_text(0.00001) is None and go_text(None) is None
    with pytest.raises(InputError) as caught:
        _render(VALUES.replace("16384", "1048576"))
    assert caught.value.line == 9


def test_a_file_without_the_chart_s_list_is_not_a_values_file() -> None:
    assert rendered(load_yaml_documents("servingEngineSpec: {}\n", "v.yaml")) is None
    assert rendered(load_yaml_documents("image: x\n", "v.yaml")) is None
