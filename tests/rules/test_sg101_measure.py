"""SG101 (AL missing) stays the seed's fail; with only a throughput speedup recorded its
next action says how to get AL from the same benchmark (issue 26, deliverable 5)."""

from __future__ import annotations

import io
import json

import pytest

from specgate.cli.main import main


def _doctor(*flags: str) -> dict[str, object]:
    out = io.StringIO()
    assert main(["doctor", "--speculative-decoding", *flags, "--json"], stdout=out) == 1
    report: dict[str, object] = json.loads(out.getvalue())
    return report


def test_speedup_only_names_specgate_measure() -> None:
    report = _doctor("--measured-speedup=1.8")
    codes = [f["code"] for f in report["findings"]]  # type: ignore[attr-defined]
    assert "SG101" in codes
    first = report["next_actions"][0]  # type: ignore[index]
    # the seed's severity stays; the action runs `specgate measure` around the benchmark
    assert "`specgate measure --metrics-url http://HOST:PORT/metrics -- BENCHMARK`" in first
    assert "--accept-length" in first and "does not give AL" in first


def test_without_a_speedup_the_action_is_unchanged() -> None:
    first = _doctor()["next_actions"][0]  # type: ignore[index]
    assert first.startswith("Measure AL on the served workload")
    assert "specgate measure" not in first


@pytest.mark.parametrize(
    ("engine", "source"),
    [
        ("sglang", "--from SERVER_LOG --metrics-format sglang-log"),
        ("trtllm", "--from ITERATION_STATS --metrics-format trtllm-iteration-stats"),
        ("llamacpp", "--from SERVER_LOG --metrics-format llamacpp-log"),
        ("vllm", "--metrics-url http://HOST:PORT/metrics"),
    ],
)
def test_each_engine_names_a_format_measure_reads(engine: str, source: str) -> None:
    from specgate.cli.parser import build_parser
    from specgate.rules.accept_length import _from_speedup_only

    action = _from_speedup_only(engine)
    assert f"`specgate measure {source} -- BENCHMARK`" in action
    # every format named is one `specgate measure --metrics-format` accepts
    if "--metrics-format" in source:
        parser = build_parser("measure")
        words = ["measure", "--from", "f", "--metrics-format", source.rsplit(maxsplit=1)[-1]]
        assert parser.parse_args(words).metrics_format == source.rsplit(maxsplit=1)[-1]


def test_transformers_gets_its_counting_recipe() -> None:
    from specgate.rules.accept_length import _from_speedup_only

    action = _from_speedup_only("transformers")
    assert "new tokens / target calls" in action and "specgate measure" not in action
