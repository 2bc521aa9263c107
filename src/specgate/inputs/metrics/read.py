"""Measured acceptance → :class:`~specgate.inputs.types.Acceptance`
(docs/engines.md#metrics-formats).

:func:`read_acceptance` dispatches on ``evidence.metrics.format``: file formats read
``path`` (relative to the claims file, never outside the repository; at most
256 MiB: :mod:`.stream`); inline formats read the block itself. Log formats and
Prometheus text are streamed through a literal pre-filter (:mod:`.stream`): only
the lines holding their labels (Prometheus: the spec-decode families) are decoded
and parsed. Per-request and per-iteration JSON records are streamed record by
record (:mod:`.json_records`). Each reader is a pure function of the text or
records it is given; this module alone touches the file system.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from specgate.inputs.metrics._common import Record, fail
from specgate.inputs.metrics.inline import (
    PROFILE_TOLERANCE,
    acceptance_profile_problems,
    first_profile_offence,
    read_draft_acceptance_rate,
    read_histogram,
    read_iid_rate,
    read_per_position,
)
from specgate.inputs.metrics.json_records import read_records
from specgate.inputs.metrics.logs import read_llamacpp_log, read_sglang_log
from specgate.inputs.metrics.records import read_trtllm_iteration_stats, read_vllm_per_request
from specgate.inputs.metrics.spec import (
    FILE_FORMATS,
    FORMATS,
    INLINE_FORMATS,
    MetricsSpec,
    resolve_path,
)
from specgate.inputs.metrics.stream import METRICS_MAX_BYTES, check_file, read_filtered
from specgate.inputs.metrics.summaries import (
    read_llamacpp_timings,
    read_sglang_server_info,
    read_speculation_profile,
)
from specgate.inputs.metrics.vllm_log import read_vllm_log
from specgate.inputs.metrics.vllm_prometheus import read_prometheus
from specgate.inputs.types import Acceptance

__all__ = [
    "FILE_FORMATS",
    "FORMATS",
    "INLINE_FORMATS",
    "METRICS_MAX_BYTES",
    "PROFILE_TOLERANCE",
    "MetricsSpec",
    "acceptance_profile_problems",
    "first_profile_offence",
    "read_acceptance",
]

_TEXT_READERS: dict[str, Callable[[str, str], Acceptance]] = {
    "sglang-log": read_sglang_log,
    "llamacpp-log": read_llamacpp_log,
    "llamacpp-timings": read_llamacpp_timings,
    "sglang-server-info": read_sglang_server_info,
    "speculation-profile": read_speculation_profile,
}
#: Formats whose files are streams of JSON records (read record by record).
_RECORD_READERS: dict[str, Callable[[Iterable[Record], str], Acceptance]] = {
    "vllm-per-request": read_vllm_per_request,
    "trtllm-iteration-stats": read_trtllm_iteration_stats,
}
#: Literal labels a line must hold to matter to a line format (docs/engines.md#knowledge-data
#: pre-filter), as groups tried in order until one keeps a line (each label costs a pass over the
#: file, so labels of rarer, smaller outputs come in a later group).
#: vllm-prometheus keeps the spec-decode families (samples, # HELP and # TYPE lines), the
#: generation-tokens counter (the accepted-vs-emitted cross-check), and vLLM's log labels
#: so a log given as a scrape is refused at its first log line.
LINE_FILTERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "vllm-prometheus": (
        ("spec_decode", "SpecDecoding metrics", "Speculative metrics", "vllm:generation_tokens"),
    ),
    # V1 interval lines and V0 running totals (both, so a mix is refused); then the
    # totals the offline example script prints (a short file: one run's summary).
    "vllm-log": (
        ("SpecDecoding metrics", "Speculative metrics"),
        ("num_drafts", "num_draft_tokens", "num_accepted_tokens", "acceptance at token"),
    ),
    "sglang-log": (("accept len",),),
    "llamacpp-log": (
        ("statistics", "draft acceptance", "eval time", "slot", "n_draft", "n_predict", "n_accept"),
    ),
}
_INLINE_READERS: dict[str, Callable[[MetricsSpec], Acceptance]] = {
    "per-position": read_per_position,
    "histogram": read_histogram,
    "iid-rate": read_iid_rate,
    "draft-acceptance-rate": read_draft_acceptance_rate,
}


def read_acceptance(
    spec: MetricsSpec, *, base_dir: Path, shown_base: str, root: Path | None = None
) -> Acceptance:
    """Read the measured accept length that ``spec`` points at.

    Args:
        spec: the ``evidence.metrics`` block (see :class:`MetricsSpec`).
        base_dir: the claims file's folder; paths are relative to it.
        shown_base: that folder as shown to users (``""`` for the current folder);
            the result's ``path`` is ``shown_base/path``.
        root: the repository root paths must stay inside; ``None`` = the nearest
            folder above ``base_dir`` holding ``.git``.

    Returns:
        :class:`Acceptance`: AL (tokens per target step, bonus token included),
        the ``formula`` in numbers, ``estimate``, ``draft_length`` and ``marginal``
        when the data states them, ``note`` on aggregation, ``spans`` in the file.

    Raises:
        InputError: a path that is absolute, leaves the repository or does not
            exist (at the claims file's line); a file that is too large, not UTF-8
            or malformed; data with no speculative measurement (never AL = 1).
    """
    acceptance = _read_acceptance(spec, base_dir=base_dir, shown_base=shown_base, root=root)
    return _bounded(acceptance, spec)


def _bounded(acceptance: Acceptance, spec: MetricsSpec) -> Acceptance:
    """``acceptance`` when every size it states (D, its lower bound, the profile) is
    within :data:`~specgate.core.limits.MAX_DRAFT_LENGTH`: whatever a reader derives
    from the file's numbers (a ratio of counts, a histogram's top), nothing later is
    sized by a number past the bound (docs/trust.md#bounded-work).

    Raises:
        InputError: a larger D, at the line that states it (else the AL's): in a file,
            :class:`~specgate.core.errors.UnusableMeasurement` (SG316 fails).
    """
    import math

    from specgate.core.limits import MAX_DRAFT_LENGTH

    if not math.isfinite(acceptance.accept_length):
        # each count was finite; their sum or ratio is not (two counts of 1.7e308)
        reason = (
            f"AL {acceptance.accept_length} is not a finite number: the counts add up "
            "beyond a float's range (1e308)"
        )
        span = acceptance.spans.get("accept_length")
        if acceptance.path is None:
            raise spec.fail(reason)
        raise fail(reason, acceptance.path, span)
    sizes = {
        "draft_length": acceptance.draft_length,
        "min_draft_length": acceptance.min_draft_length,
        "marginal": len(acceptance.marginal),
    }
    for name, size in sizes.items():
        if size is not None and size > MAX_DRAFT_LENGTH:
            span = acceptance.spans.get(name) or acceptance.spans.get("accept_length")
            shown = acceptance.path
            what = "D" if name != "marginal" else "the per-position profile's length"
            reason = (
                f"{what} {size:,} (from the measurement) is above specgate's limit of "
                f"{MAX_DRAFT_LENGTH} draft tokens"
            )
            if shown is None:
                raise spec.fail(reason)
            raise fail(reason, shown, span)
    return acceptance


def _read_acceptance(
    spec: MetricsSpec, *, base_dir: Path, shown_base: str, root: Path | None
) -> Acceptance:
    inline = _INLINE_READERS.get(spec.format)
    if inline is not None:
        return inline(spec)
    if spec.format not in FILE_FORMATS or not spec.path:
        raise spec.fail(f"metrics format {spec.format!r} needs a path")
    target, shown = resolve_path(
        spec, "path", spec.path, base_dir=base_dir, shown_base=shown_base, root=root
    )
    records = _RECORD_READERS.get(spec.format)
    if records is not None:
        return records(read_records(target, shown), shown)
    if spec.format == "vllm-log":  # standard V1 lines: running sums, any size
        from specgate.inputs.metrics.vllm_stream import stream_vllm_v1

        check_file(target, shown, sized=False)
        streamed = stream_vllm_v1(target, shown)
        if streamed is not None:
            return streamed
    text = _read(target, shown, spec.format)
    if spec.format == "vllm-prometheus":
        baseline = None
        if spec.baseline_path:
            before, before_shown = resolve_path(
                spec,
                "baseline_path",
                spec.baseline_path,
                base_dir=base_dir,
                shown_base=shown_base,
                root=root,
            )
            baseline = (_read(before, before_shown, spec.format), before_shown)
        return read_prometheus(
            text, shown, baseline=baseline, draft_length=spec.draft_length, labels=spec.labels
        )
    if spec.format == "vllm-log":
        return read_vllm_log(text, shown, draft_length=spec.draft_length)
    return _TEXT_READERS[spec.format](text, shown)


def _read(path: Path, shown: str, fmt: str) -> str:
    """A metrics file's text: line formats pre-filtered (:data:`LINE_FILTERS`), JSON
    summaries whole; both up to :data:`METRICS_MAX_BYTES`."""
    groups = LINE_FILTERS.get(fmt)
    if groups is None:
        from specgate.load.read import read_text

        check_file(path, shown)
        return read_text(path, shown, limit=METRICS_MAX_BYTES)
    text = ""
    for needles in groups:
        text = read_filtered(path, shown, needles)
        if not text.isspace() and text:
            break
    return text
