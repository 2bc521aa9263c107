#!/usr/bin/env python3
"""Ask vLLM which model types and architectures it turns into an MTP draft, and which
config key it reads the MTP layer count from (``SpeculativeConfig.hf_config_override``,
vllm/config/speculative.py).

Runs INSIDE a vLLM environment (scripts/build_oracle_env.sh), never in specgate's, and
imports nothing of specgate. Candidates are every string constant of
``hf_config_override``'s source (the model types and architectures it compares). Each is
given to the engine's own function as a config's ``model_type`` (architecture
``LlamaForCausalLM``) and as its ``architectures[0]`` (model type ``llama``); the answer is
the model type it returns and whether that is one of ``MTPModelTypes``. The layer-count
keys are asked one at a time with distinct values (and nested under ``text_config`` and
``mtp_config``): the ``n_predict`` the engine sets names the key it read, or its default
when none is given.

    $ORACLE/vllm-0.32.0/bin/python scripts/record_vllm_mtp_types.py \\
        --out tests/data/engine_oracle/vllm-0.32.0-mtp-types.json

specgate's data (src/specgate/data/models/mtp.json ``vllm``, data/engines/vllm.json
``draft_model_types``) is regenerated from these files; tests/inputs/test_mtp_types.py
pins the data to them.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import io
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, get_args

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: Layer-count keys asked, each with its own value, so n_predict names the one read.
KEYS = {"num_nextn_predict_layers": 2, "mtp_num_hidden_layers": 3, "num_mtp_modules": 4}
NESTED = {"text_config.num_nextn_predict_layers": 5, "text_config.mtp_num_hidden_layers": 6,
          "mtp_config.num_nextn_predict_layers": 7}
#: Every nested part at once (to tell a type that needs one from one that is no MTP).
FULL = {"num_nextn_predict_layers": 1, "text_config.num_nextn_predict_layers": 1,
        "text_config.mtp_num_hidden_layers": 1, "text_config.mtp_num_experts": 1,
        "text_config.mtp_num_experts_per_tok": 1, "mtp_config.num_nextn_predict_layers": 1}


def _config(model_type: str, arch: str, extra: dict[str, Any]) -> Any:
    from transformers import PretrainedConfig

    fields: dict[str, Any] = {}
    text: dict[str, Any] = {}
    mtp: dict[str, Any] = {}
    for key, value in extra.items():
        if key.startswith("text_config."):
            text[key.split(".", 1)[1]] = value
        elif key.startswith("mtp_config."):
            mtp[key.split(".", 1)[1]] = value
        else:
            fields[key] = value
    cfg = PretrainedConfig(architectures=[arch], hc_count=1, layer_types=[], **fields)
    cfg.model_type = model_type
    if text:
        inner = PretrainedConfig(hc_count=1, **text)
        inner.model_type = model_type
        cfg.text_config = inner
    if mtp:
        cfg.mtp_config = mtp
    return cfg


def _ask(override: Any, model_type: str, arch: str, extra: dict[str, Any]) -> dict[str, Any]:
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            out = override(_config(model_type, arch, extra))
    except Exception as exc:  # the engine's refusal or a missing field of the stand-in
        return {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return {"model_type": out.model_type, "n_predict": getattr(out, "n_predict", None)}


def _constants(fn: Any) -> list[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    names = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and node.value.replace("_", "").isalnum()
    }
    return sorted(names)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    import vllm
    from vllm.config import speculative

    override = speculative.SpeculativeConfig.hf_config_override
    mtp_types = set(get_args(speculative.MTPModelTypes))
    records = []
    for candidate in _constants(override):
        for role, (model_type, arch) in (
            ("model_type", (candidate, "LlamaForCausalLM")),
            ("architecture", ("llama", candidate)),
        ):
            plain = _ask(override, model_type, arch, {})
            becomes = plain.get("model_type")
            is_mtp = becomes in mtp_types
            if not is_mtp:
                # the layer count may decide (nemotron_h: only with num_nextn_predict_layers > 0)
                counted = _ask(override, model_type, arch, {"num_nextn_predict_layers": 1})
                if counted.get("model_type") in mtp_types:
                    becomes, is_mtp = counted["model_type"], True
                    plain = {**plain, "needs": "num_nextn_predict_layers > 0"} if (
                        "error" not in plain
                    ) else {**plain, "needs": "a layer count (without one: " + plain["error"] + ")"}
            if not is_mtp:
                # a config with its nested parts (Inkling's mtp_config, a text_config)
                full = _ask(override, model_type, arch, FULL)
                if full.get("model_type") in mtp_types:
                    becomes, is_mtp = full["model_type"], True
                    plain = {**plain, "needs": "its nested config (without: " + str(
                        plain.get("error", plain.get("model_type"))) + ")"}
            if not is_mtp:
                continue
            keys = {}
            for key, value in {**KEYS, **NESTED}.items():
                answer = _ask(override, model_type, arch, {key: value})
                keys[key] = answer.get("n_predict", answer.get("error"))
            record = {
                "name": candidate,
                "as": role,
                "becomes": becomes,
                "n_predict_by_key": keys,
                "n_predict_without_keys": plain.get("n_predict", plain.get("error")),
            }
            if "needs" in plain:
                record["needs"] = plain["needs"]
            records.append(record)
    from transformers import __version__ as transformers_version
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    header = {
        "engine": "vllm",
        "transformers": transformers_version,
        "transformers_model_types": sorted(CONFIG_MAPPING_NAMES),
        "engine_version": str(vllm.__version__),
        "python": sys.version.split()[0],
        "function": "vllm/config/speculative.py SpeculativeConfig.hf_config_override",
        "mtp_model_types": sorted(mtp_types),
        "keys_asked": {**KEYS, **NESTED},
        "note": "n_predict_by_key: the n_predict the engine set when only that key was given "
        "(its value: the key was read; another number: a default or a constant; text: the "
        "engine's error); as: whether the name was given as model_type or architectures[0]",
    }
    args.out.write_text(
        json.dumps({"header": header, "records": records}, indent=1, sort_keys=True) + "\n"
    )
    print(f"vllm {vllm.__version__}: {len(records)} MTP sources")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
