"""The served model against the claims file's model (newuser.md defect 5, SG301).

Published values: Meta-Llama-3.1-8B's config.json (meta-llama on the Hub) counts
8,030,261,248 parameters and Llama-3.1-70B's 70,553,706,496 (tests/data/theory); their
``model_type`` is ``llama``; DeepSeek-V3's config.json says ``model_type: deepseek_v3``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.rules.test_rules import claims, dep

from specgate.check.report import FileReport
from specgate.model.served_model import same_model

Check = Callable[..., FileReport]
DATA = Path(__file__).resolve().parents[1] / "data"
LLAMA70 = DATA / "theory" / "hf-config" / "meta-llama--Meta-Llama-3.1-70B_config.json"
LLAMA8 = DATA / "real" / "hf-config" / "config" / "meta-llama--Meta-Llama-3.1-8B_config.json"
SERVE = (
    'vllm serve {model} --speculative-config '
    '\'{{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}}\'\n'
)


def _write(tmp_path: Path, served: str, config: Path | None = None, **extra: Any) -> dict[str, Any]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serve.sh").write_text(SERVE.format(model=served), encoding="utf-8")
    model: dict[str, Any] = {}
    if config is not None:
        data = json.loads(config.read_text(encoding="utf-8"))
        data.update(extra)
        (tmp_path / "config.json").write_text(json.dumps(data), encoding="utf-8")
        model["hf_config"] = "config.json"
    return model


def _sg301(report: FileReport) -> list[tuple[str, str, int | None]]:
    return [
        (f.severity, f.message, f.line)
        for f in report.all_findings()
        if f.code == "SG301"
    ]


def _sg301_details(report: FileReport) -> list[str]:
    """The details of the SG301 findings: why the names are judged as they are."""
    return [f.details for f in report.all_findings() if f.code == "SG301"]


def _check(check_text: Check, model: dict[str, Any]) -> FileReport:
    return check_text(claims(dep(
        rho=0.05, al=2.0, model=model,
        speculation={"engine": "vllm", "engine_config": "serve.sh", "engine_version": "0.32.0"},
    )))


def test_model_name_another_than_the_served_one_fails(tmp_path: Path, check_text: Check) -> None:
    # the reviewer's wrongmodel.specgate.yaml: model.name 70B, vllm serve 8B
    model = _write(tmp_path, "meta-llama/Llama-3.1-8B-Instruct")
    model["name"] = "meta-llama/Llama-3.1-70B-Instruct"
    (found,) = _sg301(_check(check_text, model))
    severity, text, _line = found
    assert severity == "fail"
    assert "meta-llama/Llama-3.1-70B-Instruct" in text
    assert "meta-llama/Llama-3.1-8B-Instruct" in text and "serve.sh" in text


@pytest.mark.parametrize(
    ("name", "served"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "META-LLAMA/llama-3.1-8b-instruct"),  # HF ids: case
        ("meta-llama/Llama-3.1-8B-Instruct", "/models/meta-llama/Llama-3.1-8B-Instruct/"),
        ("meta-llama/Llama-3.1-8B-Instruct", "/mnt/ckpt/Llama-3.1-8B-Instruct"),  # last part
        # published configs (tests/data/published-2026-12): variants and local folders
        ("zai-org/GLM-5", "/models/GLM-5-FP8"),  # 07: the FP8 checkpoint of GLM-5
        ("openai/gpt-oss-120b", "gpt_oss/gpt-oss-120b"),  # 16: a local folder, same name
        ("deepseek-ai/DeepSeek-V3-Lite", "DeepSeek-V3-Lite/fp8"),  # 17: a precision subfolder
        ("Qwen/Qwen3-14B", "/models/Qwen3-14B-Q4_K_M.gguf"),  # 19: a GGUF quantisation
        ("Qwen/Qwen3-4B", "Qwen3-4B.gguf"),  # 20, 21
        ("meta-llama/Llama-3.1-8B-Instruct", "/models/t.gguf"),  # a file name shows nothing
        # cases/report-31: a GGUF file under models/ is a path, not an id "models/…"
        ("stepfun-ai/Step-3.x-Flash", "models/step35-flash-Q3_K_M.gguf"),
        ("chat tier 8B", "meta-llama/Llama-3.1-8B-Instruct"),  # a label, not an id
        ("meta-llama/Llama-3.1-70B-Instruct", "$MODEL_PATH"),  # unknown: never fails
    ],
)
def test_the_same_model_or_an_unknown_one_is_no_finding(
    tmp_path: Path, check_text: Check, name: str, served: str
) -> None:
    model = _write(tmp_path, served)
    model["name"] = name
    assert _sg301(_check(check_text, model)) == []


def test_a_local_path_of_another_model_warns(tmp_path: Path, check_text: Check) -> None:
    model = _write(tmp_path, "/models/Llama-3.1-8B-Instruct")
    model["name"] = "meta-llama/Llama-3.1-70B-Instruct"
    report = _check(check_text, model)
    ((severity, text, _),) = _sg301(report)
    assert severity == "warn" and "/models/Llama-3.1-8B-Instruct" in text
    assert "a local path" in _sg301_details(report)[0]


def test_same_model_compares_the_names_less_variant_words() -> None:
    assert same_model("Qwen/Qwen3-8B", "/data/hub/Qwen/Qwen3-8B")
    assert same_model("Qwen/Qwen3-8B", "./qwen3-8b")
    assert same_model("Qwen/Qwen3-32B", "Qwen/Qwen3-32B-AWQ")
    assert not same_model("Qwen/Qwen3-8B", "Qwen/Qwen3-8B-Base")
    assert not same_model("Qwen/Qwen3-8B", "/models/Qwen3-32B")
    assert not same_model("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct")


def test_hf_config_of_a_70b_beside_a_served_8b_warns(tmp_path: Path, check_text: Check) -> None:
    # 70,553,706,496 parameters counted, 8B in the served id: 70.55/8 = 8.8 > 2
    model = _write(tmp_path, "meta-llama/Llama-3.1-8B-Instruct", LLAMA70)
    report = _check(check_text, model)
    ((severity, text, _),) = _sg301(report)
    assert severity == "warn"
    assert "70.55B parameters counted" in text and "8B" in text
    assert "G, β and the parameter count κ" in _sg301_details(report)[0]


def test_hf_config_of_another_family_warns(tmp_path: Path, check_text: Check) -> None:
    # the reviewer's mtp-nolayer.specgate.yaml: DeepSeek-V3 served, a llama config
    model = _write(tmp_path, "deepseek-ai/DeepSeek-V3", LLAMA8)
    ((severity, text, _),) = _sg301(_check(check_text, model))
    assert severity == "warn"
    assert "model_type llama" in text and "deepseek" in text


def test_hf_config_saved_from_another_model_warns(tmp_path: Path, check_text: Check) -> None:
    model = _write(
        tmp_path, "meta-llama/Llama-3.1-8B-Instruct", LLAMA8, _name_or_path="Qwen/Qwen3-8B"
    )
    ((severity, text, _),) = _sg301(_check(check_text, model))
    assert severity == "warn" and "_name_or_path Qwen/Qwen3-8B" in text


@pytest.mark.parametrize(
    "served",
    [
        "meta-llama/Llama-3.1-8B-Instruct",  # 8.03B counted, 8B named
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",  # a Llama distill names both families
        "lmsys/vicuna-7b-v1.3",  # a llama family word, 8.03/7 = 1.15 ≤ 2
        "my-org/finetuned-chat",  # no family word, no size: nothing to compare
    ],
)
def test_hf_config_of_the_served_model_is_no_finding(
    tmp_path: Path, check_text: Check, served: str
) -> None:
    model = _write(tmp_path, served, LLAMA8)
    assert _sg301(_check(check_text, model)) == []


MAVERICK = (
    DATA / "real" / "hf-config" / "config"
    / "meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json"
)
QWEN3_MOE = DATA / "theory" / "hf-config" / "Qwen--Qwen3-30B-A3B_config.json"


@pytest.mark.parametrize(
    ("served", "config"),
    [
        # Llama-4-Maverick-17B-128E names its active size: 17B active of ~400B total
        # (Meta's model card: "17B active parameters, 400B total"); the real review's
        # deployment 09 warned "400.7B parameters counted" against the 17B.
        ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", MAVERICK),
        # Qwen3-30B-A3B names its total (30.5B; 3.3B active, Qwen's model card)
        ("Qwen/Qwen3-30B-A3B", QWEN3_MOE),
    ],
)
def test_a_mixture_of_experts_id_may_name_its_active_or_its_total_size(
    tmp_path: Path, check_text: Check, served: str, config: Path
) -> None:
    model = _write(tmp_path, served, config)
    assert _sg301(_check(check_text, model)) == []
