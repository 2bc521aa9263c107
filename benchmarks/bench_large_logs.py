"""A vLLM log of any size in bounded memory (issue 25), as ratios against a Python
line count of the same file measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_large_logs.py [--mib 1024]``. Writes a vLLM V1
serving log of about ``--mib`` MiB in the shape a busy server prints: every 10 s an
engine throughput line, a ``SpecDecoding metrics`` line (k = 4), and request lines
(``Received request``, an access-log line, ``Finished request``) in between. Then, each
in a fresh interpreter (peak resident memory from ``ru_maxrss``):

- the baseline: ``sum(1 for _ in open(path, "rb"))``, a Python line count;
- specgate: :func:`specgate.inputs.metrics.vllm_stream.stream_vllm_v1` on the file (the
  path ``check`` and ``measure`` take for a standard V1 log).

Printed: both times, specgate / line count (target ≤ 1.5), both peak memories
(target: specgate ≤ 100 MiB) and the AL read (worked out from the generator: every
SpecDecoding line says Accepted 300 of Drafted 400 at k 4, so AL = 1 + 300/100 = 4).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SPEC = (
    "(APIServer pid=7) INFO 06-30 18:16:{s:02d} [metrics.py:120] SpecDecoding metrics: "
    "Mean acceptance length: 4.00, Accepted throughput: 30.00 tokens/s, Drafted throughput: "
    "40.00 tokens/s, Accepted: 300 tokens, Drafted: 400 tokens, Per-position acceptance "
    "rate: 0.900, 0.800, 0.700, 0.600, Avg Draft acceptance rate: 75.0%\n"
)
ENGINE = (
    "(APIServer pid=7) INFO 06-30 18:16:{s:02d} [loggers.py:123] Engine 000: Avg prompt "
    "throughput: 812.4 tokens/s, Avg generation throughput: 301.2 tokens/s, Running: 31 reqs, "
    "Waiting: 0 reqs, GPU KV cache usage: 41.2%, Prefix cache hit rate: 12.0%\n"
)
REQUEST = (
    "(APIServer pid=7) INFO 06-30 18:16:{s:02d} [logger.py:41] Received request "
    "cmpl-{i:012x}-0: prompt: '', params: SamplingParams(n=1, temperature=0.7, "
    "max_tokens=256), prompt_token_ids: None, lora_request: None.\n"
    '(APIServer pid=7) INFO:     10.0.0.{h}:5{i:04d} - "POST /v1/completions HTTP/1.1" 200 OK\n'
    "(APIServer pid=7) INFO 06-30 18:16:{s:02d} [async_llm.py:270] Finished request "
    "cmpl-{i:012x}-0.\n"
)

COUNT = "import sys; n = sum(1 for _ in open(sys.argv[1], 'rb')); print(n)"
SPECGATE = (
    "import sys; from pathlib import Path; "
    "from specgate.inputs.metrics.vllm_stream import stream_vllm_v1; "
    "a = stream_vllm_v1(Path(sys.argv[1]), 'vllm.log'); print(a.accept_length)"
)
RUN = (
    "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
    "out = subprocess.run([sys.executable, '-c', sys.argv[1], sys.argv[2]], "
    "capture_output=True, text=True, check=True).stdout.strip(); "
    "print(json.dumps([time.perf_counter() - t, "
    "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, out]))"
)


def write_log(path: Path, mib: int) -> None:
    block_parts = []
    for s in range(10):
        block_parts.append(ENGINE.format(s=s))
        block_parts.append(SPEC.format(s=s))
        block_parts.extend(REQUEST.format(s=s, i=s * 40 + r, h=r % 250) for r in range(40))
    block = "".join(block_parts).encode("utf-8")
    with path.open("wb") as out:
        for _ in range(mib * 1024 * 1024 // len(block) + 1):
            out.write(block)


def measure(code: str, path: Path) -> tuple[float, float, str]:
    """(seconds, peak MiB, output) of ``code`` run on ``path`` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, code, str(path)], capture_output=True, text=True, check=True
    )
    seconds, mib, out = json.loads(done.stdout)
    return seconds, mib, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vllm.log"
        write_log(path, args.mib)
        size = path.stat().st_size / 1024 / 1024
        measure(COUNT, path)  # warm the page cache
        count_s, count_mib, lines = measure(COUNT, path)
        ours_s, ours_mib, al = measure(SPECGATE, path)
    print(f"log: {size:,.0f} MiB, {int(lines):,} lines")
    print(f"python line count: {count_s:6.2f} s  peak {count_mib:6.1f} MiB")
    print(f"specgate (stream): {ours_s:6.2f} s  peak {ours_mib:6.1f} MiB  AL {al}")
    print(f"ratio specgate / line count: {ours_s / count_s:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
