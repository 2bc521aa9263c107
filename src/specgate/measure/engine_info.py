"""What a live engine reports about itself, for the evidence's provenance (DESIGN.md §14).

``specgate measure --metrics-url URL`` scrapes a running vLLM server; the same server
answers ``GET /version`` (``{"version": "0.32.0"}``, ``vllm/entrypoints/openai/
api_server.py``) and ``GET /v1/models`` (the OpenAI model list; vLLM adds each model's
``max_model_len``, ``vllm/entrypoints/openai/protocol.py`` ``ModelCard``). Those answers
go into ``evidence.provenance`` as ``engine``, ``engine_version``, ``served_model`` and
``max_model_len``: the measurement then says which engine release and which model it
came from, in the engine's own words rather than the user's.

Recorded from a real vLLM 0.32.0 (CPU) server: tests/data/real/vllm/measured/
vllm-cpu-0.32/version.json and models.json.

Everything here is untrusted input: bodies are capped, each value must have the shape
it should (a version of at most 64 characters of ``[0-9A-Za-z.+_-]``, a model name of
printable characters, a context length between 1 and 2^31), and anything else is left
out, never written. An engine that does not answer is no error: the provenance then
holds what ``measure`` measured, and one line on standard error says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from specgate.core.errors import InputError

MAX_INFO_BYTES = 1024 * 1024
"""A /version or /v1/models answer larger than this is not read."""
MAX_CONTEXT = 2**31
#: A release as engines print it; matched whole (``fullmatch``: ``$`` alone would let
#: "0.32.0\n" through, as the hostile review found).
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")
_MODEL_LIMIT = 256


@dataclass(frozen=True)
class EngineFacts:
    """What the engine said (``provenance`` keys → values) and why anything is missing."""

    provenance: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def server_root(metrics_url: str) -> str:
    """The server's base address: ``http://h:8000/metrics`` → ``http://h:8000``;
    a path ending in ``/metrics`` loses that segment, any other path is kept."""
    parts = urlsplit(metrics_url)
    path = parts.path.rstrip("/")
    if path.endswith("/metrics"):
        path = path[: -len("/metrics")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _json(url: str, timeout: float) -> Any:
    from specgate.measure.scrape import scrape

    text = scrape(url, timeout, limit=MAX_INFO_BYTES)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise InputError(f"{url}: not JSON") from None


def _model_name(value: object) -> str | None:
    if not isinstance(value, str) or not 0 < len(value) <= _MODEL_LIMIT:
        return None
    return value if value.isprintable() else None


def _context(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_CONTEXT


def ask_vllm(metrics_url: str, timeout: float, labels: Mapping[str, str]) -> EngineFacts:
    """Ask the vLLM server behind ``metrics_url`` for its version and served model.

    ``labels`` (``--labels``) picks the model when the server lists several
    (``model_name`` is the served model's name in vLLM's metrics).
    """
    root = server_root(metrics_url)
    found: dict[str, Any] = {}
    notes: list[str] = []
    try:
        answer = _json(root + "/version", timeout)
        version = answer.get("version") if isinstance(answer, dict) else None
        if isinstance(version, str) and _VERSION.fullmatch(version):
            found["engine"] = "vllm"
            found["engine_version"] = version
        else:
            notes.append(f"{root}/version gave no version")
    except InputError as exc:
        notes.append(f"cannot ask the engine its version: {exc.one_line()}")
    try:
        answer = _json(root + "/v1/models", timeout)
        models = answer.get("data") if isinstance(answer, dict) else None
        cards = [m for m in models if isinstance(m, dict)] if isinstance(models, list) else []
        wanted = labels.get("model_name")
        if wanted is not None:
            cards = [m for m in cards if m.get("id") == wanted]
        if len(cards) == 1:
            name = _model_name(cards[0].get("id"))
            if name is not None:
                found["served_model"] = name
            length = cards[0].get("max_model_len")
            if _context(length):
                found["max_model_len"] = length
        elif cards:
            notes.append(
                f"{root}/v1/models lists {len(cards)} models: name one with "
                "--labels model_name=…"
            )
        else:
            notes.append(f"{root}/v1/models lists no such model")
    except InputError as exc:
        notes.append(f"cannot ask the engine its models: {exc.one_line()}")
    return EngineFacts(found, tuple(notes))
