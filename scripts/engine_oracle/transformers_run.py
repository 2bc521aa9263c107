"""Ask transformers itself: ``generate()`` with an assistant (or prompt lookup) on tiny models.

Refusals live in transformers/generation/utils.py (``_validate_generation_mode``:
num_return_sequences, stateful models, different vocabularies without tokenizers, an
unneeded assistant_tokenizer; ``_assisted_decoding``: use_cache, static caches, batch
size 1) and configuration_utils.py (GenerationConfig.validate). The values the drafter
actually runs with (num_assistant_tokens, its schedule, the confidence threshold) are read
off the candidate generator transformers builds (candidate_generator.py), so defaults are
the engine's, not ours.
"""

from __future__ import annotations

import copy
import importlib.util
import logging
import os
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# From 5.2x from_pretrained kernelizes a model by default with the `kernels` package (hub
# kernels: faster layers, the same generation logic), and refuses to load without it.
# Where the environment leaves it out (scripts/build_oracle_env.sh TRANSFORMERS_LEFT_OUT:
# the index here does not serve its pin), they are switched off as a user would
# (USE_HUB_KERNELS, transformers/integrations/hub_kernels.py), and the header says so.
_NO_KERNELS = importlib.util.find_spec("kernels") is None
if _NO_KERNELS:
    os.environ.setdefault("USE_HUB_KERNELS", "0")

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.generation import candidate_generator as cg

from engine_oracle.common import (
    CASE_TIMEOUT_S,
    Placeholders,
    Timeout,
    WarningCatcher,
    clip,
    plain,
    refusal,
    time_limit,
)

VERSION = transformers.__version__
#: from_pretrained's dtype keyword: ``dtype`` in 5.x, ``torch_dtype`` before (a 4.x release
#: takes an unknown keyword as a config attribute, which its config cannot print)
_DTYPE = "dtype" if int(VERSION.split(".")[0]) >= 5 else "torch_dtype"
_SEEN: dict[str, Any] = {}


def _spy(cls: type) -> None:
    original = cls.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        gen = getattr(self, "assistant_generation_config", None) or getattr(
            self, "generation_config", None
        )
        _SEEN.update(
            {
                "candidate_generator": type(self).__name__,
                "num_assistant_tokens": getattr(self, "num_assistant_tokens", None),
                "num_assistant_tokens_schedule": getattr(
                    gen, "num_assistant_tokens_schedule", None
                ),
                "assistant_confidence_threshold": getattr(
                    self,
                    "assistant_confidence_threshold",
                    getattr(gen, "assistant_confidence_threshold", None),
                ),
                "num_output_tokens": getattr(self, "num_output_tokens", None),
                "max_matching_ngram_size": getattr(self, "max_matching_ngram_size", None),
            }
        )

    cls.__init__ = init  # type: ignore[method-assign]


for _name in dir(cg):
    _obj = getattr(cg, _name)
    if (
        isinstance(_obj, type)
        and _name.endswith("CandidateGenerator")
        and _obj.__module__ == cg.__name__
    ):
        _spy(_obj)


def header() -> dict[str, Any]:
    out = {
        "generate": "model.generate(input_ids, max_new_tokens=6, **kwargs) on CPU, greedy unless stated"
    }
    if _NO_KERNELS:
        out["hub_kernels"] = "off: the kernels package is not installed (USE_HUB_KERNELS=0)"
    return out


KW: dict[str, list[Any]] = {
    "num_assistant_tokens": [1, 5, 20, 0, -1],
    "num_assistant_tokens_schedule": ["constant", "heuristic", "heuristic_transient", "bogus"],
    "assistant_confidence_threshold": [0.0, 0.4, 0.9, 1.5, -0.1],
    "prompt_lookup_num_tokens": [1, 3, 10, 0],
    "max_matching_ngram_size": [1, 2, 0],
    "assistant_lookbehind": [1, 10],
    "target_lookbehind": [1, 10],
    "assistant_ensemble_weight": [0.5, 1.5],
    "assistant_early_exit": [1],
    "speculation_type": ["dflash", "eagle"],
}


def generate(knowledge: dict[str, Any]) -> list[dict[str, Any]]:
    """Cases: the settings transformers.json has defaults for, every assistant-related
    GenerationConfig field, and the conditions transformers refuses."""
    cases: list[dict[str, Any]] = []

    def add(
        group: str,
        assistant: str | None,
        kwargs: dict[str, Any],
        batch: int = 1,
        tokenizers: bool = False,
        assistant_config: dict[str, Any] | None = None,
    ) -> None:
        case = {
            "group": group,
            "target": "llama-v512",
            "assistant": assistant,
            "kwargs": kwargs,
            "batch": batch,
        }
        if assistant_config:
            case["assistant_generation_config"] = assistant_config
        if tokenizers:
            case["tokenizers"] = True
        case["id"] = f"transformers-{len(cases) + 1:04d}-{group}"
        cases.append(case)

    draft = "llama-draft-v512"
    add("baseline", draft, {})
    add("baseline", None, {"prompt_lookup_num_tokens": 3})
    for d in knowledge.get("defaults", []):  # the knowledge's defaults, stated explicitly
        add("knowledge-default", draft, {d["name"]: d["value"]})
    for key, values in KW.items():
        for v in values:
            assistant = (
                None if key in ("prompt_lookup_num_tokens", "max_matching_ngram_size") else draft
            )
            kwargs = {key: v}
            if key == "max_matching_ngram_size":
                kwargs["prompt_lookup_num_tokens"] = 3
            add("kwarg", assistant, kwargs)
            if key == "assistant_ensemble_weight":
                add("kwarg", None, {key: v, "prompt_lookup_num_tokens": 3})
    for extra in (
        {"cache_implementation": "static"},
        {"cache_implementation": "dynamic"},
        {"cache_implementation": "sliding_window"},
        {"use_cache": False},
        {"num_return_sequences": 2, "do_sample": True},
        {"num_beams": 2},
        {"do_sample": True, "temperature": 0.7},
        {"do_sample": True, "top_k": 5},
        {"output_scores": True, "return_dict_in_generate": True},
    ):
        add("refusal", draft, extra)
        add("refusal", None, {**extra, "prompt_lookup_num_tokens": 3})
    add("batch", draft, {}, batch=2)
    add("batch", None, {"prompt_lookup_num_tokens": 3}, batch=2)
    add("batch", draft, {"num_assistant_tokens": 3}, batch=3)
    for vocab_draft in ("llama-draft-v1024", "llama-draft-v520"):
        add("vocab", vocab_draft, {})
        add("vocab", vocab_draft, {}, tokenizers=True)
        add("vocab", vocab_draft, {"do_sample": True}, tokenizers=True)
    add("vocab", draft, {}, tokenizers=True)
    add("both", draft, {"prompt_lookup_num_tokens": 3})
    add("ctx", "llama-draft-ctx128", {})
    for n in (1, 5, 20):
        for sched in ("constant", "heuristic"):
            for thr in (None, 0.4, 0.0):
                kwargs: dict[str, Any] = {
                    "num_assistant_tokens": n,
                    "num_assistant_tokens_schedule": sched,
                }
                if thr is not None:
                    kwargs["assistant_confidence_threshold"] = thr
                add("grid", draft, kwargs)
                # the same settings on the assistant's own generation_config, where
                # AssistedCandidateGenerator reads them
                add("grid-assistant-config", draft, {}, assistant_config=kwargs)
    for key in (
        "num_assistant_tokens",
        "num_assistant_tokens_schedule",
        "assistant_confidence_threshold",
    ):
        for v in KW[key]:
            add("assistant-config", draft, {}, assistant_config={key: v})
    return cases


def _tokenizer(folder: Path) -> Any:
    """The tiny models' tokenizer. A 4.x release does not know the class a 5.x release
    saved it as (``TokenizersBackend``): there it is the same ``tokenizer.json`` wrapped
    as a ``PreTrainedTokenizerFast`` with the special tokens its config names and a Llama
    tokenizer's inputs."""
    try:
        return AutoTokenizer.from_pretrained(folder)
    except ValueError:
        import json

        from transformers import PreTrainedTokenizerFast

        config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
        special = {k: v for k, v in config.items() if k.endswith("_token") and isinstance(v, str)}
        return PreTrainedTokenizerFast(
            tokenizer_file=str(folder / "tokenizer.json"),
            model_input_names=["input_ids", "attention_mask"],  # a Llama's, no token_type_ids
            **special,
        )


class Recorder:
    def __init__(self, models: Path) -> None:
        self.models = models
        self.ph = Placeholders(models, Path("/nonexistent-case-dir"))
        self._cache: dict[str, Any] = {}
        self.tok = _tokenizer(models / "llama-v512")
        torch.manual_seed(16)

    def _model(self, key: str) -> Any:
        if key not in self._cache:
            self._cache[key] = AutoModelForCausalLM.from_pretrained(
                self.models / key, **{_DTYPE: torch.float32}
            ).eval()
        return self._cache[key]

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        record = dict(case)
        catcher = WarningCatcher(("transformers",), self.ph)
        logging.getLogger("transformers").addHandler(catcher)
        _SEEN.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with time_limit(CASE_TIMEOUT_S):
                    answer = self._ask(case)
            except Timeout as exc:
                answer = {
                    "status": "timeout",
                    "stage": "generate",
                    "refusal": {"exception": "Timeout", "message": str(exc)},
                }
        logging.getLogger("transformers").removeHandler(catcher)
        said = catcher.seen + [
            clip(str(w.message))
            for w in caught
            if "assist" in str(w.message).lower()
            or "speculat" in str(w.message).lower()
            or "prompt_lookup" in str(w.message)
        ]
        if said:
            answer["warnings"] = list(dict.fromkeys(said))
        record["answer"] = answer
        return record

    def _ask(self, case: dict[str, Any]) -> dict[str, Any]:
        target = self._model(case["target"])
        prompt = self.tok(["w1 t1 s1 w2 t2 s2 w1 t1"] * case["batch"], return_tensors="pt")
        kwargs = dict(case["kwargs"])
        saved = None
        if case["assistant"]:
            assistant = self._model(case["assistant"])
            kwargs["assistant_model"] = assistant
            if case.get("assistant_generation_config"):
                saved = copy.deepcopy(assistant.generation_config)
                for k, v in case["assistant_generation_config"].items():
                    setattr(assistant.generation_config, k, v)
        try:
            return self._generate(case, target, prompt, kwargs)
        finally:
            if saved is not None:
                kwargs["assistant_model"].generation_config = saved

    def _generate(
        self, case: dict[str, Any], target: Any, prompt: Any, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        if case.get("tokenizers"):
            kwargs["tokenizer"] = self.tok
            kwargs["assistant_tokenizer"] = self.tok
        names = [
            *list(KW),
            "cache_implementation",
            "use_cache",
            "num_return_sequences",
            "num_beams",
            "assistant_model",
            "tokenizer",
            "assistant_tokenizer",
            "batch_size",
        ]
        try:
            with torch.no_grad():
                out = target.generate(**prompt, max_new_tokens=6, pad_token_id=3, **kwargs)
        except Exception as exc:
            return {
                "status": "refused",
                "stage": "generate",
                "refusal": refusal(exc, "transformers", names, self.ph, set(case["kwargs"])),
            }
        seqs = out.sequences if hasattr(out, "sequences") else out
        resolved = {k: plain(v) for k, v in _SEEN.items() if v is not None}
        resolved["assisted"] = bool(_SEEN)
        resolved["new_tokens"] = int(seqs.shape[-1] - prompt["input_ids"].shape[-1])
        return {"status": "ok", "stage": "generate", "resolved": resolved}
