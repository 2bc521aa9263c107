"""The shortcuts taken for speed give what the long way gives (positions counted by hand)."""

from __future__ import annotations

import os
from pathlib import Path

from specgate.load.document import NodePosition, Positions, Span
from specgate.load.read import parse_text
from specgate.project.discovery import _real_path

TEXT = """\
version: 1
deployments:
  - name: a
    tags: [x, y]
"""


def test_positions_are_made_on_look_up_and_equal_the_rows() -> None:
    doc = parse_text(TEXT, "f.yaml", json_syntax=False)
    assert isinstance(doc.positions, Positions)
    # line 3 "  - name: a": key "name" at column 5, value "a" at column 11
    assert doc.positions[("deployments", 0, "name")] == NodePosition(
        "scalar", Span(3, 11), Span(3, 5)
    )
    # a list item has no key; "y" is at line 4, column 15
    assert doc.positions[("deployments", 0, "tags", 1)] == NodePosition("scalar", Span(4, 15))
    assert ("deployments", 0, "tags") in doc.positions
    assert ("deployments", 1) not in doc.positions
    assert doc.positions.get(("nope",)) is None
    assert len(doc.positions) == 8  # root, version, deployments, item, name, tags, x, y
    assert list(doc.positions)[:3] == [(), ("version",), ("deployments",)]
    assert dict(doc.positions) == {path: doc.positions[path] for path in doc.positions}


def test_a_text_with_an_anchor_reads_as_one_without() -> None:
    # The alias bookkeeping runs only when the text holds "&": the result is the same.
    plain = parse_text("a: 1\nb: [2, 3]\n", "f.yaml", json_syntax=False)
    anchored = parse_text("a: &one 1\nb: [2, 3]\n", "f.yaml", json_syntax=False)
    assert plain.data == anchored.data == {"a": 1, "b": [2, 3]}
    assert plain.positions[("b", 1)] == anchored.positions[("b", 1)] == NodePosition(
        "scalar", Span(2, 8)
    )


def test_real_path_of_files_equals_realpath(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "c.specgate.yaml").write_text("version: 1\n", encoding="utf-8")
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    (real / "link.specgate.yaml").symlink_to(real / "c.specgate.yaml")
    folders: dict[str, str] = {}
    for path in (
        real / "c.specgate.yaml",
        tmp_path / "linked" / "c.specgate.yaml",  # through a symlinked folder
        real / "link.specgate.yaml",  # a symlinked file
        tmp_path / "linked" / "missing.specgate.yaml",
    ):
        assert _real_path(path, folders) == os.path.realpath(path)
