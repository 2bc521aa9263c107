"""The vLLM corpus, generated from specgate's knowledge data (data/engines/vllm.json).

Every method name (``accepted_methods``, ``methods``), every ``speculative_config`` key
(``speculative_config_keys``) with a valid and an out-of-range value, every former key
(``former_speculative_config_keys``), every flag and alias (``settings``: the
``--speculative-config``/``-sc`` spellings, the ``--spec-*`` shorthands, the removed V0
flags, ``-tp``, ``--max-model-len``), every draft name vLLM or specgate detects
(``draft_names``), their interactions (draft TP × target TP, vocabulary × heterogeneous
vocab, MTP steps × MTP layers, lookup min × max, synthetic acceptance), and seeded random
combinations.

A case is a plain dict:
  id, group, via ("engine_args" | "cli"), target (a model key), and either
  speculative_config (+ engine_args) or argv (the words after ``vllm serve``), and for
  --config cases a ``files`` mapping name → YAML text. ``$MODELS/<key>`` stands for a tiny
  model's directory, ``$CASE/<name>`` for a file of the case.
"""

from __future__ import annotations

import json
import random
from typing import Any

SEED = 16

#: The draft each method runs with when it needs one (model keys of models.py).
DRAFT_FOR = {
    "eagle": "EAGLE-llama-v512",
    "eagle3": "EAGLE3-llama-v512",
    "medusa": "medusa-v512",
    "mlp_speculator": "mlp-speculator-v512",
    "draft_model": "llama-draft-v512",
    "dflash": "dflash-qwen3-v512",
    "dspark": "llama-draft-v512",
}
#: Targets carrying MTP layers for the *_mtp method names.
MTP_TARGET = {"qwen3_next_mtp": "qwen3-next-mtp1"}
DEFAULT_MTP_TARGET = "deepseek-v3-mtp1"
LLAMA = "llama-v512"

#: (valid values, out-of-range or wrong-type values) per SpeculativeConfig key.
KEY_VALUES: dict[str, tuple[list[Any], list[Any]]] = {
    "enforce_eager": ([True, False], ["maybe"]),
    "num_speculative_tokens": ([1, 2, 7, 16], [0, -1, "3", 3.5, True, "three"]),
    "draft_tensor_parallel_size": ([1], [0, -2, 3]),
    "tensor_parallel_size": ([1], [2]),
    "quantization": ([None, "fp8"], ["not-a-quant"]),
    "moe_backend": (["auto"], ["not-a-backend"]),
    "attention_backend": (["auto", "FLASH_ATTN"], ["NOT_A_BACKEND"]),
    "kv_cache_dtype": (["auto", "fp8"], ["int3"]),
    "max_model_len": ([128, 256], [0, 100000]),
    "revision": (["main"], [5]),
    "code_revision": (["main"], []),
    "index_share_for_mtp_iteration": ([True], ["x"]),
    "disable_padded_drafter_batch": ([True], []),
    "disable_eagle_block_drop": ([True], []),
    "use_local_argmax_reduction": ([True], []),
    "use_heterogeneous_vocab": ([True, False], []),
    "prompt_lookup_max": ([1, 3, 8], [0, -1]),
    "prompt_lookup_min": ([1, 2, 5], [0]),
    "parallel_drafting": ([True, False], ["sometimes"]),
    "num_speculative_tokens_per_batch_size": (
        [[[1, 8, 3], [9, 64, 2], [65, 1024, 1]], [[1, 4, 5], [5, 1024, 0]]],
        [[[2, 8, 3]], [[1, 8, 3], [4, 16, 2]], [[1, 8]], [], [[8, 1, 3]], "1-8:3"],
    ),
    "suffix_decoding_max_tree_depth": ([8, 24, 64], [0]),
    "suffix_decoding_max_cached_requests": ([0, 100], [-1]),
    "suffix_decoding_max_spec_factor": ([0.5, 2.0], [-1.0]),
    "suffix_decoding_min_token_prob": ([0.0, 0.5, 1.0], [1.5, -0.1]),
    "draft_load_config": ([{"load_format": "dummy"}], [{"not_a_field": 1}]),
    "rejection_sample_method": (["standard", "synthetic", "block"], ["typical", "Standard"]),
    "synthetic_acceptance_rates": ([[0.9, 0.7, 0.5]], [[0.5, 0.7, 0.9], [1.2, 0.5, 0.1]]),
    "synthetic_acceptance_length": ([2.5], [0.5, 9.0]),
    "enable_adaptive_verification": ([True], []),
    "draft_sample_method": (["greedy", "probabilistic"], ["beam"]),
    "dspark_draft_topk": ([4], [0]),
}
#: Plausible values for keys of older SpeculativeConfig versions.
FORMER_VALUES: dict[str, Any] = {
    "speculative_token_tree": "[(0,), (1,), (0, 0)]",
    "disable_by_batch_size": 4,
    "disable_logprobs": True,
    "disable_log_stats": True,
    "acceptance_method": "typical_acceptance_sampler",
    "draft_vocab_pruned": "vocab-map.pt",
}
#: Which method a key is tried with (ngram unless it concerns a draft model or suffix).
KEY_CONTEXT: dict[str, str] = {
    "draft_tensor_parallel_size": "draft_model",
    "quantization": "draft_model",
    "moe_backend": "draft_model",
    "attention_backend": "draft_model",
    "kv_cache_dtype": "draft_model",
    "max_model_len": "draft_model",
    "revision": "draft_model",
    "code_revision": "draft_model",
    "index_share_for_mtp_iteration": "mtp",
    "disable_padded_drafter_batch": "eagle3",
    "disable_eagle_block_drop": "eagle3",
    "use_local_argmax_reduction": "eagle3",
    "use_heterogeneous_vocab": "draft_model",
    "parallel_drafting": "draft_model",
    "suffix_decoding_max_tree_depth": "suffix",
    "suffix_decoding_max_cached_requests": "suffix",
    "suffix_decoding_max_spec_factor": "suffix",
    "suffix_decoding_min_token_prob": "suffix",
    "draft_load_config": "draft_model",
    "enable_adaptive_verification": "eagle3",
    "draft_sample_method": "draft_model",
    "dspark_draft_topk": "draft_model",
}


def _m(key: str) -> str:
    return f"$MODELS/{key}"


def _base(method: str, d: int | None = 3) -> tuple[str, dict[str, Any]]:
    """(target, block) running ``method`` as it is meant to run."""
    block: dict[str, Any] = {"method": method}
    if d is not None:
        block["num_speculative_tokens"] = d
    target = LLAMA
    if method == "mtp" or method.endswith("_mtp"):
        target = MTP_TARGET.get(method, DEFAULT_MTP_TARGET)
    elif method in DRAFT_FOR:
        block["model"] = _m(DRAFT_FOR[method])
    elif method == "custom_class":
        block["model"] = "my_proposers.MyProposer"
    return target, block


class Corpus:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []
        self._seen: set[str] = set()

    def add(self, group: str, target: str, block: Any, **extra: Any) -> None:
        case = {
            "group": group,
            "via": "engine_args",
            "target": target,
            "speculative_config": block,
            **extra,
        }
        self._push(case)

    def cli(self, group: str, argv: list[str], target: str = LLAMA, **extra: Any) -> None:
        self._push({"group": group, "via": "cli", "target": target, "argv": argv, **extra})

    def _push(self, case: dict[str, Any]) -> None:
        key = json.dumps({k: v for k, v in case.items() if k != "group"}, sort_keys=True)
        if key in self._seen:
            return
        self._seen.add(key)
        case["id"] = f"vllm-{len(self.cases) + 1:04d}-{case['group']}"
        self.cases.append(case)


def config_keys(knowledge: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(the ``speculative_config`` keys SpeculativeConfig has, the former ones), in the
    data's order: the tables ``speculative_config_keys`` and
    ``former_speculative_config_keys`` where the data has them (as it did when 0.27.1 and
    0.32.0 were recorded), else its ``fields`` in ``speculative_config``, a field absent
    at every release it was read at (``absent_in`` and no ``present_in``) being former:
    the same two lists, in the same order, so the corpus stays the recorded one."""
    tables = knowledge["tables"]
    if "speculative_config_keys" in tables:
        return (
            list(tables["speculative_config_keys"]["entries"]),
            list(tables["former_speculative_config_keys"]["entries"]),
        )
    fields = [f for f in knowledge.get("fields", ()) if f.get("in") == "speculative_config"]
    gone = [f["name"] for f in fields if f.get("absent_in") and not f.get("present_in")]
    return [f["name"] for f in fields if f["name"] not in gone], gone


def generate(
    knowledge: dict[str, Any], *, n_random: int = 220, seed: int = SEED
) -> list[dict[str, Any]]:
    """Every case of the corpus, in a stable order (ids are positions)."""
    tables = knowledge["tables"]
    accepted = list(tables["accepted_methods"]["entries"])
    method_names = list(dict.fromkeys(accepted + list(tables["methods"]["entries"])))
    keys, former = config_keys(knowledge)
    c = Corpus()

    # A. every method name, as meant; without a model; without D; case-folded.
    for name in method_names:
        target, block = _base(name)
        c.add("method", target, block)
        if "model" in block:
            c.add("method-no-model", target, {k: v for k, v in block.items() if k != "model"})
        c.add(
            "method-no-d", target, {k: v for k, v in block.items() if k != "num_speculative_tokens"}
        )
        if name.upper() != name:
            c.add("method-case", target, {**block, "method": name.upper()})
        if target != LLAMA:
            c.add("method-on-llama", LLAMA, block)
    for odd in (
        "eagle-3",
        "eagle_3",
        " eagle3",
        "draftmodel",
        "ngram-gpu",
        "Ngram",
        "mtp2",
        "lookahead",
        "pard",
    ):
        c.add("method-unknown", LLAMA, {"method": odd, "num_speculative_tokens": 3})

    # B. every key: valid and out-of-range values, in the context it concerns.
    for key in keys:
        if key in ("method", "model"):
            continue
        good, bad = KEY_VALUES.get(key, ([True], ["not-a-value"]))
        context = KEY_CONTEXT.get(key, "ngram")
        for value in good:
            target, block = _base(context)
            c.add("key", target, {**block, key: value})
        for value in bad:
            target, block = _base(context)
            c.add("key-bad", target, {**block, key: value})
    for key in former:
        for context in ("ngram", "draft_model"):
            target, block = _base(context)
            c.add("former-key", target, {**block, key: FORMER_VALUES.get(key, True)})
    for typo in (
        "num_spec_tokens",
        "num_speculative_token",
        "speculative_model",
        "draft_model",
        "draft_tp",
        "Num_Speculative_Tokens",
        "prompt_lookup",
        "max_tree_depth",
    ):
        c.add("unknown-key", LLAMA, {"method": "ngram", "num_speculative_tokens": 3, typo: 2})

    # C. a draft's name or config names the method (method omitted): draft_names and
    # the names vLLM itself detects.
    for model in (
        "EAGLE-llama-v512",
        "EAGLE3-llama-v512",
        "llama-eagle_head-v512",
        "llama-dflash-v512",
        "llama-it-assistant-v512",
        "llama-mlp-speculator-name-v512",
        "llama-medusa-name-v512",
        "llama-nextn-name-v512",
        "medusa-v512",
        "mlp-speculator-v512",
        "eagle3-arch-v512",
        "llama-draft-v512",
        "dflash-qwen3-v512",
    ):
        c.add("draft-name", LLAMA, {"model": _m(model), "num_speculative_tokens": 3})
        c.add("draft-name-no-d", LLAMA, {"model": _m(model)})
    for name in ("ngram", "[ngram]", "suffix", "my_proposers.MyProposer"):
        c.add("model-as-method", LLAMA, {"model": name, "num_speculative_tokens": 3})
    c.add("empty", LLAMA, {})
    c.add("d-only", LLAMA, {"num_speculative_tokens": 3})

    # D. interactions.
    for method in ("draft_model", "eagle", "eagle3", "medusa"):
        for tp in (1, 2, 4):
            for dtp in (None, 1, 2, 4):
                target, block = _base(method)
                if dtp is not None:
                    block["draft_tensor_parallel_size"] = dtp
                c.add("draft-tp", target, block, engine_args={"tensor_parallel_size": tp})
    for tp in (1, 2, 4, 8):
        c.add(
            "target-tp",
            LLAMA,
            {"method": "ngram", "num_speculative_tokens": 3},
            engine_args={"tensor_parallel_size": tp},
        )
    for draft in ("llama-draft-v1024", "llama-draft-v520", "llama-draft-v512"):
        for method in (None, "draft_model", "eagle3"):
            for hetero in (None, True):
                for sample in (None, "probabilistic"):
                    block = {"model": _m(draft), "num_speculative_tokens": 3}
                    if method:
                        block["method"] = method
                    if hetero is not None:
                        block["use_heterogeneous_vocab"] = hetero
                    if sample is not None:
                        block["draft_sample_method"] = sample
                    c.add("vocab", LLAMA, block)
    for target in (
        "deepseek-v3-mtp0",
        "deepseek-v3-mtp1",
        "deepseek-v3-mtp2",
        "qwen3-next-mtp1",
        "qwen3-next-nomtp",
        LLAMA,
    ):
        for method in ("mtp", "deepseek_mtp", "qwen3_next_mtp"):
            for d in (None, 1, 2, 3, 4, 5):
                block = {"method": method}
                if d is not None:
                    block["num_speculative_tokens"] = d
                c.add("mtp-layers", target, block)
    for lo in (None, 1, 3, 5):
        for hi in (None, 1, 3, 5):
            block = {"method": "ngram", "num_speculative_tokens": 3}
            if lo is not None:
                block["prompt_lookup_min"] = lo
            if hi is not None:
                block["prompt_lookup_max"] = hi
            c.add("lookup", LLAMA, block)
            c.add("lookup", LLAMA, {**block, "method": "ngram_gpu"})
    for d in (2, 3, 5):
        for extra in (
            {"synthetic_acceptance_length": 2.0},
            {"synthetic_acceptance_rates": [0.8, 0.6]},
            {"synthetic_acceptance_rates": [0.8, 0.6, 0.4]},
            {},
        ):
            c.add(
                "synthetic",
                LLAMA,
                {
                    "method": "ngram",
                    "num_speculative_tokens": d,
                    "rejection_sample_method": "synthetic",
                    **extra,
                },
            )
    for draft, mml in (
        ("llama-draft-ctx128", None),
        ("llama-draft-ctx128", 64),
        ("llama-draft-ctx128", 256),
        ("llama-draft-v512", 600),
    ):
        block = {"method": "draft_model", "model": _m(draft), "num_speculative_tokens": 3}
        if mml is not None:
            block["max_model_len"] = mml
        c.add("draft-len", LLAMA, block)
        c.add("draft-len", LLAMA, {**block, "method": "eagle3"})
    for method in ("ngram", "eagle3", "draft_model", "mtp", "suffix"):
        target, block = _base(method)
        c.add("parallel", target, {**block, "parallel_drafting": True})
        c.add("adaptive", target, {**block, "enable_adaptive_verification": True})
        c.add(
            "dynamic",
            target,
            {**block, "num_speculative_tokens_per_batch_size": [[1, 4, 3], [5, 512, 1]]},
        )
        c.add("dynamic", target, {**block, "num_speculative_tokens_per_batch_size": [[1, 4, 8]]})
    c.add(
        "adaptive",
        LLAMA,
        {
            "method": "eagle3",
            "model": _m("EAGLE3-llama-v512"),
            "num_speculative_tokens": 3,
            "enable_adaptive_verification": True,
            "use_local_argmax_reduction": True,
        },
    )
    for mml in (64, 256, 512):
        c.add(
            "target-len",
            LLAMA,
            {"method": "ngram", "num_speculative_tokens": 3},
            engine_args={"max_model_len": mml},
        )

    # E. the command line: every flag spelling and alias of the knowledge data.
    _cli_cases(c, knowledge)

    # F. seeded random combinations.
    rng = random.Random(seed)
    for _ in range(n_random):
        method = rng.choice([*method_names, None, None])
        target, block = _base(method) if method else (LLAMA, {})
        if method is None and rng.random() < 0.7:
            block["model"] = _m(rng.choice([*list(DRAFT_FOR.values()), "llama-draft-v1024"]))
        if rng.random() < 0.85:
            block["num_speculative_tokens"] = rng.choice([1, 2, 3, 4, 5, 7, 8, 0, -1])
        else:
            block.pop("num_speculative_tokens", None)
        for key in rng.sample(keys, rng.choice([0, 1, 1, 2, 3])):
            if key in ("method", "model", "num_speculative_tokens"):
                continue
            good, bad = KEY_VALUES.get(key, ([True], []))
            pool = good + bad if bad and rng.random() < 0.3 else good
            block[key] = rng.choice(pool)
        if rng.random() < 0.1:
            key = rng.choice(former)
            block[key] = FORMER_VALUES.get(key, True)
        engine_args = {}
        if rng.random() < 0.3:
            engine_args["tensor_parallel_size"] = rng.choice([1, 2, 4])
        if rng.random() < 0.2 and not target.startswith(("deepseek", "qwen3")):
            target = LLAMA
        c.add("random", target, block, **({"engine_args": engine_args} if engine_args else {}))
    for _ in range(n_random // 4):
        method = rng.choice(method_names)
        target, block = _base(method, rng.choice([1, 2, 3, 5]))
        c.cli("random-cli", _random_argv(rng, target, block), target=target)
    return c.cases


def _cli_cases(c: Corpus, knowledge: dict[str, Any]) -> None:
    settings = {s["name"]: s for s in knowledge["settings"]}
    spec = settings["--speculative-config"]
    spellings = [spec["name"], *spec.get("aliases", []), "--speculative_config"]
    ngram = json.dumps({"method": "ngram", "num_speculative_tokens": 3})
    eagle3 = json.dumps(
        {"method": "eagle3", "model": _m("EAGLE3-llama-v512"), "num_speculative_tokens": 4}
    )
    model = ["--model", _m(LLAMA)]
    for flag in spellings:
        c.cli("cli-spec", [*model, flag, ngram])
        c.cli("cli-spec", [*model, f"{flag}={eagle3}"])
        c.cli(
            "cli-dotted", [*model, f"{flag}.method", "ngram", f"{flag}.num_speculative_tokens", "4"]
        )
        c.cli(
            "cli-dotted",
            [
                *model,
                f"{flag}.method=eagle3",
                f"{flag}.model={_m('EAGLE3-llama-v512')}",
                f"{flag}.num_speculative_tokens=2",
            ],
        )
        c.cli(
            "cli-dotted", [*model, f"{flag}.num-speculative-tokens", "2", f"{flag}.method", "ngram"]
        )
    c.cli("cli-positional", [_m(LLAMA), "--speculative-config", ngram])
    c.cli(
        "cli-positional",
        [_m(LLAMA), "--model", _m("llama-draft-v512"), "--speculative-config", ngram],
    )
    c.cli("cli-bad-json", [*model, "--speculative-config", "{method: ngram}"])
    c.cli("cli-bad-json", [*model, "--speculative-config", "[1, 2]"])
    c.cli("cli-bad-json", [*model, "--speculative-config", "ngram"])
    c.cli("cli-bad-json", [*model, "--speculative-config", ""])
    shorthands = [s for s in settings.values() if s.get("into")]
    for s in shorthands:
        value = {
            "method": "ngram",
            "model": _m("EAGLE3-llama-v512"),
            "num_speculative_tokens": "3",
        }[s["into"]]
        rest = {
            "method": ["--spec-tokens", "3"],
            "model": ["--spec-method", "eagle3", "--spec-tokens", "3"],
            "num_speculative_tokens": ["--spec-method", "ngram"],
        }[s["into"]]
        c.cli("cli-shorthand", [*model, s["name"], value, *rest])
        c.cli(
            "cli-shorthand", [*model, s["name"].replace("-", "_").replace("__", "--"), value, *rest]
        )
        c.cli(
            "cli-shorthand-conflict",
            [
                *model,
                s["name"],
                value,
                *rest,
                "--speculative-config",
                json.dumps(
                    {
                        "method": "ngram",
                        "model": _m("EAGLE3-llama-v512"),
                        "num_speculative_tokens": 3,
                    }
                ),
            ],
        )
        c.cli(
            "cli-shorthand-dotted",
            [*model, s["name"], value, *rest, f"--speculative-config.{s['into']}", value],
        )
    for s in settings.values():
        if not s.get("removed_in"):
            continue
        value = {
            "--speculative-model": _m("llama-draft-v512"),
            "--num-speculative-tokens": "3",
            "--ngram-prompt-lookup-max": "4",
            "--ngram-prompt-lookup-min": "1",
            "--speculative-draft-tensor-parallel-size": "1",
            "--spec-decoding-acceptance-method": "typical_acceptance_sampler",
        }.get(s["name"], "1")
        c.cli("cli-removed", [*model, s["name"], value])
        c.cli("cli-removed", [*model, "--speculative-config", ngram, s["name"], value])
    tp = settings["--tensor-parallel-size"]
    for flag in [tp["name"], *tp.get("aliases", []), "--tensor_parallel_size"]:
        for value in ("1", "2", "4", "3"):
            c.cli(
                "cli-tp",
                [
                    *model,
                    flag,
                    value,
                    "--speculative-config",
                    json.dumps(
                        {
                            "method": "draft_model",
                            "model": _m("llama-draft-v512"),
                            "num_speculative_tokens": 3,
                            "draft_tensor_parallel_size": 1,
                        }
                    ),
                ],
            )
    for value in ("256", "0.25k", "1k", "1K", "-1", "auto", "128", "100000"):
        c.cli("cli-max-len", [*model, "--max-model-len", value, "--speculative-config", ngram])
    yaml_block = (
        "speculative-config:\n  method: eagle3\n  model: $MODELS/EAGLE3-llama-v512\n"
        "  num_speculative_tokens: 5\ntensor-parallel-size: 2\n"
    )
    c.cli(
        "cli-config-file",
        [_m(LLAMA), "--config", "$CASE/serve.yaml"],
        files={"serve.yaml": yaml_block},
    )
    c.cli(
        "cli-config-file",
        [_m(LLAMA), "--config", "$CASE/serve.yaml", "-tp", "1"],
        files={"serve.yaml": yaml_block},
    )
    c.cli(
        "cli-config-file",
        [_m(LLAMA), "--config", "$CASE/serve.yaml", "--speculative-config", ngram],
        files={"serve.yaml": yaml_block},
    )
    c.cli(
        "cli-config-file",
        [_m(LLAMA), "--config", "$CASE/serve.yaml"],
        files={
            "serve.yaml": 'speculative_config: \'{"method": "ngram", "num_speculative_tokens": 2}\'\n'
        },
    )
    c.cli(
        "cli-config-file",
        [_m(LLAMA), "--config", "$CASE/serve.yaml"],
        files={"serve.yaml": "spec-method: ngram\nspec-tokens: 6\n"},
    )
    c.cli(
        "cli-config-file",
        [_m(LLAMA), "--config", "$CASE/serve.yaml"],
        files={
            "serve.yaml": "speculative-model: $MODELS/llama-draft-v512\nnum-speculative-tokens: 3\n"
        },
    )


def _random_argv(rng: random.Random, target: str, block: dict[str, Any]) -> list[str]:
    argv = [_m(target)] if rng.random() < 0.5 else ["--model", _m(target)]
    style = rng.choice(["json", "dotted", "short", "mixed"])
    if style == "json" or ("model" in block and style == "short"):
        argv += [rng.choice(["--speculative-config", "-sc"]), json.dumps(block)]
    elif style == "dotted":
        for k, v in block.items():
            argv += [f"{rng.choice(['--speculative-config', '-sc'])}.{k}", str(v)]
    elif style == "short":
        argv += ["--spec-method", block["method"]]
        if "num_speculative_tokens" in block:
            argv += ["--spec-tokens", str(block["num_speculative_tokens"])]
    else:
        argv += [
            "--spec-method",
            block["method"],
            "--speculative-config",
            json.dumps({k: v for k, v in block.items() if k != "method"}),
        ]
    if rng.random() < 0.3:
        argv += [rng.choice(["-tp", "--tensor-parallel-size"]), str(rng.choice([1, 2, 4]))]
    return argv
