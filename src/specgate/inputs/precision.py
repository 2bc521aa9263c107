"""The precision a model runs at, as its checkpoint and its serving config declare it
(docs/theory.md#step-time-inputs: b_w, the compute dtype of F_c, b_kv).

Read the way vLLM 0.32.0 reads them (installed source, read 2026-12):

- Where: ``quantization_config`` of the config, else of its ``text_config``, else
  ``compression_config`` (compressed-tensors) —
  ``vllm/model_executor/model_loader/weight_utils.py`` ``get_quant_config`` and
  ``vllm/transformers_utils/model_arch_config_convertor.py``
  ``_normalize_quantization_config``, which also lower-cases ``quant_method``, spells
  ``compressed_tensors`` as ``compressed-tensors`` and names a ModelOpt checkpoint
  (``producer.name: modelopt`` or a ``quantization`` block) by its ``quant_algo``:
  FP8* → ``modelopt``, NVFP4 → ``modelopt_fp4``.
- What each method stores (``vllm/model_executor/layers/quantization/``): ``fp8``
  (``Fp8Config``: FP8 weights, FP8 activations dynamic or static: W8A8), ``fbgemm_fp8``
  (FP8 weights, dynamic per-token FP8 activations), ``modelopt`` FP8 / ``modelopt_fp4``
  NVFP4 (W4A4: 4-bit values, one FP8 scale per 16, 4.5 bits), ``compressed-tensors``
  (``config_groups.*.weights`` / ``input_activations``: ``num_bits`` and ``type``
  int | float; no input activations = weight-only; ``compressed_tensors.py``
  ``_get_scheme_from_parts``), ``awq`` (``w_bit``/``bits``, weight-only, ``auto_awq.py``),
  ``gptq`` (``bits``, weight-only, ``auto_gptq.py``), ``mxfp4`` (gpt-oss: the MoE
  experts in MXFP4, 4 bits plus one E8M0 scale per 32, the ``modules_to_not_convert``
  — attention, router, embeddings — in BF16: a mix, so no single b_w).
- The model dtype: ``dtype`` (transformers ≥ 4.56), else ``torch_dtype``; vLLM's
  ``--dtype auto`` takes it and downcasts float32 to the platform's 16-bit dtype
  (``vllm/config/model.py`` ``_resolve_auto_dtype``). DeepSeek's own inference configs
  say ``dtype: fp8`` (``inference/model.py`` ``ModelArgs.dtype``: bf16 | fp8).
- The KV cache: ``--kv-cache-dtype`` (``CacheConfig.cache_dtype``), ``auto`` = the
  model dtype unless a ModelOpt checkpoint states ``kv_cache_quant_algo``
  (``vllm/utils/torch_utils.py`` ``resolve_kv_cache_dtype_string``).

Hugging Face's side: transformers' quantization docs (``quantization_config`` with
``quant_method``, ``bits``/``w_bit`` for AWQ and GPTQ, ``torch_dtype``/``dtype``).

Only what the file says is returned; nothing is guessed here (the step-time model
bounds what is not known).
"""

from __future__ import annotations

from collections.abc import Mapping

from specgate.inputs.types import Precision

#: The 16-bit dtypes a model's ``dtype``/``torch_dtype`` names (float32 is downcast).
_MODEL_DTYPES = {
    "bfloat16": "bf16",
    "bf16": "bf16",
    "float16": "fp16",
    "fp16": "fp16",
    "half": "fp16",
    "float32": "bf16",
    "float": "bf16",
}
#: Bytes per weight of the 4-bit micro-scaled formats, scales included.
NVFP4_BYTES = 0.5625  # 16 FP4 values share one FP8 (E4M3) scale: 4 + 8/16 bits
MXFP4_BYTES = 0.53125  # 32 FP4 values share one E8M0 scale: 4 + 8/32 bits (OCP MX v1.0)
#: ``--kv-cache-dtype`` values and the bytes of one cached element (vLLM 0.32.0
#: ``CacheDType``; the 4-bit formats' scales left out).
KV_CACHE_BYTES = {
    "float16": 2.0,
    "bfloat16": 2.0,
    "fp8": 1.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "fp8_inc": 1.0,
    "fp8_ds_mla": 1.0,
    "fp8_per_token_head": 1.0,
    "int8_per_token_head": 1.0,
    "turboquant_k8v4": 0.75,
    "int4_per_token_head": 0.5,
    "turboquant_4bit_nc": 0.5,
    "nvfp4": NVFP4_BYTES,
}
#: vLLM ``--quantization`` methods that quantize online (no checkpoint config): the
#: weight bytes and the compute dtype (``online`` / ``fp8_per_*`` / ``nvfp4_per_token``
#: / ``int8_per_channel_weight_only`` in vLLM 0.32.0's QUANTIZATION_METHODS).
_ONLINE = {
    "fp8": (1.0, "fp8"),
    "fp8_per_tensor": (1.0, "fp8"),
    "fp8_per_block": (1.0, "fp8"),
    "fp8_per_channel": (1.0, "fp8"),
    "fbgemm_fp8": (1.0, "fp8"),
    "mxfp8": (1.0, "fp8"),
    "nvfp4_per_token": (NVFP4_BYTES, "fp4"),
    "int8_per_channel_weight_only": (1.0, None),
}


def model_dtype(value: object) -> str | None:
    """The compute dtype of a ``dtype``/``torch_dtype`` value (``None`` when not one)."""
    if not isinstance(value, str):
        return None
    return _MODEL_DTYPES.get(value.strip().lower().removeprefix("torch."))


def read_precision(
    data: Mapping[str, object], text: Mapping[str, object]
) -> Precision | None:
    """The precision a model config declares: its quantization config, else its dtype.

    Args:
        data: the whole config; ``text``: its language model's fields (``text_config``
            of a multimodal wrapper, else ``data``).

    Returns:
        a :class:`Precision`, or ``None`` when the config says nothing about it.
    """
    dtype_key, dtype = _dtype(text, data)
    base = model_dtype(dtype)
    for key, table in (
        ("quantization_config", data),
        ("text_config.quantization_config", text),
        ("compression_config", data),
    ):
        config = table.get(key.rsplit(".", 1)[-1])
        if isinstance(config, Mapping):
            return quantization(config, base, key)
    if isinstance(dtype, str) and dtype.strip().lower() == "fp8":  # DeepSeek inference
        return Precision(1.0, "fp8", None, f"{dtype_key} fp8", dtype_key)
    if base is None:
        return None
    return Precision(2.0, base, 2.0, f"{dtype_key} {str(dtype)[:32]}", dtype_key)


def _dtype(text: Mapping[str, object], data: Mapping[str, object]) -> tuple[str, object]:
    for table in (data, text):
        for key in ("dtype", "torch_dtype"):
            value = table.get(key)
            if isinstance(value, str):
                return key, value
    return "torch_dtype", None


def _method(config: Mapping[str, object]) -> tuple[str, str | None]:
    """``quant_method`` as vLLM normalises it, and a ModelOpt checkpoint's algorithm."""
    raw = config.get("quant_method")
    method = raw[:64].strip().lower().replace("compressed_tensors", "compressed-tensors") if (
        isinstance(raw, str)
    ) else ""
    inner = config.get("quantization")
    inner = inner if isinstance(inner, Mapping) else config
    producer = config.get("producer")
    algo = inner.get("quant_algo", config.get("quant_algo"))
    modelopt = (isinstance(producer, Mapping) and producer.get("name") == "modelopt") or (
        method.startswith("modelopt")
    )
    if isinstance(algo, str) and (modelopt or "modelopt_quant_config" in inner):
        return "modelopt", algo[:64].strip().upper()
    return method, None


def _kv(config: Mapping[str, object], algo_owner: bool) -> float | None:
    """A ModelOpt checkpoint's ``kv_cache_quant_algo`` (FP8 → 1 byte, NVFP4)."""
    if not algo_owner:
        return None
    inner = config.get("quantization")
    inner = inner if isinstance(inner, Mapping) else config
    algo = inner.get("kv_cache_quant_algo", config.get("kv_cache_quant_algo"))
    if isinstance(algo, str):
        return {"FP8": 1.0, "NVFP4": NVFP4_BYTES}.get(algo.strip().upper())
    return None


def quantization(config: Mapping[str, object], base: str | None, key: str) -> Precision:
    """The :class:`Precision` of one ``quantization_config`` (module docstring)."""
    method, algo = _method(config)
    shown = f"{key}.quant_method {method or '(none)'}"
    activations = base or "bf16"  # weight-only schemes compute at the model dtype
    model_kv = 2.0 if base is not None else None  # --kv-cache-dtype auto: the model dtype
    if method == "modelopt":
        kv = _kv(config, True) or model_kv
        shown = f"{key} ModelOpt {algo}"
        if algo is not None and algo.startswith("FP8"):
            return Precision(1.0, "fp8", kv, shown, key)
        if algo == "NVFP4":
            return Precision(NVFP4_BYTES, "fp4", kv, shown, key)
        if algo == "MXFP8":
            return Precision(1.0, "fp8", kv, shown, key)
        return Precision(None, None, kv, shown, key, f"ModelOpt {algo} is not priced")
    if method == "modelopt_fp4":
        return Precision(NVFP4_BYTES, "fp4", _kv(config, True) or model_kv, shown, key)
    if method in ("fp8", "fbgemm_fp8", "ptpc_fp8", "deepseek_v4_fp8"):
        return Precision(1.0, "fp8", model_kv, shown, key)
    if method in ("awq", "auto_awq", "awq_marlin", "gptq", "auto_gptq", "gptq_marlin"):
        bits = _bits(config.get("w_bit", config.get("bits")))
        if bits is None:
            return Precision(None, activations, model_kv, shown, key, "no bits stated")
        return Precision(bits / 8, activations, model_kv, f"{shown}, {bits}-bit weights", key)
    if method == "compressed-tensors":
        return _compressed(config, activations, model_kv, shown, key)
    if method in ("mxfp4", "gpt_oss_mxfp4"):
        return Precision(
            None, None, model_kv, shown, key,
            "MXFP4 experts with BF16 attention and embeddings: mixed precision, no single "
            "b_w",
        )
    if method == "bitsandbytes":
        if config.get("load_in_4bit") is True:
            return Precision(0.5, activations, model_kv, f"{shown}, 4-bit", key)
        if config.get("load_in_8bit") is True:
            return Precision(1.0, activations, model_kv, f"{shown}, 8-bit", key)
    return Precision(None, None, None, shown, key, f"quantization method {method!r} is not priced")


def _bits(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if value in (2, 3, 4, 8) else None


def _compressed(
    config: Mapping[str, object], activations: str, model_kv: float | None, shown: str, key: str
) -> Precision:
    """compressed-tensors: every config group must agree on the weights' and the
    activations' bits and type (a mixed checkpoint has no single b_w)."""
    groups = config.get("config_groups")
    schemes: set[tuple[int | None, str | None, int | None, str | None, int | None]] = set()
    if isinstance(groups, Mapping):
        for group in list(groups.values())[:64]:
            if not isinstance(group, Mapping):
                continue
            weights = group.get("weights")
            inputs = group.get("input_activations")
            w = weights if isinstance(weights, Mapping) else {}
            a = inputs if isinstance(inputs, Mapping) else {}
            size = w.get("group_size")
            schemes.add((
                _bits(w.get("num_bits")), _type(w.get("type")),
                _bits(a.get("num_bits")) if a else None, _type(a.get("type")) if a else None,
                size if isinstance(size, int) and not isinstance(size, bool) else None,
            ))
    if len(schemes) != 1:
        why = "no config group" if not schemes else "config groups of different precisions"
        return Precision(None, None, model_kv, shown, key, f"compressed-tensors with {why}")
    w_bits, w_type, a_bits, a_type, group_size = next(iter(schemes))
    if w_bits is None:
        return Precision(None, None, model_kv, shown, key, "no weight num_bits stated")
    weight_bytes = w_bits / 8
    if w_bits == 4 and w_type == "float":
        weight_bytes = NVFP4_BYTES if group_size == 16 else MXFP4_BYTES
    compute: str | None = activations
    if a_bits == 8:
        compute = "fp8" if a_type == "float" else "int8"
    elif a_bits == 4 and a_type == "float":
        compute = "fp4"
    elif a_bits is not None:
        compute = None
    scheme = f"W{w_bits}A{a_bits or 16}"
    return Precision(weight_bytes, compute, model_kv, f"{shown} {scheme}", key)


def _type(value: object) -> str | None:
    return value.strip().lower() if isinstance(value, str) else None


def serving_precision(
    quantization_method: object, dtype: object, kv_cache_dtype: object
) -> tuple[Precision | None, float | None]:
    """What a serving config's ``--quantization`` / ``--dtype`` say of the weights
    (an online method: ``_ONLINE``; ``--dtype`` alone: 16-bit weights, or 4 bytes for
    an explicit float32, which vLLM keeps) and its ``--kv-cache-dtype`` of b_kv
    (``auto`` says nothing). Values are the options as written (strings)."""
    kv = None
    if isinstance(kv_cache_dtype, str):
        kv = KV_CACHE_BYTES.get(kv_cache_dtype.strip().lower())
    if isinstance(quantization_method, str):
        method = quantization_method.strip().lower()
        if method in _ONLINE:
            weight_bytes, compute = _ONLINE[method]
            return Precision(
                weight_bytes, compute, None, f"--quantization {method}", "quantization"
            ), kv
    if isinstance(dtype, str):
        name = dtype.strip().lower()
        if name in ("float32", "float"):
            return Precision(4.0, "fp32", 4.0, f"--dtype {name}", "dtype"), kv
        compute = _MODEL_DTYPES.get(name)
        if compute is not None:
            return Precision(2.0, compute, 2.0, f"--dtype {name}", "dtype"), kv
    return None, kv
