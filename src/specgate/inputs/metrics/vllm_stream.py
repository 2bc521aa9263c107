"""A vLLM V1 log of any size read in bounded memory, with running sums (issue 25).

A serving log grows without limit (a real one of 40 MiB passed the 32 MiB of lines
:mod:`.stream` keeps; a day of a busy server is gigabytes). For the standard V1 lines
(``SpecDecoding metrics: … Accepted: A tokens, Drafted: T tokens, Per-position acceptance
rate: r1, …, rk``, as :func:`.vllm_log._fast_v1` reads them) nothing needs holding:
AL = 1 + ΣA / Σ(T/k) and the rates are draft-weighted sums. :func:`stream_vllm_v1`
reads the file in :data:`WINDOW` bytes at a time (cut at a line end), finds the label
lines of each window with C-level scans (``bytes.find``, two passes: the V1 label and
the V0 one; no Python step per line of the file), reads them as
:func:`.vllm_log._fast_v1` does and adds them to running sums; memory is one window
plus the label lines of one window, whatever the file's size.

It answers only when the label lines of every window are those lines in that form (and
no V0 line stands anywhere), with one k and printed means on all lines or none (the
per-line reader's own conditions for its column-wise fast path); otherwise it returns
None and the log is read as before (:func:`.stream.read_filtered` and
:func:`.vllm_log.read_vllm_log`, with their bounds), so both give the same AL
(``tests/inputs/test_vllm_stream.py`` holds them to it).
"""

from __future__ import annotations

import math
import operator
from pathlib import Path
from typing import NamedTuple

from specgate.core.errors import InputError, UnusableMeasurement
from specgate.inputs.metrics._common import DECIMAL, EXACT_COUNT
from specgate.inputs.metrics.vllm_log import (
    _MEAN_AT,
    _MEAN_ROUNDING,
    _V1_TAIL,
    _check_printed_means,
    _Columns,
    _Sums,
    pooled,
    printed,
    printed_drafts,
)
from specgate.inputs.types import Acceptance
from specgate.load.document import Span

#: Bytes read at a time (a line longer than this makes the log fall back).
WINDOW = 8 * 1024 * 1024
_LABEL = b"SpecDecoding metrics"
#: V0 lines, which the per-line reader's filter keeps beside the V1 ones.
_V0_LABEL = b"Speculative metrics"
#: Text in the label lines that sends the log to the per-line reader (V0 counters, the
#: offline example's totals, a NUL byte it refuses).
_OTHERS = ("emitted tokens", "num_drafts", "\x00")


class _Fallback(Exception):
    """The log holds something the per-line reader must judge."""


class _State(NamedTuple):
    sums: _Sums
    k: int
    has_means: bool | None
    disagree: bool
    drafts: float  # drafts recovered from printed means (used when some line disagrees)
    only: float | None
    same: bool  # every printed mean so far equals ``only``
    span: Span | None


def _label_lines(buf: bytes, lo: int, hi: int) -> tuple[bytes, int]:
    """The lines of ``buf[lo:hi]`` (whole lines) holding the label, joined by ``\n``,
    and the offset of the first one (-1 for none)."""
    parts: list[bytes] = []
    first = -1
    at = buf.find(_LABEL, lo, hi)
    while at >= 0:
        newline = buf.rfind(b"\n", lo, at)
        start = lo if newline < 0 else newline + 1
        end = buf.find(b"\n", at, hi)
        end = hi if end < 0 else end
        parts.append(buf[start:end])
        first = start if first < 0 else first
        at = buf.find(_LABEL, end, hi)
    return b"\n".join(parts), first


def _rows(text: str) -> tuple[int, list[int], list[int], list[float], list[float | None] | None]:
    """k, Accepted, Drafted, the rates (flat) and the printed means (or None) of the
    label lines ``text`` of a window, as :func:`.vllm_log._fast_v1` reads them."""
    rows = _V1_TAIL.findall(text)
    labelled = text.count("SpecDecoding metrics")
    if (
        not rows
        or len(rows) != text.count("Accepted: ")
        or len(rows) != labelled
    ):
        raise _Fallback
    raws = list(map(operator.itemgetter(2), rows))
    widths = set(map(operator.methodcaller("count", "."), raws))
    k = widths.pop() if len(widths) == 1 else 0
    means_text = _MEAN_AT.findall(text)
    if not k:
        raise _Fallback
    if means_text and (len(means_text) != len(rows) or not all(map(DECIMAL.fullmatch, means_text))):
        raise _Fallback
    try:
        rates = list(map(float, filter(None, ",".join(raws).replace(" ", "").split(","))))
        accepted = list(map(int, map(operator.itemgetter(0), rows)))
        drafted = list(map(int, map(operator.itemgetter(1), rows)))
        means: list[float | None] | None = list(map(float, means_text)) if means_text else None
    except ValueError:
        raise _Fallback from None
    if not all(map(math.isfinite, rates)) or (
        means and not all(m is not None and math.isfinite(m) for m in means)
    ):
        raise _Fallback
    if len(rates) != k * len(rows) or max(*accepted, *drafted) > EXACT_COUNT:
        raise _Fallback
    return k, accepted, drafted, rates, means


def _window(
    buf: bytes, lo: int, hi: int, state: _State | None, line_base: int, *, shown: str
) -> _State | None:
    """``state`` with the label lines of the window ``buf[lo:hi]`` (whole lines, the
    first of them line ``line_base``) added. Raises :class:`_Fallback` when the window
    needs the per-line reader."""
    if buf.find(_V0_LABEL, lo, hi) >= 0:
        raise _Fallback
    raw, first = _label_lines(buf, lo, hi)
    if first < 0:
        return state  # the per-line reader's filter drops every line here too
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Fallback from None
    if any(other in text for other in _OTHERS):
        raise _Fallback
    k, accepted, drafted, rates, means = _rows(text)
    if state is not None and k != state.k:
        raise _Fallback
    if state is not None and state.has_means is not None and (means is not None) != state.has_means:
        raise _Fallback
    has_means = means is not None
    span = state.span if state is not None else None
    if span is None:
        span = Span(line_base + buf.count(b"\n", lo, first), 1)
    cols = _Columns(accepted, drafted, rates, means, span)
    lines_before = state.sums.lines if state is not None else 0
    if means is not None:
        try:
            _check_printed_means(cols, means, k, shown)
        except InputError as exc:  # numbered within the window: renumber from the file
            raise _renumbered(exc, lines_before) from None
    prior = state.sums if state is not None else _Sums(0, 0, 0, (0,) * k, False)
    assert prior.positions is not None
    sums = _Sums(
        prior.lines + len(accepted),
        sum(accepted, prior.accepted),
        sum(drafted, prior.drafted),
        tuple(
            sum(map(operator.mul, rates[i::k], drafted), prior.positions[i]) for i in range(k)
        ),
        prior.ragged or any(map(k.__rmod__, drafted)),
    )
    disagree = (state.disagree if state is not None else False) or (
        means is not None
        and any(
            m is not None and d > 0 and abs(1 + a * k / d - m) > _MEAN_ROUNDING
            for a, d, m in zip(accepted, drafted, means, strict=True)
        )
    )
    drafts = state.drafts if state is not None else 0.0
    only = state.only if state is not None else (means[0] if means else None)
    same = state.same if state is not None else True
    if means is not None:
        drafts = printed_drafts(accepted, drafted, means, drafts)
        same = same and all(m == only for m in means)
    return _State(sums, k, has_means, disagree, drafts, only, same, span)


def _renumbered(exc: InputError, before: int) -> InputError:
    reason = exc.reason
    if before and reason.startswith("SpecDecoding line "):
        number, _, rest = reason[len("SpecDecoding line ") :].partition(":")
        reason = f"SpecDecoding line {int(number) + before}:{rest}"
    if isinstance(exc, UnusableMeasurement):  # still SG316, not the end of the run
        return UnusableMeasurement(reason, exc.file, exc.line, exc.column, severity=exc.severity)
    return InputError(reason, exc.file, exc.line, exc.column)


def stream_vllm_v1(path: Path, shown: str) -> Acceptance | None:
    """AL of the vLLM V1 log at ``path`` from running sums (module doc), or None when
    the log needs the per-line reader.

    Raises:
        InputError: the file cannot be read; a printed mean impossible beside its
            counts; zero drafted tokens (as :func:`.vllm_log.read_vllm_log`).
    """
    state: _State | None = None
    line_base = 1
    carry = b""

    def step(buf: bytes, lo: int, hi: int) -> None:
        nonlocal state, line_base
        if hi > lo:
            state = _window(buf, lo, hi, state, line_base, shown=shown)
            if state is None or state.span is None:  # lines are counted until the first
                line_base += buf.count(b"\n", lo, hi)

    try:
        with path.open("rb") as handle:
            while chunk := handle.read(WINDOW):
                first = chunk.find(b"\n")
                if first < 0:  # no line ends here: the line goes on
                    carry += chunk
                    if len(carry) > WINDOW:
                        return None  # a line longer than a window
                    continue
                head = carry + chunk[: first + 1]  # the line cut by the last chunk
                step(head, 0, len(head))
                cut = chunk.rfind(b"\n") + 1
                step(chunk, first + 1, cut)  # whole lines, read in place
                carry = chunk[cut:]
            step(carry, 0, len(carry))
    except _Fallback:
        return None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", shown) from None
    if state is None or state.span is None:
        return None
    if state.disagree:
        only = state.only if state.same else None
        return printed(
            state.sums.accepted, state.drafts, only, state.sums.lines, shown=shown, span=state.span
        )
    return pooled(state.sums, state.k, shown, state.span)
