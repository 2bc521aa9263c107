"""Tensor parallelism that does not divide the attention heads is refused by the
engines (SG307); specgate then invents no fractional per-rank G."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from specgate.cli.main import main


def _deployment(tmp_path: Path, tp: int) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    # Qwen2.5-7B: 28 query heads, 4 KV heads → G = 7.
    (tmp_path / "config.json").write_text(
        '{"num_attention_heads": 28, "num_key_value_heads": 4}\n', encoding="utf-8"
    )
    (tmp_path / "serve.yaml").write_text(
        f"model: Qwen/Qwen2.5-7B-Instruct\ntensor-parallel-size: {tp}\n"
        "speculative-config:\n  method: ngram\n  num_speculative_tokens: 3\n"
        "  prompt_lookup_max: 4\n",
        encoding="utf-8",
    )
    claims = tmp_path / "c.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: q\n    model:\n      hf_config: config.json\n"
        "    speculation:\n      enabled: false\n      engine_config: serve.yaml\n",
        encoding="utf-8",
    )
    return claims


def _report(claims: Path, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    main(["check", str(claims), "--format", "json"])
    deployment: dict = json.loads(capsys.readouterr().out)["files"][0]["deployments"][0]  # type: ignore[type-arg]
    return deployment


def test_heads_not_divisible_by_tp_is_sg307_at_the_tp_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deployment = _report(_deployment(tmp_path, 8), capsys)
    (sg307,) = [f for f in deployment["findings"] if f["code"] == "SG307"]
    # "tensor-parallel-size: 8" is line 2; the value starts at column 23.
    assert (sg307["file"].endswith("serve.yaml"), sg307["line"], sg307["column"]) == (True, 2, 23)
    assert "28 attention heads, not divisible by tensor_parallel_size 8" in sg307["message"]
    # No per-rank split is invented: G stays H/KV = 28/4 = 7, D* = floor(128/7) − 1 = 17.
    assert deployment["metrics"]["query_heads_per_kv"] == 7
    assert deployment["metrics"]["attention_optimal_draft_length"] == 17


def test_divisible_tp_above_kv_splits_g_per_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # TP 14 > KV 4 and 28 % 14 == 0: KV heads replicate, per-rank G = 28/14 = 2, D* = 63.
    deployment = _report(_deployment(tmp_path, 14), capsys)
    assert [f["code"] for f in deployment["findings"] if f["code"] == "SG307"] == []
    assert deployment["metrics"]["query_heads_per_kv"] == 2
    assert deployment["metrics"]["attention_optimal_draft_length"] == 63


def test_an_estimated_accept_length_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # llama.cpp timings give only r; AL ≈ predicted_n / (predicted_n − accepted)
    # = 200 / 135 = 1.4815, an estimate (tests/data/real/llama.cpp/measured, PR 12603).
    data = Path(__file__).parent.parent / "data" / "real" / "llama.cpp" / "measured"
    (tmp_path / "t.json").write_bytes(
        (data / "llama.cpp-pr12603-timings-draft-stats.json").read_bytes()
    )
    claims = tmp_path / "c.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: l\n"
        "    speculation: {enabled: false, draft_length: 16, draft_depth_ratio: 0.1}\n"
        "    evidence:\n      metrics: {format: llamacpp-timings, path: t.json}\n",
        encoding="utf-8",
    )
    deployment = _report(claims, capsys)
    (sg102,) = [f for f in deployment["findings"] if f["code"] == "SG102"]
    assert sg102["message"].startswith(
        "AL 1.4815 (an estimate from llamacpp-timings data) is below the floor 2"
    )
