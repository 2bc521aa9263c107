"""Tiny random-weight models saved locally with transformers (no hub access).

Every model is named by a stable key; records name models by key (``$MODELS/<key>``),
never by an absolute path, so records do not depend on where they were made.

Shapes: the target is a Llama with vocab 512, 2 layers, hidden 64, 4 query heads and 2 KV
heads (so TP above 4 is refused for the model's own reason, SOURCES.md). Drafts differ in
one thing each (vocabulary, context, name, architecture); MTP targets are DeepSeek-V3 and
Qwen3-Next shapes with 0, 1 or 2 MTP (NextN) layers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

SEED = 16
VOCAB = 512

#: key → (kind, overrides). kind: llama (weights saved), config (config.json only, with
#: the target's tokenizer beside it).
LLAMA: dict[str, dict[str, Any]] = {
    "llama-v512": {"num_hidden_layers": 2},
    # A target vLLM's CPU backend can serve (its attention kernels refuse head_dim 16:
    # "Unsupported CPU attention configuration: head_dim=16"): hidden 256 over 4 heads is
    # head_dim 64. The live measure test (tests/integration/test_live_vllm.py) serves it.
    "llama-serve-v512": {
        "num_hidden_layers": 2, "hidden_size": 256, "intermediate_size": 512,
    },
    "llama-draft-v512": {"num_hidden_layers": 1},
    "llama-draft-v1024": {"num_hidden_layers": 1, "vocab_size": 1024},
    "llama-draft-v520": {"num_hidden_layers": 1, "vocab_size": 520},
    "llama-draft-ctx128": {"num_hidden_layers": 1, "max_position_embeddings": 128},
    # Names vLLM and specgate read the drafter from (vllm/config/speculative.py:
    # "eagle-" and "eagle3" substrings, dflash, dspark; specgate: data draft_names).
    "EAGLE-llama-v512": {"num_hidden_layers": 1},
    "EAGLE3-llama-v512": {"num_hidden_layers": 1},
    "llama-eagle_head-v512": {"num_hidden_layers": 1},
    "llama-dflash-v512": {"num_hidden_layers": 1},
    "llama-it-assistant-v512": {"num_hidden_layers": 1},
    "llama-mlp-speculator-name-v512": {"num_hidden_layers": 1},
    "llama-medusa-name-v512": {"num_hidden_layers": 1},
    "llama-nextn-name-v512": {"num_hidden_layers": 1},
}

_DEEPSEEK = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "vocab_size": VOCAB,
    "hidden_size": 64,
    "intermediate_size": 128,
    "moe_intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "n_routed_experts": 4,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "n_group": 1,
    "topk_group": 1,
    "first_k_dense_replace": 1,
    "kv_lora_rank": 16,
    "q_lora_rank": 32,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 16,
    "max_position_embeddings": 512,
    "rope_theta": 10000.0,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}
_QWEN3_NEXT = {
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "vocab_size": VOCAB,
    "hidden_size": 64,
    "intermediate_size": 128,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "full_attention_interval": 4,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 16,
    "linear_conv_kernel_dim": 4,
    "max_position_embeddings": 512,
    "torch_dtype": "bfloat16",
}
CONFIGS: dict[str, dict[str, Any]] = {
    "deepseek-v3-mtp0": {**_DEEPSEEK, "num_nextn_predict_layers": 0},
    "deepseek-v3-mtp1": {**_DEEPSEEK, "num_nextn_predict_layers": 1},
    "deepseek-v3-mtp2": {**_DEEPSEEK, "num_nextn_predict_layers": 2},
    "qwen3-next-mtp1": {**_QWEN3_NEXT, "num_nextn_predict_layers": 1},
    "qwen3-next-nomtp": dict(_QWEN3_NEXT),
    "medusa-v512": {
        "architectures": ["MedusaModel"],
        "model_type": "medusa",
        "hidden_size": 64,
        "vocab_size": VOCAB,
        "num_heads": 3,
        "num_hidden_layers": 1,
        "torch_dtype": "bfloat16",
    },
    "mlp-speculator-v512": {
        "architectures": ["MLPSpeculatorPreTrainedModel"],
        "model_type": "mlp_speculator",
        "emb_dim": 64,
        "inner_dim": 64,
        "vocab_size": VOCAB,
        "n_predict": 3,
        "top_k_tokens_per_head": [4, 3, 2],
        "n_candidates": 4,
        "torch_dtype": "bfloat16",
    },
    # a DFlash draft as vLLM's registry knows it (DFlashDraftModel → qwen3_dflash)
    "dflash-qwen3-v512": {
        "architectures": ["DFlashDraftModel"],
        "model_type": "qwen3",
        "vocab_size": VOCAB,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "max_position_embeddings": 512,
        "block_size": 8,
        "dflash_config": {"target_layer_ids": [0, 1], "mask_token_id": 4},
        "torch_dtype": "bfloat16",
    },
    "eagle3-arch-v512": {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "vocab_size": VOCAB,
        "draft_vocab_size": VOCAB,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 512,
        "torch_dtype": "bfloat16",
    },
}


def _tokenizer(directory: Path) -> None:
    """A byte-level BPE tokenizer trained on generated text, wrapped for transformers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    words = [f"w{i} t{i % 17} s{i % 29}" for i in range(4000)]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - 8, special_tokens=["<unk>", "<s>", "</s>", "<pad>"]
    )
    tok.train_from_iterator(words, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
    )
    fast.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    fast.save_pretrained(directory)


def _llama(directory: Path, overrides: dict[str, Any], tokenizer_dir: Path) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    fields: dict[str, Any] = {
        "vocab_size": VOCAB,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 512,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "pad_token_id": 3,
        "tie_word_embeddings": False,
    }
    cfg = LlamaConfig(**{**fields, **overrides})
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(directory)
    _copy_tokenizer(tokenizer_dir, directory)


def _copy_tokenizer(src: Path, dst: Path) -> None:
    for f in src.iterdir():
        if f.name.startswith("tokenizer") or f.name in ("special_tokens_map.json",):
            shutil.copy(f, dst / f.name)


def ensure_models(root: Path) -> dict[str, Path]:
    """Create every tiny model under ``root`` (once; a ``.done`` marker per model).

    Returns:
        key → directory.
    """
    root.mkdir(parents=True, exist_ok=True)
    tok_dir = root / "_tokenizer"
    if not (tok_dir / ".done").exists():
        tok_dir.mkdir(exist_ok=True)
        _tokenizer(tok_dir)
        (tok_dir / ".done").write_text("ok")
    out: dict[str, Path] = {}
    for key, overrides in LLAMA.items():
        d = root / key
        if not (d / ".done").exists():
            d.mkdir(exist_ok=True)
            _llama(d, overrides, tok_dir)
            (d / ".done").write_text("ok")
        out[key] = d
    for key, cfg in CONFIGS.items():
        d = root / key
        if not (d / ".done").exists():
            d.mkdir(exist_ok=True)
            (d / "config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True))
            _copy_tokenizer(tok_dir, d)
            (d / ".done").write_text("ok")
        out[key] = d
    token_map = root / "token-map.pt"
    if not token_map.exists():
        import torch

        torch.save(torch.arange(VOCAB // 2), token_map)
    return out


def ensure_arch_variants(root: Path, architectures: list[str]) -> dict[str, Path]:
    """``arch-<Name>``: the DeepSeek-V3 MTP-1 config with ``architectures`` set to Name, for
    engines that decide by the target's architecture name alone (SGLang's
    _handle_eagle_family list). Only the name differs; nothing else claims to be that model."""
    out: dict[str, Path] = {}
    for arch in architectures:
        d = root / f"arch-{arch}"
        if not (d / ".done").exists():
            d.mkdir(parents=True, exist_ok=True)
            cfg = {**CONFIGS["deepseek-v3-mtp1"], "architectures": [arch]}
            (d / "config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True))
            _copy_tokenizer(root / "_tokenizer", d)
            (d / ".done").write_text("ok")
        out[f"arch-{arch}"] = d
    return out


def model_info(paths: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """What each tiny model is (for the records' header): vocab, layers, heads, MTP layers."""
    info: dict[str, dict[str, Any]] = {}
    for key, d in sorted(paths.items()):
        cfg = json.loads((d / "config.json").read_text())
        info[key] = {
            k: cfg[k]
            for k in (
                "architectures",
                "model_type",
                "vocab_size",
                "num_hidden_layers",
                "num_attention_heads",
                "num_key_value_heads",
                "max_position_embeddings",
                "num_nextn_predict_layers",
                "n_predict",
                "num_heads",
            )
            if k in cfg
        }
        info[key]["weights"] = (d / "model.safetensors").exists()
    return info
