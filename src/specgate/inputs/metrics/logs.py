"""SGLang decode-batch and llama-server statistics log lines → AL.

Lines may carry any prefix; fields are found by their labels. Every pattern
starts with a literal label and has no nested repetition, so scanning is linear.

Sources: notes/domain.md §2.2 (SGLang ``accept len``), §2.4 and llama.cpp
``common/speculative.cpp`` ``common_speculative_print_stats`` (``statistics
<impl>: … #gen drafts = N, … #acc tokens = M``).
"""

from __future__ import annotations

import re
from collections import defaultdict

from specgate.document import Span
from specgate.inputs.metrics._common import (
    fail,
    fmt,
    last_of_runs,
    parse_rates,
    text_lines,
    unweighted_mean,
)
from specgate.inputs.types import Acceptance

_SG_ACCEPT = re.compile(r"accept len: (\d+(?:\.\d+)?)")
_LC_IMPL = re.compile(r"statistics\s+([^:\s]+):")
_LC_GEN_DRAFTS = re.compile(r"#gen drafts\s*=\s*(\d+)")
_LC_GEN_TOKENS = re.compile(r"#gen tokens\s*=\s*(\d+)")
_LC_ACC_TOKENS = re.compile(r"#acc tokens\s*=\s*(\d+)")
_LC_RATES = re.compile(r"#acc rate/pos\s*=\s*\(([0-9.,\s]*)\)")
_LC_SLOT = re.compile(r"\bid\s+(\d+)\s*\|")


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
        if "Decode batch" not in line:
            continue
        match = _SG_ACCEPT.search(line)
        if match:
            values.append(match.group(1))
            first = first or Span(number, match.start(1) + 1)
    if first is None:
        raise fail(
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
                float(drafts.group(1)),
                float(accepted.group(1)),
                float(generated.group(1)) if generated else 0.0,
            )
        )
        rates = _LC_RATES.search(line)
        if rates:
            last_rates[key] = (parse_rates(rates.group(1), "#acc rate/pos", shown, span), span)
    if first is None:
        raise fail(
            f"no llama.cpp speculative 'statistics' line (#gen drafts, #acc tokens) in "
            f"{shown}; the 'draft acceptance' line alone gives a rate, not AL",
            shown,
        )
    drafts_total = accepted_total = generated_total = 0.0
    run_count = 0
    for rows in series.values():
        (run_drafts, run_accepted, run_generated), runs = last_of_runs(rows)
        drafts_total += run_drafts
        accepted_total += run_accepted
        generated_total += run_generated
        run_count += runs
    if drafts_total <= 0:
        raise fail("zero drafts (#gen drafts = 0): no speculative step was measured", shown, first)
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
