"""vLLM V1 logs of any size read with running sums (issue 25): the streamed reading
equals the per-line reader's on every generated log it answers, and a real-size log
past the 32 MiB the filter keeps is read, not refused.

The oracle is the reader the stream replaces (:func:`read_filtered` then
:func:`read_vllm_log`): the same AL, formula, marginal rates, note and span, or the
same input error, or the stream declines (None) and the per-line reader answers.
Windows are made small so that every log spans many of them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics import vllm_stream
from specgate.inputs.metrics.read import LINE_FILTERS
from specgate.inputs.metrics.stream import MAX_KEPT_BYTES, read_filtered
from specgate.inputs.metrics.vllm_log import read_vllm_log
from specgate.inputs.metrics.vllm_stream import stream_vllm_v1

NOISE = [
    "(APIServer pid=1) INFO 06-30 18:16:28 [loggers.py:123] Engine 000: Avg prompt "
    "throughput: 1.0 tokens/s, Avg generation throughput: 31.0 tokens/s, Running: 1 reqs",
    'INFO:     127.0.0.1:51234 - "POST /v1/completions HTTP/1.1" 200 OK',
    "(APIServer pid=1) INFO 06-30 18:16:29 [logger.py:41] Received request cmpl-1.",
    "",
]


def _line(rng: random.Random, k: int, means: bool, variable: bool) -> str:
    drafts = rng.randint(1, 400)
    drafted = drafts * k - (rng.randint(0, k - 1) if rng.random() < 0.1 else 0)
    rates = sorted((round(rng.random(), 3) for _ in range(k)), reverse=True)
    accepted = min(drafted, round(sum(rates) * drafts))
    mean = 1 + accepted / drafts
    if variable:
        mean = min(1 + accepted * k / drafted, mean * 1.3)
    text = (
        "(APIServer pid=76938) INFO 06-30 18:16:28 [metrics.py:120] SpecDecoding metrics: "
        + (f"Mean acceptance length: {mean:.2f}, " if means else "")
        + "Accepted throughput: 0.69 tokens/s, Drafted throughput: 30.29 tokens/s, "
        + f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
        + "Per-position acceptance rate: "
        + ", ".join(f"{r:.3f}" for r in rates)
        + ", Avg Draft acceptance rate: 2.3%"
    )
    return text


def _log(rng: random.Random) -> str:
    k = rng.randint(1, 6)
    means = rng.random() < 0.7
    variable = means and rng.random() < 0.2
    lines = []
    for _ in range(rng.randint(1, 120)):
        lines += [rng.choice(NOISE) for _ in range(rng.randint(0, 5))]
        lines.append(_line(rng, k, means, variable and rng.random() < 0.5))
    if rng.random() < 0.1:  # a line of another k: the per-line reader's to judge
        lines.append(_line(rng, k + 1, means, False))
    if rng.random() < 0.05:
        lines.append("Speculative metrics: Number of speculative tokens: 3")
    return "\n".join(lines) + rng.choice(["\n", ""])


def _per_line(path: Path) -> object:
    (needles, *_) = LINE_FILTERS["vllm-log"]
    try:
        return read_vllm_log(read_filtered(path, "vllm.log", needles), "vllm.log")
    except InputError as exc:
        return str(exc)


def test_streamed_reading_equals_the_per_line_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vllm_stream, "WINDOW", 4096)
    rng = random.Random(25)
    answered = 0
    path = tmp_path / "vllm.log"
    for _ in range(300):
        path.write_text(_log(rng), "utf-8")
        try:
            streamed: object = stream_vllm_v1(path, "vllm.log")
        except InputError as exc:
            streamed = str(exc)
        if streamed is None:
            continue
        answered += 1
        assert streamed == _per_line(path), path.read_text("utf-8")[:2000]
    assert answered > 150  # most logs are standard V1 logs


def test_a_log_past_the_kept_bound_is_read(tmp_path: Path) -> None:
    # 40 MiB of SpecDecoding lines (issue 25: a real 40 MiB vLLM log was refused):
    # each line Accepted 300 of Drafted 400 at k 4 (100 drafts), so AL = 1 + 300/100 = 4
    line = (
        "INFO 06-30 18:16:28 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: "
        "4.00, Accepted throughput: 30.00 tokens/s, Drafted throughput: 40.00 tokens/s, "
        "Accepted: 300 tokens, Drafted: 400 tokens, Per-position acceptance rate: 0.900, "
        "0.800, 0.700, 0.600, Avg Draft acceptance rate: 75.0%\n"
    )
    count = 40 * 1024 * 1024 // len(line) + 1
    path = tmp_path / "vllm.log"
    with path.open("w", encoding="utf-8") as out:
        for _ in range(count // 1000):
            out.write(line * 1000)
        out.write(line * (count % 1000))
    assert path.stat().st_size > MAX_KEPT_BYTES
    acceptance = stream_vllm_v1(path, "vllm.log")
    assert acceptance is not None
    assert acceptance.accept_length == 4.0
    assert acceptance.draft_length == 4
    assert acceptance.marginal == pytest.approx((0.9, 0.8, 0.7, 0.6))
    assert acceptance.spans["accept_length"].line == 1
