"""Measurement formats of issue 8 (kind 7) and real-size reading.

Line formats as the engines print them:
- llama.cpp ``tools/server/server.cpp`` (print_timings): ``draft acceptance = %0.5f
  (%5d accepted / %5d generated), mean len = %5.2f`` with mean len = 1 + accepted /
  verify steps; the older ``draft acceptance rate = …`` line without it;
- llama.cpp ``examples/speculative/speculative.cpp``: ``n_draft = …``, ``n_predict =
  …``, ``n_drafted = …``, ``n_accept = …``, ``accept = …%``;
- vLLM ``examples/offline_inference/spec_decode.py``: ``num_drafts: N``,
  ``num_draft_tokens: N``, ``num_accepted_tokens: N``, ``mean acceptance length: X``,
  then ``acceptance at token i: r`` for a list sized to the configured k.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics import stream
from specgate.inputs.metrics.logs import read_llamacpp_log
from specgate.inputs.metrics.stream import read_filtered
from specgate.inputs.metrics.vllm_log import read_vllm_log

# cases/engines/20 (llama-server, timestamps as printed)
MEAN_LEN = (
    "0.50.259.672 I slot print_timing: id  0 | task 8 | prompt eval time =    4700.05 ms /    "
    "14 tokens (  335.72 ms per token,     2.98 tokens per second)\n"
    "0.50.259.672 I slot print_timing: id  0 | task 8 |        eval time =   13064.61 ms /   "
    "128 tokens (  102.07 ms per token,     9.80 tokens per second)\n"
    "0.50.259.914 I slot print_timing: id  0 | task 8 | draft acceptance = 0.46541 (   74 "
    "accepted /   159 generated), mean len =  2.40\n"
)


def test_llamacpp_mean_len_line() -> None:
    result = read_llamacpp_log(MEAN_LEN, "server.log")
    assert result.accept_length == 2.40
    assert not result.estimate
    assert result.acceptance_rate == pytest.approx(74 / 159)
    assert result.spans["accept_length"].line == 3


def test_llamacpp_mean_len_lines_pooled() -> None:
    # Two requests: 74 accepted at mean len 2.40 ⇒ 74 / 1.40 = 52.857 verify steps;
    # 30 accepted at 1.50 ⇒ 60 steps; AL = 1 + 104 / 112.857 = 1.9215 (an estimate:
    # the printed means have 2 decimals).
    text = (
        MEAN_LEN
        + MEAN_LEN.splitlines()[2].replace("74 accepted", "30 accepted").replace("2.40", "1.50")
        + "\n"
    )
    result = read_llamacpp_log(text, "server.log")
    assert result.accept_length == pytest.approx(1 + 104 / (74 / 1.4 + 30 / 0.5))
    assert result.estimate


def test_llamacpp_statistics_lines_win_over_the_request_line() -> None:
    # report-37: the statistics line gives exact counts (1 + 167/87)
    text = (
        "0.06.896.015 I slot print_timing: id  1 | task 0 | draft acceptance = 0.64479 (  167 "
        "accepted /   259 generated), mean acceptance length =  2.92, acceptance rate per "
        "position = (0.805, 0.632, 0.483)\n"
        "0.06.896.057 I statistics     draft-eagle3: #calls(b,g,a) =    1     87     87, "
        "#gen drafts =     87, #acc drafts =    70, #gen tokens =    259, #acc tokens =    167, "
        "#mean acc len = 2.92, #acc rate/pos = (0.805, 0.632, 0.483), dur(b,g,a) = 0.005, "
        "325.555, 0.114 ms\n"
    )
    assert read_llamacpp_log(text, "server.log").accept_length == pytest.approx(1 + 167 / 87)


def test_llama_speculative_summary_is_an_estimate() -> None:
    text = (
        "encoded   14 tokens in    0.204 seconds, speed:   68.535 t/s\n"
        "decoded  128 tokens in    5.511 seconds, speed:   23.225 t/s\n\n"
        "n_draft   = 8\nn_predict = 128\nn_drafted = 96\nn_accept  = 70\naccept    = 72.917%\n"
    )
    result = read_llamacpp_log(text, "speculative.log")
    # no verify-step count: each step emits accepted + 1 ⇒ 128 / (128 − 70) = 2.2069
    assert result.accept_length == pytest.approx(128 / 58)
    assert result.estimate
    assert result.acceptance_rate == pytest.approx(70 / 96)


def test_llama_speculative_estimate_errs_low_never_high() -> None:
    """100 verify steps that each accept 3 drafts emit 400 tokens (AL 4); one more token
    sampled after the prompt makes n_predict 401, and 401 / (401 − 300) = 3.9703 < 4: such a
    token lowers the estimate, so the note may not say it makes the AL high."""
    text = "n_draft   = 4\nn_predict = 401\nn_drafted = 400\nn_accept  = 300\n"
    result = read_llamacpp_log(text, "speculative.log")
    assert result.accept_length == pytest.approx(401 / 101)
    assert result.accept_length < 4
    assert result.note is not None and "slightly low" in result.note


def test_llamacpp_rate_line_with_eval_tokens_is_a_labelled_estimate() -> None:
    text = (
        "slot print_timing: id  0 | task 3 |        eval time =    1200.00 ms /   200 tokens "
        "(    6.00 ms per token,   166.67 tokens per second)\n"
        "slot print_timing: id  0 | task 3 | draft acceptance rate = 0.18732 (   65 accepted /   "
        "347 generated)\n"
    )
    result = read_llamacpp_log(text, "server.log")
    # the fixture's oracle (llama.cpp PR #12603): 200 / (200 − 65) = 1.4815
    assert result.accept_length == pytest.approx(200 / 135)
    assert result.estimate
    assert result.note is not None
    assert "estimate" in result.note


OFFLINE = (
    "--------------------------------------------------\n"
    "total_num_output_tokens: 25600\n"
    "num_drafts: 10240\n"
    "num_draft_tokens: 30720\n"
    "num_accepted_tokens: 15360\n"
    "mean acceptance length: 2.50\n"
    "--------------------------------------------------\n"
    "acceptance at token 0: 0.75\n"
    "acceptance at token 1: 0.50\n"
    "acceptance at token 2: 0.25\n"
    "acceptance at token 3: 0.00\n"
    "acceptance at token 4: 0.00\n"
)


def test_vllm_offline_example_totals() -> None:
    result = read_vllm_log(OFFLINE, "run.txt")
    # 1 + 15360 / 10240 = 2.5, as the script prints. docs/engines.md#what-users-publish: D =
    # num_draft_tokens / num_drafts = 30720 / 10240 = 3 (every draft proposes D tokens); the list's
    # two zeros past D (positions 3 and 4) are padding, dropped.
    assert result.accept_length == 2.5
    assert result.formula == "1 + 15360/10240"
    assert result.draft_length == 3
    assert result.spans["draft_length"].line == 4  # num_draft_tokens
    assert result.note is not None and "2 zero entries past D are padding" in result.note
    assert result.marginal == (0.75, 0.5, 0.25)
    assert result.acceptance_rate == 0.5


def test_vllm_offline_example_through_the_filter(tmp_path: Path) -> None:
    from specgate.inputs.metrics.read import LINE_FILTERS

    (tmp_path / "run.txt").write_text("startup noise\n" * 50 + OFFLINE, encoding="utf-8")
    text = ""
    for needles in LINE_FILTERS["vllm-log"]:
        text = read_filtered(tmp_path / "run.txt", "run.txt", needles)
        if text.strip():
            break
    assert read_vllm_log(text, "run.txt").accept_length == 2.5


# --- the stream --------------------------------------------------------------------------


def test_filter_keeps_line_numbers_across_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "_CHUNK", 7)  # every line crosses a chunk boundary
    lines = ["noise one", "KEEP a", "noise two two two", "KEEP b\r", "", "tail KEEP"]
    (tmp_path / "x.log").write_bytes("\n".join(lines).encode("utf-8"))
    text = read_filtered(tmp_path / "x.log", "x.log", ("KEEP",))
    assert text.split("\n") == ["", "KEEP a", "", "KEEP b", "", "tail KEEP"]


def test_filter_several_needles_on_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.log").write_text("a B c\nno\nB\n", encoding="utf-8")
    assert read_filtered(tmp_path / "x.log", "x.log", ("a", "B")) == "a B c\n\nB\n"


def test_filter_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "MAX_LINE_BYTES", 16)
    monkeypatch.setattr(stream, "_CHUNK", 8)
    (tmp_path / "long.log").write_text("short\n" + "x" * 40 + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="a line longer than") as info:
        read_filtered(tmp_path / "long.log", "long.log", ("KEEP",))
    assert info.value.line == 2
    (tmp_path / "nul.log").write_bytes(b"ok\nKEEP \x00\n")
    with pytest.raises(InputError, match="NUL") as nul:
        read_filtered(tmp_path / "nul.log", "nul.log", ("KEEP",))
    assert nul.value.line == 2
    with pytest.raises(InputError, match="no such file"):
        read_filtered(tmp_path / "missing.log", "missing.log", ("KEEP",))
    with pytest.raises(InputError, match="folder"):
        read_filtered(tmp_path, "dir", ("KEEP",))


V1 = (
    "(APIServer pid=1) INFO 05-13 10:00:{s:02} [metrics.py:120] SpecDecoding metrics: Mean "
    "acceptance length: {m}, Accepted throughput: 160.00 tokens/s, Drafted throughput: "
    "290.00 tokens/s, Accepted: {a} tokens, Drafted: {d} tokens, Per-position acceptance "
    "rate: {r}, Avg Draft acceptance rate: 55.1%\n"
)


@pytest.mark.parametrize(
    "rows",
    [
        # report-10's line, then more of the same kind
        [("2.65", 1652, 3000, "0.750, 0.550, 0.352")],
        [("2.65", 1652, 3000, "0.750, 0.550, 0.352"), ("2.00", 900, 2700, "0.500, 0.300, 0.200")],
        # variable-length drafts: the printed mean disagrees with Drafted/k
        # (a second line of "2.00" beside 10 / 40 at k 3 was impossible: 10 drafts of 4)
        [("2.50", 30, 40, "0.600, 0.500, 0.400"), ("1.50", 10, 40, "0.500, 0.300, 0.200")],
        # ragged Drafted (not a multiple of k), no disagreement beyond rounding
        [("2.00", 1000, 3001, "0.500, 0.300, 0.200")],
    ],
)
def test_whole_text_v1_scan_matches_the_line_reader(
    rows: list[tuple[str, int, int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from specgate.inputs.metrics import vllm_log

    text = "".join(V1.format(s=i, m=m, a=a, d=d, r=r) for i, (m, a, d, r) in enumerate(rows))
    fast = read_vllm_log(text, "v.log")
    monkeypatch.setattr(vllm_log, "_fast_v1", lambda _text, _shown: None)
    slow = read_vllm_log(text, "v.log")
    assert fast == slow


def test_json_metrics_share_the_logs_limit(tmp_path: Path) -> None:
    # JSON records are streamed (json_records), so they have the logs' 256 MiB limit
    # (issue 8: "a separate cap for referenced metrics/logs (at least 256 MiB)").
    from specgate.inputs.metrics.json_records import read_records

    assert stream.METRICS_MAX_BYTES == 256 * 1024 * 1024
    with (tmp_path / "stats.json").open("wb") as handle:
        handle.truncate(stream.METRICS_MAX_BYTES + 1)
    with pytest.raises(InputError, match="larger than 256 MiB"):
        list(read_records(tmp_path / "stats.json", "stats.json"))


def test_sglang_log_counts_every_data_parallel_rank() -> None:
    from specgate.inputs.metrics.logs import read_sglang_log

    text = (
        "[2025-10-20 10:00:00 DP0 TP0] Decode batch. #running-req: 8, #token: 4096, "
        "token usage: 0.05, accept len: 2.10, cuda graph: True, gen throughput (token/s): 900\n"
        "[2025-10-20 10:00:00 DP1 TP8] Decode batch. #running-req: 8, #token: 4100, "
        "token usage: 0.05, accept len: 2.50, cuda graph: True, gen throughput (token/s): 1000\n"
    )
    result = read_sglang_log(text, "sglang.log")
    assert result.accept_length == pytest.approx(2.30)  # (2.10 + 2.50) / 2, both ranks


def test_vllm_offline_totals_of_drafts_that_varied() -> None:
    # n-gram drafts fewer tokens when the lookup is short: 25000 / 10240 = 2.44 tokens a
    # draft, not whole, so D is not stated; the list accepted at 3 positions: D ≥ 3
    text = OFFLINE.replace("num_draft_tokens: 30720", "num_draft_tokens: 25000")
    result = read_vllm_log(text, "run.txt")
    assert result.accept_length == 2.5
    assert result.draft_length is None
    assert result.min_draft_length == 3
    assert result.note is not None and "drafts varied in length" in result.note


def test_vllm_offline_totals_accepting_past_the_quotient() -> None:
    # 20480 / 10240 = 2 tokens a draft, yet position 2 accepted 25 %: the drafts varied
    text = OFFLINE.replace("num_draft_tokens: 30720", "num_draft_tokens: 20480")
    result = read_vllm_log(text, "run.txt")
    assert result.draft_length is None
    assert result.min_draft_length == 3
