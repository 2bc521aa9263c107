"""A pointer into a Helm values file names the Deployment its list item renders
(issue 24): the pointer users write, `/servingEngineSpec/modelSpec/N`, addressed the
rendered manifests before and stopped the run with "'servingEngineSpec' is not a list
index" (docs/engines.md#finding-the-configuration). D below is each item's
`num_speculative_tokens`, read off the values file by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.report import FileReport
from specgate.check.run import CheckOptions, check_file

VALUES = """\
servingEngineSpec:
  modelSpec:
  - name: llama
    repository: vllm/vllm-openai
    tag: v0.10.0
    modelURL: meta-llama/Llama-3.1-8B-Instruct
    vllmConfig:
      extraArgs: ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 4}']
  - name: off
    enabled: false
    repository: vllm/vllm-openai
    tag: v0.10.0
    modelURL: meta-llama/Llama-3.1-8B-Instruct
    vllmConfig:
      extraArgs: ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 5}']
  - name: qwen
    repository: vllm/vllm-openai
    tag: v0.10.0
    modelURL: Qwen/Qwen3-8B
    vllmConfig:
      extraArgs: ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 2}']
"""


def _check(root: Path, monkeypatch: pytest.MonkeyPatch, pointers: list[str]) -> FileReport:
    (root / ".git").mkdir()
    (root / "serving").mkdir()
    (root / "serving" / "values.yaml").write_text(VALUES, "utf-8")
    deployments = "".join(
        f"  - name: d{i}\n    speculation:\n      enabled: true\n"
        f"      engine_config: {{path: serving/values.yaml, pointer: {p}}}\n"
        "    evidence: {accept_length: 1.8}\n"
        for i, p in enumerate(pointers)
    )
    (root / "specgate.yaml").write_text(f"version: 1\ndeployments:\n{deployments}", "utf-8")
    monkeypatch.chdir(root)
    return check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())


def test_a_pointer_into_the_values_file_names_the_item_it_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # item 1 is disabled, so item 2 renders the second Deployment (/1): its pointer, one
    # into its vllmConfig, and /1 all read D 2; item 0 reads D 4
    report = _check(
        tmp_path, monkeypatch,
        ["/servingEngineSpec/modelSpec/0", "/servingEngineSpec/modelSpec/2/vllmConfig", "/1"],
    )
    assert report.error is None, report.error
    assert [d.metrics.draft_length for d in report.deployments] == [4, 2, 2]


def test_a_pointer_to_an_item_the_chart_does_not_render_says_which_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pointer that names nothing the chart renders is the claims file's reference error
    # (exit 2), as a pointer naming no key is; the message names what to write instead
    report = _check(tmp_path, monkeypatch, ["/servingEngineSpec/modelSpec/1"])
    assert report.status == "error"
    assert report.error == (
        "serving/values.yaml: JSON pointer /servingEngineSpec/modelSpec/1: "
        "serving/values.yaml is a chart's values file, read as the Deployments its "
        "template renders; a pointer names the values item one is rendered from "
        "(/servingEngineSpec/modelSpec/0, /servingEngineSpec/modelSpec/2) or its place "
        "among them (/0 for the first) (referenced from specgate.yaml)"
    )
