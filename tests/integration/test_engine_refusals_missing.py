"""Refusals and rewrites the engines' data lacked (issue 27, deliverable 3), each judged by
its lifetime: the releases whose source shows it (read at every adjacent release around
each boundary), cited per case."""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

PARALLEL_EAGLE3 = (
    '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", '
    '"num_speculative_tokens": 7, "parallel_drafting": true}'
)


def _serve(block: str, flags: str) -> str:
    return f"vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{block}' {flags}\n"


def _budget(dep: dict[str, object]) -> list[str]:
    return [s for s, _, m in found(dep, "SG307") if "does not allow any tokens" in m]


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # vllm/config/vllm.py VllmConfig._set_max_num_scheduled_tokens, v0.20.0 sdist to
        # v0.27.1: 120 − (7 − 1)·60 = 120 − 360 = −240 ≤ 0 refused
        ("0.20.0", ["fail"]),
        ("0.27.1", ["fail"]),
        ("0.24.0", ["fail"]),  # inside the lifetime, between the releases read at it
        ("0.19.1", []),  # v0.19.1 sdist: only max_num_batched_tokens < scheduled + product
        ("0.28.0", []),  # v0.28.0 sdist: the slots of one request only (6 < 120)
        ("0.32.0", []),
        # unpinned: the newest release the settings allow is read (docs/engines.md#versions),
        # 0.32.0, where it no longer holds
        (None, []),
    ],
)
def test_vllm_token_budget_minus_drafting_slots(
    check: Run,  # noqa: F811
    version: str | None,
    severities: list[str],
) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": _serve(
                PARALLEL_EAGLE3, "--max-num-batched-tokens 120 --max-num-seqs 60"
            ),
        }
    )
    assert _budget(dep) == severities, found(dep, "SG307")
    assert code == 1 or severities != ["fail"]


@pytest.mark.parametrize(
    ("block", "flags", "refused"),
    [
        # 360 − 6·60 = 0: "<= 0" is refused
        (PARALLEL_EAGLE3, "--max-num-batched-tokens 360 --max-num-seqs 60", True),
        # 361 − 6·60 = 1 token left: starts
        (PARALLEL_EAGLE3, "--max-num-batched-tokens 361 --max-num-seqs 60", False),
        # no parallel drafting, EAGLE-3: no new slots at all
        (
            '{"method": "eagle3", "model": "e", "num_speculative_tokens": 7}',
            "--max-num-batched-tokens 120 --max-num-seqs 60",
            False,
        ),
        # a draft model: one slot a request, 60 − 1·60 = 0
        (
            '{"method": "draft_model", "model": "d", "num_speculative_tokens": 4}',
            "--max-num-batched-tokens 60 --max-num-seqs 60",
            True,
        ),
        # PARD (parallel draft model): K = 4 slots, 200 − 4·50 = 0
        (
            '{"method": "draft_model", "model": "d", "num_speculative_tokens": 4, '
            '"parallel_drafting": true}',
            "--max-num-batched-tokens 200 --max-num-seqs 50",
            True,
        ),
        # dflash forces parallel drafting: 7 − 1 = 6 slots, 300 − 6·50 = 0
        (
            '{"method": "dflash", "model": "z", "num_speculative_tokens": 7}',
            "--max-num-batched-tokens 300 --max-num-seqs 50",
            True,
        ),
        # max_num_seqs not given: its default depends on the device, not settled
        (PARALLEL_EAGLE3, "--max-num-batched-tokens 120", False),
    ],
)
def test_vllm_token_budget_by_hand(
    check: Run,  # noqa: F811
    block: str,
    flags: str,
    refused: bool,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version="0.27.1"),
            "serve.txt": _serve(block, flags),
        }
    )
    assert _budget(dep) == (["fail"] if refused else []), found(dep, "SG307")


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # v0.10.0 sdist: vllm/spec_decode/ (the V0 worker that read it) is gone and only
        # SpeculativeConfig's own "< 2" check reads disable_by_batch_size, to v0.16.0
        ("0.10.0", ["warn"]),
        ("0.11.0", ["warn"]),
        ("0.16.0", ["warn"]),
        ("0.9.2", []),  # v0.9.2: spec_decode_worker.py reads it
    ],
)
def test_vllm_disable_by_batch_size_accepted_and_ignored(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    block = '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, '
    block += '"disable_by_batch_size": 8}'
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": _serve(block, ""),
        }
    )
    ignored = [s for s, _, m in found(dep, "SG307") if "accepted and ignored" in m]
    assert ignored == severities, found(dep, "SG307")
