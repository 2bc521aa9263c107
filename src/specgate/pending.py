"""Model values that parallel work adds (theory v2, DESIGN.md §8): read here, in
one place, so the change gate (§9) picks them up once the model carries them.

Until then each returns ``None`` (the value is unknown, never guessed).
"""

from __future__ import annotations

from specgate.model import Deployment


def measured_speedup(deployment: Deployment) -> float | None:
    """``evidence.measured_speedup`` (§8.2), when the model carries it."""
    value = getattr(deployment.evidence, "measured_speedup", None)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
