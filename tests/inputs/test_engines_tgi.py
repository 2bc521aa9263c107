"""Text Generation Inference (inputs/engines/tgi.py): values from TGI's own source,
``huggingface/text-generation-inference:launcher/src/main.rs@v3.3.7`` (``--speculate``,
clap ``long, env``) and ``server/text_generation_server/models/__init__.py@v3.3.7``
(``get_model``: Medusa heads, MLP speculator ``n_predict``, the start-up refusal)."""

from __future__ import annotations

from pathlib import Path

from specgate.check.run import CheckOptions, check_file
from specgate.inputs.engines import read_engine_file

MEDUSA = (
    '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "medusa_num_heads": 4, '
    '"base_model_name_or_path": "lmsys/vicuna-7b-v1.3", "num_attention_heads": 32, '
    '"num_key_value_heads": 32, "hidden_size": 4096, "num_hidden_layers": 32, '
    '"vocab_size": 32000, "max_position_embeddings": 2048}'
)
PLAIN = MEDUSA.replace('"medusa_num_heads": 4, ', "")


def read(tmp_path: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    (tmp_path / name).write_text(text, encoding="utf-8")
    return read_engine_file(tmp_path / name, name)


def test_speculate_flag_is_d(tmp_path: Path) -> None:
    c = read(tmp_path, "s.sh", "text-generation-launcher --model-id org/m --speculate 3\n")
    assert (c.engine, c.draft_length, c.verify_tokens, c.target_model) == ("tgi", 3, 4, "org/m")
    assert c.mechanism is None  # the model's config decides (get_model)
    # the value's column: "3" after "--speculate "
    before = "text-generation-launcher --model-id org/m --speculate "
    assert c.spans["draft_length"].column == len(before) + 1


def test_speculate_with_equals(tmp_path: Path) -> None:
    c = read(tmp_path, "s.sh", "text-generation-launcher --model-id=org/m --speculate=2\n")
    assert (c.draft_length, c.target_model) == (2, "org/m")


def test_speculate_variable_before_the_command(tmp_path: Path) -> None:
    c = read(tmp_path, "s.sh", "SPECULATE=2 text-generation-launcher --model-id org/m\n")
    assert (c.engine, c.draft_length) == ("tgi", 2)


def test_flag_wins_over_variable(tmp_path: Path) -> None:
    # clap reads the variable only for a flag not given on the command line
    c = read(tmp_path, "s.sh", "SPECULATE=2 text-generation-launcher --speculate 4\n")
    assert c.draft_length == 4


def test_container_environment(tmp_path: Path) -> None:
    text = (
        "services:\n"
        "  tgi:\n"
        "    image: ghcr.io/huggingface/text-generation-inference:3.3.7\n"
        "    environment:\n"
        "      MODEL_ID: org/m\n"
        '      SPECULATE: "2"\n'
    )
    c = read(tmp_path, "compose.yaml", text)
    assert (c.engine, c.draft_length, c.target_model) == ("tgi", 2, "org/m")
    assert c.version == "3.3.7"  # the image tag
    assert c.spans["draft_length"].line == 6


def test_abbreviation_is_not_speculate(tmp_path: Path) -> None:
    # clap matches long flags exactly: --specul is no flag of the launcher
    (tmp_path / "s.sh").write_text("text-generation-launcher --specul 3\n", encoding="utf-8")
    import pytest

    from specgate.core.errors import InputError

    with pytest.raises(InputError):
        read_engine_file(tmp_path / "s.sh", "s.sh")


def _report(  # type: ignore[no-untyped-def]
    tmp_path: Path, launch: str, config: str, enabled: str = "true", *, name: str = "tgi.sh",
    pin: str = "",
):
    (tmp_path / name).write_text(launch, encoding="utf-8")
    (tmp_path / "config.json").write_text(config, encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n"
        "    model: {name: org/m, hf_config: config.json}\n"
        f"    speculation: {{enabled: {enabled}, {pin}engine_config: {name}}}\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    return report


def _check(
    tmp_path: Path, launch: str, config: str, enabled: str = "true", name: str = "tgi.sh"
) -> str:
    report = _report(tmp_path, launch, config, enabled, name=name)
    deployment = report.deployments[0]
    engine = deployment.deployment.inputs.engine  # type: ignore[union-attr]
    assert engine is not None
    codes = " ".join(f"{f.code}:{f.message}" for f in deployment.findings)
    return f"{engine.mechanism} {engine.draft_length} {codes}"


def test_medusa_heads_above_speculate_are_refused(tmp_path: Path) -> None:
    out = _check(tmp_path, "text-generation-launcher --model-id org/m --speculate 5\n", MEDUSA)
    assert out.startswith("medusa 5 ")
    assert "Speculate is set to `5` but this medusa models only has `4` heads" in out


def test_speculate_below_the_heads_is_d(tmp_path: Path) -> None:
    out = _check(tmp_path, "SPECULATE=3 text-generation-launcher --model-id org/m\n", MEDUSA)
    assert out.startswith("medusa 3 ")
    assert "Speculate is set" not in out


# get_model@v3.3.7: `if speculate is not None: ... else: set_speculate(speculate_medusa)`
# (config_dict["medusa_num_heads"]; an MLP speculator alike with n_predict): a launch
# without --speculate serving a Medusa model drafts with every head.
def test_medusa_without_speculate_drafts_with_every_head(tmp_path: Path) -> None:
    out = _check(tmp_path, "text-generation-launcher --model-id org/m --port 8080\n", MEDUSA)
    assert out.startswith("medusa 4 ")  # MEDUSA's medusa_num_heads
    assert "Speculate is set" not in out


def test_mlp_speculator_without_speculate_drafts_n_predict(tmp_path: Path) -> None:
    mlp = PLAIN.replace('"model_type": "llama"', '"model_type": "mlp_speculator", "n_predict": 3')
    out = _check(tmp_path, "text-generation-launcher --model-id org/m\n", mlp)
    assert out.startswith("mlp_speculator 3 ")


def test_container_of_a_medusa_model_without_speculate(tmp_path: Path) -> None:
    compose = (
        "services:\n  tgi:\n    image: ghcr.io/huggingface/text-generation-inference:3.3.7\n"
        "    environment:\n      MODEL_ID: org/m\n"
    )
    out = _check(tmp_path, compose, MEDUSA, name="compose.yaml")
    assert out.startswith("medusa 4 ")


def test_speculation_off_over_a_medusa_model_is_sg301(tmp_path: Path) -> None:
    # the newcomer's report: `enabled: false` over this launch was "ready"; TGI runs
    # Medusa with 4 heads, so the two stated values disagree (README: SG301 fail)
    out = _check(tmp_path, "text-generation-launcher --model-id org/m\n", MEDUSA, "false")
    assert out.startswith("medusa 4 SG301:")
    assert "enabled: false" in out and "(medusa, D 4)" in out


def test_a_plain_model_without_speculate_still_configures_nothing(tmp_path: Path) -> None:
    # get_model: speculate unset and no speculator in the config: set_speculate(0)
    (tmp_path / "tgi.sh").write_text("text-generation-launcher --model-id org/m\n", "utf-8")
    (tmp_path / "config.json").write_text(PLAIN, encoding="utf-8")
    for enabled in ("true", "false"):
        (tmp_path / "c.specgate.yaml").write_text(
            "version: 1\ndeployments:\n  - name: d\n"
            "    model: {name: org/m, hf_config: config.json}\n"
            f"    speculation: {{enabled: {enabled}, engine_config: tgi.sh}}\n",
            encoding="utf-8",
        )
        report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
        if enabled == "true":
            # degrade, never stop (docs/rules.md SG312): a finding on this deployment
            assert report.error is None
            unread = [f for f in report.deployments[0].findings if f.code == "SG312"]
            assert len(unread) == 1
            assert "no speculative decoding configured in tgi.sh" in unread[0].message
        else:
            assert report.error is None
            assert not report.deployments[0].findings


def test_a_plain_model_config_leaves_the_mechanism_unsettled(tmp_path: Path) -> None:
    # TGI runs n-gram for a plain --model-id, but the config given may be the base model
    # of a Medusa repository named by --model-id: not settled, so no SG301 rests on it
    out = _check(tmp_path, "text-generation-launcher --model-id org/m --speculate 2\n", PLAIN)
    assert out.startswith("None 2 ")
    assert "SG301" not in out


def test_mlp_speculator_n_predict(tmp_path: Path) -> None:
    mlp = PLAIN.replace('"model_type": "llama"', '"model_type": "mlp_speculator", "n_predict": 3')
    out = _check(tmp_path, "text-generation-launcher --model-id org/m --speculate 4\n", mlp)
    assert out.startswith("mlp_speculator 4 ")
    assert "this mlp_speculator models only has `3` heads" in out


def test_medusa_heads_draft_in_one_pass(tmp_path: Path) -> None:
    # layers/medusa.py@v3.3.7 (MedusaHeadV2.forward: "Compute all medusa heads at the
    # same time"): every draft from one forward, so the draft cost is ρ, not ρ·D.
    # The newcomer's numbers: AL 2.2, ρ 0.05, D 3: S = 2.2 / (1 + 0.05·1) = 2.0952
    # (per_token would give 2.2 / (1 + 0.05·3) = 1.913).
    (tmp_path / "tgi.sh").write_text(
        "text-generation-launcher --model-id org/m --speculate 3\n", encoding="utf-8"
    )
    (tmp_path / "config.json").write_text(MEDUSA, encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n"
        "    model: {name: org/m, hf_config: config.json}\n"
        "    speculation: {enabled: true, engine_config: tgi.sh, draft_depth_ratio: 0.05}\n"
        "    evidence: {accept_length: 2.2}\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    metrics = report.deployments[0].metrics
    assert metrics is not None
    assert metrics.draft_passes == "single"
    assert round(float(metrics.theoretical_speedup or 0), 4) == 2.0952


def test_mlp_speculator_stays_per_token(tmp_path: Path) -> None:
    # layers/mlp.py runs the n_predict stages one after another: no one-pass claim
    mlp = PLAIN.replace('"model_type": "llama"', '"model_type": "mlp_speculator", "n_predict": 3')
    (tmp_path / "tgi.sh").write_text("text-generation-launcher --model-id org/m\n", "utf-8")
    (tmp_path / "config.json").write_text(mlp, encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n"
        "    model: {name: org/m, hf_config: config.json}\n"
        "    speculation: {enabled: true, engine_config: tgi.sh}\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    engine = report.deployments[0].deployment.inputs.engine  # type: ignore[union-attr]
    assert engine is not None and engine.draft_passes is None


def _sg204_action(tmp_path: Path, model: str) -> str:
    (tmp_path / "tgi.sh").write_text(
        "text-generation-launcher --model-id org/m --speculate 3\n", encoding="utf-8"
    )
    (tmp_path / "config.json").write_text(PLAIN, encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n"
        f"    model: {{name: org/m{model}}}\n"
        "    speculation: {enabled: true, engine_config: tgi.sh}\n"
        "    evidence: {accept_length: 2.2}\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert [f.code for f in report.deployments[0].findings if f.code == "SG204"] == ["SG204"]
    return " | ".join(report.deployments[0].next_actions)


def test_unsettled_mechanism_names_the_key_that_settles_it(tmp_path: Path) -> None:
    # the newcomer's report: without model.hf_config TGI's mechanism was unknown and
    # only JSON's inputs.engine.notes said why; SG204's next action (text output) names it
    action = _sg204_action(tmp_path, "")
    assert ("Settle the mechanism: give model.hf_config (TGI runs the speculator of the "
            "model it serves) or state speculation.mechanism.") in action
    # a plain model config read: only speculation.mechanism settles it
    action = _sg204_action(tmp_path, ", hf_config: config.json")
    assert "Settle the mechanism: state speculation.mechanism. Measure ρ" in action


def _refusal_severity(tmp_path: Path, pin: str) -> list[str]:
    launch = "text-generation-launcher --model-id org/m --speculate 5\n"
    report = _report(tmp_path, launch, MEDUSA, pin=pin)
    return [
        f.severity
        for f in report.deployments[0].findings
        if "Speculate is set to `5`" in f.message
    ]


def test_heads_refusal_fails_at_the_release_read(tmp_path: Path) -> None:
    # get_model@v3.3.7 raises it: pinned there, a fail
    assert _refusal_severity(tmp_path, 'engine_version: "3.3.7", ') == ["fail"]


def test_heads_refusal_warns_where_not_read(tmp_path: Path) -> None:
    # read at v3.3.7 only: an older pin, or no pin, warns (issue 27)
    assert _refusal_severity(tmp_path, 'engine_version: "2.0.0", ') == ["warn"]
    assert _refusal_severity(tmp_path, "") == ["warn"]
