"""``specgate measure --metrics-url``: ``--timeout`` is a deadline for the whole
scrape, and the body read from the endpoint is capped (README.md#record-evidence: "never a
hang"). Loopback servers on 127.0.0.1 only; each test is bounded by the deadline."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.measure import scrape as measure

OK = [sys.executable, "-c", "pass"]
HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"


def _serve(talk: Callable[[socket.socket], None]) -> Iterator[str]:
    """A one-thread TCP server on 127.0.0.1 that reads the request, then runs
    ``talk`` on each connection (for at most 10 s), closing it afterwards."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(10)
                try:
                    conn.recv(65536)
                    talk(conn)
                except OSError:
                    pass

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/metrics"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _trickle_body(conn: socket.socket) -> None:
    conn.sendall(HEADERS)
    for _ in range(100):  # one byte every 0.1 s: each read is quick, the whole is not
        conn.sendall(b"#")
        time.sleep(0.1)


def _trickle_headers(conn: socket.socket) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
        conn.sendall(bytes([byte]))
        time.sleep(0.1)


@pytest.fixture
def trickle_body() -> Iterator[str]:
    yield from _serve(_trickle_body)


@pytest.fixture
def trickle_headers() -> Iterator[str]:
    yield from _serve(_trickle_headers)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("which", ["trickle_body", "trickle_headers"])
def test_timeout_is_a_deadline_for_the_whole_scrape(
    here: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, which: str
) -> None:
    url = request.getfixturevalue(which)
    start = time.monotonic()
    code = main(["measure", "--metrics-url", url, "--timeout", "0.5", "--", *OK])
    elapsed = time.monotonic() - start
    _, err = capsys.readouterr()
    assert code == 2
    assert "timed out" in err and "--timeout 0.5" in err and err.count("\n") == 1
    # each byte came within 0.1 s, so a per-read timeout would have waited 10 s
    assert elapsed < 3


def test_scrape_deadline_directly(trickle_body: str) -> None:
    start = time.monotonic()
    with pytest.raises(Exception, match="timed out"):
        measure.scrape(trickle_body, 0.4)
    assert time.monotonic() - start < 2.5


def _huge_length(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n# x\n")


def _endless(conn: socket.socket) -> None:
    conn.sendall(HEADERS)
    line = b"# padding padding padding padding padding padding padding\n" * 64
    for _ in range(1000):  # 3.7 MiB at most, fast: the cap (set to 64 KiB) comes first
        conn.sendall(line)


@pytest.mark.parametrize("talk", [_huge_length, _endless], ids=["stated", "streamed"])
def test_the_body_read_is_capped(
    here: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    talk: Callable[[socket.socket], None],
) -> None:
    monkeypatch.setattr(measure, "MAX_SCRAPE_BYTES", 65536)
    for url in _serve(talk):
        code = main(["measure", "--metrics-url", url, "--timeout", "5", "--", *OK])
        _, err = capsys.readouterr()
        assert code == 2
        assert "body larger than 65536 bytes" in err and err.count("\n") == 1


def _redirect_to(target: str) -> Callable[[socket.socket], None]:
    def talk(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 302 Found\r\nLocation: " + target.encode() + b"\r\nContent-Length: 0\r\n\r\n"
        )

    return talk


@pytest.mark.parametrize(
    "target",
    ["ftp://127.0.0.1:9/metrics", "file:///etc/passwd", "data:text/plain,x", "gopher://h/"],
)
def test_a_redirect_to_another_scheme_is_refused(
    here: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    # Issue 18: a redirect to ftp:// was followed by urllib's FTP handler, which knows no
    # deadline; only http(s) is read, redirects included.
    for url in _serve(_redirect_to(target)):
        start = time.monotonic()
        code = main(["measure", "--metrics-url", url, "--timeout", "2", "--", *OK])
        _, err = capsys.readouterr()
        assert code == 2 and err.count("\n") == 1
        assert "redirected to" in err and "only http:// and https:// are read" in err
        assert time.monotonic() - start < 2.5


def test_a_redirect_loop_ends(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    holder: list[str] = []

    def talk(conn: socket.socket) -> None:
        _redirect_to(holder[0])(conn)

    for url in _serve(talk):
        holder.append(url)
        code = main(["measure", "--metrics-url", url, "--timeout", "5", "--", *OK])
        _, err = capsys.readouterr()
        assert code == 2 and "HTTP 302" in err and err.count("\n") == 1


def test_name_resolution_is_inside_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # A resolver that hangs (a black-holed DNS server): the deadline still holds.
    real = socket.getaddrinfo

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(3)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", slow)
    start = time.monotonic()
    with pytest.raises(Exception, match="timed out"):
        measure.scrape("http://metrics.invalid:8000/metrics", 0.3)
    assert time.monotonic() - start < 2.5
