"""SG316: a metrics file that parses but holds a value that cannot be used as a
measurement is a finding at the value's line, the deployment is judged without it,
and every other deployment of the run is still checked (issue 24, degrade never stop;
docs/engines.md#metrics-not-read). Lines and columns below are counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.report import FileReport
from specgate.check.run import CheckOptions, check_file
from specgate.core.findings import Finding

PROM = """\
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{{model_name="m"}} {drafts}
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{{model_name="m"}} {accepted}
"""

CLAIMS = """\
version: 1
deployments:
  - name: bad
    speculation: {{enabled: true, mechanism: ngram, draft_length: 4}}
    evidence:
{stated}      metrics: {{format: {fmt}, path: bench/bad.{ext}}}
  - name: good
    speculation: {{enabled: true, mechanism: ngram, draft_length: 4}}
    evidence:
      metrics: {{format: vllm-prometheus, path: bench/good.txt}}
"""


def _check(
    root: Path, monkeypatch: pytest.MonkeyPatch, bad: str, *, fmt: str = "vllm-prometheus",
    ext: str = "txt", stated: str = "",
) -> FileReport:
    (root / ".git").mkdir()
    (root / "bench").mkdir()
    (root / "bench" / f"bad.{ext}").write_text(bad, "utf-8")
    # the other deployment's scrape: AL = 1 + 440 / 400 = 2.1
    (root / "bench" / "good.txt").write_text(PROM.format(drafts=400, accepted=440), "utf-8")
    text = CLAIMS.format(fmt=fmt, ext=ext, stated=stated)
    (root / "specgate.yaml").write_text(text, "utf-8")
    monkeypatch.chdir(root)
    return check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())


def _found(report: FileReport, name: str, code: str) -> list[Finding]:
    (deployment,) = [d for d in report.deployments if d.name == name]
    return [f for f in deployment.findings if f.code == code]


def _place(f: Finding) -> tuple[object, ...]:
    return (f.file, f.line, f.column, f.code, f.severity)


def _other_still_checked(report: FileReport) -> None:
    (good,) = [d for d in report.deployments if d.name == "good"]
    assert good.metrics.accept_length == pytest.approx(2.1)
    assert not [f for f in good.findings if f.code in ("SG316", "SG101")]


def test_a_negative_prometheus_counter_fails_at_its_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A counter counts events: -440 is a value Prometheus text of a counter forbids, the
    # repository's own statement, so SG316 fails at the sample (line 4, column 1)
    report = _check(tmp_path, monkeypatch, PROM.format(drafts=400, accepted=-440))
    assert report.error is None, report.error
    (sg316,) = _found(report, "bad", "SG316")
    assert _place(sg316) == ("bench/bad.txt", 4, 1, "SG316", "fail")
    assert "is -440.0, not a counter value" in sg316.message
    # no AL stated and none measured: SG101 as when no measurement is given, naming SG316
    (sg101,) = _found(report, "bad", "SG101")
    assert sg101.severity == "fail"
    assert sg101.message.endswith("evidence.metrics gives none (SG316 at bench/bad.txt:4)")
    _other_still_checked(report)


def test_records_that_cannot_be_pooled_warn_at_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vLLM's per-request records may give mean_acceptance_length alone: a form specgate
    # does not pool with the counted record before it (warn), at the second record's
    # value: `{"speculative_decoding": {"mean_acceptance_length": ` is 52 characters
    records = (
        '{"speculative_decoding": {"num_spec_steps": 100, "num_accepted_draft_tokens": 150}}\n'
        '{"speculative_decoding": {"mean_acceptance_length": 2.5}}\n'
    )
    report = _check(
        tmp_path, monkeypatch, records, fmt="vllm-per-request", ext="jsonl",
        stated="      accept_length: 2.5\n",
    )
    assert report.error is None, report.error
    (sg316,) = _found(report, "bad", "SG316")
    assert _place(sg316) == ("bench/bad.jsonl", 2, 53, "SG316", "warn")
    assert "cannot be pooled" in sg316.message
    # the stated AL is judged alone: no SG101, and the AL is the claims file's
    assert not _found(report, "bad", "SG101")
    (bad,) = [d for d in report.deployments if d.name == "bad"]
    assert bad.metrics.accept_length == 2.5
    _other_still_checked(report)


def test_a_count_that_is_not_a_number_fails_at_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "12" is a string where vLLM writes an integer: `{"speculative_decoding":
    # {"num_spec_steps": ` is 44 characters, so the value stands at column 45
    record = '{"speculative_decoding": {"num_spec_steps": "12", "num_accepted_draft_tokens": 6}}\n'
    report = _check(tmp_path, monkeypatch, record, fmt="vllm-per-request", ext="jsonl")
    assert report.error is None, report.error
    (sg316,) = _found(report, "bad", "SG316")
    assert _place(sg316) == ("bench/bad.jsonl", 1, 45, "SG316", "fail")
    assert 'num_spec_steps must be a finite number, not "12"' in sg316.message
    _other_still_checked(report)


def test_zero_drafts_warn_at_the_drafts_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a scrape before any speculative step: valid, but no measurement (warn), at the
    # drafts counter's sample (line 2)
    report = _check(tmp_path, monkeypatch, PROM.format(drafts=0, accepted=0))
    assert report.error is None, report.error
    (sg316,) = _found(report, "bad", "SG316")
    assert (sg316.file, sg316.line, sg316.code, sg316.severity) == (
        "bench/bad.txt", 2, "SG316", "warn",
    )
    assert "no speculative step was measured" in sg316.message
    _other_still_checked(report)


def test_text_that_is_not_prometheus_stays_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a file that cannot be parsed at all as its format stops the file, one line naming
    # it and the line the parser refuses (line 2: the sample's label set is not closed)
    bad = '# scrape\nvllm:spec_decode_num_drafts_total{model_name="m" 400\n'
    report = _check(tmp_path, monkeypatch, bad)
    assert report.status == "error"
    assert report.error is not None
    assert report.error.startswith(
        "bench/bad.txt:2:1: not Prometheus text exposition format (line 2: "
    )


@pytest.mark.parametrize(
    ("metrics", "column", "reason"),
    [
        # `      metrics: {format: histogram, histogram: {0: 0}}`: the second `histogram`
        # key stands at column 36
        ("{format: histogram, histogram: {0: 0}}", 36, "histogram holds zero steps"),
        # no D in the block or the deployment: at the metrics key, column 7
        ("{format: iid-rate, alpha: 0.5}", 7, "iid-rate needs draft_length (D)"),
    ],
)
def test_inline_metrics_that_give_no_measurement_fail_in_the_claims_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metrics: str, column: int, reason: str
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "good.txt").write_text(
        PROM.format(drafts=400, accepted=440), "utf-8"
    )
    (tmp_path / "specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: bad\n"
        "    speculation: {enabled: true, mechanism: ngram}\n"
        f"    evidence:\n      metrics: {metrics}\n"
        "  - name: good\n    speculation: {enabled: true, mechanism: ngram, draft_length: 4}\n"
        "    evidence:\n      metrics: {format: vllm-prometheus, path: bench/good.txt}\n",
        "utf-8",
    )
    monkeypatch.chdir(tmp_path)
    report = check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (sg316,) = _found(report, "bad", "SG316")
    assert _place(sg316) == ("specgate.yaml", 6, column, "SG316", "fail")
    assert sg316.message.startswith(reason)
    assert sg316.message.endswith("; no AL is taken from evidence.metrics")
    _other_still_checked(report)
