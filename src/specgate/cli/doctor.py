"""``specgate doctor``: one deployment given as flags, judged by the same rules.

The flags and their reading live here together. Imports neither the YAML parser nor
jsonschema, nor (for text output) hashlib: flags are typed by argparse, and what the
doctor builds is imported when it runs.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from specgate.cli.args import (
    RawFormatter,
    as_written,
    closed_set,
    positive_float,
    rates,
    whole_number,
)
from specgate.cli.commands import COMMANDS
from specgate.cli.output import exit_for
from specgate.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable
    from fractions import Fraction

    from specgate.analysis.mechanisms import MechanismClass
    from specgate.check.report import DeploymentReport
    from specgate.cli.args import Parser
    from specgate.model.deployment import Deployment, HardwareBlock
    from specgate.model.referenced import Inputs

_DOCTOR_EPILOG = """\
example:
  specgate doctor --speculative-decoding --accept-length=1.4 --draft-length=7 \\
      --draft-depth-ratio=0.05 --claimed-speedup=3 --json
"""


def add_parser(sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
    """``doctor``'s parser; its options only when ``full``."""
    doctor = sub.add_parser(
        "doctor",
        help=COMMANDS["doctor"][1],
        description="Check one deployment described by flags, with the same rules as check.",
        epilog=_DOCTOR_EPILOG,
        formatter_class=RawFormatter,
    )
    if not full:
        return
    from specgate.core.limits import (
        MAX_CONCURRENCY,
        MAX_DRAFT_LENGTH,
        MAX_HEADS,
        PHYSICAL_BOUNDS,
    )
    from specgate.theory.gpus import gpu_names

    def bounded(key: str) -> Callable[[str], float]:
        low, high = PHYSICAL_BOUNDS[key]
        return positive_float(low, maximum=high)

    number = positive_float()
    draft_length = whole_number(0, MAX_DRAFT_LENGTH)
    heads = whole_number(1, MAX_HEADS)
    from specgate.cli.doctor_words import names_key

    names_key(
        doctor.add_argument(
            "--speculative-decoding", action="store_true", help="speculative decoding is enabled"
        ),
        "speculation.enabled",
    )
    doctor.add_argument(
        "--accept-length",
        type=number,
        metavar="AL",
        help="measured accept length AL (tokens per target step, bonus included)",
    )
    doctor.add_argument("--draft-length", type=draft_length, metavar="D", help="draft length D")
    doctor.add_argument(
        "--draft-depth-ratio",
        type=bounded("draft_depth_ratio"),
        metavar="RHO",
        help="draft depth ratio ρ (one draft pass's time / one target step's time)",
    )
    names_key(
        doctor.add_argument(
            "--claimed-speedup",
            type=as_written(positive_float(0.0, strict=True, maximum=1e4)),
            metavar="X",
            help="claimed speedup, a ratio (2.4 = 2.4x)",
        ),
        "claims.speedup",
    )
    doctor.add_argument(
        "--min-accept-length",
        type=positive_float(1.0, maximum=MAX_DRAFT_LENGTH + 1),
        metavar="AL",
        help="AL floor (default: break-even AL × (1 + min gain), never above 1 + D)",
    )
    doctor.add_argument(
        "--query-heads-per-kv",
        type=positive_float(1.0, maximum=MAX_HEADS),
        metavar="G",
        help="query heads per KV head G",
    )
    doctor.add_argument("--query-heads", type=heads, metavar="H", help="query heads H")
    doctor.add_argument("--kv-heads", type=heads, metavar="KV", help="KV heads")
    doctor.add_argument(
        "--attention-dominated",
        action="store_true",
        help="decode time is dominated by attention (long context)",
    )
    from specgate.cli.doctor_seed import latency_region, model_size

    doctor.add_argument(
        "--latency-region",
        type=latency_region,
        default="low",
        metavar="REGION",
        help="low (default) or throughput: the Pareto region, for the mechanism advice",
    )
    doctor.add_argument(
        "--model-size",
        type=model_size,
        metavar="SIZE",
        help="tiny/small/medium/large, a parameter count (70b, 1.5B), 8x7b, 30b-a3b or moe: "
        "for the mechanism advice",
    )
    doctor.add_argument(
        "--repetitive",
        action="store_true",
        help="the workload repeats its own text (agents, code edits)",
    )
    doctor.add_argument(
        "--next-accept-length", type=number, metavar="AL", help="AL measured at --next-draft-length"
    )
    doctor.add_argument(
        "--next-draft-length",
        type=draft_length,
        metavar="D",
        help="a larger D whose AL was measured",
    )
    doctor.add_argument(
        "--cache-coherence-eval",
        action="store_true",
        help="rollback / cache-coherence evidence exists",
    )
    doctor.add_argument(
        "--verify-tokens",
        type=whole_number(1, MAX_DRAFT_LENGTH + 1),
        metavar="N",
        help="N_verify, tokens the target scores per step (nodes + 1 for a tree; ≥ 1 + D)",
    )
    doctor.add_argument(
        "--draft-passes",
        choices=("per_token", "single"),
        help="per_token: one draft forward per token; single: one forward for all drafts",
    )
    doctor.add_argument(
        "--concurrency",
        type=whole_number(1, MAX_CONCURRENCY),
        metavar="B",
        help="sequences decoding at once (default 1)",
    )
    doctor.add_argument(
        "--gpu",
        type=closed_set(gpu_names(), "a GPU of the shipped table"),
        metavar="GPU",
        help=f"GPU of the shipped table, for β: {', '.join(gpu_names())}",
    )
    doctor.add_argument(
        "--peak-tflops",
        type=bounded("peak_tflops"),
        metavar="TFLOPS",
        help="peak dense TFLOP/s at the weights' precision (overrides --gpu's figure)",
    )
    doctor.add_argument(
        "--memory-bandwidth-tbps",
        type=bounded("memory_bandwidth_tbps"),
        metavar="TBPS",
        help="memory bandwidth in TB/s (overrides --gpu's figure)",
    )
    doctor.add_argument(
        "--weight-bytes",
        type=bounded("weight_bytes"),
        metavar="BYTES",
        help="bytes per weight (1 for FP8/INT8, 0.5 for 4-bit; not given: 2 for the "
        "estimate, and a fail takes the lowest β over the serving precisions)",
    )
    doctor.add_argument(
        "--attention-tile-rows",
        type=whole_number(1, MAX_HEADS),
        metavar="M",
        help="M, rows of one attention tile (default 128, 64 with multi-latent attention)",
    )
    doctor.add_argument(
        "--verify-cost-ratio",
        type=bounded("verify_cost_ratio"),
        metavar="BETA",
        help="β measured: target step time at N_verify tokens over one token",
    )
    from specgate.core.vocabulary import MECHANISMS as mechanisms

    doctor.add_argument(
        "--mechanism",
        type=closed_set(mechanisms, "a draft mechanism"),
        metavar="NAME",
        help=f"the draft mechanism: {', '.join(mechanisms)}",
    )
    doctor.add_argument(
        "--measured-speedup",
        type=as_written(positive_float(0.0, strict=True, maximum=1e4)),
        metavar="X",
        help="measured speedup over plain decoding, a ratio",
    )
    names_key(
        doctor.add_argument(
            "--per-position",
            type=rates,
            metavar="M1,M2,...",
            help="measured per-position acceptance m_i = P(first i drafts accepted)",
        ),
        "evidence.metrics",
    )
    doctor.add_argument(
        "--min-gain",
        type=positive_float(0.0, maximum=1e3),
        metavar="G",
        help="default AL floor = break-even × (1 + G) (default 0.1)",
    )
    from specgate.cli.doctor_step import add_step_flags

    add_step_flags(doctor)
    names_key(
        doctor.add_argument("--workload", metavar="NAME", help="workload name"), "workload.name"
    )
    names_key(doctor.add_argument("--model", metavar="NAME", help="model name"), "model.name")
    doctor.add_argument("--strict", action="store_true", help="exit 1 when actionable too")
    doctor.add_argument("--json", action="store_true", help="print the JSON deployment report")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate doctor``: the deployment the flags describe, judged by the rules."""
    deployment = deployment_from_flags(args)
    text, status = render_doctor(deployment, args)
    out.write(text)
    return exit_for(status, "actionable" if args.strict else "fail")


def _shape(args: argparse.Namespace) -> Fraction | None:
    from fractions import Fraction

    from specgate.core.numbers import fmt
    from specgate.theory.formulas import as_fraction

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
    if heads is not None and kv is not None and heads % kv:
        raise UsageError(
            f"specgate doctor: --query-heads {heads} is not a multiple of --kv-heads {kv}: "
            "grouped-query attention gives every KV head the same number of query heads"
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
    from specgate.model.deployment import HardwareBlock

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
    from specgate.cli.doctor_step import apply_step_flags

    return apply_step_flags(_flag_deployment(args, profile), args)


def _flag_deployment(args: argparse.Namespace, profile: Inputs | None) -> Deployment:
    """The deployment of the v1/v2 flags (the step-time flags are added after)."""
    from specgate.model.deployment import (
        Deployment,
        EvidenceBlock,
        ModelBlock,
        SpeculationBlock,
        WorkloadBlock,
    )

    return Deployment(
        position=0,
        name=args.model or "doctor",
        model=ModelBlock(
            name=args.model,
            query_heads=args.query_heads,
            kv_heads=args.kv_heads,
            query_heads_per_kv=_shape(args),
            size=None if args.model_size is None else args.model_size.size,
            moe=True if args.model_size is not None and args.model_size.moe else None,
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
            measured_speedup=None
            if args.measured_speedup is None
            else float(args.measured_speedup),
            verify_cost_ratio=args.verify_cost_ratio,
            # the precision as written, as check reads the claims file's text (SG107)
            printed_half_units=(getattr(args.measured_speedup, "half_unit", None), None, None),
        ),
        claimed_speedup=None if args.claimed_speedup is None else float(args.claimed_speedup),
        claimed_half_unit=getattr(args.claimed_speedup, "half_unit", None),
        hardware=_hardware(args),
        min_gain=args.min_gain,
        inputs=profile,
    )


def _profile(args: argparse.Namespace) -> Inputs | None:
    """``--per-position`` as the claims file's inline ``per-position`` metrics: the
    same measurement record, so SG305 (a profile that rises or misses the AL) and
    SG309 (a profile of another length than D, zero padding past D aside) judge it as
    they judge a file."""
    if not args.per_position:
        return None
    from specgate.inputs.metrics.inline import per_position_acceptance
    from specgate.model.referenced import Inputs

    return Inputs(
        acceptance=per_position_acceptance(
            tuple(args.per_position), draft_length=args.draft_length
        )
    )


def _accept_length(args: argparse.Namespace, profile: Inputs | None) -> float | None:
    """``--accept-length``; without it, the AL a ``--per-position`` profile states."""
    if args.accept_length is not None:
        return float(args.accept_length)
    if profile is not None and profile.acceptance is not None:
        return profile.acceptance.accept_length
    return None


def render_doctor(deployment: Deployment, args: argparse.Namespace) -> tuple[str, str]:
    """The doctor's output (JSON deployment report or text) and the status, every text
    in it worded for the doctor's user: its flags, not the claims-file keys they set
    (:func:`specgate.cli.doctor_words.reword`; a finding's ``path`` stays where it sits)."""
    from specgate.check.evaluate import Locator, evaluate
    from specgate.check.options import CheckOptions
    from specgate.cli.doctor_words import reword, reword_all

    floor = None if args.min_accept_length is None else float(args.min_accept_length)
    report = evaluate(deployment, Locator(None), CheckOptions(min_accept_length=floor))
    planned = _planning_advice(report)
    if args.json:
        import json

        from specgate.reporters.json_report import deployment_json

        out = deployment_json(report)
        if planned is not None:
            out["mechanism"] = _mechanism_json(planned)
        return json.dumps(reword_all(out), indent=2, ensure_ascii=False) + "\n", report.status
    from specgate.reporters.text import finding_line, metrics_block

    lines = [finding_line(f) for f in report.findings]
    lines += metrics_block(report)
    if planned is not None:
        lines.append(_mechanism_line(planned))
    lines.append(f"specgate doctor: {report.status}")
    return "\n".join(reword(line) for line in lines) + "\n", report.status


def _planning_advice(report: DeploymentReport) -> MechanismClass | None:
    """The class to start with when ``--speculative-decoding`` is not given: the seed's
    doctor answers which class fits the workload and model whether speculation runs or
    not (issue 26); with it the report's own advice stands (``None`` here)."""
    deployment = report.deployment
    if deployment.speculation.enabled is True:
        return None
    from specgate.analysis import mechanisms

    metrics = report.metrics
    return mechanisms.advice(
        deployment,
        measured_speedup=metrics.measured_speedup,
        min_gain=metrics.min_gain,
        accept_length=metrics.accept_length,
        floor=metrics.accept_length_floor.value,
        planning=True,
    )


def _mechanism_json(cls: MechanismClass) -> dict[str, object]:
    """The JSON report's ``mechanism`` for the class to start with (no mechanism is
    declared: the doctor has no deployment that speculates)."""
    return {
        "class": cls.name,
        "draft_depth_ratio_hint": cls.draft_depth_ratio_hint,
        "reason": cls.reason,
        "best_for": cls.best_for,
        "declared": None,
        "declared_class": None,
    }


def _mechanism_line(cls: MechanismClass) -> str:
    """The text report's line for the class to start with."""
    from specgate.core.numbers import fmt

    return (
        f"    mechanism: to start with, {cls.name} (ρ ≈ {fmt(cls.draft_depth_ratio_hint)}): "
        f"{cls.reason}"
    )
