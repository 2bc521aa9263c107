"""Writing reports and claims files to user-named paths (specgate.core.output_file)."""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path

import pytest

from specgate.core.output_file import write_text

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes, FIFOs, /proc")


@posix_only
def test_an_existing_file_keeps_its_permission_bits(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o664)
    write_text(str(target), "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o664


@posix_only
def test_a_new_file_gets_the_umask_like_a_shell_redirect(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_text(str(tmp_path / "new.sarif"), "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.sarif").stat().st_mode) == 0o640  # 0o666 & ~0o027


@posix_only
def test_a_symlink_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "reports" / "out.json"
    real.parent.mkdir()
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "out.json"
    link.symlink_to(real)
    write_text(str(link), "new\n")
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in real.parent.iterdir()) == ["out.json"]  # no temp left


@posix_only
def test_a_fifo_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    write_text(str(fifo), "through the pipe\n")
    reader.join(timeout=10)
    assert got == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux /proc")
def test_a_link_to_a_proc_descriptor_writes_to_that_descriptor(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        link = tmp_path / "out"
        link.symlink_to(f"/proc/self/fd/{write_end}")
        write_text(str(link), "to the descriptor\n")
        assert os.read(read_end, 100) == b"to the descriptor\n"
        assert link.is_symlink()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_missing_folder_is_an_os_error_and_nothing_is_left(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_text(str(tmp_path / "absent" / "out.json"), "x")
    assert list(tmp_path.iterdir()) == []


def test_newline_empty_keeps_the_texts_own_line_endings(tmp_path: Path) -> None:
    target = tmp_path / "claims.yaml"
    write_text(str(target), "a: 1\r\nb: 2\r\n", newline="")
    assert target.read_bytes() == b"a: 1\r\nb: 2\r\n"
