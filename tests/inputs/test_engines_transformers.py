"""transformers reader on hand-made generation configs (GenerationConfig fields,
docs/engines.md docs/theory.md#vocabulary)."""

from __future__ import annotations

import json

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Span
from specgate.load.read import parse_text


def generation(data: dict[str, object], version: str | None = None) -> EngineConfig:
    text = json.dumps(data, indent=2)
    doc = parse_text(text, "generation_config.json", json_syntax=True)
    return read_engine_config(
        doc, shown="generation_config.json", pointer=None, engine=None, engine_version=version
    )


def test_prompt_lookup_is_ngram_with_max_d() -> None:
    c = generation({"max_new_tokens": 64, "prompt_lookup_num_tokens": 10})
    assert (c.engine, c.mechanism, c.draft_length, c.verify_tokens) == (
        "transformers",
        "ngram",
        10,
        11,
    )
    assert c.draft_length_is_max
    assert c.spans["draft_length"] == Span(3, 31)  # '  "prompt_lookup_num_tokens": ' is 30


def test_hub_defaults_without_an_assistant_configure_nothing() -> None:
    with pytest.raises(InputError, match="no speculative decoding configured"):
        generation(
            {
                "num_assistant_tokens": 20,
                "num_assistant_tokens_schedule": "constant",
                "assistant_confidence_threshold": 0.4,
            }
        )


def test_assistant_constant_schedule() -> None:
    # the assistant's own generation config (where the candidate generator reads them)
    c = generation(
        {
            "assistant_model": "Qwen/Qwen2.5-0.5B",
            "assistant_generation_config": {
                "num_assistant_tokens": 5,
                "num_assistant_tokens_schedule": "constant",
                "assistant_confidence_threshold": 0,
            },
        }
    )
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max) == (
        "draft_model",
        5,
        6,
        False,
    )
    assert c.draft_model == "Qwen/Qwen2.5-0.5B"
    assert not [i for i in c.issues if i.code == "SG307"]


def test_assistant_settings_given_to_generate_are_ignored() -> None:
    # transformers 5.19.0 itself (tests/data/engine_oracle, records transformers-0082 and
    # -0083): num_assistant_tokens 5 given to generate() runs with the assistant's 20, the
    # same 5 on the assistant's generation_config runs with 5. Contract change (issue 16):
    # the kwargs were read as D.
    kwargs = {
        "assistant_model": "Qwen/Qwen2.5-0.5B",
        "num_assistant_tokens": 5,
        "num_assistant_tokens_schedule": "constant",
        "assistant_confidence_threshold": 0,
    }
    c = generation(kwargs)
    assert (c.draft_length, c.verify_tokens) == (20, 21)
    ignored = sorted(i.field for i in c.issues if i.code == "SG307")
    assert ignored == [
        "ignored:assistant_confidence_threshold",
        "ignored:num_assistant_tokens",
        "ignored:num_assistant_tokens_schedule",
    ]
    assert all(i.severity == "warn" for i in c.issues if i.code == "SG307")
    # a release before the one recorded keeps reading the keyword arguments
    old = generation(kwargs, version="4.48.0")
    assert (old.draft_length, old.verify_tokens) == (5, 6)
    assert not [i for i in old.issues if i.code == "SG307"]


@pytest.mark.parametrize(
    "extra",
    [
        {"num_assistant_tokens_schedule": "heuristic"},
        {"num_assistant_tokens_schedule": "dynamic"},
        {"assistant_confidence_threshold": 0.4},
    ],
)
def test_adaptive_assistant_d_is_a_maximum(extra: dict[str, object]) -> None:
    c = generation({"assistant_model": "d", "num_assistant_tokens": 20, **extra})
    assert c.draft_length_is_max


def test_assistant_without_num_tokens_reads_the_release_default() -> None:
    # GenerationConfig: num_assistant_tokens 20, constant schedule, confidence
    # threshold 0.4 (which cuts drafts short: D is a maximum).
    c = generation({"assistant_model": "d"})
    assert (c.draft_length, c.verify_tokens, c.draft_length_is_max) == (20, 21, True)
    assert any("default is 20" in n for n in c.notes)
    # Before 4.46: 5 with the heuristic schedule (D moves between calls).
    old = generation({"assistant_model": "d"}, version="4.40.2")
    assert (old.draft_length, old.draft_length_is_max) == (5, True)


def test_unset_confidence_threshold_is_the_default_cut_off() -> None:
    # cases/engines/22: the threshold is unset, transformers applies 0.4.
    c = generation(
        {"assistant_model": "HuggingFaceTB/SmolLM2-135M-Instruct", "num_assistant_tokens": 20}
    )
    assert (c.draft_length, c.draft_length_is_max) == (20, True)
    assert any("assistant_confidence_threshold not set" in n for n in c.notes)
