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
