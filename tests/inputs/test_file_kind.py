"""An engine config whose name does not say its form (trial3/06, trial3/05;
docs/engines.md#not-read): an extensionless ``#!`` script is read by its interpreter
(``bash bin/serve`` runs it as bash, ``python3 bin/serve`` as Python), a Dockerfile and
a Helm template are forms not read (SG312 on that deployment, the rest checked), never
a YAML syntax error that stops the run.

Hand-worked values: the script's ``--speculative-config`` sets
``num_speculative_tokens`` 5, so D is 5, as its ``.sh`` twin reads.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.core.errors import UnreadForm
from specgate.inputs.engines.read import load_engine_document, read_engine_file

SPEC = '\'{"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}\''
SCRIPT = f"set -e\nexec vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config {SPEC}\n"
PYTHON = (
    "from vllm import LLM\n"
    'llm = LLM(model="meta-llama/Llama-3.1-8B-Instruct", speculative_config={"method": '
    '"ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4})\n'
)


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


@pytest.mark.parametrize(
    "shebang", ["#!/usr/bin/env bash", "#!/bin/bash", "#!/bin/sh", "#! /usr/bin/env -S bash -e"]
)
def test_an_extensionless_shell_script_reads_as_its_sh_twin(tmp_path: Path, shebang: str) -> None:
    bare = _write(tmp_path, "bin/serve", f"{shebang}\n{SCRIPT}")
    twin = _write(tmp_path, "serve.sh", f"{shebang}\n{SCRIPT}")
    assert read_engine_file(bare, "bin/serve").draft_length == 5
    assert read_engine_file(twin, "serve.sh").draft_length == 5


@pytest.mark.parametrize("shebang", ["#!/usr/bin/env python3", "#!/usr/bin/python3.11"])
def test_an_extensionless_python_script_reads_as_python(tmp_path: Path, shebang: str) -> None:
    path = _write(tmp_path, "bin/serve", f"{shebang}\n{PYTHON}")
    assert read_engine_file(path, "bin/serve").draft_length == 5


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("bin/serve", "#!/usr/bin/env node\nrequire('x')\n", "'node'"),
        ("Dockerfile", "FROM vllm/vllm-openai:v0.30.0\nCMD [\"m\"]\n", "a Dockerfile"),
        ("docker/gpu.Dockerfile", "FROM x\n", "a Dockerfile"),
        ("Containerfile", "FROM x\n", "a Dockerfile"),
    ],
)
def test_forms_not_read_are_named_at_line_one(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(UnreadForm, match=says) as caught:
        load_engine_document(path, name)
    assert caught.value.line == 1


def test_an_extensionless_file_without_a_shebang_is_still_yaml(tmp_path: Path) -> None:
    path = _write(tmp_path, "config", "speculative_config: {method: ngram}\n")
    assert load_engine_document(path, "config").data == {"speculative_config": {"method": "ngram"}}


TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "chart.fullname" . }}
spec:
  template:
    spec:
      containers:
        - args: [meta-llama/Llama-3.1-8B-Instruct, --speculative-config, {{ .Values.spec | quote }}]
"""


def test_a_helm_template_is_a_form_not_read_at_its_first_action(tmp_path: Path) -> None:
    # line 4 holds the first {{ }}
    _write(tmp_path, "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    path = _write(tmp_path, "chart/templates/deployment.yaml", TEMPLATE)
    with pytest.raises(UnreadForm, match="Go template") as caught:
        load_engine_document(path, "chart/templates/deployment.yaml")
    assert caught.value.line == 4
    # outside a chart, a template that does not parse as YAML is named the same way
    loose = _write(tmp_path, "k8s/deployment.yaml", TEMPLATE)
    with pytest.raises(UnreadForm, match="Go template"):
        load_engine_document(loose, "k8s/deployment.yaml")
    # a YAML file outside a chart whose string merely holds {{ }} is read as YAML
    fine = _write(tmp_path, "k8s/notes.yaml", 'note: "{{ not a template }}"\n')
    assert load_engine_document(fine, "k8s/notes.yaml").data == {"note": "{{ not a template }}"}


CLAIMS = """\
version: 1
deployments:
  - name: template
    model: {{name: meta-llama/Llama-3.1-8B-Instruct, query_heads: 32, kv_heads: 8, parameters_b: 8}}
    speculation: {{enabled: true, engine: vllm, engine_config: {first}, draft_depth_ratio: 0}}
    workload: {{name: chat, latency_region: low}}
    evidence: {{accept_length: 2.6, cache_coherence_eval: true}}
    claims: {{speedup: 2.0}}
  - name: script
    model: {{name: meta-llama/Llama-3.1-8B-Instruct, query_heads: 32, kv_heads: 8, parameters_b: 8}}
    speculation: {{enabled: true, engine: vllm, engine_config: bin/serve, draft_depth_ratio: 0}}
    workload: {{name: chat, latency_region: low}}
    evidence: {{accept_length: 2.6, cache_coherence_eval: true}}
    claims: {{speedup: 2.0}}
"""


@pytest.mark.parametrize("first", ["chart/templates/deployment.yaml", "Dockerfile"])
def test_the_other_deployment_is_still_checked(tmp_path: Path, first: str) -> None:
    (tmp_path / ".git").mkdir()
    _write(tmp_path, "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    _write(tmp_path, "chart/templates/deployment.yaml", TEMPLATE)
    _write(tmp_path, "Dockerfile", "FROM vllm/vllm-openai:v0.30.0\n")
    _write(tmp_path, "bin/serve", f"#!/usr/bin/env bash\n{SCRIPT}")
    _write(tmp_path, "c.specgate.yaml", CLAIMS.format(first=first))
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", "--format", "json", "c.specgate.yaml"])
    finally:
        os.chdir(here)
    template, script = json.loads(out.getvalue())["files"][0]["deployments"]
    (unread,) = [f for f in template["findings"] if f["code"] == "SG312"]
    assert (unread["file"], unread["severity"]) == (first, "warn")
    assert script["inputs"]["engine"]["draft_length"] == 5
    assert code == 0
