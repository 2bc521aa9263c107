"""SGLang's checks judged as SGLang 0.5.23 itself answers (sglang.json).

Two kinds of defect, each pinned by the engine's own answer:

* MTP without MTP layers. SGLang decides by the target's ``architectures[0]``, never by
  vLLM's model types: ``_handle_eagle_family`` points the draft at the target for 14
  architectures, and with no draft path the draft worker loads the target's checkpoint
  anyway (tp_worker.py ``_init_model_config`` passes None, ``ModelConfig.from_server_args``
  falls back to the model path) and ``_config_draft_model`` builds its MTP class for the
  architectures of tests/data/engine_oracle/sglang-0.5.23-mtp-archs.json (run by
  scripts/record_sglang_mtp_archs.py). Run in the 0.5.23 environment (resolve_once, then
  the draft ModelConfig): NEXTN on the tiny LlamaForCausalLM resolves with no draft path
  and its draft config is the target's LlamaForCausalLM; on DeepseekV3ForCausalLM with
  num_nextn_predict_layers 0 (and 2) the draft is DeepseekV3ForCausalLMNextN, whose weight
  loader asserts 'Only 1 nextn layer is supported' (1 passes; absent: ValueError
  'num_nextn_predict_layers is not in the config').
* Judged before a rewrite. SGLang resolves ``--speculative-num-draft-tokens 6
  --speculative-eagle-topk 1 --speculative-num-steps 3 --enable-hisparse`` to 4 draft
  tokens (run: resolved_dict() speculative_num_draft_tokens 4, with and without a draft
  path) before the HiSparse coordinator's 2-4 check raises at start; with none of
  steps/topk/draft tokens given it picks 5/4/8 for LlamaForCausalLM and 3/1/4 for any
  other architecture (_auto_choose_speculative_params), and DFLASH forces topk 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.inputs.knowledge import knowledge

ROOT = Path(__file__).resolve().parent.parent.parent
RECORD = ROOT / "tests" / "data" / "engine_oracle" / "sglang-0.5.23-mtp-archs.json"

_HEADS = {"num_attention_heads": 8, "num_key_value_heads": 8, "hidden_size": 512,
          "vocab_size": 512, "num_hidden_layers": 2}
_LLAMA = {**_HEADS, "model_type": "llama", "architectures": ["LlamaForCausalLM"]}
_QWEN2 = {**_HEADS, "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}


def _deepseek(layers: int | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        **_HEADS, "model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"],
        "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
    }
    if layers is not None:
        config["num_nextn_predict_layers"] = layers
    return config


def _findings(
    tmp_path: Path, flags: str, config: dict[str, Any] | None = None
) -> list[tuple[str, str | None, str]]:
    """SG3xx findings (code, severity, message) of one SGLang launch at 0.5.23."""
    (tmp_path / "cmd.txt").write_text(
        f"python -m sglang.launch_server --model-path m {flags}\n"
    )
    model = "      hf_config: config.json\n" if config is not None else ""
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model:\n      name: m\n"
        f"{model}    speculation:\n      enabled: true\n      engine: sglang\n"
        '      engine_version: "0.5.23"\n      engine_config: cmd.txt\n'
        "    evidence:\n      accept_length: 1.5\n      cache_coherence_eval: true\n"
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    return [
        # what the finding says, message and details read together (issue 26 moved the
        # words past 200 characters and the source to details)
        (f.code, f.severity, f"{f.message} {f.details}")
        for d in report.deployments
        for f in d.findings
        if f.code.startswith("SG3")
    ]


def _fails(found: list[tuple[str, str | None, str]]) -> list[str]:
    return [m for code, severity, m in found if code == "SG307" and severity == "fail"]


CHAIN = "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"


# --- MTP without MTP layers -------------------------------------------------------


def test_the_draft_worker_table_is_the_engines_answer() -> None:
    records = json.loads(RECORD.read_text())
    assert records["engine_version"] == "0.5.23"
    run = {
        r["architecture"]: r["draft_architecture"]
        for r in records["architectures"]
        if "draft_architecture" in r and r["draft_architecture"] != r["architecture"]
    }
    ours = dict(knowledge("sglang").table("draft_worker_mtp_architectures"))
    # three architectures read further keys after their rewrite and raise on the bare
    # config the recorder gives them: their classes are read in _config_draft_model
    read = {"InklingForConditionalGeneration", "InternS2MobiusForConditionalGeneration",
            "LongcatFlashForCausalLM"}
    assert {k: v for k, v in ours.items() if k not in read} == run
    assert set(ours) - set(run) == read
    assert run["DeepseekV3ForCausalLM"] == "DeepseekV3ForCausalLMNextN"
    assert run["Qwen3MoeForCausalLM"] == "Qwen3MoeForCausalLMMTP"
    assert "LlamaForCausalLM" not in ours


def test_the_nextn_loader_answers_are_recorded() -> None:
    loader = {r["num_nextn_predict_layers"]: r for r in json.loads(RECORD.read_text())[
        "deepseek_nextn_loader"]}
    assert loader[1]["status"] == "ok"
    assert loader[0]["message"] == loader[2]["message"] == "Only 1 nextn layer is supported"
    assert loader[None]["message"] == "num_nextn_predict_layers is not in the config"


@pytest.mark.parametrize("algorithm", ["NEXTN", "EAGLE"])
@pytest.mark.parametrize("config", [_LLAMA, _QWEN2], ids=["llama", "qwen2"])
def test_a_target_sglang_builds_no_mtp_draft_for_warns(
    tmp_path: Path, algorithm: str, config: dict[str, Any]
) -> None:
    # the engine resolves and loads the target's checkpoint whole as the draft: no
    # refusal recorded, so no fail (was a fail on vLLM's "llama has no MTP")
    found = _findings(tmp_path, f"--speculative-algorithm {algorithm} {CHAIN}", config)
    assert not _fails(found), found
    warned = [m for code, sev, m in found if sev == "warn" and "whole as the draft" in m]
    assert len(warned) == 1 and config["architectures"][0] in warned[0], found


def test_an_architecture_specgate_does_not_know_warns(tmp_path: Path) -> None:
    config = {**_HEADS, "model_type": "kimi_k9", "architectures": ["KimiK9ForCausalLM"]}
    found = _findings(tmp_path, f"--speculative-algorithm NEXTN {CHAIN}", config)
    assert not _fails(found), found
    assert any("data may be behind" in m for _, sev, m in found if sev == "warn"), found


@pytest.mark.parametrize("config", [
    {**_HEADS, "model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"]},
    {**_HEADS, "model_type": "qwen3_next", "architectures": ["Qwen3NextForCausalLM"]},
], ids=["qwen3_moe", "qwen3_next"])
def test_a_target_the_draft_worker_turns_into_mtp_is_served(
    tmp_path: Path, config: dict[str, Any]
) -> None:
    # the draft worker builds Qwen3MoeForCausalLMMTP / Qwen3NextForCausalLMMTP from the
    # target with num_nextn_predict_layers set to 1 (recorded): MTP, no warning
    found = _findings(tmp_path, f"--speculative-algorithm NEXTN {CHAIN}", config)
    assert not _fails(found), found
    assert not any("whole as the draft" in m for _, _, m in found), found
    # qwen3_moe is a model type known to ship no MTP modules: the head is likely empty
    empty = any("likely left" in m for _, _, m in found)
    assert empty is (config["model_type"] == "qwen3_moe"), found


def test_a_draft_worker_mtp_target_with_zero_layers_warns(tmp_path: Path) -> None:
    # Qwen3-Next stating num_nextn_predict_layers 0: SGLang sets 1 and loads no weights
    config = {**_HEADS, "model_type": "qwen3_next", "architectures": ["Qwen3NextForCausalLM"],
              "num_nextn_predict_layers": 0}
    found = _findings(tmp_path, f"--speculative-algorithm NEXTN {CHAIN}", config)
    assert not _fails(found), found
    warned = [m for _, sev, m in found if sev == "warn" and "likely left" in m]
    assert len(warned) == 1 and "Qwen3NextForCausalLM" in warned[0], found


@pytest.mark.parametrize("layers", [0, 2])
@pytest.mark.parametrize("algorithm", ["NEXTN", "EAGLE"])
def test_deepseek_with_other_than_one_nextn_layer_fails(
    tmp_path: Path, layers: int, algorithm: str
) -> None:
    found = _findings(tmp_path, f"--speculative-algorithm {algorithm} {CHAIN}",
                      _deepseek(layers))
    fails = _fails(found)
    assert len(fails) == 1 and "Only 1 nextn layer is supported" in fails[0], found
    assert f"num_nextn_predict_layers {layers}" in fails[0]


def test_deepseek_without_the_key_fails(tmp_path: Path) -> None:
    found = _findings(tmp_path, f"--speculative-algorithm NEXTN {CHAIN}", _deepseek(None))
    fails = _fails(found)
    assert len(fails) == 1 and "num_nextn_predict_layers is not in the config" in fails[0]


def test_deepseek_with_one_nextn_layer_passes(tmp_path: Path) -> None:
    found = _findings(tmp_path, f"--speculative-algorithm NEXTN {CHAIN}", _deepseek(1))
    assert not _fails(found), found


def test_deepseek_with_a_draft_path_is_not_judged_by_its_own_layers(tmp_path: Path) -> None:
    flags = f"--speculative-algorithm EAGLE --speculative-draft-model-path d {CHAIN}"
    assert not _fails(_findings(tmp_path, flags, _deepseek(0)))


# --- judged on the values SGLang runs -----------------------------------------------


def _hisparse(found: list[tuple[str, str | None, str]]) -> list[str]:
    return [m for _, _, m in found if "HiSparse spec swap" in m]


def test_hisparse_judges_the_rewritten_draft_tokens(tmp_path: Path) -> None:
    # the brief's case: written 6, topk 1, steps 3 → SGLang runs 4 (inside 2-4)
    flags = ("--speculative-algorithm EAGLE --speculative-draft-model-path d --enable-hisparse"
             " --speculative-num-draft-tokens 6 --speculative-eagle-topk 1"
             " --speculative-num-steps 3")
    assert _hisparse(_findings(tmp_path, flags)) == []


def test_hisparse_fails_on_what_the_rewrite_makes(tmp_path: Path) -> None:
    # written 2 (inside 2-4), topk 1, steps 5 → SGLang runs 6: refused at start
    flags = ("--speculative-algorithm EAGLE --speculative-draft-model-path d --enable-hisparse"
             " --speculative-num-draft-tokens 2 --speculative-eagle-topk 1"
             " --speculative-num-steps 5")
    found = _hisparse(_findings(tmp_path, flags))
    assert len(found) == 1 and "got 6" in found[0], found


def test_hisparse_tree_keeps_the_written_draft_tokens(tmp_path: Path) -> None:
    # topk 2: no rewrite, SGLang runs the 6 written
    flags = ("--speculative-algorithm EAGLE --speculative-draft-model-path d --enable-hisparse"
             " --speculative-num-draft-tokens 6 --speculative-eagle-topk 2"
             " --speculative-num-steps 3")
    found = _hisparse(_findings(tmp_path, flags))
    assert len(found) == 1 and "got 6" in found[0], found


def test_hisparse_judges_the_architectures_defaults(tmp_path: Path) -> None:
    # none of steps/topk/draft tokens: 5/4/8 for LlamaForCausalLM → 8 draft tokens
    flags = "--speculative-algorithm EAGLE --speculative-draft-model-path d --enable-hisparse"
    found = _hisparse(_findings(tmp_path, flags, _LLAMA))
    assert len(found) == 1 and "got 8" in found[0], found
    # 3/1/4 for any other architecture → 4 draft tokens: allowed
    assert _hisparse(_findings(tmp_path, flags, _QWEN2)) == []


def test_a_topk_check_judges_the_architectures_topk(tmp_path: Path) -> None:
    # rejection sampling needs topk 1; Llama's defaults pick topk 4
    flags = ("--speculative-algorithm EAGLE --speculative-draft-model-path d"
             " --speculative-use-rejection-sampling")
    found = [m for _, _, m in _findings(tmp_path, flags, _LLAMA) if "topk=1" in m]
    assert len(found) == 1 and "--speculative-eagle-topk 4" in found[0], found
    assert not [m for _, _, m in _findings(tmp_path, flags, _QWEN2) if "topk=1" in m]


def test_dflash_topk_is_forced_to_one_before_a_topk_check(tmp_path: Path) -> None:
    # _handle_dflash overrides topk 4 to 1 with a warning: FlashMLA's topk-1 refusal
    # does not apply to what SGLang runs
    flags = ("--speculative-algorithm DFLASH --speculative-draft-model-path d"
             " --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"
             " --attention-backend flashmla")
    assert not [m for _, _, m in _findings(tmp_path, flags) if "FlashMLA" in m]
    flags = flags.replace("DFLASH", "EAGLE").replace("--speculative-num-draft-tokens 8",
                                                      "--speculative-num-steps 3 "
                                                      "--speculative-num-draft-tokens 8")
    assert [m for _, _, m in _findings(tmp_path, flags) if "FlashMLA" in m]
