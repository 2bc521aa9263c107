"""The mechanism recommendation table (docs/theory.md#mechanism-recommendation), row by row; first
match wins."""

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
        ({"size": "small"}, "parallel-draft-head", 0.14),
        ({"size": "tiny"}, "parallel-draft-head", 0.14),
        ({"billions": 10}, "parallel-draft-head", 0.14),  # 10 ≤ 10
        ({"billions": 8, "moe": True}, "parallel-draft-head", 0.14),  # row 2 before row 3
        # row 3: large (≥ 60 B) or MoE: target-attached MTP for a model that ships MTP
        # modules, a parallel draft head for one known to ship none
        # (docs/theory.md#mechanism-recommendation; issue 17)
        ({"size": "large", "mtp": True}, "target-attached-mtp", 0.02),
        ({"billions": 60, "mtp": True}, "target-attached-mtp", 0.02),  # 60 ≥ 60
        ({"moe": True, "mtp": True}, "target-attached-mtp", 0.02),
        # MTP modules not known: the seed's class, labelled "if the model ships them"
        # (issue 26; test_unknown_mtp_is_labelled)
        ({"size": "large"}, "target-attached-mtp", 0.02),
        ({"moe": True, "mtp": False}, "parallel-draft-head", 0.14),
        # names known to ship none / some (data/models/mtp.json)
        (
            {"billions": 70, "name": "meta-llama/Llama-3.3-70B-Instruct"},
            "parallel-draft-head",
            0.14,
        ),
        (
            {"moe": True, "name": "meta-llama/Llama-4-Maverick-17B-128E"},
            "parallel-draft-head",
            0.14,
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
        ({"size": "large", "billions": 7}, "parallel-draft-head", 0.14),
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


# --- what the report recommends (newuser-r4 #7, real-r4 #6) ------------------------------


def _advice(measured: float | None = None, al: float | None = 2.6, floor: float | None = 1.3,
            **kwargs: object) -> str | None:
    chosen = deployment(**kwargs)  # type: ignore[arg-type]
    chosen = chosen._replace(speculation=chosen.speculation._replace(enabled=True))
    advised = mechanisms.advice(
        chosen, measured_speedup=measured, min_gain=0.1, accept_length=al, floor=floor
    )
    return None if advised is None else advised.name


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        # the reviewer's: a healthy EAGLE-3 on an 8B at throughput.
        # docs/theory.md#mechanism-recommendation's table says external-small-draft ("mid-size
        # models served at throughput"), which contradicts both the declared head that works and the
        # 8B's size class (≤ 10 B: small)
        ({"billions": 8.03, "latency": "throughput", "mechanism": "eagle3"}, None),
        # the table's fit for a small model at throughput with nothing declared is that
        # same row: the inputs do not support it, so nothing is said
        ({"billions": 8.03, "latency": "throughput"}, None),
        # an MTP model (gemma4-mtp-collapsed: mtp_modules true, size not stated) is not
        # told to use a separate draft model, working or not
        ({"mechanism": "mtp", "mtp": True}, None),
        # an MTP deployment without model info: the unknown size is no mid-size model
        ({"mechanism": "mtp"}, None),
        ({}, None),
        # a declared head of the recommended class is confirmed
        ({"billions": 8.03, "mechanism": "eagle3"}, "parallel-draft-head"),
        # a known mid-size model with nothing declared gets the table's row
        ({"billions": 30}, "external-small-draft"),
        ({"size": "medium"}, "external-small-draft"),
    ],
)
def test_advice_never_contradicts_a_working_mechanism_or_the_size(
    kwargs: dict[str, object], expected: str | None
) -> None:
    assert _advice(**kwargs) == expected


def test_advice_for_a_declared_mechanism_that_does_not_pay() -> None:
    # EAGLE-3 on a 30B measured at 1.05x < 1 + min_gain = 1.1: another class may be advised
    kwargs: dict[str, object] = {"billions": 30, "mechanism": "eagle3"}
    assert _advice(measured=1.05, **kwargs) == "external-small-draft"
    assert _advice(measured=1.5, **kwargs) is None  # it pays: nothing contradicts it
    assert _advice(al=1.2, floor=1.3, **kwargs) == "external-small-draft"  # AL collapsed
