#!/usr/bin/env python3
"""Record the engines' own answers for a corpus generated from specgate's knowledge data.

docs/engines.md#the-engine-as-oracle / issue 16, "the engine as oracle". Runs INSIDE an engine's
environment (scripts/build_oracle_env.sh), never in specgate's, and imports nothing of specgate: the
knowledge data is read as JSON from the path given.

    $ORACLE/vllm-0.32.0/bin/python scripts/record_engine_oracle.py vllm \
        --knowledge src/specgate/data/engines/vllm.json \
        --out tests/data/engine_oracle/vllm-0.32.0.json
    $ORACLE/sglang-0.5.23/bin/python scripts/record_engine_oracle.py sglang \
        --knowledge src/specgate/data/engines/sglang.json \
        --out tests/data/engine_oracle/sglang-0.5.23.json
    $ORACLE/vllm-0.32.0/bin/python scripts/record_engine_oracle.py transformers \
        --knowledge src/specgate/data/engines/transformers.json \
        --out tests/data/engine_oracle/transformers-5.19.0.json

The tiny models are made once under --models (default: ``models`` beside the engine's
environment, $ORACLE/models). Records name
them as ``$MODELS/<key>``. Output: tests/data/engine_oracle/README.md describes the schema.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_oracle.common import host, substituted, write_records
from engine_oracle.models import ensure_models, model_info

SCHEMA = 1


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # engines print sets in their messages: a fixed hash seed keeps their order stable
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("engine", choices=("vllm", "sglang", "transformers"))
    ap.add_argument(
        "--knowledge", type=Path, required=True, help="specgate's data/engines/<engine>.json"
    )
    ap.add_argument("--out", type=Path, required=True, help="the records file to write")
    ap.add_argument(
        "--models", type=Path, default=Path(sys.prefix).parent / "models", help="tiny models' folder"
    )
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument(
        "--limit", type=int, default=None, help="record only the first N cases (trial runs)"
    )
    args = ap.parse_args()

    knowledge_bytes = args.knowledge.read_bytes()
    knowledge = json.loads(knowledge_bytes)
    t0 = time.perf_counter()
    models = ensure_models(args.models)
    if args.engine == "vllm":
        from engine_oracle import vllm_corpus, vllm_run

        cases = vllm_corpus.generate(knowledge, seed=args.seed)
        runner = vllm_run.Recorder(knowledge, args.models)
        version, extra = vllm_run.VERSION, vllm_run.header(runner.cache_root, args.models.parent)
    elif args.engine == "sglang":
        from engine_oracle import sglang_corpus, sglang_run

        cases = sglang_corpus.generate(knowledge, seed=args.seed)
        runner = sglang_run.Recorder(knowledge, args.models)
        version, extra = sglang_run.VERSION, sglang_run.header()
    else:
        from engine_oracle import transformers_run

        cases = transformers_run.generate(knowledge)
        runner = transformers_run.Recorder(args.models)
        version, extra = transformers_run.VERSION, transformers_run.header()
    t_import = time.perf_counter() - t0
    if args.limit is not None:
        cases = cases[: args.limit]
    records = []
    t1 = time.perf_counter()
    for i, case in enumerate(cases, 1):
        records.append(runner.run(case))
        if i % 50 == 0:
            print(
                f"{i}/{len(cases)} cases, {time.perf_counter() - t1:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    t_run = time.perf_counter() - t1
    import torch

    header = {
        "schema": SCHEMA,
        "engine": args.engine,
        "engine_version": version,
        "torch": torch.__version__,
        "recorded_on": datetime.date.today().isoformat(),
        "host": host(),
        "seed": args.seed,
        "cases": len(records),
        "knowledge": {
            "path": args.knowledge.name,
            "sha256": hashlib.sha256(knowledge_bytes).hexdigest(),
        },
        "models": model_info(models),
        **extra,
    }
    said = substituted()  # what the oracle environment supplies (build_oracle_env.sh)
    if said:
        header["substituted"] = said
    write_records(args.out, header, records)
    statuses: dict[str, int] = {}
    for r in records:
        key = r["answer"]["status"]
        statuses[key] = statuses.get(key, 0) + 1
    print(
        f"{args.engine} {version}: {len(records)} cases {statuses}; startup {t_import:.1f} s, "
        f"recording {t_run:.1f} s → {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
