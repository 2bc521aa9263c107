"""SGLang's architecture tables per release (issue 27): which targets draft with their own
MTP (NextN) layers and which steps/topk/draft tokens SGLang picks, read in each release's
PyPI wheel (``pip download --no-deps sglang==X``, parsed by
scripts/read_sglang_arch_tables.py; data ``history``), not 0.5.23's for every release.
Each value below was read by hand in the wheel named beside it; a version no wheel was
read for judges nothing on the tables (docs/engines.md#mtp-architectures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.inputs.knowledge import knowledge, parse_version

_DATA = knowledge("sglang")


def _at(table: str, version: str) -> dict[str, str] | None:
    parsed = parse_version(version)
    assert parsed is not None
    found = _DATA.table_at(table, parsed)
    return None if found is None else dict(found)


def test_the_targets_that_draft_with_their_own_mtp_layers_by_release() -> None:
    table = "eagle_without_draft_means_mtp"
    # 0.4.6.post1 sets no draft path for any architecture; 0.4.6.post2 for DeepSeek-V3
    # only (server_args.py:349-353: 'Auto set draft_model_path DeepSeek-V3/R1')
    assert _at(table, "0.4.6.post1") == {}
    assert _at(table, "0.4.6.post2") == {"DeepseekV3ForCausalLM": ""}
    # HYV3 in 0.5.11's list (server_args.py:3504), DeepSeek-V4 from 0.5.12 (:3784)
    at_11 = _at(table, "0.5.11")
    assert at_11 is not None and "HYV3ForCausalLM" in at_11
    assert "DeepseekV4ForCausalLM" not in at_11
    at_12 = _at(table, "0.5.12")
    assert at_12 is not None and "DeepseekV4ForCausalLM" in at_12
    # the newest group is the table itself (0.5.23, read by running the engine)
    assert _at(table, "0.5.23") == dict(_DATA.table(table))


def test_the_draft_worker_mtp_classes_by_release() -> None:
    table = "draft_worker_mtp_architectures"
    # model_config.py of 0.4.6.post2: is_draft_model and DeepseekV3ForCausalLM →
    # DeepseekV3ForCausalLMNextN (:90-94); 0.4.6.post1 rewrites nothing
    assert _at(table, "0.4.6.post1") == {}
    assert _at(table, "0.4.6.post2") == {"DeepseekV3ForCausalLM": "DeepseekV3ForCausalLMNextN"}
    assert _at(table, "0.5.23") == dict(_DATA.table(table))


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        # auto_choose_speculative_params: DeepSeek 5/4/8 at 0.4.6.post5
        # (server_args.py:1597-1599), 3/1/4 from 0.4.7 (:1684-1686)
        ("0.4.6.post5", "5/4/8"),
        ("0.4.7", "3/1/4"),
        ("0.5.23", "3/1/4"),
    ],
)
def test_auto_params_by_release(version: str, expected: str) -> None:
    table = _at("auto_params", version)
    assert table is not None and table["DeepseekV3ForCausalLM"] == expected


def test_a_version_no_wheel_was_read_for_has_no_table() -> None:
    # 0.4.0-0.4.4.post3 have no auto_choose_speculative_params (ServerArgs defaults the
    # three: data defaults eagle_*); 0.6.0 is past the newest release read (0.5.23)
    assert _at("auto_params", "0.4.4.post3") is None
    assert _at("eagle_without_draft_means_mtp", "0.6.0") is None


_DEEPSEEK = {"num_attention_heads": 8, "num_key_value_heads": 8, "hidden_size": 512,
             "vocab_size": 512, "num_hidden_layers": 2, "model_type": "deepseek_v3",
             "architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 16,
             "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "num_nextn_predict_layers": 1}


def _served_d(tmp_path: Path, version: str) -> int | None:
    """D served by an EAGLE launch with a draft path and none of steps/topk/draft
    tokens on a DeepSeek-V3 target pinned at ``version``."""
    (tmp_path / "cmd.txt").write_text(
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
        "--speculative-draft-model-path d\n"
    )
    (tmp_path / "config.json").write_text(json.dumps(_DEEPSEEK))
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model:\n      name: m\n"
        "      hf_config: config.json\n    speculation:\n      enabled: true\n"
        f'      engine: sglang\n      engine_version: "{version}"\n'
        "      engine_config: cmd.txt\n    evidence:\n      accept_length: 1.5\n"
        "      cache_coherence_eval: true\n"
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    return deployment.deployment.speculation.draft_length


@pytest.mark.parametrize(
    ("version", "steps"),
    # D is the steps SGLang picks: 5 of 5/4/8 at 0.4.6.post5, 3 of 3/1/4 from 0.4.7
    [("0.4.6.post5", 5), ("0.4.7", 3), ("0.5.23", 3)],
)
def test_a_pinned_release_takes_its_own_auto_params(
    tmp_path: Path, version: str, steps: int
) -> None:
    assert _served_d(tmp_path, version) == steps


def test_past_the_releases_read_the_auto_params_are_a_guess_that_warns(tmp_path: Path) -> None:
    # 0.6.0 is past every wheel read: 0.5.23's 3/1/4 is used, marked as assumed, so a
    # rule that would fail on that D warns (docs/engines.md#versions)
    (tmp_path / "sub").mkdir()
    assert _served_d(tmp_path / "sub", "0.6.0") == 3
    report = check_file(tmp_path / "sub" / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    (deployment,) = report.deployments
    assumed = deployment.deployment.speculation.draft_length_assumed
    assert assumed is not None and "architecture tables were not read" in assumed


_LLAMA = {"num_attention_heads": 8, "num_key_value_heads": 8, "hidden_size": 512,
          "vocab_size": 512, "num_hidden_layers": 2, "model_type": "llama",
          "architectures": ["LlamaForCausalLM"]}


def _mechanism_findings(tmp_path: Path, version: str) -> list[str]:
    """SG301 findings on the mechanism of EAGLE without a draft path on a Llama target,
    the claims file saying mtp, pinned at ``version``."""
    (tmp_path / "cmd.txt").write_text(
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4\n"
    )
    (tmp_path / "config.json").write_text(json.dumps(_LLAMA))
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model:\n      name: m\n"
        "      hf_config: config.json\n    speculation:\n      enabled: true\n"
        "      mechanism: mtp\n"
        f'      engine: sglang\n      engine_version: "{version}"\n'
        "      engine_config: cmd.txt\n    evidence:\n      accept_length: 1.5\n"
        "      cache_coherence_eval: true\n"
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    (deployment,) = report.deployments
    return [f"{f.severity} {f.message}" for f in deployment.findings
            if f.code == "SG301" and "mechanism" in f.message]


def test_past_the_releases_read_the_mechanism_is_the_claims_files(tmp_path: Path) -> None:
    # at 0.5.23 LlamaForCausalLM is in neither table: the draft worker loads the whole
    # target as an EAGLE draft, which the claims file's mtp contradicts
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _mechanism_findings(tmp_path / "a", "0.5.23") != []
    # at 0.6.0 no table was read: nothing rests on one
    assert _mechanism_findings(tmp_path / "b", "0.6.0") == []
