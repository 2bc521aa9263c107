"""A repository of transformers scripts checked end to end (issue 24; the example in
tests/data/integration/transformers-scripts, docs/engines.md#transformers-scripts).

Hand-worked from the scripts and transformers' source: the version is the
``transformers==4.46.0`` pin of requirements.txt beside them, inside the lifetimes of the
batch-size refusal (from 4.29.0) and the static-cache refusal (from 4.45.0), so both fail;
D is the assistant's own ``num_assistant_tokens`` 5 (threshold 0 and, in single.py, the
constant schedule set on the assistant: a fixed D; assisted.py leaves the schedule to the
hub assistant's generation_config.json, not read, so D may move there), and
prompt lookup's ``prompt_lookup_num_tokens`` 10 (a maximum). The theoretical speedup at
AL 3, D 5 and the typical ρ 0.15 of an external draft is 3 / (1 + 0.15·5) = 1.7143.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main

EXAMPLE = Path(__file__).parent.parent / "data" / "integration" / "transformers-scripts"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    out = tmp_path_factory.mktemp("report") / "report.json"
    code = main(["check", str(EXAMPLE / "specgate.yaml"), "--format", "json", "--output", str(out)])
    return code, json.loads(out.read_text(encoding="utf-8"))


def _deployment(report: dict[str, Any], name: str) -> dict[str, Any]:
    found = [d for d in report["files"][0]["deployments"] if d["name"] == name]
    assert len(found) == 1
    return found[0]


def _refusals(deployment: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    return [
        (Path(f["file"]).name, f["line"], f["column"], f["severity"])
        for f in deployment["findings"]
        if f["code"] == "SG307"
    ]


def test_the_run_fails_on_the_two_refusals(report: tuple[int, dict[str, Any]]) -> None:
    code, _ = report
    assert code == 1


def test_a_batch_of_four_prompts_is_refused_at_the_prompts(
    report: tuple[int, dict[str, Any]],
) -> None:
    dep = _deployment(report[1], "batch-of-four")
    # `prompts` in tokenizer(prompts, …) on line 11, column 20
    assert _refusals(dep) == [("assisted.py", 11, 20, "fail")]
    engine = dep["inputs"]["engine"]
    assert (engine["mechanism"], engine["draft_length"], engine["draft_length_is_max"]) == (
        "draft_model",
        5,
        False,
    )
    assert engine["draft_model"] == "meta-llama/Llama-3.2-1B-Instruct"
    assert engine["target_model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert engine["version"] == "4.46.0"


def test_one_prompt_at_a_time_is_ready(report: tuple[int, dict[str, Any]]) -> None:
    dep = _deployment(report[1], "one-prompt")
    assert dep["status"] == "ready"
    assert _refusals(dep) == []
    assert dep["inputs"]["engine"]["draft_length"] == 5
    assert dep["metrics"]["theoretical_speedup"] == pytest.approx(3 / 1.75, abs=1e-4)


def test_prompt_lookup_with_a_static_cache_is_refused_at_the_cache(
    report: tuple[int, dict[str, Any]],
) -> None:
    dep = _deployment(report[1], "prompt-lookup")
    # cache_implementation="static" on line 6, its value at column 77
    assert _refusals(dep) == [("lookup.py", 6, 77, "fail")]
    engine = dep["inputs"]["engine"]
    assert (engine["mechanism"], engine["draft_length"], engine["draft_length_is_max"]) == (
        "ngram",
        10,
        True,
    )
