"""SG307's next action names the setting and what the engine takes instead of the generic
"change the serving config to values the engine accepts" (new-user trial 2026-12-03, defect
D12.2: for max_concurrency, a value TensorRT-LLM accepts, it named no key and the wrong advice;
docs/rules.md#sg307-engine-config-invalid, docs/reports.md#next-actions).

Right values: TensorRT-LLM tensorrt_llm/llmapi/llm_args.py@0004396720054fd8 (DecodingBaseConfig:
speculation is disabled at batch sizes above max_concurrency; max_concurrency and
draft_len_schedule are mutually exclusive, "Use max_concurrency for a simple speculation
cutoff, or draft_len_schedule for dynamic draft-length control"), _torch/speculative/drafter.py
(speculates while len(requests) <= max_concurrency: 64 running requests need at least 64).
"""

from __future__ import annotations

from typing import Any

from tests.integration.test_engine_checks import Run, check, claims  # noqa: F401

EAGLE = (
    "speculative_config:\n"
    "  decoding_type: Eagle3\n"
    "  max_draft_len: 3\n"
    "  speculative_model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
)


def _sg307_actions(dep: dict[str, Any]) -> list[str]:
    assert any(f["code"] == "SG307" for f in dep["findings"]), dep["findings"]
    return [a for a in dep["next_actions"] if "max_concurrency" in a or "draft_len" in a]


def test_max_concurrency_below_the_served_load(check: Run) -> None:  # noqa: F811
    _, dep = check(
        {
            "c.specgate.yaml": claims(
                "trtllm", "serving/llm.yaml", workload="    workload: {concurrency: 64}\n"
            ),
            "serving/llm.yaml": EAGLE + "  max_concurrency: 32\n",
        }
    )
    assert _sg307_actions(dep) == [
        "Raise max_concurrency to at least 64 (workload.concurrency) or remove it, so that "
        "TensorRT-LLM speculates at the served load; or claim and measure the speedup at 32 "
        "running requests or fewer."
    ]


def test_max_concurrency_with_no_stated_load(check: Run) -> None:  # noqa: F811
    _, dep = check(
        {
            "c.specgate.yaml": claims("trtllm", "serving/llm.yaml"),
            "serving/llm.yaml": EAGLE + "  max_concurrency: 32\n",
        }
    )
    assert _sg307_actions(dep) == [
        "State workload.concurrency (the running requests served), so that max_concurrency "
        "32 is judged against it."
    ]


def test_max_concurrency_with_a_schedule(check: Run) -> None:  # noqa: F811
    _, dep = check(
        {
            "c.specgate.yaml": claims(
                "trtllm", "serving/llm.yaml", workload="    workload: {concurrency: 8}\n"
            ),
            "serving/llm.yaml": EAGLE + "  max_concurrency: 32\n  draft_len_schedule: {8: 3}\n",
        }
    )
    assert _sg307_actions(dep) == [
        "Remove max_concurrency or draft_len_schedule: TensorRT-LLM takes one (max_concurrency "
        "for a simple speculation cutoff, draft_len_schedule for dynamic draft-length control)."
    ]


def test_vllm_method_and_key_name_the_accepted_spelling(check: Run) -> None:  # noqa: F811
    # vLLM SpeculativeConfig.method is a case-sensitive Literal ("eagle3"); extra keys are
    # forbidden (vllm/config/speculative.py, the engine's answers in tests/data/engine_oracle).
    _, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serving/vllm.sh"),
            "serving/vllm.sh": "vllm serve m --speculative-config '{\"method\": \"Eagle3\", "
            '"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3, '
            '"prompt_lookup_mx": 3}\'\n',
        }
    )
    (action,) = [a for a in dep["next_actions"] if a.startswith("Replace")]
    assert "Replace method 'Eagle3' with 'eagle3'." in action
    assert "Replace prompt_lookup_mx with prompt_lookup_max." in action
