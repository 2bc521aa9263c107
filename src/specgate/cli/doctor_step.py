"""``specgate doctor``'s flags for the step-time inputs (docs/theory.md#step-time-inputs).

Each flag is the claims-file key of the same name (``--context-length`` for
``workload.context_length``); a bad combination (active parameters above the total,
more experts per token than experts, a TP that does not divide the heads, tree levels
that miss N_verify) is a usage error naming the flag, as in ``check`` it is SG001.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from specgate.cli.args import positive_float, whole_number
from specgate.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from specgate.model.deployment import Deployment

def _nodes(text: str) -> tuple[int, ...]:
    """``4,8,12,8``: whole numbers ≥ 1, at most 1,024 of them."""
    parts = text.split(",")
    if len(parts) > 1024:
        raise argparse.ArgumentTypeError("at most 1024 levels")
    values = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part.strip()!r} is not a whole number") from None
        if not value.is_integer() or not 1 <= value <= 1024:
            raise argparse.ArgumentTypeError(f"{part.strip()!r} is not a whole number in 1…1024")
        values.append(int(value))
    return tuple(values)


def _points(text: str) -> tuple[tuple[int, float], ...]:
    """``4:1.2,8:1.9``: verify tokens (increasing, 1…1025) and β ≥ 1 at each."""
    import math

    parts = text.split(",")
    if len(parts) > 1024:
        raise argparse.ArgumentTypeError("at most 1024 points")
    points: list[tuple[int, float]] = []
    for part in parts:
        n_text, _, beta_text = part.partition(":")
        try:
            n, beta = float(n_text), float(beta_text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part.strip()!r} is not VERIFY_TOKENS:RATIO (e.g. 8:1.4)"
            ) from None
        if not n.is_integer() or not 1 <= n <= 1025 or not math.isfinite(beta) or not (
            1 <= beta <= 1e6
        ):
            raise argparse.ArgumentTypeError(
                f"{part.strip()!r}: verify tokens must be a whole number in 1…1025 and the "
                "ratio from 1 to 10^6"
            )
        if points and int(n) <= points[-1][0]:
            raise argparse.ArgumentTypeError("verify tokens must increase from point to point")
        points.append((int(n), beta))
    return tuple(points)


def add_step_flags(doctor: argparse.ArgumentParser) -> None:
    """The step-time flags (docs/theory.md#step-time-inputs), each the claims-file key of its
    name."""
    from specgate.core.limits import (
        MAX_HEADS,
        MAX_PREFILL_TOKENS,
        PHYSICAL_BOUNDS,
    )
    from specgate.theory.gpus import COMPUTE_DTYPES

    def number(key: str) -> Callable[[str], float]:
        low, high = PHYSICAL_BOUNDS[key]
        return positive_float(low, maximum=high)

    group = doctor.add_argument_group("step-time inputs (the claims-file keys of the same names)")
    add = group.add_argument
    add("--context-length", type=number("context_length"), metavar="TOKENS",
        help="c̄, mean tokens in each decoding sequence's KV cache")
    add("--prefill-tokens-per-step", type=whole_number(0, MAX_PREFILL_TOKENS), metavar="TOKENS",
        help="C, prefill tokens sharing each decode step (default 0)")
    add("--parameters-b", type=number("parameters_b"), metavar="B",
        help="total parameters, billions")
    add("--active-parameters-b", type=number("active_parameters_b"), metavar="B",
        help="parameters each token runs through, billions (MoE; default the total)")
    add("--experts", type=whole_number(1, MAX_HEADS), metavar="E", help="routed experts")
    add("--experts-per-token", type=whole_number(1, MAX_HEADS), metavar="K",
        help="experts each token is routed to")
    add("--layers", type=whole_number(1, MAX_HEADS), metavar="L", help="transformer layers")
    add("--head-dim", type=whole_number(1, MAX_HEADS), metavar="D_H",
        help="dimensions per attention head")
    add("--hidden-size", type=whole_number(1, 2**20), metavar="H", help="hidden size")
    add("--kv-bytes-per-token", type=number("kv_bytes_per_token"), metavar="BYTES",
        help="KV-cache bytes per token over all layers (else from the shapes)")
    add("--compute-dtype", choices=COMPUTE_DTYPES,
        help="dtype the GEMMs run in (default: the weights' precision when the GPU has "
        "it; a fail does not rest on that guess)")
    add("--kv-cache-bytes", type=number("kv_cache_bytes"), metavar="BYTES",
        help="bytes per KV-cache element (default 2 for the estimate; a fail ranges "
        "over 2, 1 and 0.5)")
    add("--tensor-parallel", type=whole_number(1, MAX_HEADS), metavar="T",
        help="GPUs the target is split over (default 1 for the estimate; a fail takes "
        "the lowest β over every split of the heads)")
    add("--allreduce-gbps", type=number("allreduce_gbps"), metavar="GBPS",
        help="all-reduce GB/s per GPU and direction (default: the GPU table's)")
    add("--allreduce-latency-us", type=number("allreduce_latency_us"), metavar="US",
        help="all-reduce latency in µs (estimate default 10; the proven bound uses 50)")
    add("--tree-level-nodes", type=_nodes, metavar="N1,N2,...",
        help="a tree's draft nodes per level (sum = N_verify − 1)")
    add("--verify-cost-ratio-at", type=_points, metavar="N:BETA,...",
        help="β measured at several N_verify (e.g. 4:1.2,8:1.9)")


def apply_step_flags(deployment: Deployment, args: argparse.Namespace) -> Deployment:
    """``deployment`` with the step-time flags filled in.

    Raises:
        UsageError: a bad combination, worded with the flag's name.
    """
    model = deployment.model._replace(
        parameters_b=args.parameters_b,
        active_parameters_b=args.active_parameters_b,
        experts=args.experts,
        experts_per_token=args.experts_per_token,
        layers=args.layers,
        head_dim=args.head_dim,
        hidden_size=args.hidden_size,
        kv_bytes_per_token=args.kv_bytes_per_token,
        moe=True if args.experts is not None and args.experts > 1 else deployment.model.moe,
    )
    hardware = deployment.hardware
    values = (
        args.compute_dtype,
        args.kv_cache_bytes,
        args.tensor_parallel,
        args.allreduce_gbps,
        args.allreduce_latency_us,
    )
    hardware = hardware._replace(
        present=hardware.present or any(v is not None for v in values),
        compute_dtype=args.compute_dtype,
        kv_cache_bytes=args.kv_cache_bytes,
        tensor_parallel=args.tensor_parallel,
        allreduce_gbps=args.allreduce_gbps,
        allreduce_latency_us=args.allreduce_latency_us,
    )
    updated = deployment._replace(
        model=model,
        hardware=hardware,
        workload=deployment.workload._replace(
            context_length=args.context_length,
            prefill_tokens_per_step=args.prefill_tokens_per_step,
        ),
        speculation=deployment.speculation._replace(tree_level_nodes=args.tree_level_nodes or ()),
        evidence=deployment.evidence._replace(
            verify_cost_ratio_at=args.verify_cost_ratio_at or ()
        ),
    )
    from specgate.model.step_inputs import problems

    found = problems(updated)
    if found:
        from specgate.cli.doctor_words import reword

        raise UsageError(f"specgate doctor: {reword(found[0][1])}")
    return updated
