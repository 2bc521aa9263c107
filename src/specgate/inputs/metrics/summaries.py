"""One-object JSON summaries → AL: llama.cpp timings, SGLang server info and
NVIDIA speculation profiles.

Sources:
- llama.cpp server ``timings``: ``draft_n``, ``draft_n_accepted`` (r only;
  docs/engines.md docs/claims-file.md#format-rules).
- SGLang ``/get_server_info``: ``avg_spec_accept_length`` (top level or
  ``internal_states[0]``), cumulative since start (docs/engines.md
  docs/claims-file.md#format-rules).
- NVIDIA/Model-Optimizer ``examples/specdec_bench/specdec_bench/speculation_profile.py``
  (schema 1.0): ``mean_accept_length`` (per step), ``marginal_accept_rates``,
  ``conditional_accept_rates``, ``num_speculative_tokens``, ``measured``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from specgate.inputs.metrics._common import (
    Locator,
    at,
    count,
    draft_count,
    fail,
    finite,
    fmt,
    real,
    under,
    unread,
)
from specgate.inputs.metrics.json_records import load_one
from specgate.inputs.types import Acceptance
from specgate.load.document import NodePath


def read_llamacpp_timings(text: str, shown: str) -> Acceptance:
    """r = draft_n_accepted / draft_n from llama-server ``timings``; AL as an estimate.

    llama.cpp does not report verification steps and drafts vary in length, so AL
    is not recoverable. The labelled estimate assumes every decode step emits its
    accepted drafts plus one token: AL ≈ predicted_n / (predicted_n − draft_n_accepted)
    (tests/data/real/SOURCES.md, llama.cpp PR #12603).

    Raises:
        InputError: no ``draft_n`` (speculation off), zero drafts, no ``predicted_n``
            or ``predicted_n ≤ draft_n_accepted``.
    """
    record = load_one(text, shown)
    data, locate = record.data, record.locate
    if isinstance(data, Mapping) and isinstance(data.get("timings"), Mapping):
        data, locate = data["timings"], under(locate, ("timings",))
    if not isinstance(data, Mapping) or "draft_n" not in data:
        raise unread(f"no timings.draft_n in {shown} (speculative decoding off?)", shown)
    drafted = count(data["draft_n"], "draft_n", shown, locate(("draft_n",)))
    accepted = count(
        data.get("draft_n_accepted"), "draft_n_accepted", shown, locate(("draft_n_accepted",))
    )
    if drafted <= 0:
        raise unread(
            "zero drafts (draft_n = 0): no speculative step was measured",
            shown,
            locate(("draft_n",)),
        )
    predicted = count(data.get("predicted_n"), "predicted_n", shown, locate(("predicted_n",)))
    if predicted <= accepted:
        raise fail(
            f"predicted_n ({fmt(predicted)}) must exceed draft_n_accepted ({fmt(accepted)})",
            shown,
            locate(("predicted_n",)),
        )
    rate = accepted / drafted
    return Acceptance(
        format="llamacpp-timings",
        path=shown,
        accept_length=predicted / (predicted - accepted),
        formula=f"{fmt(predicted)}/({fmt(predicted)} - {fmt(accepted)})",
        estimate=True,
        note=f"llama.cpp reports only the acceptance rate r = {fmt(accepted)}/{fmt(drafted)} "
        f"= {rate:.4f}; AL is estimated assuming each step emits its accepted drafts "
        "plus one token",
        spans={"accept_length": locate(("draft_n_accepted",))},
        acceptance_rate=rate,
    )


def read_sglang_server_info(text: str, shown: str) -> Acceptance:
    """``avg_spec_accept_length`` of SGLang ``/get_server_info`` (cumulative since start).

    Raises:
        InputError: the field is absent or not a number.
    """
    record = load_one(text, shown)
    data = record.data
    path: NodePath = ("avg_spec_accept_length",)
    note = "SGLang server average, cumulative since the server started"
    if not (isinstance(data, Mapping) and "avg_spec_accept_length" in data):
        states = data.get("internal_states") if isinstance(data, Mapping) else None
        if not (
            isinstance(states, list)
            and states
            and isinstance(states[0], Mapping)
            and "avg_spec_accept_length" in states[0]
        ):
            raise unread(
                f"no avg_spec_accept_length in {shown} (top level or "
                "internal_states[0]; speculative decoding off?)",
                shown,
            )
        return _sglang_ranks(states, shown, record.locate, note)
    assert isinstance(data, Mapping)
    value = real(
        data["avg_spec_accept_length"], "avg_spec_accept_length", shown, record.locate(path)
    )
    return Acceptance(
        format="sglang-server-info",
        path=shown,
        accept_length=value,
        formula=f"avg_spec_accept_length = {fmt(value)}",
        note=note,
        spans={"accept_length": record.locate(path)},
    )


def _sglang_ranks(states: list[object], shown: str, locate: Locator, note: str) -> Acceptance:
    """Every data-parallel rank's ``avg_spec_accept_length`` (``internal_states`` has one
    entry per DP rank): AL is their mean. SGLang gives no step count per rank, so the
    ranks are not step-weighted: ``estimate`` unless there is one rank."""
    values: list[float] = []
    for index, state in enumerate(states):
        if isinstance(state, Mapping) and "avg_spec_accept_length" in state:
            where = locate(("internal_states", index, "avg_spec_accept_length"))
            values.append(
                real(state["avg_spec_accept_length"], "avg_spec_accept_length", shown, where)
            )
    first = locate(("internal_states", 0, "avg_spec_accept_length"))
    if len(values) == 1:
        return Acceptance(
            format="sglang-server-info",
            path=shown,
            accept_length=values[0],
            formula=f"avg_spec_accept_length = {fmt(values[0])}",
            note=note,
            spans={"accept_length": first},
        )
    total = finite(sum(values), "the accept lengths", shown, first)
    return Acceptance(
        format="sglang-server-info",
        path=shown,
        accept_length=total / len(values),
        formula=f"({' + '.join(fmt(v) for v in values)})/{len(values)}"
        if len(values) <= 8
        else f"{fmt(total)}/{len(values)}",
        estimate=True,
        note=f"{note}; mean over all {len(values)} data-parallel ranks (internal_states), "
        "not step-weighted: SGLang reports no step count per rank",
        spans={"accept_length": first},
    )


def read_speculation_profile(text: str, shown: str) -> Acceptance:
    """AL = ``mean_accept_length`` (per decode step) of a ``speculation_profile.json`` v1.

    ``marginal`` from ``marginal_accept_rates`` (or the cumulative product of
    ``conditional_accept_rates``); ``draft_length`` from ``num_speculative_tokens``.

    Raises:
        InputError: schema_version not 1.x, an unmeasured stub (``measured: false``),
            or a missing/non-numeric mean.
    """
    record = load_one(text, shown)
    data, locate = record.data, record.locate
    if not isinstance(data, Mapping):
        raise fail("speculation profile must be a JSON object", shown, locate(()))
    version = data.get("schema_version")
    if not (isinstance(version, str) and version.split(".")[0] == "1"):
        raise unread(
            f"unsupported speculation profile schema_version {version!r} (1.x read)",
            shown,
            locate(("schema_version",)),
        )
    if data.get("measured") is False or data.get("mean_accept_length") is None:
        raise unread(
            "the speculation profile is an unmeasured stub (measured: false or no "
            "mean_accept_length)",
            shown,
            locate(("measured",)),
        )
    mean = real(
        data["mean_accept_length"], "mean_accept_length", shown, locate(("mean_accept_length",))
    )
    marginal = _rates(data, "marginal_accept_rates", shown, locate)
    rates_key = "marginal_accept_rates"
    if not marginal:
        rates_key = "conditional_accept_rates"
        conditional = _rates(data, rates_key, shown, locate)
        marginal = tuple(math.prod(conditional[: i + 1]) for i in range(len(conditional)))
    depth = data.get("num_speculative_tokens")
    spans = {"accept_length": locate(("mean_accept_length",))}
    if marginal:
        spans["marginal"] = locate((rates_key,))
        # Each rate's own place (conditional rate i gives marginal rate i).
        spans.update({f"marginal[{i}]": locate((rates_key, i)) for i in range(len(marginal))})
    if depth is not None:
        depth = draft_count(
            depth, "num_speculative_tokens", shown, locate(("num_speculative_tokens",))
        )
        spans["draft_length"] = locate(("num_speculative_tokens",))
    note = "per-step mean from speculation_profile.json"
    per_request = data.get("mean_accept_length_per_request")
    if isinstance(per_request, (int, float)) and not isinstance(per_request, bool):
        note += f" (per-request mean {fmt(per_request)})"
    return Acceptance(
        format="speculation-profile",
        path=shown,
        accept_length=mean,
        formula=f"mean_accept_length = {fmt(mean)}",
        draft_length=depth,
        marginal=marginal,
        note=note,
        spans=spans,
    )


def _rates(data: Mapping[str, object], key: str, shown: str, locate: Locator) -> tuple[float, ...]:
    raw = data.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise fail(f"{key} must be a list", shown, locate((key,)))
    return tuple(real(v, f"{key}[{i}]", shown, at(locate, (key, i))) for i, v in enumerate(raw))
