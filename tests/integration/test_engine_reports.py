"""The report cases of issue 8's "Engines and formats" table, end to end (the inputs of
public reports 06, 07, 10, 11, 33 and 35 of that table, personal details replaced), and
other inputs of the same kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main


def check(
    tmp_path: Path,
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, dict[str, Any]]:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--format", "json", "c.specgate.yaml"])
    return code, json.loads(capsys.readouterr().out)


def deployment(report: dict[str, Any]) -> dict[str, Any]:
    (file,) = report["files"]
    assert file["error"] is None, file["error"]
    (dep,) = file["deployments"]
    return dep


def codes(dep: dict[str, Any]) -> list[str]:
    return sorted(f["code"] for f in dep["findings"] if f["code"] != "SG204")


TARGET = (
    '{"num_attention_heads": 64, "num_key_value_heads": 64, "max_position_embeddings": 32768, '
    '"vocab_size": 152064, "model_type": "qwen2"}'
)
DRAFT = (
    '{"num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 32768, '
    '"vocab_size": %d, "model_type": "qwen2"}'
)
LLAMA_CLAIMS = """version: 1
deployments:
  - name: qwen-llamacpp
    model: {hf_config: models/target.json}
    speculation:
      enabled: true
      engine: llamacpp
      engine_config: serving/cmd.txt
      engine_version: b4000
      draft_hf_config: models/draft.json
      draft_depth_ratio: 0
    evidence: {accept_length: 2, cache_coherence_eval: true}
"""


@pytest.mark.parametrize(
    ("draft_vocab", "severity"), [(151936, "fail"), (152000, "warn")]
)
def test_llamacpp_refuses_a_vocab_difference_over_100(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    draft_vocab: int,
    severity: str,
) -> None:
    # report-06 (QwenLM/Qwen3#326): at b4000 (pinned) the llama-speculative example's
    # SPEC_VOCAB_MAX_SIZE_DIFFERENCE is 100 (examples/speculative/speculative.cpp up to
    # 74d73dc8 = b4094): 152064 vs 151936 differ by 128 > 100 ⇒ it exits (SG302 fail, one
    # finding; issue 16 moved the engine's verdict from SG307 to SG302); a difference of
    # 64 loads but still differs (SG302 warn).
    code, report = check(
        tmp_path,
        {
            "c.specgate.yaml": LLAMA_CLAIMS,
            "models/target.json": TARGET,
            "models/draft.json": DRAFT % draft_vocab,
            "serving/cmd.txt": "./speculative -m big.gguf -md small.gguf -ngl 99 --draft 8\n",
        },
        monkeypatch,
        capsys,
    )
    dep = deployment(report)
    assert [c for c in codes(dep) if c != "SG308"] == ["SG302"]
    (finding,) = [f for f in dep["findings"] if f["code"] == "SG302"]
    assert finding["severity"] == severity
    assert code == (1 if severity == "fail" else 0)


def test_pooled_against_per_request_mean_is_one_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # report-10 (vLLM #42508): the log pools 1 + 1652/1000 = 2.652; the claims file
    # recorded a benchmark's mean of per-request ALs, 2.32.
    line = (
        "(APIServer pid=1) INFO 05-13 10:00:00 [metrics.py:120] SpecDecoding metrics: Mean "
        "acceptance length: 2.65, Accepted throughput: 160.00 tokens/s, Drafted throughput: "
        "290.00 tokens/s, Accepted: 1652 tokens, Drafted: 3000 tokens, Per-position acceptance "
        "rate: 0.750, 0.550, 0.352, Avg Draft acceptance rate: 55.1%\n"
    )
    claims = (
        "version: 1\ndeployments:\n  - name: q\n    model: {name: q, query_heads: 64, "
        "kv_heads: 8}\n    speculation:\n      enabled: true\n      engine_config: serve.sh\n"
        "      draft_depth_ratio: 0.05\n    evidence:\n      accept_length: 2.32\n"
        "      cache_coherence_eval: true\n      metrics: {format: vllm-log, path: vllm.log}\n"
    )
    serve = (
        'vllm serve /models/Qwen3-32B --speculative-config \'{"method": "eagle3", '
        '"model": "/models/Eagle3-Qwen3-32B", "num_speculative_tokens": 3}\'\n'
    )
    _, report = check(
        tmp_path,
        {"c.specgate.yaml": claims, "serve.sh": serve, "vllm.log": line},
        monkeypatch,
        capsys,
    )
    dep = deployment(report)
    assert codes(dep) == ["SG301"]
    (finding,) = [f for f in dep["findings"] if f["code"] == "SG301"]
    assert "per-request" in finding["details"]  # Contract change: the why is in details
    assert dep["inputs"]["acceptance"]["accept_length"] == pytest.approx(2.652)


def test_rate_gauge_alone_is_sg316_that_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # report-11's gauge-only scrape (vLLM #11188)
    scrape = (
        "# HELP vllm:spec_decode_draft_acceptance_rate Speculative token acceptance rate.\n"
        "# TYPE vllm:spec_decode_draft_acceptance_rate gauge\n"
        'vllm:spec_decode_draft_acceptance_rate{model_name="llama-70b"} 0.31\n'
    )
    claims = (
        "version: 1\ndeployments:\n  - name: l\n    model: {name: l, query_heads: 64, "
        "kv_heads: 8}\n    speculation: {enabled: true, mechanism: draft_model, "
        "draft_length: 5}\n    evidence:\n      metrics: {format: vllm-prometheus, "
        "path: m.prom}\n"
    )
    code, report = check(
        tmp_path, {"c.specgate.yaml": claims, "m.prom": scrape}, monkeypatch, capsys
    )
    # Contract change (issue 24): a scrape holding no counters is a form specgate does not
    # read, SG316 (warn) at the scrape, not exit 2; with no AL left, SG101 fails
    assert code == 1
    assert report["files"][0]["error"] is None
    findings = report["files"][0]["deployments"][0]["findings"]
    (sg316,) = [f for f in findings if f["code"] == "SG316"]
    # at the gauge's sample, line 3 of the scrape
    assert (sg316["file"], sg316["line"], sg316["column"], sg316["severity"]) == (
        "m.prom", 3, 1, "warn",
    )
    assert "rate gauge, which cannot give AL" in sg316["message"] + sg316["details"]
    assert [f["severity"] for f in findings if f["code"] == "SG101"] == ["fail"]


EAGLE3_V0 = (
    "vllm serve Qwen/Qwen2.5-0.5B \\\n--speculative-model BalajiAI/qwen2.5-0.5b.eagle3 "
    "\\\n--num-speculative-tokens 4 \\\n--dtype bfloat16\n"
)
DRAFT_V0 = (
    "vllm serve Qwen/Qwen2.5-7B --speculative-model Qwen/Qwen2.5-0.5B "
    "--num-speculative-tokens 4\n"
)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # report-35: V0 flags with an EAGLE-3 head: no vLLM release runs it (line 2); with
        # the version unknown the newest vLLM also lacks --num-speculative-tokens (line 3)
        ((EAGLE3_V0, None), [("serve.txt", 2), ("serve.txt", 3)]),
        ((EAGLE3_V0, "0.6.3"), [("serve.txt", 2)]),
        # the same flags with a plain draft model: unknown version ⇒ the newest vLLM,
        # which refuses both (F12); pinned to a V0 release they are valid
        ((DRAFT_V0, None), [("serve.txt", 1), ("serve.txt", 1)]),
        ((DRAFT_V0, "0.6.3"), []),
    ],
)
def test_vllm_v0_flags(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: tuple[str, str | None],
    expected: list[tuple[str, int]],
) -> None:
    serve, version = case
    pinned = f"      engine_version: '{version}'\n" if version else ""
    claims = (
        "version: 1\ndeployments:\n  - name: q\n    model: {name: q, parameters_b: 0.5}\n"
        "    speculation:\n      enabled: true\n      engine: vllm\n"
        f"      engine_config: serve.txt\n{pinned}"
        # speculation on (off over a config that speculates is SG301's), with evidence
        "      draft_depth_ratio: 0\n"
        "    evidence: {accept_length: 2, cache_coherence_eval: true}\n"
    )
    _, report = check(
        tmp_path, {"c.specgate.yaml": claims, "serve.txt": serve}, monkeypatch, capsys
    )
    dep = deployment(report)
    assert codes(dep) == ["SG310"] * len(expected)
    found = sorted((f["file"], f["line"]) for f in dep["findings"] if f["code"] == "SG310")
    assert found == expected
