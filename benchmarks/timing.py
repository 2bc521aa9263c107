"""Timing helpers shared by the in-process benchmarks of this folder."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable


def best(work: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs of ``work``, in seconds (the least disturbed by
    whatever else the machine is doing)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def children_cpu() -> float:
    """CPU seconds (user + system) the finished child processes of this one have used:
    the difference around a run is that run's CPU time, less sensitive to other load on
    the machine than wall time."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
