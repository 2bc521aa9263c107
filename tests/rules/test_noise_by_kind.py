"""Warnings that were noise, fixed by kind (issue 26): a greedy-draft warning on an AL
measured as served, a deprecated TensorRT-LLM key called removed, SG303 against the
target's maximum when the serving config states a smaller served length, and a derived
ρ far below any published drafter shown without comment."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_engine_checks import TRT_EAGLE, Run, check

from specgate.rules.catalogue import REGISTRY

__all__ = ["check"]  # the fixture, imported for its name


def _claims(engine: str, config: str, *, workload: str = "", evidence: str = "") -> str:
    return (
        "version: 1\ndeployments:\n  - name: d\n"
        + workload
        + "    speculation:\n      enabled: true\n"
        f"      engine: {engine}\n      engine_config: {config}\n"
        "      draft_depth_ratio: 0.05\n"
        "    evidence:\n      cache_coherence_eval: true\n"
        + evidence
    )


def _said(dep: dict[str, object], code: str) -> list[tuple[str, str, str]]:
    findings = dep["findings"]
    assert isinstance(findings, list)
    return [(f["severity"], f["message"], f["details"]) for f in findings if f["code"] == code]


# --- SG307: TensorRT-LLM's greedy drafts ------------------------------------------------

SAMPLED = "    workload: {temperature: 0.6, dataset: sharegpt}\n"


@pytest.mark.parametrize(
    ("evidence", "warns"),
    [
        # no evidence of how the AL was measured: the warning stands
        ("      accept_length: 2.5\n", True),
        # measured greedily (T 0) while serving at 0.6: it stands (SG406 says so too)
        ("      accept_length: 2.5\n      provenance: {temperature: 0}\n", True),
        # measured at 0.6 on another dataset: not the served traffic
        ("      accept_length: 2.5\n      provenance: {temperature: 0.6, dataset: gsm8k}\n",
         True),
        # measured at the served 0.6 on the served traffic: the engine's greedy drafts
        # are in that AL already
        ("      accept_length: 2.5\n      provenance: {temperature: 0.6, dataset: ShareGPT}\n",
         False),
        ("      accept_length: 2.5\n      provenance: {temperature: 0.6}\n", False),
    ],
)
def test_greedy_draft_warning_is_silent_for_an_al_measured_as_served(
    check: Run, evidence: str, warns: bool
) -> None:
    config = "serving/llm.yaml"
    _, dep = check(
        {
            "c.specgate.yaml": _claims("trtllm", config, workload=SAMPLED, evidence=evidence),
            config: TRT_EAGLE,
        }
    )
    greedy = [s for s in _said(dep, "SG307") if "greedily" in s[1]]
    assert bool(greedy) == warns
    if warns:
        ((severity, message, details),) = greedy
        assert severity == "warn" and "temperature 0.6" in message
        assert "_allow_greedy_draft_tokens" in details


# --- SG310: deprecated, not removed -------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        # llm_args.py @00043967: allow_advanced_sampling status="deprecated", a no-op kept
        # for compatibility; eagle_choices' validator warns and returns the value;
        # num_nextn_predict_layers warns and is moved to max_draft_len
        ("  allow_advanced_sampling: true\n", "allow_advanced_sampling"),
        ("  eagle_choices: [[0], [0, 0]]\n", "eagle_choices"),
    ],
)
def test_a_deprecated_trtllm_key_is_called_deprecated(
    check: Run, setting: str, key: str
) -> None:
    config = "serving/llm.yaml"
    _, dep = check(
        {"c.specgate.yaml": _claims("trtllm", config), config: TRT_EAGLE + setting}
    )
    ((severity, message, _details),) = _said(dep, "SG310")
    assert severity == "warn"
    assert message.startswith("TensorRT-LLM deprecates the setting (still accepted): ")
    assert key in message and "removed" not in message.split(":")[0]


def test_mtp_nextn_key_is_deprecated_and_still_read(check: Run) -> None:
    config = "serving/llm.yaml"
    mtp = "speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 2\n"
    _, dep = check({"c.specgate.yaml": _claims("trtllm", config), config: mtp})
    ((_, message, _),) = _said(dep, "SG310")
    assert message.startswith("TensorRT-LLM deprecates the setting (still accepted): ")
    # still read: D is the value it sets
    assert dep["metrics"]["draft_length"] == 2


def test_sg310_summary_names_deprecation() -> None:
    assert "deprecates" in REGISTRY["SG310"].summary


# --- SG303: the served length -------------------------------------------------------------

TARGET = '{"num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072}'
DRAFT = '{"num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 2048}'


def _sg303_run(check: Run, command: str) -> list[tuple[str, str, str]]:
    claims = (
        "version: 1\ndeployments:\n  - name: d\n    model:\n      hf_config: target.json\n"
        "    speculation:\n      enabled: true\n      engine: llamacpp\n"
        "      engine_config: cmd.txt\n      draft_hf_config: draft.json\n"
        "      draft_depth_ratio: 0.05\n"
    )
    _, dep = check(
        {"c.specgate.yaml": claims, "cmd.txt": command, "target.json": TARGET, "draft.json": DRAFT}
    )
    return _said(dep, "SG303")


LLAMA = "llama-server -m t.gguf -md d.gguf --spec-type draft-eagle3 --spec-draft-n-max 3"


def test_sg303_uses_the_served_context_llamacpp_states(check: Run) -> None:
    # -c 2048 (common/arg.cpp @0c1e57098: params.n_ctx): no request runs past 2048 = the
    # draft's 2048 positions
    assert _sg303_run(check, f"{LLAMA} -c 2048\n") == []
    assert _sg303_run(check, f"{LLAMA} --ctx-size 1024\n") == []


def test_sg303_compares_with_the_served_context_not_the_targets_maximum(check: Run) -> None:
    # --ctx-size 8192 > 2048: the served 8192 is the limit, not the target's 131072
    ((severity, message, _),) = _sg303_run(check, f"{LLAMA} --ctx-size 8192\n")
    assert severity == "warn"
    assert "below the served context 8192" in message and "131072" not in message


def test_sg303_without_a_served_length_uses_the_targets_maximum(check: Run) -> None:
    # no -c, and -c 0 (the model's own context): the target's 131072
    for command in (f"{LLAMA}\n", f"{LLAMA} -c 0\n"):
        ((_, message, _),) = _sg303_run(check, command)
        assert "the target's max_position_embeddings 131072" in message


# --- SG204: a derived ρ far below any published drafter -----------------------------------


def _rho_run(check_text_dir: Path, mechanism: str, measured: float) -> list[tuple[str, str, str]]:
    from specgate.check.run import CheckOptions, check_file

    path = check_text_dir / "c.specgate.yaml"
    path.write_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation:\n      enabled: true\n"
        f"      mechanism: {mechanism}\n      draft_length: 4\n"
        f"    evidence:\n      accept_length: 3\n      measured_speedup: {measured}\n"
        "      cache_coherence_eval: true\n",
        encoding="utf-8",
    )
    report = check_file(path, "c.specgate.yaml", CheckOptions())
    return [(f.severity, f.message, f.details) for f in report.all_findings() if f.code == "SG204"]


def test_a_derived_rho_far_below_any_published_drafter_is_called_implausible(
    tmp_path: Path,
) -> None:
    # AL 3, S 2.98, β 1, D 4: ρ = (3 / 2.98 − 1) / 4 = 0.0016779 < 0.038 / 4 = 0.0095
    ((severity, message, details),) = _rho_run(tmp_path, "eagle3", 2.98)
    assert severity == "note"
    assert "ρ = 0.0017" in message
    assert message.endswith("implausibly low, likely a measurement artefact")
    assert "0.038" in details


def test_a_plausible_derived_rho_and_a_lookups_get_no_comment(tmp_path: Path) -> None:
    # AL 3, S 2.5: ρ = (1.2 − 1) / 4 = 0.05, within the published range
    ((_, message, _),) = _rho_run(tmp_path, "eagle3", 2.5)
    assert "ρ = 0.05" in message and "implausibly" not in message
    # an n-gram lookup runs no model: ρ 0.0017 is what it may cost
    ((_, message, _),) = _rho_run(tmp_path, "ngram", 2.98)
    assert "implausibly" not in message


# --- a phrase said once -------------------------------------------------------------------


def test_an_unpinned_refusal_names_the_newest_version_once(check: Run) -> None:
    # TensorRT-LLM unpinned: the check was read at the newest release specgate knows
    # (1.2.0), which is also the version judged at; the SG307 said so twice
    config = "serving/llm.yaml"
    no_draft = "speculative_config:\n  decoding_type: Draft_Target\n  max_draft_len: 4\n"
    _, dep = check({"c.specgate.yaml": _claims("trtllm", config), config: no_draft})
    ((severity, _message, details),) = [
        s for s in _said(dep, "SG307") if "speculative_model must be specified" in s[1]
    ]
    assert severity == "warn"
    assert details.count("the newest specgate knows") == 1
    assert "read as TensorRT-LLM 1.2.0, the newest specgate knows" in details
