"""SG310's next action names what replaces the setting, as the engine's source gives it at
the version, or says it goes with no replacement (docs/reports.md#next-actions; new-user
trial 2026-12-03, defect D12.1: the action said "use the replacement" and named none).

Right values: TensorRT-LLM tensorrt_llm/llmapi/llm_args.py@0004396720054fd8 (MTPDecodingConfig:
"'num_nextn_predict_layers' ... use 'max_draft_len'"; DecodingBaseConfig:
"'allow_advanced_sampling' is deprecated ... The flag has no effect"); llama.cpp
common/arg.cpp at the builds that changed them (--draft-max arg_removed for --spec-draft-n-max
at b9071, accepted at b9002; --spec-replace gone at b9113, registered at b9105), as recorded in
data/engines/llamacpp.json; vLLM SpeculativeConfig at 0.27.1 and 0.32.0
(no acceptance_method; rejection_sample_method), data/engines/vllm.json.
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims  # noqa: F401

from specgate.inputs.engines.checks import checks_of
from specgate.inputs.knowledge import ENGINE_NAMES, knowledge, replacing


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_every_recorded_removal_names_a_replacement_or_says_none(engine: str) -> None:
    data = knowledge(engine)
    removals: list[tuple[str, str | None]] = [
        (s.name, s.replacement) for s in data.settings if s.removed_in is not None
    ]
    for field in data.fields:
        if not field.recorded:
            continue
        _, present = max(field.recorded)
        if not present:  # absent at the newest version read: a key the engine dropped
            removals.append((field.name, field.replacement))
    removals += [(c.id, c.replacement) for c in checks_of(data) if c.code == "SG310"]
    for name, replacement in removals:
        assert replacement, f"{engine} {name}: no replacement and no 'none: why' recorded"
        action = replacing(name, replacement, data.display_name)
        if replacement.startswith("none"):
            assert action.startswith(f"Remove {name}: ") and "with no replacement" in action
        else:
            assert action == f"Replace {name} with {replacement}."


def test_replacing_wording() -> None:
    assert replacing("--draft-max", "--spec-draft-n-max", "llama.cpp b9518") == (
        "Replace --draft-max with --spec-draft-n-max."
    )
    assert replacing("--spec-replace", "none: the flag is gone", "llama.cpp b9518") == (
        "Remove --spec-replace: llama.cpp b9518 removed it with no replacement; the flag is gone."
    )


def _sg310_action(dep: dict[str, object]) -> str:
    codes = [f["code"] for f in dep["findings"]]  # type: ignore[attr-defined]
    assert "SG310" in codes, codes
    actions = dep["next_actions"]
    assert isinstance(actions, list)
    (action,) = [a for a in actions if a.startswith(("Replace", "Remove"))]
    return str(action)


def test_trtllm_actions_name_the_replacement(check: Run) -> None:  # noqa: F811
    _, dep = check(
        {
            "c.specgate.yaml": claims("trtllm", "serving/llm.yaml"),
            "serving/llm.yaml": "speculative_config:\n"
            "  decoding_type: mtp\n"
            "  num_nextn_predict_layers: 3\n"
            "  max_draft_len: 3\n"
            "  allow_advanced_sampling: true\n",
        }
    )
    # One step for the rule, each setting's own change in it, most severe first (the
    # refused spelling fails; the deprecations warn), then in file order.
    assert _sg310_action(dep) == (
        "Replace decoding_type 'mtp' with 'MTP' (TensorRT-LLM matches its discriminator "
        "exactly). Replace num_nextn_predict_layers with max_draft_len. Remove "
        "allow_advanced_sampling: TensorRT-LLM deprecates it with no replacement; the flag "
        "has no effect, non-greedy sampling is detected per request."
    )


def test_llamacpp_actions_name_the_replacement_or_none(check: Run) -> None:  # noqa: F811
    _, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serving/cmd.txt"),
            "serving/cmd.txt": "llama-server -m /m/a.gguf -md /m/b.gguf --draft-max 8 "
            "--spec-replace a b\n",
        }
    )
    assert _sg310_action(dep) == (
        "Replace --draft-max with --spec-draft-n-max or --spec-ngram-mod-n-max. Remove "
        "--spec-replace: llama.cpp b9113 removed it with no replacement; the flag is gone; "
        "llama-server exits 'error: invalid argument'."
    )


def test_llamacpp_unpinned_removal_asks_for_the_version(check: Run) -> None:  # noqa: F811
    _, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serving/cmd.txt", version=None),
            "serving/cmd.txt": "llama-server -m /m/a.gguf -md /m/b.gguf --draft-max 8\n",
        }
    )
    assert _sg310_action(dep) == (
        "Replace --draft-max with --spec-draft-n-max or --spec-ngram-mod-n-max, or state "
        "speculation.engine_version if the deployment runs a release before b9071."
    )


def test_vllm_former_key_actions(check: Run) -> None:  # noqa: F811
    _, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serving/vllm.sh"),
            "serving/vllm.sh": "vllm serve m --speculative-config '{\"method\": \"ngram\", "
            '"num_speculative_tokens": 3, "prompt_lookup_max": 3, "acceptance_method": '
            '"standard", "disable_logprobs": true}\'\n',
        }
    )
    assert _sg310_action(dep) == (
        "Replace acceptance_method with rejection_sample_method. Remove disable_logprobs: "
        "vLLM removed it with no replacement; SpeculativeConfig of 0.27.1 and 0.32.0 has no "
        "key for it, by the fields the engine answered."
    )
