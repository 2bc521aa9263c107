"""Findings sit at the thing they name (new-user trial): SG310 at the removed flag, not
its value; a value a Compose `${VAR}` takes from `.env` at the `${VAR}` itself, inside a
JSON string or a command string, and the message still names the `.env` line
(docs/reports.md). Lines and columns counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.core.findings import Finding


def _findings(root: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> list[Finding]:
    (root / ".git").mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")
    monkeypatch.chdir(root)
    report = check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    return list(deployment.findings)


def _claims(mechanism: str, d: int, engine: str, config: str, pin: str = "") -> str:
    return (
        "version: 1\ndeployments:\n  - name: x\n    speculation:\n      enabled: true\n"
        f"      mechanism: {mechanism}\n      draft_length: {d}\n      engine: {engine}\n"
        f"{pin}      engine_config: {config}\n    evidence:\n      accept_length: 1.5\n"
    )


def test_sg310_sits_at_the_removed_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `llama-server -m t.gguf -md d.gguf ` is 12 + 1 + 2 + 1 + 6 + 1 + 3 + 1 + 6 + 1 = 34
    # characters: --draft-max at column 35 (its value 8 at 47)
    found = _findings(tmp_path, monkeypatch, {
        "ll.sh": "#!/bin/bash\nllama-server -m t.gguf -md d.gguf --draft-max 8\n",
        "specgate.yaml": _claims("draft_model", 8, "llamacpp", "ll.sh",
                                 '      engine_version: "b9600"\n'),
    })
    (sg310,) = [f for f in found if f.code == "SG310"]
    assert (sg310.file, sg310.line, sg310.column, sg310.severity) == ("ll.sh", 2, 35, "fail")


COMPOSE_JSON = (
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n"
    "    command: [\"--model\", \"M\", \"--speculative-config\", "
    "'{\"method\":\"ngram\",\"num_speculative_tokens\":${D},\"prompt_lookup_max\":4}']\n"
)


def test_a_dotenv_value_in_a_json_string_sits_at_its_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # line 4: `    command: ` 13, `[` 14, `"--model"` 15-23, `, ` 24-25, `"M"` 26-28, `, `
    # 29-30, `"--speculative-config"` 31-52, `, ` 53-54, `'` 55, `{` 56, `"method"` 57-64,
    # `:` 65, `"ngram"` 66-72, `,` 73, `"num_speculative_tokens"` 74-97, `:` 98 ⇒ `$` 99
    found = _findings(tmp_path, monkeypatch, {
        "compose/compose.yaml": COMPOSE_JSON,
        "compose/.env": "D=7\n",
        "specgate.yaml": _claims("ngram", 4, "vllm", "compose/compose.yaml"),
    })
    (sg301,) = [f for f in found if f.code == "SG301"]
    assert list(sg301.related) == [
        ("compose/compose.yaml", 4, 99)
    ]
    assert "compose/.env:1 (D), read by compose/compose.yaml, says 7" in sg301.message
    (sg308,) = [f for f in found if f.code == "SG308"]
    assert (sg308.file, sg308.line, sg308.column) == ("compose/compose.yaml", 4, 99)


COMPOSE_SGLANG = (
    "services:\n  sglang:\n    image: lmsysorg/sglang:v0.5.2\n"
    "    command: python3 -m sglang.launch_server --model-path M --speculative-algorithm "
    "EAGLE --speculative-draft-model-path D --speculative-num-steps ${STEPS} "
    "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4\n"
)


def test_a_dotenv_value_in_a_command_string_sits_at_its_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # line 4: `    command: ` 13, `python3 -m sglang.launch_server ` 32 (45),
    # `--model-path M ` 15 (60), `--speculative-algorithm EAGLE ` 30 (90),
    # `--speculative-draft-model-path D ` 33 (123), `--speculative-num-steps ` 24 (147)
    # ⇒ `${STEPS}` at 148 (the flag at 124, where it was)
    found = _findings(tmp_path, monkeypatch, {
        "compose/compose.yaml": COMPOSE_SGLANG,
        "compose/.env": "STEPS=3\n",
        "specgate.yaml": _claims("eagle", 5, "sglang", "compose/compose.yaml"),
    })
    (sg301,) = [f for f in found if f.code == "SG301"]
    assert list(sg301.related) == [
        ("compose/compose.yaml", 4, 148)
    ]
    assert "compose/.env:1 (STEPS), read by compose/compose.yaml, says 3" in sg301.message
