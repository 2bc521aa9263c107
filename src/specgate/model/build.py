"""Plain claims-file data → typed :class:`~specgate.model.deployment.Deployment` records.

The builder is lenient: a value of the wrong type or out of range is left out
(``None``), so metrics are computed from the valid values while SG001 reports
the rest (:func:`without_refused` drops every number the schema refused, so its
bounds hold for the theory too). It also performs the checks that span several keys
(docs/claims-file.md#format-rules): H without KV, a G that disagrees with H/KV.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from specgate.core.numbers import fmt, half_unit
from specgate.core.vocabulary import MECHANISMS
from specgate.load.document import NodePath, format_path
from specgate.model.deployment import (
    Deployment,
    EvidenceBlock,
    HardwareBlock,
    ModelBlock,
    SpeculationBlock,
    WorkloadBlock,
)
from specgate.model.validate import Violation

if TYPE_CHECKING:
    from collections.abc import Iterable

    from specgate.load.document import NodePath
    from specgate.model.provenance import Provenance

#: No whole number of a claims file is larger (every integer key's schema maximum is at
#: most 2**53, core.limits.MAX_COUNT); one past it is left out, as the schema reports
#: it (SG001), so no int(1e308) reaches arithmetic (hostile review defect 4).
_INTEGER_LIMIT = 2**53


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(block: dict[str, Any], key: str, minimum: float | None = None) -> float | None:
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the float range (SG001 reports it)
        return None
    if not math.isfinite(number) or (minimum is not None and number < minimum):
        return None
    return number


def _integer(block: dict[str, Any], key: str, minimum: int = 0) -> int | None:
    value = block.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        # exact, not rounded through a float
        return value if minimum <= value <= _INTEGER_LIMIT else None
    number = _number(block, key, minimum)
    if number is None or not number.is_integer() or number > _INTEGER_LIMIT:
        return None
    return int(number)


def _positive(block: dict[str, Any], key: str) -> float | None:
    number = _number(block, key)
    return number if number is not None and number > 0 else None


def _bool(block: dict[str, Any], key: str) -> bool | None:
    value = block.get(key)
    return value if isinstance(value, bool) else None


def _text(block: dict[str, Any], key: str, allowed: tuple[str, ...] | None = None) -> str | None:
    value = block.get(key)
    if not isinstance(value, str) or (allowed is not None and value not in allowed):
        return None
    return value


def _gpu(hardware: dict[str, Any]) -> str | None:
    """``hardware.gpu`` when it names a GPU of the table (read only for a named GPU)."""
    if not isinstance(hardware.get("gpu"), str):
        return None
    from specgate.theory.gpus import gpu_names

    return _text(hardware, "gpu", gpu_names())


def _model(raw: dict[str, Any], base: tuple[str | int, ...]) -> tuple[ModelBlock, list[Violation]]:
    problems: list[Violation] = []
    heads = _integer(raw, "query_heads", 1)
    kv = _integer(raw, "kv_heads", 1)
    g_given = _positive(raw, "query_heads_per_kv")
    g: Fraction | None = Fraction(repr(g_given)) if g_given is not None else None
    if heads is not None and kv is None:
        problems.append(
            Violation(
                (*base, "model", "query_heads"),
                "model.query_heads needs model.kv_heads (or give query_heads_per_kv alone)",
            )
        )
    elif kv is not None and heads is None and g is None:
        problems.append(
            Violation(
                (*base, "model", "kv_heads"),
                "model.kv_heads needs model.query_heads (or give query_heads_per_kv)",
            )
        )
    if heads is not None and kv is not None and kv > heads:
        problems.append(
            Violation(
                (*base, "model", "kv_heads"),
                f"model.kv_heads {kv} exceeds model.query_heads {heads}: every KV head serves "
                "at least one query head",
            )
        )
    if heads is not None and kv is not None and kv <= heads and heads % kv:
        problems.append(
            Violation(
                (*base, "model", "kv_heads"),
                f"model.query_heads {heads} is not a multiple of model.kv_heads {kv}: "
                "grouped-query attention gives every KV head the same number of query heads "
                f"(G would be {fmt(Fraction(heads, kv))}); check both counts",
            )
        )
    elif heads is not None and kv is not None:
        ratio = Fraction(heads, kv)
        if g is not None and g != ratio:
            problems.append(
                Violation(
                    (*base, "model", "query_heads_per_kv"),
                    f"model.query_heads_per_kv {fmt(g)} disagrees with query_heads / kv_heads"
                    f" = {heads}/{kv} = {fmt(ratio)}",
                )
            )
        g = ratio
    size = _text(raw, "size", ("tiny", "small", "medium", "large"))
    block = ModelBlock(
        name=_text(raw, "name"),
        query_heads=heads,
        kv_heads=kv,
        query_heads_per_kv=g,
        size=size,  # type: ignore[arg-type]
        parameters_b=_positive(raw, "parameters_b"),
        moe=_bool(raw, "moe"),
        mtp_modules=_bool(raw, "mtp_modules"),
        revision=_text(raw, "revision"),
    )
    # the step-time inputs (docs/theory.md#step-time-inputs)
    if not _STEP_MODEL_KEYS.isdisjoint(raw):
        block = block._replace(
            layers=_integer(raw, "layers", 1),
            head_dim=_integer(raw, "head_dim", 1),
            hidden_size=_integer(raw, "hidden_size", 1),
            kv_bytes_per_token=_positive(raw, "kv_bytes_per_token"),
            active_parameters_b=_positive(raw, "active_parameters_b"),
            experts=_integer(raw, "experts", 1),
            experts_per_token=_integer(raw, "experts_per_token", 1),
        )
    return block, problems


_STEP_MODEL_KEYS = frozenset(
    {"layers", "head_dim", "hidden_size", "kv_bytes_per_token", "active_parameters_b",
     "experts", "experts_per_token"}
)
_STEP_HARDWARE_KEYS = frozenset(
    {"compute_dtype", "kv_cache_bytes", "tensor_parallel", "allreduce_gbps",
     "allreduce_latency_us"}
)
#: Keys whose combinations model/step_inputs.py checks (the rest cannot contradict).
_STEP_CHECKED = (
    ("model", frozenset({"active_parameters_b", "experts_per_token", "experts"})),
    ("hardware", frozenset({"tensor_parallel"})),
    ("speculation", frozenset({"tree_level_nodes"})),
)


def _drop(policy: dict[str, Any], key: str = "max_accept_length_drop") -> float | None:
    drop = _number(policy, key, 0.0)
    return drop if drop is not None and drop < 1 else None


def _digest(block: dict[str, Any], key: str) -> str | None:
    """A ``sha256:`` + 16 hex digits value (else ``None``: SG001 reports the shape)."""
    value = _text(block, key)
    if value is None:
        return None
    from specgate.model.provenance import DIGEST_SHAPE

    return value if DIGEST_SHAPE.fullmatch(value) else None
def _whole_numbers(raw: object) -> tuple[int, ...]:
    """A list of whole numbers ≥ 1 (``tree_level_nodes``); ``()`` when any item is not
    one (SG001 reports it)."""
    if not isinstance(raw, list) or not raw:
        return ()
    values = [_integer({"v": item}, "v", 1) for item in raw]
    return tuple(v for v in values if v is not None) if None not in values else ()


def _ratio_points(raw: object) -> tuple[tuple[int, float], ...]:
    """``evidence.verify_cost_ratio_at`` as (verify tokens, β) pairs sorted by verify
    tokens; items that break the schema are left out (SG001 reports them)."""
    if not isinstance(raw, list):
        return ()
    points: dict[int, float] = {}
    for item in raw:
        block = _mapping(item)
        n = _integer(block, "verify_tokens", 1)
        ratio = _number(block, "ratio", 1.0)
        if n is not None and ratio is not None and n not in points:
            points[n] = ratio
    return tuple(sorted(points.items()))


def _ratio_order_problems(raw: object, base: tuple[str | int, ...]) -> list[Violation]:
    """``evidence.verify_cost_ratio_at`` lists each verify-token count once, increasing."""
    if not isinstance(raw, list):
        return []
    problems: list[Violation] = []
    previous: int | None = None
    for index, item in enumerate(raw):
        n = _integer(_mapping(item), "verify_tokens", 1)
        if n is None:
            continue
        if previous is not None and n <= previous:
            where = (*base, "evidence", "verify_cost_ratio_at", index, "verify_tokens")
            problems.append(
                Violation(
                    where,
                    f"{format_path(where)} {n} does not increase (the point before is at "
                    f"{previous}): list each verify-token count once, in increasing order",
                )
            )
        previous = n if previous is None else max(previous, n)
    return problems


def _metrics_problems(raw: object, base: tuple[str | int, ...]) -> list[Violation]:
    """``evidence.metrics`` keys that only some formats take (docs/claims-file.md): a file
    format needs ``path``; ``baseline_path`` and ``labels`` apply to ``vllm-prometheus``
    only. The claims file's own schema, so SG001 on the deployment, not the end of the run
    (docs/reports.md#exit-codes)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("format"), str):
        return []
    from specgate.inputs.metrics.spec import FILE_FORMATS

    fmt = raw["format"]
    where = (*base, "evidence", "metrics")
    problems: list[Violation] = []
    if fmt in FILE_FORMATS and not raw.get("path"):
        problems.append(
            Violation(where, f"{format_path(where)} format {fmt} reads a file: it needs path")
        )
    for key in ("baseline_path", "labels"):
        if key in raw and fmt != "vllm-prometheus":
            problems.append(
                Violation(
                    (*where, key),
                    f"{format_path((*where, key))} applies only to format vllm-prometheus, "
                    f"not {fmt}",
                )
            )
    return problems


def _provenance(raw: object) -> Provenance | None:
    """``evidence.provenance`` typed; its module is loaded only for a file that has one."""
    if not isinstance(raw, dict):
        return None
    from specgate.model.provenance import build_provenance

    return build_provenance(raw)


def _not_a_date(measured: str) -> bool:
    """A ``measured_at`` of the date shape that names no calendar date (2025-02-30)."""
    from specgate.model.provenance import MEASURED_AT_SHAPE, parse_measured_at

    return MEASURED_AT_SHAPE.match(measured) is not None and parse_measured_at(measured) is None


def build_deployment(
    raw: object, index: int, scalar_text: Callable[[NodePath], str | None] | None = None
) -> tuple[Deployment, list[Violation]]:
    """One deployment from its raw mapping; returns it and cross-key violations.

    ``scalar_text`` gives a scalar's source text by node path (the claims file's
    :meth:`~specgate.load.document.Document.scalar_text`): the measured speedup's
    inputs then carry the precision they were written with."""
    data = _mapping(raw)
    base: tuple[str | int, ...] = ("deployments", index)
    model, problems = _model(_mapping(data.get("model")), base)
    spec_raw = data.get("speculation")
    spec = _mapping(spec_raw)
    workload = _mapping(data.get("workload"))
    evidence_raw = data.get("evidence")
    evidence = _mapping(evidence_raw)
    following = _mapping(evidence.get("next"))
    throughput = _mapping(evidence.get("throughput"))
    policy = _mapping(data.get("policy"))
    hardware_raw = data.get("hardware")
    hardware = _mapping(hardware_raw)
    name = data.get("name")
    deployment = Deployment(
        position=index,
        name=name if isinstance(name, str) and name else f"deployments[{index}]",
        model=model,
        speculation=SpeculationBlock(
            present=isinstance(spec_raw, dict),
            enabled=_bool(spec, "enabled"),
            mechanism=_text(spec, "mechanism", MECHANISMS),
            draft_length=_integer(spec, "draft_length"),
            draft_depth_ratio=_number(spec, "draft_depth_ratio", 0.0),
            verify_tokens=_integer(spec, "verify_tokens", 1),
            draft_passes=_text(spec, "draft_passes", ("per_token", "single")),  # type: ignore[arg-type]
            engine=_text(spec, "engine"),
            draft_revision=_text(spec, "draft_revision"),
            tree_level_nodes=_whole_numbers(spec.get("tree_level_nodes")),
        ),
        workload=WorkloadBlock(
            name=_text(workload, "name"),
            latency_region="throughput"
            if workload.get("latency_region") == "throughput"
            else "low",
            attention_dominated=_bool(workload, "attention_dominated") is True,
            repetitive=_bool(workload, "repetitive") is True,
            temperature=_number(workload, "temperature", 0.0),
            concurrency=_integer(workload, "concurrency", 1),
            dataset=_text(workload, "dataset"),
            chat_template=_digest(workload, "chat_template"),
            context_length=_number(workload, "context_length", 0.0)
            if "context_length" in workload
            else None,
            prefill_tokens_per_step=_integer(workload, "prefill_tokens_per_step")
            if "prefill_tokens_per_step" in workload
            else None,
        ),
        evidence=EvidenceBlock(
            present=isinstance(evidence_raw, dict),
            accept_length=_number(evidence, "accept_length"),
            cache_coherence_eval=_bool(evidence, "cache_coherence_eval"),
            next_draft_length=_integer(following, "draft_length"),
            next_accept_length=_number(following, "accept_length"),
            next_verify_tokens=_integer(following, "verify_tokens", 1),
            measured_speedup=_positive(evidence, "measured_speedup"),
            baseline_tokens_per_s=_positive(throughput, "baseline_tokens_per_s"),
            speculative_tokens_per_s=_positive(throughput, "speculative_tokens_per_s"),
            verify_cost_ratio=_number(evidence, "verify_cost_ratio", 1.0),
            provenance=_provenance(evidence.get("provenance")),
            measured_speedup_se=_number(evidence, "measured_speedup_se", 0.0),
            verify_cost_ratio_at=_ratio_points(evidence.get("verify_cost_ratio_at")),
            printed_half_units=_printed(scalar_text, base),
        ),
        claimed_speedup=_positive(_mapping(data.get("claims")), "speedup"),
        claimed_half_unit=_claimed_half_unit(scalar_text, base),
        min_accept_length=_number(policy, "min_accept_length", 1.0),
        max_accept_length_drop=_drop(policy),
        max_evidence_age_days=_integer(policy, "max_evidence_age_days", 1),
        base=base,
        hardware=HardwareBlock(
            present=isinstance(hardware_raw, dict),
            gpu=_gpu(hardware),
            peak_tflops=_positive(hardware, "peak_tflops"),
            memory_bandwidth_tbps=_positive(hardware, "memory_bandwidth_tbps"),
            weight_bytes=_positive(hardware, "weight_bytes"),
            attention_tile_rows=_integer(hardware, "attention_tile_rows", 1),
        ),
        min_gain=_number(policy, "min_gain", 0.0),
        retune_gain=_number(policy, "retune_gain", 0.0),
        max_speedup_drop=_drop(policy, "max_speedup_drop"),
    )
    if hardware and not _STEP_HARDWARE_KEYS.isdisjoint(hardware):
        from specgate.theory.gpus import COMPUTE_DTYPES

        deployment = deployment._replace(
            hardware=deployment.hardware._replace(
                compute_dtype=_text(hardware, "compute_dtype", COMPUTE_DTYPES),
                kv_cache_bytes=_positive(hardware, "kv_cache_bytes"),
                tensor_parallel=_integer(hardware, "tensor_parallel", 1),
                allreduce_gbps=_positive(hardware, "allreduce_gbps"),
                allreduce_latency_us=_number(hardware, "allreduce_latency_us", 0.0),
            )
        )
    problems.extend(_verify_token_problems(deployment, base))
    problems.extend(_ratio_order_problems(evidence.get("verify_cost_ratio_at"), base))
    problems.extend(_metrics_problems(evidence.get("metrics"), base))
    if any(not keys.isdisjoint(_mapping(data.get(block))) for block, keys in _STEP_CHECKED):
        from specgate.model.step_inputs import stated_problems

        problems.extend(Violation(path, message) for path, message in stated_problems(deployment))
    provenance = _mapping(evidence.get("provenance"))
    measured = provenance.get("measured_at")
    if isinstance(measured, str) and _not_a_date(measured):
        problems.append(
            Violation(
                (*base, "evidence", "provenance", "measured_at"),
                f"evidence.provenance.measured_at {measured!r} is not a calendar date "
                "(YYYY-MM-DD) or an RFC 3339 date-time",
            )
        )
    current = deployment.speculation.draft_length
    larger = deployment.evidence.next_draft_length
    if current is not None and larger is not None and larger <= current:
        problems.append(
            Violation(
                (*base, "evidence", "next", "draft_length"),
                f"{format_path((*base, 'evidence', 'next', 'draft_length'))} {larger} must be "
                f"larger than speculation.draft_length {current} (it records AL measured at a "
                "larger D)",
            )
        )
    return deployment, problems


def _printed(
    scalar_text: Callable[[NodePath], str | None] | None, base: tuple[str | int, ...]
) -> tuple[float | None, float | None, float | None]:
    """Half a unit of the last digit written of the measured speedup and of the two
    throughputs (``None`` each when unknown)."""
    if scalar_text is None:
        return (None, None, None)
    paths = (
        (*base, "evidence", "measured_speedup"),
        (*base, "evidence", "throughput", "baseline_tokens_per_s"),
        (*base, "evidence", "throughput", "speculative_tokens_per_s"),
    )
    units = []
    for path in paths:
        text = scalar_text(path)
        units.append(None if text is None else half_unit(text))
    return (units[0], units[1], units[2])


def _claimed_half_unit(
    scalar_text: Callable[[NodePath], str | None] | None, base: tuple[str | int, ...]
) -> float | None:
    """Half a unit of the last digit ``claims.speedup`` is written with (``None`` when
    its text is not known or not a plain decimal)."""
    text = None if scalar_text is None else scalar_text((*base, "claims", "speedup"))
    return None if text is None else half_unit(text)


def _verify_token_problems(deployment: Deployment, base: tuple[str | int, ...]) -> list[Violation]:
    """N_verify ≥ 1 + D: the target scores the root and every draft on the longest path."""
    problems: list[Violation] = []
    for d, n, where in (
        (
            deployment.speculation.draft_length,
            deployment.speculation.verify_tokens,
            ("speculation", "verify_tokens"),
        ),
        (
            deployment.evidence.next_draft_length,
            deployment.evidence.next_verify_tokens,
            ("evidence", "next", "verify_tokens"),
        ),
    ):
        if d is not None and n is not None and n < d + 1:
            problems.append(
                Violation(
                    (*base, *where),
                    f"{format_path((*base, *where))} {n} is below 1 + D = {d + 1}: the target "
                    "scores at least "
                    "the root and every draft token on the longest path",
                )
            )
    return problems


def without_refused(raw: object, index: int, refused: Iterable[NodePath]) -> object:
    """``raw`` (deployment ``index``) without the numbers the schema refused (SG001 at
    their line): a value out of its bounds (``concurrency: 1e300``) never reaches the
    theory, even to price the metrics a blocked deployment still shows. Only the
    mappings and lists on the way to a refused number are copied; the document is
    untouched."""
    for path in refused:
        if len(path) > 2 and path[0] == "deployments" and path[1] == index:
            raw = _drop_number(raw, path[2:])
    return raw


def _drop_number(node: object, path: NodePath) -> object:
    """``node`` with the number at ``path`` removed (a copy along the path), or ``node``
    itself when no number is there."""
    step, rest = path[0], path[1:]
    if isinstance(node, dict) and isinstance(step, str) and step in node:
        value = node[step]
        if not rest:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return node
            return {k: v for k, v in node.items() if k != step}
        changed = _drop_number(value, rest)
        return node if changed is value else {**node, step: changed}
    if isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node) and rest:
        changed = _drop_number(node[step], rest)
        return node if changed is node[step] else [*node[:step], changed, *node[step + 1 :]]
    return node
