"""``specgate measure`` against a loopback HTTP server replaying real scrapes
(README.md#record-evidence, docs/change-gate.md#baseline). The scrape after the benchmark is vLLM
0.21 Prometheus text from a public repository (tests/data/change/SOURCES.md): num_drafts 240,
accepted 863, so AL = 1 + 863/240 = 4.5958 over 240 steps, D = 960/240 = 4."""

from __future__ import annotations

import http.server
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from specgate.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data" / "change"
AFTER = (DATA / "gemma4-mtp-after.prom").read_text(encoding="utf-8")
STARTUP = (DATA / "gemma4-mtp-startup.prom").read_text(encoding="utf-8")
OK = [sys.executable, "-c", "pass"]

CLAIMS = """\
# Claims of the Gemma fleet (comments stay)
version: 1
deployments:
    -   name: gemma-mtp        # the MTP one
        model:
            name: google/gemma-4-31B-it
        speculation:
            enabled: true
            mechanism: mtp
            draft_length: 4
        evidence:
            accept_length: 3.1      # old
            cache_coherence_eval: true
            metrics: {format: iid-rate, alpha: 0.6}
    -   name: untouched
        speculation: {enabled: false}   # keep me
        workload:
            name: 'quoted'
            temperature: 0.70
"""


class Replay(http.server.BaseHTTPRequestHandler):
    """Answers each GET with the next (status, content type, body, delay) in line."""

    script: ClassVar[list[tuple[int, str, str, float]]] = []

    def do_GET(self) -> None:
        status, kind, body, delay = self.script.pop(0) if self.script else (404, "", "", 0)
        time.sleep(delay)
        data = body.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out first
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[tuple[int, str, str, float]]]]:
    script: ClassVar[list[tuple[int, str, str, float]]] = []
    handler = type("Handler", (Replay,), {"script": script})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/metrics", script
    finally:
        httpd.shutdown()
        httpd.server_close()


PROM = "text/plain; version=0.0.4"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "specgate.yaml").write_text(CLAIMS, encoding="utf-8")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["measure", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_measure_around_a_command_prints_evidence(
    here: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url, script = server
    script += [(200, PROM, STARTUP, 0), (200, PROM, AFTER, 0)]
    code, out, err = run(capsys, "--metrics-url", url, "--today", "2026-01-15", "--", *OK)
    assert code == 0, err
    printed = yaml.safe_load(out)
    assert list(printed) == ["evidence"]
    evidence = printed["evidence"]
    assert evidence["accept_length"] == 4.5958
    assert evidence["provenance"] == {"measured_at": "2026-01-15", "steps": 240}
    # only position 0 of D = 4 is counted: no inline profile (never a partial one)
    assert "metrics" not in evidence


def test_write_keeps_everything_else_byte_identical(
    here: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url, script = server
    script += [(200, PROM, STARTUP, 0), (200, PROM, AFTER, 0)]
    main(["digest", "specgate.yaml"])
    digest = capsys.readouterr().out.split()[1]
    code, _, err = run(
        capsys,
        "--metrics-url",
        url,
        "--write",
        "specgate.yaml",
        "--deployment",
        "gemma-mtp",
        "--concurrency",
        "8",
        "--today",
        "2026-01-15",
        "--",
        *OK,
    )
    assert code == 0, err
    text = (here / "specgate.yaml").read_text(encoding="utf-8")
    before, after = CLAIMS.splitlines(), text.splitlines()
    # the lines up to the evidence and the whole second deployment are unchanged
    assert after[:11] == before[:11]
    assert after[-5:] == before[-5:]
    written = yaml.safe_load(text)["deployments"][0]["evidence"]
    assert list(written) == ["accept_length", "cache_coherence_eval", "provenance"]
    assert written == {
        "accept_length": 4.5958,
        "cache_coherence_eval": True,
        "provenance": {
            "measured_at": "2026-01-15",
            "steps": 240,
            "concurrency": 8,
            "config_digest": digest,
        },
    }
    assert "            cache_coherence_eval: true\n" in text  # indentation measured: 4
    assert main(["check", "specgate.yaml", "--today", "2026-01-15"]) in (0, 1)
    assert "SG001" not in capsys.readouterr().out


def _unchanged(here: Path) -> None:
    assert (here / "specgate.yaml").read_text(encoding="utf-8") == CLAIMS
    assert sorted(p.name for p in here.iterdir()) == [".git", "specgate.yaml"]


WRITE = ("--write", "specgate.yaml", "--deployment", "gemma-mtp", "--timeout", "0.3")


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ([(200, "text/html", "<!doctype html><html><body>login</body></html>", 0)], "HTML"),
        ([(200, PROM, AFTER, 0), (200, PROM, STARTUP, 0)], "counter reset"),
        ([(200, PROM, "# TYPE x counter\nx_total 1\n", 0)] * 2, "--from"),
        ([(503, PROM, "busy", 0)], "HTTP 503"),
        ([(200, PROM, STARTUP, 1)], "cannot scrape"),  # slower than --timeout 0.3
        ([(200, PROM, "vllm:spec_decode_num_drafts_total{{{\n", 0)] * 2, "Prometheus"),
    ],
    ids=["html", "backwards", "no-counters", "status", "timeout", "garbage"],
)
def test_bad_scrapes_exit_2_and_write_nothing(
    here: Path,
    server: Any,
    capsys: pytest.CaptureFixture[str],
    script: list[Any],
    message: str,
) -> None:
    url, queue = server
    queue += script
    code, out, err = run(capsys, "--metrics-url", url, *WRITE, "--", *OK)
    assert code == 2, out + err
    assert message in err and err.count("\n") == 1
    _unchanged(here)


def test_network_error(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--metrics-url", "http://127.0.0.1:9/metrics", *WRITE, "--", *OK)
    assert code == 2 and "cannot scrape" in err
    _unchanged(here)


def test_failing_command(here: Path, server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url, script = server
    script += [(200, PROM, STARTUP, 0), (200, PROM, AFTER, 0)]
    failing = [sys.executable, "-c", "raise SystemExit(3)"]
    code, _, err = run(capsys, "--metrics-url", url, *WRITE, "--", *failing)
    assert code == 2 and "exited with code 3" in err
    _unchanged(here)


def test_saved_scrapes_become_a_metrics_pointer(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = here / "bench"
    bench.mkdir()
    (bench / "before.prom").write_text(STARTUP, encoding="utf-8")
    (bench / "after.prom").write_text(AFTER, encoding="utf-8")
    code, _, err = run(
        capsys,
        "--before",
        "bench/before.prom",
        "--after",
        "bench/after.prom",
        *WRITE,
        "--today",
        "2026-01-15",
    )
    assert code == 0, err
    evidence = yaml.safe_load((here / "specgate.yaml").read_text(encoding="utf-8"))
    metrics = evidence["deployments"][0]["evidence"]["metrics"]
    assert metrics == {
        "format": "vllm-prometheus",
        "path": "bench/after.prom",
        "baseline_path": "bench/before.prom",
    }
    # replaced keys keep their place; the new provenance follows metrics
    order = list(evidence["deployments"][0]["evidence"])
    assert order == ["accept_length", "cache_coherence_eval", "metrics", "provenance"]
    # the written claims file reads its own evidence: AL agrees, no schema problem
    main(["check", "specgate.yaml", "--format", "json", "--today", "2026-01-15"])
    report = yaml.safe_load(capsys.readouterr().out)
    codes = {f["code"] for f in report["files"][0]["deployments"][0]["findings"]}
    assert "SG001" not in codes and "SG301" not in codes


def test_save_dir_writes_both_scrapes(
    here: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url, script = server
    script += [(200, PROM, STARTUP, 0), (200, PROM, AFTER, 0)]
    code, out, _ = run(capsys, "--metrics-url", url, "--save-dir", "bench", "--", *OK)
    assert code == 0
    metrics = yaml.safe_load(out)["evidence"]["metrics"]
    assert metrics["format"] == "vllm-prometheus"
    assert (here / metrics["path"]).read_text(encoding="utf-8") == AFTER
    assert (here / metrics["baseline_path"]).read_text(encoding="utf-8") == STARTUP


def test_from_a_log_file(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = DATA.parents[0] / "real" / "vllm" / "measured" / "vllm-pr24127-ngram-k5-specdecoding.log"
    (here / "server.log").write_text(log.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err = run(capsys, "--from", "server.log", "--metrics-format", "vllm-log")
    assert code == 0, err
    evidence = yaml.safe_load(out)["evidence"]
    # Accepted 262, Drafted 295 at k = 5: 1 + 262/(295/5) = 5.4407
    assert evidence["accept_length"] == 5.4407
    assert evidence["metrics"] == {"format": "vllm-log", "path": "server.log"}


@pytest.mark.parametrize(
    "args",
    [
        ["--metrics-url", "http://127.0.0.1:1/metrics"],  # no command
        ["--before", "a.prom"],  # no --after
        ["--from", "x.log"],  # no --metrics-format
        ["--from", "x.log", "--metrics-format", "histogram"],  # not a file format
        ["--before", "a", "--after", "b", "--write", "specgate.yaml"],  # no --deployment
        ["--metrics-url", "ftp://127.0.0.1/metrics", "--", "true"],
    ],
)
def test_usage_errors(here: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2 and err.startswith("specgate")
    _unchanged(here)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("version: 1\ndeployments:\n  - name: a\n    model:\n      name: x\n", (2, 4, 2)),
        ("version: 1\ndeployments:\n- name: a\n  model:\n    name: x\n", (2, 2, 0)),
        (
            "version: 1\ndeployments:\n    -   name: a\n        model:\n            name: x\n",
            (4, 8, 4),
        ),
    ],
    ids=["indented-sequence", "flush-sequence", "four-spaces"],
)
def test_indentation_is_measured(text: str, expected: tuple[int, int, int]) -> None:
    from specgate.measure.writer import measure_indentation

    assert measure_indentation(text) == expected


def test_write_into_a_flush_sequence_file(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flush = (
        "version: 1\ndeployments:\n- name: gemma-mtp\n  speculation:\n    enabled: true\n"
        "    draft_length: 4\n  evidence:\n    accept_length: 3.1\n- name: other  # keep\n"
        "  speculation: {enabled: false}\n"
    )
    (here / "specgate.yaml").write_text(flush, encoding="utf-8")
    bench = here / "bench"
    bench.mkdir()
    (bench / "b.prom").write_text(STARTUP, encoding="utf-8")
    (bench / "a.prom").write_text(AFTER, encoding="utf-8")
    code, _, err = run(
        capsys,
        "--before",
        "bench/b.prom",
        "--after",
        "bench/a.prom",
        *WRITE,
        "--today",
        "2026-01-15",
    )
    assert code == 0, err
    text = (here / "specgate.yaml").read_text(encoding="utf-8")
    assert text.startswith("version: 1\ndeployments:\n- name: gemma-mtp\n  speculation:\n")
    assert text.endswith("- name: other  # keep\n  speculation: {enabled: false}\n")
    assert "\n  evidence:\n    accept_length: 4.5958\n" in text


def test_labels_pick_one_model_of_a_shared_scrape(
    here: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    shared = (DATA.parent / "integration" / "fixes" / "bench" / "two-models.prom").read_text(
        encoding="utf-8"
    )
    fresh = re.sub(r"\} [0-9.]+$", "} 0.0", shared, flags=re.MULTILINE)
    url, script = server
    # the first run stops at the scrape before the command (F11): one scrape only
    script += [(200, PROM, fresh, 0), (200, PROM, fresh, 0), (200, PROM, shared, 0)]
    code, _, err = run(capsys, "--metrics-url", url, "--", *OK)
    assert code == 2 and "several models" in err and "(before)" in err
    assert "--labels model_name=…" in err and "evidence.metrics" not in err  # F26
    code, out, err = run(capsys, "--metrics-url", url, "--labels", "model_name=a", "--", *OK)
    assert code == 0, err
    # model a, summed over engines 0 and 1: 1 + (150 + 75)/(100 + 50) = 2.5
    assert yaml.safe_load(out)["evidence"]["accept_length"] == 2.5


def _write(path: Path, block: dict[str, Any]) -> None:
    from specgate.measure.writer import write_evidence

    write_evidence(path, "a", block)


NEW = {"accept_length": 4.6, "provenance": {"measured_at": "2026-01-01", "steps": 240}}


def test_comments_after_a_removed_last_key_stay_where_they_were(tmp_path: Path) -> None:
    original = (
        "version: 1\ndeployments:\n  - name: a\n    evidence:\n      accept_length: 3.1\n"
        "      metrics: {format: iid-rate, alpha: 0.6}   # old estimate\n\n"
        "  # the next one is legacy\n  - name: b\n    evidence: {accept_length: 2}\n"
        "# trailing comment\n"
    )
    path = tmp_path / "specgate.yaml"
    path.write_text(original, encoding="utf-8")
    _write(path, NEW)
    assert path.read_text(encoding="utf-8") == original.replace(
        "      accept_length: 3.1\n"
        "      metrics: {format: iid-rate, alpha: 0.6}   # old estimate\n",
        "      accept_length: 4.6\n      provenance:\n        measured_at: '2026-01-01'\n"
        "        steps: 240\n",
    )


def test_each_block_keeps_its_own_indentation(tmp_path: Path) -> None:
    """F8: deployment b indents its mappings by 4, a by 2; the evidence written into
    each follows its own block, and every other line stays byte-identical."""
    from specgate.measure.writer import write_evidence

    original = (
        "version: 1\ndeployments:\n  - name: a\n    evidence:\n      accept_length: 3.1\n"
        "  - name: b\n    evidence:\n        accept_length: 2\n"
    )
    path = tmp_path / "specgate.yaml"
    path.write_text(original, encoding="utf-8")
    _write(path, NEW)
    assert path.read_text(encoding="utf-8") == original.replace(
        "      accept_length: 3.1\n",
        "      accept_length: 4.6\n      provenance:\n        measured_at: '2026-01-01'\n"
        "        steps: 240\n",
    )
    path.write_text(original, encoding="utf-8")
    write_evidence(path, "b", NEW)
    assert path.read_text(encoding="utf-8") == original.replace(
        "        accept_length: 2\n",
        "        accept_length: 4.6\n        provenance:\n            measured_at: '2026-01-01'\n"
        "            steps: 240\n",
    )


def test_crlf_and_bom_are_kept(tmp_path: Path) -> None:
    original = (
        "\ufeffversion: 1\r\ndeployments:\r\n  - name: a\r\n    evidence:\r\n"
        "      accept_length: 3.1\r\n"
    )
    path = tmp_path / "specgate.yaml"
    path.write_bytes(original.encode("utf-8"))
    _write(path, NEW)
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfversion: 1\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert b"      accept_length: 4.6\r\n" in raw
