"""vLLM's Prometheus counters (``/metrics`` scrapes) → AL.

Source: ``vllm-project/vllm:vllm/v1/spec_decode/metrics.py`` (V1) and
docs/engines.md docs/claims-file.md#format-rules. V1 counters:

- ``vllm:spec_decode_num_drafts_total``: verification steps that carried a draft;
- ``vllm:spec_decode_num_draft_tokens_total``: proposed draft tokens;
- ``vllm:spec_decode_num_accepted_tokens_total``: accepted drafts (no bonus token);
- ``vllm:spec_decode_num_accepted_tokens_per_pos_total{position="i"}``: steps whose
  first i+1 drafts were all accepted (created for positions 0 … k−1 at start-up).

AL = 1 + Δaccepted / Δdrafts; marginal_i = Δper_pos[i] / Δdrafts.

V0 (vLLM ≤ 0.7) has no drafts counter: AL = Δemitted / (Δdraft_tokens / k), with k
from the caller (``vllm:spec_decode_num_emitted_tokens_total``). V0's accepted
counter is not prefix-only, so 1 + accepted/steps would be wrong for it.

Samples are read by *sample* name: prometheus_client strips ``_total`` from
counter family names but keeps it on samples.

Label sets: vLLM labels these counters ``model_name`` (the served model name) and
``engine`` (the engine index: data-parallel engines of one server), plus
``position`` on the per-position counter (``vllm/v1/metrics/loggers.py``
``PrometheusStatLogger``: ``labelnames = ["model_name", "engine"]``;
``vllm/v1/spec_decode/metrics.py``). Series that differ only in ``engine`` (and
``position``) are one model's counters and are summed. Series that differ in any
other label (another ``model_name``, or labels a scraper added: ``instance``,
``pod``, ``job``) may be other models or servers: that is an input error listing
the label sets, unless ``labels`` selects one.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace

from prometheus_client.parser import text_string_to_metric_families

from specgate.core.errors import InputError
from specgate.inputs.metrics._common import (
    fail,
    finite,
    fmt,
    text_lines,
    unread,
    whole_ratio,
)
from specgate.inputs.types import Acceptance
from specgate.load.document import Span

PREFIX = "vllm:spec_decode_"
DRAFTS = "vllm:spec_decode_num_drafts_total"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
EMITTED = "vllm:spec_decode_num_emitted_tokens_total"
GENERATED = "vllm:generation_tokens_total"
"""Output tokens the server generated (``vllm/v1/metrics/loggers.py``
``counter_generation_tokens``): the tokens emitted, against which the accepted drafts
are cross-checked (:attr:`Acceptance.emitted_tokens`)."""

MAX_COUNT = float(2**53)
"""Counters above this are not exact in a float (no real server gets near it)."""

SeriesKey = tuple[str, frozenset[tuple[str, str]]]
Series = dict[SeriesKey, float]
SUMMED_LABELS = frozenset({"engine", "position"})
"""Labels whose series are one model's counters (data-parallel engine index, draft
position): summed (positions per position)."""


def read_prometheus(
    text: str,
    shown: str,
    *,
    baseline: tuple[str, str] | None = None,
    draft_length: int | None = None,
    labels: Mapping[str, str] | None = None,
) -> Acceptance:
    """AL from one scrape (cumulative) or the delta between ``baseline`` and it.

    Args:
        text, shown: the scrape after the window and its shown name.
        baseline: ``(text, shown)`` of the scrape before the window, if any.
        draft_length: k for V0 counters (ignored for V1, whose data states D).
        labels: label name → value a series must carry to be read (both scrapes).

    Returns:
        :class:`Acceptance` with ``formula`` ``"1 + Δaccepted/Δdrafts"`` in numbers,
        ``draft_length`` = Δdraft_tokens / Δdrafts when whole (checked against the
        per-position counters), ``marginal`` only when the per-position counters
        cover exactly positions 0 … D−1 and, with a baseline, are in both scrapes
        (else left out, with a note), ``spans["accept_length"]`` at the sample.

    Raises:
        InputError: not Prometheus text; no spec-decode samples (never AL = 1), or
            none with ``labels``; series of several models (label sets that differ
            in more than ``engine``), listing them; a
            counter that fell between scrapes (reset); zero drafts in the window;
            V0 counters without ``draft_length``.
    """
    after, generated_after = _split(_samples(text, shown))
    if not after:
        raise unread(
            f"no vLLM spec-decode counters ({DRAFTS}) in {shown}: "
            "speculative decoding was off or the scrape is from another server",
            shown,
        )
    after = _select(after, labels or {}, text, shown)
    window = after
    note = (
        f"cumulative since the server started (one scrape of {shown}; "
        "give baseline_path to measure a window)"
    )
    if baseline is not None:
        before_text, before_shown = baseline
        before, generated_before = _split(_samples(before_text, before_shown))
        if not before:
            raise unread(
                f"no vLLM spec-decode counters in the baseline {before_shown}", before_shown
            )
        before = _select(before, labels or {}, before_text, before_shown)
        window = _delta(before, after, before_shown, shown, text=text, before_text=before_text)
        note = f"counter deltas from {before_shown} to {shown}"
        if any(key[0] == PER_POS and key not in before for key in after):
            # after − 0 would be a cumulative count over a windowed Δdrafts.
            window = {key: value for key, value in window.items() if key[0] != PER_POS}
            note += (
                f"; per-position counters are not in both scrapes (missing from "
                f"{before_shown}): not used"
            )
    engines = sorted({v for _, key in window for k, v in key if k == "engine"})
    if len(engines) > 1:
        note += f"; summed over engine={', engine='.join(engines)} (data-parallel engines)"
    totals: dict[str, float] = defaultdict(float)
    per_pos: dict[str, float] = defaultdict(float)
    for (name, series_labels), value in window.items():
        totals[name] += value
        if name == PER_POS:
            per_pos[dict(series_labels).get("position", "?")] += value
    for name, total in [*totals.items(), *per_pos.items()]:
        finite(total, f"the {name} samples", shown)
    if DRAFTS in totals:
        found = _v1(totals, per_pos, text, shown, note)
        emitted = _generated(generated_after, after)
        if emitted is not None and baseline is not None:
            earlier = _generated(generated_before, before)
            emitted = None if earlier is None or earlier > emitted else emitted - earlier
        if emitted is None:
            return found
        return replace(found, emitted_tokens=emitted)
    if EMITTED in totals:
        return _v0(totals, text, shown, note, draft_length)
    rate_only = [name for name in totals if name in _GAUGES]
    if rate_only:
        raise unread(
            f"no vLLM spec-decode counters ({DRAFTS} or {EMITTED}) in {shown}: "
            f"{', '.join(rate_only)} is a rate gauge, which cannot give AL (it has no "
            "step count; AL needs the drafts and accepted counters)",
            shown,
            _line_of(text, rate_only[0]),
        )
    raise unread(f"no vLLM spec-decode counters ({DRAFTS} or {EMITTED}) in {shown}", shown)


#: vLLM V0 gauges (rates) that look like acceptance but carry no step count.
_GAUGES = frozenset({"vllm:spec_decode_draft_acceptance_rate", "vllm:spec_decode_efficiency"})


def _v1(
    totals: dict[str, float], per_pos: dict[str, float], text: str, shown: str, note: str
) -> Acceptance:
    drafts = totals[DRAFTS]
    if drafts <= 0:
        raise unread(
            f"zero drafts ({DRAFTS} did not grow): no speculative step was measured",
            shown,
            _line_of(text, DRAFTS),
        )
    if ACCEPTED not in totals:
        raise unread(f"{ACCEPTED} is missing from {shown}", shown)
    accepted = totals[ACCEPTED]
    tokens = totals.get(DRAFT_TOKENS)
    if tokens is not None and accepted > tokens:
        raise fail(
            f"impossible counters: accepted draft tokens ({fmt(accepted)}) exceed proposed "
            f"draft tokens ({fmt(tokens)}) in {shown}",
            shown,
            _line_of(text, ACCEPTED),
        )
    depth = whole_ratio(tokens, drafts) if tokens is not None else None
    spans = _spans(text, accept_length=ACCEPTED)
    if depth is not None:
        spans.update(_spans(text, draft_length=DRAFT_TOKENS))
    per_pos = _positions(per_pos, depth, text, shown)
    marginal: tuple[float, ...] = ()
    positions = sorted(int(p) for p in per_pos)
    if per_pos:
        count = len(per_pos)
        contiguous = positions == list(range(count))
        upper = tokens / drafts if tokens is not None else None
        fits = depth == count if depth is not None else upper is None or upper <= count
        if contiguous and fits:
            marginal = tuple(per_pos[str(i)] / drafts for i in range(count))
            if depth is None:
                depth = count
                spans.update(_spans(text, draft_length=PER_POS))
        else:
            listed = ", ".join(sorted(per_pos))
            expected = f"0..{depth - 1}" if depth is not None else "0..D−1"
            note += f"; per-position counters cover positions {listed}, not {expected}: not used"
    rate = accepted / tokens if tokens else None
    return Acceptance(
        histogram=_histogram(drafts, marginal, per_pos),
        steps=int(drafts) if drafts.is_integer() else None,
        format="vllm-prometheus",
        path=shown,
        accept_length=1 + accepted / drafts,
        formula=f"1 + {fmt(accepted)}/{fmt(drafts)}",
        draft_length=depth,
        marginal=marginal,
        note=note,
        spans=spans,
        acceptance_rate=rate,
        accepted_tokens=accepted,
    )


def _positions(
    per_pos: dict[str, float], depth: int | None, text: str, shown: str
) -> dict[str, float]:
    """The per-position counts keyed by position (``"0"``, ``"1"`` …), checked.

    A ``position`` label that is not a whole number (or is missing) is a malformed
    scrape; a count above zero at a position the measured D does not have (a step
    cannot accept its fifth draft at D = 4) is impossible: both are input errors at
    the line, never a profile quietly left out. A zero count past D says nothing and
    is dropped.

    Raises:
        InputError: as above.
    """
    checked: dict[str, float] = defaultdict(float)
    for label, value in per_pos.items():
        digits = label if label.isascii() and label.isdigit() and len(label) <= 6 else None
        if digits is None:
            raise fail(
                f"{PER_POS} has position {label!r} in {shown}: positions are the draft "
                "indexes 0, 1, …",
                shown,
                _position_line(text, label),
            )
        position = int(digits)
        if depth is not None and position >= depth:
            if value > 0:
                raise fail(
                    f"impossible counters: {fmt(value)} steps accepted the draft at position "
                    f"{position}, but the scrape drafted {depth} tokens per step (positions "
                    f"0..{depth - 1}) in {shown}",
                    shown,
                    _position_line(text, label),
                )
            continue
        checked[str(position)] += value
    return checked


def _position_line(text: str, label: str) -> Span | None:
    """The first sample line of the per-position counter with ``position="label"``
    (the counter's first line when no line shows that label)."""
    wanted = f'position="{label}"'
    for number, line in text_lines(text):
        stripped = line.lstrip()
        if stripped.startswith(PER_POS) and wanted in stripped:
            return Span(number, len(line) - len(stripped) + 1)
    return _line_of(text, PER_POS)


def _histogram(
    drafts: float, marginal: tuple[float, ...], per_pos: dict[str, float]
) -> tuple[tuple[int, int], ...]:
    """Steps by accepted-draft count from the per-position counters of a chain:
    h_0 = drafts − c_0, h_j = c_(j−1) − c_j, h_k = c_(k−1) (c_i: steps whose first
    i + 1 drafts were accepted). Empty when the counters are unused or inconsistent."""
    if not marginal:
        return ()
    counts = [drafts, *(per_pos[str(i)] for i in range(len(marginal)))]
    if any(not c.is_integer() for c in counts):
        return ()
    steps = [counts[j] - counts[j + 1] for j in range(len(counts) - 1)] + [counts[-1]]
    if any(h < 0 for h in steps):
        return ()
    return tuple((j, int(h)) for j, h in enumerate(steps) if h > 0)


def _v0(
    totals: dict[str, float], text: str, shown: str, note: str, draft_length: int | None
) -> Acceptance:
    if draft_length is None:
        raise unread(
            "vLLM V0 counters need draft_length (D) to count steps: "
            "AL = emitted / (draft tokens / D)",
            shown,
            _line_of(text, EMITTED),
        )
    tokens = totals.get(DRAFT_TOKENS, 0.0)
    if tokens <= 0:
        raise unread(
            f"zero drafts ({DRAFT_TOKENS} did not grow): no speculative step was measured",
            shown,
            _line_of(text, DRAFT_TOKENS),
        )
    emitted = totals[EMITTED]
    accepted = totals.get(ACCEPTED)
    return Acceptance(
        format="vllm-prometheus",
        path=shown,
        accept_length=emitted / (tokens / draft_length),
        formula=f"{fmt(emitted)}/({fmt(tokens)}/{draft_length})",
        note=note + f"; vLLM V0 counters, D = {draft_length} from the caller",
        spans=_spans(text, accept_length=EMITTED),
        acceptance_rate=accepted / tokens if accepted is not None else None,
    )


def _split(series: Series) -> tuple[Series, Series]:
    """(the spec-decode samples, the :data:`GENERATED` samples)."""
    spec = {key: value for key, value in series.items() if key[0] != GENERATED}
    return spec, {key: value for key, value in series.items() if key[0] == GENERATED}


def _generated(generated: Series, chosen: Series) -> float | None:
    """The generated tokens of the model whose spec-decode series were ``chosen`` (their
    labels other than :data:`SUMMED_LABELS`, summed over engines), else ``None``."""
    groups = {frozenset((k, v) for k, v in key[1] if k not in SUMMED_LABELS) for key in chosen}
    if len(groups) != 1:
        return None
    (group,) = groups
    values = [
        value
        for key, value in generated.items()
        if frozenset((k, v) for k, v in key[1] if k not in SUMMED_LABELS) == group
    ]
    total = sum(values)
    return total if values and math.isfinite(total) else None


def _samples(text: str, shown: str) -> Series:
    """Every ``vllm:spec_decode_*`` sample and :data:`GENERATED`: (sample name, labels) →
    value."""
    series: Series = {}
    try:
        # Blank lines (what the pre-filter leaves of other families) squeezed first.
        for family in text_string_to_metric_families(_BLANK_RUNS.sub("\n", text)):
            for sample in family.samples:
                name = str(sample.name)
                if not name.startswith(PREFIX) and name != GENERATED:
                    continue
                key = (name, frozenset((str(k), str(v)) for k, v in sample.labels.items()))
                try:
                    value = float(sample.value)
                except OverflowError:  # an integer sample of more than 308 digits
                    raise fail(
                        f"{name} is out of range (beyond 1e308): not a counter value",
                        shown,
                        _sample_line(text, key),
                    ) from None
                if not math.isfinite(value) or value < 0:
                    raise fail(
                        f"{name} is {value}, not a counter value", shown, _sample_line(text, key)
                    )
                if value > MAX_COUNT:
                    raise fail(
                        f"{name} is {value:.6g}, above 2^53: not an exact count",
                        shown,
                        _sample_line(text, key),
                    )
                if name.endswith("_total") and not value.is_integer():
                    # vLLM's counters count events (drafts, tokens): 4e-324 drafts made
                    # every ratio of counts infinite (hostile review r4, defect 11)
                    raise fail(
                        f"{name}{_labels(key[1])} is {value:.6g}: a counter of events is "
                        "a whole number",
                        shown,
                        _sample_line(text, key),
                    )
                if key in series:
                    raise fail(
                        f"sample {name}{_labels(key[1])} is repeated",
                        shown,
                        _sample_line(text, key),
                    )
                series[key] = value
    except _PARSE_ERRORS:
        raise _not_prometheus(text, shown) from None
    return series


_PARSE_ERRORS = (ValueError, TypeError, KeyError, IndexError)
_BLANK_RUNS = re.compile(r"\n{2,}")


def _not_prometheus(text: str, shown: str) -> InputError:
    """The error for text the parser refused, naming the first line it refuses alone.

    prometheus_client's parser says what it could not convert but not where, so the
    lines are parsed one at a time, only after the whole text failed."""
    for number, line in text_lines(text):
        try:
            for family in text_string_to_metric_families(line):
                for _ in family.samples:
                    pass
        except _PARSE_ERRORS:
            shown_line = line.strip()
            if len(shown_line) > 60:
                shown_line = shown_line[:57] + "..."
            # text that does not parse as its format stops the file (exit 2)
            return InputError(
                f"not Prometheus text exposition format (line {number}: {shown_line!r})",
                shown,
                number,
                1,
            )
    return InputError("not Prometheus text exposition format", shown)


def check_counters(text: str, shown: str, labels: Mapping[str, str]) -> None:
    """Check that one scrape holds vLLM spec-decode counters of exactly one model
    (with ``labels``), without reading AL: a scrape taken before a benchmark, whose
    counters may still be zero. Messages name the option as ``specgate measure``
    spells it (``--labels model_name=…``).

    Raises:
        InputError: not Prometheus text; no spec-decode counters; none with
            ``labels``; several models' series.
    """
    series, _ = _split(_samples(text, shown))
    if not series:
        raise unread(f"no vLLM spec-decode counters ({DRAFTS}) in {shown}", shown)
    _select(series, labels, text, shown, option="--labels")


def _select(
    series: Series, labels: Mapping[str, str], text: str, shown: str, option: str = ""
) -> Series:
    """The series carrying every ``labels`` pair; they must be one model's counters
    (``option``: the command-line option to suggest instead of the claims-file key).

    Raises:
        InputError: no series carries ``labels``; the series left differ in a label
            other than :data:`SUMMED_LABELS` (several models or servers).
    """
    wanted = set(labels.items())
    chosen = {key: value for key, value in series.items() if wanted <= key[1]}
    groups = sorted(
        {frozenset((k, v) for k, v in key[1] if k not in SUMMED_LABELS) for key in series},
        key=sorted,
    )
    if not chosen:
        raise unread(
            f"no vLLM spec-decode series with labels {_pairs(frozenset(wanted))} in {shown}; "
            f"label sets present: {_listed(groups)}",
            shown,
            _line_of(text, DRAFTS),
        )
    kept = sorted(
        {frozenset((k, v) for k, v in key[1] if k not in SUMMED_LABELS) for key in chosen},
        key=sorted,
    )
    if len(kept) > 1:
        names = _differing(kept)
        how = (
            f"{option} {' '.join(f'{n}=…' for n in names)}"
            if option
            else f"`labels: {{{', '.join(names)}: …}}` in evidence.metrics"
        )
        raise unread(
            f"several models in one scrape: {_listed(kept)}; choose one with {how} "
            "(only series that differ in engine are summed)",
            shown,
            _line_of(text, DRAFTS),
        )
    return chosen


def _differing(groups: list[frozenset[tuple[str, str]]]) -> list[str]:
    """Label names whose value is not the same in every group."""
    names = sorted({k for group in groups for k, _ in group})
    return [n for n in names if len({dict(group).get(n) for group in groups}) > 1]


def _listed(groups: list[frozenset[tuple[str, str]]]) -> str:
    """The groups by their differing labels: ``model_name=a, model_name=b``."""
    names = _differing(groups) if len(groups) > 1 else sorted({k for g in groups for k, _ in g})
    shown = [" ".join(f"{n}={dict(group).get(n, '')}" for n in names) for group in groups]
    return ", ".join(s or "(no labels)" for s in shown)


def _pairs(labels: frozenset[tuple[str, str]]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(labels))


def _delta(
    before: Series,
    after: Series,
    before_shown: str,
    shown: str,
    *,
    text: str = "",
    before_text: str = "",
) -> Series:
    """after − before per series; a fall or a vanished series is a counter reset (a
    fall is reported at the sample's line in ``text``, the later scrape; a vanished one
    at its line in ``before_text``).

    A series with a count in the later scrape but absent from the earlier one gives no
    window: after − 0 would be a delta over the whole total since start-up, beside
    deltas of the other counters (a D of 4000/800 = 5 at a served D of 4). It is SG316
    (warn, docs/engines.md#metrics-not-read) at its line in the later scrape, and no
    value is taken from the pair. Per-position counters are the caller's (left out with
    a note); a series absent from both scrapes is not given, as with one scrape.

    Only counter samples (``_total``) are paired: a gauge may fall (vLLM 0.7's
    ``vllm:spec_decode_draft_acceptance_rate``) and a ``_created`` sample is a start time
    that a scrape in the text format leaves out (OpenMetrics alone writes it), so
    neither says the server restarted."""
    before = {key: value for key, value in before.items() if key[0].endswith("_total")}
    after = {key: value for key, value in after.items() if key[0].endswith("_total")}
    for key, old in before.items():
        if key not in after:
            raise unread(
                f"{key[0]}{_labels(key[1])} is in {before_shown} but not in {shown}: "
                "the server restarted between scrapes (counter reset)",
                before_shown,
                _sample_line(before_text, key),
            )
        if after[key] < old:
            raise unread(
                f"counter reset between scrapes: {key[0]}{_labels(key[1])} fell from "
                f"{fmt(old)} to {fmt(after[key])}",
                shown,
                _sample_line(text, key),
            )
    for key, value in after.items():
        if key not in before and key[0] != PER_POS and value > 0:
            raise unread(
                f"{key[0]}{_labels(key[1])} is in {shown} but not in {before_shown}: the "
                "pair gives no window for it (its count since the server started is not "
                "a delta over the scrapes)",
                shown,
                _sample_line(text, key),
            )
    return {key: value - before.get(key, 0.0) for key, value in after.items()}


def _labels(labels: frozenset[tuple[str, str]]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels))
    return "{" + inner + "}" if inner else ""


def _spans(text: str, **names: str) -> dict[str, Span]:
    """Field → the line of the named sample, for the samples that are found."""
    found = {field: _line_of(text, name) for field, name in names.items()}
    return {field: span for field, span in found.items() if span is not None}


def _sample_line(text: str, key: SeriesKey) -> Span | None:
    """The line of the sample of series ``key`` (name and exact label set)."""
    name, labels = key
    for number, line in text_lines(text):
        stripped = line.lstrip()
        if not (
            stripped.startswith(name) and stripped[len(name) : len(name) + 1] in ("{", " ", "\t")
        ):
            continue
        try:
            samples = [s for f in text_string_to_metric_families(line) for s in f.samples]
        except _PARSE_ERRORS:
            continue
        if any(
            str(s.name) == name
            and frozenset((str(k), str(v)) for k, v in s.labels.items()) == labels
            for s in samples
        ):
            return Span(number, len(line) - len(stripped) + 1)
    return None


def _line_of(text: str, name: str) -> Span | None:
    """The first line holding a sample of ``name`` (not a HELP/TYPE comment)."""
    for number, line in text_lines(text):
        stripped = line.lstrip()
        if stripped.startswith(name) and stripped[len(name) : len(name) + 1] in ("{", " ", "\t"):
            return Span(number, len(line) - len(stripped) + 1)
    return None
