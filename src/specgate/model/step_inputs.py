"""Checks that span several step-time inputs (docs/theory.md#step-time-inputs): bad combinations are
schema findings (SG001) at the value a user would change, with the reason.

:func:`problems` runs twice: on the claims file alone (from the builder), and again
once the referenced files are read (a context length over the model config's
maximum, a TP that does not divide the config's heads). A contradiction among stated
values alone stops the deployment before its references are read, so no cause is
reported twice.
"""

from fractions import Fraction
from typing import TYPE_CHECKING, NamedTuple

from specgate.core.limits import MAX_HEADS
from specgate.core.numbers import fmt
from specgate.load.document import NodePath, format_path

if TYPE_CHECKING:
    from specgate.model.deployment import Deployment

#: One bad combination: the node path a finding points at and its message. (A plain
#: tuple: ``specgate doctor`` runs these checks and must not import the schema module's
#: dataclasses; the builder turns them into :class:`~specgate.model.validate.Violation`.)
Problem = tuple[NodePath, str]


def stated_problems(deployment: "Deployment") -> list[Problem]:
    """The checks on the claims file's own values (the builder calls this)."""
    return problems(deployment)


def total_parameters(deployment: "Deployment") -> tuple[float | None, str]:
    """P (parameters, not billions) and where it comes from: ``model.parameters_b``,
    else the count from the model config's shapes."""
    stated = deployment.model.parameters_b
    if stated is not None:
        return stated * 1e9, "model.parameters_b"
    shape = deployment.inputs.model if deployment.inputs else None
    if shape is not None and shape.parameters is not None:
        return float(shape.parameters), f"the count from {shape.path}"
    return None, ""


def active_parameters(deployment: "Deployment") -> tuple[float | None, str]:
    """P_act and where it comes from: ``model.active_parameters_b``, else the model
    config's count, else P (a dense model)."""
    stated = deployment.model.active_parameters_b
    if stated is not None:
        return stated * 1e9, "model.active_parameters_b"
    shape = deployment.inputs.model if deployment.inputs else None
    if shape is not None and shape.active_parameters is not None:
        return float(shape.active_parameters), f"the count from {shape.path}"
    return None, ""


def tensor_parallel(deployment: "Deployment") -> int | None:
    """t as stated (``hardware.tensor_parallel``), else the engine config's, else None."""
    if deployment.hardware.tensor_parallel is not None:
        return deployment.hardware.tensor_parallel
    engine = deployment.inputs.engine if deployment.inputs else None
    found = engine.tensor_parallel_size if engine is not None else None
    # A TP beyond the head limit splits no real model (an engine refuses it, SG307);
    # a hostile number must not reach the arithmetic.
    return found if found is not None and 1 <= found <= MAX_HEADS else None


#: The largest TP :func:`split_ranks` tries (a constant: no number from a file sets
#: how long it loops). Above it the all-reduce latency dominates every step.
MAX_SPLIT_SEARCH = 128


def split_ranks(heads: int | None, kv_heads: int | None, mla: bool) -> tuple[int, ...] | None:
    """Every TP above 1 (up to :data:`MAX_SPLIT_SEARCH`) the engines accept for
    ``heads`` query heads: t divides H, and for GQA t divides the KV heads or is a
    multiple of them (vLLM ``ModelConfig.verify_with_parallel_config`` and
    ``QKVParallelLinear``, which replicates KV heads when t > KV); MLA's one latent
    head is on every rank. ``None`` when H is unknown (the splits cannot be told);
    ``()`` when none exists (one query head). Llama-3.1-8B (H 32, KV 8): 2, 4, 8, 16, 32.
    """
    if heads is None:
        return None
    kv = heads if kv_heads is None else kv_heads
    return tuple(
        t
        for t in range(2, min(heads, MAX_SPLIT_SEARCH) + 1)
        if heads % t == 0 and (mla or kv % t == 0 or t % kv == 0)
    )


class Grouping(NamedTuple):
    """G as the tile rule uses it, and which G it is (docs/theory.md#attention-tiles,
    docs/theory.md#step-time-model).

    Attributes:
        value: G per rank when H and TP are known: (H/t)/max(1, KV/t) for GQA (vLLM's
            ``QKVParallelLinear`` holds ``max(1, KV/t)`` KV heads per rank, replicating
            them when t > KV), H/t for MLA, H/KV with attention data parallelism; else
            the model's G (H/KV, or as stated); ``None`` when unknown.
        tensor_parallel: t when known (stated, or the serving config's), else ``None``
            (the model's G is then the G at TP 1: no split has more rows).
        per_rank: ``value`` is split by a known t > 1.
        heads, kv_heads: the query and KV heads of one rank (``None`` when H is
            unknown).
    """

    value: Fraction | None
    tensor_parallel: int | None = None
    per_rank: bool = False
    heads: Fraction | None = None
    kv_heads: int | None = None

    def describe(self) -> str:
        """Which G this is, for a finding's text: ``G = 4 per rank (TP 8: 4 query
        heads over 1 KV head)``, ``G = 8``, ``G = 8 (the model's; TP not stated)``."""
        assert self.value is not None
        shown = f"G = {fmt(self.value)}"
        t = self.tensor_parallel
        if self.per_rank and self.heads is not None and self.kv_heads is not None:
            return (
                f"{shown} per rank (TP {t}: {fmt(self.heads)} query heads over "
                f"{self.kv_heads} KV head{'s' if self.kv_heads != 1 else ''})"
            )
        if t is None:
            return f"{shown} (the model's; TP not stated)"
        if t > 1:
            return f"{shown} (as stated, not split by TP {t}: H and KV unknown)"
        return shown


def query_heads_per_kv(deployment: "Deployment") -> Grouping:
    """G on one rank of ``deployment`` (see :class:`Grouping`): H and KV stated or
    from the model config, TP stated or from the serving config. Llama-3.1-70B (H 64,
    KV 8) at TP 16: (64/16)/max(1, 8/16) = 4 per rank, not 8."""
    model = deployment.model
    inputs = deployment.inputs
    shape = inputs.model if inputs else None
    engine = inputs.engine if inputs else None
    heads = model.query_heads if model.query_heads is not None else (
        shape.query_heads if shape else None
    )
    kv = model.kv_heads if model.kv_heads is not None else (shape.kv_heads if shape else None)
    mla = model.mla or (shape is not None and shape.mla)
    t = tensor_parallel(deployment)
    given = model.query_heads_per_kv
    if heads is None or (not mla and kv is not None and heads % kv):
        return Grouping(given, t)  # heads that do not split over KV heads are SG001
    split = t or 1
    if engine is not None and engine.attention_data_parallel:
        split = 1  # every rank holds all heads of its share of the sequences
    ranks = split_ranks(heads, kv, mla) or ()
    if split > 1 and split not in ranks:
        return Grouping(given, t)  # a split the engines refuse (SG001 / SG307)
    per_rank = Fraction(heads, split)
    if mla:
        return Grouping(per_rank, t, split > 1, per_rank, 1)
    kv_rank = max(1, (kv if kv is not None else heads) // split)
    return Grouping(per_rank / kv_rank, t, split > 1, per_rank, kv_rank)


def context_cap(deployment: "Deployment") -> tuple[int | None, str]:
    """The longest context the deployment can hold, and where that limit is written:
    the engine config's served maximum, else the model config's
    ``max_position_embeddings``."""
    inputs = deployment.inputs
    engine = inputs.engine if inputs else None
    shape = inputs.model if inputs else None
    if engine is not None and engine.max_model_len is not None:
        return engine.max_model_len, f"the served maximum of {engine.path}"
    if shape is not None and shape.max_position_embeddings is not None:
        return shape.max_position_embeddings, f"the model's maximum ({shape.path})"
    return None, ""


def problems(deployment: "Deployment") -> list[Problem]:
    """Every bad combination of step-time inputs in ``deployment`` (its values merged
    with its referenced files' when those were read)."""
    found: list[Problem] = []
    model = deployment.model
    path = deployment.path

    def add(key: tuple[str, ...], message: str) -> None:
        found.append((path(*key), f"{format_path(path(*key))} {message}"))

    total, total_from = total_parameters(deployment)
    if model.active_parameters_b is not None and total is not None and (
        model.active_parameters_b * 1e9 > total * (1 + 1e-9)
    ):
        add(
            ("model", "active_parameters_b"),
            f"{fmt(model.active_parameters_b)} is above the total "
            f"{fmt(total / 1e9)} B ({total_from}): active parameters are part of the total",
        )
    experts, top_k = model.experts, model.experts_per_token
    if experts is not None and top_k is not None and top_k > experts:
        add(
            ("model", "experts_per_token"),
            f"is inconsistent: {top_k} experts per token but only {experts} routed experts "
            "(a token cannot be routed to more experts than the model has)",
        )
    found.extend(_tensor_parallel_problems(deployment))
    found.extend(_tree_problems(deployment))
    context = deployment.workload.context_length
    cap, cap_from = context_cap(deployment)
    if context is not None and cap is not None and context > cap:
        add(
            ("workload", "context_length"),
            f"{fmt(context)} exceeds {cap_from}, {cap:,} tokens: no sequence can hold a "
            "longer context",
        )
    return found


def _tensor_parallel_problems(deployment: "Deployment") -> list[Problem]:
    """``hardware.tensor_parallel`` must split the heads evenly: the query heads by t,
    and the KV heads by t or t by the KV heads (replication). vLLM refuses otherwise
    (``ModelConfig.verify_with_parallel_config``; the KV split in
    ``QKVParallelLinear``); an engine config's TP is judged by SG307 instead."""
    t = deployment.hardware.tensor_parallel
    model = deployment.model
    if t is None or t <= 1:
        return []
    shape = deployment.inputs.model if deployment.inputs else None
    heads = (
        model.query_heads
        if model.query_heads is not None
        else (shape.query_heads if shape else None)
    )
    kv = model.kv_heads if model.kv_heads is not None else (shape.kv_heads if shape else None)
    if model.mla or (shape is not None and shape.mla):
        kv = None  # one latent KV head, replicated on every rank
    where = deployment.path("hardware", "tensor_parallel")
    shown = format_path(where)
    if heads is not None and heads % t != 0:
        return [
            (
                where,
                f"{shown} {t} does not divide the {heads} query heads: the engines refuse to "
                "shard attention this way",
            )
        ]
    if kv is not None and kv % t != 0 and t % kv != 0:
        return [
            (
                where,
                f"{shown} {t} does not divide the {kv} KV heads (nor is it a multiple of "
                "them): the engines refuse to shard the KV heads this way",
            )
        ]
    return []


def _tree_problems(deployment: "Deployment") -> list[Problem]:
    """``speculation.tree_level_nodes``: one entry per level (the depth D) whose sum is
    N_verify − 1 (every node but the root)."""
    spec = deployment.speculation
    levels = spec.tree_level_nodes
    if not levels:
        return []
    where = deployment.path("speculation", "tree_level_nodes")
    shown = format_path(where)
    nodes = sum(levels)
    if spec.draft_length is not None and len(levels) != spec.draft_length:
        return [
            (
                where,
                f"{shown} has {len(levels)} levels but the tree's depth D is "
                f"{spec.draft_length}: give one node count per level",
            )
        ]
    if spec.verify_tokens is not None and nodes != spec.verify_tokens - 1:
        return [
            (
                where,
                f"{shown} adds up to {nodes} nodes but N_verify − 1 = {spec.verify_tokens - 1}: "
                "the target scores the root and every draft node",
            )
        ]
    if nodes + 1 > 1025:
        return [(where, f"{shown} adds up to {nodes} nodes, over the 1,024 allowed")]
    return []
