"""The engines' own refusals, rewrites and warnings (data/engines/*.json ``checks``,
docs/engines.md#parity-manifests), end to end: each case is a serving config the engine's source
treats as the parity manifest site says (data/engines/parity/), and the finding's rule, severity
and line are what that site implies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main

Run = Callable[[dict[str, str]], tuple[int, dict[str, Any]]]
#: The version each engine's checks were read at: its newest known version
#: (data/engines/ENGINE.json newest_known), except vLLM's, whose checks were read at
#: 0.32.0 (newest_known 0.33.0: its methods, parser and token budget were recorded).
NEWEST = {
    "vllm": "0.32.0",
    "sglang": "0.5.23",
    "trtllm": "1.2.0",
    "llamacpp": "b11312",
    "transformers": "5.19.0",
}


@pytest.fixture
def check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Run:
    """``check(files)``: write ``files`` into a fresh repository, run ``specgate check
    --format json c.specgate.yaml``, return (exit code, the one deployment)."""
    runs = iter(range(1000))

    def go(files: dict[str, str]) -> tuple[int, dict[str, Any]]:
        folder = tmp_path / f"run{next(runs)}"
        folder.mkdir()
        return run(folder, files, monkeypatch, capsys)

    return go


def run(
    tmp_path: Path,
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, dict[str, Any]]:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--format", "json", "c.specgate.yaml"])
    report = json.loads(capsys.readouterr().out)
    (file,) = report["files"]
    assert file["error"] is None, file["error"]
    (dep,) = file["deployments"]
    return code, dep


def claims(
    engine: str,
    config: str,
    *,
    extra: str = "",
    version: str | None = "read",
    workload: str = "",
    evidence: str = "",
) -> str:
    """A claims file for ``engine``; ``version``: the ``engine_version`` pinned. By
    default the version the checks' sources were read at (the engine's newest known:
    a refusal fails there); ``None`` leaves it unpinned (a refusal then warns unless
    the settings used bound the version to where it was read: real-r4 defect 1)."""
    if version == "read":
        version = NEWEST[engine]
    pin = f"      engine_version: {version}\n" if version else ""
    return (
        "version: 1\ndeployments:\n  - name: d\n    model: {name: m, query_heads: 32, "
        f"kv_heads: 8}}\n{extra}    speculation:\n      enabled: true\n      engine: {engine}\n"
        f"{pin}      engine_config: {config}\n      draft_depth_ratio: 0.05\n"
        f"{workload}    evidence:\n      cache_coherence_eval: true\n{evidence}"
    )


def found(dep: dict[str, Any], code: str) -> list[tuple[str, int | None, str]]:
    """(severity, line, what the finding says): its message and details read together.

    Contract change (issue 26): the engine's source, the version judged at and the
    words past the 200-character message moved to details; the facts asserted here
    are the finding's, wherever it says them."""
    return [
        (f["severity"], f["line"], f"{f['message']} {f['details']}")
        for f in dep["findings"]
        if f["code"] == code
    ]


TRT_EAGLE = (
    "speculative_config:\n"
    "  decoding_type: Eagle3\n"
    "  max_draft_len: 3\n"
    "  speculative_model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
)


@pytest.mark.parametrize(
    ("concurrency", "evidence", "severity"),
    [
        # 64 running requests > max_concurrency 32 and an AL is stated: the claim rests on
        # speculation the engine switches off there (llm_args.py @00043967) ⇒ fail
        (64, "      accept_length: 2.4\n", "fail"),
        # the same load with nothing claimed or measured: the rewrite warns
        (64, "", "warn"),
    ],
)
def test_trtllm_max_concurrency_switches_speculation_off_above_it(
    check: Run,
    concurrency: int,
    evidence: str,
    severity: str,
) -> None:
    _, dep = check(
        {
            "c.specgate.yaml": claims(
                "trtllm",
                "serving/llm.yaml",
                workload=f"    workload: {{concurrency: {concurrency}}}\n",
                evidence=evidence,
            ),
            "serving/llm.yaml": TRT_EAGLE + "  max_concurrency: 32\n",
        }
    )
    ((got, line, message),) = found(dep, "SG307")
    assert (got, line) == (severity, 5)
    assert "speculation is disabled at batch sizes above it" in message
    assert "runs 64 requests at once" in message
    # newuser.md defect 8: the engine starts with speculation and turns it off above 32;
    # the schedule it stands for is written with single braces
    # (tensorrt_llm/llmapi/llm_args.py: draft_len_schedule = {max_concurrency: max_draft_len})
    assert message.startswith("TensorRT-LLM turns speculation off at the served concurrency:")
    assert "starts without speculation" not in message
    assert "a draft_len_schedule {32: max_draft_len}" in message
    assert "{{" not in message and "}}" not in message


def test_trtllm_max_concurrency_at_a_lower_load_is_only_said(check: Run) -> None:
    # 16 requests ≤ 32: speculation stays on; nothing fires. Without a stated load the
    # cut-off is a warning (the served load is unknown).
    _, dep = check(
        {
            "c.specgate.yaml": claims(
                "trtllm", "serving/llm.yaml", workload="    workload: {concurrency: 16}\n"
            ),
            "serving/llm.yaml": TRT_EAGLE + "  max_concurrency: 32\n",
        }
    )
    assert found(dep, "SG307") == []
    _, dep = check(
        {
            "c.specgate.yaml": claims("trtllm", "serving/llm.yaml"),
            "serving/llm.yaml": TRT_EAGLE + "  max_concurrency: 32\n",
        }
    )
    ((severity, line, message),) = found(dep, "SG307")
    assert (severity, line) == ("warn", 5)
    assert "state workload.concurrency" in message


@pytest.mark.parametrize(
    ("extra", "check_words", "severity", "line"),
    [
        # eagle3_one_model: false is ignored (falls back to one-model)
        ("  eagle3_one_model: false\n", "eagle3_one_model=True", "warn", 5),
        # a disconnected tree: [0, 1] without [0]
        ("  eagle_choices: [[1], [0, 1]]\n", "choice [0, 1] is not connected", "fail", 5),
        # eagle_choices with a dynamic tree is refused
        (
            "  eagle_choices: [[0], [1]]\n  use_dynamic_tree: true\n  dynamic_tree_max_topK: 2\n",
            "use_dynamic_tree should be False",
            "fail",
            6,
        ),
        # dynamic tree without a top-K is refused
        ("  use_dynamic_tree: true\n", "dynamic_tree_max_topK should be provided", "fail", 5),
        # a top-K without the dynamic tree is ignored
        ("  dynamic_tree_max_topK: 4\n", "using the linear draft path", "warn", 5),
        # a schedule whose smallest key's draft length is not max_draft_len
        ("  draft_len_schedule: {4: 2, 16: 1}\n", "must equal max_draft_len (3)", "fail", 5),
        # a schedule key below 1
        ("  draft_len_schedule: {0: 3}\n", "batch size threshold must be >= 1", "fail", 5),
        # a draft length above max_draft_len
        ("  draft_len_schedule: {1: 3, 8: 5}\n", "all draft lengths must be <=", "fail", 5),
        # max_concurrency beside a schedule
        (
            "  max_concurrency: 8\n  draft_len_schedule: {1: 3}\n",
            "mutually exclusive",
            "fail",
            5,
        ),
        # rejection sampling is not supported for n-gram drafting (NGram swapped in)
        ("  use_rejection_sampling: true\n", None, None, None),
    ],
)
def test_trtllm_eagle3_refusals_and_rewrites(
    check: Run,
    extra: str,
    check_words: str | None,
    severity: str | None,
    line: int | None,
) -> None:
    _, dep = check(
        {
            "c.specgate.yaml": claims("trtllm", "serving/llm.yaml"),
            "serving/llm.yaml": TRT_EAGLE + extra,
        }
    )
    got = found(dep, "SG307")
    if check_words is None:
        assert got == []  # Eagle3 one-model supports rejection sampling
        return
    matching = [(s, n) for s, n, m in got if check_words in m]
    assert matching == [(severity, line)], got


@pytest.mark.parametrize(
    ("config", "words"),
    [
        # llm_args.py @00043967: DSpark block_size must equal max_draft_len
        (
            "speculative_config:\n  decoding_type: DSpark\n  max_draft_len: 4\n"
            "  block_size: 8\n  speculative_model: m\n",
            "block_size must equal max_draft_len; got block_size=8 and max_draft_len=4",
        ),
        ("speculative_config:\n  decoding_type: DSpark\n  speculative_model: m\n", "> 0"),
        (
            "speculative_config:\n  decoding_type: SA\n  max_draft_len: 4\n"
            "  max_matching_ngram_size: 0\n",
            "must be > 0 (fixed ngram) or -1",
        ),
        (
            "speculative_config:\n  decoding_type: SA\n  max_draft_len: 4\n"
            "  global_pool_size: 4096\n",
            "global_pool_size requires enable_global_pool=True",
        ),
        (
            "max_batch_size: 256\nspeculative_config:\n  decoding_type: SA\n  max_draft_len: 4\n"
            "  enable_global_pool: true\n  global_pool_size: 128\n",
            "global_pool_size (128) must be >= max_batch_size",
        ),
        (
            "speculative_config:\n  decoding_type: Draft_Target\n  max_draft_len: 4\n",
            "speculative_model must be specified for DraftTarget",
        ),
        (
            "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 4\n",
            "Draft model must be provided for EAGLE",
        ),
        (
            "speculative_config:\n  decoding_type: NGram\n  max_draft_len: 4\n"
            "  use_rejection_sampling: true\n",
            "use_rejection_sampling=True is not supported",
        ),
        (
            "speculative_config:\n  decoding_type: MTP\n  use_dynamic_tree: true\n"
            "  dynamic_tree_max_topK: 2\n",
            "max_draft_len must be set when use_dynamic_tree is True",
        ),
    ],
)
def test_trtllm_refuses_at_start(
    check: Run,
    config: str,
    words: str,
) -> None:
    code, dep = check(
        {"c.specgate.yaml": claims("trtllm", "serving/llm.yaml"), "serving/llm.yaml": config}
    )
    assert [s for s, _, m in found(dep, "SG307") if words in m] == ["fail"], found(dep, "SG307")
    assert code == 1


def test_trtllm_deprecations_are_sg310_warnings(check: Run) -> None:
    config = (
        "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 2\n"
        "  speculative_model: m\n  allow_advanced_sampling: true\n"
        "  eagle_choices: [[0], [0, 0]]\n"
    )
    _, dep = check(
        {"c.specgate.yaml": claims("trtllm", "serving/llm.yaml"), "serving/llm.yaml": config}
    )
    got = sorted((s, n) for s, n, _ in found(dep, "SG310"))
    assert got == [("warn", 5), ("warn", 6)]


def test_trtllm_drafts_greedily_at_a_sampled_temperature(check: Run) -> None:
    # _allow_greedy_draft_tokens (llm_args.py @00043967): drafts are argmax at T 0.6.
    _, dep = check(
        {
            "c.specgate.yaml": claims(
                "trtllm", "serving/llm.yaml", workload="    workload: {temperature: 0.6}\n"
            ),
            "serving/llm.yaml": TRT_EAGLE,
        }
    )
    ((severity, line, message),) = found(dep, "SG307")
    assert (severity, line) == ("warn", 2)
    assert "temperature 0.6" in message


LLAMA = "llama-server -m /models/t.gguf {flags}\n"


@pytest.mark.parametrize(
    ("flags", "code", "severity", "words"),
    [
        # common/speculative.cpp:198 @0c1e57098: caught by llama-server (no speculation);
        # nothing claimed or measured, so a warning
        ("--spec-type draft-simple", "SG307", "warn", "draft-simple requires a draft context"),
        ("--spec-type draft-eagle3", "SG307", "warn", "skips the type"),
        ("--spec-type ngram-mod --spec-ngram-mod-n-match 8", "SG307", "warn", "too small"),
        ("--spec-type ngram-simple --spec-ngram-simple-size-n 0", "SG307", "fail", "[1, 1024]"),
        ("--spec-type ngram-mod --spec-ngram-mod-n-max -1", "SG307", "fail", "[0, 1024]"),
        ("--spec-type ngram-map-k --spec-ngram-map-k-min-hits 0", "SG307", "fail", "at least 1"),
        (
            "-md d.gguf --spec-type draft-simple --spec-synth-len 2 --spec-synth-rates 0.5",
            "SG307",
            "fail",
            "mutually exclusive",
        ),
        (
            "-md d.gguf --spec-type draft-simple --spec-draft-n-max 3 --spec-synth-rates 0.8,0.5",
            "SG307",
            "fail",
            "is not 3 rates",
        ),
        (
            "-md d.gguf --spec-type draft-simple --spec-draft-n-max 2 --spec-synth-rates 0.5,0.8",
            "SG307",
            "fail",
            "non-increasing",
        ),
        (
            "-md d.gguf --spec-type draft-simple --spec-draft-n-max 2 --spec-synth-len 4",
            "SG307",
            "fail",
            "[1, n_max + 1]",
        ),
        # the flag spelling no llama.cpp build has (cases/v3-report-44, LLMKube#1382)
        ("--spec-type draft-mtp --draft-n-max 5", "SG310", "fail", "--spec-draft-n-max"),
    ],
)
def test_llamacpp_checks_at_the_newest_build(
    check: Run,
    flags: str,
    code: str,
    severity: str,
    words: str,
) -> None:
    _, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serve.txt"),
            "serve.txt": LLAMA.format(flags=flags),
        }
    )
    got = [(s, n) for s, n, m in found(dep, code) if words in m]
    assert got == [(severity, 1)], found(dep, code)


def test_llamacpp_repeated_spec_type_adds_up(check: Run) -> None:
    # common/arg.cpp:833 @0c1e57098: --spec-type is exempt from "specified multiple times";
    # its lists add up, so draft-mtp given first is still served beside ngram-mod.
    _, dep = check(
        {
            "c.specgate.yaml": claims("llamacpp", "serve.txt"),
            "serve.txt": LLAMA.format(flags="--spec-type draft-mtp --spec-type ngram-mod"),
        }
    )
    assert dep["inputs"]["engine"]["mechanism"] == "mtp"
    assert "ngram-mod" in " ".join(dep["inputs"]["engine"]["notes"])


@pytest.mark.parametrize(
    ("files", "served", "line"),
    [
        # eagle_choices of depth 2 reset max_draft_len 4 (llm_args.py @00043967)
        (
            {
                "serving/llm.yaml": TRT_EAGLE.replace("max_draft_len: 3", "max_draft_len: 4")
                + "  eagle_choices: [[0], [1], [0, 0]]\n"
            },
            2,
            3,
        ),
        # vanilla MTP: max_draft_len 3 on a checkpoint of 2 MTP layers serves
        # min(3, 2) = 2 (tensorrt_llm/_torch/speculative/utils.py @011d0933)
        (
            {
                "serving/llm.yaml": "speculative_config:\n  decoding_type: MTP\n"
                "  max_draft_len: 3\n",
                "models/t.json": '{"num_attention_heads": 32, "num_key_value_heads": 8, '
                '"num_nextn_predict_layers": 2, "model_type": "deepseek_v3"}',
            },
            2,
            3,
        ),
    ],
)
def test_a_rewritten_draft_length_is_the_served_one_for_every_rule(
    check: Run,
    files: dict[str, str],
    served: int,
    line: int,
) -> None:
    extra = "    model: {hf_config: models/t.json}\n" if "models/t.json" in files else ""
    text = claims("trtllm", "serving/llm.yaml", evidence="      accept_length: 2.2\n")
    if extra:
        text = text.replace("    model: {name: m, query_heads: 32, kv_heads: 8}\n", extra)
    _, dep = check({"c.specgate.yaml": text, **files})
    assert dep["metrics"]["draft_length"] == served
    rewrites = [(s, n) for s, n, m in found(dep, "SG307") if "served D" in m or "served" in m]
    # an AL is stated: the claim rests on the config as written, so the rewrite fails
    assert rewrites == [("fail", line)], found(dep, "SG307")


def test_llamacpp_dflash_draft_is_clamped_to_its_block(check: Run) -> None:
    # common/speculative.cpp:1018 @0c1e57098: n_max 15 on a draft trained for blocks of 8
    # is clamped to 8 - 1 = 7.
    text = claims("llamacpp", "serve.txt").replace(
        "      draft_depth_ratio", "      draft_hf_config: d.json\n      draft_depth_ratio"
    )
    _, dep = check(
        {
            "c.specgate.yaml": text,
            "serve.txt": LLAMA.format(
                flags="-md dflash.gguf --spec-type draft-dflash --spec-draft-n-max 15"
            ),
            "d.json": '{"num_attention_heads": 32, "num_key_value_heads": 8, "block_size": 8}',
        }
    )
    assert dep["metrics"]["draft_length"] == 7
    ((severity, line, message),) = [x for x in found(dep, "SG307") if "block" in x[2]]
    assert (severity, line) == ("warn", 1)
    assert "exceeds the draft's trained block size 8" in message


QWEN3_MOE = (
    '{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", '
    '"num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 151936}'
)
KIMI_K2 = (
    '{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", '
    '"num_attention_heads": 64, "num_key_value_heads": 64, "kv_lora_rank": 512, '
    '"num_nextn_predict_layers": 0, "vocab_size": 163840}'
)


def _with_model(text: str, target: str = "models/t.json", draft: str | None = None) -> str:
    text = text.replace(
        "    model: {name: m, query_heads: 32, kv_heads: 8}\n",
        f"    model: {{hf_config: {target}}}\n",
    )
    if draft:
        text = text.replace(
            "      draft_depth_ratio", f"      draft_hf_config: {draft}\n      draft_depth_ratio"
        )
    return text


@pytest.mark.parametrize(
    ("engine", "config", "model"),
    [
        # Kimi-K2-Instruct states num_nextn_predict_layers: 0 (cases/v3-real-kimi-k2…)
        (
            "vllm",
            "vllm serve moonshotai/Kimi-K2-Instruct --speculative-config "
            '\'{"method": "mtp", "num_speculative_tokens": 1}\'\n',
            KIMI_K2,
        ),
        ("trtllm", None, KIMI_K2),
        ("llamacpp", "llama-server -m k2.gguf --spec-type draft-mtp\n", KIMI_K2),
    ],
)
def test_mtp_served_on_a_model_without_mtp_layers_has_no_head_to_load(
    check: Run, engine: str, config: str | None, model: str
) -> None:
    name = "serve.yaml" if config is None else "serve.txt"
    text = config or "speculative_config:\n  decoding_type: MTP\n  max_draft_len: 1\n"
    code, dep = check(
        {
            "c.specgate.yaml": _with_model(claims(engine, name)),
            name: text,
            "models/t.json": model,
        }
    )
    (hit,) = [
        f for f in dep["findings"]
        if f["code"] == "SG307" and "head to load" in f["message"] + f["details"]
    ]
    assert hit["severity"] == "fail"
    assert code == 1


def test_sglang_nextn_on_a_model_without_mtp_layers_warns(check: Run) -> None:
    # issue 17: SGLang NEXTN on Qwen3-30B-A3B, whose config has no MTP layer. Contract
    # change (branch sgfix): SGLang 0.5.23's draft worker builds Qwen3MoeForCausalLMMTP
    # from the target's checkpoint (run: tests/data/engine_oracle/sglang-0.5.23-mtp-
    # archs.json) and its loader skips the missing weights (qwen3_moe.py load_weights):
    # no refusal is known, so a warn, no longer a fail resting on vLLM's model types
    text = (
        "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B "
        "--speculative-algorithm NEXTN --speculative-num-steps 2 "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 3\n"
    )
    _code, dep = check(
        {
            "c.specgate.yaml": _with_model(claims("sglang", "serve.txt")),
            "serve.txt": text,
            "models/t.json": QWEN3_MOE,
        }
    )
    (hit,) = [
        f for f in dep["findings"]
        if f["code"] == "SG307" and "likely left" in f["message"] + f["details"]
    ]
    assert hit["severity"] == "warn"
    assert "Qwen3MoeForCausalLM" in hit["message"] + hit["details"]
    assert not [f for f in dep["findings"] if f["severity"] == "fail" and f["code"] == "SG307"]


def test_vllm_refuses_a_draft_model_of_another_vocabulary(check: Run) -> None:
    # cases/v3-report-39 (vLLM PR #42775): R1-Distill-Qwen-32B 152064 vs 1.5B 151936,
    # method draft_model, vllm==0.21.0 pinned beside the config.
    code, dep = check(
        {
            "c.specgate.yaml": _with_model(
                claims("vllm", "serving/vllm.yaml"), draft="models/d.json"
            ),
            "serving/vllm.yaml": "model: t\nspeculative-config:\n  method: draft_model\n"
            "  model: d\n  num_speculative_tokens: 4\n",
            "serving/requirements.txt": "vllm==0.32.0\n",
            "models/t.json": '{"num_attention_heads": 40, "num_key_value_heads": 8, '
            '"vocab_size": 152064}',
            "models/d.json": '{"num_attention_heads": 12, "num_key_value_heads": 2, '
            '"vocab_size": 151936}',
        }
    )
    # at the draft's line of the serving config (line 4: "  model: d")
    ((severity, line, message),) = found(dep, "SG302")
    assert (severity, line) == ("fail", 4)
    assert "152064" in message and "151936" in message
    assert code == 1


@pytest.mark.parametrize(
    ("block", "words"),
    [
        # the researcher's probe: the first range must start at 1 (Scheduler.__init__)
        (
            '{"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_max": 4, '
            '"num_speculative_tokens_per_batch_size": [[2, 8, 4], [9, 64, 2]]}',
            "the first batch-size range must start at 1",
        ),
        (
            '{"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_max": 4, '
            '"num_speculative_tokens_per_batch_size": [[1, 8, 4], [8, 64, 2]]}',
            "non-overlapping",
        ),
        (
            '{"method": "custom_class", "model": "MyProposer", "num_speculative_tokens": 2}',
            "full module path",
        ),
    ],
)
def test_vllm_refusals_at_engine_start(check: Run, block: str, words: str) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt"),
            "serve.txt": f"vllm serve m --speculative-config '{block}'\n",
        }
    )
    assert [s for s, _, m in found(dep, "SG307") if words in m] == ["fail"], found(dep, "SG307")
    assert code == 1


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # the V1 runner's build_logitsprocs (v1/sample/logits_processor/__init__.py), the
        # only runner for custom logits processors to 0.30.0. Contract change (issue 27):
        # it failed at 0.32.0, where Model Runner V2, the default on a GPU with Triton,
        # loads them and refuses none with speculation (the runner is not in the config)
        ("0.30.0", "fail"),
        ("0.32.0", "warn"),
    ],
)
def test_vllm_custom_logits_processors_refuse_speculation(
    check: Run, version: str, severity: str
) -> None:
    _, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.yaml", version=version),
            "serve.yaml": "model: m\nlogits-processors: [mypkg.Proc]\nspeculative-config:\n"
            "  method: ngram\n  num_speculative_tokens: 3\n  prompt_lookup_max: 3\n",
        }
    )
    ((said, line, message),) = found(dep, "SG307")
    assert (said, line) == (severity, 2)
    assert "Custom logits processors are not supported" in message


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        # 0.5.23 has no MTP or LOOKAHEAD algorithm (spec_info.py from_string)
        ("--speculative-algorithm MTP", "Unknown speculative algorithm name: MTP"),
        ("--speculative-algorithm lookahead", "Unknown speculative algorithm name: lookahead"),
        (
            "--speculative-algorithm EAGLE --speculative-draft-model-path e "
            "--speculative-num-steps 3 --speculative-eagle-topk 4 "
            "--speculative-num-draft-tokens 8 --speculative-use-rejection-sampling",
            "supports only topk=1",
        ),
        (
            "--speculative-algorithm EAGLE --speculative-draft-model-path e "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4 --attention-backend hpc_ops",
            "hpc_ops backend does not support speculative decoding",
        ),
    ],
)
def test_sglang_refusals(check: Run, flags: str, words: str) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("sglang", "serve.txt"),
            "serve.txt": f"python -m sglang.launch_server --model-path m {flags}\n",
        }
    )
    assert [s for s, _, m in found(dep, "SG307") if words in m] == ["fail"], found(dep, "SG307")
    assert code == 1


def test_sglang_standalone_refuses_another_vocabulary(check: Run) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": _with_model(claims("sglang", "serve.txt"), draft="models/d.json"),
            "serve.txt": "python -m sglang.launch_server --model-path t "
            "--speculative-algorithm STANDALONE --speculative-draft-model-path d "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4\n",
            "models/t.json": '{"num_attention_heads": 40, "num_key_value_heads": 8, '
            '"vocab_size": 152064}',
            "models/d.json": '{"num_attention_heads": 12, "num_key_value_heads": 2, '
            '"vocab_size": 151936}',
        }
    )
    ((severity, _, message),) = found(dep, "SG302")
    assert severity == "fail"
    assert "STANDALONE speculative decoding requires" in message
    assert code == 1


@pytest.mark.parametrize(
    ("extra", "words", "line"),
    [
        # transformers 5.19.0's own refusals (tests/data/engine_oracle, group refusal/batch)
        ("cache_implementation: static\n", "not supported with Static cache classes", 2),
        ("use_cache: false\n", "requires `use_cache=True`", 2),
        ("do_sample: true\nnum_return_sequences: 2\n", "has to be 1", 3),
        ("batch_size: 2\n", "only supported for batch_size = 1", 2),
        ("assistant_ensemble_weight: 1.5\n", "open interval (0.0, 1.0)", 2),
    ],
)
def test_transformers_refusals(check: Run, extra: str, words: str, line: int) -> None:
    code, dep = check(
        {
            "c.specgate.yaml": claims("transformers", "generate.yaml"),
            "generate.yaml": "assistant_model: Qwen/Qwen2.5-0.5B-Instruct\n" + extra,
        }
    )
    assert [(s, n) for s, n, m in found(dep, "SG307") if words in m] == [("fail", line)]
    assert code == 1
