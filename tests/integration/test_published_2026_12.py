"""The 31 published serving files of tests/data/published-2026-12 (README.md there; each
folder's SOURCE.md names the public file and commit), read as their engines read them.

Each folder holds the file as published and the claims file a user would commit beside it.
The right reading of each is worked out below from the file's text and the engine's own
source at the version it names (or, unpinned, the newest specgate knows); every expected
value carries its reason (an unknown version narrowed by the settings used and
``num_nextn_predict_layers: 0`` as no MTP layer included, docs/engines.md#what-users-publish).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from specgate.cli.main import main

DATA = Path(__file__).resolve().parent.parent / "data" / "published-2026-12"


@dataclass(frozen=True)
class Right:
    """The right reading of one folder: the exit code, and the values of
    ``inputs.engine`` / ``inputs.model`` / ``inputs.acceptance`` that must hold; codes
    that must be among the findings (``codes``) or must not (``absent``), and the
    severity of some (``severity``: code → fail | warn | info)."""

    exit: int
    engine: Mapping[str, object] = field(default_factory=dict)
    model: Mapping[str, object] = field(default_factory=dict)
    acceptance: Mapping[str, object] = field(default_factory=dict)
    codes: frozenset[str] = frozenset()
    absent: frozenset[str] = frozenset({"SG307"})
    severity: Mapping[str, str] = field(default_factory=dict)
    #: for a refused file (exit 2): words its one-line error must hold
    error: str = ""
    error: str | None = None


def _vllm(mechanism: str, d: int, **more: object) -> dict[str, object]:
    return {"engine": "vllm", "mechanism": mechanism, "draft_length": d,
            "verify_tokens": d + 1, "draft_length_is_max": False, **more}


RIGHT: dict[str, Right] = {
    # The argv list (--speculative-config.method mtp, .num_speculative_tokens 1) and the
    # guide's `vllm serve zai-org/GLM-4.5-FP8 --tensor-parallel-size 4 …` configure the
    # same thing: one configuration, read from the command that states the most (TP 4,
    # the target). MTP: D = num_speculative_tokens = 1, N_verify 2; vLLM gives an MTP
    # draft the target's TP (vllm/config/speculative.py, draft_tensor_parallel_size).
    "01-vllm-recipes-glm45-dotted-args": Right(0, _vllm(
        "mtp", 1, tensor_parallel_size=4, draft_tensor_parallel_size=4,
        target_model="zai-org/GLM-4.5-FP8", pointer="/guide")),
    # No method: vLLM detects the -assistant drafter as an MTP-style model
    # (gemma4_assistant → gemma4_mtp in hf_config_override); D 4, N_verify 5.
    "02-vllm-recipes-gemma4-31b-assistant-no-method": Right(0, _vllm(
        "mtp", 4, draft_model="google/gemma-4-31B-it-assistant",
        pointer="/features/spec_decoding/args")),
    # a published recipe guide (docs/engines.md#what-users-publish): the guide's prose
    # ("Meta's") is no shell; its one `vllm serve` block with --speculative-config:
    # eagle3, D 3, N_verify 4, target meta-llama/Llama-3.1-8B-Instruct.
    "03-vllm-recipes-llama31-8b-eagle3": Right(0, _vllm(
        "eagle3", 3, target_model="meta-llama/Llama-3.1-8B-Instruct",
        draft_model="RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", pointer="/guide")),
    # method draft_model, but the path holds "eagle3": vLLM 0.32.0 sets method eagle3
    # (vllm/config/speculative.py 1327-1336); D 5, N 6, TP 1. d3.log: three lines of
    # Accepted 0, Drafted 495 at k = 5: 99 drafts each, AL = 1 + 0/297 = 1 (SG102 fails:
    # nothing is accepted).
    "04-vllm-ascend-issue13665-multiline-json-draft-model": Right(1, _vllm(
        "eagle3", 5, tensor_parallel_size=1, draft_model="/home/b60122136/qwen3_8b_eagle3",
        target_model="/home/b60122136/Qwen3-8B-W8A8"),
        acceptance={"accept_length": 1, "formula": "1 + 0/297", "draft_length": 5},
        codes=frozenset({"SG102"})),
    # mlp_speculator, k 3, TP 2 (`--tensor-parallel-size 2`); the two commented-out
    # alternatives are comments. The V0-era keys are settings newer vLLM refuses (SG310).
    # docs/engines.md#versions unknown versions: no version is pinned and the V0 keys imply a vLLM
    # before their removal (0.8.3), so SG310 warns.
    # Contract change (issue 27): disable_by_batch_size 30 exists only in 0.10.0–0.16.0
    # (the sdists), the newest release these settings allow is 0.16.0, and there nothing
    # past SpeculativeConfig reads it (vllm/config/speculative.py@v0.11.0): accepted and
    # ignored, an SG307 warn; nothing is claimed on it, so it does not fail
    "05-vllm-southfreebird-mlp-speculator-v0-keys": Right(0, _vllm(
        "mlp_speculator", 3, tensor_parallel_size=2,
        draft_model="./from_llama_v3.1_8b_instruct/mlp_based_lk_new/",
        target_model="meta-llama/Meta-Llama-3.1-8B-Instruct"),
        codes=frozenset({"SG310", "SG307"}), absent=frozenset(),
        severity={"SG310": "warn", "SG307": "warn"}),
    # sh -c "… --speculative-config '{\"method\":\"mtp\",…}'": mtp D 1, TP 8; the draft
    # vLLM loads is the target (qwen3_5_moe → qwen3_5_mtp, n_predict from
    # mtp_num_hidden_layers 1: hf_config_override, vLLM 0.27.1 and 0.32.0): no refusal.
    # hf/config.json text_config: 32 heads, 2 KV heads, G 16.
    "06-vllm-truss-qwen35-397b-escaped-json-in-sh-c": Right(0, _vllm(
        "mtp", 1, tensor_parallel_size=8, draft_tensor_parallel_size=8,
        target_model="/models/Qwen3.5-397B-A17B"),
        model={"query_heads": 32, "kv_heads": 2, "query_heads_per_kv": 16}),
    # dotted flags inside sh -c: mtp D 1, TP 8; GLM-5 is MLA (kv_lora_rank 512): SG306.
    "07-vllm-truss-glm5-dotted-args-mla": Right(0, _vllm(
        "mtp", 1, tensor_parallel_size=8, target_model="/models/GLM-5-FP8"),
        model={"mla": True, "query_heads": 64}, codes=frozenset({"SG306"})),
    # The only --speculative-config is commented out: nothing speculates, as claimed.
    "08-vllm-production-stack-commented-out": Right(0),
    # --speculative-algo (argparse abbreviation) NEXTN = EAGLE on the model's MTP layer;
    # steps 3, topk 1, draft tokens 4: D 3, N 4; --tp-size 2; --context-length 262144.
    "09-sglang-truss-qwen3next-nextn-sh-c": Right(0, {
        "engine": "sglang", "mechanism": "mtp", "draft_length": 3, "verify_tokens": 4,
        "tensor_parallel_size": 2, "target_model": "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8",
        "max_model_len": 262144, "version_source": "image",
        # docs/engines.md#pre-releases: 0.5.3rc1 comes before 0.5.3 (PEP 440), so no one
        # release is pinned; it is read between the release before (0.5.2 in SGLang's
        # releases list) and 0.5.3; the tag stays in version_raw
        "version": None, "version_raw": "v0.5.3rc1-cu126",
        "implied_versions": {"from": "0.5.2", "before": "0.5.3.post1",
                             "newest_confirmed": "0.5.3"}}),
    # EAGLE without a draft on GLM-4.5: SGLang drafts with the model's MTP layer.
    "10-sglang-truss-glm45-eagle-means-mtp": Right(0, {
        "engine": "sglang", "mechanism": "mtp", "draft_length": 3, "verify_tokens": 4,
        "tensor_parallel_size": 4, "target_model": "zai-org/GLM-4.5-FP8",
        "version_source": "image"}),
    "11-sglang-cookbook-qwen3next-eagle-no-draft": Right(0, {
        "engine": "sglang", "mechanism": "mtp", "draft_length": 3, "verify_tokens": 4,
        "pointer": "/defaults/configurations/1/extra_args"}),
    # A tree: steps 2, topk 4, 4 draft tokens: D 2, N_verify 4; --tp 16.
    "12-sglang-issue4286-nextn-tree-abbrev": Right(0, {
        "engine": "sglang", "mechanism": "mtp", "draft_length": 2, "verify_tokens": 4,
        # --speculative-draft is ambiguous to SGLang 0.5.2 on (SG310 warn, version unknown).
        # Contract change (issue 27): 0.5.1.post3 and older (recorded parsers) have one
        # --speculative-draft-* flag, so where the command starts it names the draft path
        "tensor_parallel_size": 16, "draft_model": "$MTP_MODEL_PATH"}),
    # topk 1 with 2 draft tokens at 0.4.3.post2: that release verifies the 2 written.
    # Contract change (new-user trial M5): was "num_steps + 1 = 3 tokens, SG307 warn", but
    # the rewrite is first in the 0.4.5.post3 wheel (server_args.py:352-359); the
    # 0.4.3.post2 wheel's server_args.py has no such adjustment
    "13-sglang-pr3582-nextn-draft-tokens-raised": Right(0, {
        "engine": "sglang", "mechanism": "mtp", "draft_length": 2, "verify_tokens": 2,
        # Contract change (issue 27): at 0.4.3.post2 --speculative-draft is the one
        # --speculative-draft-* flag (recorded parsers to 0.5.1.post3): the draft path
        "tensor_parallel_size": 8, "draft_model": "/mntfn/open_model/deepseek/deepseek-nextn",
        "version": "0.4.3.post2", "version_source": "claims"}),
    # MTP max_draft_len 3, TP 8; DeepSeek-V4-Pro: 128 heads, 1 KV head, no kv_lora_rank.
    "14-trtllm-curated-deepseek-v4-pro-latency": Right(0, {
        "engine": "trtllm", "mechanism": "mtp", "draft_length": 3, "verify_tokens": 4,
        "tensor_parallel_size": 8, "max_model_len": 9256},
        model={"query_heads": 128, "kv_heads": 1, "query_heads_per_kv": 128, "mla": False}),
    # TP 32 with enable_attention_dp; a load_balancer path that is a string is no error.
    "15-trtllm-curated-qwen38-ht-mtp3-adp": Right(0, {
        "engine": "trtllm", "mechanism": "mtp", "draft_length": 3, "verify_tokens": 4,
        "tensor_parallel_size": 32, "attention_data_parallel": True, "max_model_len": 9472}),
    # Disaggregated: the generation servers decode; their speculative_config (the anchor
    # the context servers share) is one configuration: decoding_type Eagle (Eagle3's
    # alias), max_draft_len 3, TP 4, max_seq_len 10240 (the generation servers').
    "16-trtllm-disagg-gptoss-eagle-anchor": Right(0, {
        "engine": "trtllm", "mechanism": "eagle3", "draft_length": 3, "verify_tokens": 4,
        "tensor_parallel_size": 4, "draft_model": "gpt_oss/gpt-oss-120b-Eagle3",
        "target_model": "gpt_oss/gpt-oss-120b", "max_model_len": 10240}),
    # Top-level MTP with num_nextn_predict_layers 2 (D 2), inherited by the generation
    # servers, which run at TP 1 (extract_disagg_cfg).
    "17-trtllm-disagg-dsv3lite-two-mtp-nextn-key": Right(0, {
        "engine": "trtllm", "mechanism": "mtp", "draft_length": 2, "verify_tokens": 3,
        "tensor_parallel_size": 1, "target_model": "DeepSeek-V3-Lite/fp8"}),
    # patch_kwargs laid over trt_llm.runtime: MTP with 3 layers (D 3), TP 8 and
    # max_seq_len 98304 from the runtime.
    "18-trtllm-truss-bisv2-deepseek-v3-patch-kwargs": Right(0, {
        "engine": "trtllm", "mechanism": "mtp", "draft_length": 3, "verify_tokens": 4,
        "tensor_parallel_size": 8, "max_model_len": 98304, "pointer": "/trt_llm/runtime"}),
    # $SPEC_FLAGS is set only inside `if [ -n "$DRAFT_MODEL" ]` (bash: without it in the
    # environment, llama-server runs with no draft; with it, --draft-max 16) and is
    # expanded unquoted in the exec line: what the engine runs is unsettled (issue 25:
    # control flow is not read as if it always ran). The script itself decides the
    # flags in a branch, so a pull request could hide D there: SG314 fails at line 14,
    # and the deployment is still judged on its claims file (issue 24, degrade, never
    # stop; docs/engines.md#unsettled-values).
    # Contract change: this folder read D 16 (a maximum) with SG310 before; then exit 2.
    "19-llamacpp-atlas-entrypoint-shell-var-removed-flags": Right(
        1, codes=frozenset({"SG314"}), severity={"SG314": "fail"}
    ),
    # --spec-type draft-eagle3, no n-max: the default 3 of current builds
    # (common/common.h common_params_speculative_draft: n_max = 3, p_min = 0.0).
    "20-llamacpp-docs-eagle3-default-n-max": Right(0, {
        "engine": "llamacpp", "mechanism": "eagle3", "draft_length": 3, "verify_tokens": 4,
        "draft_model": "Qwen3-4B-eagle3.gguf", "target_model": "Qwen3-4B.gguf"}),
    "21-llamacpp-docs-dflash-n-max-15": Right(0, {
        "engine": "llamacpp", "mechanism": "dflash", "draft_length": 15, "verify_tokens": 16,
        "draft_model": "Qwen3-4B-DFlash.gguf", "target_model": "Qwen3-4B.gguf"}),
    # ngram-mod drafts up to --spec-ngram-mod-n-max 64 tokens: D 64, a maximum.
    "22-llamacpp-docs-ngram-mod": Right(0, {
        "engine": "llamacpp", "mechanism": "ngram", "draft_length": 64, "verify_tokens": 65,
        "draft_length_is_max": True}),
    # Full-attention heads 64 over 4 KV heads: G 16 (the swa_* heads are the sliding
    # layers').
    "23-hf-mimo-v2-flash-swa-heads": Right(0, model={
        "query_heads": 64, "kv_heads": 4, "query_heads_per_kv": 16, "vocab_size": 152576,
        "max_position_embeddings": 262144}),
    "24-hf-minimax-m25-num-mtp-modules": Right(0, model={
        "query_heads": 48, "kv_heads": 8, "query_heads_per_kv": 6, "vocab_size": 200064}),
    # text_config: 24 heads over 4 KV heads, G 6.
    # num_nextn_predict_layers: 0 read as no MTP layer (docs/engines.md#what-users-publish)
    "25-hf-kimi-k2-mla-no-mtp": Right(0, model={
        "mla": True, "query_heads": 64, "query_heads_per_kv": 64}),
    "26-hf-qwen35-27b-text-config": Right(0, model={
        "query_heads": 24, "kv_heads": 4, "query_heads_per_kv": 6, "vocab_size": 248320,
        "max_position_embeddings": 262144}),
    # AL = 1 + 48266/20468 = 3.3581; D = 204680/20468 = 10.
    "27-metrics-vllm-offline-spec-decode-pr26498": Right(0, acceptance={
        "accept_length": 3.3581, "formula": "1 + 48266/20468", "draft_length": 10}),
    # 975 drafted at k 15: 65 drafts; AL = 1 + 89/65 = 2.3692.
    "28-metrics-vllm-log-aeon7-dflash-k15": Right(0, acceptance={
        "accept_length": 2.3692, "formula": "1 + 89/65", "draft_length": 15}),
    # 2160/15 = 144 and 3945/15 = 263 drafts: AL = 1 + (49 + 57)/407 = 1.2604.
    "29-metrics-vllm-log-speculators613-quirky-spacing": Right(0, acceptance={
        "accept_length": 1.2604, "formula": "1 + 106/407", "draft_length": 15}),
    "30-metrics-sglang-log-issue4759": Right(0, acceptance={"accept_length": 2.54}),
    # llama-speculative prints no step count: steps ≈ n_predict − n_accept = 43, AL ≈
    # 266/43 = 6.186, an estimate.
    "31-metrics-llamacpp-speculative-stats-pr3006": Right(0, acceptance={
        "accept_length": 6.186, "formula": "266/(266 - 223)", "estimate": True}),
}

#: What rests on another branch's work (engines-a), each with the right value.
@cache
def report(folder: str) -> tuple[int, str]:
    """(exit code, JSON report) of ``specgate check`` on the folder's claims file,
    run from the data folder."""
    import contextlib
    import io
    import os

    out = io.StringIO()
    here = os.getcwd()
    os.chdir(DATA.parent)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", "--format", "json", f"{DATA.name}/{folder}/claims.specgate.yaml"])
    finally:
        os.chdir(here)
    return code, out.getvalue()


def mismatches(folder: str, right: Right, code: int, text: str) -> list[str]:
    """What differs between the reading in ``text`` (a JSON report) and ``right``."""
    rep = json.loads(text)
    problems = [] if code == right.exit else [f"exit {code}, not {right.exit}"]
    files = rep["files"]
    errors = [f["error"] for f in files if f.get("error")]
    if errors:
        if right.error and right.error in errors[0]:
            return problems
        return [*problems, f"error: {errors[0]}"]
    deployment = files[0]["deployments"][0]
    inputs = deployment.get("inputs") or {}
    for part, expected in (("engine", right.engine), ("model", right.model),
                           ("acceptance", right.acceptance)):
        got = inputs.get(part) or {}
        for key, value in expected.items():
            if got.get(key) != value:
                problems.append(f"{part}.{key} = {got.get(key)!r}, not {value!r}")
    findings = {x["code"]: x for x in deployment["findings"]}
    problems += [f"no {c}" for c in sorted(right.codes - set(findings))]
    problems += [f"{c}: {findings[c]['message']}" for c in sorted(right.absent & set(findings))]
    for c, level in right.severity.items():
        if c in findings and findings[c]["severity"] != level:
            problems.append(f"{c} is {findings[c]['severity']}, not {level}")
    return problems


def test_every_folder_has_a_reading() -> None:
    folders = {p.name for p in DATA.iterdir() if p.is_dir()}
    assert len(folders) == 31
    assert folders == set(RIGHT)
    for name in folders:
        assert (DATA / name / "SOURCE.md").is_file()
        assert (DATA / name / "claims.specgate.yaml").is_file()


@pytest.mark.parametrize("folder", sorted(RIGHT))
def test_published_file_reads_as_its_engine_does(folder: str) -> None:
    code, text = report(folder)
    assert mismatches(folder, RIGHT[folder], code, text) == []
