"""docs/theory.md#acceptance-rate-kinds: the `draft-acceptance-rate` metrics format, and the
mechanism recommendation that offers MTP only to a model that can carry it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rules.test_rules import only

from specgate.check.report import FileReport
from specgate.reporters.json_report import deployment_inputs

Check = Callable[..., FileReport]
REAL = Path(__file__).resolve().parent.parent / "data" / "real" / "hf-config" / "config"


def _rate_claims(rate: float, extra: str = "      draft_length: 4\n") -> str:
    return (
        "version: 1\ndeployments:\n  - name: r\n    speculation:\n      enabled: true\n"
        f"{extra}      draft_depth_ratio: 0.05\n    evidence:\n      cache_coherence_eval: true\n"
        f"      metrics:\n        format: draft-acceptance-rate\n        rate: {rate}\n"
    )


def test_draft_acceptance_rate_is_not_the_iid_alpha(check_text: Check) -> None:
    # r = 0.607 at D = 4: AL = 1 + 0.607·4 = 3.428 (the i.i.d. α = 0.607 would give
    # (1 − 0.607^5) / (1 − 0.607) = (1 − 0.082403) / 0.393 = 2.3349,
    # docs/theory.md#acceptance-rate-kinds: 2.335)
    report = check_text(_rate_claims(0.607))
    deployment = only(report)
    assert deployment.metrics.accept_length == pytest.approx(3.428)
    acceptance = deployment_inputs(deployment)["acceptance"]
    assert acceptance["formula"] == "1 + 0.607·4"
    assert acceptance["estimate"] is False
    text = _rate_claims(0.607).replace("draft-acceptance-rate", "iid-rate")
    text = text.replace("rate: ", "alpha: ")
    assert only(check_text(text, name="i.specgate.yaml")).metrics.accept_length == pytest.approx(
        2.3349, abs=5e-5
    )


def test_draft_acceptance_rate_needs_d(check_text: Check) -> None:
    # Contract change (issue 24): no D anywhere is SG316 (fail) at `metrics:` (line 9,
    # column 7) in the claims file, not an input error of the file
    report = check_text(_rate_claims(0.5, extra=""))
    assert report.status == "fail" and report.error is None
    (sg316,) = [f for f in report.all_findings() if f.code == "SG316"]
    assert (sg316.line, sg316.column, sg316.severity) == (9, 7, "fail")
    assert "draft_length" in sg316.message


def test_draft_acceptance_rate_out_of_range_is_sg001(check_text: Check) -> None:
    report = check_text(_rate_claims(1.5))
    assert [f.code for f in report.all_findings()] == ["SG001"]


def test_draft_acceptance_rate_with_an_adaptive_d_is_an_estimate(
    tmp_path: Path, check_text: Check
) -> None:
    # n-gram D 8 from the vLLM config is a maximum: AL = 1 + 0.25·8 = 3 is labelled an estimate
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving" / "vllm.yaml").write_text(
        "model: m\nspeculative-config:\n  method: ngram\n  num_speculative_tokens: 8\n"
        "  prompt_lookup_max: 4\n",
        encoding="utf-8",
    )
    text = _rate_claims(0.25, extra="      engine_config: serving/vllm.yaml\n")
    deployment = only(check_text(text))
    assert deployment.metrics.accept_length == pytest.approx(3.0)
    assert deployment_inputs(deployment)["acceptance"]["estimate"] is True


def _large(check_text: Check, model: str) -> str:
    text = (
        "version: 1\ndeployments:\n  - name: big\n    model:\n" + model
        + "    speculation:\n      enabled: false\n"
    )
    report = check_text(text)
    assert report.error is None, report.error
    return only(report).recommended.name


def test_mtp_only_for_models_that_carry_it(check_text: Check, tmp_path: Path) -> None:
    # unknown: the seed's class, labelled "if the model ships them" (issue 26; the
    # reason names parallel-draft-head for a model that ships none)
    assert _large(check_text, "      parameters_b: 70\n") == "target-attached-mtp"
    # stated: no MTP modules → parallel-draft-head; stated yes → MTP
    assert _large(check_text, "      parameters_b: 70\n      mtp_modules: false\n") == (
        "parallel-draft-head"
    )
    assert _large(check_text, "      moe: true\n      mtp_modules: true\n") == (
        "target-attached-mtp"
    )
    # read from a model config: Mixtral-8x7B (MoE) has no MTP layers; DeepSeek-V3 has
    # num_nextn_predict_layers 1
    names = ("mistralai--Mixtral-8x7B-v0.1_config.json", "deepseek-ai--DeepSeek-V3_config.json")
    for name in names:
        shutil.copy(REAL / name, tmp_path / name)
    mixtral = "      moe: true\n      hf_config: mistralai--Mixtral-8x7B-v0.1_config.json\n"
    assert _large(check_text, mixtral) == "parallel-draft-head"
    deepseek = "      moe: true\n      hf_config: deepseek-ai--DeepSeek-V3_config.json\n"
    assert _large(check_text, deepseek) == "target-attached-mtp"
    # the stated key wins over the config
    assert _large(check_text, mixtral + "      mtp_modules: true\n") == "target-attached-mtp"
