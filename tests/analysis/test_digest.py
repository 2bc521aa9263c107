"""The config digest (docs/change-gate.md#config-digest): ten documented fields, canonical JSON,
SHA-256. The worked example of docs/change-gate.md#config-digest is the anchor; the rest shows what
does and does not move the digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from specgate.analysis.digest import FIELDS, config_digest, digest_of, fields
from specgate.check.run import CheckOptions, check_file
from specgate.cli.main import main
from specgate.model.deployment import Deployment, ModelBlock, SpeculationBlock

CLAIMS = """\
version: 1
deployments:
  - name: chat-8b-eagle3
    model:
      name: meta-llama/Llama-3.1-8B-Instruct
    speculation:
      enabled: true
      engine: vllm
      engine_config: serving/vllm.yaml
    evidence:
      accept_length: 2.6
"""
SERVING = """\
model: meta-llama/Llama-3.1-8B-Instruct
speculative-config:
  method: eagle3
  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
  num_speculative_tokens: 3
"""
WORKED = "sha256:24babb0907610e78"  # docs/change-gate.md#config-digest


def _digest(
    tmp_path: Path,
    claims: str = CLAIMS,
    serving: str = SERVING,
    extra: dict[str, str] | None = None,
) -> str:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serving").mkdir(exist_ok=True)
    (tmp_path / "specgate.yaml").write_text(claims, encoding="utf-8")
    (tmp_path / "serving" / "vllm.yaml").write_text(serving, encoding="utf-8")
    for name, text in (extra or {}).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    report = check_file(tmp_path / "specgate.yaml", "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    return str(report.deployments[0].config_digest)


def test_worked_example_by_hand() -> None:
    # The ten fields of docs/change-gate.md#config-digest's example, serialised as
    # docs/change-gate.md#config-digest says, hashed here directly.
    values = {
        "mechanism": "eagle3",
        "draft_length": 3,
        "verify_tokens": 4,
        "draft_passes": "per_token",
        "draft_model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "engine": "vllm",
        "tensor_parallel_size": None,
        "lossy_acceptance": False,
        "draft_length_is_max": False,
        "target_model": "meta-llama/Llama-3.1-8B-Instruct",
    }
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16] == WORKED
    assert digest_of(values) == WORKED
    assert tuple(values) == FIELDS


def test_worked_example_from_a_vllm_serving_config(tmp_path: Path) -> None:
    assert _digest(tmp_path) == WORKED


def test_worked_example_from_the_claims_file_alone_differs_only_by_draft_model() -> None:
    # Without an engine config the claims file has no draft model: null, not guessed.
    deployment = Deployment(
        position=0,
        name="x",
        model=ModelBlock(name="meta-llama/Llama-3.1-8B-Instruct"),
        speculation=SpeculationBlock(
            present=True, enabled=True, mechanism="eagle3", draft_length=3, engine="vllm"
        ),
    )
    assert fields(deployment)["draft_model"] is None
    assert config_digest(deployment) != WORKED


@pytest.mark.parametrize(
    ("claims", "serving"),
    [
        # comments and blank lines
        (
            CLAIMS.replace("    model:\n", "    # the target\n    model:\n"),
            "# served by the chat team\n" + SERVING.replace("3\n", "3   # tuned\n"),
        ),
        # key order, in both files
        (
            CLAIMS.replace(
                "      engine: vllm\n      engine_config: serving/vllm.yaml\n",
                "      engine_config: serving/vllm.yaml\n      engine: vllm\n",
            ),
            "speculative-config:\n  num_speculative_tokens: 3\n  method: eagle3\n"
            "  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
            "model: meta-llama/Llama-3.1-8B-Instruct\n",
        ),
        # unrelated engine settings and unrelated claims (AL, workload, claim)
        (
            CLAIMS.replace("2.6", "2.9") + "    claims:\n      speedup: 2\n",
            SERVING + "gpu-memory-utilization: 0.9\nmax-num-seqs: 64\nport: 8001\n",
        ),
    ],
    ids=["comments", "key-order", "unrelated-settings"],
)
def test_digest_ignores(tmp_path: Path, claims: str, serving: str) -> None:
    assert _digest(tmp_path, claims, serving) == WORKED


def test_adding_a_model_config_does_not_change_it(tmp_path: Path) -> None:
    claims = CLAIMS.replace(
        "      name: meta-llama/Llama-3.1-8B-Instruct\n",
        "      name: meta-llama/Llama-3.1-8B-Instruct\n      hf_config: models/config.json\n",
    )
    config = json.dumps({"num_attention_heads": 32, "num_key_value_heads": 8})
    assert _digest(tmp_path, claims, SERVING, {"models/config.json": config}) == WORKED


@pytest.mark.parametrize(
    ("field", "serving"),
    [
        ("mechanism", SERVING.replace("eagle3", "eagle")),
        ("draft_length", SERVING.replace("tokens: 3", "tokens: 4")),
        ("draft_model", SERVING.replace("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "other/head")),
        ("tensor_parallel_size", SERVING + "tensor-parallel-size: 2\n"),
        ("lossy_acceptance", SERVING + "  rejection_sample_method: synthetic\n"),
        ("target_model", SERVING.replace("model: meta-llama/Llama-3.1-8B", "model: x/8B")),
    ],
)
def test_each_engine_field_changes_it(tmp_path: Path, field: str, serving: str) -> None:
    assert _digest(tmp_path, CLAIMS, serving) != WORKED


def test_draft_length_is_max_changes_it() -> None:
    base = Deployment(
        position=0, name="x", speculation=SpeculationBlock(mechanism="ngram", draft_length=5)
    )
    maxed = base._replace(speculation=base.speculation._replace(draft_length_is_max=True))
    assert fields(maxed)["draft_length_is_max"] is True
    assert config_digest(base) != config_digest(maxed)


def test_verify_tokens_and_draft_passes_defaults_and_changes() -> None:
    chain = Deployment(
        position=0, name="x", speculation=SpeculationBlock(mechanism="eagle", draft_length=4)
    )
    assert fields(chain)["verify_tokens"] == 5  # 1 + D for a chain
    assert fields(chain)["draft_passes"] == "per_token"
    tree = chain._replace(speculation=chain.speculation._replace(verify_tokens=10))
    assert fields(tree)["verify_tokens"] == 10
    assert config_digest(tree) != config_digest(chain)
    one_pass = chain._replace(speculation=chain.speculation._replace(mechanism="dflash"))
    assert fields(one_pass)["draft_passes"] == "single"
    pard = chain._replace(speculation=chain.speculation._replace(mechanism="pard"))
    assert fields(pard)["draft_passes"] == "single"
    unknown = chain._replace(speculation=chain.speculation._replace(mechanism=None))
    assert fields(unknown)["draft_passes"] == "per_token"
    assert fields(unknown)["mechanism"] is None  # unknown is null, never omitted


def test_engine_field_from_claims_without_engine_config() -> None:
    vllm = Deployment(position=0, name="x", speculation=SpeculationBlock(engine="vllm"))
    sglang = Deployment(position=0, name="x", speculation=SpeculationBlock(engine="sglang"))
    assert config_digest(vllm) != config_digest(sglang)
    assert set(fields(vllm)) == set(FIELDS)


def test_specgate_digest_prints_one_line_per_deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _digest(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["digest", "specgate.yaml"]) == 0
    assert capsys.readouterr().out == f"specgate.yaml:chat-8b-eagle3 {WORKED}\n"


def test_json_report_carries_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _digest(tmp_path)
    monkeypatch.chdir(tmp_path)
    main(["check", "specgate.yaml", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["files"][0]["deployments"][0]["inputs"]["config_digest"] == WORKED
