"""``speculation.enabled: false`` over a serving config that speculates (newuser-r4 #3,
#9): both are stated, so SG301 fails on the ``enabled`` line naming the serving config;
a disabled deployment gets no advice about ρ or AL (SG204, SG308)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rules.test_rules import claims, dep

from specgate.check.report import FileReport

Check = Callable[..., FileReport]


@pytest.mark.parametrize(
    ("serving", "name", "what"),
    [
        # the reviewer's: a Compose file running EAGLE-3 at D 4
        (
            "vllm serve m --speculative-config "
            "'{\"method\": \"eagle3\", \"model\": \"d\", \"num_speculative_tokens\": 4}'\n",
            "serve.sh",
            "eagle3, D 4",
        ),
        # not the reviewer's: SGLang's NEXTN (read as EAGLE) at 3 steps
        (
            "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 "
            "--speculative-algorithm EAGLE --speculative-num-steps 3 "
            "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4\n",
            "launch.sh",
            "D 3",
        ),
    ],
)
def test_off_over_a_config_that_speculates_fails(
    tmp_path: Path, check_text: Check, serving: str, name: str, what: str
) -> None:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / name).write_text(serving, encoding="utf-8")
    text = claims(dep(enabled=False, coherent=False, speculation={"engine_config": name}))
    report = check_text(text)
    (deployment,) = report.deployments
    findings = list(report.all_findings())
    (sg301,) = [f for f in findings if f.code == "SG301"]
    assert sg301.severity == "fail"
    assert "enabled: false" in sg301.message and what in sg301.message
    assert name in sg301.message
    # on the claims file's `enabled: false` line, naming the serving config's line 1
    lines = text.splitlines()
    assert sg301.line == next(i for i, t in enumerate(lines, 1) if '"enabled": false' in t)
    assert sg301.related[0][:2] == (name, 1)
    assert {f.code for f in findings} == {"SG301"}  # no SG204 / SG308 advice
    assert deployment.status == "fail"
    (action,) = deployment.next_actions
    assert action.startswith("Set speculation.enabled: true") and name in action


def test_off_over_a_config_that_speculates_nothing_agrees(
    tmp_path: Path, check_text: Check
) -> None:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serve.sh").write_text("vllm serve m --max-model-len 4096\n", encoding="utf-8")
    report = check_text(
        claims(dep(enabled=False, coherent=False, speculation={"engine_config": "serve.sh"}))
    )
    assert [f.code for f in report.all_findings()] == []
