"""vLLM's MTP model types and layer-count keys, pinned to the engine's own answers.

scripts/record_vllm_mtp_types.py ran ``SpeculativeConfig.hf_config_override``
(vllm/config/speculative.py) inside the vLLM 0.27.1 and 0.32.0 environments on every
model type and architecture it compares, and on each layer-count key alone:
tests/data/engine_oracle/vllm-{0.27.1,0.32.0}-mtp-types.json. scripts/update_mtp_data.py
writes specgate's data from them; these tests fail when the data and the records differ,
and check that a served MTP on each such model is read as the engine reads it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.inputs.knowledge import knowledge, parse_version

ROOT = Path(__file__).resolve().parent.parent.parent
RECORDS = ROOT / "tests" / "data" / "engine_oracle"
DATA = ROOT / "src" / "specgate" / "data"


def _update_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "update_mtp_data", ROOT / "scripts" / "update_mtp_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDS / f"vllm-{version}-mtp-types.json").read_text())
    assert data["header"]["engine_version"] == version
    return data


@pytest.mark.parametrize("version", ["0.27.1", "0.32.0"])
def test_draft_tables_are_the_engines_answer(version: str) -> None:
    records = _records(version)["records"]
    data = knowledge("vllm")
    at = parse_version(version)
    for table, role in (
        ("draft_model_types", "model_type"),
        ("draft_architectures", "architecture"),
    ):
        engine = {r["name"] for r in records if r["as"] == role}
        ours = {n for n, m in data.table(table).items() if m == "mtp"}
        present = {n for n in ours if data.presence(table, n, at) == "present"}
        assert present == engine, (table, version)


def test_the_types_engines_v3_left_out_are_there() -> None:
    # the issue's list: each becomes an MTP draft in vLLM 0.32.0's own answer
    records = {r["name"]: r for r in _records("0.32.0")["records"] if r["as"] == "model_type"}
    named = [
        "dots3_note",
        "deepseek_v4",
        "pangu_ultra_moe",
        "kimi_k3",
        "ernie4_5_moe",
        "exaone_moe",
        "qwen4_exp",
        "nemotron_h",
        "bailing_hybrid",
        "intern_s2_preview",
    ]
    for name in named:
        assert records[name]["becomes"].endswith("_mtp"), name
        assert knowledge("vllm").table("draft_model_types")[name] == "mtp"


def test_layer_keys_are_the_engines_answer() -> None:
    script = _update_script()
    versions = script.derived()
    newest = {**versions["0.27.1"]["keys"], **versions["0.32.0"]["keys"]}
    data = json.loads((DATA / "models" / "mtp-vllm.json").read_text())
    assert data["layer_keys"]["entries"] == newest
    # hand-read from hf_config_override at 0.32.0: MiniMax-M3 getattr(hf_config,
    # "num_mtp_modules", 1); Qwen3.5 mtp_num_hidden_layers; Gemma-4 assistant n_predict=1;
    # dots3_note getattr(..., "num_nextn_predict_layers", 1); Inkling mtp_config's count
    entries = data["layer_keys"]["entries"]
    assert entries["minimax_m3_vl"] == {"keys": ["num_mtp_modules"], "default": 1}
    assert entries["qwen3_5"]["keys"] == ["mtp_num_hidden_layers"]
    assert entries["gemma4_assistant"] == {"keys": [], "fixed": 1}
    assert entries["dots3_note"] == {"keys": ["num_nextn_predict_layers"], "default": 1}
    assert entries["inkling_model"]["keys"] == ["mtp_config.num_nextn_predict_layers"]
    assert "llama" in data["model_types_without_mtp"]["entries"]
    assert "deepseek_v3" not in data["model_types_without_mtp"]["entries"]


def _claims(
    tmp_path: Path, config: dict[str, Any], version: str | None
) -> list[tuple[str, str | None, str]]:
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "serve.yaml").write_text(
        "model: m\nspeculative-config: {method: mtp, num_speculative_tokens: 1}\n"
    )
    pinned = f'      engine_version: "{version}"\n' if version else ""
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model:\n      name: m\n"
        "      hf_config: config.json\n    speculation:\n      enabled: true\n"
        f"      engine: vllm\n{pinned}      engine_config: serve.yaml\n"
        "    evidence:\n      accept_length: 1.5\n      cache_coherence_eval: true\n"
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    return [
        (f.code, f.severity, f"{f.message} {f.details}")  # details: issue 26
        for d in report.deployments
        for f in d.findings
        if f.code.startswith("SG3")
    ]


_HEADS = {
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "hidden_size": 512,
    "vocab_size": 512,
    "num_hidden_layers": 2,
}


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ({"model_type": "dots3_note", "num_nextn_predict_layers": 1}, "dots3_note_mtp"),
        ({"model_type": "deepseek_v4", "num_nextn_predict_layers": 1}, "deepseek_mtp"),
        ({"model_type": "pangu_ultra_moe", "num_nextn_predict_layers": 1}, "pangu_ultra_moe_mtp"),
        ({"model_type": "kimi_k3", "text_config": {"num_nextn_predict_layers": 1}}, "kimi_k3_mtp"),
        ({"model_type": "ernie4_5_moe", "num_nextn_predict_layers": 1}, "ernie_mtp"),
        ({"model_type": "exaone_moe", "num_nextn_predict_layers": 1}, "exaone_moe_mtp"),
        ({"model_type": "qwen4_exp", "mtp_num_hidden_layers": 1}, "qwen4_exp_mtp"),
        ({"model_type": "nemotron_h", "num_nextn_predict_layers": 1}, "nemotron_h_mtp"),
        ({"model_type": "bailing_hybrid", "num_nextn_predict_layers": 1}, "bailing_hybrid_mtp"),
        (
            {"model_type": "intern_s2_preview", "text_config": {"mtp_num_hidden_layers": 1}},
            "qwen3_5_mtp",
        ),
        ({"model_type": "minimax_m3_vl", "num_mtp_modules": 1}, "minimax_m3_mtp"),
    ],
)
def test_mtp_on_these_models_is_served(tmp_path: Path, config: dict[str, Any], why: str) -> None:
    # was SG307 fail "unsupported speculative method 'mtp' … is no mtp drafter"
    findings = _claims(tmp_path, {**_HEADS, **config, "architectures": ["X"]}, "0.32.0")
    assert not [f for f in findings if f[1] == "fail"], (why, findings)


def test_a_model_without_mtp_still_fails(tmp_path: Path) -> None:
    # vLLM 0.32.0's answer for a Llama target (oracle records vllm-*-mtp on llama-v512):
    # NotImplementedError "Unsupported speculative method: 'mtp'"
    findings = _claims(tmp_path, {**_HEADS, "model_type": "llama"}, "0.32.0")
    assert [f for f in findings if f[0] == "SG307" and f[1] == "fail"]


def test_a_model_type_specgate_does_not_know_only_warns(tmp_path: Path) -> None:
    findings = _claims(tmp_path, {**_HEADS, "model_type": "kimi_k9", "architectures": ["K9"]}, None)
    assert not [f for f in findings if f[1] == "fail"], findings
    (warned,) = [f for f in findings if f[0] == "SG307"]
    assert warned[1] == "warn" and "the data may be behind" in warned[2]


def test_minimax_counts_num_mtp_modules(tmp_path: Path) -> None:
    # vLLM reads MiniMax-M3's count from num_mtp_modules (default 1), not
    # num_nextn_predict_layers: a stated num_nextn_predict_layers 0 does not make it MTP-less
    from specgate.inputs.model_config import read_model_config
    from specgate.load.read import parse_text

    text = json.dumps(
        {
            **_HEADS,
            "model_type": "minimax_m3_vl",
            "num_nextn_predict_layers": 0,
            "num_mtp_modules": 3,
        }
    )
    shape = read_model_config(parse_text(text, "c.json", json_syntax=True), shown="c.json")
    assert (shape.mtp_known, shape.mtp_layers) == (3, 3)
    text = json.dumps({**_HEADS, "model_type": "minimax_m3_vl"})
    assert (
        read_model_config(parse_text(text, "c.json", json_syntax=True), shown="c.json").mtp_known
        == 1
    )
