"""vLLM reader on hand-made configs, one per branch (values worked by hand from
vllm/config/speculative.py semantics (docs/engines.md#engines-read))."""

from __future__ import annotations

from dataclasses import replace

import pytest

from specgate.core.errors import InputError, RefusedValue
from specgate.inputs.engines import mtp_layer_issue, read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document, Span
from specgate.load.read import parse_text


def yaml(text: str, *, pointer: str | None = None, engine: str | None = None) -> EngineConfig:
    doc = parse_text(text, "serve.yaml", json_syntax=False)
    return read_engine_config(doc, shown="serve.yaml", pointer=pointer, engine=engine, text=text)


def txt(text: str) -> EngineConfig:
    return read_engine_config(Document("cmd.txt", text), shown="cmd.txt", pointer=None, engine=None)


def codes(c: EngineConfig) -> list[str]:
    return [i.code for i in c.issues]


def test_nested_mapping_positions() -> None:
    c = yaml(
        "model: meta-llama/Llama-3.1-8B-Instruct\n"
        "tensor-parallel-size: 2\n"
        "speculative-config:\n"
        "  method: eagle3\n"
        "  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
        "  num_speculative_tokens: 3\n"
    )
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.tensor_parallel_size) == (
        "eagle3",
        3,
        4,
        2,
    )
    assert c.spans["draft_length"] == Span(6, 27)  # "  num_speculative_tokens: " is 26 chars
    assert c.spans["tensor_parallel_size"] == Span(2, 23)
    assert c.spans["mechanism"].line == 4
    assert c.draft_model == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def test_cli_json_string_with_prompt_and_continuations() -> None:
    c = txt(
        "$ vllm serve Qwen/Qwen3-8B \\\n"
        "    -tp 4 \\\n"
        '    --speculative-config \'{"method": "ngram", "num_speculative_tokens": 5,\n'
        '      "prompt_lookup_max": 4}\'\n'
    )
    # ngram ⇒ D 5 is a maximum; prompt_lookup_min mirrors max (not stated) ⇒ no issue.
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max) == (
        "ngram",
        5,
        6,
        True,
    )
    assert c.tensor_parallel_size == 4
    assert c.spans["tensor_parallel_size"] == Span(2, 9)
    # The JSON word starts at column 26 (the quote after "    --speculative-config ",
    # 25 characters); its "{" is column 27, and '{"method": "ngram",
    # "num_speculative_tokens": ' is 1 + 8 + 2 + 7 + 2 + 24 + 2 = 46 characters ⇒ the 5
    # at column 27 + 46 = 73. "prompt_lookup_max" sits on line 4 after 6 spaces.
    assert c.spans["draft_length"] == Span(3, 73)
    assert c.spans["mechanism"] == Span(3, 38)  # 27 + len('{"method": ') = 27 + 11
    assert c.issues == ()


def test_dotted_cli_keys() -> None:
    c = txt(
        "vllm serve m --speculative-config.method mtp --speculative_config.num_speculative_tokens=2"
    )
    assert (c.mechanism, c.draft_length, c.verify_tokens) == ("mtp", 2, 3)


@pytest.mark.parametrize(
    ("method", "mechanism"),
    [
        ("deepseek_mtp", "mtp"),
        ("qwen3_next_mtp", "mtp"),
        ("glm4_moe_mtp", "mtp"),
        ("ernie_mtp", "mtp"),
        ("mimo_mtp", "mtp"),
        ("ngram_gpu", "ngram"),
        ("medusa", "medusa"),
        ("mlp_speculator", "mlp_speculator"),
        ("draft_model", "draft_model"),
        ("dflash", "dflash"),
    ],
)
def test_method_aliases(method: str, mechanism: str) -> None:
    c = yaml(f"speculative_config:\n  method: {method}\n  num_speculative_tokens: 2\n")
    assert c.mechanism == mechanism


@pytest.mark.parametrize(
    ("model", "mechanism"),
    [
        ("yuhuili/EAGLE-LLaMA3-Instruct-8B", "eagle"),
        ("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "eagle3"),
        ("FasterDecoding/medusa-vicuna-7b-v1.3", "medusa"),
        ("ibm-ai-platform/llama3-8b-accelerator-mlp-speculator", "mlp_speculator"),
        ("Qwen/Qwen3-0.6B", "draft_model"),
        ("ngram", "ngram"),
    ],
)
def test_method_omitted_is_inferred_from_the_draft(model: str, mechanism: str) -> None:
    c = yaml(f'speculative_config: {{"model": "{model}", "num_speculative_tokens": 3}}\n')
    assert c.mechanism == mechanism


def test_method_and_model_omitted_is_refused() -> None:
    # vllm/config/speculative.py: "num_speculative_tokens was provided but without
    # speculative model" (cases/engines/04).
    c = yaml("speculative_config:\n  num_speculative_tokens: 1\n")
    assert (c.mechanism, c.draft_length) == (None, 1)
    assert codes(c) == ["SG307"]
    assert "neither method nor model" in c.issues[0].message


def test_suffix_default_depth_is_a_maximum() -> None:
    c = yaml("speculative_config:\n  method: suffix\n")
    # num_speculative_tokens absent, read at the newest known release (0.34.0): vLLM drafts
    # min(8, suffix_decoding_max_tree_depth), the depth defaulting to 24
    # (vllm/v1/worker/gpu/spec_decode/suffix/config.py:25-28 in the vllm 0.34.0 wheel; its
    # answer for method suffix alone: D 8, tests/data/engine_oracle/vllm-0.34.0.json
    # vllm-0017-method-no-d). Through 0.33.0 the depth itself (24; the same record at 0.33.0).
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max) == (
        "suffix",
        8,
        9,
        True,
    )
    c = yaml("speculative_config:\n  method: suffix\n  suffix_decoding_max_tree_depth: 12\n")
    assert c.draft_length == 8
    c = yaml("speculative_config:\n  method: suffix\n  suffix_decoding_max_tree_depth: 6\n")
    assert c.draft_length == 6


def test_synthetic_rejection_is_lossy() -> None:
    c = yaml(
        "speculative_config:\n  method: eagle\n  model: x/eagle-y\n  num_speculative_tokens: 2\n"
        "  rejection_sample_method: synthetic\n  synthetic_acceptance_length: 2.0\n"
    )
    # vLLM needs exactly one of synthetic_acceptance_rates / _length with it
    # (SpeculativeConfig._resolve_synthetic_acceptance_rates, v0.32.0)
    assert c.lossy_acceptance
    assert codes(c) == ["SG304"]
    assert c.spans["lossy_acceptance"].line == 5


def test_v0_flat_keys_ngram_and_typical_acceptance() -> None:
    c = yaml(
        "model: facebook/opt-6.7b\n"
        'speculative_model: "[ngram]"\n'
        "num_speculative_tokens: 5\n"
        "ngram_prompt_lookup_max: 4\n"
        "ngram_prompt_lookup_min: 6\n"
        "spec_decoding_acceptance_method: typical_acceptance_sampler\n"
    )
    assert (c.mechanism, c.draft_length, c.draft_length_is_max) == ("ngram", 5, True)
    assert c.lossy_acceptance
    # min 6 > max 4 ⇒ SG307; typical acceptance ⇒ SG304; the version is unknown, so
    # the newest vLLM is assumed, which has none of the five V0 flat keys ⇒ 5 × SG310.
    assert sorted(codes(c)) == ["SG304", "SG307", *["SG310"] * 5]
    assert c.spans["prompt_lookup_min"].line == 5


def test_v0_num_tokens_without_model_configures_nothing() -> None:
    # A serve-level key (tensor_parallel_size) marks this as V0 flat flags, where
    # num_speculative_tokens without speculative_model configures nothing.
    with pytest.raises(InputError, match=r"no speculative decoding configured in serve\.yaml"):
        yaml("model: m\ntensor_parallel_size: 1\nnum_speculative_tokens: 5\n")


def test_bare_block_is_read_as_a_speculative_config() -> None:
    # Only SpeculativeConfig keys: a --speculative-config JSON file.
    c = yaml('{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}')
    assert (c.mechanism, c.draft_length, c.tensor_parallel_size) == ("draft_model", 4, None)


def test_draft_tp_must_be_one_or_target() -> None:
    base = "tensor_parallel_size: 4\nspeculative_config:\n  model: d\n  num_speculative_tokens: 2\n"
    assert yaml(base + "  draft_tensor_parallel_size: 4\n").issues == ()
    bad = yaml(base + "  draft_tensor_parallel_size: 2\n")
    assert codes(bad) == ["SG307"]
    assert bad.issues[0].field == "draft_tensor_parallel_size"
    assert bad.spans["draft_tensor_parallel_size"].line == 5


def test_draft_tp_without_target_tp_uses_default_one() -> None:
    c = yaml(
        "speculative_config:\n  model: d\n  num_speculative_tokens: 2\n"
        "  draft_tensor_parallel_size: 2\n"
    )
    assert codes(c) == ["SG307"]


def test_tensor_parallel_size_inside_block_is_rejected() -> None:
    c = yaml(
        "speculative_config:\n  model: d\n  num_speculative_tokens: 2\n  tensor_parallel_size: 2\n"
    )
    assert codes(c) == ["SG307"]
    assert c.tensor_parallel_size is None


def test_zero_tokens_is_invalid() -> None:
    c = yaml("speculative_config:\n  method: eagle3\n  model: d\n  num_speculative_tokens: 0\n")
    # refused by vLLM (SG307: "Expected num_speculative_tokens to be greater than zero",
    # vllm/config/speculative.py) and, as −2, not read as D: a value that never runs drives
    # no other rule (docs/trust.md#one-cause-one-finding; contract change, trial-a defect 3)
    assert c.draft_length is None
    assert codes(c) == ["SG307"]


def test_bad_json_string_is_a_refused_value_at_its_line() -> None:
    # Contract change (issue 24, degrade never stop): a value not of its type is SG307
    # on the deployment (RefusedValue), no longer an input error that ends the run
    with pytest.raises(RefusedValue) as err:
        txt("vllm serve m --speculative-config '{\"method\": }'")
    assert err.value.line == 1
    # inside speculative_config: vLLM's SpeculativeConfig field (int, gt=0, data
    # vllm.json) refuses it, SG307 at the version in force; D is not read
    c = yaml("speculative_config:\n  method: mtp\n  num_speculative_tokens: three\n")
    assert codes(c) == ["SG307"]
    assert "must be a whole number, not 'three'" in c.issues[0].message
    assert c.draft_length is None


def test_mtp_layer_check() -> None:
    c = yaml("speculative_config:\n  method: mtp\n  num_speculative_tokens: 3\n")
    assert mtp_layer_issue(c, 1) is None  # 3 is a multiple of 1 (layer reused 3×)
    assert mtp_layer_issue(c, 3) is None  # equal
    issue = mtp_layer_issue(c, 2)  # 3 > 2 and 3 mod 2 = 1 ⇒ refused
    assert issue is not None
    assert issue.code == "SG307"
    assert mtp_layer_issue(c, None) is None


# --- a JSON-valued key whose value is not JSON ---------------------------------------------

_BAD_JSON = '{"method": "eagle3", num_speculative_tokens: 4}'
# json.loads stops at `num_speculative_tokens`, an unquoted key: 0-based char 21 of the
# string (`{` 0, `"method"` 1–8, `:` 9, ` ` 10, `"eagle3"` 11–18, `,` 19, ` ` 20), so its
# message ends "line 1 column 22 (char 21)".
_JSON_MESSAGE = "Expecting property name enclosed in double quotes: line 1 column 22 (char 21)"


# Contract change (issue 24, degrade never stop): each is a RefusedValue (SG307 on the
# deployment at the value's line), no longer an input error that ends the run. A
# mapping's value warns (whether vLLM refuses it depends on the form that holds it); a
# command line's names the message vLLM 0.32.0's own parser gave for such a value
# (tests/integration/test_exit2_values.py), a warn with the version unknown.
_NOT_RECORDED = "; whether vLLM refuses it at start is not recorded in specgate's engine data"


def test_malformed_json_string_in_yaml_is_an_error_at_its_line() -> None:
    # Before: the search saw no mapping and said "no speculative decoding configured".
    with pytest.raises(RefusedValue) as err:
        yaml(f"model: m\nspeculative-config: '{_BAD_JSON}'\n")
    assert err.value.reason.startswith(
        f"speculative-config is not valid JSON: {_JSON_MESSAGE}{_NOT_RECORDED}"
    )
    assert (err.value.file, err.value.line, err.value.severity) == ("serve.yaml", 2, "warn")


def test_malformed_json_under_snake_case_key_is_named_as_spelled() -> None:
    with pytest.raises(RefusedValue) as err:
        yaml(f"args:\n  model: m\n  speculative_config: '{_BAD_JSON}'\n")
    assert err.value.reason.startswith(f"speculative_config is not valid JSON: {_JSON_MESSAGE}")
    assert err.value.line == 3


def test_malformed_json_in_argv_and_command_line() -> None:
    refused = (
        f"vLLM refuses to start: argument --speculative-config/-sc: Value {_BAD_JSON} "
        "cannot be converted to <function loads>"
    )
    with pytest.raises(RefusedValue) as err:
        yaml(f"cmd:\n  - vllm\n  - serve\n  - m\n  - --speculative-config\n  - '{_BAD_JSON}'\n")
    assert err.value.reason.startswith(refused)
    assert f"speculative-config is not valid JSON: {_JSON_MESSAGE}" in err.value.details
    assert (err.value.line, err.value.severity) == (6, "warn")  # the argv item holding it
    with pytest.raises(RefusedValue) as err:
        txt(f"vllm serve m \\\n  --speculative-config '{_BAD_JSON}'\n")
    assert err.value.reason.startswith(refused)
    assert (err.value.file, err.value.line) == ("cmd.txt", 2)


def test_json_that_is_not_an_object_and_empty_values() -> None:
    with pytest.raises(RefusedValue) as err:
        yaml("model: m\nspeculative-config: '[1, 2]'\n")
    assert err.value.reason == (
        f"speculative-config must be a JSON object, not '[1, 2]'{_NOT_RECORDED}, so this warns"
    )
    # An empty or "None" value configures nothing: no JSON error.
    with pytest.raises(InputError, match="no speculative decoding configured"):
        yaml("model: m\nspeculative-config: 'None'\n")


# --- methods that need a draft model (vllm/config/speculative.py, __post_init__) --------


@pytest.mark.parametrize(
    "method", ["eagle", "eagle3", "medusa", "mlp_speculator", "draft_model", "dflash"]
)
def test_method_without_draft_model_is_refused(method: str) -> None:
    c = yaml(f"model: m\nspeculative-config:\n  method: {method}\n  num_speculative_tokens: 4\n")
    # vLLM: model None + num_speculative_tokens set + a method other than mtp, dspark,
    # ngram, ngram_gpu, suffix, extract_hidden_states ⇒ ValueError: one SG307 issue on the
    # `method:` line (line 3).
    # Contract change (issue 27): with vLLM's newest known release 0.33.0, medusa and
    # mlp_speculator (accepted through 0.32.0, gone from 0.33.0's SpeculativeMethod:
    # tests/data/engine_oracle/vllm-0.33.0.json, vllm-0004-method) also carry that
    # refusal, a warning unpinned (docs/engines.md#versions). Contract change (issue 27):
    # the method narrows the release to 0.32.0 or earlier, where it is read, and the
    # warning names 0.33.0 as the release that removed it ("removed by that release")
    gone = method in ("medusa", "mlp_speculator")
    assert codes(c) == ["SG307", "SG307"] if gone else ["SG307"]
    if gone:
        assert c.issues[0].severity == "warn"
        assert "removed by that release" in c.issues[0].message
        c = replace(c, issues=c.issues[1:])
    assert c.issues[0].field == "mechanism"
    assert c.issues[0].message.startswith(
        f"vLLM method '{method}' needs a draft model (speculative_config `model`); "
        "vLLM refuses it without one"
    )
    # unpinned, with nothing bounding the release to those read (0.27.1, 0.32.0): a warning
    assert c.issues[0].severity == "warn"
    assert c.spans["mechanism"].line == 3


_NO_MODEL = "model: m\nspeculative-config:\n  method: eagle3\n  num_speculative_tokens: 4\n"


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # the engine's answers (tests/data/engine_oracle/vllm-0.32.0.json, vllm-0.27.1.json):
        # refused, vllm/config/speculative.py __post_init__ at both releases
        ("0.32.0", None),
        ("0.27.1", None),
        # older than the releases specgate's vLLM data was read from: not read there
        ("0.19.1", "warn"),
    ],
)
def test_code_refusal_judged_at_the_releases_read(version: str, severity: str | None) -> None:
    doc = parse_text(_NO_MODEL, "serve.yaml", json_syntax=False)
    c = read_engine_config(
        doc, shown="serve.yaml", pointer=None, engine=None, text=_NO_MODEL, engine_version=version
    )
    refusals = [i for i in c.issues if "needs a draft model" in i.message]
    assert [i.severity for i in refusals] == [severity]


@pytest.mark.parametrize(
    "method", ["mtp", "deepseek_mtp", "ngram", "ngram_gpu", "suffix", "dspark"]
)
def test_methods_that_need_no_draft_model(method: str) -> None:
    # mtp/dspark reuse the target checkpoint; n-gram and suffix lookup have no model.
    c = yaml(f"speculative-config:\n  method: {method}\n  num_speculative_tokens: 2\n")
    assert "SG307" not in codes(c)


def test_method_with_draft_model_is_fine() -> None:
    c = yaml(
        "speculative-config:\n  method: eagle3\n  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
        "  num_speculative_tokens: 3\n"
    )
    assert codes(c) == []


# --- the served context cap (max-model-len) -------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2048", 2048),
        ("32k", 32000),  # vLLM human_readable_int: k = 1000
        ("32K", 32768),  # K = 1024
        ("1M", 1048576),  # M = 1024²
        ("25.6k", 25600),
        ("-1", None),  # fit to memory: unknown here
        ("auto", None),
    ],
)
def test_max_model_len(value: str, expected: int | None) -> None:
    c = yaml(
        f"model: m\nmax-model-len: '{value}'\nspeculative-config:\n  method: ngram\n"
        "  num_speculative_tokens: 3\n"
    )
    assert c.max_model_len == expected
    if expected is not None:
        assert c.spans["max_model_len"].line == 2


def test_max_model_len_flag_and_draft_block_key() -> None:
    c = txt(
        "vllm serve m --max-model-len 4096 --speculative-config "
        '\'{"method": "ngram", "num_speculative_tokens": 3, "max_model_len": 1024}\'\n'
    )
    # The block's max_model_len caps the draft, not the served context.
    assert c.max_model_len == 4096
    bare = yaml("method: ngram\nnum_speculative_tokens: 3\nmax_model_len: 1024\n")
    assert bare.max_model_len is None
