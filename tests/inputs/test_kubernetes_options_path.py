"""An options file a Kubernetes container names through ``$(NAME)``.

Kubernetes expands ``$(NAME)`` in ``command`` and ``args`` from the container's env,
and passes a reference to a name the container does not set unchanged (kubernetes.io,
"Define a Command and Arguments for a Container"; "Define Dependent Environment
Variables"). ``args`` runs after ``command`` (the same page: ``command`` overrides the
image's ENTRYPOINT, ``args`` its CMD). So ``--config $(CFG)`` with ``CFG: spec.yaml`` in
the env reads ``spec.yaml`` (vLLM's ``--config`` file, D its
``num_speculative_tokens``: 4 below), and with no ``CFG`` the engine receives the text
``$(CFG)``: no file specgate can read, SG312 at that word (docs/engines.md#not-read).
Lines and columns are counted by hand in the manifests below: ``$(CFG)`` stands at line
12, column 38 (``        args: ["org/m", "--config", "`` is 37 characters); in the
one-``command`` form ``$(OPTS)`` at line 9, column 66.
"""

from __future__ import annotations

from pathlib import Path

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

ARGS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.0
        command: ["vllm", "serve"]
        args: ["org/m", "--config", "$(CFG)"]
{env}"""
COMMAND = """\
apiVersion: v1
kind: Pod
metadata:
  name: t
spec:
  containers:
    - name: trt
      image: nvcr.io/nvidia/tensorrt-llm/release:1.2.0
      command: ["trtllm-serve", "m", "--extra_llm_api_options", "$(OPTS)"]
"""
SPEC = "speculative_config:\n  method: ngram\n  num_speculative_tokens: 4\n  prompt_lookup_max: 4\n"


def _findings(top: Path, manifest: str, draft_length: int) -> dict[str, tuple[object, ...]]:
    (top / ".git").mkdir(parents=True)
    (top / "k8s.yaml").write_text(manifest, "utf-8")
    (top / "spec.yaml").write_text(SPEC, "utf-8")
    (top / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, "
        f"draft_length: {draft_length}, engine_config: k8s.yaml}}\n",
        "utf-8",
    )
    report = check_file(top / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None  # never exit 2: the manifest parses
    return {f.code: (f.file, f.line, f.column, f.message, f.details)
            for f in report.deployments[0].findings}


def test_a_reference_the_container_does_not_set_is_sg312_at_its_word(tmp_path: Path) -> None:
    found = _findings(tmp_path / "args", ARGS.format(env=""), 4)
    assert found["SG312"][:3] == ("k8s.yaml", 12, 38)
    assert "$(CFG)" in f"{found['SG312'][3]} {found['SG312'][4]}"
    # the one-command form: was an unreadable file (exit 2)
    found = _findings(tmp_path / "command", COMMAND, 4)
    assert found["SG312"][:3] == ("k8s.yaml", 9, 66)


def test_a_reference_the_container_sets_names_the_file_through_args(tmp_path: Path) -> None:
    env = "        env:\n        - name: CFG\n          value: spec.yaml\n"
    found = _findings(tmp_path, ARGS.format(env=env), 6)
    # spec.yaml's D is 4, the claim 6: read, so the mismatch is found (SG301)
    assert "SG312" not in found
    assert "says 4" in str(found["SG301"][3])
