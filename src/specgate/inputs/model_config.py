"""Read a model's attention shape from its config (HF ``config.json`` and relatives).

Output: :class:`~specgate.inputs.types.ModelShape` with H (query heads), KV (KV
heads), G = H / KV as an exact :class:`~fractions.Fraction`, MLA detection, vocab
size, context length and native MTP depth, each with the span it was read from;
and the numbers the step-time model needs (docs/theory.md#step-time-inputs): layers, hidden size,
head dim, MLA ranks, routed experts and experts per token, and total / active
parameters counted from the shapes (:mod:`specgate.inputs.model_params`); and the
precision the checkpoint declares (:mod:`specgate.inputs.precision`).

Field spellings (docs/engines.md docs/rules.md):

- H: ``num_attention_heads`` (HF), ``n_head`` (GPT-2, Falcon), ``n_heads`` (MPT,
  DeepSeek's own inference configs ``inference/configs/config_671B.json``).
- KV: ``num_key_value_heads`` (HF), ``n_head_kv`` / ``num_kv_heads`` (Falcon),
  ``multi_query_group_num`` (ChatGLM, only with ``multi_query_attention``);
  ``multi_query: true`` means one KV head (Falcon-7B, GPTBigCode) unless Falcon's
  ``new_decoder_architecture`` says the explicit count holds (transformers
  ``FalconConfig``). No KV field means multi-head attention (G = 1).
- Multimodal wrappers (Llama 4, Gemma 3, Qwen-VL) keep the language model's fields
  under ``text_config``; like vLLM's ``get_hf_text_config`` the text config wins
  when it holds a head count.
- MLA (DeepSeek-V2/V3/R1, Kimi-K2): ``kv_lora_rank`` present. Every query head
  attends to one shared compressed latent, so G is the number of query heads
  (per rank after a TP split), not H / ``num_key_value_heads`` (which such
  configs state as 128 = H). Source: deepseek-ai/FlashMLA README (the kernel is
  called with one KV head); tests/data/real/SOURCES.md DeepSeek rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import cache
from typing import Any

from specgate.core.data import read_data
from specgate.core.errors import InputError, LimitReached, OutOfBounds, UnreadForm
from specgate.inputs.pointer import resolve_pointer
from specgate.inputs.types import ModelShape
from specgate.load.document import Document, NodePath, Span
from specgate.load.read import parse_text

_HEAD_KEYS = ("num_attention_heads", "n_head", "n_heads")
_KV_KEYS = ("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num")
# vLLM's _get_and_verify_max_len looks at these, in this order of preference.
_CONTEXT_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "max_sequence_length",
)
#: Which models ship MTP modules (layer-count keys, model types, architectures), data.
_MTP: Mapping[str, Any] = json.loads(read_data("models/mtp.json"))
_MTP_KEYS = tuple(_MTP["layer_keys"]["entries"])
_MTP_TYPES = frozenset(_MTP["model_types"]["entries"])
_MTP_ARCHITECTURES = frozenset(_MTP["architectures"]["entries"])
# Routed experts of a mixture-of-experts model: DeepSeek-V3 (n_routed_experts),
# Mixtral (num_local_experts), Qwen3-MoE / OLMoE (num_experts). Dense configs may
# hold 0 or null here (Qwen2's num_experts), so these are read leniently.
_EXPERT_KEYS = ("n_routed_experts", "num_local_experts", "num_experts")
# Layers and hidden size: HF, GPT-2 (n_layer, n_embd), ChatGLM (num_layers), T5-style d_model.
_LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers")
_HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")

Locator = Callable[[NodePath], Span]


def read_model_config(
    doc: Document, *, shown: str, pointer: str | None = None, draft: bool = False
) -> ModelShape:
    """Read H, KV, G and limits from a parsed model config.

    Args:
        doc: the parsed file (JSON or YAML).
        shown: the file as shown to the user (used in messages and ``path``).
        pointer: RFC 6901 JSON pointer to the config mapping inside ``doc`` (or to
            a string holding the config as JSON); ``None`` means the whole file.
        draft: the config of a draft: it may have no attention heads (a Medusa or
            MLP-speculator head drafts from the target's hidden states; only its
            vocabulary, context and ``n_predict`` are read).

    Returns:
        a :class:`ModelShape`; ``query_heads_per_kv`` is H / KV, 1 when no KV
        field exists (MHA), and H for MLA (one latent KV head, before TP split).
        ``spans`` maps ``query_heads``, ``kv_heads``, ``mla``, ``vocab_size``,
        ``max_position_embeddings`` and ``mtp_layers`` to where each was read.

    Raises:
        InputError: a pointer that names no node of the file (the claims file's
            reference, docs/claims-file.md#referenced-files).
        UnreadForm: the file parses but its model is not read (SG312 on the
            deployment, docs/engines.md#model-config-not-read): a config that is not a
            mapping, a count that is not a positive integer, no head count at all
            (transformers then fills the model class's default), a string at the
            pointer that is not JSON.
        OutOfBounds: KV > H, or H not a multiple of KV (SG315 on the deployment,
            docs/engines.md#out-of-bounds).
    """
    data, locate = _view(doc, shown, pointer)
    where = shown if not pointer else f"{shown} at {pointer}"
    if not isinstance(data, Mapping):
        raise UnreadForm(f"model config in {where} is not a mapping", shown, locate(()).line)
    base: NodePath = ()
    scope: NodePath = ()
    fields: Mapping[str, object] = data
    scope, fields = _text_scope(data)

    spans: dict[str, Span] = {}

    def count(
        key: str, path_scope: NodePath, table: Mapping[str, object], zero: bool = False
    ) -> int | None:
        value = table.get(key)
        if value is None:
            return None
        path = (*path_scope, key)
        # a layer count of 0 is stated: no such layer (Kimi-K2's MTP)
        number = 0 if zero and _is_zero(value) else _positive_int(value)
        if number is None:  # not read, not refused: which engine refuses it is not known
            raise UnreadForm(
                f"{key} must be a {'non-negative' if zero else 'positive'} integer, not "
                f"{value!r}",
                shown,
                locate(path).line,
                locate(path).column,
            )
        return number

    heads: int | None = None
    for key in _HEAD_KEYS:
        heads = count(key, scope, fields)
        if heads is not None:
            spans["query_heads"] = locate((*scope, key))
            break
    if heads is None and not draft:
        # transformers fills a missing count from the model class's default (5.19.0's
        # LlamaConfig: num_attention_heads 32), so the model is not read, never refused
        raise UnreadForm(
            f"no attention head count (num_attention_heads) in {where}; the engine takes "
            "its model class's default, which specgate does not assume",
            shown,
        )

    mla = False
    for rank_scope, table in ((scope, fields), (base, data)):
        if table.get("kv_lora_rank") is not None:
            count("kv_lora_rank", rank_scope, table)  # validates: a positive integer
            mla = True
            spans["mla"] = locate((*rank_scope, "kv_lora_rank"))
            break

    kv_heads = _kv_heads(fields, scope, count, spans, locate) if heads is not None else None
    if heads is not None and kv_heads is not None and kv_heads > heads:
        where_kv = spans["kv_heads"]
        # a number past the bound the heads set: SG315 on the deployment (issue 24)
        raise OutOfBounds(
            f"KV heads ({kv_heads}) exceed attention heads ({heads})",
            shown,
            where_kv.line,
            what="kv_heads",
            column=where_kv.column,
        )
    if not mla:
        _whole_groups(heads, kv_heads, spans, shown)
    ratio: Fraction | None
    if heads is None:
        ratio = None
    elif mla:
        ratio = Fraction(heads)
    elif kv_heads is None:
        ratio = Fraction(1)
    else:
        ratio = Fraction(heads, kv_heads)

    def optional(keys: tuple[str, ...], name: str, zero: bool = False) -> int | None:
        for table_scope, table in ((scope, fields), (base, data)):
            for key in keys:
                number = count(key, table_scope, table, zero)
                if number is not None:
                    spans[name] = locate((*table_scope, key))
                    return number
        return None

    from specgate.inputs.precision import read_precision

    return ModelShape(
        precision=read_precision(data, fields),
        model_type=_identity(data)[0],
        architectures=_identity(data)[1],
        n_predict=optional(("n_predict",), "n_predict"),
        **_step_fields(fields, data, scope, locate, spans, heads=heads, mla=mla),
        mtp_known=_mtp_known(_identity(data)[1], (fields, data)),
        scalars=_scalars(data),
        keys=tuple(str(k) for k in data),
        path=shown,
        pointer=pointer or "",
        query_heads=heads,
        kv_heads=kv_heads,
        query_heads_per_kv=ratio,
        mla=mla,
        vocab_size=optional(("vocab_size",), "vocab_size"),
        max_position_embeddings=optional(_CONTEXT_KEYS, "max_position_embeddings"),
        mtp_layers=optional(_mtp_keys(data), "mtp_layers", zero=True),
        spans=spans,
    )


def _whole_groups(
    heads: int | None, kv_heads: int | None, spans: dict[str, Span], shown: str
) -> None:
    """Raise when the attention heads do not split evenly over the KV heads: grouped-query
    attention gives every KV head the same number of query heads (transformers'
    ``repeat_kv`` and vLLM's attention layers divide H by KV), so 7 over 3 is a typo."""
    if heads is None or kv_heads is None or not heads % kv_heads:
        return
    where_kv = spans["kv_heads"]
    raise OutOfBounds(
        f"attention heads ({heads}) are not a multiple of KV heads ({kv_heads}): "
        "grouped-query attention gives every KV head the same number of query heads",
        shown,
        where_kv.line,
        what="kv_heads",
        column=where_kv.column,
    )


def _is_zero(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0


def _identity(data: Mapping[str, object]) -> tuple[str | None, tuple[str, ...]]:
    """The config's ``model_type`` and ``architectures`` (at most 16 names) as stated."""
    model_type = data.get("model_type")
    names = data.get("architectures")
    listed = tuple(a for a in names if isinstance(a, str))[:16] if isinstance(names, list) else ()
    return (model_type if isinstance(model_type, str) else None), listed


@cache
def _vllm_mtp() -> Mapping[str, Any]:
    """data/models/mtp-vllm.json (vLLM's own answers: the key it reads the MTP layer
    count from per model, the model types it turns into no MTP draft), read on first use."""
    data: Mapping[str, Any] = json.loads(read_data("models/mtp-vllm.json"))
    return data


def vllm_layer_rule(
    model_type: str | None, architectures: tuple[str, ...]
) -> Mapping[str, Any] | None:
    """How vLLM counts the MTP layers of a config of ``model_type`` (else of its first
    architecture): ``{"keys": [...], "default": N}`` or ``{"keys": [], "fixed": N}``
    (data/models/mtp-vllm.json ``layer_keys``); None for a model vLLM turns into no MTP
    draft. Loads the data only for a model that may ship MTP layers."""
    names = [n for n in (model_type, *architectures[:1]) if n]
    if not any(
        n in _MTP_TYPES or n in _MTP_ARCHITECTURES or n.endswith(("_mtp", "ForCausalLM",
                                                                  "ForConditionalGeneration"))
        for n in names
    ):
        return None
    entries: Mapping[str, Mapping[str, Any]] = _vllm_mtp()["layer_keys"]["entries"]
    return next((entries[n] for n in names if n in entries), None)


def _mtp_keys(data: Mapping[str, object]) -> tuple[str, ...]:
    """The MTP layer-count keys, the ones vLLM reads for this model first (MiniMax-M3:
    ``num_mtp_modules``; Qwen3.5: ``mtp_num_hidden_layers``)."""
    model_type = data.get("model_type")
    names = data.get("architectures")
    listed = tuple(a for a in names if isinstance(a, str))[:1] if isinstance(names, list) else ()
    rule = vllm_layer_rule(model_type if isinstance(model_type, str) else None, listed)
    read = (key.rpartition(".")[2] for key in (rule or {}).get("keys", ()))
    first = tuple(key for key in read if key in _MTP_KEYS)
    return tuple(dict.fromkeys((*first, *_MTP_KEYS)))


def _counted(data: Mapping[str, object], key: str) -> int | None:
    """The whole number at ``key`` (``text_config.X``: one level down) of ``data``."""
    table: object = data
    for part in key.split("."):
        table = table.get(part) if isinstance(table, Mapping) else None
    if isinstance(table, (int, float)) and not isinstance(table, bool) and table >= 0:
        return int(table)
    return None


def _mtp_known(
    architectures: tuple[str, ...], tables: tuple[Mapping[str, object], ...]
) -> int | None:
    """The MTP layers a config has, as vLLM counts them for its model type or first
    architecture (the key its ``hf_config_override`` reads, its default, or the count
    it fixes: data/models/mtp-vllm.json, the engine's own answers); else the count stated
    under any MTP key (already validated by the reader); else 0 for a model type known
    to ship no MTP modules (transformers' registered types that no recorded vLLM turns
    into an MTP draft); else unknown (None): a model type specgate does not know never
    counts as one without MTP."""
    data = tables[-1]
    types = {t for t in (table.get("model_type") for table in tables) if isinstance(t, str)}
    model_type = data.get("model_type")
    rule = vllm_layer_rule(model_type if isinstance(model_type, str) else None, architectures)
    if rule is not None and ("fixed" in rule or rule.get("keys")):
        if "fixed" in rule:
            return int(rule["fixed"])
        for key in rule["keys"]:
            found = _counted(data, key)
            if found is not None:
                return found
        default = rule.get("default")
        return int(default) if isinstance(default, int) else None
    for table in tables:
        for key in _MTP_KEYS:
            value = table.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(value)
    if types & _MTP_TYPES or set(architectures) & _MTP_ARCHITECTURES or rule is not None:
        return None
    if not types:
        return None
    without = frozenset(_vllm_mtp()["model_types_without_mtp"]["entries"])
    return 0 if types <= without else None


def _scalars(data: Mapping[str, object]) -> dict[str, object]:
    """Scalars of ``data`` by dotted key, two levels deep, every one of them: the file
    is bounded already (its bytes and YAML nodes), so no cap is needed, and a cap would
    let 256 padding keys hide the ``block_size`` an engine reads (hostile review,
    defect 2's kind: a bound is never a silently different reading)."""
    out: dict[str, object] = {}
    for key, value in data.items():
        if _scalar_like(value):
            out[str(key)] = value
        elif isinstance(value, Mapping):
            for inner, item in value.items():
                if _scalar_like(item):
                    out[f"{key}.{inner}"] = item
    return out


def _scalar_like(value: object) -> bool:
    """A number, string, boolean, or a short list of numbers (layer ids) or of short
    strings (``layer_types``, which vLLM's DFlash runner choice reads)."""
    if isinstance(value, (str, int, float, bool)):
        return True
    return (
        isinstance(value, list)
        and len(value) <= 64
        and (
            all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
            or all(isinstance(v, str) and len(v) <= 64 for v in value)
        )
    )


def _step_fields(
    fields: Mapping[str, object],
    data: Mapping[str, object],
    scope: NodePath,
    locate: Locator,
    spans: dict[str, Span],
    *,
    heads: int | None,
    mla: bool,
) -> dict[str, Any]:
    """The numbers the step-time model needs (docs/theory.md#step-time-inputs), each with its span:
    a whole number is read when it is one and left out otherwise (a dense config may hold
    0 or null for experts), never an input error; parameters counted from the shapes."""

    def lenient(keys: tuple[str, ...], name: str, minimum: int = 1) -> int | None:
        for table_scope, table in ((scope, fields), ((), data)):
            for key in keys:
                value = table.get(key)
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
                    spans[name] = locate((*table_scope, key))
                    return value
        return None

    from specgate.inputs.model_params import count_parameters

    model_type = fields.get("model_type", data.get("model_type"))
    family = model_type if isinstance(model_type, str) else None
    counted = count_parameters(fields, family)
    hidden = lenient(_HIDDEN_KEYS, "hidden_size")
    head_dim = lenient(("head_dim",), "head_dim")
    if head_dim is None and hidden is not None and heads and hidden % heads == 0 and not mla:
        head_dim = hidden // heads
    return {
        "routed_experts": lenient(_EXPERT_KEYS, "experts", 0),
        "experts_per_token": lenient(("num_experts_per_tok",), "experts_per_token"),
        "layers": lenient(_LAYER_KEYS, "layers"),
        "hidden_size": hidden,
        "head_dim": head_dim,
        "kv_lora_rank": lenient(("kv_lora_rank",), "kv_lora_rank") if mla else None,
        "rope_head_dim": lenient(("qk_rope_head_dim",), "rope_head_dim") if mla else None,
        "parameters": counted.total if counted else None,
        "active_parameters": counted.active if counted else None,
        "parameter_family": counted.family if counted else None,
    }


def _text_scope(data: Mapping[str, object]) -> tuple[NodePath, Mapping[str, object]]:
    """Where the language model's fields live: ``text_config`` (vLLM's
    ``get_hf_text_config``: it wins over the top level), else the top level, else
    a nested text config of a multimodal wrapper (``thinker_config.text_config``
    in Qwen3-Omni, ``llm_config``, ``language_config``): the first sub-config, in
    file order, holding a head count. Two levels at most, so the search is bounded."""
    text = data.get("text_config")
    if isinstance(text, Mapping) and any(k in text for k in _HEAD_KEYS):
        return ("text_config",), text
    if any(k in data for k in _HEAD_KEYS):
        return (), data
    for key, value in data.items():
        if not (isinstance(key, str) and key.endswith("_config") and isinstance(value, Mapping)):
            continue
        inner = value.get("text_config")
        if isinstance(inner, Mapping) and any(k in inner for k in _HEAD_KEYS):
            return (key, "text_config"), inner
        if any(k in value for k in _HEAD_KEYS):
            return (key,), value
    return (), data


def _kv_heads(
    fields: Mapping[str, object],
    scope: NodePath,
    count: Callable[[str, NodePath, Mapping[str, object]], int | None],
    spans: dict[str, Span],
    locate: Locator,
) -> int | None:
    """KV heads by the rules in the module docstring; ``None`` when not stated."""
    if fields.get("multi_query") is True and fields.get("new_decoder_architecture") is not True:
        spans["kv_heads"] = locate((*scope, "multi_query"))
        return 1
    for key in _KV_KEYS:
        if key == "multi_query_group_num" and fields.get("multi_query_attention") is False:
            continue
        number = count(key, scope, fields)
        if number is not None:
            spans["kv_heads"] = locate((*scope, key))
            return number
    return None


def effective_query_heads_per_kv(
    shape: ModelShape, tensor_parallel_size: int | None, attention_data_parallel: bool
) -> Fraction | None:
    """G per GPU rank: the query heads that share one KV head on one rank.

    Args:
        shape: the model shape (``query_heads_per_kv`` before any split).
        tensor_parallel_size: target TP; ``None`` means 1.
        attention_data_parallel: attention runs data-parallel (SGLang
            ``--enable-dp-attention``, TRT-LLM ``enable_attention_dp``): every rank
            holds all heads.

    Returns:
        - MLA: H / TP, or H with attention data parallelism (FlashMLA runs one
          latent KV head per rank: DeepSeek-V3 gives 128 at TP1, 16 at TP8).
        - GQA/MHA with TP > KV: KV heads are replicated, so G = H / TP
          (Llama-3.1-405B, H=128, KV=8 at TP16: 8, not 16).
        - otherwise H / KV (1 for MHA).
        ``None`` when the shape has no G.

    Sources: docs/engines.md docs/rules.md "Tensor parallelism" and "MLA";
    tests/data/real/SOURCES.md (DeepSeek-V3.2 recipe, Qwen3-30B-A3B at TP8).

    Raises:
        ValueError: ``tensor_parallel_size`` below 1 (callers validate first).
    """
    if tensor_parallel_size is not None and tensor_parallel_size < 1:
        raise ValueError(f"tensor_parallel_size must be ≥ 1, not {tensor_parallel_size}")
    ratio = shape.query_heads_per_kv
    heads = shape.query_heads
    if ratio is None or heads is None:
        return ratio
    tp = 1 if attention_data_parallel or tensor_parallel_size is None else tensor_parallel_size
    if shape.mla:
        return Fraction(heads, tp)
    kv = shape.kv_heads if shape.kv_heads is not None else heads
    if tp > kv:
        return Fraction(heads, tp)
    return ratio


def _positive_int(value: object) -> int | None:
    """``value`` as a positive integer (``4.0`` counts), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value > 0:
        return int(value)
    return None


def _view(doc: Document, shown: str, pointer: str | None) -> tuple[object, Locator]:
    """The node ``pointer`` names, and a function giving spans of its sub-paths.

    Pointers follow RFC 6901 via :func:`specgate.inputs.pointer.resolve_pointer`
    (which also enters JSON held in string scalars). A string node is parsed as
    embedded JSON; spans inside it point at the string.
    """
    if not pointer:
        return doc.data, doc.locate
    path, node = resolve_pointer(doc.data, pointer, file=shown)
    if isinstance(node, str):
        span = doc.locate(path)
        try:
            inner = parse_text(node, f"{shown} at {pointer}", json_syntax=True)
        except LimitReached:
            raise  # a reader's bound: the file stops
        except InputError as exc:
            raise UnreadForm(
                f"the string at {pointer} is not a JSON config: {exc.reason}",
                shown,
                span.line,
                span.column,
            ) from None
        return inner.data, lambda _path: span
    return node, lambda sub: doc.locate((*path, *sub))
