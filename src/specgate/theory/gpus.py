"""The shipped GPU table (``data/gpus.json``): dense BF16 peak and memory bandwidth
per GPU, each figure with the vendor data sheet it comes from (DESIGN.md §8.1)."""

from functools import cache
from typing import NamedTuple


class Gpu(NamedTuple):
    """One row: ``peak_tflops`` dense BF16 TFLOP/s, ``memory_bandwidth_tbps`` TB/s."""

    key: str
    name: str
    peak_tflops: float
    memory_bandwidth_tbps: float
    source: str


@cache
def gpu_table() -> dict[str, Gpu]:
    """The table, keyed by the ``hardware.gpu`` value (``h100-sxm`` …)."""
    import json  # only a deployment that names hardware reads the table

    from specgate.core.data import read_data

    rows = json.loads(read_data("gpus.json"))["gpus"]
    return {
        key: Gpu(
            key,
            row["name"],
            float(row["peak_tflops"]),
            float(row["memory_bandwidth_tbps"]),
            row["source"],
        )
        for key, row in rows.items()
    }


def gpu_names() -> tuple[str, ...]:
    """The accepted ``hardware.gpu`` values, in table order."""
    return tuple(gpu_table())
