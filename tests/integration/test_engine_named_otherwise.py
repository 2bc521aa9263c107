"""`speculation.engine` naming another engine than the serving config configures is SG301
on the claims file's line, and the deployment is read as the engine that runs (issue 24:
it was exit 2 "no sglang speculative configuration in FILE (it configures vllm …)" for a
YAML file, and SG312 "runs vllm, which is not an engine specgate reads" for a command).
Columns counted by hand: `    speculation: {enabled: true, engine: ` is 41 characters."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file

CLAIMS = """\
version: 1
deployments:
  - name: a
    speculation: {{enabled: true, engine: sglang, engine_config: {config}}}
    evidence: {{accept_length: 2}}
  - name: b
    speculation: {{enabled: true, mechanism: ngram, draft_length: 3}}
    evidence: {{accept_length: 2}}
"""
SERVING = {
    "vllm.yaml": "speculative_config:\n  method: ngram\n  num_speculative_tokens: 4\n"
    "  prompt_lookup_max: 4\n",
    "run.sh": "vllm serve m --speculative-config "
    "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4}'\n",
}


@pytest.mark.parametrize("config", sorted(SERVING))
def test_an_engine_the_file_does_not_configure_is_sg301(
    config: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / config).write_text(SERVING[config], "utf-8")
    (tmp_path / "s.yaml").write_text(CLAIMS.format(config=config), "utf-8")
    monkeypatch.chdir(tmp_path)
    report = check_file(Path("s.yaml"), "s.yaml", CheckOptions())
    assert report.error is None, report.error
    first, other = report.deployments
    (sg301,) = [f for f in first.findings if f.code == "SG301"]
    assert (sg301.file, sg301.line, sg301.column, sg301.severity) == ("s.yaml", 4, 42, "fail")
    assert sg301.message.startswith(
        f"engine: the claims file says sglang but {config} says vllm"
    )
    assert not [f for f in first.findings if f.code == "SG312"]
    # read as vLLM runs it: D 4 from num_speculative_tokens, mechanism ngram
    assert first.metrics.draft_length == 4
    assert other.name == "b" and other.metrics.accept_length == 2
