"""Output that cannot be written: exit 2 with one line naming the cause, never exit 3,
and nothing the user pointed at is replaced (new-user report, 2026-11-30)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

CLEAN = """\
version: 1
deployments:
  - name: chat
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}
    evidence: {accept_length: 2.4, cache_coherence_eval: true}
"""

FULL = Path("/dev/full")  # every write fails with ENOSPC
needs_full = pytest.mark.skipif(
    not (FULL.exists() and stat.S_ISCHR(FULL.stat().st_mode)), reason="no /dev/full"
)


def _specgate(
    args: list[str], cwd: Path, *, stdout: int | object = subprocess.PIPE, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "specgate", *args],
        cwd=cwd,
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        env={**os.environ, **env},
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "c.specgate.yaml").write_text(CLEAN, encoding="utf-8")
    return tmp_path


@needs_full
@pytest.mark.parametrize("how", ["--summary", "GITHUB_STEP_SUMMARY"])
def test_a_full_disk_under_the_job_summary_is_exit_2(repo: Path, how: str) -> None:
    if how == "--summary":
        done = _specgate(["check", ".", "--summary", str(FULL)], repo, env={})
    else:
        done = _specgate(
            ["check", ".", "--format", "github"], repo, env={"GITHUB_STEP_SUMMARY": str(FULL)}
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "specgate: cannot append to /dev/full: No space left on device"
    )


@needs_full
@pytest.mark.parametrize(
    "args",
    [
        ["check", ".", "--format", "json"],
        ["doctor", "--speculative-decoding", "--accept-length=2.9", "--draft-length=4"],
        ["rules"],
    ],
)
def test_a_full_disk_behind_standard_output_is_exit_2(repo: Path, args: list[str]) -> None:
    with FULL.open("w") as full:
        done = _specgate(args, repo, stdout=full, env={})
    assert done.returncode == 2
    assert done.stderr == "specgate: input/output error: No space left on device\n"


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
@pytest.mark.parametrize("flag", ["--output", "--sarif-file"])
def test_output_into_a_fifo_goes_through_it(repo: Path, flag: str) -> None:
    fifo = repo / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    extra = ["--format", "sarif"] if flag == "--output" else []
    done = _specgate(["check", "c.specgate.yaml", *extra, flag, "pipe"], repo, env={})
    reader.join(timeout=30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got and '"version": "2.1.0"' in got[0]


def _closed_stdout(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``specgate ARGS >&-``: file descriptor 1 closed before Python starts, so
    ``sys.stdout`` is None (the lead's perf review, 2026-12-01: exit 3 before)."""
    return subprocess.run(
        [sys.executable, "-m", "specgate", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=60,
        preexec_fn=lambda: os.close(1),  # the child closes its own stdout
    )


@pytest.mark.skipif(os.name != "posix", reason="closes a POSIX file descriptor")
@pytest.mark.parametrize("args", [["check", "."], ["doctor", "--help"], ["rules"]])
def test_a_closed_standard_output_is_exit_2_with_one_line(repo: Path, args: list[str]) -> None:
    done = _closed_stdout(args, repo)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "specgate: input/output error: standard output is closed\n"


@needs_full
@pytest.mark.parametrize("args", [["--help"], ["doctor", "--help"], ["check", "--help"]])
def test_help_written_to_a_full_disk_is_exit_2(repo: Path, args: list[str]) -> None:
    """argparse writes --help and leaves by SystemExit(0): the write that failed must
    still show (it exited 0 with nothing written before)."""
    with FULL.open("w") as full:
        done = _specgate(args, repo, stdout=full, env={})
    assert done.returncode == 2, done.stderr
    assert "input/output error" in done.stderr
    assert done.stderr.count("\n") == 1


def test_help_to_a_pipe_is_still_exit_0(repo: Path) -> None:
    done = _specgate(["doctor", "--help"], repo, env={})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: specgate doctor")
