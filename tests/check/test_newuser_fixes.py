"""Defects a new user found after theory v2 and hardening were merged (F-numbers of the
new-user findings). Expected values are worked out by hand in the comments."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main


def doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["doctor", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


def messages(report: dict[str, Any], code: str) -> list[str]:
    return [f["message"] for f in report["findings"] if f["code"] == code]


def details(report: dict[str, Any], code: str) -> list[str]:
    return [f["details"] for f in report["findings"] if f["code"] == code]


BASE = ["--speculative-decoding", "--cache-coherence-eval"]


def test_f3_sg102_capped_floor_shows_the_break_even_al(capsys: pytest.CaptureFixture[str]) -> None:
    # β 1 (no roofline), ρ 1, D 3 per-token passes: break-even 1 + 1·3 = 4;
    # × 1.1 = 4.4 > 1 + D = 4, so the floor is capped at 4 and AL 2.8 is below it.
    _, report, _ = doctor([*BASE, "--accept-length=2.8", "--draft-length=3",
                           "--draft-depth-ratio=1"], capsys)
    (text,) = messages(report, "SG102")
    assert "break-even AL 4 (β 1 + ρ 1·3) × (1 + 0.1) = 4.4, capped at 1 + D = 4" in text
    assert report["metrics"]["break_even_accept_length"] == 4


def test_f3_roofline_break_even_in_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    # the reported case: roofline β 26.0142 (= 128·60/295.2239). docs/theory.md#proven-verify-cost
    # (v2 failed it on SG102): without a context length the proven β is 1, the default floor
    # (1 + 0.15)·1.1 = 1.265 passes AL 2.8, and SG112 warns: 2.8 / 26.1642 = 0.107 < 1.1
    argv = [*BASE, "--accept-length=2.8", "--draft-length=3", "--draft-depth-ratio=0.05",
            "--concurrency=128", "--gpu=h100-sxm", "--verify-tokens=60"]
    _, report, _ = doctor(argv, capsys)
    assert messages(report, "SG102") == []
    (text,) = messages(report, "SG112")
    # doctor names its own flag for workload.context_length (newuser-r4 #8); Contract
    # change: what settles the estimate moved from the message to details
    assert "26.0142" in text and "--context-length" in details(report, "SG112")[0]
    # with the context (Llama-3.1-8B shapes, c̄ 1000, and BF16 at TP 1 stated: a fail
    # rests on no guessed precision or TP) the docs/theory.md#step-time-model β is proven:
    # κ = 128·1000·131,072/(2·8.03e9) = 1.04466; 60 tokens fill 4·60 = 240 rows = 2 tiles;
    # β = (26.0142 + 2·1.04466)/(1 + 1.04466) = 13.7448, and the proven bound allows host
    # overhead (newuser review defect 7): 1 + 12.7448·0.38 = 5.8430; + 0.15 = 5.9930;
    # × 1.1 = 6.5923, capped at 1 + D = 4
    _, report, _ = doctor([*argv, "--parameters-b=8.03", "--layers=32", "--query-heads=32",
                           "--kv-heads=8", "--head-dim=128", "--context-length=1000",
                           "--tensor-parallel=1", "--weight-bytes=2", "--compute-dtype=bf16",
                           "--kv-cache-bytes=2"], capsys)
    (text,) = messages(report, "SG102")
    assert "break-even AL 5.993 (β 5.843 + ρ 0.05·3)" in text
    assert "= 6.5923, capped at 1 + D = 4" in text


def test_f3_uncapped_floor_has_no_cap_clause(capsys: pytest.CaptureFixture[str]) -> None:
    # ρ 0.5, D 3: break-even 2.5, floor 2.75 < 4; AL 2.6 fails without a cap clause
    _, report, _ = doctor([*BASE, "--accept-length=2.6", "--draft-length=3",
                           "--draft-depth-ratio=0.5"], capsys)
    (text,) = messages(report, "SG102")
    assert "break-even AL 2.5 (β 1 + ρ 0.5·3) × (1 + 0.1))" in text
    assert "capped" not in text


OK_CLAIMS = "version: 1\ndeployments:\n  - name: x\n    speculation: {enabled: false}\n"
FAILING_CLAIMS = (
    "version: 1\ndeployments:\n  - name: x\n    speculation: {enabled: true, draft_length: 3}\n"
)


@pytest.mark.parametrize(
    ("name", "reason"),
    [("a" * 300 + ".specgate.yaml", "file name too long"),
     ("a\0b.specgate.yaml", "the path holds a NUL byte")],
)
def test_f28_unusable_name_on_the_command_line_is_an_input_error_for_that_file(
    name: str, reason: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.specgate.yaml").write_text(FAILING_CLAIMS)
    code = main(["check", name, "ok.specgate.yaml"])
    out, err = capsys.readouterr()
    assert code == 2
    (line,) = [x for x in (out + err).splitlines() if reason in x]
    assert line.startswith("specgate: a") and "\0" not in line
    # the run went on: the other file's SG101 is reported
    assert "ok.specgate.yaml:4:5: fail SG101" in out
    assert "2 files (1 unreadable)" in out + err


def test_f29_newline_in_a_claims_file_name_is_found_and_escaped(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "only").mkdir()
    (tmp_path / "only" / "nl\nname.specgate.yaml").write_text(FAILING_CLAIMS)
    (tmp_path / "only" / "ok.specgate.yaml").write_text(OK_CLAIMS)
    code = main(["check", "only"])
    out, _ = capsys.readouterr()
    assert code == 1  # the failing file is not skipped
    assert "only/nl\\nname.specgate.yaml:4:5: fail SG101" in out
    assert "2 files" in out


def test_f29_a_trailing_newline_does_not_make_a_claims_name() -> None:
    from specgate.project.discovery import is_claims_name

    assert is_claims_name("a\nb.specgate.yaml")
    assert not is_claims_name("specgate.yaml\n")
    assert not is_claims_name("x.specgate.yaml.bak")


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('select = ["SG1O4"]', "pyproject.toml:2: [tool.specgate] select: 'SG1O4' names no rule "
                               "(did you mean 'SG104'?)"),
        ('ignore = ["claim-over-measuremnt"]', "'claim-over-measuremnt' names no rule "
                                               "(did you mean 'claim-over-measurement'?)"),
        ("select = []", "pyproject.toml:2: [tool.specgate] select is empty"),
    ],
)
def test_f30_select_or_ignore_naming_no_rule_is_an_input_error(
    toml: str, expected: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f"[tool.specgate]\n{toml}\n")
    (tmp_path / "c.specgate.yaml").write_text(FAILING_CLAIMS)
    code = main(["check", "c.specgate.yaml"])
    out, err = capsys.readouterr()
    assert code == 2
    assert expected in out + err
    assert "SG101" not in out  # nothing was judged under a broken selection


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--select", "SG1O1"], "--select 'SG1O1' names no rule (did you mean 'SG101'?)"),
        (["--ignore", "sg1o4"], "--ignore 'sg1o4' names no rule (did you mean 'SG104'?)"),
        (["--select", ""], "--select names no rule: it would switch every rule off"),
        (["--select", " , "], "--select names no rule: it would switch every rule off"),
    ],
)
def test_f30_cli_select_and_ignore(
    argv: list[str], expected: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.specgate.yaml").write_text(FAILING_CLAIMS)
    code = main(["check", *argv, "c.specgate.yaml"])
    _, err = capsys.readouterr()
    assert code == 2
    assert expected in err


def test_f30_a_known_prefix_still_selects(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.specgate]\nselect = ["SG1"]\n')
    (tmp_path / "c.specgate.yaml").write_text(FAILING_CLAIMS)
    assert main(["check", "c.specgate.yaml"]) == 1  # SG101 is in SG1
    assert "fail SG101" in capsys.readouterr().out


def findings(report: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["code"] == code]


ATTN = [*BASE, "--attention-dominated", "--draft-depth-ratio=0.01", "--accept-length=3"]


def test_f32_tree_tile_advice_speaks_in_n_verify(capsys: pytest.CaptureFixture[str]) -> None:
    # tree depth 4, N_verify 20, G 8, M 128: 160 rows → 2 tiles; floor(128/8) = 16 verify
    # tokens (15 draft nodes) keep one tile; floor(2·128/8) = 32 fill two.
    _, report, _ = doctor([*ATTN, "--draft-length=4", "--verify-tokens=20",
                           "--query-heads-per-kv=8"], capsys)
    assert report["metrics"]["tile_aligned_verify_tokens"] == 32
    text = json.dumps(report, ensure_ascii=False)
    assert "D* = 15" not in text and "larger D" not in text
    (sg206,) = details(report, "SG206")
    # Contract change (issue 26): the tile count with its numbers follows in the details
    assert sg206.endswith(
        "at most floor(M/G) = 16 verify tokens (15 draft nodes) keep one tile; tiles = "
        "ceil(G·N_verify / M) = ceil(160 / 128) = 2: each tile of M query rows reads the KV "
        "head once (docs/theory.md#attention-tiles)"
    )
    (sg201,) = messages(report, "SG201")
    # G given alone, TP not stated: the message says it is the model's G
    # (docs/theory.md#attention-tiles)
    assert sg201.startswith(
        "N_verify = 20 is past floor(M/G) = 16 for G = 8 (the model's; TP not stated): "
        "G·N_verify = 160"
    )
    assert "N_verify = 32 fills 2" in details(report, "SG201")[0]  # Contract change
    assert findings(report, "SG201")[0]["path"].endswith("verify_tokens")


def test_f32_tree_deeper_than_one_tile_names_the_depth(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # depth 20, N_verify 30, G 8: 240 rows → 2 tiles; 16 verify tokens need depth ≤ 15
    code = main(["doctor", *ATTN, "--draft-length=20", "--verify-tokens=30",
                 "--query-heads-per-kv=8"])
    out, _ = capsys.readouterr()
    assert code in (0, 1)
    assert ("next: Measure the speedup at N_verify = 16 (one tile) with a depth D ≤ 15 "
            "against the current N_verify = 30; keep the larger tree only") in out


def test_f32_chain_advice_keeps_d_star_below_the_current_d(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # chain D 31, G 8: 256 rows → 2 tiles; D* = 128/8 − 1 = 15 < 31
    main(["doctor", *ATTN, "--draft-length=31", "--query-heads-per-kv=8"])
    out, _ = capsys.readouterr()
    assert "D* = 15 keeps one tile" in out
    assert ("next: Measure the speedup at D* = 15 against the current D = 31; keep the current "
            "D only if") in out


def test_f35_g_above_m_says_d0_needs_several_tiles(capsys: pytest.CaptureFixture[str]) -> None:
    # G 200 > M 128, D 25: 200·26 = 5200 rows → ceil(5200/128) = 41 tiles; at D = 0
    # ceil(200/128) = 2 tiles, so 39 extra reads per KV head; nothing keeps one tile.
    _, report, _ = doctor([*ATTN, "--draft-length=25", "--query-heads-per-kv=200"], capsys)
    (sg206,) = messages(report, "SG206")
    (why,) = details(report, "SG206")
    assert "D* = 0 keeps one tile" not in sg206 + why
    # Contract change (issue 26): the tile count with its numbers follows in the details
    assert why.endswith("G = 200 > M = 128, so even D = 0 needs ceil(G/M) = 2 tiles: D* = 0 "
                        "lowers the reads to 2 tiles per step but no D keeps one tile; tiles "
                        "= ceil(G·N_verify / M) = ceil(5200 / 128) = 41: each tile of M query "
                        "rows reads the KV head once (docs/theory.md#attention-tiles)")
    assert "41 attention tiles" in sg206
    assert main(["doctor", *ATTN, "--draft-length=25", "--query-heads-per-kv=200"]) == 0
    out, _ = capsys.readouterr()
    assert "39 extra KV reads per step" in out


def test_f35_g_above_m_at_d0_is_already_the_fewest_tiles(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # D 0, G 200: 1 verify token → ceil(200/128) = 2 tiles, the fewest: nothing to advise
    _, report, _ = doctor([*ATTN, "--draft-length=0", "--query-heads-per-kv=200"], capsys)
    assert not messages(report, "SG206")


MLA_CONFIG = '{"num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512}'


def test_f17_sg306_names_the_m_in_use(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "ds.json").write_text(MLA_CONFIG)
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: ds\n    model: {hf_config: models/ds.json}\n"
        "    speculation: {enabled: false}\n"
    )
    main(["check", "c.specgate.yaml"])
    out = capsys.readouterr().out
    (sg306,) = [line for line in out.splitlines() if "SG306" in line]
    assert "G = 128 query heads per rank; the 64-row tile rule is advisory" in sg306
    assert "128-row" not in out


def _check_json(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str], text: str) -> dict[str, Any]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.specgate.yaml").write_text(text)
    main(["check", "--format", "json", "d.specgate.yaml"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _profiled(al: float, d: int, rho: float, marginal: str) -> str:
    return (
        "version: 1\ndeployments:\n  - name: d\n"
        f"    speculation: {{enabled: true, mechanism: eagle3, draft_length: {d}, "
        f"draft_depth_ratio: {rho}}}\n"
        f"    evidence: {{accept_length: {al}, cache_coherence_eval: true, "
        f"metrics: {{format: per-position, marginal: [{marginal}]}}}}\n"
    )


def _file_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    file = report["files"][0]
    return [*file["findings"], *(f for d in file["deployments"] for f in d["findings"])]


def test_f1_inline_profile_missing_the_stated_al_is_one_sg305(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    # 1 + Σm = 1 + 2.54 = 3.54 ≠ AL 3: SG305 alone. SG205 from the profile: S(7) =
    # 3.54 / 1.35 = 2.6222, best S(5) = 3.35 / 1.25 = 2.68, a gain of 2.2 % < 5 %: silent.
    report = _check_json(tmp_path, monkeypatch, capsys,
                         _profiled(3.0, 7, 0.05, ".8, .6, .45, .3, .2, .12, .07"))
    codes = sorted(f["code"] for f in _file_findings(report))
    assert codes == ["SG305"]


def test_f1_sg205_uses_the_profile_for_s_at_d(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    # docs/theory.md#optimal-draft-length: m = [.7, .4, .2, .1, .05, .02, .01], D 7, ρ 0.1: S(7) =
    # 2.48 / 1.7 = 1.4588, S(3) = 2.3 / 1.3 = 1.7692, 21.3 % faster; a stated AL of 2 (SG305) does
    # not turn S(7) into 2 / 1.7 = 1.1765 (which would claim a 50.4 % gain).
    report = _check_json(tmp_path, monkeypatch, capsys,
                         _profiled(2.0, 7, 0.1, ".7, .4, .2, .1, .05, .02, .01"))
    found = {f["code"]: f["message"] for f in _file_findings(report)}
    assert sorted(found) == ["SG205", "SG305"]
    assert found["SG205"] == ("the measured profile gives S(3) = 1.7692x against S(7) = "
                              "1.4588x at D = 7: D = 3 is 21.3 % faster")


REAL_HF = Path(__file__).parents[1] / "data" / "real" / "hf-config" / "config"


def _recommended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str], config: str, model: str) -> str | None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir(exist_ok=True)
    shutil.copy(REAL_HF / config, tmp_path / "models" / "m.json")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: m\n"
        f"    model: {{name: m, hf_config: models/m.json{model}}}\n"
        # enabled: a deployment that does not speculate gets no recommendation
        "    speculation: {enabled: true}\n"
    )
    main(["check", "--format", "json", "c.specgate.yaml"])
    report = json.loads(capsys.readouterr().out)
    name: str | None = report["files"][0]["deployments"][0]["mechanism"]["class"]
    return name


@pytest.mark.parametrize(
    ("config", "model", "expected"),
    [
        # DeepSeek-V3: n_routed_experts 256 (MoE) and num_nextn_predict_layers 1 (MTP)
        ("deepseek-ai--DeepSeek-V3_config.json", "", "target-attached-mtp"),
        # Mixtral: num_local_experts 8, no MTP layers: MoE known to have no MTP modules
        ("mistralai--Mixtral-8x7B-v0.1_config.json", "", "parallel-draft-head"),
        # a dense 8B config: its counted 8,030,261,248 parameters (≤ 10 B: small) at the
        # default low latency are docs/theory.md#mechanism-recommendation's parallel-draft-head row
        # (newuser review, defect 6; before, the count was ignored and the default
        # external-small-draft shown)
        ("meta-llama--Meta-Llama-3.1-8B_config.json", "", "parallel-draft-head"),
        # what the claims file states wins over the config
        # (docs/theory.md#mechanism-recommendation's table gives external-small-draft for a dense
        # 30B), but a separate draft model for a model whose config ships MTP layers is advice
        # against the model: nothing is recommended (newuser-r4 #7)
        ("deepseek-ai--DeepSeek-V3_config.json", ", moe: false, parameters_b: 30", None),
        ("mistralai--Mixtral-8x7B-v0.1_config.json", ", moe: false, parameters_b: 30",
         "external-small-draft"),
    ],
)
def test_f16_recommendation_reads_moe_and_mtp_from_the_model_config(
    config: str, model: str, expected: str | None, *, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    assert _recommended(tmp_path, monkeypatch, capsys, config, model) == expected


def test_f16_doctor_parity_when_nothing_is_known(capsys: pytest.CaptureFixture[str]) -> None:
    # nothing known of the model: no recommendation, in doctor as in check (newuser-r4
    # #7: the table's unknown-as-medium row gave external-small-draft to every model)
    _, report, _ = doctor([*BASE, "--accept-length=2.5", "--draft-length=3"], capsys)
    assert report["mechanism"]["class"] is None
    _, report, _ = doctor(
        [*BASE, "--accept-length=2.5", "--draft-length=3", "--parameters-b=30"], capsys
    )
    assert report["mechanism"]["class"] == "external-small-draft"  # a known mid-size


SPEC = [*BASE, "--accept-length=2.8", "--draft-length=3", "--draft-depth-ratio=0.05"]


def test_f36_doctor_roofline_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # n* = 1000·1 / (2·2.5) = 200; B 100, N_verify 4: β = 400 / 200 = 2;
    # S = 2.8 / (2 + 0.05·3) = 1.3023. At 2 bytes n* = 400, β 1, S = 2.8 / 1.15 = 2.4348.
    flags = ["--concurrency=100", "--peak-tflops=1000", "--memory-bandwidth-tbps=2.5"]
    _, report, _ = doctor([*SPEC, *flags, "--weight-bytes=1"], capsys)
    m = report["metrics"]
    assert (m["verify_cost_ratio"], m["theoretical_speedup"]) == (2, 1.3023)
    assert m["verify_cost_source"] == "roofline"
    _, report, _ = doctor([*SPEC, *flags], capsys)
    assert report["metrics"]["theoretical_speedup"] == 2.4348


def test_f36_doctor_measured_beta_tile_rows_and_mechanism(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # β 1.5 measured: S = 2.8 / (1.5 + 0.15) = 1.697
    _, report, _ = doctor([*SPEC, "--verify-cost-ratio=1.5", "--mechanism=eagle3"], capsys)
    assert report["metrics"]["theoretical_speedup"] == 1.697
    assert report["mechanism"]["declared"] == "eagle3"
    # M 64, G 8: D* = 64/8 − 1 = 7
    _, report, _ = doctor([*SPEC, "--attention-tile-rows=64", "--query-heads-per-kv=8"], capsys)
    assert report["metrics"]["attention_tile_rows"] == 64
    assert report["metrics"]["attention_optimal_draft_length"] == 7


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--gpu=h100"], "--gpu: 'h100' is not a GPU of the shipped table"),
        (["--gpu=H100-SXM"], "(did you mean 'h100-sxm'?)"),
        (["--mechanism=egale3"], "(did you mean 'eagle3'?)"),
        # physical bounds (hostile review defect 1): a peak from 1 GFLOP/s on
        (["--peak-tflops=0"], "--peak-tflops: 0 must be ≥ 0.001"),
        (["--weight-bytes=nan"], "--weight-bytes: 'nan' is not a finite number"),
        (["--attention-tile-rows=0"],
         "--attention-tile-rows: '0' is not a whole number from 1 to 65,536"),
        (["--verify-cost-ratio=0.5"], "--verify-cost-ratio: 0.5 must be ≥ 1"),
    ],
)
def test_f36_f4_doctor_flag_errors(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = doctor([*SPEC, *argv], capsys)
    assert code == 2
    assert expected in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("gpu", "meant"), [("h100", "h100-sxm"), ("H100-SXM", "h100-sxm"), ("a100", "a100-80gb")]
)
def test_f4_claims_gpu_typo_has_did_you_mean(
    gpu: str, meant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = _check_json(
        tmp_path, monkeypatch, capsys,
        "version: 1\ndeployments:\n  - name: d\n"
        f"    hardware: {{gpu: {gpu}}}\n    speculation: {{enabled: false}}\n",
    )
    (sg001,) = [f["message"] for f in _file_findings(report) if f["code"] == "SG001"]
    assert sg001.endswith(f"got '{gpu}' (did you mean '{meant}'?)")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e308, "1e+308"),
        (1e-320, "1e-320"),
        (10**29 + 1, "1e+29"),
        (1234567890123456789, "1.235e+18"),  # 4 significant digits, rounded
        (-(10**400), "-1e+400"),  # beyond float range
        (2.5e-5, "2.5e-5"),
        (float("inf"), "inf"),
        (999999999999999, "999999999999999"),  # below 10^15: as written
        (1.73914, "1.7391"),
        (-0.00001, "-1e-5"),
    ],
)
def test_f5_huge_and_tiny_numbers_in_scientific_notation(value: float, text: str) -> None:
    from specgate.core.numbers import fmt

    assert fmt(value) == text


@pytest.mark.parametrize("al", ["-2", "0.5", "1e-320"])
def test_f5_impossible_al_is_sg103_alone_with_no_speedup(
    al: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # D 3, ρ 0.05: the default floor 1.265 would fire SG102 too; AL < 1 is SG103's alone
    report = _check_json(
        tmp_path, monkeypatch, capsys,
        "version: 1\ndeployments:\n  - name: d\n"
        "    speculation: {enabled: true, draft_length: 3, draft_depth_ratio: 0.05}\n"
        f"    evidence: {{accept_length: {al}, cache_coherence_eval: true}}\n",
    )
    assert sorted(f["code"] for f in _file_findings(report)) == ["SG103"]
    metrics = report["files"][0]["deployments"][0]["metrics"]
    assert metrics["theoretical_speedup"] is None
    assert metrics["speedup_ceiling"] is None


def test_f33_sg104_one_notation_for_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    # chain, β 1: 1.954 / (1 + 0.05·3) = 1.954 / 1.15 = 1.6991
    _, report, _ = doctor([*BASE, "--accept-length=1.954", "--draft-length=3",
                           "--draft-depth-ratio=0.05", "--claimed-speedup=2"], capsys)
    (sg104,) = messages(report, "SG104")
    assert sg104 == "claimed 2x exceeds AL / (β + ρ·passes) = 1.954 / (1 + 0.05·3) = 1.6991x"
    # tree depth 4, N_verify 11, β 1: passes 4, 3.2 / (1 + 0.05·4) = 2.6667
    _, report, _ = doctor([*BASE, "--accept-length=3.2", "--draft-length=4", "--verify-tokens=11",
                           "--draft-depth-ratio=0.05", "--claimed-speedup=3"], capsys)
    (sg104,) = messages(report, "SG104")
    assert "AL / (β + ρ·passes) = 3.2 / (1 + 0.05·4) = 2.6667x" in sg104


def test_f33_help_defines_rho_per_pass_and_the_tile_rule_by_m(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0  # --help: main returns, never raises
    top = " ".join(capsys.readouterr().out.split())
    assert "floor(128/G)" not in top and "D* = floor(M/G) − 1" in top
    assert "one draft pass's time" in top and "draft token's cost" not in top
    assert main(["doctor", "--help"]) == 0  # --help: main returns, never raises
    doctor_help = " ".join(capsys.readouterr().out.split())  # help text wraps
    assert "draft depth ratio ρ (one draft pass's time / one target step's time)" in doctor_help


def test_f33_metrics_values_are_shown_as_json() -> None:
    from specgate.core.errors import InputError
    from specgate.inputs.metrics._common import real

    with pytest.raises(InputError, match=r"must be a finite number, not null$"):
        real(None, "avg_spec_accept_length", "si3.json", None)


def test_f33_sg001_verify_tokens_names_the_deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    report = _check_json(
        tmp_path, monkeypatch, capsys,
        "version: 1\ndeployments:\n  - name: d\n    speculation: {enabled: true, "
        "draft_length: 4, verify_tokens: 3, draft_depth_ratio: 0.05}\n"
        "    evidence: {accept_length: 2, cache_coherence_eval: true}\n",
    )
    (sg001,) = [f["message"] for f in _file_findings(report) if f["code"] == "SG001"]
    assert sg001.startswith("deployments[0].speculation.verify_tokens 3 is below 1 + D = 5")


def test_f33_sg106_next_actions_fit_the_cause(capsys: pytest.CaptureFixture[str]) -> None:
    # a claim of 0.4 reads as +40 %: the action offers 1.4 first
    main(["doctor", *SPEC, "--claimed-speedup=0.4"])
    out = capsys.readouterr().out
    # in doctor's words: the flag that sets claims.speedup (newuser-r4 #8)
    assert "next: If the claim is a gain of 40 %, write --claimed-speedup 1.4" in out
    # a theoretical loss of a tree: ρ 1, depth 4, N_verify 11, β 1: S = 2.8 / 5 = 0.56;
    # nothing measured, so the action does not speak of "the measured speedup"
    main(["doctor", *BASE, "--accept-length=2.8", "--draft-length=4", "--verify-tokens=11",
          "--draft-depth-ratio=1"])
    out = capsys.readouterr().out
    assert "S = 0.56x < 1" in out
    assert ("lower D, the tree's N_verify (--verify-tokens) or the draft cost (ρ) "
            "until S = AL / (β + ρ·passes) is above 1") in out
    assert "until the measured speedup" not in out


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "x"])
def test_f33_whole_number_flags_say_one_thing(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = doctor([*SPEC, f"--concurrency={value}"], capsys)
    assert code == 2
    # bounded like workload.concurrency (hostile review defect 1): one message still
    assert f"--concurrency: '{value}' is not a whole number from 1 to 1,048,576" in err


def test_f33_doctor_next_draft_length_must_be_larger(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = doctor([*BASE, "--accept-length=4", "--draft-length=8",
                           "--next-draft-length=4", "--next-accept-length=3.9"], capsys)
    assert code == 2
    assert "--next-draft-length 4 must be larger than --draft-length 8" in err


def test_f6_node_limit_message_does_not_blame_aliases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    # 100,001 list items and no alias: over the node limit, said as such
    from specgate.load.yaml_loader import MAX_NODES

    monkeypatch.chdir(tmp_path)
    items = ", ".join(["0.1"] * (MAX_NODES + 1))
    (tmp_path / "c.specgate.yaml").write_text(f"version: 1\nx-list: [{items}]\ndeployments: []\n")
    assert main(["check", "c.specgate.yaml"]) == 2
    out, err = capsys.readouterr()
    text = out + err
    assert f"more than {MAX_NODES:,} YAML nodes: the file is too large to check" in text
    assert "alias" not in text


def test_f33_sg203_a_lower_next_al_is_not_called_a_gain(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # D 4 → 8, AL 4 → 3.9, ρ 0.05: S 4 / 1.2 = 3.3333 → 3.9 / 1.4 = 2.7857
    _, report, _ = doctor([*BASE, "--accept-length=4", "--draft-length=4",
                           "--draft-depth-ratio=0.05", "--next-draft-length=8",
                           "--next-accept-length=3.9"], capsys)
    (sg203,) = messages(report, "SG203")
    assert "changes the speedup 3.3333x → 2.7857x" in sg203
    assert sg203.endswith("AL does not rise with D, so the longer draft only adds cost")
    # AL 5 → 5.2 for D 7 → 14 at ρ 0.1: 5 / 1.7 = 2.9412 → 5.2 / 2.4 = 2.1667, a real gain
    _, report, _ = doctor([*BASE, "--accept-length=5", "--draft-length=7",
                           "--draft-depth-ratio=0.1", "--next-draft-length=14",
                           "--next-accept-length=5.2"], capsys)
    (sg203,) = messages(report, "SG203")
    assert "2.9412x → 2.1667x" in sg203 and sg203.endswith("does not beat the draft cost")
