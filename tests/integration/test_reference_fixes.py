"""Regression tests for bugs found while wiring referenced files end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.reporters.json_report import deployment_inputs

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(autouse=True)
def _in_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)


def codes(path: str) -> list[tuple[str, str | None, int | None, int | None]]:
    report = check_file(Path(path), path, CheckOptions())
    assert report.error is None, report.error
    return [(f.code, f.file, f.line, f.column) for d in report.deployments for f in d.findings]


def test_claims_draft_length_that_differs_from_the_engine_is_judged_as_its_own_chain() -> None:
    path = "integration/fixes/claims-d-differs-from-engine.specgate.yaml"
    report = check_file(Path(path), path, CheckOptions())
    (deployment,) = report.deployments
    m = deployment.metrics
    # contract change (docs/trust.md#one-cause-one-finding): the served D drives every rule, D and
    # N_verify from the one file that states them
    assert m.draft_length == 7
    assert m.verify_tokens == 8
    assert m.tile_aligned is False  # G·8 = 64 of a 128-row tile
    found = [f.code for f in deployment.findings]
    assert found.count("SG301") == 1


def test_speculation_profile_inconsistency_points_at_the_rates_line() -> None:
    # bench/speculation_profile-rising.json, line 6: '  "marginal_accept_rates": [0.6, 0.7, 0.2],'
    # The first offending rate is 0.7 (a rise from 0.6): 2 spaces + '"marginal_accept_rates"'
    # (23) + ': ' (2) + '[' (1) + '0.6, ' (5) = 33 characters ⇒ column 34; not line 7
    # (mean_accept_length).
    assert ("SG305", "integration/bench/speculation_profile-rising.json", 6, 34) in codes(
        "integration/rules/sg305-fail.specgate.yaml"
    )


def test_prometheus_labels_select_one_model_of_a_scrape() -> None:
    # The schema accepts `labels`; the fixture's comment works AL = 1 + 225/150 = 2.5.
    path = "integration/fixes/prometheus-labels.specgate.yaml"
    report = check_file(Path(path), path, CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    assert [f.code for f in deployment.findings if f.code in ("SG001", "SG002")] == []
    acceptance = deployment_inputs(deployment)["acceptance"]
    assert acceptance["formula"] == "1 + 225/150"
    assert acceptance["accept_length"] == 2.5
    assert acceptance["draft_length"] == 3
    assert "summed over engine=0, engine=1" in acceptance["note"]


def test_prometheus_two_models_without_labels_is_sg316() -> None:
    # Contract change (issue 24, degrade never stop): a scrape of two models is a form
    # specgate does not read without `labels:`, no value the format forbids, so SG316
    # warns at the first drafts sample (line 3, column 1), not exit 2 for the run.
    path = "integration/fixes/prometheus-two-models.specgate.yaml"
    report = check_file(Path(path), path, CheckOptions())
    assert report.error is None, report.error
    (found,) = [f for d in report.deployments for f in d.findings if f.code == "SG316"]
    assert (found.file, found.line, found.column, found.severity) == (
        "integration/fixes/bench/two-models.prom", 3, 1, "warn",
    )
    assert found.message.startswith(
        "several models in one scrape: model_name=a, model_name=b; choose one with "
        "`labels: {model_name: …}` in evidence.metrics"
    )


def _sg303(path: str) -> list[str]:
    report = check_file(Path(path), path, CheckOptions())
    assert report.error is None, report.error
    return [
        f"{f.message} | {f.details}"
        for d in report.deployments
        for f in d.findings
        if f.code == "SG303"
    ]


def test_sg303_uses_the_served_context_cap() -> None:
    # Draft 2048 positions, target 131072, vLLM max-model-len 2048: min(131072, 2048) =
    # 2048 ≤ 2048, so no warning (before: compared with 131072 and warned).
    assert _sg303("integration/fixes/sg303-served-2048.specgate.yaml") == []
    # max_model_len 8K = 8192 (vLLM's human_readable_int: K = 1024): min(131072, 8192) = 8192.
    (message,) = _sg303("integration/fixes/sg303-served-8k.specgate.yaml")
    assert message.startswith(
        "draft max_position_embeddings 2048 is below the served context 8192 (max_model_len "
        "in integration/fixes/serving/vllm-eagle3-max-model-len-8k.yaml)"
    )
    # vLLM EAGLE-3: the automatic raise of the draft's positions (vllm#48894) is named,
    # in details (Contract change, issue 26)
    assert message.endswith(
        "lose the speedup; vLLM raises an EAGLE draft's max_position_embeddings to the "
        "served context (vllm#48894), which prevents the crash but not the acceptance loss"
    )


def test_sg303_without_engine_cap_names_the_target_limit() -> None:
    (message,) = _sg303("integration/rules/sg303-fail.specgate.yaml")
    assert message.startswith(
        "draft max_position_embeddings 2048 is below the target's max_position_embeddings "
        "131072 (real/hf-config/config/meta-llama--Meta-Llama-3.1-8B_config.json)"
    )


INLINE_PROFILE = """\
version: 1
deployments:
  - name: chat-8b
    speculation:
      enabled: false
      draft_length: 4
    evidence:
{al}      metrics: {{format: per-position, {key}: [0.7, {second}, 0.3, 0.2]}}
"""


def _sg305(tmp_path: Path, **fields: str) -> list[tuple[str | None, int | None, int | None]]:
    path = tmp_path / "claims.specgate.yaml"
    path.write_text(INLINE_PROFILE.format(**fields), encoding="utf-8")
    report = check_file(path, "claims.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    return [
        (f.file, f.line, f.column)
        for d in report.deployments
        for f in d.findings
        if f.code == "SG305"
    ]


def test_inline_rising_marginal_points_at_the_first_rising_rate(tmp_path: Path) -> None:
    # Line 8: "      metrics: {format: per-position, marginal: [0.7, " is 6 spaces +
    # "metrics:" (8) + " " + "{format: per-position," (22) + " " + "marginal:" (9) + " "
    # + "[" + "0.7, " (5) = 54 characters ⇒ the 0.8 (a rise) at column 55.
    assert _sg305(tmp_path, al="", key="marginal", second="0.8") == [
        ("claims.specgate.yaml", 8, 55)
    ]


def test_inline_conditional_above_one_points_at_that_rate(tmp_path: Path) -> None:
    # conditional [0.7, 1.2, 0.3, 0.2] ⇒ marginal 0.7, 0.84 (a rise, from c = 1.2 at
    # index 1). "conditional" is 3 characters longer than "marginal" ⇒ column 58.
    assert _sg305(tmp_path, al="", key="conditional", second="1.2") == [
        ("claims.specgate.yaml", 8, 58)
    ]


def test_inline_sum_mismatch_points_at_the_rates_key(tmp_path: Path) -> None:
    # marginal [0.7, 0.5, 0.3, 0.2] is in order; 1 + 1.7 = 2.7 against AL 2.0 ⇒ only the
    # sum fails: the finding sits on the "marginal" key, on line 9 (the accept_length
    # line comes first). "      metrics: {format: per-position, " is 6 + 8 + 1 + 22 + 1
    # = 38 characters ⇒ column 39.
    al = "      accept_length: 2.0\n"
    assert _sg305(tmp_path, al=al, key="marginal", second="0.5") == [
        ("claims.specgate.yaml", 9, 39)
    ]


def test_unknown_key_in_a_file_reference_is_sg001_at_that_key(tmp_path: Path) -> None:
    path = tmp_path / "claims.specgate.yaml"
    path.write_text(
        "version: 1\n"
        "deployments:\n"
        "  - name: a\n"
        "    speculation:\n"
        "      enabled: false\n"
        "      engine_config: {path: x.yaml, pointer: /a, extra: 1}\n",
        encoding="utf-8",
    )
    report = check_file(path, "claims.specgate.yaml", CheckOptions())
    found = [
        (f.code, f.line, f.column, f.message)
        for f in [*report.findings, *(f for d in report.deployments for f in d.findings)]
        if f.code == "SG001"
    ]
    # Line 6: "      engine_config: {path: x.yaml, pointer: /a, " is 6 + 14 + 1 + 1 + 14 + 13
    # = 49 characters ⇒ the key "extra" at column 50.
    assert found == [
        (
            "SG001",
            6,
            50,
            "unknown key 'extra' in deployments[0].speculation.engine_config",
        )
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # A mapping: the {path, pointer} branch's own errors, at their keys.
        ({"pointer": "/a"}, ((), " is missing required key 'path'")),
        ({"path": 3}, (("path",), ".path must be a string, got 3")),
        ({"path": "x", "pointer": 2}, (("pointer",), ".pointer must be a string, got 2")),
        # Neither a string nor a mapping: the anyOf message stays.
        (5, ((), " must be a path or a mapping {path, pointer}")),
    ],
)
def test_file_reference_mapping_errors_sit_at_their_keys(
    value: object, expected: tuple[tuple[str, ...], str]
) -> None:
    from specgate.model.validate import validate

    data = {
        "version": 1,
        "deployments": [{"name": "a", "speculation": {"enabled": False, "engine_config": value}}],
    }
    node = ("deployments", 0, "speculation", "engine_config")
    suffix, message = expected
    (violation,) = validate(data)
    assert violation.path == (*node, *suffix)
    assert violation.message == "deployments[0].speculation.engine_config" + message


def _sg309(tmp_path: Path, metrics: str, files: dict[str, str] | None = None) -> list[str]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    path = tmp_path / "claims.specgate.yaml"
    path.write_text(
        "version: 1\n"
        "deployments:\n"
        "  - name: a\n"
        "    speculation:\n"
        "      enabled: false\n"
        "      draft_length: 2\n"
        "    evidence:\n"
        f"      metrics: {metrics}\n",
        encoding="utf-8",
    )
    report = check_file(path, "claims.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    return [f.message for d in report.deployments for f in d.findings if f.code == "SG309"]


def test_inline_histogram_above_d_is_sg309_not_an_input_error(tmp_path: Path) -> None:
    # D = 2; 4 steps accepted 3 drafts ⇒ measured at D ≥ 3. AL = 1 + (1·3 + 3·4)/(5 + 3 + 4)
    # = 1 + 15/12 = 2.25.
    messages = _sg309(tmp_path, "{format: histogram, histogram: {0: 5, 1: 3, 3: 4}}")
    assert messages == [
        "AL 2.25 was measured at D ≥ 3 (a step accepted 3 drafts, evidence.metrics) but "
        "the config uses D = 2: the evidence is stale for this config"
    ]


def test_per_request_histogram_above_d_is_sg309(tmp_path: Path) -> None:
    record = '{"speculative_decoding": {"acceptance_histogram": {"0": 2, "3": 2}}}'
    # steps 4, accepted 3·2 = 6 ⇒ AL = 1 + 6/4 = 2.5; a step accepted 3 > D = 2.
    messages = _sg309(tmp_path, "{format: vllm-per-request, path: r.json}", {"r.json": record})
    assert messages == [
        "AL 2.5 was measured at D ≥ 3 (a step accepted 3 drafts, r.json) but the config "
        "uses D = 2: the evidence is stale for this config"
    ]


def test_histogram_within_d_is_not_sg309(tmp_path: Path) -> None:
    assert _sg309(tmp_path, "{format: histogram, histogram: {0: 5, 2: 4}}") == []
