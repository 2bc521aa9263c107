"""Total and active parameters of a standard decoder, counted from its config's shapes.

docs/theory.md#step-time-inputs: when ``model.parameters_b`` / ``active_parameters_b`` are not
stated, they come from ``model.hf_config``. Counting needs the family's layout, so only the
families below are counted (``model_type``); any other config leaves the counts to the
claims file (``None`` here).

- llama, mistral: GQA attention, SwiGLU MLP 3·h·I.
- qwen2: GQA with q/k/v biases, SwiGLU. qwen3: GQA with q/k norms (2·d_h), SwiGLU.
- mixtral: every layer E experts of 3·h·I and a router h·E.
- qwen2_moe: as qwen2, MoE of ``moe_intermediate_size`` plus a shared expert 3·h·I_s and
  its gate h. qwen3_moe: as qwen3, MoE on layers with ``(i+1) % decoder_sparse_step ==
  0`` not in ``mlp_only_layers`` (the others dense, ``intermediate_size``).
- deepseek_v2, deepseek_v3, kimi_k2: MLA attention (q_lora, kv_a, kv_b, o); dense for the
  first ``first_k_dense_replace`` layers, then MoE every ``moe_layer_freq`` with
  ``n_shared_experts`` shared experts; V3 adds an expert score bias of E.
- llama4, llama4_text: GQA (its qk-norm has no weights); MoE on ``moe_layers`` (default
  every ``interleave_moe_layer_step``-th layer) with one shared expert, dense
  ``intermediate_size_mlp`` elsewhere.

Common terms: input embedding V·h, LM head V·h unless ``tie_word_embeddings``, a final
norm h and two norms of h per layer. Active parameters count attention, norms,
embedding and head in full, and per MoE layer k routed experts, the shared experts and
the router. DeepSeek's multi-token-prediction module is not counted (it is not part of
the published 671 B). The layouts follow the transformers modelling files of each
family (``modeling_llama.py``, ``modeling_mixtral.py``, ``modeling_qwen2_moe.py``,
``modeling_qwen3_moe.py``, ``modeling_deepseek_v3.py``, ``modeling_llama4.py``).

Checked (tests/inputs/test_model_params.py) against the published counts: Llama-3.1-8B
8.03 B, Llama-3.1-70B 70.6 B, Mixtral-8x7B 46.7 B / 12.9 B, Qwen3-30B-A3B 30.5 B /
3.3 B, DeepSeek-V3 671 B / 37 B, within 2 % (the model cards round the active counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

_DENSE = frozenset({"llama", "mistral", "qwen2", "qwen3"})
_MOE = frozenset({"mixtral", "qwen2_moe", "qwen3_moe", "llama4", "llama4_text"})
_MLA = frozenset({"deepseek_v2", "deepseek_v3", "kimi_k2"})
#: The ``model_type`` values counted.
FAMILIES = _DENSE | _MOE | _MLA
#: A count above this (2**53, limits.MAX_COUNT) is no model: the config is not counted.
_MOST_PARAMETERS = 2**53


class ParameterCount(NamedTuple):
    """Total and active parameters (counts, not billions) and the family counted."""

    total: int
    active: int
    family: str


def _int(fields: Mapping[str, object], key: str, default: int | None = None) -> int | None:
    value = fields.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default if value is None else None
    if isinstance(value, float) and not value.is_integer():
        return None
    number = int(value)
    return number if number >= 0 else None


def count_parameters(fields: Mapping[str, object], model_type: str | None) -> ParameterCount | None:
    """Count the parameters of the language model whose config mapping is ``fields``.

    Args:
        fields: the text config (``text_config`` for multimodal wrappers).
        model_type: the family, ``fields["model_type"]`` or the wrapper's.

    Returns:
        the counts, or ``None`` when the family is not counted or a shape it needs is
        missing (then the claims file must state ``parameters_b``).
    """
    family = model_type if isinstance(model_type, str) else None
    if family not in FAMILIES:
        return None
    layers = _int(fields, "num_hidden_layers")
    hidden = _int(fields, "hidden_size")
    heads = _int(fields, "num_attention_heads")
    vocab = _int(fields, "vocab_size")
    if not layers or not hidden or not heads or not vocab:
        return None
    kv = _int(fields, "num_key_value_heads", heads) or heads
    head_dim = _int(fields, "head_dim") or hidden // heads
    attention = _attention(fields, family, hidden, heads=heads, kv=kv, head_dim=head_dim)
    if attention is None:
        return None
    per_layer = attention + 2 * hidden  # attention and its two norms
    dense_size = _int(fields, "intermediate_size")
    if family in _DENSE:
        if dense_size is None:
            return None
        moe_layers, moe_total, moe_active, dense_mlp = 0, 0, 0, 3 * hidden * dense_size
    else:
        split = _moe(fields, family, layers, hidden, dense_size)
        if split is None:
            return None
        moe_layers, moe_total, moe_active, dense_mlp = split
    dense_layers = layers - moe_layers
    tied = fields.get("tie_word_embeddings") is True
    outer = vocab * hidden * (1 if tied else 2) + hidden  # embedding, head, final norm
    body = layers * per_layer + dense_layers * dense_mlp
    total = body + moe_layers * moe_total + outer
    if total > _MOST_PARAMETERS:
        return None  # no model; a hostile config's product of huge shapes
    return ParameterCount(total, body + moe_layers * moe_active + outer, family)


def _attention(
    fields: Mapping[str, object], family: str, hidden: int, *, heads: int, kv: int, head_dim: int
) -> int | None:
    """Attention weights of one layer."""
    if family in _MLA:
        rank = _int(fields, "kv_lora_rank")
        rope = _int(fields, "qk_rope_head_dim")
        nope = _int(fields, "qk_nope_head_dim")
        value = _int(fields, "v_head_dim")
        if rank is None or rope is None or nope is None or value is None:
            return None
        q_rank = _int(fields, "q_lora_rank")
        if q_rank:
            query = hidden * q_rank + q_rank + q_rank * heads * (nope + rope)
        else:
            query = hidden * heads * (nope + rope)
        keys = hidden * (rank + rope) + rank + rank * heads * (nope + value)
        return query + keys + heads * value * hidden
    weights = 2 * hidden * heads * head_dim + 2 * hidden * kv * head_dim
    if family in ("qwen2", "qwen2_moe"):
        weights += heads * head_dim + 2 * kv * head_dim  # q/k/v biases
    elif fields.get("attention_bias") is True:
        weights += heads * head_dim + 2 * kv * head_dim + hidden
    if family in ("qwen3", "qwen3_moe"):
        weights += 2 * head_dim  # q_norm, k_norm
    return weights


def _moe(
    fields: Mapping[str, object], family: str, layers: int, hidden: int, dense_size: int | None
) -> tuple[int, int, int, int] | None:
    """(MoE layers, MLP weights of one MoE layer, its active part, a dense layer's MLP)."""
    experts = (
        _int(fields, "num_local_experts")
        or _int(fields, "num_experts")
        or _int(fields, "n_routed_experts")
    )
    top_k = _int(fields, "num_experts_per_tok")
    if not experts or not top_k:
        return None
    router = hidden * experts
    dense_mlp = 3 * hidden * dense_size if dense_size is not None else None
    if family == "mixtral":
        if dense_size is None:
            return None
        expert = 3 * hidden * dense_size
        return layers, experts * expert + router, top_k * expert + router, 0
    if family in ("qwen2_moe", "qwen3_moe"):
        step = _int(fields, "decoder_sparse_step", 1) or 1
        only_dense = _indices(fields.get("mlp_only_layers"), layers)
        if only_dense is None:
            return None
        count = sum(1 for i in only_dense if (i + 1) % step != 0)  # already dense
        moe_layers = layers // step - (len(only_dense) - count)
        size = _int(fields, "moe_intermediate_size")
        if size is None:
            return None
        shared = 0
        shared_size = _int(fields, "shared_expert_intermediate_size", 0) or 0
        if family == "qwen2_moe" and shared_size:
            shared = 3 * hidden * shared_size + hidden  # the shared expert and its gate
        expert = 3 * hidden * size
        extra = router + shared
        return _with_dense(
            moe_layers, layers, experts * expert + extra, top_k * expert + extra, dense_mlp
        )
    if family in _MLA:
        first = min(_int(fields, "first_k_dense_replace", 0) or 0, layers)
        frequency = _int(fields, "moe_layer_freq", 1) or 1
        # layers i with first ≤ i < L and i % frequency == 0
        moe_layers = _multiples_below(layers, frequency) - _multiples_below(first, frequency)
        size = _int(fields, "moe_intermediate_size")
        if size is None:
            return None
        expert = 3 * hidden * size
        shared = (_int(fields, "n_shared_experts", 0) or 0) * expert
        if family != "deepseek_v2" and fields.get("topk_method", "noaux_tc") == "noaux_tc":
            router += experts  # e_score_correction_bias
        extra = router + shared
        return _with_dense(
            moe_layers, layers, experts * expert + extra, top_k * expert + extra, dense_mlp
        )
    # llama4: experts of intermediate_size, one shared expert, dense intermediate_size_mlp
    listed = fields.get("moe_layers")
    if listed is not None:
        indices = _indices(listed, layers)
        if indices is None:
            return None
        moe_layers = len(indices)
    else:
        moe_layers = layers // (_int(fields, "interleave_moe_layer_step", 1) or 1)
    if dense_size is None:
        return None
    expert = 3 * hidden * dense_size
    mlp_size = _int(fields, "intermediate_size_mlp")
    dense = 3 * hidden * mlp_size if mlp_size is not None else None
    extra = router + expert  # router and the shared expert
    return _with_dense(moe_layers, layers, experts * expert + extra, top_k * expert + extra, dense)


def _with_dense(
    moe_layers: int, layers: int, total: int, active: int, dense_mlp: int | None
) -> tuple[int, int, int, int] | None:
    if moe_layers < layers and dense_mlp is None:
        return None  # dense layers whose MLP size the config does not give
    return moe_layers, total, active, dense_mlp or 0


def _multiples_below(limit: int, step: int) -> int:
    """How many i in [0, limit) are multiples of ``step``."""
    return (limit + step - 1) // step if limit > 0 else 0


def _indices(value: object, layers: int) -> set[int] | None:
    """A config's list of layer indices as a set of those inside [0, layers)."""
    if value is None:
        return set()
    if not isinstance(value, list):
        return None
    found = set()
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            return None
        if 0 <= item < layers:
            found.add(item)
    return found
