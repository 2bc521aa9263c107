"""Several speculative configurations found in one file, judged as one when they are the same.

A guide repeats its command (a recipe's argv list and the ``vllm serve`` block of its
prose; the same launch shown for two platforms): identical configurations are one
(docs/engines.md#what-users-publish). Two readings are the same configuration when every field that
both state agrees: the mechanism, D, N_verify, whether D is a maximum, lossy acceptance, target and
draft TP, attention data parallelism, the draft and target models, the context cap, the
draft passes, the engine version in force and the engine issues (code, field, severity).
A field one of them leaves unstated (the argv list names no TP; the guide's command does)
does not make them differ. The reading that states the most fields stands for all of them,
with a note naming the others; when any field differs, the input error lists every
configuration and says what differs, so the user picks one with ``pointer:``.

At most :data:`MAX_COMPARED` configurations are read to compare; more is the input error
without reading them (a file of 10,000 commands is not read 10,000 times).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from specgate.core.errors import InputError, OutOfBounds, RefusedValue
from specgate.inputs.engines.unread import NotStarted
from specgate.inputs.pointer import Found, several_configurations
from specgate.inputs.types import EngineConfig

#: Configurations read to judge whether they are one; past this, the input error.
MAX_COMPARED = 32

#: The fields that make two readings the same configuration (``None``: unstated).
_FIELDS = (
    "engine",
    "mechanism",
    "draft_length",
    "verify_tokens",
    "draft_length_is_max",
    "draft_length_moves",
    "lossy_acceptance",
    "tensor_parallel_size",
    "attention_data_parallel",
    "draft_model",
    "max_model_len",
    "target_model",
    "draft_passes",
    "draft_tensor_parallel_size",
    "version",
)
#: Fields read as False when unstated: False and True differ only when one is stated.
_FLAGS = frozenset({"draft_length_is_max", "lossy_acceptance", "attention_data_parallel"})


def one_configuration(
    configs: Sequence[Found],
    read: Callable[[Found], EngineConfig],
    *,
    where: str,
    file: str,
) -> EngineConfig:
    """The one configuration ``configs`` (two or more, in document order) stand for.

    Args:
        configs: what the search found.
        read: reads one of them (the engine reader, target, version, removed settings).
        where: ``FILE`` or ``FILE at POINTER``, for the message.
        file: the file as shown.

    Returns:
        the reading that states the most fields (the first of those on a tie), with a
        note naming the configurations it stands for.

    Raises:
        InputError: more than :data:`MAX_COMPARED`; one that cannot be read; two that
        differ in a field both state (naming it and both values).
    """
    if len(configs) > MAX_COMPARED:
        raise several_configurations(configs, where, file)
    readings: list[EngineConfig] = []
    for found in configs:
        try:
            readings.append(read(found))
        except (OutOfBounds, RefusedValue, NotStarted):
            raise  # a number past a bound (SG315), a value not of its type (SG307), a
            # container the platform does not start (SG312): a finding at its line,
            # not a read error
        except InputError as exc:
            raise several_configurations(
                configs, where, file, f"{found.label()} cannot be read: {exc.reason}"
            ) from None
    for index, reading in enumerate(readings[1:], start=1):
        for other in range(index):
            why = _difference(readings[other], reading)
            if why is not None:
                raise several_configurations(
                    configs,
                    where,
                    file,
                    f"{configs[other].label()} and {configs[index].label()} differ in {why}",
                )
    best = max(range(len(readings)), key=lambda i: (_stated(readings[i]), -i))
    others = ", ".join(f.label() for i, f in enumerate(configs) if i != best)
    note = (
        f"the same speculative configuration stands at {others} and "
        f"{configs[best].label()}: read once, from {configs[best].pointer or '/'}"
    )
    return replace(readings[best], notes=(note, *readings[best].notes))


def _key(config: EngineConfig, name: str) -> object:
    if name == "issues":
        return sorted((i.code, i.field, i.severity or "") for i in config.issues)
    value = getattr(config, name)
    if name in _FLAGS and value is False:
        return None
    if (
        name == "draft_tensor_parallel_size"
        and config.tensor_parallel_size is None
        and not config.resolution.get("draft_tp_stated")
    ):
        return None  # filled from a target TP the file does not state
    return value


def _difference(a: EngineConfig, b: EngineConfig) -> str | None:
    """The first field both state with different values, as ``"D (1 and 3)"``."""
    for name in _FIELDS:
        left, right = _key(a, name), _key(b, name)
        if left is not None and right is not None and left != right:
            return f"{_SHOWN.get(name, name)} ({left} and {right})"
    if _key(a, "issues") != _key(b, "issues"):
        codes = sorted({i.code for i in (*a.issues, *b.issues)})
        return f"what the engine makes of them ({', '.join(codes)})"
    return None


_SHOWN = {"draft_length": "D", "verify_tokens": "N_verify", "tensor_parallel_size": "TP"}


def _stated(config: EngineConfig) -> int:
    return sum(_key(config, name) is not None for name in _FIELDS)
