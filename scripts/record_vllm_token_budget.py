#!/usr/bin/env python3
"""Ask vLLM itself where its token-budget refusal lies (issue 27, deliverable 3).

Runs INSIDE a vLLM environment (scripts/build_oracle_env.sh), never in specgate's, and imports
nothing of specgate. For each drafting method it asks ``EngineArgs(...).create_engine_config()``
(scripts/engine_oracle/vllm_run.py, the oracle's own recorder) at ``max_num_batched_tokens``
one below, at and one above the method's per-request slots, so the records straddle the
boundary of ``VllmConfig._set_max_num_scheduled_tokens`` (vllm/config/vllm.py): at 0.33.0
``max_num_batched_tokens <= num_lookahead_tokens`` is refused, num_lookahead_tokens being
K + 1 for dflash, K for eagle / eagle3 / mtp / draft_model, 0 for the rest (ngram).

    $ORACLE/vllm-0.33.0/bin/python scripts/record_vllm_token_budget.py \\
        --out tests/data/engine_oracle/vllm-0.33.0-token-budget.json --models $ORACLE/models

Replayed by tests/integration/test_engine_token_budget.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_oracle.common import host, write_records
from engine_oracle.models import ensure_models

#: (label, target, speculative_config, the budgets asked: each with max_num_seqs 1, which
#: SchedulerConfig requires to be at most max_num_batched_tokens)
_BLOCKS: tuple[tuple[str, str, dict[str, Any], tuple[int, ...]], ...] = (
    ("eagle3", "llama-v512",
     {"method": "eagle3", "model": "$MODELS/EAGLE3-llama-v512", "num_speculative_tokens": 7},
     (6, 7, 8)),
    ("eagle3-parallel", "llama-v512",
     {"method": "eagle3", "model": "$MODELS/EAGLE3-llama-v512", "num_speculative_tokens": 7,
      "parallel_drafting": True},
     (6, 7, 8)),
    ("eagle", "llama-v512",
     {"method": "eagle", "model": "$MODELS/EAGLE-llama-v512", "num_speculative_tokens": 4},
     (4, 5)),
    ("draft-model", "llama-v512",
     {"method": "draft_model", "model": "$MODELS/llama-draft-v512",
      "num_speculative_tokens": 4},
     (3, 4, 5)),
    ("dflash", "llama-v512",
     {"method": "dflash", "model": "$MODELS/dflash-qwen3-v512", "num_speculative_tokens": 7},
     (7, 8, 9)),
    ("mtp", "deepseek-v3-mtp1", {"method": "mtp", "num_speculative_tokens": 3}, (3, 4)),
    ("ngram", "llama-v512",
     {"method": "ngram", "num_speculative_tokens": 7, "prompt_lookup_max": 4},
     (1, 2)),
)  # fmt: skip


def cases() -> list[dict[str, Any]]:
    """The boundary cases, ids ``budget-LABEL-N`` (N: max_num_batched_tokens)."""
    out = []
    for label, target, block, budgets in _BLOCKS:
        for n in budgets:
            out.append({
                "id": f"budget-{label}-{n:02d}", "group": "token-budget", "via": "engine_args",
                "target": target, "speculative_config": block,
                "engine_args": {"max_num_batched_tokens": n, "max_num_seqs": 1},
            })  # fmt: skip
    return out


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--models", type=Path, default=Path(sys.prefix).parent / "models")
    args = ap.parse_args()
    ensure_models(args.models)
    from engine_oracle import vllm_run

    knowledge = Path(__file__).resolve().parent.parent / "src/specgate/data/engines/vllm.json"
    runner = vllm_run.Recorder(json.loads(knowledge.read_text("utf-8")), args.models)
    records = [runner.run(case) for case in cases()]
    import torch

    header = {
        "schema": 1, "engine": "vllm", "engine_version": vllm_run.VERSION,
        "torch": torch.__version__, "host": host(), "cases": len(records),
        "recorded_by": "scripts/record_vllm_token_budget.py",
    }  # fmt: skip
    write_records(args.out, header, records)
    print(json.dumps({r["id"]: r["answer"]["status"] for r in records}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
