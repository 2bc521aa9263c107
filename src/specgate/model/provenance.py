"""``evidence.provenance``: where a measured AL comes from (docs/change-gate.md#provenance-rules).

The block records when and under which conditions the evidence was measured, so
the rules SG405–SG409 can tell evidence that no longer describes the deployment:
too old, at another temperature or concurrency, on too few steps, or for another
speculative configuration (``config_digest``, see :mod:`specgate.analysis.digest`).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$"
)


@dataclass(frozen=True)
class Provenance:
    """The typed ``evidence.provenance`` block; ``None`` means not given (or invalid).

    Attributes:
        measured_at: the UTC date of the measurement.
        temperature: sampling temperature of the measurement (≥ 0).
        top_p: nucleus sampling p, in (0, 1].
        concurrency: sequences decoding at once during the measurement (≥ 1).
        steps: verification steps counted (≥ 1).
        config_digest: ``sha256:`` + 16 hex digits of the configuration measured.
        chat_template: ``sha256:`` + 16 hex digits of the chat template measured
            (``specgate digest --chat-template FILE``).
        engine: the engine measured; engine_version, served_model and max_model_len:
            what the engine reported about itself (``specgate measure`` asks vLLM's
            ``/version`` and ``/v1/models``).
        engine_version, target_revision, draft_revision, dataset, hardware: free text.
    """

    measured_at: dt.date | None = None
    temperature: float | None = None
    top_p: float | None = None
    concurrency: int | None = None
    steps: int | None = None
    config_digest: str | None = None
    engine_version: str | None = None
    target_revision: str | None = None
    draft_revision: str | None = None
    dataset: str | None = None
    hardware: str | None = None
    chat_template: str | None = None
    engine: str | None = None
    served_model: str | None = None
    max_model_len: int | None = None


def parse_measured_at(text: str) -> dt.date | None:
    """The UTC date of a ``YYYY-MM-DD`` date or an RFC 3339 date-time.

    Returns ``None`` for text of another shape or an impossible date
    (``2025-02-30``, hour 24).
    """
    timed = _TIME.fullmatch(text)
    try:
        if timed:
            year, month, day, hour, minute = (int(timed.group(i)) for i in range(1, 6))
            second = int(timed.group(6) or 0)
            zone = timed.group(7)
            offset = dt.timedelta(0)
            if zone not in ("Z", "z"):
                sign = 1 if zone[0] == "+" else -1
                offset = sign * dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
            moment = dt.datetime(
                year, month, day, hour, minute, min(second, 59), tzinfo=dt.timezone(offset)
            )
            return moment.astimezone(dt.timezone.utc).date()
        plain = _DATE.fullmatch(text)
        if plain and len(text) == 10:
            return dt.date(int(plain.group(1)), int(plain.group(2)), int(plain.group(3)))
    except ValueError:
        return None
    return None


def _number(block: dict[str, Any], key: str) -> float | None:
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _count(block: dict[str, Any], key: str) -> int | None:
    value = block.get(key)
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer() and value <= 2**53:
        value = int(value)
    # at most 2**53, the schema's maxima (a larger count is SG001 there, never int(1e308))
    return value if isinstance(value, int) and 1 <= value <= 2**53 else None


def _text(block: dict[str, Any], key: str) -> str | None:
    value = block.get(key)
    return value if isinstance(value, str) else None


def build_provenance(raw: object) -> Provenance | None:
    """The typed block from its parsed mapping (``None`` when absent).

    Values that break the schema are left out (SG001 reports them).
    """
    if not isinstance(raw, dict):
        return None
    measured = _text(raw, "measured_at")
    temperature = _number(raw, "temperature")
    top_p = _number(raw, "top_p")
    digest = _text(raw, "config_digest")
    return Provenance(
        measured_at=parse_measured_at(measured) if measured is not None else None,
        temperature=temperature if temperature is not None and temperature >= 0 else None,
        top_p=top_p if top_p is not None and 0 < top_p <= 1 else None,
        concurrency=_count(raw, "concurrency"),
        steps=_count(raw, "steps"),
        config_digest=_digest(digest),
        engine_version=_text(raw, "engine_version"),
        target_revision=_text(raw, "target_revision"),
        draft_revision=_text(raw, "draft_revision"),
        dataset=_text(raw, "dataset"),
        hardware=_text(raw, "hardware"),
        chat_template=_digest(_text(raw, "chat_template")),
        engine=_text(raw, "engine"),
        served_model=_text(raw, "served_model"),
        max_model_len=_count(raw, "max_model_len"),
    )


def _digest(value: str | None) -> str | None:
    return value if value is not None and DIGEST_SHAPE.fullmatch(value) else None


MEASURED_AT_SHAPE = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2}))?$(?!\n)"
)
"""The schema's pattern for ``measured_at`` (``$(?!\n)``: the end of the text in Python's
re as in ECMA-262, where ``$`` alone also matches before a trailing line break, which
let "2025-01-01\n" through): text of this shape that is no real date
(``2025-02-30``) is reported by the builder, the rest by the schema."""

DIGEST_SHAPE = re.compile(r"^sha256:[0-9a-f]{16}$(?!\n)")
"""The shape of a config digest (schema and ``specgate digest`` agree)."""
