"""Chart values specgate parses but does not follow degrade to SG312 on their
deployment, at the value's line; the rest of the run is checked (issue 24: degrade,
never stop; docs/rules.md SG312). Exit 2 stays for a file that cannot be parsed.

Each case is one raise site of the chart readers, with the chart's own rule it rests on:

- production-stack ``deployment-vllm-multi.yaml@f1f98227`` prints ``maxModelLen`` with
  Go's ``%v``, which prints 1048576 as ``1.048576e+06`` (helm/helm#1707), a value
  specgate does not settle (``helm_values.go_text``);
- KServe's huggingfaceserver ``__main__.py@00397f1e``: ``--backend`` defaults to
  ``auto``, chosen at start, so vLLM is not known to run; an argument that is a mapping
  is no word the runtime passes on;
- llm-d ModelService ``_helpers.tpl@6ab49a0e``: a ``{{ … }}`` value is a template the
  chart renders (``tpl``), a ``s3://`` model URI is not one ``argsByProtocol`` maps here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

SPEC = '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'
SCRIPT = f"vllm serve org/m --speculative-config '{SPEC}'\n"

PRODUCTION_STACK = f"""\
servingEngineSpec:
  modelSpec:
  - name: "llama3"
    repository: "vllm/vllm-openai"
    tag: "v0.27.1"
    modelURL: "org/m"
    vllmConfig:
      maxModelLen: 1048576
      extraArgs:
        - "--speculative-config"
        - '{SPEC}'
"""

KSERVE_HEAD = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: m
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      args:
"""

LLMD = f"""\
modelArtifacts:
  name: org/m
  uri: URI
decode:
  containers:
  - name: vllm
    image: ghcr.io/llm-d/llm-d:v0.2.0
    modelCommand: vllmServe
    args:
      - --speculative-config
      - '{SPEC}'
"""

CASES = {
    # (values text, the line of the value SG312 points at)
    "production-stack, a number Go prints otherwise": (PRODUCTION_STACK, 8),
    "kserve, --backend chosen at start": (
        KSERVE_HEAD + f"        - --model_id=org/m\n        - --speculative-config\n"
        f"        - '{SPEC}'\n",
        10,
    ),
    "kserve, an argument that is a mapping": (
        KSERVE_HEAD + "        - --backend=vllm\n        - {a: 1}\n",
        12,
    ),
    "llm-d, a template value": (LLMD.replace("URI", '"{{ .Values.uri }}"'), 3),
    "llm-d, a protocol not mapped": (LLMD.replace("URI", "s3://bucket/m"), 3),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_unfollowed_chart_value_is_sg312_at_its_line(tmp_path: Path, case: str) -> None:
    values, line = CASES[case]
    (tmp_path / ".git").mkdir()
    (tmp_path / "values.yaml").write_text(values, "utf-8")
    (tmp_path / "serve.sh").write_text(SCRIPT, "utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n"
        "  - name: chart\n    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: values.yaml}\n"
        "  - name: script\n    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 6,"
        " engine_config: serve.sh}\n",
        "utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None  # not exit 2: the file parses
    chart, script = report.deployments
    (unread,) = [f for f in chart.findings if f.code == "SG312"]
    assert (unread.file, unread.line) == ("values.yaml", line)
    # the other deployment is still checked: the script serves D 4, the claim says 6
    assert any(f.code == "SG301" for f in script.findings)


def test_a_values_file_that_does_not_parse_still_stops(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "values.yaml").write_text("servingEngineSpec: [\n", "utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: chart\n    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: values.yaml}\n",
        "utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is not None and "values.yaml" in str(report.error)


WRONG_SHAPES = {
    # values that parse but do not have the shape the chart's template reads
    "modelSpec a mapping": "servingEngineSpec:\n  modelSpec:\n    name: x\n",
    "vllmConfig a number": (
        "servingEngineSpec:\n  modelSpec:\n  - name: x\n    modelURL: org/m\n    vllmConfig: 5\n"
    ),
    "extraArgs a mapping": (
        "servingEngineSpec:\n  modelSpec:\n  - modelURL: org/m\n    vllmConfig:\n"
        "      extraArgs: {a: 1}\n"
    ),
    "llm-d containers a mapping": "modelArtifacts:\n  name: org/m\ndecode:\n  containers: {a: 1}\n",
    "llm-d without modelArtifacts.name": (
        "modelArtifacts:\n  uri: hf://x\ndecode:\n  containers:\n  - modelCommand: vllmServe\n"
    ),
    "kserve args a number": KSERVE_HEAD.replace("      args:\n", "      args: 5\n"),
    "kserve model a list": (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
        "spec:\n  predictor:\n    model: [1]\n"
    ),
}


@pytest.mark.parametrize("case", sorted(WRONG_SHAPES))
def test_a_values_file_of_the_wrong_shape_is_sg312(tmp_path: Path, case: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "values.yaml").write_text(WRONG_SHAPES[case], "utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: chart\n    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: values.yaml}\n",
        "utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    assert [f.file for f in report.deployments[0].findings if f.code == "SG312"] == [
        "values.yaml"
    ]
