"""Untrusted names and values cannot inject workflow commands or terminal escapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.reporters.safe_text import visible

HOSTILE = 'x\\n::error::injected%0A\\e[2J\\e]0;pwn\\a\\u2028end'
CLAIMS = f"""\
version: 1
deployments:
  - name: "{HOSTILE}"
    speculation:
      enabled: true
      draft_length: 3
      draft_depth_ratio: 0.05
    evidence:
      accept_length: 1.5
      cache_coherence_eval: true
"""


def test_visible_escapes_control_characters() -> None:
    assert visible("plain — ρ·D ✓") == "plain — ρ·D ✓"
    assert visible("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert visible("\x1b[31m\x07\x7f\x85") == "\\x1b[31m\\x07\\x7f\\x85"
    assert visible("line\u2028sep") == "line\\u2028sep"


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_hostile_deployment_name_stays_on_one_line(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = tmp_path / "h.specgate.yaml"
    claims.write_text(CLAIMS, encoding="utf-8")
    main(["check", str(claims), "--format", fmt])
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "\u2028" not in out
    for line in out.splitlines():
        # only our own annotations may start a workflow command
        assert not line.startswith("::") or line.startswith(
            ("::error title=specgate", "::warning title=specgate", "::notice title=specgate")
        ), line
    if fmt == "text":
        assert "  deployment x\\n::error::injected%0A\\x1b[2J" in out


def test_summary_escapes_hostile_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = tmp_path / "h.specgate.yaml"
    claims.write_text(CLAIMS.replace("end", "<script>|end"), encoding="utf-8")
    summary = tmp_path / "summary.md"
    main(["check", str(claims), "--summary", str(summary)])
    capsys.readouterr()
    text = summary.read_text(encoding="utf-8")
    assert "\x1b" not in text
    assert "<script>" not in text
    assert "&lt;script&gt;\\|end" in text
