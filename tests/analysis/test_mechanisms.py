"""The mechanism recommendation table (DESIGN.md §3), row by row; first match wins."""

from __future__ import annotations

import pytest

from specgate.analysis import mechanisms
from specgate.model.deployment import Deployment, ModelBlock, SpeculationBlock, WorkloadBlock


def deployment(
    *,
    workload: str | None = None,
    repetitive: bool = False,
    latency: str = "low",
    size: str | None = None,
    billions: float | None = None,
    moe: bool = False,
    mechanism: str | None = None,
    mtp: bool | None = None,
    name: str | None = None,
) -> Deployment:
    return Deployment(
        position=0,
        name="d",
        model=ModelBlock(  # type: ignore[arg-type]
            name=name, size=size, parameters_b=billions, moe=moe, mtp_modules=mtp
        ),
        speculation=SpeculationBlock(mechanism=mechanism),
        workload=WorkloadBlock(name=workload, latency_region=latency, repetitive=repetitive),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    "name",
    [
        "tool-loop",
        "Agent TOOL_LOOP replay",
        "toolloop",
        "tool loop",
        "code_completion",
        "Code-Completion",
        "codecompletion",
        "N-gram lookup",
        "ngram",
        "suffix decoding",
        "repetitive edits",
        "repetition",
    ],
)
def test_repetitive_workload_names_pick_suffix_ngram(name: str) -> None:
    # the first row wins even for a large MoE model at low latency
    chosen = mechanisms.recommend(deployment(workload=name, size="large", moe=True))
    assert chosen.name == "suffix-ngram"
    assert chosen.draft_depth_ratio_hint == 0


@pytest.mark.parametrize("name", ["chat", "tool use", "code review", "gram", "summarise"])
def test_other_names_do_not_match(name: str) -> None:
    assert mechanisms.recommend(deployment(workload=name)).name != "suffix-ngram"


def test_repetitive_flag_picks_suffix_ngram() -> None:
    assert mechanisms.recommend(deployment(repetitive=True)).name == "suffix-ngram"


@pytest.mark.parametrize(
    ("kwargs", "expected", "hint"),
    [
        # row 2: low latency and small/tiny (≤ 10 B)
        ({"size": "small"}, "parallel-draft-head", 0.05),
        ({"size": "tiny"}, "parallel-draft-head", 0.05),
        ({"billions": 10}, "parallel-draft-head", 0.05),  # 10 ≤ 10
        ({"billions": 8, "moe": True}, "parallel-draft-head", 0.05),  # row 2 before row 3
        # row 3: large (≥ 60 B) or MoE: target-attached MTP only for a model that ships
        # MTP modules (DESIGN §14; issue 17), else a parallel draft head
        ({"size": "large", "mtp": True}, "target-attached-mtp", 0.02),
        ({"billions": 60, "mtp": True}, "target-attached-mtp", 0.02),  # 60 ≥ 60
        ({"moe": True, "mtp": True}, "target-attached-mtp", 0.02),
        ({"size": "large"}, "parallel-draft-head", 0.05),  # MTP modules not known
        ({"moe": True, "mtp": False}, "parallel-draft-head", 0.05),
        # names known to ship none / some (data/models/mtp.json)
        (
            {"billions": 70, "name": "meta-llama/Llama-3.3-70B-Instruct"},
            "parallel-draft-head",
            0.05,
        ),
        (
            {"moe": True, "name": "meta-llama/Llama-4-Maverick-17B-128E"},
            "parallel-draft-head",
            0.05,
        ),
        ({"billions": 671, "name": "deepseek-ai/DeepSeek-V3"}, "target-attached-mtp", 0.02),
        ({"size": "small", "latency": "throughput"}, "external-small-draft", 0.15),
        (
            {"size": "small", "latency": "throughput", "moe": True, "mtp": True},
            "target-attached-mtp",
            0.02,
        ),
        # row 4: otherwise (medium, or unknown size counted as medium)
        ({"size": "medium"}, "external-small-draft", 0.15),
        ({}, "external-small-draft", 0.15),
        ({"billions": 10.5}, "external-small-draft", 0.15),
        ({"billions": 59.9}, "external-small-draft", 0.15),
        # parameters_b wins over size
        ({"size": "large", "billions": 7}, "parallel-draft-head", 0.05),
        ({"size": "tiny", "billions": 70, "mtp": True}, "target-attached-mtp", 0.02),
    ],
)
def test_recommendation_rows(kwargs: dict[str, object], expected: str, hint: float) -> None:
    chosen = mechanisms.recommend(deployment(**kwargs))  # type: ignore[arg-type]
    assert chosen.name == expected
    assert chosen.draft_depth_ratio_hint == hint
    assert chosen.reason
    assert chosen.best_for


@pytest.mark.parametrize(
    ("mechanism", "expected"),
    [
        ("ngram", "suffix-ngram"),
        ("suffix", "suffix-ngram"),
        ("eagle", "parallel-draft-head"),
        ("eagle3", "parallel-draft-head"),
        ("medusa", "parallel-draft-head"),
        ("mlp_speculator", "parallel-draft-head"),
        ("mtp", "target-attached-mtp"),
        ("draft_model", "external-small-draft"),
        ("other", None),
        (None, None),
    ],
)
def test_declared_mechanism_class(mechanism: str | None, expected: str | None) -> None:
    declared = mechanisms.declared(deployment(mechanism=mechanism))
    assert (declared.name if declared else None) == expected


def test_one_list_of_mechanism_names() -> None:
    # the claims schema's enum, the engine readers' Mechanism type, the builder and the
    # doctor's --mechanism choices all read the same names (core.vocabulary.MECHANISMS)
    import json
    from pathlib import Path
    from typing import get_args

    from specgate.analysis.mechanisms import DECLARED_CLASS
    from specgate.core.vocabulary import MECHANISMS, Mechanism

    schema = json.loads(
        (Path(__file__).resolve().parents[2] / "src/specgate/data/claims-v1.schema.json").read_text(
            encoding="utf-8"
        )
    )
    speculation = schema["$defs"]["deployment"]["properties"]["speculation"]
    enum = speculation["properties"]["mechanism"]["enum"]
    assert MECHANISMS == tuple(enum) == get_args(Mechanism)
    assert set(MECHANISMS) == {*DECLARED_CLASS, "other"}
