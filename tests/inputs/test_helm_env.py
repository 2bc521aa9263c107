"""vllm-stack values' ``env`` reaches the container as the chart's template renders it
(docs/engines.md#environment-values): it was dropped, so ``VLLM_USE_V2_MODEL_RUNNER`` set
there was read as unset. Expected values worked by hand from vllm-project/production-stack
``helm/templates/deployment-vllm-multi.yaml@f1f98227``: ``VLLM_USE_V1: "0"`` when
``vllmConfig.v0`` is 1, then ``{{- with $modelSpec.env }} {{- toYaml . }}``, then an
``envFrom`` of the release's ConfigMap when ``servingEngineSpec.configs`` is set; Kubernetes
then expands ``$(X)`` from the items before it.
"""

from __future__ import annotations

from pathlib import Path

from specgate.inputs.engines.kube_env import kubernetes_env
from specgate.inputs.engines.read import load_engine_document
from specgate.inputs.env_files import EnvFiles

VALUES = """servingEngineSpec:
{configs}  modelSpec:
    - name: llama
      repository: vllm/vllm-openai
      tag: v0.26.0
      modelURL: meta-llama/Llama-3.1-8B-Instruct
      vllmConfig:
        v0: 1
      env:
        - name: X
          value: "1"
        - name: VLLM_USE_V2_MODEL_RUNNER
          value: "$(X)"
        - name: S
          valueFrom: {{secretKeyRef: {{name: s, key: s}}}}
"""


def _files(tmp: Path, configs: str = "") -> EnvFiles | None:
    (tmp / "values.yaml").write_text(VALUES.format(configs=configs))
    doc = load_engine_document(tmp / "values.yaml", "values.yaml")
    return kubernetes_env(doc, (0, "spec", "template", "spec", "containers", 0, "command"))


def test_the_values_env_is_the_containers(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert files is not None
    values = {k: (v, line) for k, (v, _, line) in files.values.items()}
    assert values == {"VLLM_USE_V1": ("0", 8), "X": ("1", 11),
                      "VLLM_USE_V2_MODEL_RUNNER": ("1", 13)}
    assert set(files.unsettled) == {"S"}
    assert files.opaque is None


def test_the_release_configmap_may_set_any_name(tmp_path: Path) -> None:
    files = _files(tmp_path, "  configs:\n    A: b\n")
    assert files is not None and files.opaque is not None
