"""JSON metric records → AL: vLLM per-request, llama.cpp timings, SGLang server
info, TensorRT-LLM iteration stats, NVIDIA speculation profiles.

Sources:
- vLLM ``--per-request-spec-decode-metrics`` → ``metrics.speculative_decoding``
  (docs.vllm.ai features/speculative_decoding/acceptance_metrics; aiperf's
  ``SpecDecodeAcceptanceRecord``): ``acceptance_histogram`` (dense list indexed
  by accepted drafts, or sparse ``{accepted: steps}``), ``num_spec_steps``,
  ``num_accepted_draft_tokens``, ``mean_acceptance_length``.
- llama.cpp server ``timings``: ``draft_n``, ``draft_n_accepted`` (r only).
- SGLang ``/get_server_info``: ``avg_spec_accept_length`` (top level or
  ``internal_states[0]``), cumulative since start.
- TensorRT-LLM iteration stats ``specDecodingStats``: ``numAcceptedTokens``,
  ``numRequestsWithDraftTokens``, ``numDraftTokens``; run-level AL =
  (ΣA + ΣR) / ΣR as its accuracy tests compute it.
- NVIDIA/Model-Optimizer ``examples/specdec_bench/specdec_bench/speculation_profile.py``
  (schema 1.0): ``mean_accept_length`` (per step), ``marginal_accept_rates``,
  ``conditional_accept_rates``, ``num_speculative_tokens``, ``measured``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping

from specgate.document import NodePath, Span
from specgate.inputs.metrics._common import (
    Record,
    count,
    fail,
    fmt,
    load_one,
    load_records,
    real,
    survival,
    whole_ratio,
)
from specgate.inputs.types import Acceptance

_Locate = Callable[[NodePath], Span]
_KeyLocate = Callable[[str], Span]
_BLOCK_KEYS = ("acceptance_histogram", "num_spec_steps", "mean_acceptance_length")


def read_vllm_per_request(text: str, shown: str) -> Acceptance:
    """AL pooled over the ``speculative_decoding`` blocks of vLLM per-request records.

    The file may hold one response, a JSON list, or JSON Lines; each record may be
    a response (``metrics.speculative_decoding``), a ``{"speculative_decoding": …}``
    record, or the block itself. Per block: histogram → steps Σh[j], accepted
    Σ j·h[j]; else ``num_accepted_draft_tokens`` / ``num_spec_steps``; else
    ``mean_acceptance_length`` × ``num_spec_steps``. AL = 1 + ΣA / ΣS. D comes
    from a dense histogram's length − 1 or ``num_spec_tokens``.

    Raises:
        InputError: no block, a block with none of those fields, zero steps.
    """
    blocks = [found for record in load_records(text, shown) for found in _blocks(record)]
    if not blocks:
        raise fail(
            f"no speculative_decoding block in {shown} (null when n > 1, absent "
            "without --per-request-spec-decode-metrics)",
            shown,
        )
    accepted = steps = 0.0
    pooled: dict[int, float] = {}
    all_histograms = True
    depth: int | None = None
    lone_mean: float | None = None
    for block, locate in blocks:
        histogram, dense = _histogram(block, locate, shown)
        if dense is not None:
            depth = dense
        if "num_spec_tokens" in block and block["num_spec_tokens"] is not None:
            depth = int(
                count(
                    block["num_spec_tokens"], "num_spec_tokens", shown, locate(("num_spec_tokens",))
                )
            )
        if histogram is not None:
            for j, h in histogram.items():
                pooled[j] = pooled.get(j, 0.0) + h
            steps += sum(histogram.values())
            accepted += sum(j * h for j, h in histogram.items())
            continue
        all_histograms = False
        n = block.get("num_spec_steps")
        if n is not None and "num_accepted_draft_tokens" in block:
            steps += count(n, "num_spec_steps", shown, locate(("num_spec_steps",)))
            accepted += count(
                block["num_accepted_draft_tokens"],
                "num_accepted_draft_tokens",
                shown,
                locate(("num_accepted_draft_tokens",)),
            )
        elif block.get("mean_acceptance_length") is not None:
            mean = real(
                block["mean_acceptance_length"],
                "mean_acceptance_length",
                shown,
                locate(("mean_acceptance_length",)),
            )
            if n is None:
                lone_mean = mean
                continue
            block_steps = count(n, "num_spec_steps", shown, locate(("num_spec_steps",)))
            steps += block_steps
            accepted += (mean - 1) * block_steps
        else:
            raise fail(
                "speculative_decoding block has no acceptance_histogram, "
                "num_spec_steps or mean_acceptance_length",
                shown,
                locate(()),
            )
    first = blocks[0][1](())
    if lone_mean is not None and len(blocks) == 1:
        return Acceptance(
            format="vllm-per-request",
            path=shown,
            accept_length=lone_mean,
            formula=f"mean_acceptance_length = {fmt(lone_mean)}",
            draft_length=depth,
            spans={"accept_length": first},
        )
    if lone_mean is not None:
        raise fail(
            "a record gives mean_acceptance_length without num_spec_steps, so records "
            "cannot be pooled",
            shown,
            first,
        )
    if steps <= 0:
        raise fail("zero speculative steps in the per-request records", shown, first)
    marginal = survival(pooled, depth) if all_histograms else ()
    return Acceptance(
        format="vllm-per-request",
        path=shown,
        accept_length=1 + accepted / steps,
        formula=f"1 + {fmt(accepted)}/{fmt(steps)}",
        draft_length=depth,
        marginal=marginal,
        note=f"pooled over {len(blocks)} request record{'s' if len(blocks) > 1 else ''}",
        spans={"accept_length": first},
    )


def _blocks(record: Record) -> list[tuple[Mapping[str, object], _Locate]]:
    data, locate = record.data, record.locate
    if isinstance(data, list):
        return [
            found
            for index, item in enumerate(data)
            for found in _blocks(Record(item, _under(locate, (index,))))
        ]
    if not isinstance(data, Mapping):
        return []
    for path in (("speculative_decoding",), ("metrics", "speculative_decoding")):
        node: object = data
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping):
            return [(node, _under(locate, path))]
        if path[0] in data and node is None:
            return []  # explicitly null (n > 1)
    if any(key in data for key in _BLOCK_KEYS):
        return [(data, locate)]
    return []


def _histogram(
    block: Mapping[str, object], locate: _Locate, shown: str
) -> tuple[dict[int, float] | None, int | None]:
    """The block's histogram {accepted: steps} and, for a dense list, D = len − 1."""
    raw = block.get("acceptance_histogram")
    if raw is None:
        return None, None
    where = ("acceptance_histogram",)
    if isinstance(raw, list):
        return (
            {
                j: count(h, "acceptance_histogram entry", shown, locate((*where, j)))
                for j, h in enumerate(raw)
            },
            len(raw) - 1 if raw else None,
        )
    if isinstance(raw, Mapping):
        return histogram_from_mapping(raw, shown, lambda key: locate((*where, key))), None
    raise fail("acceptance_histogram must be a list or a mapping", shown, locate(where))


def histogram_from_mapping(
    raw: Mapping[object, object], shown: str, locate: _KeyLocate
) -> dict[int, float]:
    """A sparse ``{accepted drafts: steps}`` map (string or integer keys)."""
    out: dict[int, float] = {}
    for key, value in raw.items():
        text = str(key).strip()
        if not text.isdigit():
            raise fail(
                f"histogram key {key!r} is not an accepted-draft count", shown, locate(str(key))
            )
        out[int(text)] = count(value, f"histogram[{text}]", shown, locate(str(key)))
    return out


def read_llamacpp_timings(text: str, shown: str) -> Acceptance:
    """r = draft_n_accepted / draft_n from llama-server ``timings``; AL as an estimate.

    llama.cpp does not report verification steps and drafts vary in length, so AL
    is not recoverable. The labelled estimate assumes every decode step emits its
    accepted drafts plus one token: AL ≈ predicted_n / (predicted_n − draft_n_accepted)
    (fixtures/real/SOURCES.md, llama.cpp PR #12603).

    Raises:
        InputError: no ``draft_n`` (speculation off), zero drafts, no ``predicted_n``
            or ``predicted_n ≤ draft_n_accepted``.
    """
    record = load_one(text, shown)
    data, locate = record.data, record.locate
    if isinstance(data, Mapping) and isinstance(data.get("timings"), Mapping):
        data, locate = data["timings"], _under(locate, ("timings",))
    if not isinstance(data, Mapping) or "draft_n" not in data:
        raise fail(f"no timings.draft_n in {shown} (speculative decoding off?)", shown)
    drafted = count(data["draft_n"], "draft_n", shown, locate(("draft_n",)))
    accepted = count(
        data.get("draft_n_accepted"), "draft_n_accepted", shown, locate(("draft_n_accepted",))
    )
    if drafted <= 0:
        raise fail(
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
            raise fail(
                f"no avg_spec_accept_length in {shown} (top level or "
                "internal_states[0]; speculative decoding off?)",
                shown,
            )
        data, path = states[0], ("internal_states", 0, "avg_spec_accept_length")
        if len(states) > 1:
            note += f"; internal_states[0] of {len(states)} used"
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


def read_trtllm_iteration_stats(text: str, shown: str) -> Acceptance:
    """(ΣnumAcceptedTokens + ΣnumRequestsWithDraftTokens) / ΣnumRequestsWithDraftTokens.

    The file is a JSON list of iteration stats (``trtllm-serve`` ``/metrics``,
    ``llm.get_stats()``; items may be JSON strings) or JSON Lines.

    Raises:
        InputError: no ``specDecodingStats``, or no request carried a draft.
    """
    accepted = requests = tokens = 0.0
    seen = 0
    first: Span | None = None
    for record in load_records(text, shown):
        item, locate = record.data, record.locate
        if isinstance(item, str):
            try:
                item = json.loads(item)
            except ValueError:
                raise fail(
                    "iteration stats item is a string but not JSON", shown, locate(())
                ) from None
            locate = _fixed(locate(()))
        stats = item.get("specDecodingStats") if isinstance(item, Mapping) else None
        if not isinstance(stats, Mapping):
            continue
        seen += 1
        first = first or locate(("specDecodingStats",))

        def value(key: str, stats: Mapping[str, object] = stats, locate: _Locate = locate) -> float:
            return count(stats.get(key, 0), key, shown, locate(("specDecodingStats", key)))

        accepted += value("numAcceptedTokens")
        requests += value("numRequestsWithDraftTokens")
        tokens += value("numDraftTokens")
    if first is None:
        raise fail(
            f"no specDecodingStats in the iteration stats of {shown} (speculative decoding off?)",
            shown,
        )
    if requests <= 0:
        raise fail(
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
        draft_length=whole_ratio(tokens, requests),
        note=f"summed over {seen} iteration{'s' if seen > 1 else ''}",
        spans={"accept_length": first},
        acceptance_rate=accepted / tokens if tokens else None,
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
        raise fail(
            f"unsupported speculation profile schema_version {version!r} (1.x read)",
            shown,
            locate(("schema_version",)),
        )
    if data.get("measured") is False or data.get("mean_accept_length") is None:
        raise fail(
            "the speculation profile is an unmeasured stub (measured: false or no "
            "mean_accept_length)",
            shown,
            locate(("measured",)),
        )
    mean = real(
        data["mean_accept_length"], "mean_accept_length", shown, locate(("mean_accept_length",))
    )
    marginal = _rates(data, "marginal_accept_rates", shown, locate)
    if not marginal:
        conditional = _rates(data, "conditional_accept_rates", shown, locate)
        marginal = tuple(math.prod(conditional[: i + 1]) for i in range(len(conditional)))
    depth = data.get("num_speculative_tokens")
    spans = {"accept_length": locate(("mean_accept_length",))}
    if depth is not None:
        depth = int(
            count(depth, "num_speculative_tokens", shown, locate(("num_speculative_tokens",)))
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


def _rates(data: Mapping[str, object], key: str, shown: str, locate: _Locate) -> tuple[float, ...]:
    raw = data.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise fail(f"{key} must be a list", shown, locate((key,)))
    return tuple(real(v, f"{key}[{i}]", shown, locate((key, i))) for i, v in enumerate(raw))


def _fixed(span: Span) -> _Locate:
    """A locator pointing every path at ``span`` (values inside an embedded string)."""
    return lambda _path: span


def _under(locate: _Locate, prefix: NodePath) -> _Locate:
    return lambda path: locate((*prefix, *path))
