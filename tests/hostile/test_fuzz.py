"""Fuzzing with hypothesis (bounded: a few hundred examples each, well under a minute).

1. The fast schema check agrees with jsonschema on every document: it may only say
   "valid" when jsonschema does (else a broken file would pass unchecked).
2. The loaders (YAML, JSON), the command-line splitter and the whole check of a claims
   file with referenced engine, model and metrics files never raise anything but an
   InputError (a one-line message, exit 2): no traceback, no exit 3.

Inputs are generated from the shapes the readers expect (keys they know, values of
every type, hostile scalars), so most examples reach deep code rather than dying in
the parser. The counts run are printed with ``pytest -s`` (FUZZ_COUNTS);
``SPECGATE_FUZZ_SCALE=N`` multiplies them for a longer run by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specgate.core.errors import InputError

FUZZ_COUNTS: dict[str, int] = {}
#: ``SPECGATE_FUZZ_SCALE=20`` runs twenty times as many examples (by hand, not in CI).
SCALE = max(1, int(os.environ.get("SPECGATE_FUZZ_SCALE", "1")))
FAST = settings(
    max_examples=300 * SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)

KEYS = [
    "version",
    "deployments",
    "name",
    "model",
    "speculation",
    "workload",
    "evidence",
    "claims",
    "policy",
    "enabled",
    "mechanism",
    "draft_length",
    "draft_depth_ratio",
    "accept_length",
    "query_heads",
    "kv_heads",
    "query_heads_per_kv",
    "parameters_b",
    "size",
    "moe",
    "speedup",
    "min_accept_length",
    "next",
    "cache_coherence_eval",
    "latency_region",
    "attention_dominated",
    "repetitive",
    "metrics",
    "format",
    "alpha",
    "marginal",
    "conditional",
    "histogram",
    "engine",
    "engine_config",
    "hf_config",
    "path",
    "pointer",
    "x-anchor",
    "",
]
HOSTILE_STRINGS = [
    "\r::error::x",
    "\n",
    "\u2028",
    "\ud800",
    "%0A",
    "../../etc/passwd",
    "a\x00b",
    "1e400",
    "9" * 5000,
    "eagle3",
    "vllm",
    "ngram",
    "low",
    "-1",
    "NaN",
    "[",
    "{",
    "'",
    '"',
    "\\",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, 3, 1024, 1025, 2**63, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=12),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=5),
    ),
    max_leaves=25,
)


def _count(name: str) -> None:
    FUZZ_COUNTS[name] = FUZZ_COUNTS.get(name, 0) + 1


def _claims_like() -> st.SearchStrategy[Any]:
    deployment = st.fixed_dictionaries(
        {"name": st.one_of(st.text(max_size=8), scalars)},
        optional={
            "speculation": st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5),
            "evidence": st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4),
            "model": st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4),
            "claims": st.dictionaries(st.sampled_from(KEYS), json_values, max_size=2),
            "workload": st.dictionaries(st.sampled_from(KEYS), json_values, max_size=3),
        },
    )
    return st.one_of(
        json_values,
        st.fixed_dictionaries(
            {
                "version": st.sampled_from([1, 2, "1", 1.0]),
                "deployments": st.lists(deployment, max_size=3),
            }
        ),
    )


@FAST
@given(_claims_like())
def test_fast_schema_check_agrees_with_jsonschema(data: Any) -> None:
    from jsonschema import Draft202012Validator

    from specgate.model.schema_fast import compile_schema
    from specgate.model.validate import schema

    fast = compile_schema(schema())
    assert fast is not None  # every keyword of our schema is implemented
    _count("schema")
    valid = Draft202012Validator(schema()).is_valid(data)
    if fast(data):  # "valid" must be exact: a broken file would pass unchecked
        assert valid, data
    elif "NaN" not in json.dumps(data, allow_nan=True):
        # "invalid" only sends the file to jsonschema, but should agree too (NaN is the
        # known exception: jsonschema lets it pass `minimum`, validate.py flags it).
        assert not valid, data


def test_an_unknown_keyword_falls_back_to_jsonschema() -> None:
    from specgate.model.schema_fast import compile_schema

    assert compile_schema({"type": "object", "dependentRequired": {"a": ["b"]}}) is None
    assert compile_schema({"$ref": "https://example.com/x.json"}) is None


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    value = draw(_claims_like())
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    # JSON is YAML flow syntax; then some YAML-only constructs and damage
    extras = draw(
        st.lists(
            st.sampled_from(
                [
                    "\n- &a [*a]",
                    "\n!!python/object:os.system x",
                    "\n? [a]\n: b",
                    "\t",
                    "\n%YAML 1.1\n---\n",
                    "\n...\n---\nx: 1",
                    " #c",
                    "\n<<: {a: 1}",
                    ": :",
                    "\ufeff",
                ]
            ),
            max_size=2,
        )
    )
    return text + "".join(extras)


@FAST
@given(yaml_texts())
def test_loaders_raise_only_input_errors(text: str) -> None:
    from specgate.load.json_loader import load_json
    from specgate.load.yaml_loader import load_yaml

    for loader in (load_yaml, load_json):
        _count(loader.__name__)
        with contextlib.suppress(InputError):
            loader(text, "c.specgate.yaml")


@FAST
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "vllm serve m",
                    "--speculative-config",
                    '\'{"method":',
                    "\\\n",
                    '"',
                    "'",
                    ";",
                    "&&",
                    "|",
                    "#",
                    "$ ",
                    "--x=1",
                    "-sc",
                    "\n",
                    "\\",
                ]
            ),
            st.text(alphabet=string.printable, max_size=6),
        ),
        max_size=30,
    )
)
def test_command_line_splitter_raises_only_input_errors(words: list[str]) -> None:
    from specgate.inputs.cmdline import FlagSpec, parse_flags, split_commands

    _count("cmdline")
    text = " ".join(words)
    try:
        for command in split_commands(text, file="serve.txt", line=1):
            parse_flags(
                command.argv,
                FlagSpec({"--speculative-config": True, "--x": True}, allow_abbrev=True),
                file="serve.txt",
                lines=command.lines,
                line=1,
            )
    except InputError:
        pass


ENGINE_FILES = st.one_of(
    st.builds(lambda v: "speculative_config: " + json.dumps(v, allow_nan=True) + "\n", json_values),
    st.builds(
        lambda v: "vllm serve m --speculative-config '" + json.dumps(v, allow_nan=True) + "'\n",
        json_values,
    ),
    st.builds(lambda v: json.dumps({"speculative_config": v}, allow_nan=True), json_values),
    st.text(max_size=200),
)
MODEL_FILES = st.builds(
    lambda v: json.dumps(v, allow_nan=True),
    st.dictionaries(
        st.sampled_from(
            [
                "num_attention_heads",
                "num_key_value_heads",
                "vocab_size",
                "max_position_embeddings",
                "kv_lora_rank",
                "text_config",
                "num_nextn_predict_layers",
                "multi_query",
            ]
        ),
        json_values,
        max_size=5,
    ),
)
METRICS_FILES = st.one_of(
    st.builds(
        lambda a, b, c: (
            "SpecDecoding metrics: Draft acceptance rate: 38.8%, Mean acceptance "
            f"length: 2.16, Accepted: {a} tokens, Drafted: {b} tokens, Per-position acceptance "
            f"rate: {c}\n"
        ),
        st.sampled_from(["1", "0", "-5", "1" + "0" * 5000, "x", "1e9"]),
        st.sampled_from(["3", "0", "1" + "0" * 400, ""]),
        st.sampled_from(["0.5, 0.3", "", "nan", "2, 1"]),
    ),
    st.text(max_size=200),
)


@settings(
    max_examples=150 * SCALE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ENGINE_FILES, MODEL_FILES, METRICS_FILES, st.sampled_from(["vllm", "sglang", "trtllm"]))
def test_checks_with_referenced_files_never_crash(
    tmp_path_factory: pytest.TempPathFactory, engine: str, model: str, metrics: str, name: str
) -> None:
    from specgate.check.run import CheckOptions, check_files

    repo: Path = tmp_path_factory.mktemp("fuzz")
    (repo / ".git").mkdir()
    (repo / "e.yaml").write_text(engine, "utf-8", errors="surrogatepass")
    (repo / "m.json").write_text(model, "utf-8", errors="surrogatepass")
    (repo / "v.log").write_text(metrics, "utf-8", errors="surrogatepass")
    (repo / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model: {hf_config: m.json}\n"
        f"    speculation: {{enabled: true, engine: {name}, engine_config: e.yaml}}\n"
        "    evidence: {metrics: {format: vllm-log, path: v.log}}\n",
        "utf-8",
    )
    _count("check with references")
    run = check_files([(repo / "c.specgate.yaml", str(repo / "c.specgate.yaml"))], CheckOptions())
    assert run.status in ("ready", "actionable", "fail", "error")


def test_report_fuzz_counts() -> None:
    # Runs last in this module: the number of generated inputs, for the closing note.
    print("FUZZ_COUNTS", FUZZ_COUNTS)
