"""CI and the scripts run on any machine: no path of one machine is written in them
(issue 23: `.ci/run` found the live vLLM environment at a path of one machine). The vLLM
environment lives in a cache folder under ``$XDG_CACHE_HOME`` (``.ci/run``), the engines'
environments under ``${XDG_CACHE_HOME:-~/.cache}/specgate-oracle`` by default."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# absolute paths of the machines the project was written on (published users' own
# paths, /home/USER/…, are data the tests quote)
_MACHINE = re.compile(r"(?<![\w:])/(?:work|root)/")


def test_ci_scripts_and_sources_name_no_machine_path() -> None:
    files = [
        ROOT / ".ci" / "run",
        *sorted((ROOT / "scripts").rglob("*")),
        *sorted((ROOT / "src").rglob("*.py")),
        *sorted((ROOT / "tests" / "integration").rglob("*.py")),
    ]
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        if path.is_file() and path.suffix in ("", ".sh", ".py", ".md")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _MACHINE.search(line)
    ]
    assert found == []
