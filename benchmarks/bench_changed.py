"""Speed of the reverse lookup behind ``check --changed`` (the pre-commit hook),
as ratios against baselines measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_changed.py [--repeat N]``. A git
repository holds 1,000 claims files in 250 folders; a quarter of them reference a
shared serving config, model config and metrics files. It times whole commands
(median wall time of N runs, after one warm-up):

- ``specgate check --changed <serving config>`` (the hook on a commit that only
  edits a serving config: the lookup plus checking the 250 claims files that
  read it);
- ``specgate check --changed README.md`` (the lookup alone: nothing affected);
- ``specgate check <one claims file>`` (the cost of the smallest check);
- ``specgate check <the 250 affected files named explicitly>`` (the same check
  without the lookup);
- ``specgate check --changed <every file of the repository>`` (``pre-commit run
  --all-files``) against ``specgate check .`` (the folder search over the same
  claims files).

Ratios printed: lookup alone / one-file check, --changed / explicit check of the
same files (what the lookup adds), and all files --changed / folder check.
Target: the lookup alone costs no more than a few one-file checks, so the hook
stays cheap on every commit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SELF_CONTAINED = """\
version: 1
deployments:
  - name: chat-{i}
    model:
      name: meta-llama/Llama-3.1-8B-Instruct
      query_heads: 32
      kv_heads: 8
    speculation:
      enabled: true
      mechanism: eagle3
      draft_length: 3
      draft_depth_ratio: 0.05
    evidence:
      accept_length: 2.6
      cache_coherence_eval: true
    claims:
      speedup: 2.0
"""
REFERRING = """\
version: 1
deployments:
  - name: chat-{i}
    model:
      hf_config: ../../shared/config.json
    speculation:
      enabled: true
      engine: vllm
      engine_config: ../../shared/vllm-serve.yaml
      draft_depth_ratio: 0.05
    evidence:
      cache_coherence_eval: true
      metrics:
        format: vllm-prometheus
        path: ../../shared/after.prom
        baseline_path: ../../shared/before.prom
"""
PROM = (
    "# TYPE vllm:spec_decode_num_drafts_total counter\n"
    'vllm:spec_decode_num_drafts_total{{engine="0"}} {d}\n'
    "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
    'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {a}\n'
)


def _median(command: list[str], repeat: int, cwd: Path) -> float:
    subprocess.run(command, cwd=cwd, capture_output=True, check=False)  # warm-up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def build(root: Path) -> list[str]:
    """The repository; returns the affected claims files (relative paths)."""
    shared = root / "shared"
    shared.mkdir(parents=True)
    (shared / "vllm-serve.yaml").write_text(
        "model: meta-llama/Llama-3.1-8B-Instruct\nspeculative-config:\n  method: eagle3\n"
        "  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n  num_speculative_tokens: 3\n",
        encoding="utf-8",
    )
    (shared / "config.json").write_text(
        json.dumps({"num_attention_heads": 32, "num_key_value_heads": 8}), encoding="utf-8"
    )
    (shared / "before.prom").write_text(PROM.format(d=0, a=0), encoding="utf-8")
    (shared / "after.prom").write_text(PROM.format(d=1000, a=1600), encoding="utf-8")
    (root / "README.md").write_text("bench\n", encoding="utf-8")
    affected = []
    for i in range(1000):
        folder = root / "teams" / f"t{i // 4:03}"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"s{i:04}.specgate.yaml"
        text = (REFERRING if i % 4 == 0 else SELF_CONTAINED).format(i=i)
        (folder / name).write_text(text, encoding="utf-8")
        if i % 4 == 0:
            affected.append(f"teams/t{i // 4:03}/{name}")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return affected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per command (default 7)")
    args = parser.parse_args()
    specgate = str(Path(sys.executable).parent / "specgate")
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "repo"
        affected = build(root)
        serving = "shared/vllm-serve.yaml"
        changed = _median([specgate, "check", "--changed", serving], args.repeat, root)
        lookup = _median([specgate, "check", "--changed", "README.md"], args.repeat, root)
        one = _median([specgate, "check", affected[1]], args.repeat, root)
        explicit = _median([specgate, "check", *affected], args.repeat, root)
        every = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
        every = [p for p in every if not p.startswith(".git/")]
        all_files = _median([specgate, "check", "--changed", *every], args.repeat, root)
        folder = _median([specgate, "check", "."], args.repeat, root)
        done = subprocess.run(
            [specgate, "check", "--changed", serving],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert "250 files" in done.stdout, done.stdout[-400:]
    print("1,000 claims files, 250 of them read the changed serving config")
    print(f"  check --changed <serving config>    {changed:7.3f} s")
    print(f"  check <the 250 files>               {explicit:7.3f} s")
    print(f"  check --changed README.md (lookup)  {lookup:7.3f} s")
    print(f"  check <one file>                    {one:7.3f} s")
    print(f"  check --changed <all {len(every)} files>   {all_files:7.3f} s")
    print(f"  check . (folder search)             {folder:7.3f} s")
    print(f"  lookup alone / one-file check       {lookup / one:7.2f}x")
    print(f"  --changed / explicit check          {changed / explicit:7.2f}x")
    print(f"  all files --changed / check .       {all_files / folder:7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
