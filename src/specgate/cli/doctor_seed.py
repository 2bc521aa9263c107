"""``specgate doctor``'s free-text ``--model-size`` and ``--latency-region`` (issue 26).

The seed's doctor takes any text for both and looks for words in it: a size containing
``small``, ``tiny``, ``3b``, ``7b`` or ``8b`` is small (at low latency), one containing
``large``, ``70b``, ``120b``, ``405b`` or ``moe`` is large; a latency region is low only
when it reads ``low``. specgate reads the same words, and a parameter count as a number
with its unit rather than as a substring (``13b`` is 13 B, mid-size, where the seed finds
``3b`` in it; ``72b`` is large, where the seed finds no word and says medium). A text in
which it finds neither a word nor a count is a usage error naming what it accepts, where
the seed reads it as medium (a typo would silently change the advice). Each difference
is listed in the README's doctor section.
"""

import argparse
import re
from typing import NamedTuple


class ModelSize(NamedTuple):
    """What ``--model-size`` says: a size class (``tiny``/``small``/``medium``/``large``,
    ``None`` when only MoE is said) and whether the model is a mixture of experts."""

    size: str | None
    moe: bool


#: ``8x7b``: experts × parameters per expert (a mixture of experts).
_EXPERTS = re.compile(r"(\d+(?:\.\d+)?)\s*x\s*(\d+(?:\.\d+)?)\s*([kmbt])(?![a-z])")
#: ``30b-a3b``: ``a`` and the active parameters (a mixture of experts).
_ACTIVE = re.compile(r"(?<![a-z0-9.])a(\d+(?:\.\d+)?)\s*[kmbt](?![a-z])")
#: ``70b``, ``1.5B``, ``500m``, ``1t``: a parameter count with its unit.
_COUNT = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([kmbt])(?![a-z])")
_UNIT_B = {"k": 1e-6, "m": 1e-3, "b": 1.0, "t": 1e3}
_WORDS = ("tiny", "small", "medium", "large")

_ACCEPTED = (
    "tiny, small, medium or large, a parameter count (70b, 1.5B, 500m), "
    "experts × size (8x7b), total and active (30b-a3b), or moe"
)


def _size_of(billions: float) -> str:
    from specgate.analysis.mechanisms import LARGE_MODEL_MIN_B, SMALL_MODEL_MAX_B

    if billions <= SMALL_MODEL_MAX_B:
        return "small"
    return "large" if billions >= LARGE_MODEL_MIN_B else "medium"


def model_size(text: str) -> ModelSize:
    """``--model-size``: a size word, a parameter count or ``moe`` (case and spacing
    ignored). A count wins over a word (as ``model.parameters_b`` wins over
    ``model.size``): ≤ 10 B is small, ≥ 60 B large, between medium (the mechanism
    table's limits).

    Raises:
        argparse.ArgumentTypeError: text with neither a size word, a count nor ``moe``.
    """
    lowered = text.strip().lower()[:200]
    experts = _EXPERTS.search(lowered)
    moe = "moe" in lowered or experts is not None or _ACTIVE.search(lowered) is not None
    if experts is not None:
        total = float(experts[1]) * float(experts[2]) * _UNIT_B[experts[3]]
        return ModelSize(_size_of(total), True)
    for match in _COUNT.finditer(lowered):
        return ModelSize(_size_of(float(match[1]) * _UNIT_B[match[2]]), moe)
    word = next((w for w in _WORDS if w in lowered), None)
    if word is None and not moe:
        raise argparse.ArgumentTypeError(f"{text.strip()[:60]!r} names no size: give {_ACCEPTED}")
    return ModelSize(word, moe)


_LOW = frozenset({"low", "low-latency", "low latency", "latency", "interactive"})
_THROUGHPUT = frozenset(
    {"throughput", "high-throughput", "high throughput", "high", "batch", "offline"}
)


def latency_region(text: str) -> str:
    """``--latency-region``: ``low`` (also low-latency, latency, interactive) or
    ``throughput`` (also high-throughput, high, batch, offline), case ignored.

    Raises:
        argparse.ArgumentTypeError: any other text (the seed reads it as not low).
    """
    lowered = " ".join(text.strip().lower().split())
    if lowered in _LOW:
        return "low"
    if lowered in _THROUGHPUT:
        return "throughput"
    raise argparse.ArgumentTypeError(
        f"{text.strip()[:60]!r} is no latency region: give low or throughput"
    )
