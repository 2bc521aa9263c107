"""``specgate measure`` refuses what it cannot vouch for (newuser findings F11, F20,
F21, F22, F25, F26, F31, F7): the scrape before the benchmark is validated before the
benchmark runs; impossible counters, a D other than the deployment's, and a metrics
pointer out of the repository are exit 2 with one line, nothing written."""

from __future__ import annotations

import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from specgate.cli.main import main

PROM = "text/plain; version=0.0.4"


class _Replay(http.server.BaseHTTPRequestHandler):
    bodies: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        data = (self.bodies.pop(0) if self.bodies else "").encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", PROM)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    bodies: list[str] = []
    handler = type("Handler", (_Replay,), {"bodies": bodies})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/metrics", bodies
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["measure", *args])
    out, err = capsys.readouterr()
    return code, out, err


def counters(drafts: float, tokens: float, accepted: float, model: str = "llama") -> str:
    labels = f'{{engine="0",model_name="{model}"}}'
    return (
        f"vllm:spec_decode_num_drafts_total{labels} {drafts}\n"
        f"vllm:spec_decode_num_draft_tokens_total{labels} {tokens}\n"
        f"vllm:spec_decode_num_accepted_tokens_total{labels} {accepted}\n"
    )


def _marker_command(marker: Path) -> list[str]:
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]


@pytest.mark.parametrize(
    ("body", "labels", "message"),
    [
        ("vllm:num_requests_running 0\n", [], "no vLLM spec-decode counters"),
        (counters(0, 0, 0), ["--labels", "model_name=other"], "no vLLM spec-decode series"),
    ],
    ids=["no-counters", "no-matching-labels"],
)
def test_the_scrape_before_is_checked_before_the_benchmark_runs(  # noqa: PLR0917
    repo: Path,
    server: tuple[str, list[str]],
    capsys: pytest.CaptureFixture[str],
    body: str,
    labels: list[str],
    message: str,
) -> None:
    url, bodies = server
    bodies += [body, body]
    marker = repo / "ran.marker"
    code, _, err = run(capsys, "--metrics-url", url, *labels, "--", *_marker_command(marker))
    assert code == 2
    assert message in err and f"{url} (before)" in err and err.count("\n") == 1
    assert not marker.exists()  # the benchmark never ran
    assert bodies == [body]  # one scrape, not two


def test_a_fresh_server_with_zero_counters_is_fine_before(
    repo: Path, server: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, bodies = server
    bodies += [counters(0, 0, 0), counters(100, 300, 150)]
    marker = repo / "ran.marker"
    code, out, err = run(capsys, "--metrics-url", url, "--", *_marker_command(marker))
    assert code == 0, err
    assert marker.exists()
    # 1 + 150/100 = 2.5; D = 300/100 = 3
    assert yaml.safe_load(out)["evidence"]["accept_length"] == 2.5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # 5000 accepted of 3000 proposed over 1000 drafts: AL would be 1 + 5 = 6 > 1 + 3
        (counters(1000, 3000, 5000), "accepted draft tokens (5000) exceed proposed"),
        (counters(1e300, 3e300, 1e300), "above 2^53"),
        (counters(1000, 3000, "1e400"), "not a counter value"),
    ],
    ids=["accepted-above-drafted", "beyond-2^53", "beyond-float"],
)
def test_impossible_counters_are_exit_2(
    repo: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    (repo / "p.prom").write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "--from", "p.prom", "--metrics-format", "vllm-prometheus")
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1
    assert len(err) < 300  # no 300-digit integers


def test_al_above_one_plus_d_from_a_log_is_exit_2(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # V0 line: k = 2, 100 draft tokens = 50 steps, 200 emitted → AL 4 > 1 + 2
    (repo / "v0.log").write_text(
        "INFO Speculative metrics: Draft acceptance rate: 0.500, System efficiency: 0.5, "
        "Number of speculative tokens: 2, Number of accepted tokens: 50, "
        "Number of draft tokens: 100, Number of emitted tokens: 200.\n",
        encoding="utf-8",
    )
    code, _, err = run(capsys, "--from", "v0.log", "--metrics-format", "vllm-log")
    assert code == 2 and "exceeds 1 + D = 3" in err and err.count("\n") == 1


CLAIMS = """\
version: 1
deployments:
  - name: chat
    model: {{name: meta-llama/Llama-3.1-8B-Instruct}}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: {d}}}
    evidence:
      accept_length: 2.0
      cache_coherence_eval: true
"""

NOPERPOS = (
    "INFO 06-06 14:20:34 [metrics.py:86] SpecDecoding metrics: Mean acceptance length: "
    "2.16, Accepted: 150 tokens, Drafted: 387 tokens\n"
    "INFO 06-06 14:20:44 [metrics.py:86] SpecDecoding metrics: Mean acceptance length: "
    "2.46, Accepted: 725 tokens, Drafted: 1488 tokens\n"
)


def test_a_log_without_per_position_rates_is_measured(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F31: k = 3 from vLLM's printed means (see the input test): AL = 1 + 875/625."""
    (repo / "noperpos.log").write_text(NOPERPOS, encoding="utf-8")
    (repo / "c.specgate.yaml").write_text(CLAIMS.format(d=3), encoding="utf-8")
    code, out, err = run(capsys, "--from", "noperpos.log", "--metrics-format", "vllm-log")
    assert code == 0, err
    assert yaml.safe_load(out)["evidence"]["accept_length"] == 2.4
    args = ("--from", "noperpos.log", "--metrics-format", "vllm-log")
    code, _, err = run(capsys, *args, "--write", "c.specgate.yaml", "--deployment", "chat")
    assert code == 0, err
    written = yaml.safe_load((repo / "c.specgate.yaml").read_text(encoding="utf-8"))
    assert written["deployments"][0]["evidence"]["provenance"]["config_digest"].startswith(
        "sha256:"
    )
    # --draft-length contradicting what the data states is a usage error
    code, _, err = run(capsys, *args, "--draft-length", "5")
    assert code == 2 and "states D = 3" in err


def test_draft_length_option_for_lines_without_the_mean(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "bare.log").write_text(
        "INFO SpecDecoding metrics: Accepted: 150 tokens, Drafted: 300 tokens\n", encoding="utf-8"
    )
    args = ("--from", "bare.log", "--metrics-format", "vllm-log")
    code, _, err = run(capsys, *args)
    assert code == 2 and "--draft-length D" in err and err.count("\n") == 1
    code, out, err = run(capsys, *args, "--draft-length", "3")
    # 300/3 = 100 drafts; 1 + 150/100 = 2.5
    assert code == 0, err
    assert yaml.safe_load(out)["evidence"]["accept_length"] == 2.5


def test_a_measured_d_other_than_the_deployments_is_not_stamped(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F22: draft tokens per draft 300/100 = 3, the deployment serves D = 2."""
    text = CLAIMS.format(d=2)
    (repo / "c.specgate.yaml").write_text(text, encoding="utf-8")
    (repo / "before.prom").write_text(counters(0, 0, 0), encoding="utf-8")
    (repo / "after.prom").write_text(counters(100, 300, 150), encoding="utf-8")
    scrapes = ("--before", "before.prom", "--after", "after.prom")
    code, _, err = run(capsys, *scrapes, "--write", "c.specgate.yaml", "--deployment", "chat")
    assert code == 2
    assert "measured at D = 3" in err and "serves D = 2" in err and "nothing written" in err
    assert (repo / "c.specgate.yaml").read_text(encoding="utf-8") == text
    code, out, err = run(capsys, *scrapes, "--claims", "c.specgate.yaml", "--deployment", "chat")
    assert code == 0 and "config_digest left out" in err
    assert "config_digest" not in yaml.safe_load(out)["evidence"]["provenance"]


def test_a_log_whose_implied_d_differs_is_sg309_in_check(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F31: the claims say D = 5, the printed means imply k = 3: SG309."""
    import json

    (repo / "noperpos.log").write_text(NOPERPOS, encoding="utf-8")
    pointer = "\n      metrics: {format: vllm-log, path: noperpos.log}"
    claims = CLAIMS.format(d=5).replace("accept_length: 2.0", "accept_length: 2.4" + pointer)
    (repo / "c.specgate.yaml").write_text(claims, encoding="utf-8")
    assert main(["check", "c.specgate.yaml", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    codes = [f["code"] for f in report["files"][0]["deployments"][0]["findings"]]
    assert "SG309" in codes


def test_a_pointer_out_of_the_repository_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F20: check refuses a metrics path that leaves the repository, so --write must
    not write one."""
    outside = repo.parent / "outside.prom"
    outside.write_text(counters(100, 300, 150), encoding="utf-8")
    text = CLAIMS.format(d=3)
    (repo / "c.specgate.yaml").write_text(text, encoding="utf-8")
    code, _, err = run(
        capsys,
        "--from",
        str(outside),
        "--metrics-format",
        "vllm-prometheus",
        "--write",
        "c.specgate.yaml",
        "--deployment",
        "chat",
    )
    assert code == 2 and "leaves the repository" in err and "nothing written" in err
    assert (repo / "c.specgate.yaml").read_text(encoding="utf-8") == text


def test_a_missing_file_is_named_as_given(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """F21: the folder part of --from stays in the message."""
    for given in ("logs/nope.log", "../nope.log"):
        code, _, err = run(capsys, "--from", given, "--metrics-format", "vllm-log")
        assert code == 2 and f"--from {given}: no such file" in err


def test_help_lists_the_metrics_formats(capsys: pytest.CaptureFixture[str]) -> None:
    """F7: no pointer to DESIGN.md (not shipped); the formats themselves."""
    assert main(["measure", "--help"]) == 0  # --help: main returns, never raises
    out = "".join(capsys.readouterr().out.split())  # argparse wraps at hyphens too
    assert "DESIGN" not in out
    from specgate.cli import measure as cli
    from specgate.inputs.metrics.spec import FILE_FORMATS

    assert cli._METRICS_FILE_FORMATS == FILE_FORMATS
    assert "theformatof--from:" + ",".join(FILE_FORMATS) in out


def test_log_counts_beyond_2_53_are_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = "1" + "0" * 400
    (repo / "huge.log").write_text(
        f"INFO SpecDecoding metrics: Mean acceptance length: 2.16, Accepted: {huge} tokens, "
        f"Drafted: 3{huge} tokens\n",
        encoding="utf-8",
    )
    args = ("--from", "huge.log", "--metrics-format", "vllm-log", "--draft-length", "3")
    code, _, err = run(capsys, *args)
    assert code == 2 and "above 2^53" in err and err.count("\n") == 1 and len(err) < 200


def test_readme_does_not_point_at_design_md() -> None:
    """F7: DESIGN.md is not in the repository; the README must stand alone."""
    readme = Path(__file__).resolve().parents[2] / "README.md"
    assert "DESIGN" not in readme.read_text(encoding="utf-8")


def test_an_unquoted_version_says_to_quote_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F14: ``engine_version: 0.10`` is the float 0.1 to YAML."""
    (repo / "v.specgate.yaml").write_text(
        CLAIMS.format(d=3).replace("draft_length: 3}", "draft_length: 3, engine_version: 0.10}"),
        encoding="utf-8",
    )
    assert main(["check", "v.specgate.yaml"]) == 1
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "SG001" in ln)
    # engine_version has its own wording (the engine readers' fix of the same finding)
    assert "engine_version must be a quoted version" in line
    assert "(0.10 becomes 0.1)" in line


def test_an_unquoted_number_where_text_is_due_says_to_quote_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same kind on another string field: a model name written as 3.10."""
    (repo / "n.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model:\n      name: 3.10\n",
        encoding="utf-8",
    )
    assert main(["check", "n.specgate.yaml"]) == 1
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "SG001" in ln)
    assert "model.name must be a string, got 3.1 (a number" in line
    assert "put the value in quotes" in line


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_command_killed_by_a_signal_is_named_so(
    repo: Path, server: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """F33 (measure part): not "exited with code -9"."""
    url, bodies = server
    bodies += [counters(0, 0, 0), counters(100, 300, 150)]
    kill = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]
    code, _, err = run(capsys, "--metrics-url", url, "--", *kill)
    assert code == 2 and "was killed by signal 9 (SIGKILL)" in err and "-9" not in err


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="POSIX device")
def test_from_a_device_says_it_is_not_a_regular_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["measure", "--from", "/dev/null", "--metrics-format", "vllm-log"])
    assert code == 2
    assert capsys.readouterr().err == "specgate: --from /dev/null: not a regular file\n"
