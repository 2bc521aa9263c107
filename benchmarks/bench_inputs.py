"""Speed and memory of specgate on real-size referenced metrics, as ratios measured in
one run (issue 8).

Run: ``.venv/bin/python benchmarks/bench_inputs.py [--repeat N]``. The big inputs are
generated into a temporary folder at run time (never committed):

- a 50 MB vLLM server log: per logging interval the engine's throughput line, one
  ``SpecDecoding metrics`` line and the access-log lines of ~16 requests (1 line in
  18 is a spec-decode line);
- a 20 MB Prometheus scrape: 200,000 unrelated series and the spec-decode counters;
- 50 MB of vLLM per-request records (JSON Lines, one OpenAI-style completion response
  per line with its ``metrics.speculative_decoding`` block, as
  ``--per-request-spec-decode-metrics`` adds it).

For each it times ``specgate check`` on a claims file pointing at the big file, minus
``specgate check`` on the same claims pointing at a one-interval file (the fixed cost
of a one-file check), and compares that extra time with Python counting the big
file's lines the plain way (``sum(1 for _ in open(path, encoding="utf-8"))``, text
mode, in process); for the JSON Lines the floor is Python's own ``json.loads`` over
the same lines (in process), the least any JSON reader can cost. Every time is the
fastest of ``--repeat`` runs after a warm-up, the one least disturbed by other work
on a shared machine. It also reports the peak resident memory of the big check (``os.wait4``).

Targets: log ≤ 4× the line count, ≤ 100 MiB peak RSS; scrape ≤ 4× its line count;
JSON Lines ≤ 3× ``json.loads`` of its lines, ≤ 100 MiB peak RSS (the records are
streamed: memory must not grow with the file).
Prints the ratios and ``PASS``/``FAIL`` per target; exit 1 when one fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG_BYTES = 50 * 1000 * 1000
SCRAPE_SERIES = 200_000
JSONL_BYTES = 50 * 1000 * 1000
RATIO_TARGET = 4.0
JSONL_RATIO_TARGET = 3.0
RSS_TARGET_MIB = 100.0

_METRICS_LINE = (
    "(APIServer pid=1) INFO 05-13 10:{m:02}:{s:02} [metrics.py:120] SpecDecoding metrics: "
    "Mean acceptance length: 2.65, Accepted throughput: 160.00 tokens/s, Drafted throughput: "
    "290.00 tokens/s, Accepted: 1652 tokens, Drafted: 3000 tokens, Per-position acceptance "
    "rate: 0.750, 0.550, 0.352, Avg Draft acceptance rate: 55.1%\n"
)
_NOISE = (
    "(APIServer pid=1) INFO 05-13 10:{m:02}:{s:02} [logger.py:43] Received request "
    "chatcmpl-{i:012x}: prompt: '...', params: SamplingParams(n=1, temperature=0.7, "
    "top_p=0.95, max_tokens=512), lora_request: None.\n",
    "(APIServer pid=1) INFO 05-13 10:{m:02}:{s:02} [loggers.py:123] Engine 000: Avg prompt "
    "throughput: 1523.4 tokens/s, Avg generation throughput: 812.7 tokens/s, Running: 16 reqs, "
    "Waiting: 0 reqs, GPU KV cache usage: 41.2%, Prefix cache hit rate: 12.0%\n",
    '(APIServer pid=1) INFO:     10.0.0.{o}:5{i:04} - "POST /v1/chat/completions HTTP/1.1" '
    "200 OK\n",
)

CLAIMS = """version: 1
deployments:
  - name: bench
    model: {{name: bench, query_heads: 64, kv_heads: 8}}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}}
    evidence:
      cache_coherence_eval: true
      metrics: {{format: {fmt}, path: {path}}}
"""


def write_log(path: Path, size: int) -> None:
    """A vLLM V1 server log of about ``size`` bytes."""
    with path.open("w", encoding="utf-8") as out:
        written = 0
        i = 0
        while written < size:
            m, s = (i // 60) % 60, i % 60
            # Every logging interval (10 s by default): the engine's throughput line, the
            # spec-decode line, and the access-log lines of ~16 requests.
            phase = i % 18
            if phase == 0:
                line = _METRICS_LINE.format(m=m, s=s)
            elif phase == 1:
                line = _NOISE[1].format(m=m, s=s, i=i, o=i % 250)
            else:
                line = _NOISE[2 if phase % 4 else 0].format(m=m, s=s, i=i, o=i % 250)
            out.write(line)
            written += len(line)
            i += 1


def write_scrape(path: Path, series: int) -> None:
    """A Prometheus scrape: ``series`` unrelated series, then the spec-decode counters."""
    with path.open("w", encoding="utf-8") as out:
        out.write("# HELP vllm:request_latency_seconds Request latency.\n")
        out.write("# TYPE vllm:request_latency_seconds histogram\n")
        for i in range(series):
            out.write(
                f'vllm:request_latency_seconds_bucket{{engine="{i % 8}",'
                f'le="{(i % 97) / 10:.1f}",model_name="llama-70b",route="r{i}"}} {i * 3}.0\n'
            )
        write_spec_counters(out)


def write_spec_counters(out: object) -> None:
    lines = (
        "# TYPE vllm:spec_decode_num_drafts counter\n"
        'vllm:spec_decode_num_drafts_total{model_name="llama-70b"} 625.0\n'
        "# TYPE vllm:spec_decode_num_accepted_tokens counter\n"
        'vllm:spec_decode_num_accepted_tokens_total{model_name="llama-70b"} 875.0\n'
    )
    out.write(lines)  # type: ignore[attr-defined]


_RECORD = (
    '{{"id": "cmpl-{i:032x}", "object": "text_completion", "created": {t}, '
    '"model": "meta-llama/Llama-3.1-8B-Instruct", "choices": [{{"index": 0, "text": '
    '"{text}", "logprobs": null, "finish_reason": "length", "stop_reason": null}}], '
    '"usage": {{"prompt_tokens": {p}, "total_tokens": {tt}, "completion_tokens": 128}}, '
    '"metrics": {{"speculative_decoding": {{"num_spec_tokens": 3, "num_spec_steps": {n}, '
    '"num_accepted_draft_tokens": {a}, "mean_acceptance_length": {mean:.4f}, '
    '"acceptance_histogram": [{h0}, {h1}, {h2}, {h3}]}}}}}}\n'
)


def write_records(path: Path, size: int) -> None:
    """vLLM per-request records (JSON Lines) of about ``size`` bytes."""
    text = "The quick brown fox jumps over the lazy dog. " * 6
    with path.open("w", encoding="utf-8") as out:
        written = 0
        i = 0
        while written < size:
            h = (10 + i % 7, 12 + i % 5, 9 + i % 3, 20 + i % 11)
            steps = sum(h)
            accepted = h[1] + 2 * h[2] + 3 * h[3]
            line = _RECORD.format(
                i=i,
                t=1_700_000_000 + i,
                text=text,
                p=100 + i % 900,
                tt=228 + i % 900,
                n=steps,
                a=accepted,
                mean=1 + accepted / steps,
                h0=h[0],
                h1=h[1],
                h2=h[2],
                h3=h[3],
            )
            out.write(line)
            written += len(line)
            i += 1


def parse_lines(path: Path) -> float:
    """Seconds Python's ``json.loads`` takes over ``path``'s lines (the JSON floor)."""
    start = time.perf_counter()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - start


def count_lines(path: Path) -> float:
    """Seconds Python takes to count ``path``'s lines (the floor)."""
    start = time.perf_counter()
    with path.open(encoding="utf-8") as handle:
        sum(1 for _ in handle)
    return time.perf_counter() - start


def run_check(specgate: str, claims: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of ``specgate check claims``."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [specgate, "check", claims.name],
        cwd=claims.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"specgate check {claims} exited {process.returncode}")
    return elapsed, usage.ru_maxrss / 1024  # Linux: KiB


def best_check(specgate: str, claims: Path, repeat: int) -> tuple[float, float]:
    """(fastest wall time, largest peak RSS) of ``repeat`` runs after a warm-up: the
    fastest run is the one least disturbed by other work on a shared machine."""
    run_check(specgate, claims)  # warm-up
    runs = [run_check(specgate, claims) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement")
    args = parser.parse_args()
    specgate = str(Path(sys.executable).parent / "specgate")
    failed = False
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        (work / ".git").mkdir()
        write_log(work / "big.log", LOG_BYTES)
        (work / "small.log").write_text(_METRICS_LINE.format(m=0, s=0), encoding="utf-8")
        write_scrape(work / "big.prom", SCRAPE_SERIES)
        with (work / "small.prom").open("w", encoding="utf-8") as out:
            write_spec_counters(out)
        write_records(work / "big.jsonl", JSONL_BYTES)
        write_records(work / "small.jsonl", 1)
        for name, fmt, path in (
            ("big-log", "vllm-log", "big.log"),
            ("small-log", "vllm-log", "small.log"),
            ("big-prom", "vllm-prometheus", "big.prom"),
            ("small-prom", "vllm-prometheus", "small.prom"),
            ("big-jsonl", "vllm-per-request", "big.jsonl"),
            ("small-jsonl", "vllm-per-request", "small.jsonl"),
        ):
            (work / f"{name}.specgate.yaml").write_text(
                CLAIMS.format(fmt=fmt, path=path), encoding="utf-8"
            )
        for label, big, small, data in (
            ("50 MB vLLM log", "big-log", "small-log", "big.log"),
            ("20 MB scrape, 200k series", "big-prom", "small-prom", "big.prom"),
            ("50 MB vLLM per-request JSONL", "big-jsonl", "small-jsonl", "big.jsonl"),
        ):
            size = (work / data).stat().st_size / 1e6
            records = data == "big.jsonl"
            floor_of = parse_lines if records else count_lines
            floor = min(floor_of(work / data) for _ in range(args.repeat))
            target = JSONL_RATIO_TARGET if records else RATIO_TARGET
            memory = data in ("big.log", "big.jsonl")
            big_time, rss = best_check(specgate, work / f"{big}.specgate.yaml", args.repeat)
            small_time, _ = best_check(specgate, work / f"{small}.specgate.yaml", args.repeat)
            extra = max(0.0, big_time - small_time)
            ratio = extra / floor
            ok = ratio <= target
            print(
                f"{label} ({size:.1f} MB): extra {extra * 1000:.0f} ms over a one-file check "
                f"({small_time * 1000:.0f} ms), {'json.loads' if records else 'line count'} "
                f"{floor * 1000:.0f} ms -> "
                f"{ratio:.2f}x (target <= {target:g}x) {'PASS' if ok else 'FAIL'}; "
                f"peak RSS {rss:.0f} MiB"
                + (
                    f" (target <= {RSS_TARGET_MIB:g} MiB) "
                    f"{'PASS' if rss <= RSS_TARGET_MIB else 'FAIL'}"
                    if memory
                    else ""
                )
            )
            failed = failed or not ok or (memory and rss > RSS_TARGET_MIB)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
