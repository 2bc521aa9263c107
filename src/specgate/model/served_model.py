"""The served model against the claims file's model (SG301, docs/change-gate.md#config-digest,
docs/trust.md#one-cause-one-finding).

The engine config names the model it serves (``inputs.engine.target_model``: vLLM
``vllm serve MODEL`` / ``--model``, SGLang ``--model-path``, TensorRT-LLM's
``model``, llama.cpp ``-m`` / ``-hf``). A claims file whose ``model.name`` or
``model.hf_config`` describes another model prices β, G and κ for a model the engine
does not run: the run passes on a file that contradicts itself.

How names are compared (:func:`same_model`): case-insensitively, by the model's name
(the last component) less a checkpoint extension and variant words (``-FP8``,
``-Q4_K_M``, ``.gguf``), against every component of the other
(``/models/Qwen3-14B-Q4_K_M.gguf`` and ``DeepSeek-V3-Lite/fp8`` name ``Qwen/Qwen3-14B``
and ``deepseek-ai/DeepSeek-V3-Lite``); the owner is not compared. What each comparison
rests on:

* ``model.name`` given as a Hugging Face id (``owner/name``) and a literal served
  model id that names another model for certain (another size, family, or a number
  each names and the other lacks: :func:`_certainly_another`): stated against read,
  a **fail**; ids that differ in words only (Meta's rename
  ``Meta-Llama-3.1-8B-Instruct`` → ``Llama-3.1-8B-Instruct``, ``-Base``): a **warn**;
  a served
  local path (``/models/…``, ``./ckpt``) whose name shows another model (another
  size, another family): a **warn** (a folder's name is the user's choice;
  ``model.gguf`` shows nothing). A free-form ``model.name`` (no ``/``:
  ``chat-8b``) is a label and is not compared.
* ``model.hf_config``'s ``_name_or_path`` (where the checkpoint was saved from, not
  what it is: fine-tunes keep their base's), its model family against the served
  id's (``deepseek-ai/DeepSeek-V3`` and ``model_type: llama``; the family words are
  data, ``specgate/data/models/families.json``), and the size in the served id
  (``-8B``) against the parameters counted from the config (outside ×0.5…×2):
  each rests on a reading of a name, so a **warn**.
* A served id whose variant words name weights of another width than the
  hf_config declares (``…-FP8-dynamic`` beside ``torch_dtype: bfloat16``): the
  config is another checkpoint's, a **warn**; its precision is then not stated
  (``specgate.analysis.precision``).
* A served model that is a shell variable left unexpanded, or not stated: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from specgate.model.deployment import Deployment
from specgate.model.referenced import Conflict

if TYPE_CHECKING:
    from specgate.inputs.types import EngineConfig, ModelShape
    from specgate.load.document import Document

#: A size in a model id: ``8B``, ``1.5b``, ``70B`` (not ``A3B`` active, not ``8x7B``).
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d{1,4}(?:\.\d{1,3})?)[bB](?![A-Za-z0-9])")

#: The counted parameters may be this factor off the size a name gives and still match.
SIZE_FACTOR = 2.0


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in name.strip().rstrip("/").lower().split("/") if p not in ("", "."))


#: A checkpoint file's extension and the precision or format words a published
#: variant of a model appends to its name (``Qwen3-14B-Q4_K_M.gguf``, ``GLM-5-FP8``,
#: ``…-AWQ``): the same model, so they are taken off before names are compared.
_VARIANT = re.compile(
    r"(\.(gguf|safetensors|bin|pt))?"
    r"([-_.](fp8|fp4|nvfp4|mxfp4|int4|int8|awq|gptq|gguf|bf16|fp16|fp32|w4a16|w8a8|w4a8"
    r"|dynamic|quantized|mlx|exl2|\d+bit|i?q\d(_[a-z0-9]+)*))*$"
)


def _stem(part: str) -> str:
    return _VARIANT.sub("", part) or part


def same_model(a: str, b: str) -> bool:
    """Whether two model names (Hugging Face ids or local paths) name the same model,
    case-insensitively: the last component of one, less a checkpoint extension and
    variant words (``-FP8``, ``-AWQ``, ``-Q4_K_M``, ``.gguf``), equals one of the
    other's components less the same. The owner is not compared (mirrors and local
    folders like ``gpt_oss/gpt-oss-120b`` keep the name, not the owner)."""
    pa, pb = _parts(a), _parts(b)
    if not pa or not pb:
        return False
    stems_a, stems_b = {_stem(p) for p in pa}, {_stem(p) for p in pb}
    return _stem(pa[-1]) in stems_b or _stem(pb[-1]) in stems_a


def literal_served(engine: EngineConfig | None) -> str | None:
    """The served model when the config states it literally (no unexpanded ``$``)."""
    served = engine.target_model if engine is not None else None
    if not served or "$" in served or "{" in served or any(c.isspace() for c in served):
        return None
    return served


#: A checkpoint file, never a Hugging Face id (llama.cpp's ``-m models/x.gguf``).
_FILE = re.compile(r"\.(gguf|safetensors|bin|pt|pth|onnx|engine)$", re.IGNORECASE)


def _is_hf_id(name: str) -> bool:
    """``owner/name``: one ``/``, not a path from ``/``, ``.`` or ``~``, no file extension."""
    return (
        name.count("/") == 1
        and not name.startswith(("/", ".", "~"))
        and not any(c.isspace() for c in name)
        and _FILE.search(name) is None
    )


_FAMILIES: list[Mapping[str, tuple[str, ...]]] = []


def _families() -> Mapping[str, tuple[str, ...]]:
    """The family words (``data/models/families.json``), read on first use."""
    if not _FAMILIES:
        import json

        from specgate.core.data import read_data

        data = json.loads(read_data("models/families.json"))
        _FAMILIES.append({str(k): tuple(v) for k, v in data["families"]["entries"].items()})
    return _FAMILIES[0]


def _named_families(served: str, families: Mapping[str, tuple[str, ...]]) -> set[str]:
    last = _parts(served)[-1] if _parts(served) else ""
    squashed = re.sub(r"[^a-z0-9]", "", last)
    return {word for word in families if word in squashed}


def _size_b(served: str) -> float | None:
    parts = _parts(served)
    found = _SIZE.findall(parts[-1]) if parts else []
    return float(found[0]) if len(found) == 1 else None


def conflicts(
    deployment: Deployment,
    engine: EngineConfig | None,
    shape: ModelShape | None,
    document: Document,
    hf_config_path: tuple[str | int, ...],
) -> Iterator[Conflict]:
    """SG301 conflicts between the served model and ``model.name`` / ``model.hf_config``.

    Args:
        deployment: as built from the claims file (``model.name`` as written).
        engine: the engine config read (its ``target_model`` and span), or ``None``.
        shape: the target's model config read, or ``None``.
        document: the claims file (the stated values' lines).
        hf_config_path: the node path of ``model.hf_config`` in the claims file.

    Yields:
        a fail for a ``model.name`` id the served model contradicts; warns for an
        hf_config that looks like another model (``warn=True``).
    """
    served = literal_served(engine)
    if served is None or engine is None:
        return
    span = engine.spans.get("target_model")
    name = deployment.model.name
    local = not _is_hf_id(served)
    if (
        name is not None
        and _is_hf_id(name.strip())
        and not same_model(name, served)
        and (not local or _names_another(name, served))
    ):
        path = deployment.path("model", "name")
        # Two ids fail only when their names contradict for certain (another size,
        # version or family); ids that differ in words only (a renamed repository,
        # an owner's prefix, a quantized variant) may be one model: a warn. A local
        # folder's name is the user's choice: a warn.
        certain = not local and _certainly_another(name, served)
        words = "" if certain or local else _differing_words(name, served)
        yield Conflict(
            "served model",
            name.strip(),
            served,
            path,
            engine.path,
            span,
            stated_at=document.locate(path),
            note=f"; {served} is what the engine runs: name one model in both "
            "(the config digest's target_model is the served one)"
            + (" (a local path: read by its folder or file name)" if local else "")
            + (
                f" (the names differ only in the words {words}: a renamed repository or a "
                "variant of one model is possible, so this warns)"
                if words
                else ""
            ),
            warn=not certain,
        )
    if shape is not None and deployment.hardware.weight_bytes is None:
        contradicted = precision_contradiction(served, shape)
        if contradicted is not None:
            yield Conflict(
                "weight precision",
                f"model.hf_config {shape.path} ({contradicted[1]})",
                f"{served} ({contradicted[0]})",
                hf_config_path,
                engine.path,
                span,
                stated_at=document.locate(hf_config_path),
                note="; the served id names a checkpoint of another precision, so the "
                "config is another checkpoint's: the precision counts as not stated "
                "(the proven β is the lowest over the precisions); give the served "
                "checkpoint's config.json or hardware.weight_bytes",
                warn=True,
            )
    if shape is None:
        return
    why = _hf_config_differs(served, shape)
    if why is not None:
        yield Conflict(
            "served model",
            f"model.hf_config {shape.path} ({why[0]})",
            served,
            hf_config_path,
            engine.path,
            span,
            stated_at=document.locate(hf_config_path),
            note=f" ({why[1]}); G, β and the parameter count κ are read from {shape.path}, "
            "so they are another model's if it is not the served one",
            warn=True,
        )


def _names_another(name: str, path: str) -> bool:
    """Whether a local path's name says it is another model than the id ``name``: a
    size (``8B``) other than the id's, or family words none of which the id has;
    ``model.gguf`` says nothing."""
    size_a, size_b = _size_b(name), _size_b(path)
    if size_a is not None and size_b is not None and size_a != size_b:
        return True
    families = _families()
    mine, theirs = _named_families(name, families), _named_families(path, families)
    return bool(mine and theirs and not mine & theirs)


#: The numbers of a model's name (``Llama-3.1-8B`` → ``3.1``, ``8``).
_NUMBER = re.compile(r"\d+(?:\.\d+)*")


def _certainly_another(a: str, b: str) -> bool:
    """Whether two Hugging Face ids say for certain that they are two models: another
    size or family (:func:`_names_another`), or a number each names and the other lacks
    (``Llama-3.1`` against ``Llama-3.3``, ``DeepSeek-V3`` against ``DeepSeek-R1``).
    ``DeepSeek-V3`` against ``DeepSeek-V3-0324`` only adds one; words without a digit
    (``Meta-``, ``Instruct``) and variant words (``-FP8``) say nothing."""
    if _names_another(a, b):
        return True
    numbers_a = {n for w in _words(a) for n in _NUMBER.findall(w)}
    numbers_b = {n for w in _words(b) for n in _NUMBER.findall(w)}
    return bool(numbers_a - numbers_b and numbers_b - numbers_a)


#: Words of a model's name: split at ``-``, spaces and dots that are not inside a
#: version (``Llama-3.1-8B`` → ``llama``, ``3.1``, ``8b``).
_WORD_SPLIT = re.compile(r"[-\s]+|\.(?!\d)|(?<!\d)\.")
#: A word that names a precision or a file format, not a model (``fp8``, ``q4_k_m``).
_VARIANT_WORD = re.compile(
    r"fp8|fp4|nvfp4|mxfp4|int4|int8|awq|gptq|gguf|bf16|fp16|fp32|w4a16|w8a8|w4a8|w8a16"
    r"|dynamic|static|quantized|mlx|exl2|bnb|nf4|\d+bit|i?q\d(_[a-z0-9]+)*|g\d+"
)


def _words(name: str) -> set[str]:
    """The words of the last component of ``name`` less variant words and a file
    extension."""
    parts = _parts(name)
    last = _FILE.sub("", parts[-1]) if parts else ""
    return {w for w in _WORD_SPLIT.split(last) if w and not _VARIANT_WORD.fullmatch(w)}


def _differing_words(a: str, b: str) -> str:
    """The words one name has and the other lacks, as shown (``meta``)."""
    wa, wb = _words(a), _words(b)
    return ", ".join(sorted(wa ^ wb))


#: What a variant word in a served id says of the weights: 16-bit, 8-bit, 4-bit or
#: quantized at an unstated width (``GPTQ`` alone, ``AWQ`` is 4-bit in AutoAWQ).
_PRECISION_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"bf16|fp16|fp32"), "16-bit"),
    (re.compile(r"fp8|int8|w8a8|w8a16|8bit|q8(_[a-z0-9]+)*"), "8-bit"),
    (
        re.compile(r"fp4|nvfp4|mxfp4|int4|w4a16|w4a8|4bit|awq|nf4|bnb|i?q[2-6](_[a-z0-9]+)*"),
        "4-bit",
    ),
    (re.compile(r"gptq|quantized|exl2"), "quantized"),
)


def named_precision(served: str) -> tuple[str, str] | None:
    """(the variant words as written, the weights' width they name) when the served
    id's last component names a precision (``Llama-3.1-8B-Instruct-FP8-dynamic`` →
    ``("FP8", "8-bit")``, ``…-GPTQ-Int4`` → ``("GPTQ-Int4", "4-bit")``), else ``None``.
    Words are matched whole, case-insensitively; a more specific width wins over
    ``quantized``."""
    parts = [p for p in served.strip().rstrip("/").split("/") if p not in ("", ".")]
    if not parts:
        return None
    last = _FILE.sub("", parts[-1])
    shown: list[str] = []
    widths: list[str] = []
    for word in _WORD_SPLIT.split(last):
        lower = word.lower()
        for pattern, width in _PRECISION_WORDS:
            if pattern.fullmatch(lower):
                shown.append(word)
                widths.append(width)
                break
    if not widths:
        return None
    specific = [w for w in widths if w != "quantized"]
    return "-".join(shown), (specific[0] if specific else "quantized")


def _config_width(shape: ModelShape) -> tuple[str, str] | None:
    """(the width the model config's precision names, what was read) or ``None``."""
    declared = shape.precision
    if declared is None:
        return None
    if declared.key not in QUANTIZATION_KEYS:
        return "16-bit", declared.method
    b = declared.weight_bytes
    if b is None:
        return "quantized", declared.method
    width = "16-bit" if b >= 2 else "8-bit" if b >= 1 else "4-bit"
    return width, declared.method


#: The model-config keys a checkpoint declares a quantization scheme at
#: (:func:`specgate.inputs.precision.read_precision`).
QUANTIZATION_KEYS = frozenset(
    {"quantization_config", "text_config.quantization_config", "compression_config"}
)


def precision_contradiction(served: str, shape: ModelShape) -> tuple[str, str] | None:
    """(what the served id names, what the model config declares) when the served id
    names weights of another width than the config (``…-FP8-dynamic`` served with a
    BF16 config: the base model's), else ``None``. ``quantized`` (width not named)
    contradicts only a 16-bit config."""
    named = named_precision(served)
    read = _config_width(shape)
    if named is None or read is None:
        return None
    (words, width), (config_width, method) = named, read
    if width == config_width or (width == "quantized" and config_width != "16-bit"):
        return None
    if config_width == "quantized" and width != "16-bit":
        return None
    return f"{words}: {width} weights", method


def _hf_config_differs(served: str, shape: ModelShape) -> tuple[str, str] | None:
    """(what the config says, why it reads as another model) or ``None``."""
    saved = shape.scalars.get("_name_or_path")
    if isinstance(saved, str) and saved.strip() and "$" not in saved:
        if not same_model(saved, served):
            return (
                f"_name_or_path {saved.strip()}",
                "a name that is where the checkpoint was saved from",
            )
        return None
    families = _families()
    named = _named_families(served, families)
    model_type = (shape.model_type or "").lower()
    known_type = any(model_type in types for types in families.values())
    if named and known_type and not any(model_type in families[w] for w in named):
        return (
            f"model_type {model_type}",
            f"read from the family word{'s' if len(named) > 1 else ''} "
            f"{', '.join(sorted(named))} in the served id",
        )
    size = _size_b(served)
    counted = shape.parameters
    # A mixture-of-experts id may name its active size (Llama-4-Maverick-17B-128E:
    # 17B active of ~400B; Qwen3-30B-A3B names the total): either count matches.
    counts = [c for c in (counted, shape.active_parameters) if c is not None and c > 0]
    if (
        size is not None
        and size > 0
        and counted is not None
        and counted > 0
        and not any(1 / SIZE_FACTOR <= c / 1e9 / size <= SIZE_FACTOR for c in counts)
    ):
        return (
            f"{counted / 1e9:.4g}B parameters counted",
            f"read from the size {_SIZE.findall(_parts(served)[-1])[0]}B in the served id",
        )
    return None
