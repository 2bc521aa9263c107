"""``specgate measure --write`` changes the evidence block of one deployment and no
other line (newuser findings F8, F9, F24): a file without a final newline, an unused
anchor on an ``x-`` key, a deployment whose blocks are indented by 8 all keep every
line outside that evidence block byte-identical. Expected texts written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.measure.writer import write_evidence

NEW = {"accept_length": 4.6, "provenance": {"measured_at": "2026-01-01", "steps": 240}}

HEAD = """\
version: 1
deployments:
  - name: chat
    model:
        name: "meta-llama/Llama-3.1-8B-Instruct"    # indent 8
    speculation:
        enabled: true
        mechanism: 'eagle3'
        draft_length: 3
"""
OLD_EVIDENCE = """\
    evidence:
        accept_length: 2.1   # measured by hand last month
        measured_speedup: 1.9
        provenance:
            measured_at: 2025-01-01
            dataset: sharegpt
"""
NEW_EVIDENCE = """\
    evidence:
        accept_length: 4.6
        measured_speedup: 1.9
        provenance:
            measured_at: '2026-01-01'
            steps: 240
"""
TAIL = """\
  - name: other
    speculation: {enabled: false}   # keep me
"""


def _written(tmp_path: Path, text: str, name: str = "chat") -> str:
    path = tmp_path / "c.specgate.yaml"
    path.write_text(text, encoding="utf-8")
    write_evidence(path, name, NEW)
    return path.read_text(encoding="utf-8")


def test_only_the_evidence_lines_change(tmp_path: Path) -> None:
    """F8: model and speculation (indented by 8 under a 2-space file) are not
    re-indented; the evidence follows its own 8-space step; the end-of-line comment
    of the replaced AL goes with the old value."""
    assert _written(tmp_path, HEAD + OLD_EVIDENCE + TAIL) == HEAD + NEW_EVIDENCE + TAIL


def test_a_file_without_a_final_newline(tmp_path: Path) -> None:
    """F24: evidence last in the file, and evidence of a deployment before the last."""
    text = HEAD + OLD_EVIDENCE
    assert _written(tmp_path, text.rstrip("\n")) == (HEAD + NEW_EVIDENCE).rstrip("\n")
    text = HEAD + OLD_EVIDENCE + TAIL
    assert _written(tmp_path, text.rstrip("\n")) == (HEAD + NEW_EVIDENCE + TAIL).rstrip("\n")
    # a deployment without evidence, last and without a final newline: inserted
    bare = HEAD.rstrip("\n")
    assert _written(tmp_path, bare) == HEAD + (
        "    evidence:\n        accept_length: 4.6\n        provenance:\n"
        "            measured_at: '2026-01-01'\n            steps: 240"
    )


def test_an_unused_anchor_on_an_x_key_is_kept(tmp_path: Path) -> None:
    """F9: the library drops an unused anchor; the original line stays as it was."""
    text = "version: 1\nx-common: &c {a: 1}\n" + HEAD.split("\n", 1)[1] + OLD_EVIDENCE
    expected = "version: 1\nx-common: &c {a: 1}\n" + HEAD.split("\n", 1)[1] + NEW_EVIDENCE
    assert _written(tmp_path, text) == expected


def test_write_says_what_it_kept_and_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """F8: measured_speedup 1.9 is from another run; provenance.dataset is dropped."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "c.specgate.yaml").write_text(HEAD + OLD_EVIDENCE + TAIL, encoding="utf-8")
    (tmp_path / "p.prom").write_text(
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100\n'
        'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 300\n'
        'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 150\n',
        encoding="utf-8",
    )
    code = main(
        [
            "measure",
            "--from",
            "p.prom",
            "--metrics-format",
            "vllm-prometheus",
            "--write",
            "c.specgate.yaml",
            "--deployment",
            "chat",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "wrote the evidence of chat" in out
    assert err.count("\n") == 1
    assert "kept evidence.measured_speedup" in err and "not re-measured" in err
    assert "dropped provenance.dataset" in err
    # 1 + 150/100 = 2.5
    assert "        accept_length: 2.5\n        measured_speedup: 1.9\n" in (
        tmp_path / "c.specgate.yaml"
    ).read_text(encoding="utf-8")


def test_comment_lines_after_the_block_are_not_doubled(tmp_path: Path) -> None:
    """Comment lines after the evidence's last key stay once, after the block."""
    text = (
        "version: 1\ndeployments:\n  - name: chat\n    evidence:\n      # the AL\n"
        "      accept_length: 2   # old\n      # trailing in block\n    # after block\n"
        "    model: {name: m}\n"
    )
    assert _written(tmp_path, text) == (
        "version: 1\ndeployments:\n  - name: chat\n    evidence:\n      # the AL\n"
        "      accept_length: 4.6\n      provenance:\n        measured_at: '2026-01-01'\n"
        "        steps: 240\n      # trailing in block\n    # after block\n"
        "    model: {name: m}\n"
    )
