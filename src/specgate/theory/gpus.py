"""The shipped GPU table (``data/gpus.json``): dense tensor-core peaks per compute dtype,
memory bandwidth and all-reduce bandwidth per GPU, each row with the data sheets it
comes from (docs/theory.md#cost-model, docs/theory.md#step-time-model,
docs/theory.md#step-time-inputs)."""

from functools import cache
from typing import Literal, NamedTuple

ComputeDtype = Literal["bf16", "fp16", "fp8", "int8", "fp4"]
#: The ``hardware.compute_dtype`` values, in the table's column order.
COMPUTE_DTYPES: tuple[ComputeDtype, ...] = ("bf16", "fp16", "fp8", "int8", "fp4")


class Gpu(NamedTuple):
    """One row of the table.

    Attributes:
        key: the ``hardware.gpu`` value (``h100-sxm``).
        peak_tflops: dense BF16 peak, TFLOP/s (v2's single figure).
        memory_bandwidth_tbps: memory bandwidth, TB/s (10^12 B/s).
        source: the first source (the vendor data sheet); ``sources`` all of them.
        peaks: dense peak per compute dtype, TFLOP/s (INT8: TOP/s); ``None`` where the
            GPU has no tensor cores of that format (A100 has no FP8).
        allreduce_gbps: bw_ar of docs/theory.md#step-time-model, the per-GPU one-direction bandwidth
        a ring
            all-reduce reaches at line rate, GB/s (10^9 B/s).
    """

    key: str
    name: str
    peak_tflops: float
    memory_bandwidth_tbps: float
    source: str
    peaks: dict[str, float | None] = {}  # noqa: RUF012 -- a NamedTuple field, never mutated
    allreduce_gbps: float | None = None
    sources: tuple[str, ...] = ()

    def peak(self, dtype: str) -> float | None:
        """The dense peak at ``dtype`` (TFLOP/s), ``None`` when the GPU has none."""
        return self.peaks.get(dtype)


@cache
def gpu_table() -> dict[str, Gpu]:
    """The table, keyed by the ``hardware.gpu`` value (``h100-sxm`` …)."""
    import json  # only a deployment that names hardware reads the table

    from specgate.core.data import read_data

    rows = json.loads(read_data("gpus.json"))["gpus"]
    table: dict[str, Gpu] = {}
    for key, row in rows.items():
        peaks = {
            dtype: None if value is None else float(value)
            for dtype, value in row["peak_tflops"].items()
        }
        bf16 = peaks["bf16"]
        assert bf16 is not None, key
        table[key] = Gpu(
            key,
            row["name"],
            bf16,
            float(row["memory_bandwidth_tbps"]),
            row["sources"][0],
            peaks,
            None if row.get("allreduce_gbps") is None else float(row["allreduce_gbps"]),
            tuple(row["sources"]),
        )
    return table


def gpu_names() -> tuple[str, ...]:
    """The accepted ``hardware.gpu`` values, in table order."""
    return tuple(gpu_table())
