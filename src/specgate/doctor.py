"""``specgate doctor``: one deployment given as flags, judged by the same rules.

Imports neither the YAML parser nor jsonschema: flags are typed by argparse.
"""

from __future__ import annotations

import argparse
from fractions import Fraction

from specgate.check.run import CheckOptions, Locator, evaluate
from specgate.core.errors import UsageError
from specgate.core.numbers import fmt
from specgate.model.deployment import (
    Deployment,
    EvidenceBlock,
    HardwareBlock,
    Inputs,
    ModelBlock,
    SpeculationBlock,
    WorkloadBlock,
)
from specgate.reporters.json_report import deployment_json
from specgate.theory.formulas import as_fraction


def _shape(args: argparse.Namespace) -> Fraction | None:
    heads, kv, g = args.query_heads, args.kv_heads, args.query_heads_per_kv
    if heads is not None and kv is None:
        raise UsageError("specgate doctor: --query-heads needs --kv-heads")
    if kv is not None and heads is None:
        raise UsageError("specgate doctor: --kv-heads needs --query-heads")
    given = as_fraction(float(g)) if g is not None else None
    if heads is not None and kv is not None and kv > heads:
        raise UsageError(
            f"specgate doctor: --kv-heads {kv} exceeds --query-heads {heads}: every KV head "
            "serves at least one query head"
        )
    if heads is not None and kv is not None:
        ratio = Fraction(heads, kv)
        if given is not None and given != ratio:
            raise UsageError(
                f"specgate doctor: --query-heads-per-kv {fmt(given)} disagrees with "
                f"--query-heads/--kv-heads = {heads}/{kv} = {fmt(ratio)}"
            )
        return ratio
    return given


def _hardware(args: argparse.Namespace) -> HardwareBlock:
    """``hardware`` from --gpu, --peak-tflops, --memory-bandwidth-tbps, --weight-bytes
    and --attention-tile-rows (the claims file's keys of the same names)."""
    values = (
        args.gpu,
        args.peak_tflops,
        args.memory_bandwidth_tbps,
        args.weight_bytes,
        args.attention_tile_rows,
    )
    return HardwareBlock(
        present=any(v is not None for v in values),
        gpu=args.gpu,
        peak_tflops=args.peak_tflops,
        memory_bandwidth_tbps=args.memory_bandwidth_tbps,
        weight_bytes=args.weight_bytes,
        attention_tile_rows=args.attention_tile_rows,
    )


def deployment_from_flags(args: argparse.Namespace) -> Deployment:
    """The :class:`Deployment` the doctor flags describe.

    Raises:
        UsageError: ``--query-heads`` without ``--kv-heads`` (or the reverse), a G
            that disagrees with H/KV, one ``--next-*`` flag without the other, a
            ``--next-draft-length`` not above ``--draft-length``, or
            ``--verify-tokens`` below 1 + ``--draft-length``.
    """
    if (args.next_accept_length is None) != (args.next_draft_length is None):
        raise UsageError(
            "specgate doctor: --next-accept-length and --next-draft-length go together"
        )
    if (
        args.next_draft_length is not None
        and args.draft_length is not None
        and args.next_draft_length <= args.draft_length
    ):
        raise UsageError(
            f"specgate doctor: --next-draft-length {args.next_draft_length} must be larger than "
            f"--draft-length {args.draft_length} (it gives the AL measured at a larger D)"
        )
    if (
        args.verify_tokens is not None
        and args.draft_length is not None
        and args.verify_tokens < args.draft_length + 1
    ):
        raise UsageError(
            f"specgate doctor: --verify-tokens {args.verify_tokens} is below 1 + "
            f"--draft-length = {args.draft_length + 1}"
        )
    profile = _profile(args)
    return Deployment(
        position=0,
        name=args.model or "doctor",
        model=ModelBlock(
            name=args.model,
            query_heads=args.query_heads,
            kv_heads=args.kv_heads,
            query_heads_per_kv=_shape(args),
            size=args.model_size,
        ),
        speculation=SpeculationBlock(
            present=True,
            enabled=True if args.speculative_decoding else None,
            draft_length=args.draft_length,
            draft_depth_ratio=None
            if args.draft_depth_ratio is None
            else float(args.draft_depth_ratio),
            verify_tokens=args.verify_tokens,
            draft_passes=args.draft_passes,
            mechanism=args.mechanism,
        ),
        workload=WorkloadBlock(
            name=args.workload,
            latency_region=args.latency_region,
            attention_dominated=args.attention_dominated,
            repetitive=args.repetitive,
            concurrency=args.concurrency,
        ),
        evidence=EvidenceBlock(
            present=True,
            accept_length=_accept_length(args, profile),
            cache_coherence_eval=True if args.cache_coherence_eval else None,
            next_draft_length=args.next_draft_length,
            next_accept_length=None
            if args.next_accept_length is None
            else float(args.next_accept_length),
            measured_speedup=args.measured_speedup,
            verify_cost_ratio=args.verify_cost_ratio,
        ),
        claimed_speedup=None if args.claimed_speedup is None else float(args.claimed_speedup),
        hardware=_hardware(args),
        min_gain=args.min_gain,
        inputs=profile,
    )


def _profile(args: argparse.Namespace) -> Inputs | None:
    """``--per-position`` as the claims file's inline ``per-position`` metrics: the
    same measurement record, so SG305 (a profile that rises or misses the AL) and
    SG309 (a profile of another length than D) judge it as they judge a file."""
    if not args.per_position:
        return None
    from specgate.inputs.metrics.inline import per_position_acceptance

    return Inputs(acceptance=per_position_acceptance(tuple(args.per_position)))


def _accept_length(args: argparse.Namespace, profile: Inputs | None) -> float | None:
    """``--accept-length``; without it, the AL a ``--per-position`` profile states."""
    if args.accept_length is not None:
        return float(args.accept_length)
    if profile is not None and profile.acceptance is not None:
        return profile.acceptance.accept_length
    return None


def render_doctor(deployment: Deployment, args: argparse.Namespace) -> tuple[str, str]:
    """The doctor's output (JSON deployment report or text) and the status."""
    floor = None if args.min_accept_length is None else float(args.min_accept_length)
    report = evaluate(deployment, Locator(None), CheckOptions(min_accept_length=floor))
    if args.json:
        import json

        return json.dumps(
            deployment_json(report), indent=2, ensure_ascii=False
        ) + "\n", report.status
    from specgate.reporters.text import finding_line, metrics_block

    lines = [finding_line(f) for f in report.findings]
    lines += metrics_block(report)
    lines.append(f"specgate doctor: {report.status}")
    return "\n".join(lines) + "\n", report.status
