"""A streamed metrics file keeps a bounded amount (hostile review r4, defect 7).

A 250 MiB ``vllm-log`` of one matching line repeated (a 1.2 MB push: git compresses it)
took 8.3 s and 1.23 GB: the pre-filter kept every line, and the kept text was copied
three times (slices, their join, the decoded text). Now the kept lines and the line
breaks standing for the others are one buffer of at most ``MAX_KEPT_BYTES``, refused at
the line that passes it (measured in the report: the reproducer stops at 66 MB).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.metrics import stream
from specgate.inputs.metrics.stream import read_filtered


def test_the_kept_text_is_bounded_at_the_line_that_passes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "MAX_KEPT_BYTES", 20)
    (tmp_path / "x.log").write_text("KEEP 1\nKEEP 2\nKEEP 3\nKEEP 4\n", "utf-8")
    # by hand: "KEEP 1" is 6 bytes, each later line 1 (its break) + 6: 6, 13, 20 kept,
    # and line 4 would make 21 > 20
    with pytest.raises(InputError, match="more than 0 MiB of lines") as caught:
        read_filtered(tmp_path / "x.log", "x.log", ("KEEP",))
    assert (caught.value.file, caught.value.line) == ("x.log", 4)
    # three lines without a final break are exactly 20 bytes: read (with one, 21)
    (tmp_path / "y.log").write_text("KEEP 1\nKEEP 2\nKEEP 3", "utf-8")
    assert read_filtered(tmp_path / "y.log", "y.log", ("KEEP",)) == "KEEP 1\nKEEP 2\nKEEP 3"


@pytest.mark.parametrize("needles", [("KEEP",), ("KEEP", "other")])
def test_line_breaks_for_filtered_lines_count_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, needles: tuple[str, ...]
) -> None:
    # 30 one-byte lines the filter drops still cost a line break each (the numbering):
    # 30 breaks before line 31 pass 20 there, in the one-label and several-label paths
    monkeypatch.setattr(stream, "MAX_KEPT_BYTES", 20)
    monkeypatch.setattr(stream, "_CHUNK", 16)  # across chunk boundaries too
    (tmp_path / "x.log").write_text("x\n" * 30 + "KEEP\n", "utf-8")
    with pytest.raises(InputError) as caught:
        read_filtered(tmp_path / "x.log", "x.log", needles)
    assert caught.value.line == 31
