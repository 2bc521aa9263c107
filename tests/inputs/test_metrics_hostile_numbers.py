"""Every metrics reader's numeric failure names the metrics file and its line
(hostile review r4, defect 11).

A Prometheus counter ``vllm:spec_decode_num_drafts_total 4e-324`` made the ratio of
draft tokens to drafts infinite; ``int()`` of it raised OverflowError, which surfaced
as "a referenced file holds a number out of range" at the claims file, naming neither
``m.prom`` nor its line. A counter counts events (vLLM increments them by whole
numbers: ``vllm/v1/spec_decode/metrics.py``), so a fraction is refused at its line; and
each hostile spelling in each numeric field of the streamed formats is either read or
an input error at the metrics file, never another exception.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics.read import read_acceptance
from specgate.inputs.metrics.spec import MetricsSpec

HOSTILE = ["1e400", "1e309", "-1e400", "1e-400", "4e-324", "1.7976931348623157e308", "0.5"]

PROM = (
    'vllm:spec_decode_num_drafts_total{{model_name="m"}} {drafts}\n'
    'vllm:spec_decode_num_draft_tokens_total{{model_name="m"}} {tokens}\n'
    'vllm:spec_decode_num_accepted_tokens_total{{model_name="m"}} {accepted}\n'
    'vllm:spec_decode_num_accepted_tokens_per_pos_total{{model_name="m",position="0"}} {pos0}\n'
    'vllm:spec_decode_num_accepted_tokens_per_pos_total{{model_name="m",position="1"}} {pos1}\n'
)
GOOD = {"drafts": "240.0", "tokens": "480.0", "accepted": "300.0", "pos0": "200.0", "pos1": "100.0"}
LINE = {"drafts": 1, "tokens": 2, "accepted": 3, "pos0": 4, "pos1": 5}


def _read(tmp_path: Path, fmt: str, text: str, name: str = "m.prom") -> object:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / name).write_text(text, "utf-8")
    return read_acceptance(MetricsSpec(format=fmt, path=name), base_dir=tmp_path, shown_base="")


def _error(tmp_path: Path, fmt: str, text: str, name: str = "m.prom") -> InputError | None:
    """The input error reading ``text`` gives, or None when it reads; any other
    exception fails the test."""
    try:
        _read(tmp_path, fmt, text, name)
    except InputError as exc:
        return exc
    return None


def test_the_good_scrape_reads(tmp_path: Path) -> None:
    # by hand: AL = 1 + accepted/drafts = 1 + 300/240 = 2.25; D = 480/240 = 2
    acceptance = _read(tmp_path, "vllm-prometheus", PROM.format(**GOOD))
    assert acceptance.accept_length == 2.25  # type: ignore[attr-defined]
    assert acceptance.draft_length == 2  # type: ignore[attr-defined]


@pytest.mark.parametrize("field", sorted(GOOD))
@pytest.mark.parametrize("number", ["4e-324", "1e-320", "0.5", "239.5"])
def test_a_fractional_counter_is_refused_at_its_line(
    tmp_path: Path, field: str, number: str
) -> None:
    text = PROM.format(**{**GOOD, field: number})
    with pytest.raises(InputError, match="a counter of events is a whole number") as caught:
        _read(tmp_path, "vllm-prometheus", text)
    assert (caught.value.file, caught.value.line) == ("m.prom", LINE[field])


@pytest.mark.parametrize("field", sorted(GOOD))
@pytest.mark.parametrize("number", HOSTILE)
def test_hostile_prometheus_numbers_name_the_scrape(
    tmp_path: Path, field: str, number: str
) -> None:
    text = PROM.format(**{**GOOD, field: number})
    exc = _error(tmp_path, "vllm-prometheus", text)
    if exc is None:  # 1e-400 is the float 0.0 (Python and prometheus_client read it so)
        assert number == "1e-400"
        assert field != "drafts"
        return
    assert exc.file == "m.prom"
    # 1e-400 draft tokens read as 0, below the accepted ones: refused at accepted's line
    crossed = "impossible counters" in exc.reason and exc.line == LINE["accepted"]
    assert exc.line == LINE[field] or crossed, exc


PER_REQUEST = {"num_spec_steps": 10, "num_accepted_draft_tokens": 4}
ITERATION = {"numAcceptedTokens": 30, "numRequestsWithDraftTokens": 20}


@pytest.mark.parametrize("field", sorted(PER_REQUEST))
@pytest.mark.parametrize("number", HOSTILE)
def test_hostile_numbers_in_per_request_records(tmp_path: Path, field: str, number: str) -> None:
    good = json.dumps({"speculative_decoding": PER_REQUEST})
    bad = good.replace(f'"{field}": {PER_REQUEST[field]}', f'"{field}": {number}')
    exc = _error(tmp_path, "vllm-per-request", f"{good}\n{bad}\n", "r.jsonl")
    assert exc is None or (exc.file, exc.line) == ("r.jsonl", 2), exc


@pytest.mark.parametrize("field", sorted(ITERATION))
@pytest.mark.parametrize("number", HOSTILE)
def test_hostile_numbers_in_iteration_stats(tmp_path: Path, field: str, number: str) -> None:
    good = json.dumps({"specDecodingStats": ITERATION})
    bad = good.replace(f'"{field}": {ITERATION[field]}', f'"{field}": {number}')
    exc = _error(tmp_path, "trtllm-iteration-stats", f"[\n{good},\n{bad}\n]\n", "s.json")
    assert exc is None or (exc.file, exc.line) == ("s.json", 3), exc
