"""Kubernetes-style engine configs (F34): a manifest of several YAML documents, and an
engine config held as YAML text in a ConfigMap's ``data``.

The embedded config is the published TensorRT-LLM file
``examples/configs/curated/deepseek-r1-latency.yaml`` (tests/data/real/SOURCES.md),
indented under ``data: {extra-llm-api-config.yml: |}`` as ``kubectl create configmap
--from-file`` writes it; the Deployment runs ``trtllm-serve … --extra_llm_api_options``
with the forcing variable of SG311 in its ``env``. The expected values are the ones
the real file gives on its own (test_engines_real.py), at lines shifted by the
ConfigMap's header and columns by its 4-space indent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file
from specgate.load.document import Span
from specgate.load.read import parse_text
from specgate.load.yaml_loader import MAX_DOCUMENTS, MAX_NESTED_ALIASES

REAL = (
    Path(__file__).parent.parent / "data/real/tensorrt-llm/config/curated-deepseek-r1-latency.yaml"
)
EXTRA = REAL.read_text(encoding="utf-8")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: r1-mtp
spec:
  template:
    spec:
      containers:
        - name: server
          image: nvcr.io/nvidia/tensorrt-llm/release:1.2.0
          env:
            - name: TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS
              value: "3"
          args:
            - trtllm-serve
            - deepseek-ai/DeepSeek-R1
            - --extra_llm_api_options
            - /cfg/extra-llm-api-config.yml
          volumeMounts:
            - {name: cfg, mountPath: /cfg}
"""
FORCE_LINE = 13  # value: "3"


def configmap(key: str) -> str:
    body = "".join(f"    {line}\n" if line else "\n" for line in EXTRA.splitlines())
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n"
        f"  {key}: |\n{body}"
    )


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def summary(path: Path, pointer: str | None = None) -> tuple[object, ...]:
    c = read_engine_file(path, "manifest.yaml", pointer=pointer)
    return (c.engine, c.mechanism, c.draft_length, c.verify_tokens, c.lossy_acceptance, c.pointer)


# The ConfigMap starts after the Deployment's lines and the "---" line; its data key is
# on the ConfigMap's line 6, so the real file's line k is manifest line START + 6 + k.
START = DEPLOYMENT.count("\n") + 1


@pytest.mark.parametrize(
    "pointer",
    [
        None,  # the search looks through every document
        "/1/data/extra-llm-api-config.yml",  # the pointer names the YAML text
        "/1/data/extra-llm-api-config.yml/speculative_config",  # and continues into it
    ],
)
def test_manifest_of_two_documents(tmp_path: Path, pointer: str | None) -> None:
    path = write(tmp_path, DEPLOYMENT + "---\n" + configmap("extra-llm-api-config.yml"))
    c = read_engine_file(path, "manifest.yaml", pointer=pointer)
    # As the real file alone: MTP, max_draft_len 3 ⇒ D 3, N 4; relaxed acceptance ⇒ SG304.
    assert (c.engine, c.mechanism, c.draft_length, c.verify_tokens) == ("trtllm", "mtp", 3, 4)
    assert c.lossy_acceptance
    # Real file: draft_length at 12:18, lossy at line 13; here 4 columns further right.
    assert c.spans["draft_length"] == Span(START + 6 + 12, 18 + 4)
    assert c.spans["lossy_acceptance"].line == START + 6 + 13
    # The Deployment (document 0) forces acceptance for the config of document 1.
    assert sorted(i.code for i in c.issues) == ["SG304", "SG311"]
    assert c.spans["env:TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"].line == FORCE_LINE
    assert (c.version, c.version_source) == ("1.2.0", "image")


def test_configmap_alone_search_and_pointer(tmp_path: Path) -> None:
    path = write(tmp_path, configmap("extra-llm-api-config.yml"))
    assert summary(path)[:5] == ("trtllm", "mtp", 3, 4, True)
    assert summary(path, "/data/extra-llm-api-config.yml")[5] == "/data/extra-llm-api-config.yml"
    c = read_engine_file(path, "manifest.yaml")
    assert c.spans["draft_length"] == Span(6 + 12, 18 + 4)


def test_a_key_that_is_no_file_name_needs_the_pointer(tmp_path: Path) -> None:
    # The search enters YAML text only under a *.yaml/*.yml key; a pointer enters any.
    path = write(tmp_path, configmap("engine"))
    with pytest.raises(InputError, match="no speculative decoding configured"):
        read_engine_file(path, "manifest.yaml")
    assert summary(path, "/data/engine")[:4] == ("trtllm", "mtp", 3, 4)


def test_a_config_in_each_document_is_a_choice_to_make(tmp_path: Path) -> None:
    vllm = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: v}\nspec:\n  containers:\n"
        "    - name: v\n      args: [vllm, serve, m, --speculative-config, "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4}']\n"
    )
    path = write(tmp_path, vllm + "---\n" + configmap("extra-llm-api-config.yml"))
    with pytest.raises(InputError, match=r"2 speculative configurations.*/0/.*/1/"):
        read_engine_file(path, "manifest.yaml")
    assert summary(path, "/0")[:3] == ("vllm", "ngram", 4)
    assert summary(path, "/1")[:3] == ("trtllm", "mtp", 3)


def test_embedded_text_keeps_the_limits(tmp_path: Path) -> None:
    # b holds 10 aliases of a, used 11 times: 110 nested aliases, past the bound
    anchors = "a: &a 1\nb: &b [" + ", ".join(["*a"] * 10) + "]\n" + "".join(
        f"c{i}: *b\n" for i in range(11)
    )
    bomb = "".join(f"    {line}\n" for line in anchors.splitlines())
    path = write(
        tmp_path,
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  cfg.yaml: |\n" + bomb + "  x.yaml: |\n"
        + "".join(f"    {line}\n" for line in EXTRA.splitlines() if line),
    )
    # The search skips text over a limit (and finds the other config) ...
    assert summary(path)[:3] == ("trtllm", "mtp", 3)
    # ... a pointer naming it says which limit.
    limit = rf"the YAML text at /data/cfg.yaml: more than {MAX_NESTED_ALIASES} nested"
    with pytest.raises(InputError, match=limit):
        read_engine_file(path, "manifest.yaml", pointer="/data/cfg.yaml")


def test_claims_files_still_hold_one_document() -> None:
    text = "version: 1\ndeployments: []\n---\nversion: 1\n"
    with pytest.raises(InputError, match="several YAML documents in one file"):
        parse_text(text, "c.specgate.yaml", json_syntax=False)


def test_documents_are_bounded(tmp_path: Path) -> None:
    path = write(tmp_path, "a: 1\n---\n" * (MAX_DOCUMENTS + 1))
    with pytest.raises(InputError, match=f"more than {MAX_DOCUMENTS:,} YAML documents"):
        read_engine_file(path, "manifest.yaml")
