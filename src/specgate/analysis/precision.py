"""Which weight bytes b_w, compute peak F_c and KV bytes b_kv the step-time model uses
(docs/theory.md#step-time-inputs), where each comes from, and — for what is not known — the values a
lower bound on β must range over.

First that applies, for each number:

- b_w: ``hardware.weight_bytes``; the checkpoint's ``quantization_config`` (a
  checkpoint that declares one is what the engine loads: vLLM refuses a
  ``--quantization`` that differs); the serving config's online ``--quantization``;
  its ``--dtype``; the checkpoint's ``dtype``/``torch_dtype``; else 2 (BF16), a guess.
  A checkpoint config whose precision the served id contradicts (the BF16 base's
  ``config.json`` beside a served ``…-FP8-dynamic``, ``-AWQ``, ``-GPTQ-Int4``) is
  another checkpoint's: nothing is read from it here (SG301 warns).
- the compute dtype: ``hardware.peak_tflops`` (the figure itself); else
  ``hardware.compute_dtype``; else the dtype the declared scheme runs its GEMMs at
  (W8A8 FP8 → FP8; weight-only → the model's 16-bit dtype); else a guess paired with
  b_w (FP8 for 1-byte, FP4 for half-byte weights when the GPU has that peak, else
  BF16): the v2 defect was the BF16 peak paired with 1-byte FP8 weights, which
  halves n* and fails healthy FP8 deployments.
- b_kv: ``hardware.kv_cache_bytes``; the serving config's ``--kv-cache-dtype``; the
  checkpoint's (a ModelOpt ``kv_cache_quant_algo``, else the model dtype); else 2.

What is read from a file is *stated*: fails may rest on it. A guess is an estimate:
the proven bound takes the lowest β over the precisions a deployment could run at
(:data:`WEIGHT_SCHEMES`, :data:`KV_BYTES`), so it never rests on the guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from specgate.model import served_model
from specgate.theory import formulas as theory

if TYPE_CHECKING:
    from specgate.inputs.types import Precision as Declared
    from specgate.model.deployment import Deployment
    from specgate.theory.gpus import Gpu

#: (b_w, compute dtype) of the serving precisions in use: BF16; FP8 W8A8; INT8 W8A8;
#: 8-bit weight-only (W8A16); 4-bit weight-only (AWQ/GPTQ W4A16); FP4 W4A4 (NVFP4).
WEIGHT_SCHEMES: tuple[tuple[float, str], ...] = (
    (2.0, "bf16"),
    (1.0, "fp8"),
    (1.0, "int8"),
    (1.0, "bf16"),
    (0.5, "bf16"),
    (0.5, "fp4"),
)
#: b_kv a KV cache can be stored at: 16-bit, 8-bit (FP8/INT8), 4-bit.
KV_BYTES: tuple[float, ...] = (2.0, 1.0, 0.5)
#: Where a checkpoint declares a quantization scheme (inputs.precision.read_precision).
QUANTIZATION_KEYS = served_model.QUANTIZATION_KEYS
#: The input that settles an unknown precision (SG112 names it).
SETTLE = (
    "hardware.weight_bytes with hardware.compute_dtype (or model.hf_config, whose "
    "dtype/quantization_config declare them)"
)
SETTLE_KV = "hardware.kv_cache_bytes (or the serving config's --kv-cache-dtype)"


class Precision(NamedTuple):
    """The numbers used and where they come from.

    Attributes:
        weight_bytes: b_w; ``weight_source`` where it was read (``None``: guessed).
        compute_dtype: the dtype of F_c (``None`` when ``hardware.peak_tflops`` gives
            F_c itself); ``compute_source`` where it was read (``None``: guessed).
        kv_cache_bytes: b_kv; ``kv_source`` where it was read (``None``: guessed).
        note: why a declared scheme gave no b_w (mixed precision, an unpriced method).
    """

    weight_bytes: float
    weight_source: str | None
    compute_dtype: str | None
    compute_source: str | None
    kv_cache_bytes: float
    kv_source: str | None
    note: str | None = None


def _declared(deployment: Deployment) -> tuple[list[tuple[Declared, str]], float | None, str]:
    """The declarations in force, in order (checkpoint quantization, serving config,
    checkpoint dtype), and the serving config's KV bytes with where it stands."""
    inputs = deployment.inputs
    shape = inputs.model if inputs else None
    engine = inputs.engine if inputs else None
    found: list[tuple[Declared, str]] = []
    checkpoint = shape.precision if shape is not None else None
    served = served_model.literal_served(engine)
    if (
        checkpoint is not None
        and shape is not None
        and served is not None
        and served_model.precision_contradiction(served, shape) is not None
    ):
        # the served id names a checkpoint of another precision (…-FP8 beside the BF16
        # base's config.json): the config is another checkpoint's, so its precision is
        # not stated (SG301 warns); the proven β ranges over the precisions
        checkpoint = None
    if checkpoint is not None and checkpoint.key in QUANTIZATION_KEYS:
        found.append((checkpoint, f"{shape.path if shape else ''}: {checkpoint.method}"))
    kv_engine: float | None = None
    engine_at = ""
    if engine is not None:
        # the reader module (and its dataclass records) only when a serving config was read
        from specgate.inputs.precision import serving_precision

        opts = engine.check_options

        def value(name: str) -> object:
            opt = opts.get(name)
            return getattr(opt, "value", None)

        online, kv_engine = serving_precision(
            value("quantization"), value("dtype"), value("kv_cache_dtype")
        )
        engine_at = engine.path
        if online is not None:
            found.append((online, f"{engine.path}: {online.method}"))
    if checkpoint is not None and checkpoint.key not in QUANTIZATION_KEYS:
        found.append((checkpoint, f"{shape.path if shape else ''}: {checkpoint.method}"))
    return found, kv_engine, engine_at


def resolve(deployment: Deployment, row: Gpu | None) -> Precision:
    """b_w, the compute dtype and b_kv of ``deployment`` (module docstring)."""
    hardware = deployment.hardware
    declared, kv_engine, engine_at = _declared(deployment)
    note = next((d.note for d, _ in declared if d.note is not None), None)
    weight_bytes, weight_source = theory.DEFAULT_WEIGHT_BYTES, None
    if hardware.weight_bytes is not None:
        weight_bytes, weight_source = hardware.weight_bytes, "hardware.weight_bytes"
    else:
        for item, where in declared:
            if item.weight_bytes is not None:
                weight_bytes, weight_source = item.weight_bytes, where
                break
            if item.note is not None:
                break  # a mixed or unpriced scheme: the later declarations do not hold
    compute, compute_source = None, None
    if hardware.peak_tflops is not None:
        compute_source = "hardware.peak_tflops"
    elif hardware.compute_dtype is not None:
        compute, compute_source = hardware.compute_dtype, "hardware.compute_dtype"
    else:
        for item, where in declared:
            if item.compute_dtype is not None and (
                hardware.weight_bytes is None or item.weight_bytes == hardware.weight_bytes
            ):
                compute, compute_source = item.compute_dtype, where
                break
            if item.note is not None:
                break
        if compute is None:
            compute = _paired(weight_bytes, row)
    kv, kv_source = 2.0, None
    if hardware.kv_cache_bytes is not None:
        kv, kv_source = hardware.kv_cache_bytes, "hardware.kv_cache_bytes"
    elif kv_engine is not None:
        kv, kv_source = kv_engine, f"{engine_at}: --kv-cache-dtype"
    else:
        for item, where in declared:
            if item.kv_cache_bytes is not None:
                kv, kv_source = item.kv_cache_bytes, where
                if item.key in QUANTIZATION_KEYS and item.kv_cache_bytes == 2.0:
                    # a weight scheme's 2-byte KV is the model dtype's (--kv-cache-dtype
                    # auto), not the scheme's: say so, not "quant_method fp8"
                    at = where.split(": ", 1)[0]
                    kv_source = f"{at}: the model dtype (--kv-cache-dtype auto)"
                break
    return Precision(weight_bytes, weight_source, compute, compute_source, kv, kv_source, note)


def _paired(weight_bytes: float, row: Gpu | None) -> str:
    """The guessed compute dtype for b_w: FP8 for 1-byte, FP4 for half-byte weights
    when the GPU's row has that peak, else BF16 (docs/theory.md#step-time-inputs's default)."""
    by_weights = {1.0: "fp8", 0.5: "fp4"}.get(weight_bytes)
    if by_weights is not None and row is not None and row.peak(by_weights) is not None:
        return by_weights
    return "bf16"


def peak_tflops(precision: Precision, deployment: Deployment, row: Gpu | None) -> float | None:
    """F_c in TFLOP/s: ``hardware.peak_tflops``, else the row's peak at the compute
    dtype (the BF16 peak when the GPU has none at that dtype: A100 runs FP8
    checkpoints weight-only), else ``None``."""
    if deployment.hardware.peak_tflops is not None:
        return deployment.hardware.peak_tflops
    if row is None or precision.compute_dtype is None:
        return None
    return row.peak(precision.compute_dtype) or row.peak_tflops


def proven_candidates(
    precision: Precision, deployment: Deployment, row: Gpu | None
) -> tuple[list[tuple[float, float | None]], list[float], list[str]]:
    """The (b_w, F_c in TFLOP/s) pairs and the b_kv values the proven bound ranges
    over, and what would settle them: the values used when stated; else the schemes
    of :data:`WEIGHT_SCHEMES` that agree with what is stated (F_c from the GPU's row
    at each scheme's dtype, the BF16 peak where it has none) and every :data:`KV_BYTES`."""
    settle: list[str] = []
    peak = peak_tflops(precision, deployment, row)
    stated_weights = precision.weight_source is not None
    stated_compute = precision.compute_source is not None
    pairs: list[tuple[float, float | None]] = [(precision.weight_bytes, peak)]

    def peak_at(dtype: str) -> float | None:
        if stated_compute or row is None:
            return peak
        return row.peak(dtype) or row.peak_tflops

    if not (stated_weights and stated_compute):
        settle.append(SETTLE)
        fitting = [
            (b, d)
            for b, d in WEIGHT_SCHEMES
            if (not stated_weights or b == precision.weight_bytes)
            and (not stated_compute or precision.compute_dtype in (None, d))
        ]
        if not fitting:  # a stated b_w or dtype outside the schemes: range the other
            fitting = [
                (precision.weight_bytes if stated_weights else b, d) for b, d in WEIGHT_SCHEMES
            ]
        for b, d in fitting:
            pair = (b, peak_at(d))
            if pair not in pairs:
                pairs.append(pair)
    kvs = [precision.kv_cache_bytes]
    if precision.kv_source is None:
        settle.append(SETTLE_KV)
        kvs += [b for b in KV_BYTES if b not in kvs]
    return pairs, kvs, settle
