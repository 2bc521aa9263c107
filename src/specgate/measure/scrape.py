"""Scraping a running engine for ``specgate measure --metrics-url URL -- CMD``.

:func:`scrape` GETs a Prometheus endpoint within one deadline for the whole request
(connect, headers and body: a server that trickles its body is cut off), with the body
capped at :data:`MAX_SCRAPE_BYTES`; :func:`run_command` runs the user's benchmark
command between two scrapes (no shell). Every failure is a :class:`UsageError` or
:class:`InputError` of one line.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from specgate.core.errors import InputError, UsageError

MAX_SCRAPE_BYTES = 16 * 1024 * 1024
"""A scrape larger than this is refused (a vLLM /metrics page is well under 1 MiB)."""
DEFAULT_TIMEOUT_S = 10.0


def scrape(url: str, timeout: float, limit: int | None = None) -> str:
    """GET ``url`` and return the body as text, all within ``timeout`` seconds.

    ``timeout`` is a deadline for the whole scrape — name resolution, connect, TLS,
    every redirect, status line, headers and body — not for each socket operation:
    the request runs in a worker thread that the caller waits for at most ``timeout``
    seconds, and a watchdog shuts down every socket it opened when the deadline
    passes (a server that answers "200 OK" and then sends one byte a second is cut
    off). Only ``http://`` and ``https://`` are fetched, redirects included (a
    redirect to ``ftp://`` or ``file://`` is refused), at most
    :data:`MAX_REDIRECTS` of them; no proxy from the environment is used.

    Raises:
        InputError: not http(s), a network error, the deadline passed, a redirect
            to another scheme, an HTTP status other than 200, an HTML body, more
            than ``limit`` bytes (default :data:`MAX_SCRAPE_BYTES`), not UTF-8.
    """
    if not url.lower().startswith(_SCHEMES):
        raise InputError(f"--metrics-url {url!r}: only http:// and https:// are read")
    if limit is None:
        limit = MAX_SCRAPE_BYTES
    watch = _Deadline(timeout)
    outcome: dict[str, Any] = {}  # "value": (status, kind, body), or "error"

    def fetch() -> None:
        try:
            outcome["value"] = _fetch(url, watch, limit)
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=fetch, name="specgate-scrape", daemon=True)
    with watch:
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            watch.expire()
            # Its sockets are shut down, so it ends at once and closes them; a worker
            # stuck in name resolution is left behind (a daemon thread).
            worker.join(_GRACE_S)
            raise watch.error(url)
    error = outcome.pop("error", None)
    if error is not None:
        try:
            raise error
        finally:  # no cycle through this frame: the failed connection is freed at once
            error = None
    status, kind, body = outcome["value"]
    assert isinstance(body, bytes)
    if status != 200:
        raise InputError(f"--metrics-url {url}: HTTP {status}")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"--metrics-url {url}: body is not UTF-8 text") from None
    if "html" in kind.lower() or text.lstrip()[:1] == "<":
        raise InputError(
            f"--metrics-url {url}: the server answered with HTML, not Prometheus text "
            "(is this the engine's /metrics endpoint?)"
        )
    return text


_SCHEMES = ("http://", "https://")
_GRACE_S = 1.0
MAX_REDIRECTS = 5
"""Redirects followed within one scrape (urllib's default is 10)."""


def _fetch(url: str, watch: _Deadline, limit: int) -> tuple[int, str, bytes]:
    """(status, Content-Type, body) of one GET through http(s) handlers only.

    Raises:
        InputError: as :func:`scrape`.
    """
    request = urllib.request.Request(url, headers={"Accept": "text/plain"})
    opener = urllib.request.OpenerDirector()
    for handler in (
        _HTTPHandler(watch),
        _HTTPSHandler(watch),
        _Redirects(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
        urllib.request.UnknownHandler(),
    ):
        opener.add_handler(handler)
    try:
        with opener.open(request, timeout=watch.remaining()) as response:
            status = int(response.status)
            kind = str(response.headers.get("Content-Type", ""))
            length = str(response.headers.get("Content-Length", ""))
            body = _read_capped(response, length, url, limit)
    except urllib.error.HTTPError as exc:
        raise InputError(f"--metrics-url {url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        if watch.expired:
            raise watch.error(url) from None
        reason = getattr(exc, "reason", exc)
        raise InputError(f"--metrics-url {url}: cannot scrape ({reason})") from None
    if watch.expired:  # the shut-down socket read as the end of the body
        raise watch.error(url)
    return status, kind, body


class _Redirects(urllib.request.HTTPRedirectHandler):
    """urllib's redirect handling, to http(s) targets only (its own also follows
    ``ftp://``, whose handler knows no deadline) and at most :data:`MAX_REDIRECTS`."""

    max_redirections = MAX_REDIRECTS

    def http_error_302(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any
    ) -> Any:
        location = headers.get("location") or headers.get("uri")
        if location is not None:
            target = urllib.parse.urljoin(req.full_url, str(location))
            if not target.lower().startswith(_SCHEMES):
                raise InputError(
                    f"--metrics-url {req.full_url}: redirected to {target[:200]!r}; "
                    "only http:// and https:// are read"
                )
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _read_capped(response: Any, length: str, url: str, limit: int) -> bytes:
    """The body, read in chunks and refused past ``limit`` bytes (a stated
    Content-Length above it is refused before reading)."""
    if length.strip().isdigit() and int(length) > limit:
        raise InputError(f"--metrics-url {url}: body larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = response.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise InputError(f"--metrics-url {url}: body larger than {limit} bytes")
    return b"".join(chunks)


_CHUNK = 64 * 1024


class _Deadline:
    """A watchdog for one scrape: when ``seconds`` have passed it shuts down every
    socket the scrape opened, so a blocked read returns at once. A context manager:
    the clock starts on entry and stops on exit."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._end = 0.0

    def __enter__(self) -> _Deadline:
        self._end = time.monotonic() + self.seconds
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the clock and close every socket of the scrape (a worker cut off by the
        deadline leaves its connection to garbage collection otherwise)."""
        self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.close()

    def remaining(self) -> float:
        """Seconds left (at least a millisecond, so a socket timeout stays valid)."""
        return max(self._end - time.monotonic(), 0.001) if self._end else self.seconds

    def register(self, sock: socket.socket) -> None:
        """Watch ``sock``; shut it down now if the deadline already passed."""
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def error(self, url: str) -> InputError:
        return InputError(
            f"--metrics-url {url}: cannot scrape (timed out: no whole answer within "
            f"--timeout {self.seconds:g} s)"
        )

    def expire(self) -> None:
        """End the scrape now: shut down every socket it opened."""
        self._expire()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # the plain socket's: an SSL socket's drops state
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Connection(http.client.HTTPConnection):
    watch: _Deadline

    def connect(self) -> None:
        self.timeout = self.watch.remaining()
        super().connect()
        self.watch.register(self.sock)


class _SecureConnection(http.client.HTTPSConnection):
    watch: _Deadline

    def connect(self) -> None:
        self.timeout = self.watch.remaining()
        super().connect()
        self.watch.register(self.sock)


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: _Deadline) -> None:
        super().__init__()
        self._class: Any = type("Connection", (_Connection,), {"watch": watch})

    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(self._class, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Deadline) -> None:
        super().__init__()
        self._class: Any = type("SecureConnection", (_SecureConnection,), {"watch": watch})

    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(self._class, req)  # the default TLS context


def run_command(command: list[str]) -> None:
    """Run the benchmark ``command`` (no shell); its output goes to standard error so
    standard output carries only the evidence.

    Raises:
        UsageError: the command cannot start or exits non-zero (naming its exit code).
    """
    try:
        target: int = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # stderr is not a file (captured)
        target = subprocess.DEVNULL
    try:
        done = subprocess.run(command, stdout=target, check=False)
    except OSError as exc:
        raise UsageError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from None
    if done.returncode < 0:
        import signal

        try:
            name = f" ({signal.Signals(-done.returncode).name})"
        except ValueError:
            name = ""
        raise UsageError(
            f"the command {command[0]!r} was killed by signal {-done.returncode}{name}: "
            "nothing measured"
        )
    if done.returncode != 0:
        raise UsageError(
            f"the command {command[0]!r} exited with code {done.returncode}: nothing measured"
        )
