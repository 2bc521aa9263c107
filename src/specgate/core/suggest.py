"""Did-you-mean for a value outside a closed set (GPU names, mechanisms, enum fields)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def closest(value: str, choices: Sequence[str]) -> str | None:
    """The choice ``value`` most likely meant, else ``None``.

    A case-only difference first (``H100-SXM`` → ``h100-sxm``), then the one choice
    ``value`` starts (``h100`` → ``h100-sxm``), then difflib's closest at ratio ≥ 0.6
    (``egale3`` → ``eagle3``).
    """
    wanted = value.strip().lower()
    by_lower = {c.lower(): c for c in choices}
    if wanted in by_lower:
        return by_lower[wanted]
    if wanted:
        started = [c for c in choices if c.lower().startswith(wanted)]
        if len(started) == 1:
            return started[0]
    close = difflib.get_close_matches(wanted, list(by_lower), n=1)
    return by_lower[close[0]] if close else None


def hint(value: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'h100-sxm'?)`` or ``""``."""
    found = closest(value, choices)
    return f" (did you mean {found!r}?)" if found is not None else ""
