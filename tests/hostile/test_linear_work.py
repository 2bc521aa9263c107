"""H4 and H5: work bounded by structure, not by a number or a shape in the checked
repository (DESIGN.md §11, "parsing is linear in the input")."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs import cmdline

from .conftest import InProcess, with_engine


def test_an_engine_command_file_is_split_once(
    sg: InProcess, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine search and the reader both ask for the commands of e.txt: one split.
    (repo / "e.txt").write_text(
        "vllm serve m --speculative-config "
        '\'{"method": "eagle3", "num_speculative_tokens": 3, "model": "d"}\' '
        "--x=" + "a" * 1000 + "\n",
        "utf-8",
    )
    (repo / "c.specgate.yaml").write_text(with_engine("e.txt", drop_draft_length=True), "utf-8")
    calls = {"n": 0}
    real = cmdline._tokens

    def counting(text: str) -> object:
        calls["n"] += 1
        return real(text)

    monkeypatch.setattr(cmdline, "_tokens", counting)
    cmdline._split_once.cache_clear()
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code in (0, 1), result.err
    assert calls["n"] == 1
