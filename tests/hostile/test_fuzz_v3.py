"""Fuzz targets for the surfaces v2 added (issue 18): ``--baseline`` over generated git
histories, ``measure`` against a loopback HTTP server, launchers under ``--changed`` and
``--staged``.

Each target runs specgate in this process on generated inputs and holds it to its
contract: an exit code of 0, 1 or 2 (never 3, an internal error), a one-line message on
exit 2, bounded time; and for ``--baseline`` the gate itself: an AL drop past the
policy is SG401 however the claims file was moved (padded past rename detection, the
old path turned into a symlink), and touching an evidence file does not make new
evidence. The example counts are bounded for CI (under a minute together);
``SPECGATE_FUZZ_SCALE=N`` runs N times as many by hand. ``pytest -s`` prints what was
tried: inputs, exit codes, the worst time and the process's peak RSS
(``test_report_fuzz_v3``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCALE = max(1, int(os.environ.get("SPECGATE_FUZZ_SCALE", "1")))
STATS: dict[str, dict[str, Any]] = {}


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


def _run(args: list[str], cwd: Path, target: str) -> tuple[int, str, str, float]:
    """``specgate ARGS`` in this process, in ``cwd``: (exit code, stdout, stderr,
    seconds), recorded under ``target`` for the report."""
    from specgate.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    start = time.perf_counter()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(args, stdout=out)
    finally:
        os.chdir(here)
    elapsed = time.perf_counter() - start
    stats = STATS.setdefault(target, {"inputs": 0, "codes": Counter(), "worst_s": 0.0})
    stats["inputs"] += 1
    stats["codes"][code] += 1
    stats["worst_s"] = max(stats["worst_s"], elapsed)
    return code, out.getvalue(), err.getvalue(), elapsed


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=f", "-c", "user.email=f@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _fresh_repo(factory: pytest.TempPathFactory) -> Path:
    repo = factory.mktemp("fuzz")
    _git(repo, "init", "-q", "-b", "main")
    return repo


# --- 1. --baseline over generated histories ----------------------------------------------

PROM = (
    "# TYPE vllm:spec_decode_num_drafts_total counter\n"
    'vllm:spec_decode_num_drafts_total{{engine="0"}} {drafts}\n'
    "# TYPE vllm:spec_decode_num_draft_tokens_total counter\n"
    'vllm:spec_decode_num_draft_tokens_total{{engine="0"}} {tokens}\n'
    "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
    'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {accepted}\n'
)
HOSTILE_VALUES = ["1" + "0" * 400, "NaN", "-5", "1e400", "[" * 300, "x##[stop-commands]t"]


def _claims(name: str, metrics: str, claim: str, d: int) -> str:
    return (
        f"version: 1\ndeployments:\n  - name: {json.dumps(name)}\n"
        "    speculation: {enabled: true, mechanism: eagle3, "
        f"draft_length: {d}, draft_depth_ratio: 0.05}}\n"
        "    evidence:\n      cache_coherence_eval: true\n"
        f"      metrics: {{format: vllm-prometheus, path: {metrics}}}\n"
        f"    claims: {{speedup: {claim}}}\n"
    )


HISTORY = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["chat", "a b", "x##[error]y", "é"]),
        "base_accepted": st.integers(min_value=0, max_value=300),
        "head_accepted": st.integers(min_value=0, max_value=300),
        "move": st.sampled_from(["none", "git-mv", "padded", "symlink", "copy-elsewhere"]),
        "touch": st.booleans(),
        "pad_base": st.sampled_from([0, 100, 25_000]),  # 25,000 lines: a 2.6 MB scrape
        "claim_up": st.booleans(),
        "d_change": st.booleans(),
        "damage": st.sampled_from(["none", "none", "none", *HOSTILE_VALUES]),
        "damage_base": st.booleans(),
    }
)


@_settings(25)
@given(HISTORY)
def test_baseline_over_generated_histories(
    tmp_path_factory: pytest.TempPathFactory, h: dict[str, Any]
) -> None:
    repo = _fresh_repo(tmp_path_factory)
    pad = "".join(f"# pad {i} {'x' * 100}\n" for i in range(h["pad_base"]))
    base_prom = pad + PROM.format(drafts=100, tokens=300, accepted=h["base_accepted"])
    if h["damage"] != "none" and h["damage_base"]:
        base_prom = base_prom.replace(f"}} {h['base_accepted']}\n", f"}} {h['damage']}\n")
    (repo / "m.prom").write_text(base_prom, "utf-8")
    (repo / "old.specgate.yaml").write_text(_claims(h["name"], "m.prom", "1.5", 3), "utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")

    head_prom = PROM.format(drafts=100, tokens=300, accepted=h["head_accepted"])
    if h["damage"] != "none" and not h["damage_base"]:
        head_prom = head_prom.replace(f"}} {h['head_accepted']}\n", f"}} {h['damage']}\n")
    if h["touch"]:
        head_prom = "# touched\n" + head_prom
    (repo / "m.prom").write_text(head_prom, "utf-8")
    claim = "1.9" if h["claim_up"] else "1.5"
    claims = _claims(h["name"], "m.prom", claim, 4 if h["d_change"] else 3)
    target = "old.specgate.yaml"
    if h["move"] != "none":
        _git(repo, "rm", "-q", "old.specgate.yaml")
        target = "deploy/new.specgate.yaml"
        moved = claims.replace("path: m.prom", "path: ../m.prom")
        if h["move"] == "padded":
            moved = "".join(f"# padding {i}\n" for i in range(200)) + moved
        (repo / "deploy").mkdir()
        (repo / target).write_text(moved, "utf-8")
        if h["move"] == "symlink":
            (repo / "old.specgate.yaml").symlink_to(target)
        if h["move"] == "git-mv":
            _git(repo, "add", "-A")
    else:
        (repo / target).write_text(claims, "utf-8")
    code, out, err, _ = _run(
        ["check", "--baseline", "HEAD", "--format", "json", target], repo, "baseline"
    )
    assert code in (0, 1, 2), err
    assert "##[" not in out + err
    if code == 2:
        assert err.count("\n") >= 1 and "internal error" not in err
    if h["damage"] != "none" or h["head_accepted"] == 0 or h["base_accepted"] == 0:
        return
    # Hand-worked oracle: AL = 1 + accepted/100 on both sides (100 drafts of 3 tokens);
    # SG401 when AL_head < AL_base · 0.95, whichever way the file was moved.
    report = json.loads(out)
    deployment = report["files"][0]["deployments"][0]
    codes = {f["code"] for f in deployment["findings"]}
    base_al, head_al = 1 + h["base_accepted"] / 100, 1 + h["head_accepted"] / 100
    assert deployment["baseline"]["new"] is False, deployment["baseline"]
    assert deployment["baseline"]["accept_length"] == pytest.approx(base_al)
    if head_al < base_al * 0.95 and not h["d_change"]:
        assert "SG401" in codes, (h, codes)
    if h["claim_up"] and h["head_accepted"] == h["base_accepted"] and not h["d_change"]:
        assert "SG402" in codes, (h, codes)  # touched or not: the same measurement


# --- 2. measure against a loopback HTTP server ---------------------------------------------

COUNTERS = (
    'vllm:spec_decode_num_drafts_total{{model_name="m"}} {0}\n'
    'vllm:spec_decode_num_draft_tokens_total{{model_name="m"}} {1}\n'
    'vllm:spec_decode_num_accepted_tokens_total{{model_name="m"}} {2}\n'
)
COUNT = st.one_of(
    st.integers(min_value=0, max_value=2**60),
    st.sampled_from(["1" + "0" * 401, "Inf", "NaN", "-1", "1e308", "0x10", "1_0"]),
)
SANE = st.builds(
    lambda drafts, k, share: COUNTERS.format(drafts, drafts * k, int(drafts * k * share)),
    st.integers(min_value=1, max_value=10**6),
    st.integers(min_value=1, max_value=8),
    st.floats(min_value=0, max_value=1),
)
BODY = st.one_of(
    SANE,
    SANE,
    st.builds(COUNTERS.format, COUNT, COUNT, COUNT),
    st.text(max_size=200),
    st.sampled_from(["<html>x</html>", "", "\ufeff# x\n", "vllm:spec_decode_num_drafts_total 1\n"]),
)
RESPONSE = st.fixed_dictionaries(
    {
        "status": st.sampled_from([200] * 6 + [301, 302, 307, 404, 500]),
        "location": st.sampled_from(
            ["ftp://127.0.0.1:9/x", "file:///etc/passwd", "self", "http://127.0.0.1:9/", "data:,x"]
        ),
        "type": st.sampled_from(["text/plain", "text/html", ""]),
        "delay": st.sampled_from([0.0] * 4 + [0.05, 1.5]),
        "trickle": st.booleans(),
        "length_lie": st.sampled_from([False] * 4 + [True]),
        "after": BODY,
        "before": st.sampled_from([COUNTERS.format(0, 0, 0)] * 5 + [""]),
    }
)


class _Loopback:
    """A TCP server on 127.0.0.1 answering each GET as the current plan says."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/metrics"
        self.plan: dict[str, Any] = {}
        self.calls = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    self._answer(conn)
                except OSError:
                    pass

    def _answer(self, conn: socket.socket) -> None:
        plan = self.plan
        self.calls += 1
        body = (plan["before"] if self.calls == 1 else plan["after"]).encode("utf-8", "replace")
        status = plan["status"] if self.calls > 1 else 200
        time.sleep(plan["delay"] if self.calls > 1 else 0)
        location = self.url if plan["location"] == "self" else plan["location"]
        length = len(body) + (1000 if plan["length_lie"] else 0)
        head = (
            f"HTTP/1.1 {status} X\r\nContent-Type: {plan['type']}\r\nLocation: {location}\r\n"
            f"Content-Length: {length}\r\nConnection: close\r\n\r\n"
        ).encode()
        conn.sendall(head)
        if plan["trickle"]:
            for i in range(0, len(body), 16):
                conn.sendall(body[i : i + 16])
                time.sleep(0.01)
        else:
            conn.sendall(body)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.listener.close()


@pytest.fixture(scope="module")
def loopback() -> Iterator[_Loopback]:
    server = _Loopback()
    yield server
    server.close()


@_settings(30)
@given(RESPONSE)
def test_measure_against_a_loopback_server(
    tmp_path_factory: pytest.TempPathFactory, loopback: _Loopback, plan: dict[str, Any]
) -> None:
    folder = tmp_path_factory.mktemp("measure")
    (folder / ".git").mkdir()
    loopback.plan, loopback.calls = plan, 0
    code, out, err, elapsed = _run(
        ["measure", "--metrics-url", loopback.url, "--timeout", "1", "--",
         sys.executable, "-c", "pass"],
        folder,
        "measure",
    )  # fmt: skip
    assert code in (0, 2), err
    assert "##[" not in out + err
    # two scrapes of at most --timeout 1 s each, the benchmark command, start-up
    assert elapsed < 2 * 1 + 5
    if code == 2:
        assert err.count("\n") == 1 and "internal error" not in err, err
    else:
        import yaml

        assert yaml.safe_load(out)["evidence"]["accept_length"] >= 1


# --- 3. launchers under --changed and --staged ---------------------------------------------

VALUE = st.one_of(
    st.sampled_from(["3", "010", "0b11", "1_0", "1" + "0" * 500, "-1", "$D", "${D}", "'4'"]),
    st.integers(min_value=-3, max_value=2000).map(str),
)


def _nest(depth: int, leaf: str) -> str:
    return "[" * depth + leaf + "]" * depth


LAUNCHER = st.one_of(
    st.builds(
        lambda d, v, deep: (
            "serve.sh",
            f"D={v}\nexport X=1\nvllm serve m --speculative-config "
            f"'{{\"method\": \"ngram\", \"num_speculative_tokens\": {d}, "
            f"\"prompt_lookup_max\": 4, \"x\": {_nest(deep, '1')}}}'\n",
        ),
        VALUE,
        VALUE,
        st.sampled_from([0, 5, 99, 150, 2000]),
    ),
    st.builds(
        lambda v, deep: (
            "deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: v\n          image: vllm/vllm-openai:v0.10.0\n"
            "          args: [--model, m, --speculative-config, "
            f"'{{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}}',"
            f" --x, {v}]\n          env: [{{name: D, value: {_nest(deep, '1')}}}]\n",
        ),
        VALUE,
        st.sampled_from([0, 50, 150, 900]),
    ),
    st.builds(
        lambda v, merge: (
            "compose.yaml",
            "x-v: &v\n  image: vllm/vllm-openai:v0.10.0\n  command: [--model, m, "
            "--speculative-config, "
            f"'{{\"method\": \"ngram\", \"num_speculative_tokens\": {v}, "
            "\"prompt_lookup_max\": 4}']\n"
            f"services:\n  s:\n    {'<<: *v' if merge else 'image: x'}\n    x: {v}\n",
        ),
        VALUE,
        st.booleans(),
    ),
    st.builds(
        lambda t: ("serve.sh", t), st.text(alphabet="vllm serve-$'\"{}[]:,\\ \n=", max_size=80)
    ),
)


@_settings(60)
@given(LAUNCHER, st.booleans())
def test_launchers_under_changed_and_staged(
    tmp_path_factory: pytest.TempPathFactory, launcher: tuple[str, str], staged: bool
) -> None:
    name, text = launcher
    repo = _fresh_repo(tmp_path_factory)
    (repo / name).write_text(text, "utf-8", errors="surrogatepass")
    (repo / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation: {enabled: true, "
        f"engine: vllm, engine_config: {name}}}\n    evidence: {{accept_length: 2.0}}\n",
        "utf-8",
    )
    if staged:
        _git(repo, "add", "-A")
        args = ["check", "--staged", "--format", "json"]
    else:
        args = ["check", "--changed", name, "--format", "json"]
    code, out, err, _ = _run(args, repo, "launchers")
    assert code in (0, 1, 2), err
    assert "internal error" not in err and "##[" not in out + err
    if code == 2 and out:
        report = json.loads(out)
        errors = [f["error"] for f in report["files"] if f.get("error")]
        assert all(e.count("\n") == 0 for e in errors)


def test_report_fuzz_v3() -> None:
    # Runs last in this module: what was tried, for the closing note (pytest -s).
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    for target, stats in STATS.items():
        print(
            f"FUZZ_V3 {target}: {stats['inputs']} inputs, exit codes "
            f"{dict(sorted(stats['codes'].items()))}, worst {stats['worst_s']:.2f} s"
        )
    print(f"FUZZ_V3 peak RSS of the test process: {peak / 1024:.0f} MiB")
