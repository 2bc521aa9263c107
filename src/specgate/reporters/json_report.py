"""The JSON format (docs/reports.md#json-report): a stable machine contract.

:func:`to_json` turns a :class:`~specgate.check.report.RunReport` into the JSON
report's dict (snake_case keys, numbers rounded to 4 decimals).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from specgate import SCHEMA_VERSION, __version__
from specgate.check.report import DeploymentReport, RunReport
from specgate.core.findings import Finding
from specgate.core.numbers import round4
from specgate.reporters.safe_text import json_text

if TYPE_CHECKING:
    from specgate.analysis.derived import Metrics
    from specgate.analysis.precision import Precision
    from specgate.model.referenced import Inputs


def render(run: RunReport) -> str:
    """The JSON report, pretty-printed, UTF-8 characters kept, ending with a newline."""
    return json_text(json.dumps(to_json(run), indent=2, ensure_ascii=False)) + "\n"


def _number(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no infinity (huge D times ρ from a hostile file)
    return round4(value)


def _precision(precision: Precision | None) -> dict[str, Any] | None:
    """b_w, the compute dtype and b_kv the step-time model used, each with where it
    was read (``null``: assumed), docs/theory.md#step-time-inputs."""
    if precision is None:
        return None
    return {
        "weight_bytes": _number(precision.weight_bytes),
        "weight_bytes_source": precision.weight_source,
        "compute_dtype": precision.compute_dtype,
        "compute_dtype_source": precision.compute_source,
        "kv_cache_bytes": _number(precision.kv_cache_bytes),
        "kv_cache_bytes_source": precision.kv_source,
        "note": precision.note,
    }


def metrics_json(metrics: Metrics) -> dict[str, Any]:
    """The ``metrics`` object of a deployment report (docs/reports.md#json-report)."""
    increase = metrics.draft_increase
    optimal = metrics.optimal_draft_length
    cost = metrics.verify_cost
    return {
        "accept_length": _number(metrics.accept_length),
        "draft_length": metrics.draft_length,
        "draft_depth_ratio": _number(metrics.draft_depth_ratio),
        "draft_overhead": _number(metrics.draft_overhead),
        "theoretical_speedup": _number(metrics.theoretical_speedup),
        "claimed_speedup": _number(metrics.claimed_speedup),
        "query_heads_per_kv": _number(metrics.query_heads_per_kv),
        # the TP that G is counted at (per rank), not a G (README, "attention tiles")
        "query_heads_per_kv_tensor_parallel": metrics.grouping.tensor_parallel
        if metrics.query_heads_per_kv is not None
        else None,
        "attention_optimal_draft_length": metrics.attention_optimal_draft_length,
        "verify_tokens": metrics.verify_tokens,
        "tile_aligned": metrics.tile_aligned,
        "tile_aligned_draft_length": metrics.tile_aligned_draft_length,
        "accept_length_floor": _number(metrics.accept_length_floor.value),
        "draft_passes": metrics.draft_passes,
        "verify_cost_ratio": _number(metrics.verify_cost_ratio),
        "verify_cost_source": cost.source if cost else None,
        "verify_cost_bound": cost.bound if cost else None,
        "verify_cost_cap": _number(cost.cap) if cost else None,
        # the routing-locality end of a mixture-of-experts β (docs/theory.md#routing-locality)
        "verify_cost_ratio_low": _number(cost.low) if cost else None,
        "proven_verify_cost_ratio": _number(metrics.proven_verify_cost_ratio),
        "kv_to_weight_ratio": _number(cost.kv_to_weight_ratio if cost else None),
        "precision": _precision(cost.precision if cost else None),
        "expert_read_ratio": _number(cost.expert_read_ratio if cost else None),
        "verify_cost_left_out": list(cost.left_out) if cost else [],
        "draft_depth_ratio_source": metrics.draft_depth_ratio_source,
        "draft_depth_ratio_range": None
        if metrics.draft_depth_ratio_range is None
        else [_number(v) for v in metrics.draft_depth_ratio_range],
        "break_even_accept_length": _number(metrics.break_even_accept_length),
        "speedup_ceiling": _number(metrics.speedup_ceiling),
        "measured_speedup": _number(metrics.measured_speedup),
        "measured_speedup_range": None
        if metrics.measured_speedup_range is None
        else [_number(v) for v in metrics.measured_speedup_range],
        "accept_length_upper": _number(metrics.accept_length_upper),
        "attention_tiles": metrics.attention_tiles,
        "attention_tile_rows": metrics.attention_tile_rows,
        "tile_aligned_verify_tokens": metrics.tile_aligned_verify_tokens,
        "optimal_draft_length": None
        if optimal is None
        else {
            "draft_length": optimal.draft_length,
            "speedup": _number(optimal.speedup),
            "gain": _number(optimal.gain),
        },
        "draft_increase": None
        if increase is None
        else {
            "current_speedup": _number(increase.current_speedup),
            "next_speedup": _number(increase.next_speedup),
            "increase": increase.increase,
            "delta_speedup": _number(increase.delta_speedup),
        },
    }


def inputs_json(inputs: Inputs) -> dict[str, Any]:
    """What was read from referenced files and from where (the report's ``inputs``)."""
    out: dict[str, Any] = {}
    engine = inputs.engine
    if engine is not None:
        out["engine"] = {
            "engine": engine.engine,
            "path": engine.path,
            "pointer": engine.pointer,
            "mechanism": engine.mechanism,
            "draft_length": engine.draft_length,
            "verify_tokens": engine.verify_tokens,
            "draft_length_is_max": engine.draft_length_is_max,
            "lossy_acceptance": engine.lossy_acceptance,
            "tensor_parallel_size": engine.tensor_parallel_size,
            "attention_data_parallel": engine.attention_data_parallel,
            "draft_model": engine.draft_model,
            "draft_tensor_parallel_size": engine.draft_tensor_parallel_size,
            "max_model_len": engine.max_model_len,
            "target_model": engine.target_model,
            "draft_passes": engine.draft_passes,
            "version": engine.version,
            "version_raw": engine.version_raw,
            "version_source": engine.version_source,
            "implied_versions": dict(engine.implied_versions)
            if engine.implied_versions is not None
            else None,
            "notes": list(engine.notes),
        }
    for key, shape in (("model", inputs.model), ("draft_model", inputs.draft_model)):
        if shape is None:
            continue
        entry: dict[str, Any] = {
            "path": shape.path,
            "pointer": shape.pointer,
            "query_heads": shape.query_heads,
            "kv_heads": shape.kv_heads,
            "query_heads_per_kv": _number(shape.query_heads_per_kv),
            "mla": shape.mla,
            "vocab_size": shape.vocab_size,
            "max_position_embeddings": shape.max_position_embeddings,
        }
        if key == "model":
            entry["effective_query_heads_per_kv"] = _number(inputs.effective_query_heads_per_kv)
            entry.update(
                {
                    "model_type": shape.model_type,
                    "layers": shape.layers,
                    "hidden_size": shape.hidden_size,
                    "head_dim": shape.head_dim,
                    "experts": shape.routed_experts,
                    "experts_per_token": shape.experts_per_token,
                    "kv_lora_rank": shape.kv_lora_rank,
                    "parameters": shape.parameters,
                    "active_parameters": shape.active_parameters,
                    "parameter_family": shape.parameter_family,
                }
            )
        out[key] = entry
    acceptance = inputs.acceptance
    if acceptance is not None:
        out["acceptance"] = {
            "format": acceptance.format,
            "path": acceptance.path,
            "accept_length": _number(acceptance.accept_length),
            "formula": acceptance.formula,
            "estimate": acceptance.estimate,
            "draft_length": acceptance.draft_length,
            "min_draft_length": acceptance.min_draft_length,
            "acceptance_rate": _number(acceptance.acceptance_rate),
            "note": acceptance.note,
        }
    return out


def deployment_inputs(report: DeploymentReport) -> dict[str, Any]:
    """The JSON report's ``inputs`` of a deployment: what was read from referenced files
    and from where, and ``config_digest`` (docs/change-gate.md#config-digest)."""
    deployment = report.deployment
    inputs = inputs_json(deployment.inputs) if deployment.inputs else {}
    inputs["config_digest"] = report.config_digest
    return inputs


def finding_json(finding: Finding) -> dict[str, Any]:
    """One finding as in the JSON report."""
    out: dict[str, Any] = {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity,
        "message": finding.message,
        "details": finding.details,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
    }
    if finding.related:
        out["related"] = [
            {"file": other, "line": line, "column": column}
            for other, line, column in finding.related
        ]
    if finding.suppressed is not None:
        out["suppressed"] = True
        out["justification"] = finding.suppressed
    if finding.baseline_state is not None:
        out["baseline_state"] = finding.baseline_state
    return out


def findings_json(findings: tuple[Finding, ...], with_file: str | None) -> list[dict[str, Any]]:
    """Findings as JSON; one located in another file than ``with_file`` (a referenced
    serving, model, metrics or configuration file) carries that ``file``."""
    out = []
    for finding in findings:
        entry = finding_json(finding)
        if finding.file is not None and finding.file != with_file:
            entry["file"] = finding.file
        out.append(entry)
    return out


def deployment_json(report: DeploymentReport, *, with_file: str | None = None) -> dict[str, Any]:
    """One deployment report (also ``specgate doctor --json``'s whole output)."""
    findings = findings_json(
        tuple(sorted((*report.findings, *report.suppressed_findings), key=Finding.sort_key)),
        with_file,
    )
    advised = report.advised
    out: dict[str, Any] = {
        "name": report.name,
        "status": report.status,
        "metrics": metrics_json(report.metrics),
        # No recommendation for a deployment that does not speculate.
        # ``class`` null: no recommendation (the inputs support none, or the declared
        # mechanism works: mechanisms.advice)
        "mechanism": {
            "class": advised.name if advised else None,
            "draft_depth_ratio_hint": _number(advised.draft_depth_ratio_hint)
            if advised
            else None,
            "reason": advised.reason if advised else None,
            "best_for": advised.best_for if advised else None,
            "declared": report.declared_mechanism,
            "declared_class": report.declared.name if report.declared else None,
        }
        if report.deployment.speculation_enabled
        else None,
        "findings": findings,
        "next_actions": list(report.next_actions),
    }
    inputs = deployment_inputs(report)
    if inputs:
        out["inputs"] = inputs
    if report.baseline is not None:
        out["baseline"] = {
            key: _number(value) if isinstance(value, float) else value
            for key, value in report.baseline.items()
        }
    return out


def to_json(run: RunReport) -> dict[str, Any]:
    """The whole JSON report (docs/reports.md#json-report)."""
    summary: dict[str, Any] = {"files": len(run.files), "deployments": run.deployment_count}
    summary.update(run.counts())
    summary["suppressed"] = run.suppressed
    if run.only_new:
        summary["unchanged"] = run.unchanged
    return {
        "tool": "specgate",
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "status": run.status,
        "summary": summary,
        "files": [
            {
                "path": file.path,
                "status": file.status,
                "error": file.error,
                "findings": findings_json(
                    tuple(
                        sorted((*file.findings, *file.suppressed_findings), key=Finding.sort_key)
                    ),
                    file.path,
                ),
                "deployments": [deployment_json(d, with_file=file.path) for d in file.deployments],
            }
            for file in run.files
        ],
    }
