"""The engines' checks as data (data/engines/*.json ``checks``) and their generic
evaluator (specgate/inputs/engines/checks.py): every condition names options the
readers produce, and the evaluator's three-valued logic never fires on what a file
does not say."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from specgate.core.vocabulary import ENGINE_NAMES
from specgate.inputs.engines._source import Opt
from specgate.inputs.engines.checks import DERIVED, _cond, _Reader, checks_of
from specgate.inputs.knowledge import knowledge, load_raw
from specgate.load.document import Span

#: Keys a serving YAML may hold that are not command-line flags specgate parses: SGLang
#: flags left out of the parser's table because they would make real abbreviations
#: ambiguous (``--speculative-draft`` in SGLang PR #2150's launch line).
YAML_ONLY = {"sglang": {"speculative_draft_window_size", "speculative_draft_attention_backend"}}


RESOLVED = {
    "sglang": {
        "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
        "draft_decode_backend",  # sglang.draft_decode_backend
    }
}


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for op, value in node.items():
            names_key = op in ("set", "unset", "key") or op.endswith("_key")
            if names_key and isinstance(value, str):
                yield value
            else:
                yield from _keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _keys(item)


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_conditions_name_options_the_readers_produce(engine: str) -> None:
    data = knowledge(engine)
    flags = {s.name.lstrip("-").replace("-", "_") for s in data.settings}
    if not data.flags().known:
        pytest.skip("configs of this engine are mappings of any generate() argument")
    fields = {"mechanism", "draft_length", "verify_tokens", "tensor_parallel_size"}
    fields |= {"draft_tensor_parallel_size", "draft_model", "draft_length_is_max"}
    for check in load_raw(engine).get("checks", ()):
        for key in _keys(check["when"]):
            prefix, _, rest = key.partition(".")
            if prefix in ("spec", "env"):
                assert data.block or prefix == "env", (check["id"], key)
                continue
            if prefix == "field":
                assert rest in fields, (check["id"], key)
                continue
            if prefix == "resolved":
                # the values the reader resolves as the engine runs them (sglang.py
                # _engine_values: steps/topk/draft tokens after SGLang's rewrites)
                assert rest in RESOLVED.get(engine, set()), (check["id"], key)
                continue
            if prefix == "fact":
                head = rest.split(".")[0]
                # runner, v2_unsupported, mm_inputs: vLLM's (inputs/engines/vllm_facts.py)
                facts = (
                    "target", "draft", "workload", "vocab_difference", "runner",
                    "v2_unsupported", "mm_inputs",
                )
                assert head in facts, key
                continue
            assert key in flags or key in YAML_ONLY.get(engine, set()), (check["id"], key)


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_checks_parse_and_have_unique_ids(engine: str) -> None:
    checks = checks_of(knowledge(engine))
    ids = [c.id for c in checks]
    assert len(ids) == len(set(ids))
    for check in checks:
        assert check.source, check.id
        assert check.message.strip(), check.id
        if check.serves_draft_length is not None:
            derive = check.serves_draft_length.get("derive")
            assert derive is None or derive in DERIVED


def reader(**options: object) -> _Reader:
    return _Reader({k: Opt(v, Span(1, 1)) for k, v in options.items()}, {}, {})


@pytest.mark.parametrize(
    ("condition", "options", "expected"),
    [
        # an absent option is unknown, and unknown never fires
        ({"key": "a", "gt": 1}, {}, None),
        ({"not": {"key": "a", "gt": 1}}, {}, None),
        ({"all": [{"key": "a", "gt": 1}, {"key": "b", "eq": 2}]}, {"b": "2"}, None),
        ({"all": [{"key": "a", "gt": 1}, {"key": "b", "eq": 2}]}, {"b": "3"}, False),
        ({"any": [{"key": "a", "gt": 1}, {"key": "b", "eq": 2}]}, {"b": "2"}, True),
        # command-line values are text
        ({"key": "a", "lt": 0}, {"a": "-5"}, True),
        ({"key": "a", "outside": [1, 1024]}, {"a": "1024"}, False),
        ({"key": "a", "outside": [1, 1024]}, {"a": "0"}, True),
        # a value that is no number cannot be compared: unknown, not a fail
        ({"key": "a", "lt": 0}, {"a": "abc"}, None),
        # a hostile integer stays exact (not -inf)
        ({"key": "a", "lt": 0}, {"a": "-" + "9" * 4000}, True),
        # the engine's default for an unset option
        ({"key": "a", "default": False, "false": True}, {}, True),
        ({"key": "a", "default": False, "false": True}, {"a": "true"}, False),
        # comma lists and lists
        ({"key": "t", "has_item": "draft-simple"}, {"t": "ngram-mod,draft-simple"}, True),
        ({"key": "t", "has_item": ["x", "y"]}, {"t": ["z"]}, False),
        # names compare case-insensitively (SGLang upper-cases its algorithm)
        ({"key": "n", "not_in": ["NEXTN"]}, {"n": "nextn"}, False),
        # comparisons with another key, an offset and its default
        ({"key": "a", "gt_key": "b", "plus": 1}, {"a": 5, "b": 3}, True),
        ({"key": "a", "gt_key": "b", "plus": 1}, {"a": 4, "b": 3}, False),
        ({"key": "a", "ne_key": "b", "other_default": 1}, {"a": 1}, False),
        ({"key": "a", "ne_key": "b"}, {"a": 1}, None),
        # derived values: a schedule's smallest key's draft length, a tree's depth
        (
            {"key": "s", "derive": "smallest_key_value", "ne_key": "d"},
            {"s": {"4": 2, "16": 1}, "d": 3},
            True,
        ),
        ({"key": "c", "derive": "longest_item", "eq": 2}, {"c": [[0], [0, 1]]}, True),
        ({"key": "r", "derive": "count", "ne": 3}, {"r": "0.8,0.5"}, True),
    ],
)
def test_three_valued_conditions(
    condition: dict[str, Any], options: dict[str, object], expected: bool | None
) -> None:
    assert _cond(condition, reader(**options)) is expected


@pytest.mark.parametrize(
    ("shape", "value", "problem"),
    [
        # vllm/v1/spec_decode/dynamic/utils.py build_dynamic_sd_schedule_lookup, in order
        ("range_table", "x", "must be a list"),
        ("range_table", [], "must not be empty"),
        ("range_table", [[1, 8]], "3-item sequence"),
        ("range_table", [[0, 8, 2]], "must be positive"),
        ("range_table", [[9, 8, 2]], "start must be <= end"),
        ("range_table", [[1, 8, -1]], ">= 0"),
        ("range_table", [[1, 8, 4], [8, 64, 2]], "non-overlapping"),
        ("range_table", [[2, 8, 4], [9, 64, 2]], "must start at 1"),
        ("range_table", [[1, 8, 4], [9, 64, 2]], None),
        # TensorRT-LLM draft_len_schedule and eagle_choices
        ("schedule", {"0": 3}, "threshold must be >= 1"),
        ("schedule", {"4": -1}, "must be >= 0"),
        ("choice_tree", {"a": 1}, "List[List[int]]"),
        ("choice_tree", [[1], [0, 1]], "is not connected"),
        ("choice_tree", [[0], [0, 1]], None),
        # llama.cpp synthetic acceptance rates
        ("unit_rates", "0.5,1.5", "not a number in [0, 1]"),
        ("unit_rates", "0.5,0.8", "non-increasing"),
        ("unit_rates", "0.8,0.5", None),
    ],
)
def test_shapes_name_the_first_problem(shape: str, value: object, problem: str | None) -> None:
    r = reader(v=value)
    fired = _cond({"key": "v", "shape": shape}, r)
    if problem is None:
        assert fired is False
    else:
        assert fired is True
        assert r.problem is not None and problem in r.problem


def test_no_message_template_prints_a_doubled_brace() -> None:
    # newuser.md defect 8: `{{16: max_draft_len}}` reached a message. Templates use
    # str.format's escapes ({{ → {); after filling, no template keeps a doubled brace
    # or an unfilled placeholder.
    from specgate.inputs.engines.checks import _PLACEHOLDER
    from specgate.inputs.knowledge import knowledge

    for engine in ("vllm", "sglang", "trtllm", "llamacpp", "transformers"):
        for raw in knowledge(engine).raw_checks:
            text = _PLACEHOLDER.sub(
                lambda m: m.group(0)[0] if m.group(1) is None else "X", raw["message"]
            )
            assert "{{" not in text and "}}" not in text, raw["id"]
            assert _PLACEHOLDER.search(text) is None or "{" not in text, raw["id"]
