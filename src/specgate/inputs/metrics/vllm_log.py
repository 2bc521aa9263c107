"""vLLM's periodic spec-decode log lines → AL (V1 and V0 formats).

Lines may carry any prefix (timestamps, ``(APIServer pid=…)``, container names):
fields are found by their own labels anywhere in a line. Every pattern starts
with a literal label and has no nested repetition, so scanning is linear in the
file's length.

Sources: notes/domain.md §2.1 and ``vllm-project/vllm:vllm/v1/spec_decode/metrics.py``
(V1 ``SpecDecoding metrics`` lines cover one logging interval each);
``vllm/spec_decode/metrics.py`` (V0 ``Speculative metrics`` lines print the
sampler's running totals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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

_NUMBER = r"(\d+(?:\.\d+)?)"
_V1_ACCEPTED = re.compile(r"\bAccepted: (\d+) tokens")
_V1_DRAFTED = re.compile(r"\bDrafted: (\d+) tokens")
_V1_MEAN = re.compile(r"Mean acceptance length: " + _NUMBER)
_V1_RATES = re.compile(r"Per-position acceptance rate: ([0-9.,\s]*)")
_V0_K = re.compile(r"Number of speculative tokens: (\d+)")
_V0_ACCEPTED = re.compile(r"Number of accepted tokens: (\d+)")
_V0_DRAFT = re.compile(r"Number of draft tokens: (\d+)")
_V0_EMITTED = re.compile(r"Number of emitted tokens: (\d+)")
# examples/offline_inference/spec_decode.py prints its totals, one per line:
# "num_drafts: N", "num_draft_tokens: N", "num_accepted_tokens: N",
# "mean acceptance length: X", then "acceptance at token i: r" for a list sized to
# the configured k (zero-padded: it does not define D).
_OFFLINE = re.compile(r"^\s*(num_drafts|num_draft_tokens|num_accepted_tokens): (\d+)\s*$")
_OFFLINE_RATE = re.compile(r"^\s*acceptance at token (\d+):\s*([0-9.]+)\s*$")


@dataclass(frozen=True)
class _V1Line:
    span: Span
    accepted: int
    drafted: int
    rates: tuple[float, ...]
    mean: float | None = None


def read_vllm_log(text: str, shown: str, *, draft_length: int | None = None) -> Acceptance:
    """AL pooled over vLLM's periodic spec-decode log lines.

    V1 (``SpecDecoding metrics: … Accepted: A tokens, Drafted: T tokens,
    Per-position acceptance rate: r1, …, rk``): each line covers one interval;
    AL = 1 + ΣA / Σ(T/k), k = the number of per-position rates (else
    ``draft_length``). ``marginal`` is the draft-weighted mean of the rates.
    When T/k is not whole some steps drafted fewer than k: ``estimate`` is set.

    V0 (``Speculative metrics: … Number of speculative tokens: k, … accepted …,
    draft …, emitted …``): counters are running totals, so the last line of each
    run (a drop starts a new run) is used: AL = Σemitted / (Σdraft / k).

    Raises:
        InputError: no such lines, V0 and V1 mixed, lines that disagree on k, k
            unknown, or zero drafted tokens.
    """
    v1: list[_V1Line] = []
    v0: list[tuple[Span, tuple[float, ...]]] = []
    means: list[tuple[Span, float]] = []
    offline: dict[str, tuple[Span, int]] = {}
    offline_rates: list[float] = []
    for number, line in text_lines(text):
        span = Span(number, 1)
        if "num_" in line or "acceptance at token" in line:
            total = _OFFLINE.match(line)
            if total:
                offline.setdefault(total.group(1), (span, int(total.group(2))))
                continue
            rate = _OFFLINE_RATE.match(line)
            if rate and int(rate.group(1)) == len(offline_rates):
                offline_rates.append(float(rate.group(2)))
                continue
        emitted = _V0_EMITTED.search(line)
        if emitted:
            v0.append((span, _v0_row(line, emitted, shown, span, draft_length)))
            continue
        accepted, drafted = _V1_ACCEPTED.search(line), _V1_DRAFTED.search(line)
        if accepted and drafted:
            rates = _V1_RATES.search(line)
            found = parse_rates(rates.group(1), "per-position rate", shown, span) if rates else ()
            printed = _V1_MEAN.search(line)
            v1.append(
                _V1Line(
                    span,
                    int(accepted.group(1)),
                    int(drafted.group(1)),
                    found,
                    float(printed.group(1)) if printed else None,
                )
            )
        elif (mean := _V1_MEAN.search(line)) is not None:
            means.append((span, float(mean.group(1))))
    if v0 and v1:
        raise fail(
            f"{shown} mixes vLLM V0 and V1 spec-decode lines (lines {v0[0][0].line} "
            f"and {v1[0].span.line})",
            shown,
            v1[0].span,
        )
    if v0:
        return _pool_v0(v0, shown)
    if v1:
        return _pool_v1(v1, shown, draft_length)
    if "num_drafts" in offline and "num_accepted_tokens" in offline:
        return _offline(offline, offline_rates, shown)
    if means:
        return unweighted_mean(
            "vllm-log",
            shown,
            [str(value) for _, value in means],
            means[0][0],
            "vLLM printed no Accepted/Drafted counts",
        )
    raise fail(
        f"no vLLM spec-decode metrics lines ('SpecDecoding metrics: …' or "
        f"'Speculative metrics: …') in {shown}",
        shown,
    )


def _v0_row(
    line: str, emitted: re.Match[str], shown: str, span: Span, draft_length: int | None
) -> tuple[float, ...]:
    k, draft, accepted = _V0_K.search(line), _V0_DRAFT.search(line), _V0_ACCEPTED.search(line)
    if draft is None:
        raise fail("vLLM V0 line without 'Number of draft tokens'", shown, span)
    depth = int(k.group(1)) if k else draft_length
    if not depth:
        raise fail(
            "vLLM V0 line without 'Number of speculative tokens' and no draft_length "
            "given: k is needed to count steps",
            shown,
            span,
        )
    return (
        float(depth),
        float(draft.group(1)),
        float(emitted.group(1)),
        float(accepted.group(1)) if accepted else 0.0,
    )


def _pool_v1(lines: list[_V1Line], shown: str, draft_length: int | None) -> Acceptance:
    depths: dict[int, Span] = {}
    for entry in lines:
        k = len(entry.rates) or draft_length
        if not k:
            raise fail(
                "no per-position acceptance rates on this line and no draft_length "
                "given: k is needed to turn Drafted tokens into drafts",
                shown,
                entry.span,
            )
        depths.setdefault(k, entry.span)
    if len(depths) > 1:
        found = ", ".join(f"k = {k} at line {span.line}" for k, span in depths.items())
        raise fail(
            f"vLLM log lines disagree on k ({found}); split the log per configuration",
            shown,
            lines[0].span,
        )
    k = next(iter(depths))
    accepted = sum(entry.accepted for entry in lines)
    drafted = sum(entry.drafted for entry in lines)
    if any(_variable(entry, k) for entry in lines):
        return _pool_printed(lines, shown)
    drafts = drafted / k
    if drafts <= 0:
        raise fail(
            "zero drafted tokens in the vLLM log: no speculative step was measured",
            shown,
            lines[0].span,
        )
    stated = all(entry.rates for entry in lines)
    marginal: tuple[float, ...] = ()
    if stated:
        marginal = tuple(
            sum(entry.rates[i] * entry.drafted / k for entry in lines) / drafts for i in range(k)
        )
    note = (
        f"pooled over {len(lines)} log line{'s' if len(lines) > 1 else ''}: "
        f"1 + ΣAccepted/Σ(Drafted/k), k = {k}"
    )
    ragged = any(entry.drafted % k for entry in lines)
    if ragged:
        note += "; Drafted is not a multiple of k (some steps drafted fewer), so AL is approximate"
    return Acceptance(
        format="vllm-log",
        path=shown,
        accept_length=1 + accepted / drafts,
        formula=f"1 + {fmt(accepted)}/{fmt(drafts)}",
        estimate=ragged,
        draft_length=k if stated else None,
        marginal=marginal,
        note=note,
        spans={"accept_length": lines[0].span},
        acceptance_rate=accepted / drafted,
    )


def _pool_v0(rows: list[tuple[Span, tuple[float, ...]]], shown: str) -> Acceptance:
    depths = {int(row[0]) for _, row in rows}
    if len(depths) > 1:
        raise fail(f"vLLM V0 log lines disagree on k ({sorted(depths)})", shown, rows[0][0])
    k = depths.pop()
    (_, draft, emitted, accepted), runs = last_of_runs([row for _, row in rows])
    if draft <= 0:
        raise fail(
            "zero draft tokens in the vLLM V0 log: no speculative step was measured",
            shown,
            rows[-1][0],
        )
    note = (
        f"vLLM V0 counters are running totals: used the last of {len(rows)} line"
        f"{'s' if len(rows) > 1 else ''}"
        + (f" in each of {runs} runs" if runs > 1 else "")
        + "; AL = emitted / (draft / k)"
    )
    return Acceptance(
        format="vllm-log",
        path=shown,
        accept_length=emitted / (draft / k),
        formula=f"{fmt(emitted)}/({fmt(draft)}/{k})",
        draft_length=k,
        note=note,
        spans={"accept_length": rows[-1][0]},
        acceptance_rate=accepted / draft,
    )


def _variable(entry: _V1Line, k: int) -> bool:
    """The line's printed mean disagrees with 1 + Accepted/(Drafted/k) beyond its
    rounding: drafts were shorter than k on some steps (n-gram, suffix, adaptive
    drafting), so Drafted/k undercounts the drafts."""
    if entry.mean is None or entry.drafted <= 0:
        return False
    return abs(1 + entry.accepted / (entry.drafted / k) - entry.mean) > 0.006


def _pool_printed(lines: list[_V1Line], shown: str) -> Acceptance:
    """Variable-length drafts: each line's drafts from vLLM's own printed mean
    (drafts = Accepted / (mean − 1)); lines whose mean is 1 count no accepted token
    and their drafts are taken as Drafted/1 at most (an estimate either way)."""
    accepted = sum(entry.accepted for entry in lines)
    drafts = 0.0
    for entry in lines:
        if entry.mean is not None and entry.mean > 1 and entry.accepted > 0:
            drafts += entry.accepted / (entry.mean - 1)
        else:
            drafts += entry.drafted
    if drafts <= 0:
        raise fail("zero drafts in the vLLM log: no speculative step was measured", shown)
    single = len(lines) == 1 and lines[0].mean is not None
    value = lines[0].mean if single and lines[0].mean is not None else 1 + accepted / drafts
    return Acceptance(
        format="vllm-log",
        path=shown,
        accept_length=value,
        formula=f"Mean acceptance length {fmt(value)}"
        if single
        else f"1 + {fmt(accepted)}/{fmt(drafts)}",
        estimate=not single,
        note="drafts were shorter than k on some steps (Drafted/k disagrees with vLLM's "
        "printed mean): AL uses vLLM's own 'Mean acceptance length'"
        + ("" if single else f", pooled over {len(lines)} lines (drafts recovered from it)"),
        spans={"accept_length": lines[0].span},
    )


def _offline(totals: dict[str, tuple[Span, int]], rates: list[float], shown: str) -> Acceptance:
    """The totals ``examples/offline_inference/spec_decode.py`` prints: AL = 1 +
    num_accepted_tokens / num_drafts (what the script computes). Its per-position
    list is sized to the configured k and zero-padded: it gives marginal rates but
    not D."""
    span, drafts = totals["num_drafts"]
    accepted = totals["num_accepted_tokens"][1]
    if drafts <= 0:
        raise fail("num_drafts is 0: no speculative step was measured", shown, span)
    while rates and rates[-1] == 0:
        rates.pop()
    draft_tokens = totals.get("num_draft_tokens")
    return Acceptance(
        format="vllm-log",
        path=shown,
        accept_length=1 + accepted / drafts,
        formula=f"1 + {accepted}/{drafts}",
        marginal=tuple(rates),
        note="vLLM offline spec_decode.py totals (num_accepted_tokens / num_drafts)",
        spans={"accept_length": totals["num_accepted_tokens"][0]},
        acceptance_rate=accepted / draft_tokens[1] if draft_tokens and draft_tokens[1] else None,
    )
