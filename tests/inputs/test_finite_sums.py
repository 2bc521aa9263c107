"""Every sum of evidence numbers is checked finite (issue 25, a regression of the
hostile review: TensorRT-LLM ``numDraftTokens`` adding up to infinity was accepted by
``measure`` and ``check`` while a single ``1e300`` is refused).

Each reader that adds numbers up gets two finite values whose sum passes a float's
range (1e308 + 1e308 = inf): an input error naming the file, never an AL or a rate
computed from an infinite total (accepted / inf would be an acceptance rate of 0).
"""

from __future__ import annotations

import json

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics.records import read_trtllm_iteration_stats, read_vllm_per_request
from specgate.inputs.metrics.summaries import read_sglang_server_info
from specgate.inputs.metrics.vllm_prometheus import read_prometheus

BIG = 1e308


def _trtllm(key: str) -> str:
    stats = {"numAcceptedTokens": 30, "numRequestsWithDraftTokens": 10, "numDraftTokens": 40}
    items = []
    for _ in range(2):
        item = dict(stats)
        item[key] = BIG
        items.append({"iter": len(items), "specDecodingStats": item})
    return json.dumps(items)


@pytest.mark.parametrize(
    "key", ["numDraftTokens", "numAcceptedTokens", "numRequestsWithDraftTokens"]
)
def test_trtllm_iteration_stats_adding_up_to_infinity(key: str) -> None:
    with pytest.raises(InputError, match=f"{key} values add up past a float's range"):
        read_trtllm_iteration_stats(_trtllm(key), "stats.json")


@pytest.mark.parametrize(
    "block",
    [
        {"num_spec_steps": BIG, "num_accepted_draft_tokens": 1},
        {"num_spec_steps": 10, "num_accepted_draft_tokens": BIG},
        {"acceptance_histogram": [BIG, 1, 1]},
    ],
)
def test_vllm_per_request_records_adding_up_to_infinity(block: dict[str, object]) -> None:
    text = "\n".join(json.dumps({"speculative_decoding": block}) for _ in range(2))
    with pytest.raises(InputError, match="past a float's range"):
        read_vllm_per_request(text, "requests.jsonl")


def test_sglang_ranks_adding_up_to_infinity() -> None:
    # each rank's mean is finite (and refused by no bound here); their sum is not
    states = [{"avg_spec_accept_length": 1.7e308}, {"avg_spec_accept_length": 1.7e308}]
    with pytest.raises(InputError, match="past a float's range"):
        read_sglang_server_info(json.dumps({"internal_states": states}), "info.json")


def test_prometheus_samples_are_bounded_one_by_one() -> None:
    # each counter sample is held to 2^53 (an exact count), so no file specgate reads
    # holds enough of them to add up past 1e308: the bound refuses the first one
    text = "".join(
        f'vllm:spec_decode_{name}_total{{engine="{e}",model_name="m"}} {value}\n'
        for e in ("0", "1")
        for name, value in (
            ("num_drafts", 10),
            ("num_draft_tokens", BIG),
            ("num_accepted_tokens", 20),
        )
    )
    with pytest.raises(InputError, match="above 2\\^53"):
        read_prometheus(text, "metrics.txt")
