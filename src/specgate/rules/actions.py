"""Next actions that name where each value lives (docs/reports.md#next-actions).

A rule's next action names the claims-file key it wants changed
(``Set speculation.draft_length to 3``). When that value is read from a referenced file
— D from the serving config, H and KV from the model's ``config.json``, AL from a
metrics file — changing the claims key alone changes nothing that runs (or makes SG301
fire), so the action names the file and line where the value is set, and the claims key
too when the claims file states it as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from specgate.load.document import NodePath

if TYPE_CHECKING:
    from specgate.load.document import Span
    from specgate.model.deployment import Deployment

#: claims key → (the referenced record, its field, how the value is called).
_REFERENCED: dict[str, tuple[str, str, str]] = {
    "speculation.draft_length": ("engine", "draft_length", "D"),
    "speculation.verify_tokens": ("engine", "verify_tokens", "N_verify"),
    "speculation.mechanism": ("engine", "mechanism", "the mechanism"),
    "model.query_heads": ("model", "query_heads", "H"),
    "model.kv_heads": ("model", "kv_heads", "the KV heads"),
    "evidence.accept_length": ("acceptance", "accept_length", "AL"),
}


@cache
def _keys() -> re.Pattern[str]:
    """The referenced keys as whole words (compiled for the first action placed)."""
    return re.compile(r"\b(" + "|".join(re.escape(k) for k in _REFERENCED) + r")\b(?![.\w])")


def _home(deployment: Deployment, key: str) -> tuple[str, Span | None] | None:
    """The referenced file (as shown) and span where ``key``'s value is set, else None."""
    inputs = deployment.inputs
    if inputs is None:
        return None
    record_name, field, _ = _REFERENCED[key]
    record = getattr(inputs, record_name)
    if record is None or record.path is None:
        return None
    value = getattr(record, field, None)
    if value is None:
        return None
    span = record.spans.get(field)
    if span is None and record_name != "acceptance":
        return None  # the reader derived it (a default), nothing in the file to edit
    return record.path, span


def placed(action: str, deployment: Deployment, states: Callable[[NodePath], bool]) -> str:
    """``action`` with each claims key whose value a referenced file sets replaced by that
    place: ``Set speculation.draft_length to 3`` → ``Set D in serving/vllm.yaml (line 7)
    to 3``; ``… D in serving/vllm.yaml (line 7) and speculation.draft_length …`` when
    the claims file states it too (``states`` tells, by node path)."""

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        home = _home(deployment, key)
        if home is None:
            return key
        path, span = home
        where = f"{_REFERENCED[key][2]} in {path}" + (f" (line {span.line})" if span else "")
        if states(deployment.path(*key.split("."))):
            return f"{where} and {key}"
        return where

    return _keys().sub(replace, action)
