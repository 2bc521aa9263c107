"""The runners as the oracle of specgate's environment-file reading (new-user trial D3:
``docker run --env-file`` and Compose ``env_file:`` were ignored; "never a wrong settled
value"; docs/engines.md#environment-files).

- ``docker run --env-file``: the docker CLI itself (28.x here) parses the files before it
  asks the daemon for anything; a stand-in daemon on a Unix socket records the ``Env``
  list of the ``containers/create`` request (files first, then ``-e``; a later entry of a
  name wins) and refuses it. The CLI is run with an empty environment plus one variable,
  so a ``NAME`` line takes that value.
- Compose ``env_file:``: ``docker-compose config`` (1.29: python-dotenv, needs no daemon)
  prints each service's environment, ``env_file`` under ``environment:``.

For every file, each value specgate settles equals the runner's, and every name the
runner sets that specgate does not settle is named unsettled (never read as unset).
Skipped when the runner is not installed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from specgate.inputs.env_files import EnvFiles, Mode, read_env_file

DOCKER = shutil.which("docker")
COMPOSE = shutil.which("docker-compose")
CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "40"))
#: the one variable the runner's own environment holds (for ``NAME`` lines)
HOST = {"B": "from-host"}

DAEMON = r'''
import http.server, json, os, socketserver, sys
sock, out = sys.argv[1], sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    def reply(self, code, body):
        self.send_response(code)
        self.send_header("Api-Version", "1.45")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_HEAD(self): self.reply(200, b"")
    def do_GET(self): self.reply(200, b"OK")
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "/containers/create" in self.path:
            with open(out, "wb") as f: f.write(body)
        self.reply(500, json.dumps({"message": "stand-in daemon"}).encode())
    def log_message(self, *args): pass
class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    def handle_error(self, request, client_address): pass  # the CLI hung up: no matter
    def get_request(self):
        request, _ = super().get_request()
        return request, ("local", 0)
Server(sock, Handler).serve_forever()
'''

#: line forms: N a name, V a value
LINES = [
    "N=V", "  N=V", "N= V", "N=V  ", "N = V", "\tN=V", "export N=V", "N='V'", 'N="V"',
    "N=V # c", "N=V#c", "# N=V", "", "N", "N=a b", "N=$A", "N=${A}", "N=\\V", 'N="V',
    "N='a b'", "=V", " # N=9", "N=V\t# c", 'N="V" # c', "N: V",
]
NAMES = ["A", "B", "SPECULATE"]
VALUES = ["1", "4", "x", ""]


def generated(seed: int) -> str:
    rng = random.Random(seed)
    rows = []
    for _ in range(rng.randrange(1, 6)):
        form = rng.choice(LINES)
        rows.append(form.replace("N", rng.choice(NAMES)).replace("V", rng.choice(VALUES)))
    text = "\n".join(rows) + rng.choice(["\n", "", "\n\n"])
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text


#: hand-worked: (file text, mode) -> the values specgate settles, by the rules in
#: pkg/kvfile/kvfile.go@3d41bbac (docker) and python-dotenv as docker-compose 1.29 runs it
HAND: list[tuple[str, Mode, dict[str, str]]] = [
    # docker: everything after the first = as written, quotes and comments included
    ('A=1\n  C="3"\nE=x # y\n# F=1\n', "docker", {"A": "1", "C": '"3"', "E": "x # y"}),
    ("\ufeffA=1 \r\nB\n", "docker", {"A": "1 "}),  # BOM and CR dropped, blank kept
    # compose: quotes taken off, a comment after a blank dropped, export read
    ('A=1\n  C="3"\nE=x # y\nexport H=7\nI=\'q\'\nJ=\n', "compose",
     {"A": "1", "C": "3", "E": "x", "H": "7", "I": "q", "J": ""}),
]


@pytest.mark.parametrize(("text", "mode", "settled"), HAND)
def test_hand_worked_files(tmp_path: Path, text: str, mode: Mode, settled: dict[str, str]) -> None:
    files = _read(tmp_path, text, mode)
    assert {k: v for k, (v, _, _) in files.values.items()} == settled
    assert files.opaque is None


def test_a_name_without_a_value_and_a_missing_file_are_outside(tmp_path: Path) -> None:
    files = _read(tmp_path, "SPECULATE\n", "docker")
    why = files.gap("SPECULATE")
    assert why is not None and why.origin == "outside" and why.line == 1
    missing = EnvFiles()
    read_env_file("gone.env", tmp_path, missing, file="run.sh", line=3, mode="docker")
    why = missing.gap("SPECULATE")
    assert why is not None and (why.origin, why.file, why.line) == ("outside", "run.sh", 3)
    outside = EnvFiles()
    read_env_file("/etc/serve.env", tmp_path, outside, file="run.sh", line=3, mode="docker")
    assert outside.gap("A") is not None and outside.gap("A").origin == "outside"  # type: ignore[union-attr]


def test_a_compose_value_the_readers_differ_on_is_the_repositorys(tmp_path: Path) -> None:
    files = _read(tmp_path, "A=1\nSPECULATE=${D:-3}\n", "compose")
    why = files.gap("SPECULATE")
    assert why is not None and (why.origin, why.line) == ("repository", 2)
    assert files.gap("A") is None


def _read(folder: Path, text: str, mode: Mode) -> EnvFiles:
    (folder / "e.env").write_bytes(text.encode())
    files = EnvFiles()
    read_env_file("e.env", folder, files, file="serve", line=1, mode=mode)
    return files


def _agrees(files: EnvFiles, ran: dict[str, str] | None, text: str) -> list[str]:
    """Disagreements of specgate's reading with the runner's environment (None: the
    runner refused the file)."""
    if ran is None:
        return [] if not files.values or files.opaque is not None else [
            f"the runner refuses the file, specgate settles {files.values}\n{text!r}"
        ]
    problems = [
        f"{name}: specgate {value!r}, the runner {ran.get(name)!r}\n{text!r}"
        for name, (value, _, _) in files.values.items() if ran.get(name) != value
    ]
    problems += [
        f"{name}: the runner sets {ran[name]!r}, specgate reads it as unset\n{text!r}"
        for name in ran if name not in files.values and files.gap(name) is None
    ]
    return problems


@pytest.fixture(scope="module")
def daemon() -> Iterator[tuple[str, Path]]:
    if DOCKER is None:
        pytest.skip("the docker CLI is the oracle")
    where = Path(tempfile.mkdtemp(prefix="sgd"))
    sock, out = where / "d.sock", where / "create.json"
    server = subprocess.Popen([sys.executable, "-c", DAEMON, str(sock), str(out)])
    for _ in range(50):
        if sock.exists():
            break
        time.sleep(0.1)
    try:
        yield f"unix://{sock}", out
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(where, ignore_errors=True)


def docker_env(host: str, out: Path, folder: Path) -> dict[str, str] | None:
    """The container environment the docker CLI asks for (None: it refused the file)."""
    out.unlink(missing_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder),
           "DOCKER_HOST": host, "DOCKER_CONFIG": str(folder / ".docker"), **HOST}
    run = subprocess.run(
        [str(DOCKER), "run", "--env-file", "e.env", "img:1", "serve"], cwd=folder, env=env,
        capture_output=True, timeout=30, check=False,
    )
    if not out.exists():
        assert b"invalid env file" in run.stderr or b"no variable name" in run.stderr, run.stderr
        return None
    result: dict[str, str] = {}
    for entry in json.loads(out.read_bytes())["Env"] or []:
        name, eq, value = entry.partition("=")
        if eq:
            result[name] = value
    return result


def test_docker_cli_reads_what_specgate_settles(
    daemon: tuple[str, Path], tmp_path: Path
) -> None:
    host, out = daemon
    problems: list[str] = []
    settled = refused = 0
    texts = [text for text, _, _ in HAND] + [generated(seed) for seed in range(CASES)]
    for index, text in enumerate(texts):
        folder = tmp_path / str(index)
        folder.mkdir()
        files = _read(folder, text, "docker")
        ran = docker_env(host, out, folder)
        problems += _agrees(files, ran, text)
        settled += len(files.values)
        refused += ran is None
    assert problems == []
    assert settled > len(texts) // 2 and 0 < refused < len(texts) // 2  # not vacuous


def compose_env(folder: Path) -> dict[str, str] | None:
    (folder / "docker-compose.yml").write_text(
        "services:\n  s:\n    image: x\n    env_file: e.env\n", "utf-8"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), **HOST}
    run = subprocess.run(
        [str(COMPOSE), "config"], cwd=folder, env=env, capture_output=True, timeout=60,
        check=False,
    )
    if run.returncode != 0:
        return None
    service = yaml.safe_load(run.stdout)["services"]["s"]
    return {k: v for k, v in (service.get("environment") or {}).items() if v is not None}


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose is the oracle")
def test_docker_compose_reads_what_specgate_settles(tmp_path: Path) -> None:
    problems: list[str] = []
    texts = [text for text, mode, _ in HAND if mode == "compose"]
    texts += [generated(seed) for seed in range(CASES // 2)]
    settled = 0
    for index, text in enumerate(texts):
        folder = tmp_path / str(index)
        folder.mkdir()
        files = _read(folder, text, "compose")
        problems += _agrees(files, compose_env(folder), text)
        settled += len(files.values)
    assert problems == []
    assert settled > len(texts) // 2  # not vacuous


def test_the_socket_path_fits() -> None:
    # a Unix socket path is at most 107 bytes: the daemon's folder is short
    assert len(tempfile.gettempdir()) + 30 < 107
    assert socket.AF_UNIX


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose is the oracle")
def test_compose_passes_a_name_listed_without_a_value_from_its_environment(
    tmp_path: Path,
) -> None:
    # `environment: [B]` (B in the runner's environment, HOST) gets the runner's value,
    # and none without it: the deployment's, which specgate leaves unsettled (outside)
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  s:\n    image: x\n    environment: [B, C]\n", "utf-8"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), **HOST}
    run = subprocess.run([str(COMPOSE), "config"], cwd=tmp_path, env=env, capture_output=True,
                         timeout=60, check=True)
    assert yaml.safe_load(run.stdout)["services"]["s"]["environment"] == {
        "B": "from-host", "C": None,
    }
