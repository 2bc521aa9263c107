"""SGLang decode-batch and llama-server statistics log lines → AL.

Lines may carry any prefix; fields are found by their labels. Every pattern
starts with a literal label and has no nested repetition, so scanning is linear.

Sources: docs/engines.md#metrics-formats (SGLang ``accept len``, llama.cpp) and llama.cpp
``common/speculative.cpp`` ``common_speculative_print_stats`` (``statistics
<impl>: … #gen drafts = N, … #acc tokens = M``).
"""

from __future__ import annotations

import re
from collections import defaultdict

from specgate.inputs.metrics._common import (
    PRINTED_NUMBER,
    finite,
    fmt,
    last_of_runs,
    parse_rates,
    printed_count,
    printed_number,
    text_lines,
    unread,
    unweighted_mean,
)
from specgate.inputs.types import Acceptance
from specgate.load.document import Span

_SG_ACCEPT = re.compile(r"accept len: " + PRINTED_NUMBER)
_LC_IMPL = re.compile(r"statistics\s+([^:\s]+):")
_LC_GEN_DRAFTS = re.compile(r"#gen drafts\s*=\s*([0-9]+)")
_LC_GEN_TOKENS = re.compile(r"#gen tokens\s*=\s*([0-9]+)")
_LC_ACC_TOKENS = re.compile(r"#acc tokens\s*=\s*([0-9]+)")
_LC_RATES = re.compile(r"#acc rate/pos\s*=\s*\(([0-9.,\s]*)\)")
_LC_SLOT = re.compile(r"\bid\s+([0-9]+)\s*\|")
# tools/server/server.cpp (print_timings): "draft acceptance = %0.5f (%5d accepted /
# %5d generated), mean len = %5.2f" with mean len = 1 + accepted / verify steps.
_LC_REQUEST = re.compile(
    r"draft acceptance(?: rate)? = ([0-9.]+) \(\s*([0-9]+) accepted /\s*([0-9]+) generated\)"
)
_LC_MEAN_LEN = re.compile(r"mean (?:acceptance )?len(?:gth)? =\s*" + PRINTED_NUMBER)
_LC_EVAL = re.compile(r"(?<!prompt )eval time =\s*[0-9.]+ ms /\s*([0-9]+) (?:tokens|runs)")
# examples/speculative/speculative.cpp summary: "n_draft = 8", "n_predict = 128",
# "n_drafted = 96", "n_accept = 70", "accept = 72.917%".
_LS_FIELD = re.compile(r"\b(n_draft|n_predict|n_drafted|n_accept)\s*=\s*([0-9]+)")


def read_sglang_log(text: str, shown: str) -> Acceptance:
    """AL as the unweighted mean of SGLang's ``Decode batch. … accept len: X`` lines.

    SGLang's ``accept len`` is pooled within an interval, but the log gives no step
    count per interval, so intervals cannot be weighted: the mean says so in
    ``note``. ``accept rate`` is version-sensitive and not used.

    Raises:
        InputError: no decode-batch line with ``accept len``.
    """
    values: list[str] = []
    first: Span | None = None
    for number, line in text_lines(text):
        if not line:
            continue
        if "Decode batch" not in line:
            continue
        match = _SG_ACCEPT.search(line)
        if match:
            span = Span(number, match.start(1) + 1)
            printed_number(match.group(1), "accept len", shown, span)
            values.append(match.group(1))
            first = first or span
    if first is None:
        raise unread(
            f"no SGLang decode-batch lines with 'accept len' in {shown} "
            "(speculative decoding off?)",
            shown,
        )
    return unweighted_mean(
        "sglang-log", shown, values, first, "SGLang logs no step count per interval"
    )


def read_llamacpp_log(text: str, shown: str) -> Acceptance:
    """AL from llama-server's ``statistics <impl>: … #gen drafts = N … #acc tokens = M``.

    AL = 1 + Σ#acc tokens / Σ#gen drafts. The counters are running totals per slot
    and implementation, so the last line of each (slot, implementation) run is
    used (slot from the nearest preceding ``id N |`` line). ``#acc rate/pos``,
    when printed for a single series, gives the marginal rates and D_max.

    Raises:
        InputError: no statistics line (the per-request ``draft acceptance``
            line gives r only), or zero drafts.
    """
    slot = ""
    series: dict[tuple[str, str], list[tuple[float, float, float]]] = defaultdict(list)
    last_rates: dict[tuple[str, str], tuple[tuple[float, ...], Span]] = {}
    first: Span | None = None
    for number, line in text_lines(text):
        if not line:
            continue
        slot_match = _LC_SLOT.search(line)
        if slot_match and "slot" in line:
            slot = slot_match.group(1)
        impl = _LC_IMPL.search(line)
        drafts, accepted = _LC_GEN_DRAFTS.search(line), _LC_ACC_TOKENS.search(line)
        if not (impl and drafts and accepted):
            continue
        span = Span(number, impl.start() + 1)
        first = first or span
        generated = _LC_GEN_TOKENS.search(line)
        key = (slot, impl.group(1))
        series[key].append(
            (
                float(printed_count(drafts.group(1), "#gen drafts", shown, span)),
                float(printed_count(accepted.group(1), "#acc tokens", shown, span)),
                float(printed_count(generated.group(1), "#gen tokens", shown, span))
                if generated
                else 0.0,
            )
        )
        rates = _LC_RATES.search(line)
        if rates:
            last_rates[key] = (parse_rates(rates.group(1), "#acc rate/pos", shown, span), span)
    if first is None:
        return _llamacpp_requests(text, shown)
    drafts_total = accepted_total = generated_total = 0.0
    run_count = 0
    for rows in series.values():
        (run_drafts, run_accepted, run_generated), runs = last_of_runs(rows)
        drafts_total += run_drafts
        accepted_total += run_accepted
        generated_total += run_generated
        run_count += runs
    if drafts_total <= 0:
        raise unread(
            "zero drafts (#gen drafts = 0): no speculative step was measured", shown, first
        )
    marginal: tuple[float, ...] = ()
    if len(series) == 1 and run_count == 1 and last_rates:
        marginal = next(iter(last_rates.values()))[0]
    note = "llama.cpp statistics are running totals: last line per slot and implementation"
    return Acceptance(
        format="llamacpp-log",
        path=shown,
        accept_length=1 + accepted_total / drafts_total,
        formula=f"1 + {fmt(accepted_total)}/{fmt(drafts_total)}",
        draft_length=len(marginal) or None,
        marginal=marginal,
        note=note,
        spans={"accept_length": first},
        acceptance_rate=accepted_total / generated_total if generated_total else None,
    )


def _llamacpp_requests(text: str, shown: str) -> Acceptance:
    """Without ``statistics`` lines: llama-server's per-request ``draft acceptance …
    mean len = X`` lines (AL as printed; several requests pooled with their verify
    steps recovered from the printed mean, so an estimate), else ``llama-speculative``'s
    summary, else the old ``draft acceptance rate`` lines with the request's ``eval
    time … / N tokens`` (each step emits accepted + 1 tokens: AL ≈ N / (N − accepted),
    a labelled estimate; a token not emitted by a verify step, such as the one sampled
    after the prompt, adds a step to N − accepted and so makes it slightly low:
    (1 + steps·AL) / (1 + steps) < AL).

    Raises:
        InputError: none of these lines, or zero drafts.
    """
    requests: list[tuple[Span, int, int, float | None]] = []
    evals: list[int] = []
    summary: dict[str, int] = {}
    summary_span: Span | None = None
    for number, line in text_lines(text):
        if not line:
            continue
        eval_match = _LC_EVAL.search(line)
        if eval_match and "draft" not in line:
            span = Span(number, eval_match.start() + 1)
            evals.append(printed_count(eval_match.group(1), "eval time", shown, span))
            continue
        request = _LC_REQUEST.search(line)
        if request:
            span = Span(number, request.start() + 1)
            mean = _LC_MEAN_LEN.search(line, request.end())
            requests.append(
                (
                    span,
                    printed_count(request.group(2), "accepted", shown, span),
                    printed_count(request.group(3), "generated", shown, span),
                    printed_number(mean.group(1), "mean len", shown, span) if mean else None,
                )
            )
            continue
        for field_match in _LS_FIELD.finditer(line):
            span = Span(number, field_match.start() + 1)
            summary[field_match.group(1)] = printed_count(
                field_match.group(2), field_match.group(1), shown, span
            )
            summary_span = summary_span or span
    if requests and all(mean is not None for *_, mean in requests):
        return _mean_len(requests, shown)
    if summary_span is not None and {"n_predict", "n_accept", "n_drafted"} <= set(summary):
        return _speculative_summary(summary, summary_span, shown)
    if requests and len(evals) >= len(requests):
        return _request_estimate(requests, evals[-len(requests) :], shown)
    raise unread(
        f"no llama.cpp speculative 'statistics' line (#gen drafts, #acc tokens), no "
        f"'draft acceptance … mean len' line and no llama-speculative summary in {shown}; "
        "a 'draft acceptance' rate alone gives no AL",
        shown,
    )


def _mean_len(requests: list[tuple[Span, int, int, float | None]], shown: str) -> Acceptance:
    first = requests[0][0]
    accepted = sum(r[1] for r in requests)
    generated = sum(r[2] for r in requests)
    if len(requests) == 1:
        mean = requests[0][3]
        assert mean is not None
        return Acceptance(
            format="llamacpp-log",
            path=shown,
            accept_length=mean,
            formula=f"mean len = {fmt(mean)}",
            note="llama-server's per-request 'mean len' (1 + accepted / verify steps)",
            spans={"accept_length": first},
            acceptance_rate=accepted / generated if generated else None,
        )
    steps = 0.0
    for _, acc, _, mean in requests:
        assert mean is not None
        if mean > 1:
            steps += acc / (mean - 1)
    finite(steps, "the drafts implied by the mean lengths", shown, first)
    if steps <= 0:
        raise unread("zero accepted drafts in every request: AL cannot be pooled", shown, first)
    return Acceptance(
        format="llamacpp-log",
        path=shown,
        accept_length=1 + accepted / steps,
        formula=f"1 + {fmt(accepted)}/{fmt(steps)}",
        estimate=True,
        note=f"pooled over {len(requests)} requests: verify steps recovered from each "
        "printed 'mean len' (2 decimals), so AL is an estimate",
        spans={"accept_length": first},
        acceptance_rate=accepted / generated if generated else None,
    )


def _speculative_summary(summary: dict[str, int], span: Span, shown: str) -> Acceptance:
    predicted, accepted, drafted = summary["n_predict"], summary["n_accept"], summary["n_drafted"]
    if drafted <= 0 or predicted <= accepted:
        raise unread("llama-speculative summary with no drafted tokens", shown, span)
    return Acceptance(
        format="llamacpp-log",
        path=shown,
        accept_length=predicted / (predicted - accepted),
        formula=f"{predicted}/({predicted} - {accepted})",
        estimate=True,
        note="llama-speculative prints no verify-step count: each step is taken to emit "
        "its accepted drafts + 1 token (a token not emitted by a verify step, such as "
        "one sampled after the prompt, would make it slightly low)",
        spans={"accept_length": span},
        acceptance_rate=accepted / drafted,
    )


def _request_estimate(
    requests: list[tuple[Span, int, int, float | None]], evals: list[int], shown: str
) -> Acceptance:
    accepted = sum(r[1] for r in requests)
    generated = sum(r[2] for r in requests)
    tokens = sum(evals)
    if tokens <= accepted or generated <= 0:
        raise unread("draft acceptance lines with no usable token counts", shown, requests[0][0])
    return Acceptance(
        format="llamacpp-log",
        path=shown,
        accept_length=tokens / (tokens - accepted),
        formula=f"{tokens}/({tokens} - {accepted})",
        estimate=True,
        note="estimate: llama-server printed no verify steps; each step is taken to emit "
        "its accepted drafts + 1 token (eval tokens / (eval tokens − accepted))",
        spans={"accept_length": requests[0][0]},
        acceptance_rate=accepted / generated,
    )
