"""A tensor-parallel size below 1, judged by the engine's own refusal where its data
records one (docs/engines.md#refusals-and-rewrites).

No deployment runs on fewer than one GPU, but whether the engine refuses to start is a
fact of the engine at its version: vLLM's ``ParallelConfig`` bounds it (``Field(ge=1)``)
from 0.23.0 on (behaviour ``tensor-parallel-size-below-one-refused`` of its data, with
its lifetime). Where the data records that refusal and it holds at the version run
(pinned inside its lifetime, or unpinned with every release the settings allow inside
it) the value fails (SG307); anywhere else, and for an engine whose refusal was not
read, it warns.
"""

from __future__ import annotations

from specgate.inputs.engines._base import Builder, Context
from specgate.inputs.engines.lifetime import behaviour_at, behaviour_lifetime
from specgate.inputs.knowledge import EngineKnowledge, Version, knowledge, shown_version
from specgate.inputs.types import EngineIssue

#: The behaviour of an engine's data that refuses a tensor-parallel size below 1.
REFUSAL = "tensor-parallel-size-below-one-refused"


def below_one(
    engine: str,
    value: int,
    spelled: str,
    field_name: str,
    *,
    pinned: Version | None,
    judged: Version | None,
    low: Version | None,
) -> EngineIssue:
    """SG307 for a tensor-parallel size ``value`` < 1 written as ``spelled``: a fail
    where the engine's refusal holds (``pinned``: the version pinned, None when not;
    ``judged``: the newest release the settings allow, None for the newest known;
    ``low``: the oldest they allow), else a warning that says why."""
    data = knowledge(engine)
    at = pinned or judged or data.newest
    held = _held(data, pinned=pinned, judged=at, low=low)
    said = f"{spelled} is {value}; a deployment needs at least 1"
    if held == "holds":
        entry = data.behaviour(REFUSAL)
        return EngineIssue(
            "SG307",
            f"{said}: {data.display_name} {shown_version(engine, at)} refuses to start "
            f"('Input should be greater than or equal to 1'; {_source(data)})",
            field_name,
            details=str(entry.get("note", "")),
            action=f"Set {spelled} to the number of GPUs the model is split across (1 or more).",
        )
    return EngineIssue(
        "SG307",
        f"{said} ({_why(data, held, pinned)}): a warning, not a fail",
        field_name,
        "warn",
        action=f"Set {spelled} to the number of GPUs the model is split across (1 or more).",
    )


def at_least_one(
    b: Builder, value: int | None, ctx: Context, engine: str, spelled: str
) -> int | None:
    """A reader's tensor-parallel size: ``value``, or None (with :func:`below_one_at`'s
    issue on ``b``) when it is below 1."""
    if value is not None and value < 1:
        b.issues.append(below_one_at(ctx, engine, value, spelled))
        return None
    return value


def below_one_at(ctx: Context, engine: str, value: int, spelled: str) -> EngineIssue:
    """:func:`below_one` for a reader, at the version its context is read at, on the
    ``tensor_parallel_size`` field."""
    pinned = ctx.version if ctx.version_shown is None else None
    return below_one(
        engine,
        value,
        spelled,
        "tensor_parallel_size",
        pinned=pinned,
        judged=ctx.version,
        low=ctx.version_low,
    )


def _held(
    data: EngineKnowledge, *, pinned: Version | None, judged: Version, low: Version | None
) -> str:
    """``holds``, ``absent`` or ``unknown``: the refusal at the version pinned, or,
    unpinned, ``holds`` only when it holds at every release from ``low`` to ``judged``."""
    try:
        life = behaviour_lifetime(data, REFUSAL)
    except KeyError:
        return "unknown"
    if pinned is not None or life is None:
        return behaviour_at(data, REFUSAL, pinned or judged)
    return "holds" if life.throughout(low, judged) else "unknown"


def _source(data: EngineKnowledge) -> str:
    life = behaviour_lifetime(data, REFUSAL)
    return life.source if life is not None else ""


def _why(data: EngineKnowledge, held: str, pinned: Version | None) -> str:
    name = data.display_name
    try:
        life = behaviour_lifetime(data, REFUSAL)
    except KeyError:
        return f"where {name} refuses it was not read"
    if life is None:
        return f"{name} at this version is not known to refuse it"
    first = shown_version(data.engine, life.first)
    if pinned is None:
        return (
            f"{name} refuses it from {first} on ({life.source}), and the version run is "
            "not pinned: state speculation.engine_version to pin it"
        )
    at = shown_version(data.engine, pinned)
    if held == "absent":
        return f"{name} {at} declares no bound on it (its refusal came in {first}: {life.source})"
    return f"{name} refuses it from {first} on ({life.source}); whether {at} does is not known"
