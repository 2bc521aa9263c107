#!/usr/bin/env python3
"""Ask SGLang which target architectures its draft worker turns into an MTP (NextN)
draft of the target's own checkpoint (``ModelConfig._config_draft_model``,
sglang/srt/configs/model_config.py), and which of those refuse a layer count other than
one (the DeepSeek-V3 NextN weight loader, deepseek_common/deepseek_weight_loader.py
``_initialize_nextn_conf``).

Runs INSIDE the SGLang environment (scripts/build_oracle_env.sh), never in specgate's,
and imports nothing of specgate. Candidates are every string constant of
``_config_draft_model``'s source and ``MIMO_V2_MODEL_ARCHS``; each is given to the
engine's own method as a config's ``architectures[0]`` (is_draft_model True); the answer
is the architecture the draft worker then builds. Why it matters: with EAGLE or NEXTN
and no --speculative-draft-model-path the draft worker loads the target's checkpoint
(tp_worker.py _init_model_config passes None, ModelConfig.from_server_args falls back to
the model path), so the architecture alone decides whether it drafts with MTP layers.

    $ORACLE/sglang-0.5.23/bin/python scripts/record_sglang_mtp_archs.py \\
        --out tests/data/engine_oracle/sglang-0.5.23-mtp-archs.json
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    from engine_oracle import standin

    standin.install("torchvision")
    import sglang
    from sglang.srt.configs import model_config as mc
    from sglang.srt.models.deepseek_common.deepseek_weight_loader import (
        DeepseekV2WeightLoaderMixin,
    )
    from transformers import PretrainedConfig

    tree = ast.parse(textwrap.dedent(inspect.getsource(mc.ModelConfig._config_draft_model)))
    names = {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value[:1].isupper()
    } | set(mc.MIMO_V2_MODEL_ARCHS)
    records: list[dict[str, Any]] = []
    for name in sorted(names):
        config = PretrainedConfig(architectures=[name], num_hidden_layers=2)
        stub = types.SimpleNamespace(
            is_draft_model=True, hf_config=config, hf_text_config=config,
            speculative_algorithm="EAGLE", is_draft_quantization_explicit=False,
            quantization=None, sliding_window_size=None,
        )
        try:
            mc.ModelConfig._config_draft_model(stub)
            answer: dict[str, Any] = {"draft_architecture": stub.hf_config.architectures[0]}
            forced = getattr(stub.hf_text_config, "num_nextn_predict_layers", None)
            if forced is not None:
                answer["sets_num_nextn_predict_layers"] = forced
        except Exception as exc:
            answer = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        records.append({"architecture": name, **answer})
    loader: list[dict[str, Any]] = []
    for layers in (None, 0, 1, 2):
        config = PretrainedConfig(num_hidden_layers=2)
        if layers is not None:
            config.num_nextn_predict_layers = layers
        try:
            DeepseekV2WeightLoaderMixin._initialize_nextn_conf(
                types.SimpleNamespace(config=config), True
            )
            loader.append({"num_nextn_predict_layers": layers, "status": "ok"})
        except (Exception, AssertionError) as exc:
            loader.append({"num_nextn_predict_layers": layers, "status": "refused",
                           "exception": type(exc).__name__, "message": str(exc)})
    out.write_text(json.dumps({
        "engine": "sglang", "engine_version": sglang.__version__,
        "asked": "ModelConfig._config_draft_model(architectures=[NAME], is_draft_model=True)",
        "architectures": records,
        "deepseek_nextn_loader": loader,
    }, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
