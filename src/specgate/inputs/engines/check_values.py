"""Values the engine checks compare (docs/engines.md#refusals-and-rewrites): a serving
config's value read as a number, a list or a short text, the structural shapes a check
names (``shape``) and the values a condition derives from a key (``derive``).

Split from :mod:`specgate.inputs.engines.checks`, the generic evaluator, which names them
by the data's words; no flag or key is spelled here either.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping

#: Longest value shown in a message, in characters.
_SHOWN = 80
_INTEGER = re.compile(r"^[-+]?\d+$")
#: Python's own limit on int() of a string (sys.int_info.default_max_str_digits).
_MAX_DIGITS = 4300


def number(value: object) -> float | int | None:
    """``value`` as a finite number: an int or float, or a text of one (a whole number
    exactly, however large, up to Python's digit limit); ``None`` otherwise (a bool too)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text) and len(text) <= _MAX_DIGITS:
            return int(text)  # exact, however large (a hostile -999…9 stays negative)
        try:
            number = float(text)
        except (ValueError, OverflowError):
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def as_items(value: object) -> list[str] | None:
    """``value`` as lower-cased items: a list's (the first 1,024), or a comma list's;
    ``None`` for any other value."""
    if isinstance(value, list):
        return [str(v).strip().lower() for v in value[:1024]]
    if isinstance(value, str):
        return [part.strip().lower() for part in value.split(",")[:1024] if part.strip()]
    return None


def shown(value: object) -> str:
    """``value`` as a message shows it: ``null`` for none, cut to 80 characters."""
    text = "null" if value is None else str(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _range_table(value: object) -> str | None:
    """A list of ``(start, end, k)`` batch-size ranges: positive, start ≤ end, k ≥ 0,
    sorted and non-overlapping, the first starting at 1 (vLLM
    ``vllm/v1/spec_decode/dynamic/utils.py`` build_dynamic_sd_schedule_lookup)."""
    if not isinstance(value, list):
        return "it must be a list of (range_start, range_end, num_speculative_tokens) entries"
    if not value:
        return "it must not be empty"
    entries: list[tuple[float, float, float]] = []
    for entry in value[:1024]:
        numbers = [number(x) for x in entry] if isinstance(entry, (list, tuple)) else []
        if len(numbers) != 3 or any(n is None for n in numbers):
            return "each entry must be a 3-item sequence (range_start, range_end, k)"
        start, end, k = (float(n) for n in numbers if n is not None)
        if start <= 0 or end <= 0:
            return f"batch-size range ({start:g}, {end:g}) must be positive"
        if start > end:
            return f"batch-size range start must be <= end for ({start:g}, {end:g}, {k:g})"
        if k < 0:
            return "num_speculative_tokens values must be >= 0"
        entries.append((start, end, k))
    entries.sort()
    for (_, end, _), (start, _, _) in itertools.pairwise(entries):
        if start <= end:
            return "batch-size ranges must be non-overlapping and sorted"
    if entries[0][0] != 1:
        return "the first batch-size range must start at 1"
    return None


def _range_bounds(value: object) -> str | None:
    """The bounds of each ``(start, end, k)`` entry alone: start and end positive, k
    not negative (what :func:`_range_table` checks besides shape and order)."""
    if not isinstance(value, list):
        return None
    for entry in value[:1024]:
        numbers = [number(x) for x in entry] if isinstance(entry, (list, tuple)) else []
        if len(numbers) != 3 or any(n is None for n in numbers):
            continue
        start, end, k = (float(n) for n in numbers if n is not None)
        if start <= 0 or end <= 0:
            return f"batch-size range ({start:g}, {end:g}) must be positive"
        if k < 0:
            return "num_speculative_tokens_per_batch_size values must be >= 0"
    return None


def _schedule(value: object) -> str | None:
    """A ``{batch size: draft length}`` mapping: keys ≥ 1, values ≥ 0 (TensorRT-LLM
    ``DecodingBaseConfig`` draft_len_schedule validator)."""
    if not isinstance(value, Mapping):
        return None
    for key, length in list(value.items())[:1024]:
        size, draft = number(key), number(length)
        if size is None or size < 1:
            return f"batch size threshold must be >= 1, got {shown(key)}"
        if draft is None or draft < 0:
            return f"draft length must be >= 0, got {shown(length)}"
    return None


def _choice_tree(value: object) -> str | None:
    """EAGLE ``eagle_choices``: a list of paths (lists of ints), or a string of one;
    every path's prefix must itself be a choice (TensorRT-LLM ``EagleDecodingConfig``)."""
    if isinstance(value, str):
        return None  # parsed by the engine; specgate does not evaluate it
    if not isinstance(value, list):
        return (
            "Eagle choices should be a List[List[int]] or a string like "
            "[[0], [1], [2], [0, 0], [0, 1]]"
        )
    paths: set[tuple[int, ...]] = set()
    for choice in value[:1024]:
        if not isinstance(choice, list) or not all(isinstance(i, int) for i in choice):
            return "Eagle choices should be a List[List[int]]"
        paths.add(tuple(choice))
    for path in sorted(paths, key=len):
        if len(path) > 1 and path[:-1] not in paths:
            return f"choice {list(path)} is not connected"
    return None


def _mapping_smallest(value: object) -> float | None:
    if not isinstance(value, Mapping) or not value:
        return None
    pairs = [(number(k), number(v)) for k, v in list(value.items())[:1024]]
    known = [(k, v) for k, v in pairs if k is not None and v is not None]
    return min(known)[1] if known else None


def _mapping_largest_value(value: object) -> float | None:
    if not isinstance(value, Mapping) or not value:
        return None
    values = [number(v) for v in list(value.values())[:1024]]
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _mapping_largest_key(value: object) -> float | None:
    if not isinstance(value, Mapping) or not value:
        return None
    keys = [number(k) for k in list(value)[:1024]]
    known = [k for k in keys if k is not None]
    return max(known) if known else None


def _unit_rates(value: object) -> str | None:
    """A comma list of acceptance rates: each finite and in [0, 1], non-increasing
    (llama.cpp ``common_speculative_synth_rates_resolve``)."""
    items = as_items(value)
    if items is None:
        return None
    rates = [number(item) for item in items]
    for item, rate in zip(items, rates, strict=True):
        if rate is None or not 0 <= rate <= 1:
            return f"rate {shown(item)} is not a number in [0, 1]"
    for earlier, later in itertools.pairwise(rates):
        if earlier is not None and later is not None and later > earlier:
            return "synthetic acceptance rates must be non-increasing"
    return None


def _longest_item(value: object) -> float | None:
    """The longest item of a list of lists (a choice tree's depth)."""
    if not isinstance(value, list) or not value:
        return None
    lengths = [len(item) for item in value[:1024] if isinstance(item, list)]
    return float(max(lengths)) if lengths else None


def _largest_third(value: object) -> float | None:
    """The largest third item of a list of triples (a range table's k)."""
    if not isinstance(value, list):
        return None
    ks = [
        number(entry[2])
        for entry in value[:1024]
        if isinstance(entry, (list, tuple)) and len(entry) == 3
    ]
    known = [k for k in ks if k is not None]
    return float(max(known)) if known else None


def _count(value: object) -> float | None:
    items = as_items(value)
    return None if items is None else float(len(items))


SHAPES = {
    "range_table": _range_table,
    "range_bounds": _range_bounds,
    "schedule": _schedule,
    "choice_tree": _choice_tree,
    "unit_rates": _unit_rates,
}

#: Derived values a condition may compare: ``{"key": "spec.draft_len_schedule",
#: "derive": "smallest_key_value", "ne_key": "spec.max_draft_len"}``.
DERIVED = {
    "count": _count,
    "longest_item": _longest_item,
    "largest_third": _largest_third,
    "smallest_key_value": _mapping_smallest,
    "largest_value": _mapping_largest_value,
    "largest_key": _mapping_largest_key,
}
