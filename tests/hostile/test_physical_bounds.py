"""Huge, subnormal and integer-valued-float numbers never steer a pass (hostile review
defects 1 and 4).

A concurrency of 1e300 or a bandwidth of 1e-320 made β NaN, every comparison with NaN
is false, and a 100x claim at AL 2.9 passed ``ready``; ``concurrency: 1e308`` (an
integer-valued float) overflowed (exit 3). Both ends are closed: the schema bounds
each number in its unit (SG001 at its line, exit 1; doctor refuses the flag, exit 2),
and a metric that is not finite is an SG001 finding before any rule runs.

The no-pass property: with β ≥ 1 and ρ ≥ 0, S = AL / (β + ρ·D) ≤ AL, so a claim above
AL can never be right, whatever else the file holds (docs/reports.md#status): its status is
never ``ready``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specgate.analysis import derived
from specgate.check.run import CheckOptions, Locator, check_file, evaluate
from specgate.core.limits import MAX_CONCURRENCY, MAX_PREFILL_TOKENS, PHYSICAL_BOUNDS
from specgate.model.build import build_deployment

from .conftest import InProcess

SCHEMA = Path(__file__).resolve().parents[2] / "src/specgate/data/claims-v1.schema.json"

CLAIMS = """\
version: 1
deployments:
  - name: d1
    model: {{name: x, parameters_b: 70, query_heads: 64, kv_heads: 8}}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 4, draft_depth_ratio: 0.05}}
    workload: {{name: chat, context_length: 4000{workload}}}
    hardware: {{gpu: h100-sxm{hardware}}}
    evidence: {{accept_length: 2.9, cache_coherence_eval: true}}
    claims: {{speedup: 100}}
"""

#: (block, key, value): the review's reproducers and the fuzzer's finds, each a kind.
HOSTILE = [
    ("workload", "concurrency", "1e300"),
    ("workload", "concurrency", "1e308"),
    ("workload", "concurrency", "1.7976931348623157e308"),
    ("workload", "concurrency", "1048577"),
    ("workload", "prefill_tokens_per_step", "1e300"),
    ("workload", "prefill_tokens_per_step", "1e308"),
    ("workload", "context_length", "1e300"),
    ("hardware", "peak_tflops", "1e-320"),
    ("hardware", "memory_bandwidth_tbps", "1e-320"),
    ("hardware", "memory_bandwidth_tbps", "4e-324"),
    ("hardware", "allreduce_gbps", "1e-320"),
    ("hardware", "weight_bytes", "1e300"),
    ("hardware", "weight_bytes", "1e308"),
    ("hardware", "weight_bytes", "9"),
    ("hardware", "kv_cache_bytes", "1e300"),
    ("hardware", "kv_cache_bytes", "1e-320"),
    ("hardware", "attention_tile_rows", "1e308"),
    ("hardware", "allreduce_latency_us", "1e300"),
]


def _claims(block: str, key: str, value: str) -> str:
    extra = f", {key}: {value}"
    hardware = extra + (", tensor_parallel: 8" if key.startswith("allreduce") else "")
    return CLAIMS.format(
        workload=extra if block == "workload" else "",
        hardware=hardware if block == "hardware" else "",
    )


@pytest.mark.parametrize(("block", "key", "value"), HOSTILE)
def test_an_out_of_bounds_number_is_sg001_at_its_line(
    sg: InProcess, repo: Path, block: str, key: str, value: str
) -> None:
    (repo / "c.specgate.yaml").write_text(_claims(block, key, value), "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code == 1, result.err
    deployment = result.json()["files"][0]["deployments"][0]
    assert deployment["status"] == "fail"
    sg001 = [f for f in deployment["findings"] if f["code"] == "SG001"]
    assert sg001 and key in sg001[0]["message"], deployment["findings"]
    assert sg001[0]["line"] == (6 if block == "workload" else 7)
    # the refused number never priced a metric: every metric shown is finite
    assert "nan" not in json.dumps(deployment["metrics"]).lower()


@pytest.mark.parametrize(
    "key", ["parameters_b", "active_parameters_b", "kv_bytes_per_token"]
)
@pytest.mark.parametrize("value", ["1e300", "1e308", "1e-320"])
def test_model_sizes_are_bounded(sg: InProcess, repo: Path, key: str, value: str) -> None:
    text = CLAIMS.format(workload="", hardware="").replace(
        "parameters_b: 70", f"parameters_b: 70, {key}: {value}"
        if key != "parameters_b" else f"parameters_b: {value}"
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "c.specgate.yaml"], repo)
    assert result.code == 1 and "SG001" in result.out and key in result.out, result.out


@pytest.mark.parametrize(
    "flag",
    [
        "--concurrency=1e308",
        "--concurrency=1e300",
        f"--concurrency={MAX_CONCURRENCY + 1}",
        f"--prefill-tokens-per-step={MAX_PREFILL_TOKENS + 1}",
        "--prefill-tokens-per-step=1e308",
        "--peak-tflops=1e-320",
        "--memory-bandwidth-tbps=4e-324",
        "--allreduce-gbps=1e-320",
        "--weight-bytes=1e300",
        "--kv-cache-bytes=9",
        "--parameters-b=1e300",
        "--context-length=1e300",
        "--attention-tile-rows=1e308",
        "--verify-cost-ratio-at=4:1e300",
    ],
)
def test_doctor_refuses_the_flag(sg: InProcess, tmp_path: Path, flag: str) -> None:
    result = sg(
        [
            "doctor", "--speculative-decoding", "--accept-length=2.9", "--draft-length=4",
            "--draft-depth-ratio=0.05", "--claimed-speedup=100", "--gpu=h100-sxm",
            "--parameters-b=70", "--context-length=4000", "--tensor-parallel=8", flag,
        ],
        tmp_path,
    )
    assert result.code == 2, (result.code, result.out, result.err)
    assert flag.split("=", maxsplit=1)[0] in result.err and "\n" not in result.err.strip()


def test_the_schema_holds_the_physical_bounds() -> None:
    """core.limits.PHYSICAL_BOUNDS (what doctor refuses) is what the schema says."""
    schema = json.loads(SCHEMA.read_text("utf-8"))
    found: dict[str, list[tuple[float, float]]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.get("properties", {}).items():
                if key in PHYSICAL_BOUNDS and isinstance(value, dict):
                    found.setdefault(key, []).append((value["minimum"], value["maximum"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    for key, bounds in PHYSICAL_BOUNDS.items():
        assert found.get(key) and all(b == bounds for b in found[key]), (key, found.get(key))
    deployment = schema["$defs"]["deployment"]["properties"]
    assert deployment["workload"]["properties"]["concurrency"]["maximum"] == MAX_CONCURRENCY
    assert (
        deployment["workload"]["properties"]["prefill_tokens_per_step"]["maximum"]
        == MAX_PREFILL_TOKENS
    )


def test_a_non_finite_metric_is_sg001_and_no_rule_judges_it() -> None:
    """Defence in depth: a deployment built without the schema (as a reader's bug or a
    missing bound would leave it) with a bandwidth of 1e-320 prices β as NaN or
    infinity; evaluate reports SG001 and the 100x claim is never ready."""
    raw = {
        "name": "d1",
        "model": {"name": "x", "parameters_b": 70},
        "speculation": {"enabled": True, "mechanism": "eagle3", "draft_length": 4,
                        "draft_depth_ratio": 0.05},
        "workload": {"name": "chat", "context_length": 4000},
        "hardware": {"gpu": "h100-sxm", "memory_bandwidth_tbps": 1e-320,
                     "peak_tflops": 1e-320},
        "evidence": {"accept_length": 2.9, "cache_coherence_eval": True},
        "claims": {"speedup": 100},
    }
    deployment, _ = build_deployment(raw, 0)
    metrics = derived.compute(deployment)
    assert derived.non_finite(metrics), metrics  # the unbounded inputs do give NaN
    report = evaluate(deployment, Locator(None), CheckOptions())
    assert report.status == "fail"
    codes = [f.code for f in report.findings]
    assert codes == ["SG001"], codes  # blocking: no rule compared with NaN
    assert "non-finite" in report.findings[0].message


def test_non_finite_walks_nested_records() -> None:
    deployment, _ = build_deployment(
        {"name": "d", "speculation": {"enabled": True, "draft_length": 4,
                                      "draft_depth_ratio": 0.05},
         "evidence": {"accept_length": 2.9}}, 0,
    )
    metrics = derived.compute(deployment)
    assert derived.non_finite(metrics) == []
    broken = metrics._replace(theoretical_speedup=float("nan"))
    assert [n for n, _ in derived.non_finite(broken)] == ["theoretical_speedup"]


# -- the no-pass property -------------------------------------------------------------

SCALE = max(1, int(os.environ.get("SPECGATE_FUZZ_SCALE", "1")))
#: Numbers of every kind that broke the theory, and ordinary ones.
NUMBERS = st.one_of(
    st.sampled_from([1e300, 1e308, 1.7976931348623157e308, 1e-320, 4e-324, 5e-324, 0,
                     0.0, -0.0, 1, 2, 8, 70, 1e15, 2**53, 2**63, 10**30, 1e-6, 0.5]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=0, max_value=10**40),
)
NUMERIC_KEYS = {
    "workload": ["concurrency", "prefill_tokens_per_step", "context_length", "temperature"],
    "hardware": ["peak_tflops", "memory_bandwidth_tbps", "weight_bytes", "kv_cache_bytes",
                 "allreduce_gbps", "allreduce_latency_us", "attention_tile_rows",
                 "tensor_parallel"],
    "model": ["parameters_b", "active_parameters_b", "kv_bytes_per_token", "layers",
              "head_dim", "hidden_size", "experts", "experts_per_token", "query_heads",
              "kv_heads"],
    "evidence": ["verify_cost_ratio", "measured_speedup", "measured_speedup_se"],
    "policy": ["min_accept_length", "min_gain", "retune_gain"],
}


@st.composite
def over_claiming(draw: st.DrawFn) -> tuple[dict[str, Any], float, float]:
    """A deployment whose claim exceeds its AL, with hostile numbers elsewhere."""
    d = draw(st.integers(min_value=1, max_value=16))
    al = draw(st.floats(min_value=1.0, max_value=1.0 + d))
    claim = al * draw(st.floats(min_value=1.0001, max_value=1e4))
    deployment: dict[str, Any] = {
        "name": "d1",
        "model": {"name": "x"},
        "speculation": {"enabled": True, "mechanism": draw(st.sampled_from(
            ["eagle3", "ngram", "draft_model", "mtp"])), "draft_length": d},
        "workload": {"name": "chat"},
        "hardware": {"gpu": draw(st.sampled_from(["h100-sxm", "a100-80gb", "b200"]))},
        "evidence": {"accept_length": al, "cache_coherence_eval": True},
        "claims": {"speedup": claim},
    }
    if draw(st.booleans()):
        deployment["speculation"]["draft_depth_ratio"] = draw(
            st.one_of(st.floats(min_value=0, max_value=1e3), NUMBERS)
        )
    for block, keys in NUMERIC_KEYS.items():
        for key in draw(st.lists(st.sampled_from(keys), max_size=4, unique=True)):
            deployment.setdefault(block, {})[key] = draw(NUMBERS)
    return {"version": 1, "deployments": [deployment]}, al, claim


@settings(
    max_examples=120 * SCALE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(over_claiming())
def test_a_claim_above_accept_length_is_never_ready(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[dict[str, Any], float, float]
) -> None:
    document, al, claim = case
    folder = tmp_path_factory.mktemp("claims")
    path = folder / "c.specgate.yaml"
    path.write_text(json.dumps(document), "utf-8")  # JSON is YAML 1.2
    report = check_file(path, "c.specgate.yaml", CheckOptions())
    if report.error is not None:  # an input error (exit 2) is not a pass either
        return
    statuses = [d.status for d in report.deployments]
    assert statuses and "ready" not in statuses, (al, claim, document)
