"""Small helpers shared by the metrics readers: numbers, formulas, located JSON.

A *locator* maps a node path inside a parsed record to its :class:`Span` in the
file, so every error and span points at the right line. Locating costs a walk over
the record (:mod:`.json_records`), so the number checks take a *where*: a span, or a
function giving it, called only when the check fails.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from specgate.core.errors import InputError, UnusableMeasurement
from specgate.core.limits import MAX_DRAFT_LENGTH, MAX_INTEGER_DIGITS, bounded_int
from specgate.inputs.types import Acceptance
from specgate.load.document import NodePath, Span

Locator = Callable[[NodePath], Span]
KeyLocator = Callable[[str], Span]
#: Where a checked value stands: a span, a function giving it (called only on
#: failure), or ``None`` (no position).
Where = Span | Callable[[], Span] | None


@dataclass(frozen=True)
class Record:
    """One parsed JSON value with the function that locates its parts in the file."""

    data: object
    locate: Locator


def fmt(value: float) -> str:
    """A number as shown in formulas: whole numbers without a point, else 6 digits
    (scientific from 10^15 on, never a 300-digit integer)."""
    if math.isfinite(value) and float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def json_repr(value: object) -> str:
    """A value as the metrics file wrote it: JSON's ``null``/``true``/``false``, not
    Python's ``None``/``True``/``False``."""
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def finite(total: float, what: str, shown: str, span: Where = None) -> float:
    """``total``, a sum of evidence numbers (each finite), when it is finite too.

    Raises:
        InputError: the numbers add up past a float's range (beyond 1e308): no count
            or rate follows from them (``numDraftTokens`` of 1e308 twice would make the
            acceptance rate 0).
    """
    if not math.isfinite(total):
        raise fail(
            f"{what} add up past a float's range (beyond 1e308): not a finite number", shown, span
        )
    return total


def fail(reason: str, shown: str, span: Where = None) -> InputError:
    """A value the metrics file's format forbids (a negative or fractional counter, a
    non-number where a count is required, counts no run can give), at ``span`` of
    ``shown`` (no position when ``None``): SG316 fails on the deployments that use the
    file (:class:`~specgate.core.errors.UnusableMeasurement`), not the end of the run."""
    return _unusable(reason, shown, span, "fail")


def unread(reason: str, shown: str, span: Where = None) -> InputError:
    """A metrics file that parses but holds its measurement in a form specgate does not
    read (no speculative counters found, records that cannot be pooled, a log of several
    configurations): SG316 warns on the deployments that use it."""
    return _unusable(reason, shown, span, "warn")


def _unusable(reason: str, shown: str, span: Where, severity: str) -> InputError:
    if callable(span):
        span = span()
    if span is None:
        return UnusableMeasurement(reason, shown, severity=severity)
    return UnusableMeasurement(reason, shown, span.line, span.column, severity=severity)


def at(locate: Locator, path: NodePath) -> Callable[[], Span]:
    """A *where* for ``path``: located only when a check fails."""
    return lambda: locate(path)


def real(value: object, what: str, shown: str, span: Where) -> float:
    """``value`` as a finite real number (not a boolean), else an error at ``span``
    (an integer too large for a float is refused too)."""
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise fail(f"{what} is out of range (beyond 1e308)", shown, span) from None
    raise fail(f"{what} must be a finite number, not {json_repr(value)}", shown, span)


def count(value: object, what: str, shown: str, span: Where) -> float:
    """``value`` as a non-negative whole count (``240.0`` allowed)."""
    number = real(value, what, shown, span)
    if number < 0 or not number.is_integer():
        raise fail(f"{what} must be a whole count ≥ 0, not {json_repr(value)}", shown, span)
    return number


def draft_count(value: object, what: str, shown: str, span: Where) -> int:
    """``value`` as a draft length D: a whole count from 0 to
    :data:`~specgate.core.limits.MAX_DRAFT_LENGTH` (1,024), checked before anything
    is sized by it (a per-position profile holds D entries: a 170-byte record naming
    ``num_spec_tokens: 10^11`` must not allocate 10^11 of them).

    Raises:
        InputError: not a whole count ≥ 0, or above the limit, at ``span``.
    """
    number = count(value, what, shown, span)
    if number > MAX_DRAFT_LENGTH:
        raise fail(
            f"{what} {fmt(number)} is above specgate's limit of {MAX_DRAFT_LENGTH} draft tokens",
            shown,
            span,
        )
    return int(number)


def whole_ratio(numerator: float, denominator: float) -> int | None:
    """``numerator / denominator`` when it is a positive whole number, else ``None``."""
    if denominator <= 0 or numerator <= 0:
        return None
    ratio = numerator / denominator
    if not math.isfinite(ratio):  # a subnormal denominator: no whole ratio
        return None
    return int(ratio) if abs(ratio - round(ratio)) < 1e-9 else None


def under(locate: Locator, prefix: NodePath) -> Locator:
    """A locator for the node at ``prefix`` (paths relative to it)."""
    return lambda path: locate((*prefix, *path))


#: A number as a log prints it, captured whole up to the next separator (``2.46.1``,
#: ``.nan``, ``-2`` and ``1e400`` are then refused by :func:`printed_number` at their
#: line, rather than read in part as ``2.46`` or passed over).
PRINTED_NUMBER = r"([^\s,;()\[\]]+)"
DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+")
_DIGITS = re.compile(r"[0-9]+")


def printed_number(text: str, what: str, shown: str, span: Where) -> float:
    """A non-negative decimal number as a log prints it (``2.46``, ``0.5``, ``1e-3``).

    Raises:
        InputError: anything else (``2.46.1``, ``.nan``, ``inf``, more than
            :data:`~specgate.core.limits.MAX_INTEGER_DIGITS` characters) or a value
            beyond a float's range, at ``span``.
    """
    if len(text) > MAX_INTEGER_DIGITS or not DECIMAL.fullmatch(text):
        raise fail(f"{what}: {text[:40]!r} is not a number", shown, span)
    value = float(text)
    if not math.isfinite(value):
        raise fail(f"{what}: {text[:40]!r} is out of range (beyond 1e308)", shown, span)
    return value


#: The largest count a float holds exactly; a log's token counts stay below it.
EXACT_COUNT = 2**53


def printed_count(text: str, what: str, shown: str, span: Where) -> int:
    """A whole count as a log prints it (ASCII digits), held to
    :data:`~specgate.core.limits.MAX_INTEGER_DIGITS` digits before any conversion and
    to :data:`EXACT_COUNT` after it (so sums of counts stay exact floats).

    Raises:
        InputError: not ASCII digits, too many of them, or above 2^53, at ``span``.
    """
    if not _DIGITS.fullmatch(text):
        raise fail(f"{what}: {text[:40]!r} is not a whole count", shown, span)
    value = bounded_int(text)
    if value is None:
        raise fail(
            f"{what}: a count of {len(text):,} digits is too long "
            f"(specgate's limit is {MAX_INTEGER_DIGITS:,} decimal digits)",
            shown,
            span,
        )
    if value > EXACT_COUNT:
        raise fail(f"{what}: a count above 2^53 is not an exact count", shown, span)
    return value


_NON_EMPTY = re.compile(r"[^\n]+")


def text_lines(text: str) -> Iterable[tuple[int, str]]:
    """``(1-based line number, line)`` pairs of the non-empty lines; linear in the
    text's length. Empty lines are skipped without a Python step each, so text
    pre-filtered to a few kept lines among blank ones (:mod:`.stream`) costs little."""
    number = 1
    position = 0
    for match in _NON_EMPTY.finditer(text):
        start = match.start()
        number += text.count("\n", position, start)
        position = start
        yield number, match.group()


def parse_rates(raw: str, what: str, shown: str, span: Span) -> tuple[float, ...]:
    """A comma list of rates as printed in logs (``0.54, 0.36, 0.26``)."""
    values: list[float] = []
    for piece in raw.split(","):
        part = piece.strip()
        if not part:
            continue
        values.append(printed_number(part, what, shown, span))
    return tuple(values)


def last_of_runs(values: Sequence[tuple[float, ...]]) -> tuple[tuple[float, ...], int]:
    """Sum running totals: the last row of each non-decreasing run, summed per column.

    Engines that print cumulative counters (vLLM V0, llama.cpp statistics) restart
    from zero when the process restarts; a drop in any column starts a new run
    (the Prometheus ``increase()`` convention). Returns the column sums and the
    number of runs.
    """
    if not values:
        return (), 0
    totals = [0.0] * len(values[0])
    runs = 1
    for previous, row in itertools.pairwise(values):
        if any(now < before for now, before in zip(row, previous, strict=True)):
            totals = [t + v for t, v in zip(totals, previous, strict=True)]
            runs += 1
    totals = [t + v for t, v in zip(totals, values[-1], strict=True)]
    return tuple(totals), runs


def split_padding(
    rates: Sequence[float], draft_length: int | None
) -> tuple[tuple[float, ...], int, int | None]:
    """A per-position list read against the D it was measured at: ``(kept, dropped,
    least)``. A list longer than D whose positions past D are all 0 is zero-padded
    (vLLM's offline ``spec_decode.py`` sizes its list by the script, not by D): the
    first D are kept and the rest dropped. One with a rate past D that is not 0 was
    measured at a D at least as long as its non-zero part (``least``). A list no
    longer than D, or D unknown, is kept whole."""
    if draft_length is None or not 0 < draft_length < len(rates):
        return tuple(rates), 0, None
    nonzero = max((i + 1 for i, m in enumerate(rates) if m != 0), default=0)
    if nonzero > draft_length:
        return tuple(rates), 0, nonzero
    return tuple(rates[:draft_length]), len(rates) - draft_length, None


def above_depth(histogram: Mapping[int, float], depth: int | None) -> int | None:
    """The largest accepted-draft count with steps that D = ``depth`` makes impossible
    (a step accepts at most D drafts), else ``None`` (also when D is unknown)."""
    if depth is None:
        return None
    over = [j for j, h in histogram.items() if j > depth and h > 0]
    return max(over) if over else None


def largest_accepted(histogram: Mapping[int, float]) -> int | None:
    """The largest accepted-draft count with steps in it (a lower bound on D)."""
    counts = [j for j, h in histogram.items() if h > 0]
    return max(counts) if counts else None


def survival(histogram: Mapping[int, float], depth: int | None) -> tuple[float, ...]:
    """Marginal rates from a histogram {accepted drafts j: steps}.

    m_i = Σ_{j ≥ i} h[j] / Σ h for i = 1 … depth (``depth`` defaults to the largest j).
    Callers bound ``depth`` and the counts first (:func:`draft_count`); a top above
    :data:`~specgate.core.limits.MAX_DRAFT_LENGTH` that slipped through gives no
    profile rather than a profile of that length.
    """
    steps = sum(histogram.values())
    if not math.isfinite(steps):
        return ()
    top = max(histogram, default=0) if depth is None else depth
    if top > MAX_DRAFT_LENGTH:
        return ()
    if steps <= 0:
        return ()
    return tuple(sum(h for j, h in histogram.items() if j >= i) / steps for i in range(1, top + 1))


def unweighted_mean(
    fmt_name: str, shown: str, values: list[str], first: Span, why: str
) -> Acceptance:
    """AL as the plain mean of printed interval values (``values`` as printed)."""
    numbers = [printed_number(value, "accept length", shown, first) for value in values]
    total = finite(sum(numbers), "the accept lengths", shown, first)
    if len(values) <= 8:
        formula = f"({' + '.join(values)})/{len(values)}" if len(values) > 1 else values[0]
    else:
        formula = f"{fmt(total)}/{len(values)}"
    return Acceptance(
        format=fmt_name,
        path=shown,
        accept_length=total / len(numbers),
        formula=formula,
        note=f"unweighted mean of {len(values)} logged interval value"
        f"{'s' if len(values) > 1 else ''} ({why}, so intervals are not step-weighted)",
        spans={"accept_length": first},
    )
