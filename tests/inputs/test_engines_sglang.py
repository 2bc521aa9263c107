"""SGLang reader on hand-made server args (rules from server_args.py as summarised in
docs/engines.md docs/theory.md#vocabulary, with the tree-capacity correction of
tests/data/real/SOURCES.md)."""

from __future__ import annotations

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document, Span
from specgate.load.read import parse_text


def yaml(text: str, *, pointer: str | None = None, version: str | None = None) -> EngineConfig:
    doc = parse_text(text, "args.yaml", json_syntax=False)
    return read_engine_config(
        doc, shown="args.yaml", pointer=pointer, engine=None, text=text, engine_version=version
    )


def txt(text: str, version: str | None = None) -> EngineConfig:
    return read_engine_config(
        Document("cmd.txt", text),
        shown="cmd.txt",
        pointer=None,
        engine=None,
        engine_version=version,
    )


def codes(c: EngineConfig) -> list[str]:
    return [i.code for i in c.issues]


def launch(extra: str) -> EngineConfig:
    return txt("python -m sglang.launch_server --model-path m " + extra)


def test_snake_case_mapping_chain() -> None:
    c = yaml(
        "speculative_algorithm: EAGLE3\n"
        "speculative_draft_model_path: d\n"
        "speculative_num_steps: 3\n"
        "speculative_eagle_topk: 1\n"
        "speculative_num_draft_tokens: 4\n"
        "tp_size: 2\n"
        "enable_dp_attention: true\n"
    )
    # topk 1 ⇒ chain: D = 3, N_verify = 3 + 1 = 4 (stated 4 agrees).
    assert (c.mechanism, c.draft_length, c.verify_tokens) == ("eagle3", 3, 4)
    assert (c.tensor_parallel_size, c.attention_data_parallel) == (2, True)
    assert c.spans["draft_length"] == Span(3, 24)
    assert c.issues == ()


def test_kebab_case_mapping() -> None:
    c = yaml(
        "speculative-algorithm: NEXTN\nspeculative-num-steps: 1\nspeculative-eagle-topk: 1\n"
        "speculative-num-draft-tokens: 2\ntensor-parallel-size: 8\n"
    )
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.tensor_parallel_size) == (
        "mtp",
        1,
        2,
        8,
    )


@pytest.mark.parametrize(
    ("algorithm", "mechanism"),
    [
        ("EAGLE", "mtp"),  # no draft path: the target's own MTP layers (see below)
        ("eagle3", "eagle3"),
        ("NEXTN", "mtp"),
        ("STANDALONE", "draft_model"),
        ("DFLASH", "dflash"),
    ],
)
def test_algorithms(algorithm: str, mechanism: str) -> None:
    c = launch(
        f"--speculative-algorithm {algorithm} --speculative-num-steps 2 "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 3"
    )
    assert c.mechanism == mechanism


def test_eagle_with_a_draft_head_is_eagle_and_without_one_is_the_targets_mtp() -> None:
    # server_args.py _handle_eagle_family (@469c63e5): with no
    # --speculative-draft-model-path, SGLang sets the draft to the target checkpoint
    # (its MTP layers) for DeepSeek V3/V3.2, GLM-4 MoE, … ("DeepSeek MTP does not
    # require setting speculative_draft_model_path"), as in SGLang's DeepSeek docs.
    flags = "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1"
    head = launch(f"{flags} --speculative-draft-model-path lmsys/sglang-EAGLE-llama2-chat-7B")
    assert head.mechanism == "eagle"
    own = launch(flags)
    assert own.mechanism == "mtp"
    assert any("target checkpoint's own MTP" in note for note in own.notes)


def test_topk_one_rewrites_draft_tokens() -> None:
    c = launch(
        "--speculative-algorithm EAGLE --speculative-num-steps 3 "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 8"
    )
    # SGLang sets num_draft_tokens := steps + 1 = 4 when topk == 1, with a warning
    # (_handle_eagle_family, v0.5.23): a rewrite, so a warn unless a claim rests on it.
    assert (c.draft_length, c.verify_tokens) == (3, 4)
    assert codes(c) == ["SG307"]
    assert "rewrites speculative_num_draft_tokens 8 to 4" in c.issues[0].message
    assert c.issues[0].severity == "warn"


def test_tree_uses_draft_tokens_for_verify() -> None:
    c = launch(
        "--speculative-algorithm EAGLE --speculative-num-steps 3 "
        "--speculative-eagle-topk 4 --speculative-num-draft-tokens 16"
    )
    # Tree: D = 3 (deepest path), N_verify = 16 ≤ 4 + 2·16 + 1 = 37.
    assert (c.draft_length, c.verify_tokens) == (3, 16)
    assert c.issues == ()


def test_tree_larger_than_candidate_pool() -> None:
    c = launch(
        "--speculative-algorithm EAGLE --speculative-num-steps 2 "
        "--speculative-eagle-topk 2 --speculative-num-draft-tokens 8"
    )
    # pool = 2 + (2 − 1)·2² = 6 candidates; 8 > 6 + 1 ⇒ SG307.
    assert codes(c) == ["SG307"]
    ok = launch(
        "--speculative-algorithm EAGLE --speculative-num-steps 2 "
        "--speculative-eagle-topk 2 --speculative-num-draft-tokens 7"
    )
    assert ok.issues == ()  # 7 = 6 + 1 fits exactly


_STEPS_ONLY = "--speculative-algorithm EAGLE --speculative-num-steps 4"
_TOPK_ONLY = "--speculative-algorithm EAGLE --speculative-eagle-topk 4"


def _check_issues(c: EngineConfig, check: str) -> list[str | None]:
    return [i.severity for i in c.issues if i.field == f"check:{check}"]


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # 0.5.23 speculative_hook.py:1274 and 0.5.2 server_args.py:785 compare topk
        # (None) with 1 unguarded: TypeError (the engine's answer at 0.5.23:
        # tests/data/engine_oracle/sglang-0.5.23.json)
        ("0.5.23", "fail"),
        ("0.5.2", "fail"),
        # 0.5.1 server_args.py compares it only under trtllm_mha or page_size > 1: past
        # server_args, the worker's answer was not read (a warning)
        ("0.5.1", "warn"),
        # unpinned: 0.5.1 and older are allowed by these settings (a warning)
        (None, "warn"),
    ],
)
def test_steps_without_topk_by_release(version: str | None, severity: str) -> None:
    c = txt("python -m sglang.launch_server --model-path m " + _STEPS_ONLY, version=version)
    assert c.draft_length == 4
    assert _check_issues(c, "eagle-steps-without-topk") == [severity]
    assert "speculative_num_steps without speculative_eagle_topk" in c.issues[0].message


def test_steps_without_topk_not_refused_before_optional_fields() -> None:
    # 0.4.4 server_args.py:131: speculative_eagle_topk: int = 4 (not Optional): an unset
    # topk is 4 there, nothing to refuse
    c = txt("python -m sglang.launch_server --model-path m " + _STEPS_ONLY, version="0.4.4")
    assert _check_issues(c, "eagle-steps-without-topk") == []


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # the assert of _handle_eagle_family (0.5.23 speculative_hook.py:1159) and of
        # ServerArgs.__post_init__ (0.4.5 server_args.py:342)
        ("0.5.23", "fail"),
        ("0.4.5", "fail"),
        # 0.4.4.post4 server_args.py:342-345 already asserts (the PyPI wheel); the
        # lifetime started at 0.4.5 (contract change, issue 27: 0.4.4.post4 was silent)
        ("0.4.4.post4", "fail"),
        # 0.4.4 server_args.py:130 and 0.4.4.post3 :135: speculative_num_steps: int = 5,
        # no assert
        ("0.4.4", "absent"),
        ("0.4.4.post3", "absent"),
    ],
)
def test_topk_without_steps_by_release(version: str, severity: str) -> None:
    c = txt("python -m sglang.launch_server --model-path m " + _TOPK_ONLY, version=version)
    expected = [] if severity == "absent" else [severity]
    assert _check_issues(c, "eagle-steps-unset-others-set") == expected


@pytest.mark.parametrize(
    ("version", "d", "n"),
    [
        # ServerArgs of the PyPI wheels (sglang/srt/server_args.py): steps 5, topk 4,
        # draft tokens 8 in 0.4.3.post3 to 0.4.4.post3 (0.4.4 lines 130-132)
        ("0.4.4", 5, 8),
        ("0.4.4.post3", 5, 8),
        # steps 5, draft tokens 64, topk 8 in 0.4.1.post4 to 0.4.3.post2 (0.4.3 lines
        # 126-128)
        ("0.4.3", 5, 64),
        # from 0.4.4.post4 they are None: chosen from the target's architecture
        ("0.4.4.post4", None, None),
        ("0.5.23", None, None),
        (None, None, None),
    ],
)
def test_eagle_defaults_by_release(version: str | None, d: int | None, n: int | None) -> None:
    c = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
        "--speculative-draft-model-path yuhuili/EAGLE-LLaMA3.1-Instruct-8B\n",
        version=version,
    )
    assert (c.draft_length, c.verify_tokens) == (d, n)


def test_topk_without_steps_unpinned() -> None:
    # every release these flags allow, back to the oldest, is not known to hold it (0.4.4
    # and older do not): a warning
    c = launch(_TOPK_ONLY)
    assert _check_issues(c, "eagle-steps-unset-others-set") == ["warn"]


def test_steps_and_topk_without_draft_tokens_is_a_chain() -> None:
    # steps 3 + topk 1, draft tokens unset: SGLang accepts it and verifies steps + 1 = 4
    c = launch("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1")
    assert (c.draft_length, c.verify_tokens) == (3, 4)
    assert codes(c) == []


def test_no_tree_fields_leaves_d_unknown() -> None:
    c = launch("--speculative-algorithm EAGLE3 --speculative-draft-model-path d")
    assert (c.draft_length, c.verify_tokens) == (None, None)
    assert c.issues == ()
    assert any("model architecture" in n for n in c.notes)


def test_accept_thresholds_below_one_are_lossy() -> None:
    c = launch(
        "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --speculative-accept-threshold-single 0.9 "
        "--speculative-accept-threshold-acc 1.0"
    )
    assert c.lossy_acceptance
    assert codes(c) == ["SG304"]


SPEC_V2_TREE = (
    "SGLANG_ENABLE_SPEC_V2=True python -m sglang.launch_server --speculative-algorithm "
    "EAGLE --speculative-num-steps 3 --speculative-eagle-topk 4 "
    "--speculative-num-draft-tokens 8"
)


@pytest.mark.parametrize("version", ["0.5.7", "0.5.10"])
def test_spec_v2_env_with_tree_is_invalid_on_older_releases(version: str) -> None:
    # server_args.py of the 0.5.7-0.5.10 wheels: raise ValueError("Spec v2 currently only
    # supports topk = 1 for speculative decoding.") (Contract change, issue 27: was 0.5.3,
    # a release with no spec v2 at all)
    c = txt(SPEC_V2_TREE, version=version)
    assert codes(c) == ["SG307"]
    assert "SGLANG_ENABLE_SPEC_V2" in c.issues[0].message


@pytest.mark.parametrize("version", ["0.5.3", "0.5.6", "0.5.11"])
def test_spec_v2_env_with_tree_is_not_refused_outside_them(version: str) -> None:
    # 0.5.3: no SGLANG_ENABLE_SPEC_V2; 0.5.5-0.5.6: spec v2 with no topk check; 0.5.11:
    # the spec-v1 fallback with a warning (sglang-0.5.{3,6,11} wheels, server_args.py)
    assert codes(txt(SPEC_V2_TREE, version=version)) == []


def test_spec_v2_env_with_tree_falls_back_on_the_newest() -> None:
    # Newer SGLang: spec_v1_reason = "spec v2 currently only supports topk = 1" and a
    # warning, no refusal (cases/engines/07).
    c = txt(SPEC_V2_TREE)
    assert codes(c) == []
    assert any("falls back to spec v1" in n for n in c.notes)
    assert (c.draft_length, c.verify_tokens) == (3, 8)


def test_spec_v2_env_beside_argv_list() -> None:
    c = yaml(
        "cfg:\n"
        "  env_vars:\n"
        '    SGLANG_ENABLE_SPEC_V2: "1"\n'
        "  extra_args: [--speculative-algorithm, EAGLE3, --speculative-num-steps, '2',\n"
        "               --speculative-eagle-topk, '2', --speculative-num-draft-tokens, '4']\n",
        version="v0.5.8",  # refused in 0.5.7-0.5.10 for EAGLE and EAGLE3 (was v0.5.4)
    )
    assert codes(c) == ["SG307"]
    assert c.spans["spec_v2"].line == 3


def test_abbreviations_and_equals() -> None:
    # unique prefixes at SGLang 0.5.23's recorded parser (its option strings)
    c = launch(
        "--speculative-algo=EAGLE --speculative-draft-model-p d --speculative-num-s 2 "
        "--speculative-eagle 1 --speculative-num-d 3 --tp 4 --enable-dp-attention"
    )
    assert (c.mechanism, c.draft_length, c.verify_tokens) == ("eagle", 2, 3)
    assert (c.tensor_parallel_size, c.attention_data_parallel, c.draft_model) == (4, True, "d")


def test_ambiguous_abbreviations_are_read_as_no_flag() -> None:
    # Contract change (issue 23): --speculative-draft could match
    # --speculative-draft-model-path, --speculative-draft-model, …, and --enable-dp could
    # match --enable-dp-attention-local-control-broadcast, --enable-dp-lm-head,
    # --enable-dp-attention (0.5.23's parser): SGLang refuses both (SG310, a warn: no version
    # is pinned). Contract change (issue 27): SGLang 0.5.1.post3 and older (recorded parsers,
    # data/engines/parsers/sglang-0.5.1*.json) have one --speculative-draft-* flag, so where
    # the command starts it serves draft "d"; --enable-dp is ambiguous at every release read
    c = launch(
        "--speculative-algo=EAGLE --speculative-draft d --speculative-num-s 2 "
        "--speculative-eagle 1 --speculative-num-d 3 --tp 4 --enable-dp"
    )
    assert (c.mechanism, c.draft_model, c.attention_data_parallel) == ("eagle", "d", False)
    refused = sorted(i.field for i in c.issues if i.code == "SG310")
    assert refused == ["setting:--enable-dp", "setting:--speculative-draft"]


def test_ambiguous_abbreviation_is_the_engines_refusal() -> None:
    # SGLang 0.5.23's own answer (oracle record sglang-0428-flag-abbrev): exit 2, "ambiguous
    # option: --speculative-num could match --speculative-num-steps,
    # --speculative-num-draft-tokens". Was an input error of specgate's; now the engine's
    # refusal at the flag (SG310: fail at the version whose parser was recorded).
    c = txt(
        "python -m sglang.launch_server --speculative-algorithm EAGLE --speculative-num 3",
        "0.5.23",
    )
    (issue,) = [i for i in c.issues if i.code == "SG310"]
    assert issue.severity is None
    assert (
        "'error: ambiguous option: --speculative-num could match --speculative-num-steps, "
        "--speculative-num-draft-tokens'" in issue.message
    )
    assert c.spans[issue.field].column == 62  # 31 + 23 + 1 + 5 + 1 + 1: the flag's first column


def test_draft_fields_without_algorithm_configure_nothing() -> None:
    with pytest.raises(InputError, match=r"no speculative decoding configured in cmd\.txt"):
        txt("python -m sglang.launch_server --speculative-num-steps 3 --speculative-eagle-topk 1")


def test_ngram_draft_tokens_are_a_maximum() -> None:
    c = launch("--speculative-algorithm NGRAM --speculative-num-draft-tokens 8")
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max) == (
        "ngram",
        7,
        8,
        True,
    )


def test_context_length() -> None:
    c = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
        "--speculative-draft-model-path d --context-length 8192\n"
    )
    assert c.max_model_len == 8192
    assert yaml("speculative_algorithm: NGRAM\ncontext_length: 4096\n").max_model_len == 4096


def test_draft_attention_backend_and_window_flags_are_read() -> None:
    # --speculative-draft-attention-backend and --speculative-draft-window-size
    # (sglang/srt/arg_groups/fields/spec.py:137, :165 at 0.5.23; both in the parser run at
    # 0.5.23) were left out of the flag table, so the checks that read them never fired on
    # a command line. DFLASH with a draft backend outside DRAFT_ATTENTION_BACKEND_CHOICES
    # (draft worker, 0.5.23): the engine falls back to flashinfer, a warn at the flag.
    c = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm DFLASH "
        "--speculative-draft-model-path d --speculative-draft-attention-backend flashmla "
        "--speculative-draft-window-size 512",
        "0.5.23",
    )
    (issue,) = [i for i in c.issues if i.field == "check:draft-attention-backend-fallback"]
    assert (issue.code, issue.severity) == ("SG307", "warn")
    assert "but got flashmla" in issue.message
    assert c.spans[issue.field].column == 149  # its value: 31 + 15 + 31 + 33 + 38 + 1
    assert not [i for i in c.issues if i.code == "SG310"]  # both flags exist at 0.5.23


_DFLASH = "python -m sglang.launch_server --model-path m --speculative-algorithm DFLASH "


@pytest.mark.parametrize(
    ("flags", "check", "line"),
    [
        # 'DFLASH speculative decoding requires setting --speculative-draft-model-path.'
        # (0.5.11 server_args.py:3330, 0.5.23 speculative_hook.py:324)
        ("--speculative-num-draft-tokens 8", "dflash-without-draft", 324),
        # 'DFLASH requires --speculative-dflash-block-size to be positive' (0.5.11
        # server_args.py:3359, 0.5.23 speculative_hook.py:369)
        (
            "--speculative-draft-model-path d --speculative-dflash-block-size 0",
            "dflash-block-size-not-positive",
            369,
        ),
        # '… are set but they differ. For DFLASH they must match.' (0.5.11
        # server_args.py:3367, 0.5.23 speculative_hook.py:377)
        (
            "--speculative-draft-model-path d --speculative-dflash-block-size 8 "
            "--speculative-num-draft-tokens 16",
            "dflash-draft-tokens-differ-from-block",
            377,
        ),
    ],
)
@pytest.mark.parametrize(
    ("version", "severity"),
    [
        ("0.5.23", "fail"),
        ("0.5.11", "fail"),  # the oldest wheel read with DFLASH
        ("0.5.10", "warn"),  # no DFLASH in 0.5.10's server_args.py: not this refusal
        (None, "unpinned"),  # see below
    ],
)
def test_dflash_refusals_by_release(
    flags: str, check: str, line: int, version: str | None, severity: str
) -> None:
    c = txt(_DFLASH + flags, version=version)
    if severity == "unpinned":
        # --speculative-dflash-block-size is not in the 0.5.10.post1 wheel and is in
        # 0.5.11's (server_args.py:5412, its add_argument; since 0.5.11, since_after
        # 0.5.10.post1), and PyPI serves no release between the two (sglang.json
        # releases): set, it bounds the release to 0.5.11 or later, every one of which
        # holds the refusal (lifetime 0.5.11 to 0.5.23): a fail. Without it, the settings
        # allow 0.5.10 and older, where DFLASH is not read: a warning
        # (docs/engines.md#versions). Contract change (issue 27): was a warn with the
        # block size set (a release 0.5.10.post2 was assumed possible)
        severity = "fail" if "--speculative-dflash-block-size" in flags else "warn"
    assert _check_issues(c, check) == [severity]
    assert f"speculative_hook.py:{line}" in next(
        i.message + i.details for i in c.issues if i.field == f"check:{check}"
    )


@pytest.mark.parametrize("version", ["0.5.23", "0.5.16", None])
def test_dspark_without_draft_warns(version: str | None) -> None:
    # 0.5.16-0.5.23 _handle_dspark: the raise comes only when the target checkpoint does
    # not bundle the draft (dspark_* config keys) nor, from 0.5.23, has a dspark/
    # subfolder (speculative_hook.py:720-755): not known from the launch line
    c = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm DSPARK "
        "--speculative-num-draft-tokens 8",
        version=version,
    )
    assert _check_issues(c, "dspark-without-draft") == ["warn"]


def test_dflash_tokens_below_one_without_block_warn() -> None:
    # no block size: _handle_dflash (0.5.23 speculative_hook.py:366-386) checks only a set
    # block; what a 0-token block does later was not read (a warning)
    c = txt(_DFLASH + "--speculative-draft-model-path d --speculative-num-draft-tokens 0",
            version="0.5.23")
    assert [(i.code, i.severity) for i in c.issues] == [("SG307", "warn")]


def test_steps_without_topk_under_adaptive() -> None:
    # 0.5.23 _init_adaptive_speculative_params (speculative_hook.py:1405) sets topk 1 for
    # EAGLE/EAGLE3: the engine's answer for steps 3 under adaptive is ok (sglang-0556);
    # STANDALONE has adaptive turned off first ('only EAGLE/EAGLE3 are supported',
    # adaptive_spec_params.py:61) and then compares None with 1 (sglang-0612: TypeError)
    eagle = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
        "--speculative-draft-model-path d --speculative-num-steps 3 --speculative-adaptive",
        version="0.5.23",
    )
    assert _check_issues(eagle, "eagle-steps-without-topk") == []
    standalone = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm STANDALONE "
        "--speculative-draft-model-path d --speculative-num-steps 5 --speculative-adaptive",
        version="0.5.23",
    )
    assert _check_issues(standalone, "eagle-steps-without-topk") == ["fail"]


def test_tp_zero_warns() -> None:
    # SGLang 0.5.23's resolution accepts --tp-size 0 (the engine's answer: status ok,
    # tp_size 0, tests/data/engine_oracle/sglang-0.5.23.json sglang-0406-flag-bad); where
    # the workers refuse it was not read, so a warning, and no TP is read
    c = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 --tp-size 0",
        version="0.5.23",
    )
    assert [(i.code, i.field, i.severity) for i in c.issues] == [
        ("SG307", "tensor_parallel_size", "warn")
    ]
    assert c.tensor_parallel_size is None


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # speculative_use_block_verification is a ServerArgs field of the 0.5.22 PyPI
        # wheel (arg_groups/fields/spec.py:120) and of no sglang/srt file of the 0.5.21
        # wheel; data/engines/parsers/sglang-0.5.21.json lacks the flag
        ("0.5.21", None),
        ("0.5.22", "absent"),
        ("0.5.23", "absent"),
    ],
)
def test_block_verification_exists_from_0_5_22(version: str, severity: str | None) -> None:
    c = launch_at(
        "--speculative-algorithm EAGLE --speculative-draft-model-path d "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
        "--speculative-use-rejection-sampling --speculative-use-block-verification\n",
        version,
    )
    field = "setting:--speculative-use-block-verification"
    said = [i.severity for i in c.issues if i.field == field]
    assert said == ([] if severity == "absent" else [severity])


def launch_at(extra: str, version: str) -> EngineConfig:
    return txt("python -m sglang.launch_server --model-path m " + extra, version=version)


_NGRAM_WINDOW = (
    "python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM "
    "--speculative-ngram-max-match-window-size 20"
)


@pytest.mark.parametrize(
    ("version", "n", "removed"),
    [
        # ServerArgs of the 0.5.3 wheel (server_args.py:1137-1140) and of 0.5.9
        # (:2476-2479): NGRAM with speculative_num_draft_tokens unset takes
        # speculative_ngram_max_match_window_size, 20 here: D = 19 (it read 12)
        ("0.5.3", 20, []),
        ("0.5.9", 20, []),
        # unpinned: the flag exists in 0.5.3-0.5.9 only (add_argument at 0.5.3
        # server_args.py:2112 and 0.5.9 :4032, none in 0.5.10), so the window is read,
        # and SG310 warns that 0.5.10 removed it
        (None, 20, ["warn"]),
        # 0.5.10 has no such flag (refused at start) and a fixed default of 12
        # (server_args.py:3108)
        ("0.5.10", 12, [None]),
    ],
)
def test_ngram_draft_tokens_from_the_match_window(
    version: str | None, n: int, removed: list[str | None]
) -> None:
    c = txt(_NGRAM_WINDOW, version=version)
    assert (c.draft_length, c.verify_tokens) == (n - 1, n)
    assert [i.severity for i in c.issues if i.code == "SG310"] == removed


def test_ngram_draft_tokens_as_given_beside_the_window() -> None:
    # an explicit --speculative-num-draft-tokens wins at 0.5.5 (the window fills only an
    # unset value): 6, and its span is that flag's value, at column 120 + 1 (the space)
    # + 31 ("--speculative-num-draft-tokens ") + 1 = 153
    c = txt(_NGRAM_WINDOW + " --speculative-num-draft-tokens 6", version="0.5.5")
    assert (c.draft_length, c.verify_tokens) == (5, 6)
    assert len(_NGRAM_WINDOW) == 120
    assert c.spans["verify_tokens"].column == 153


@pytest.mark.parametrize("version", ["0.5.5", "0.5.23", None])
def test_ngram_default_twelve(version: str | None) -> None:
    # no window given: its default is 12 at 0.5.3-0.5.9 (0.5.5 server_args.py ServerArgs),
    # and 12 is the fixed default from 0.5.10
    c = txt("python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM",
            version=version)
    assert (c.draft_length, c.verify_tokens) == (11, 12)


@pytest.mark.parametrize(
    ("version", "said"),
    [
        # 'DFLASH only supports speculative_eagle_topk == 1; overriding' in every wheel from
        # 0.5.11 (server_args.py:3350-3356), where DFLASH came in, to 0.5.23
        # (speculative_hook.py:355-365)
        ("0.5.11", True),
        ("0.5.23", True),
        (None, True),
        ("0.5.10", False),  # no DFLASH: no such rewrite to report
    ],
)
def test_dflash_topk_forced_to_one_by_release(version: str | None, said: bool) -> None:
    c = txt(_DFLASH + "--speculative-draft-model-path d --speculative-num-draft-tokens 8 "
            "--speculative-eagle-topk 4", version=version)
    assert any("SGLang overrides 4 to 1" in n for n in c.notes) == said


_CHAIN_8 = (
    "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
    "--speculative-draft-model-path d --speculative-num-steps 3 --speculative-eagle-topk 1 "
    "--speculative-num-draft-tokens 8\n"
)


@pytest.mark.parametrize(
    ("version", "n", "rewritten"),
    [
        # the PyPI wheels' server_args.py: 'speculative_num_draft_tokens is adjusted to
        # speculative_num_steps + 1 when speculative_eagle_topk == 1' at :352-359 of
        # 0.4.5.post3 and :348-355 of 0.4.6; none in 0.4.4.post3 to 0.4.5.post2, which
        # verify the 8 draft tokens as written (new-user trial M5)
        ("0.4.4.post3", 8, False),
        ("0.4.5", 8, False),
        ("0.4.5.post2", 8, False),
        ("0.4.5.post3", 4, True),
        ("0.4.6", 4, True),
        ("0.5.23", 4, True),
    ],
)
def test_the_topk_1_rewrite_from_its_first_release(version: str, n: int, rewritten: bool) -> None:
    c = txt(_CHAIN_8, version=version)
    assert (c.draft_length, c.verify_tokens) == (3, n)
    said = [i.message for i in c.issues if "rewrites speculative_num_draft_tokens" in i.message]
    assert len(said) == int(rewritten)


def test_release_defaults_cite_the_release_each_was_read_in() -> None:
    # new-user trial U4: at 0.4.4.post3 topk 4 and draft tokens 8 were read in the
    # 0.4.3.post3 wheel (server_args.py:131-133; 0.4.3.post2 :126-128 has 5/64/8), steps 5
    # in 0.4.1.post4's (:124-126); the note cited 0.4.1.post4 alone, whose values are 5/8/64
    c = txt(
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
        "--speculative-draft-model-path d\n",
        version="0.4.4.post3",
    )
    (note,) = [n for n in c.notes if "ServerArgs defaults" in n]
    assert "steps 5, topk 4, draft tokens 8" in note
    assert "@v0.4.3.post3" in note
