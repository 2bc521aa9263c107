"""A draft length D that is an engine default at a version that is not pinned is an
assumption: every rule that would fail on it warns and names what settles it
(docs/engines.md#refusals-and-rewrites; review real.md defect 1, llama.cpp issue 5877)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_engine_reports import check, deployment

# llama.cpp issue 5877 (comment of 2024-11-19): llama-speculative with no D flag and no
# version; the run printed n_draft = 5, n_predict 673, n_accept 526 ⇒ AL = 673 / 147 =
# 4.578 ≤ 1 + 5. Read at the newest build (default 3), 4.578 > 1 + 3 = 4.
COMMAND = "./llama-speculative -m t.gguf -ngl 33 -md d.gguf -ngld 17 -p hi\n"
CLAIMS = """version: 1
deployments:
  - name: l
    speculation:
      enabled: true
      engine_config: serving/run.sh{pin}{d}
    evidence:
      accept_length: {al}
      cache_coherence_eval: true
"""


def _findings(dep: dict[str, object], code: str) -> list[dict[str, object]]:
    return [f for f in dep["findings"] if f["code"] == code]  # type: ignore[index,union-attr]


def test_unpinned_default_d_warns_sg103(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = CLAIMS.format(pin="", d="", al=4.578)
    code, report = check(
        tmp_path, {"c.specgate.yaml": claims, "serving/run.sh": COMMAND}, monkeypatch, capsys
    )
    dep = deployment(report)
    (sg103,) = _findings(dep, "SG103")
    assert sg103["severity"] == "warn"
    assert "exceeds 1 + D = 4" in str(sg103["message"])
    # Contract change: what the D rests on (the unpinned default) is in details
    assert "speculation.engine_version" in str(sg103["details"])
    assert "--spec-draft-n-max" in str(sg103["details"])
    assert "speculation.engine_version" in " ".join(dep["next_actions"])  # type: ignore[arg-type]
    assert code == 0


def test_pinned_build_default_d_fails_sg103(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Pinned at b4000: n_draft = 5 is known of that build (common/common.h:162 at
    # 74d73dc8 = b4094), so AL 6.5 > 1 + 5 = 6 is impossible: a fail; 4.578 ≤ 6 passes.
    claims = CLAIMS.format(pin="\n      engine_version: b4000", d="", al=6.5)
    code, report = check(
        tmp_path, {"c.specgate.yaml": claims, "serving/run.sh": COMMAND}, monkeypatch, capsys
    )
    (sg103,) = _findings(deployment(report), "SG103")
    assert sg103["severity"] == "fail"
    assert "exceeds 1 + D = 6" in str(sg103["message"])
    assert code == 1


def test_pinned_build_healthy_al_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = CLAIMS.format(pin="\n      engine_version: b4000", d="", al=4.578)
    code, report = check(
        tmp_path, {"c.specgate.yaml": claims, "serving/run.sh": COMMAND}, monkeypatch, capsys
    )
    assert _findings(deployment(report), "SG103") == []
    assert code == 0


def test_stated_d_wins_over_an_assumed_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The claims file says D 5 (what the engine printed); the newest build's default 3 is
    # a guess: SG301 warns and D 5 is judged, so AL 4.578 ≤ 6 raises no SG103.
    claims = CLAIMS.format(pin="", d="\n      draft_length: 5", al=4.578)
    code, report = check(
        tmp_path, {"c.specgate.yaml": claims, "serving/run.sh": COMMAND}, monkeypatch, capsys
    )
    dep = deployment(report)
    (sg301,) = _findings(dep, "SG301")
    assert sg301["severity"] == "warn"
    assert "the stated 5 is judged" in str(sg301["details"])
    assert _findings(dep, "SG103") == []
    assert dep["metrics"]["draft_length"] == 5  # type: ignore[index]
    assert code == 0


def test_unpinned_default_d_softens_sg104(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # D 3 assumed, ρ 0.2 stated: AL 2.5 / (1 + 0.2·3) = 1.5625x < claimed 2.0 ⇒ SG104
    # would fail on a guessed D; it warns. Pinned b11312 (default 3 known): it fails.
    for n, (pin, severity) in enumerate((("", "warn"), ("\n      engine_version: b11312", "fail"))):
        claims = CLAIMS.format(pin=pin, d="\n      draft_depth_ratio: 0.2", al=2.5)
        claims += "    claims:\n      speedup: 2.0\n"
        _, report = check(
            tmp_path / str(n),
            {"c.specgate.yaml": claims, "serving/run.sh": COMMAND},
            monkeypatch,
            capsys,
        )
        (sg104,) = _findings(deployment(report), "SG104")
        assert sg104["severity"] == severity
        assert "1.5625x" in str(sg104["message"])


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        # no version: read at the newest build, whose default draft-max is 3
        # (ggml-org/llama.cpp:common/common.h@74d73dc8); the stated 5 is judged
        ("", "draft length D: the claims file says 5 but serving/run.sh leaves it at the "
                "engine's default, 3"),
        # pinned b11312: the same default, now served (what every other rule judges)
        ("\n      engine_version: b11312",
         "draft length D: the claims file says 5 but serving/run.sh leaves it at the "
         "engine's default, 3; the served 3 is what every other rule judges"),
    ],
)
def test_a_default_d_is_not_what_the_file_says(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pin: str,
    message: str,
) -> None:
    # The command states no D flag: SG301 says the file leaves D at the engine's
    # default, never that the file "says 3" (new-user trial, issue 24).
    claims = CLAIMS.format(pin=pin, d="\n      draft_length: 5", al=2.5)
    _, report = check(
        tmp_path, {"c.specgate.yaml": claims, "serving/run.sh": COMMAND}, monkeypatch, capsys
    )
    (sg301,) = _findings(deployment(report), "SG301")
    assert sg301["message"] == message


TF_SCRIPT = """from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
draft = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")
out = model.generate(input_ids, assistant_model=draft, max_new_tokens=64)
"""


def test_a_transformers_default_d_is_not_what_the_script_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # generate() without num_assistant_tokens drafts GenerationConfig's default, 20 since
    # 4.46.0 (huggingface/transformers:src/transformers/generation/configuration_utils.py,
    # `kwargs.pop("num_assistant_tokens", 20)`); the version is not pinned, so it warns
    claims = CLAIMS.replace("engine_config:", "engine: transformers\n      engine_config:")
    claims = claims.format(pin="", d="\n      draft_length: 5", al=2.5)
    claims = claims.replace("serving/run.sh", "serving/gen.py")
    _, report = check(
        tmp_path, {"c.specgate.yaml": claims, "serving/gen.py": TF_SCRIPT}, monkeypatch, capsys
    )
    (sg301,) = _findings(deployment(report), "SG301")
    assert sg301["message"] == (
        "draft length D: the claims file says 5 but serving/gen.py leaves it at the "
        "engine's default, 20"
    )
