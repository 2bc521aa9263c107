"""SG314 for a name the script sets from a command substitution sits at the expansion
in the command (its `$`), not at the start of the line, and the message names the line
where `$(…)` sets it, as a sourced file's name already did (docs/engines.md#unsettled-values:
the finding points at the expansion's own line and column). Lines and columns counted
by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.core.findings import Finding

COMMAND = (
    'vllm serve M --speculative-config "{\\"method\\":\\"ngram\\",'
    '\\"num_speculative_tokens\\":$N}"\n'
)
CLAIMS = """\
version: 1
deployments:
  - name: v
    speculation: {enabled: true, mechanism: ngram, engine: vllm, engine_config: s/inl.sh}
"""


def _sg314(root: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> Finding:
    (root / ".git").mkdir()
    (root / "s").mkdir()
    (root / "s" / "inl.sh").write_text(script, "utf-8")
    (root / "specgate.yaml").write_text(CLAIMS, "utf-8")
    monkeypatch.chdir(root)
    report = check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    (found,) = [f for f in deployment.findings if f.code == "SG314"]
    return found


# line 3: `vllm serve M --speculative-config ` is 34 characters, `"` 35, `{` 36,
# `\"method\"` 37-46, `:` 47, `\"ngram\"` 48-56, `,` 57, `\"num_speculative_tokens\"`
# 58-83, `:` 84 ⇒ the `$` of `$N` at column 85


def test_a_name_set_by_command_substitution_is_located_at_its_expansion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _sg314(tmp_path, monkeypatch, "#!/bin/bash\nN=$(cat /etc/n)\n" + COMMAND)
    assert (found.file, found.line, found.column, found.severity) == ("s/inl.sh", 3, 85, "fail")
    assert "(`$N` (set from `$(cat /etc/n)` at s/inl.sh:2))" in found.message


def test_a_name_from_a_sourced_file_keeps_its_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _sg314(tmp_path, monkeypatch, "#!/bin/bash\n. ./spec.env\n" + COMMAND)
    assert (found.line, found.column) == (3, 85)
