"""Every number a log reader takes from text is checked whole, at its line (issue 18).

The kind: a reader matched ``[0-9.]+`` and handed it to ``float()``, so
``Mean acceptance length: 2.46.1`` or ``.nan`` was an internal error (exit 3) and
``accept len: 1.1.1`` read as 1.1; a 5,000-digit count reached ``int()`` past Python's
4,300-digit bound. Now each printed number goes through one check
(``inputs.metrics._common.printed_number`` / ``printed_count``): an input error naming
the file and line, never a partial read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics.read import read_acceptance
from specgate.inputs.metrics.spec import MetricsSpec

BAD_NUMBERS = ["2.46.1", ".nan", "nan", "inf", "-2", "1e400", "2.46e", "1_0", "\u0663", "."]

VLLM = (
    "INFO 01-01 SpecDecoding metrics: Mean acceptance length: {}, Accepted: 100 tokens, "
    "Drafted: 300 tokens, Per-position acceptance rate: 0.500, 0.300, 0.200\n"
)
LINES = {
    "vllm-log": "INFO start\n" + VLLM,
    "sglang-log": "INFO start\nDecode batch. #running-req: 1, accept len: {}, gen throughput\n",
    "llamacpp-log": "INFO start\nslot print_timing: id  0 | draft acceptance = 0.50000 "
    "(   50 accepted /   100 generated), mean len = {}\n",
}


def _read(tmp_path: Path, fmt: str, text: str) -> object:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "m.log").write_text(text, "utf-8")
    return read_acceptance(
        MetricsSpec(format=fmt, path="m.log"), base_dir=tmp_path, shown_base=""
    )


@pytest.mark.parametrize("fmt", sorted(LINES))
@pytest.mark.parametrize("number", BAD_NUMBERS)
def test_a_malformed_printed_number_is_an_input_error_at_its_line(
    tmp_path: Path, fmt: str, number: str
) -> None:
    with pytest.raises(InputError) as caught:
        _read(tmp_path, fmt, LINES[fmt].format(number))
    assert caught.value.file == "m.log" and caught.value.line == 2, caught.value


@pytest.mark.parametrize("fmt", sorted(LINES))
def test_the_well_formed_line_reads(tmp_path: Path, fmt: str) -> None:
    # Hand-worked: vLLM 1 + Accepted/(Drafted/k) = 1 + 100/(300/3) = 2.0, which its
    # printed mean 2.00 agrees with; SGLang and llama-server give the printed 2.00.
    acceptance = _read(tmp_path, fmt, LINES[fmt].format("2.00"))
    assert acceptance.accept_length == pytest.approx(2.0)


@pytest.mark.parametrize("digits", [4301, 5000])
def test_counts_past_the_digit_bound_are_refused_at_their_line(tmp_path: Path, digits: int) -> None:
    count = "1" + "0" * (digits - 1)
    line = VLLM.format("2.16").replace("Accepted: 100", f"Accepted: {count}")
    with pytest.raises(InputError, match=r"too long") as caught:
        _read(tmp_path, "vllm-log", "x\n" + line)
    assert caught.value.line == 2


def test_counts_above_two_to_the_53_are_not_exact(tmp_path: Path) -> None:
    line = VLLM.format("2.16").replace("Drafted: 300", f"Drafted: {2**53 + 1}")
    with pytest.raises(InputError, match=r"2\^53") as caught:
        _read(tmp_path, "vllm-log", line)
    assert caught.value.line == 1


def test_a_v0_k_beyond_the_draft_length_bound(tmp_path: Path) -> None:
    line = (
        "Speculative metrics: Draft acceptance rate: 0.5, System efficiency: 0.5, "
        "Number of speculative tokens: 100000000000, Number of accepted tokens: 10, "
        "Number of draft tokens: 20, Number of emitted tokens: 30.\n"
    )
    with pytest.raises(InputError, match=r"above specgate's limit of 1024") as caught:
        _read(tmp_path, "vllm-log", line)
    assert caught.value.line == 1
