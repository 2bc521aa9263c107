"""A finding about D sits where the engine reads the D it serves, whether or not the
claims file restates the same D (README: "a finding about D lands on the
`num_speculative_tokens` line of your serving config"). Columns counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file

SERVE = (
    "#!/bin/bash\n"
    "vllm serve M --speculative-config "
    "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'\n"
)
CLAIMS = """\
version: 1
deployments:
  - name: v
    speculation:
      enabled: true
      mechanism: ngram
{d}      engine: vllm
      engine_config: serve.sh
    evidence:
      accept_length: 1.5
"""


@pytest.mark.parametrize("d", ["      draft_length: 3\n", ""])
def test_sg308_sits_at_the_served_d(
    d: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(SERVE, "utf-8")
    (tmp_path / "specgate.yaml").write_text(CLAIMS.format(d=d), "utf-8")
    monkeypatch.chdir(tmp_path)
    report = check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    (sg308,) = [f for f in deployment.findings if f.code == "SG308"]
    # line 2: `vllm serve M --speculative-config '` 35 characters, `{` 36, `"method"`
    # 37-44, `:` 45, `"ngram"` 46-52, `,` 53, `"num_speculative_tokens"` 54-77, `:` 78
    # ⇒ the 3 at column 79
    assert (sg308.file, sg308.line, sg308.column) == ("serve.sh", 2, 79)
