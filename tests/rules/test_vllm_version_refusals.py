"""vLLM refusals read at each release (newuser.md defects 1 and 9).

Sources (the PyPI wheels, read with unzip):
- vllm/engine/arg_utils.py at 0.10.0, 0.10.1.1, 0.10.2 (``_is_v1_supported_oracle``:
  "Speculative decoding with draft model is not supported yet") and 0.11.0 … 0.14.0
  ("Draft model speculative decoding is not supported yet"; ``_check_feature_supported``
  from 0.11.1) raise NotImplementedError for ``method == "draft_model"``; 0.15.0's has
  neither and ships vllm/v1/spec_decode/draft_model.py.
- vllm/v1/worker/gpu_model_runner.py at 0.10.0 … 0.14.0 builds a drafter only for
  ngram, suffix, eagle and medusa, else "Unknown speculative decoding method".
- vllm/config.py at 0.9.2 (SpeculativeConfig.__post_init__): with no model only a
  deepseek_v3 or mimo target lends its weights, else "num_speculative_tokens was
  provided without speculative model.".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.rules.test_rules import claims, dep

from specgate.check.report import FileReport

Check = Callable[..., FileReport]
LLAMA8 = (
    Path(__file__).resolve().parents[1]
    / "data" / "real" / "hf-config" / "config" / "meta-llama--Meta-Llama-3.1-8B_config.json"
)


def _sg307(report: FileReport) -> list[tuple[str, str, str | None, int | None]]:
    return [
        (f.severity, f.message, f.file, f.line)
        for f in report.all_findings()
        if f.code == "SG307"
    ]


def _sg307_said(report: FileReport) -> list[tuple[str, str]]:
    """(severity, message and details read together) of each SG307 finding."""
    return [
        (f.severity, f"{f.message} {f.details}")
        for f in report.all_findings()
        if f.code == "SG307"
    ]


def _run(
    tmp_path: Path, check_text: Check, block: dict[str, Any], version: str | None,
    *, model: str = "meta-llama/Llama-3.1-8B-Instruct", target_config: bool = False,
    draft_config: bool = False,
) -> FileReport:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "llama.json").write_text(LLAMA8.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "serve.yaml").write_text(
        f"model: {model}\nspeculative-config: '{json.dumps(block)}'\n", encoding="utf-8"
    )
    spec: dict[str, Any] = {"engine": "vllm", "engine_config": "serve.yaml"}
    if version is not None:
        spec["engine_version"] = version
    if draft_config:
        spec["draft_hf_config"] = "llama.json"
    return check_text(claims(dep(
        rho=0.2, al=2.0, speculation=spec,
        model={"hf_config": "llama.json"} if target_config else {},
    )))


DRAFT = {"method": "draft_model", "model": "meta-llama/Llama-3.2-1B-Instruct",
         "num_speculative_tokens": 4}
NO_METHOD = {"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 4}


@pytest.mark.parametrize("version", ["0.10.0", "0.10.1.1", "0.11.0", "0.12.0", "0.14.0"])
def test_draft_model_method_is_refused_before_0_15(
    tmp_path: Path, check_text: Check, version: str
) -> None:
    report = _run(tmp_path, check_text, DRAFT, version)
    found = _sg307(report)
    refusals = [f for f in found if "not supported yet" in f[1]]
    assert [(s, file, line) for s, _, file, line in refusals] == [("fail", "serve.yaml", 2)]
    # Contract change: the source read moved from the message to details
    (said,) = [text for _, text in _sg307_said(report) if "not supported yet" in text]
    assert "vllm/engine/arg_utils.py" in said


@pytest.mark.parametrize("version", ["0.15.0", "0.32.0", None])
def test_draft_model_method_is_not_refused_from_0_15_or_unpinned(
    tmp_path: Path, check_text: Check, version: str | None
) -> None:
    found = _sg307(_run(tmp_path, check_text, DRAFT, version))
    assert not [f for f in found if "not supported yet" in f[1] or "no draft-model" in f[1]]


def test_draft_model_without_method_fails_when_the_draft_config_says_so(
    tmp_path: Path, check_text: Check
) -> None:
    # the draft's config is a llama: no drafter vLLM detects, so draft_model
    found = _sg307(_run(tmp_path, check_text, NO_METHOD, "0.11.0", draft_config=True))
    assert [(s, file, line) for s, m, file, line in found if "no draft-model" in m] == [
        ("fail", "serve.yaml", 2)
    ]


def test_draft_model_without_method_or_draft_config_warns(
    tmp_path: Path, check_text: Check
) -> None:
    said = _sg307_said(_run(tmp_path, check_text, NO_METHOD, "0.10.1.1"))
    assert [s for s, text in said if "no draft-model proposer" in text] == ["warn"]


def test_mtp_on_a_model_without_mtp_layers_is_one_finding_named_as_written(
    tmp_path: Path, check_text: Check
) -> None:
    # newuser.md defect 9: vLLM 0.9.2, deepseek_mtp, a Llama config (no MTP layer)
    block = {"method": "deepseek_mtp", "num_speculative_tokens": 1}
    found = _sg307(_run(
        tmp_path, check_text, block, "0.9.2", model="deepseek-ai/DeepSeek-V3",
        target_config=True,
    ))
    assert len(found) == 1
    severity, text, file, line = found[0]
    assert (severity, file, line) == ("fail", "serve.yaml", 2)
    assert "method deepseek_mtp " in text and "'mtp'" not in text and "method mtp " not in text


def test_draft_tp_message_names_the_method_as_written(tmp_path: Path, check_text: Check) -> None:
    # vLLM runs MTP drafters at the target's TP and ignores another draft TP
    # (vllm/config/speculative.py@v0.32.0); the file says deepseek_mtp, vLLM calls it mtp
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serve.yaml").write_text(
        "model: deepseek-ai/DeepSeek-V3\ntensor-parallel-size: 8\nspeculative-config: "
        "'{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 1, "
        "\"draft_tensor_parallel_size\": 1}'\n",
        encoding="utf-8",
    )
    report = check_text(claims(dep(rho=0.02, al=1.8, speculation={
        "engine": "vllm", "engine_config": "serve.yaml", "engine_version": "0.32.0",
    })))
    texts = [m for _s, m, _f, _l in _sg307(report) if "drafters at the target" in m]
    assert len(texts) == 1
    assert "vLLM runs deepseek_mtp drafters" in texts[0]


@pytest.mark.parametrize(
    ("version", "words"),
    [
        # arg_utils.py:1399-1401 (0.10.0), :1452-1454 (0.10.1.1), :1498-1500 (0.10.2)
        ("0.10.0", "Speculative decoding with draft model is not supported yet. Please "
         "consider using other speculative decoding methods such as ngram, medusa, eagle, "
         "or deepseek_mtp."),
        ("0.10.2", "Speculative decoding with draft model is not supported yet. Please "
         "consider using other speculative decoding methods such as ngram, medusa, eagle, "
         "or deepseek_mtp."),
        # arg_utils.py:1487-1489 (0.11.0), :1794-1796 (0.14.1)
        ("0.11.0", "Draft model speculative decoding is not supported yet. Please consider "
         "using other speculative decoding methods such as ngram, medusa, eagle, or mtp."),
        ("0.14.1", "Draft model speculative decoding is not supported yet. Please consider "
         "using other speculative decoding methods such as ngram, medusa, eagle, or mtp."),
    ],
)
def test_the_draft_model_refusal_quotes_the_release_it_is_read_at(
    tmp_path: Path, check_text: Check, version: str, words: str
) -> None:
    # new-user trial U1: 0.10.x quoted 0.11.0's wording ("… or mtp.")
    refusals = [
        (s, m) for s, m, _, _ in _sg307(_run(tmp_path, check_text, DRAFT, version))
        if "not supported yet" in m
    ]
    assert [s for s, _ in refusals] == ["fail"]
    assert f"'{words}'" in refusals[0][1]
