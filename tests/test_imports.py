"""Start-up hygiene: the commands that need no file load neither PyYAML nor jsonschema."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from specgate.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = sorted(m for m in ("yaml", "jsonschema", "prometheus_client") if m in sys.modules)
print("LOADED=" + ",".join(heavy))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["doctor", "--speculative-decoding", "--accept-length=2.9", "--draft-length=4"],
        ["--help"],
        ["check", "--help"],
        ["rules"],
        ["rules", "SG104"],
    ],
)
def test_command_loads_no_parser_library(argv: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=False,
    )
    loaded = [line for line in result.stdout.splitlines() if line.startswith("LOADED=")]
    assert loaded == ["LOADED="], result.stdout + result.stderr


CLEAN = """\
version: 1
deployments:
  - name: chat
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}
    evidence: {accept_length: 2.4, cache_coherence_eval: true}
"""


def _loaded_after(argv: list[str], cwd: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    return [line for line in result.stdout.splitlines() if line.startswith("LOADED=")]


def test_a_clean_file_is_checked_without_jsonschema(tmp_path: pytest.TempPathFactory) -> None:
    # jsonschema (and prometheus_client) cost a third of a one-file check: a valid file
    # is recognised without them; they load only to word errors.
    path = tmp_path / "c.specgate.yaml"  # type: ignore[operator]
    path.write_text(CLEAN, encoding="utf-8")
    assert _loaded_after(["check", "c.specgate.yaml"], str(tmp_path)) == ["LOADED=yaml"]


def test_an_invalid_file_loads_jsonschema_to_word_the_errors(
    tmp_path: pytest.TempPathFactory,
) -> None:
    path = tmp_path / "c.specgate.yaml"  # type: ignore[operator]
    path.write_text(CLEAN.replace("draft_length: 3", "draft_lenght: 3"), encoding="utf-8")
    assert _loaded_after(["check", "c.specgate.yaml"], str(tmp_path)) == [
        "LOADED=jsonschema,yaml"
    ]
