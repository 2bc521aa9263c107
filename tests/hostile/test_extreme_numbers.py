"""Numbers at and past a float's range in every numeric field of a claims file, YAML
and JSON (hostile review r4, defect 5).

``evidence.measured_speedup: 1e400`` (and ``1e309``) was exit 3 (an OverflowError in
``core.numbers.half_unit``'s ``10.0 ** n``: the unit of the last digit of a number
written with a large exponent). The kind: a size or exponent taken from text reaching
float arithmetic. Each spelling below, in each field, must be a finding or an input
error at its line; the claim of 100x is past any theory (1 + D = 5 at D = 4 over
β ≥ 1), so no field's value may let the run exit 0 — except ``claims.speedup`` itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.core.numbers import half_unit

from .conftest import InProcess

#: Past the largest float (1.7976931348623157e308), the largest itself, below the
#: smallest subnormal (4.9e-324, which 4e-324 rounds to) and that subnormal.
EXTREMES = ["1e400", "1e309", "-1e400", "1e-400", "4e-324", "1.7976931348623157e308"]

FIELDS = [
    "model.active_parameters_b",
    "model.experts",
    "model.experts_per_token",
    "model.head_dim",
    "model.hidden_size",
    "model.kv_bytes_per_token",
    "model.kv_heads",
    "model.layers",
    "model.parameters_b",
    "model.query_heads",
    "model.query_heads_per_kv",
    "speculation.draft_depth_ratio",
    "speculation.draft_length",
    "speculation.verify_tokens",
    "workload.concurrency",
    "workload.context_length",
    "workload.prefill_tokens_per_step",
    "workload.temperature",
    "hardware.allreduce_gbps",
    "hardware.allreduce_latency_us",
    "hardware.kv_cache_bytes",
    "hardware.memory_bandwidth_tbps",
    "hardware.peak_tflops",
    "hardware.tensor_parallel",
    "hardware.weight_bytes",
    "evidence.accept_length",
    "evidence.measured_speedup",
    "evidence.measured_speedup_se",
    "evidence.verify_cost_ratio",
    "evidence.provenance.steps",
    "evidence.provenance.concurrency",
    "evidence.provenance.temperature",
    "evidence.provenance.max_model_len",
    "evidence.throughput.baseline_tokens_per_s",
    "evidence.throughput.speculative_tokens_per_s",
    "policy.max_accept_length_drop",
    "policy.max_evidence_age_days",
    "policy.max_speedup_drop",
    "policy.min_accept_length",
    "policy.min_gain",
    "policy.retune_gain",
    "claims.speedup",
]


def _claims(field: str, number: str) -> str:
    deployment: dict[str, dict[str, object] | str] = {
        "name": "d1",
        "model": {"name": "m", "query_heads": 32, "kv_heads": 8, "parameters_b": 8},
        "speculation": {
            "enabled": True,
            "mechanism": "eagle3",
            "draft_length": 4,
            "draft_depth_ratio": 0.05,
        },
        "workload": {"name": "chat", "concurrency": 8, "context_length": 4000},
        "hardware": {"peak_tflops": 989, "memory_bandwidth_tbps": 3.35},
        "evidence": {"accept_length": 2.9, "cache_coherence_eval": True, "measured_speedup": 2},
        "claims": {"speedup": 100},
    }
    node: dict[str, object] = deployment  # type: ignore[assignment]
    *parents, key = field.split(".")
    for part in parents:
        node = node.setdefault(part, {})  # type: ignore[assignment]
    if field.startswith("evidence.throughput."):
        node.update(baseline_tokens_per_s=100, speculative_tokens_per_s=200)
    node[key] = "@NUMBER@"
    text = json.dumps({"version": 1, "deployments": [deployment]}, indent=1)
    return text.replace('"@NUMBER@"', number)


@pytest.mark.parametrize("suffix", ["yaml", "json"])
@pytest.mark.parametrize("number", EXTREMES)
@pytest.mark.parametrize("field", FIELDS)
def test_extreme_numbers_are_findings_or_input_errors(
    sg: InProcess, repo: Path, field: str, number: str, suffix: str
) -> None:
    name = f"c.specgate.{suffix}"
    (repo / name).write_text(_claims(field, number), "utf-8")
    result = sg(["check", name], repo)
    assert "internal error" not in result.err, result.err
    assert result.code in (1, 2) or field == "claims.speedup", (result.code, result.out)
    if result.code == 2:  # an input error names the claims file and its line
        assert f"{name}:" in result.out + result.err


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        # by hand: half a unit of the last digit written
        ("1.7976931348623157e308", 0.5e292),  # 16 decimals below e308
        ("1e308", 0.5e308),
        ("1e-400", None),  # below the smallest float: no unit a float holds
        ("4e-324", None),  # its unit 1e-324 is below the smallest subnormal, 4.9e-324
        ("5e-320", 0.5e-320),
        ("1e309", None),
        ("1e400", None),
    ],
)
def test_half_unit_at_the_ends_of_the_float_range(text: str, unit: float | None) -> None:
    assert half_unit(text) == unit
