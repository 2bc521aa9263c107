"""Per-request and per-iteration JSON records → pooled AL: vLLM per-request
metrics and TensorRT-LLM iteration stats.

Sources:
- vLLM ``--per-request-spec-decode-metrics`` → ``metrics.speculative_decoding``
  (docs.vllm.ai features/speculative_decoding/acceptance_metrics; aiperf's
  ``SpecDecodeAcceptanceRecord``): ``acceptance_histogram`` (dense list indexed
  by accepted drafts, or sparse ``{accepted: steps}``), ``num_spec_steps``,
  ``num_accepted_draft_tokens``, ``mean_acceptance_length``.
- TensorRT-LLM iteration stats ``specDecodingStats``: ``numAcceptedTokens``,
  ``numRequestsWithDraftTokens``, ``numDraftTokens``; run-level AL =
  (ΣA + ΣR) / ΣR as its accuracy tests compute it (docs/engines.md
  docs/claims-file.md#format-rules).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping

from specgate.core.limits import MAX_NESTING
from specgate.inputs.metrics._common import (
    KeyLocator,
    Locator,
    Record,
    above_depth,
    at,
    count,
    draft_count,
    fail,
    finite,
    fmt,
    largest_accepted,
    real,
    survival,
    under,
    unread,
    whole_ratio,
)
from specgate.inputs.metrics.json_records import records_from_text
from specgate.inputs.types import Acceptance
from specgate.load.document import Span
from specgate.load.json_loader import loads

_EXACT = 2**53  # the largest count a float holds exactly
_BLOCK_KEYS = ("acceptance_histogram", "num_spec_steps", "mean_acceptance_length")


def read_vllm_per_request(source: str | Iterable[Record], shown: str) -> Acceptance:
    """AL pooled over the ``speculative_decoding`` blocks of vLLM per-request records.

    ``source`` is the file's text or its records (:func:`.json_records.read_records`,
    streamed: only the pooled counts are kept). The file may hold one response, a
    JSON list, or JSON Lines; each record may be
    a response (``metrics.speculative_decoding``), a ``{"speculative_decoding": …}``
    record, or the block itself. Per block: histogram → steps Σh[j], accepted
    Σ j·h[j]; else ``num_accepted_draft_tokens`` / ``num_spec_steps``; else
    ``mean_acceptance_length`` × ``num_spec_steps``. AL = 1 + ΣA / ΣS. D comes
    from a dense histogram's length − 1 or ``num_spec_tokens``.

    A histogram bucket above the block's own ``num_spec_tokens`` with steps in it
    contradicts the record (an error at the record). Above the caller's
    ``draft_length`` it only says the data was measured at a larger D:
    ``min_draft_length`` records the largest accepted count (rule SG309 judges it).

    Raises:
        InputError: no block, a block with none of those fields, zero steps, an
            accepted count above the block's ``num_spec_tokens``.
    """
    records = records_from_text(source, shown) if isinstance(source, str) else source
    accepted = steps = 0.0
    pooled: dict[int, float] = {}
    all_histograms = True
    depth: int | None = None
    lone_mean: float | None = None
    first: Span | None = None
    blocks = 0
    for block, locate in (found for record in records for found in _blocks(record)):
        blocks += 1
        if first is None:
            first = locate(())
        elif lone_mean is not None:
            raise _unpoolable(shown, first)
        histogram, dense = _histogram(block, locate, shown)
        if dense is not None:
            depth = dense
        own = block.get("num_spec_tokens")
        if own is not None:
            depth = draft_count(own, "num_spec_tokens", shown, at(locate, ("num_spec_tokens",)))
        if histogram is not None:
            if own is not None:
                _check_depth(histogram, depth, locate, shown)
            for j, h in histogram.items():
                pooled[j] = pooled.get(j, 0.0) + h
            steps += sum(histogram.values())
            accepted += sum(map(operator.mul, histogram.keys(), histogram.values()))
            continue
        all_histograms = False
        n = block.get("num_spec_steps")
        if n is not None and "num_accepted_draft_tokens" in block:
            steps += count(n, "num_spec_steps", shown, at(locate, ("num_spec_steps",)))
            accepted += count(
                block["num_accepted_draft_tokens"],
                "num_accepted_draft_tokens",
                shown,
                at(locate, ("num_accepted_draft_tokens",)),
            )
        elif block.get("mean_acceptance_length") is not None:
            mean = real(
                block["mean_acceptance_length"],
                "mean_acceptance_length",
                shown,
                at(locate, ("mean_acceptance_length",)),
            )
            if n is None:
                if blocks > 1:  # this record's mean cannot join the ones before it
                    raise _unpoolable(shown, locate(("mean_acceptance_length",)))
                lone_mean = mean
                continue
            block_steps = count(n, "num_spec_steps", shown, at(locate, ("num_spec_steps",)))
            steps += block_steps
            accepted += (mean - 1) * block_steps
        else:
            raise unread(
                "speculative_decoding block has no acceptance_histogram, "
                "num_spec_steps or mean_acceptance_length",
                shown,
                locate(()),
            )
    if first is None:
        raise unread(
            f"no speculative_decoding block in {shown} (null when n > 1, absent "
            "without --per-request-spec-decode-metrics)",
            shown,
        )
    if lone_mean is not None:
        return Acceptance(
            format="vllm-per-request",
            path=shown,
            accept_length=lone_mean,
            formula=f"mean_acceptance_length = {fmt(lone_mean)}",
            draft_length=depth,
            spans={"accept_length": first},
        )
    if steps <= 0:
        raise unread("zero speculative steps in the per-request records", shown, first)
    marginal = survival(pooled, depth) if all_histograms else ()
    return Acceptance(
        format="vllm-per-request",
        path=shown,
        accept_length=1
        + finite(accepted, "the accepted drafts", shown, first)
        / finite(steps, "num_spec_steps", shown, first),
        formula=f"1 + {fmt(accepted)}/{fmt(steps)}",
        draft_length=depth,
        marginal=marginal,
        min_draft_length=largest_accepted(pooled) if pooled else None,
        note=f"pooled over {blocks} request record{'s' if blocks > 1 else ''}",
        spans={"accept_length": first},
        histogram=tuple(sorted((j, int(h)) for j, h in pooled.items() if h > 0))
        if all_histograms and all(float(h).is_integer() for h in pooled.values())
        else (),
        steps=int(steps) if float(steps).is_integer() else None,
    )


def _unpoolable(shown: str, first: Span) -> Exception:
    return unread(
        "a record gives mean_acceptance_length without num_spec_steps, so records cannot be pooled",
        shown,
        first,
    )


def _check_depth(
    histogram: Mapping[int, float], depth: int | None, locate: Locator, shown: str
) -> None:
    """No step accepted more drafts than the block's own ``num_spec_tokens`` (``depth``)."""
    over = above_depth(histogram, depth)
    if over is not None:
        raise fail(
            f"accepted count {over} exceeds D = {depth} (num_spec_tokens)",
            shown,
            locate(("acceptance_histogram",)),
        )


#: How deep lists of records may nest: the loaders' own bound (core.limits.MAX_NESTING,
#: an input error at the line beyond it), so no record a file holds is ever skipped
#: silently for its depth (a skipped record would be a different reading).
_MAX_LIST_DEPTH = MAX_NESTING


def _blocks(record: Record, depth: int = 0) -> list[tuple[Mapping[str, object], Locator]]:
    data, locate = record.data, record.locate
    if isinstance(data, list):
        if depth >= _MAX_LIST_DEPTH:
            return []
        return [
            found
            for index, item in enumerate(data)
            for found in _blocks(Record(item, under(locate, (index,))), depth + 1)
        ]
    if not isinstance(data, dict):
        return []
    node = data.get("speculative_decoding")
    if isinstance(node, dict):
        return [(node, under(locate, ("speculative_decoding",)))]
    if "speculative_decoding" in data and node is None:
        return []  # explicitly null (n > 1)
    metrics = data.get("metrics")
    node = metrics.get("speculative_decoding") if isinstance(metrics, dict) else None
    if isinstance(node, dict):
        return [(node, under(locate, ("metrics", "speculative_decoding")))]
    if "metrics" in data and node is None:
        return []  # explicitly null (n > 1)
    if any(key in data for key in _BLOCK_KEYS):
        return [(data, locate)]
    return []


def _histogram(
    block: Mapping[str, object], locate: Locator, shown: str
) -> tuple[dict[int, float] | None, int | None]:
    """The block's histogram {accepted: steps} and, for a dense list, D = len − 1."""
    raw = block.get("acceptance_histogram")
    if raw is None:
        return None, None
    where = ("acceptance_histogram",)
    if isinstance(raw, list):
        if raw and set(map(type, raw)) == {int} and min(raw) >= 0 and max(raw) < _EXACT:
            # The common case at C speed: whole counts a float holds exactly.
            return dict(enumerate(map(float, raw))), len(raw) - 1
        return (
            {
                j: count(h, "acceptance_histogram entry", shown, at(locate, (*where, j)))
                for j, h in enumerate(raw)
            },
            len(raw) - 1 if raw else None,
        )
    if isinstance(raw, Mapping):
        return histogram_from_mapping(raw, shown, lambda key: locate((*where, key))), None
    raise fail("acceptance_histogram must be a list or a mapping", shown, locate(where))


def histogram_from_mapping(
    raw: Mapping[object, object], shown: str, locate: KeyLocator
) -> dict[int, float]:
    """A sparse ``{accepted drafts: steps}`` map (string or integer keys)."""
    out: dict[int, float] = {}
    for key, value in raw.items():
        text = str(key).strip()
        if not text.isdigit():
            raise fail(
                f"histogram key {key!r} is not an accepted-draft count", shown, locate(str(key))
            )
        out[int(text)] = count(value, f"histogram[{text}]", shown, _key_at(locate, str(key)))
    return out


def read_trtllm_iteration_stats(source: str | Iterable[Record], shown: str) -> Acceptance:
    """(ΣnumAcceptedTokens + ΣnumRequestsWithDraftTokens) / ΣnumRequestsWithDraftTokens.

    ``source`` is the file's text or its records (streamed). The file is a JSON list
    of iteration stats (``trtllm-serve`` ``/metrics``, ``llm.get_stats()``; items may
    be JSON strings) or JSON Lines.

    Raises:
        InputError: no ``specDecodingStats``, or no request carried a draft.
    """
    accepted = requests = tokens = 0.0
    seen = 0
    first: Span | None = None
    records = records_from_text(source, shown) if isinstance(source, str) else source
    for record in records:
        item, locate = record.data, record.locate
        if isinstance(item, str):
            try:
                item = loads(item)
            except ValueError:
                raise fail(
                    "iteration stats item is a string but not JSON (or nested too deep, "
                    "or an integer with too many digits)",
                    shown,
                    locate(()),
                ) from None
            locate = _fixed(locate)
        stats = item.get("specDecodingStats") if isinstance(item, Mapping) else None
        if not isinstance(stats, Mapping):
            continue
        seen += 1
        first = first or locate(("specDecodingStats",))

        def value(key: str, stats: Mapping[str, object] = stats, locate: Locator = locate) -> float:
            return count(stats.get(key, 0), key, shown, at(locate, ("specDecodingStats", key)))

        accepted += value("numAcceptedTokens")
        requests += value("numRequestsWithDraftTokens")
        tokens += value("numDraftTokens")
        for total, key in ((accepted, "numAcceptedTokens"), (requests,
                           "numRequestsWithDraftTokens"), (tokens, "numDraftTokens")):
            finite(total, f"the {key} values", shown, at(locate, ("specDecodingStats", key)))
    if first is None:
        raise unread(
            f"no specDecodingStats in the iteration stats of {shown} (speculative decoding off?)",
            shown,
        )
    if requests <= 0:
        raise unread(
            "zero requests with draft tokens in the iteration stats: no speculative "
            "step was measured",
            shown,
            first,
        )
    return Acceptance(
        format="trtllm-iteration-stats",
        path=shown,
        accept_length=(accepted + requests) / requests,
        formula=f"({fmt(accepted)} + {fmt(requests)})/{fmt(requests)}",
        steps=int(requests) if float(requests).is_integer() else None,
        draft_length=whole_ratio(tokens, requests),
        note=f"summed over {seen} iteration{'s' if seen > 1 else ''}",
        spans={"accept_length": first},
        acceptance_rate=accepted / tokens if tokens else None,
    )


def _key_at(locate: KeyLocator, key: str) -> Callable[[], Span]:
    return lambda: locate(key)


def _fixed(outer: Locator) -> Locator:
    """A locator pointing every path at the record itself (values inside an embedded
    JSON string), located only when asked."""
    return lambda _path: outer(())
