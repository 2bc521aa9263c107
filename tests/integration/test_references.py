"""End to end: claims files that point at serving configs, model configs and metrics
(docs/claims-file.md#referenced-files), through ``specgate.cli.main.main`` and ``check_file``.

Expected values are worked out by hand from the fixtures (tests/data/real/SOURCES.md,
SOURCES-measured.md and tests/data/integration/SOURCES.md); columns count characters
from 1. Claims files live in ``tests/data/integration``; they reference the real files in
``tests/data/real`` by relative path, so shown paths are ``real/…`` when run from
``tests/data``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.reporters.json_report import deployment_inputs

from .conftest import DATA, run

# --- helpers ------------------------------------------------------------------------------


def check_json(path: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, err = run(["check", path, "--format", "json"], capsys)
    assert err == ""
    return code, json.loads(out)


def only_deployment(report: dict[str, Any]) -> dict[str, Any]:
    (file,) = report["files"]
    assert file["error"] is None, file["error"]
    (deployment,) = file["deployments"]
    return deployment


def codes_of(deployment: dict[str, Any]) -> list[str]:
    return [f["code"] for f in deployment["findings"]]


def text_at(path: Path, line: int, column: int) -> str:
    """The referenced file's text from ``line``:``column`` to the end of that line."""
    return path.read_text(encoding="utf-8").splitlines()[line - 1][column - 1 :]


# --- issue 4 "Done when" --------------------------------------------------------------------

DONE_WHEN = "integration/done-when.specgate.yaml"
RECIPE = "real/vllm/config/recipes-GPT-OSS_EAGLE3_Hopper.yaml"
GPT_OSS = "real/hf-config/config/openai--gpt-oss-20b_config.json"
GEMMA_PROM = "real/vllm/measured/gemma4-31b-mtp-vllm_0_21_metrics.prom"


def test_done_when_d_g_and_al_come_from_the_referenced_files(
    in_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = check_json(DONE_WHEN, capsys)
    deployment = only_deployment(report)
    m = deployment["metrics"]
    # D: the recipe's speculative-config JSON string says "num_speculative_tokens":7.
    assert m["draft_length"] == 7
    assert m["verify_tokens"] == 8  # a chain: 7 + 1
    # G: gpt-oss config.json, num_attention_heads 64 / num_key_value_heads 8 = 8; no TP in
    # the recipe, so no split. D* = floor(128/8) − 1 = 15.
    assert m["query_heads_per_kv"] == 8
    assert m["attention_optimal_draft_length"] == 15
    # AL: 1 + accepted/drafts = 1 + 863/240 = 4.59583… → 4.5958.
    assert m["accept_length"] == 4.5958
    # docs/theory.md#which-rho moves this expectation (v1 took ρ = 0): ρ not given → the typical ρ
    # of the declared eagle3's class, 0.14 since issue 26 (docs/validation.md): 4.59583 /
    # (1 + 0.14·7) = 4.59583 / 1.98 = 2.3211; the ceiling (ρ = 0) stays AL / β = 4.5958.
    assert m["theoretical_speedup"] == 2.3211
    assert m["draft_depth_ratio_source"] == "typical"
    assert m["speedup_ceiling"] == 4.5958

    inputs = deployment["inputs"]
    engine = inputs["engine"]
    assert engine["engine"] == "vllm"
    assert engine["path"] == RECIPE
    assert engine["mechanism"] == "eagle3"
    assert engine["draft_length"] == 7
    assert engine["verify_tokens"] == 8
    assert engine["draft_length_is_max"] is False
    assert engine["lossy_acceptance"] is False
    assert engine["tensor_parallel_size"] is None
    model = inputs["model"]
    assert model["path"] == GPT_OSS
    assert (model["query_heads"], model["kv_heads"]) == (64, 8)
    assert model["query_heads_per_kv"] == 8
    assert model["effective_query_heads_per_kv"] == 8
    assert model["mla"] is False
    assert model["vocab_size"] == 201088  # line 75 of the config
    assert model["max_position_embeddings"] == 131072  # line 41
    acceptance = inputs["acceptance"]
    assert acceptance["format"] == "vllm-prometheus"
    assert acceptance["path"] == GEMMA_PROM
    assert acceptance["accept_length"] == 4.5958
    assert acceptance["formula"] == "1 + 863/240"
    assert acceptance["estimate"] is False
    assert acceptance["draft_length"] == 4  # num_draft_tokens / num_drafts = 960/240
    assert acceptance["acceptance_rate"] == 0.899  # 863/960 = 0.89896

    # The scrape was taken at k = 4, the recipe drafts 7: SG309 on the recipe's line 5,
    # at the 7 inside the JSON string: "speculative-config: '" (21 characters) then
    # '{"model":"nvidia/gpt-oss-120b-Eagle3-v3","num_speculative_tokens":' (66) ⇒ column 88.
    sg309 = [f for f in deployment["findings"] if f["code"] == "SG309"]
    assert [(f["file"], f["line"], f["column"]) for f in sg309] == [(RECIPE, 5, 88)]
    assert code == 1


def test_done_when_through_check_file(in_data: Path) -> None:
    report = check_file(Path(DONE_WHEN), DONE_WHEN, CheckOptions())
    assert report.error is None
    (deployment,) = report.deployments
    m = deployment.metrics
    assert m.draft_length == 7
    assert m.query_heads_per_kv == 8
    assert m.accept_length == pytest.approx(1 + 863 / 240)
    assert deployment_inputs(deployment)["acceptance"]["formula"] == "1 + 863/240"
    assert deployment_inputs(deployment)["model"]["path"] == GPT_OSS


# --- every SG3xx rule on its own fixture, annotated on the referenced file -----------------


class Spot(NamedTuple):
    """Where a rule's finding must land: the referenced file (shown from tests/data),
    line and column, and the text that starts there."""

    code: str
    severity: str
    file: str
    line: int
    column: int
    text: str


RULES = [
    # SG301 sits on the claims file's line (docs/trust.md#one-cause-one-finding; issue 16 moved it
    # there): "      draft_length: " is 20 characters. It names the recipe's 7 as its related
    # location (test_sg301_names_the_served_value_as_related_location).
    Spot("SG301", "fail", "integration/rules/sg301-fail.specgate.yaml", 7, 21, "5"),
    # '  "vocab_size": ' is 16 characters.
    Spot("SG302", "warn", "integration/models/qwen2.5-0.5b-instruct.json", 5, 17, "151936"),
    # '  "max_position_embeddings": ' is 29 characters.
    Spot(
        "SG303",
        "warn",
        "real/hf-config/config/specforge-llama3-8B-eagle3-draft.json",
        11,
        30,
        "2048",
    ),
    # "  use_relaxed_acceptance_for_thinking: " is 39 characters.
    Spot(
        "SG304",
        "warn",
        "real/tensorrt-llm/config/curated-deepseek-r1-latency.yaml",
        13,
        40,
        "true",
    ),
    # The first rising rate (0.7 after 0.6): '  "marginal_accept_rates": [0.6, ' is
    # 2 + 23 + 2 + 1 + 5 = 33 characters.
    Spot(
        "SG305",
        "fail",
        "integration/bench/speculation_profile-rising.json",
        6,
        34,
        "0.7",
    ),
    # '  "kv_lora_rank": ' is 18 characters.
    Spot(
        "SG306", "info", "real/hf-config/config/deepseek-ai--DeepSeek-V3_config.json", 20, 19, "512"
    ),
    # "speculative_num_draft_tokens: " is 30 characters.
    # a rewrite no claim rests on is a warn (docs/engines.md#refusals-and-rewrites): SGLang logs it
    # and serves 4
    Spot("SG307", "warn", "integration/serving/sglang-eagle-topk1-8-draft-tokens.yaml", 5, 31, "8"),
    # 10 spaces + "num_speculative_tokens: " (24) = 34 characters.
    Spot(
        "SG308",
        "info",
        "real/vllm/config/gym-Qwen3-30B-A3B-Instruct-2507-ngram-specdec.yaml",
        59,
        35,
        "3",
    ),
    # D = 7 is read from the recipe's JSON string, so SG309 (about D) lands on the 7
    # (column 88, counted at SG301 above).
    Spot("SG309", "fail", RECIPE, 5, 88, "7,"),
    # The removed flag's own word (SG310 is about the flag, not its value; it was at the
    # value 8, column 78): "llama-server " (13) + "-m /models/llama-70b.gguf " (26) +
    # "-md /models/llama-1b.gguf " (26) = 65 characters.
    Spot("SG310", "fail", "integration/serving/llamacpp-draft-max.txt", 2, 66, "--draft-max"),
    # '      value: ' is 13 characters (the variable's value line).
    Spot("SG311", "fail", "integration/serving/trtllm-forced-acceptance.yaml", 5, 14, '"3"'),
]
RULE_IDS = [r.code for r in RULES]
LEVEL = {"fail": "error", "warn": "warning", "info": "notice"}


def fail_fixture(code: str) -> str:
    return f"integration/rules/{code.lower()}-fail.specgate.yaml"


@pytest.mark.parametrize("spot", RULES, ids=RULE_IDS)
def test_rule_fires_on_the_referenced_files_line_json(
    in_data: Path, capsys: pytest.CaptureFixture[str], spot: Spot
) -> None:
    code, severity, file, line, column, text = spot
    assert text_at(DATA / file, line, column).startswith(text)  # the hand count is right
    exit_code, report = check_json(fail_fixture(code), capsys)
    deployment = only_deployment(report)
    hits = [f for f in deployment["findings"] if f["code"] == code]
    assert [
        (f["severity"], f.get("file", fail_fixture(code)), f["line"], f["column"]) for f in hits
    ] == [(severity, file, line, column)]
    assert exit_code == (1 if severity == "fail" else 0)


def test_sg301_names_the_served_value_as_related_location(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The value inside the JSON string: "speculative-config: '" is 21 characters,
    # '{"model":"nvidia/gpt-oss-120b-Eagle3-v3","num_speculative_tokens":' 66 more
    # (1 + 7 + 1 + 31 + 1 + 24 + 1), so the 7 stands at column 21 + 66 + 1 = 88.
    assert text_at(DATA / RECIPE, 5, 88).startswith("7,")
    _, out, err = run(["check", fail_fixture("SG301"), "--format", "sarif"], capsys)
    assert err == ""
    (sarif_run,) = json.loads(out)["runs"]
    (hit,) = [r for r in sarif_run["results"] if r["ruleId"] == "SG301"]
    (related,) = hit["relatedLocations"]
    physical = related["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == f"data/{RECIPE}"
    assert (physical["region"]["startLine"], physical["region"]["startColumn"]) == (5, 88)


@pytest.mark.parametrize("spot", RULES, ids=RULE_IDS)
def test_rule_fires_on_the_referenced_files_line_text(
    in_data: Path, capsys: pytest.CaptureFixture[str], spot: Spot
) -> None:
    code, severity, file, line, column, _text = spot
    _, out, err = run(["check", fail_fixture(code)], capsys)
    assert err == ""
    prefix = f"{file}:{line}:{column}: {severity} {code} "
    assert sum(1 for row in out.splitlines() if row.startswith(prefix)) == 1, out


@pytest.mark.parametrize("spot", RULES, ids=RULE_IDS)
def test_rule_fires_on_the_referenced_files_line_github(
    repo: Path, capsys: pytest.CaptureFixture[str], spot: Spot
) -> None:
    code, severity, file, line, column, _text = spot
    _, out, err = run(["check", fail_fixture(code), "--format", "github"], capsys)
    assert err == ""
    # Paths relative to the git top level: the current folder is <repo>/data.
    level = LEVEL[severity]
    # The finding sits in a file outside its claims file, so the title names the
    # deployment and claims file it belongs to (docs/reports.md, "Deployments that share a
    # file"); the toolkit's escaping turns any "," of a name into %2C.
    claims = fail_fixture(code)
    owner = "" if file == claims else rf" for deployment [^,]+ in {re.escape(claims)}"
    expected = re.compile(
        rf"::{level} title=specgate \({code}\){owner},"
        rf"file=data/{re.escape(file)},line={line},col={column}::"
    )
    assert sum(1 for row in out.splitlines() if expected.match(row)) == 1, out


@pytest.mark.parametrize("spot", RULES, ids=RULE_IDS)
def test_rule_fires_on_the_referenced_files_line_sarif(
    repo: Path, capsys: pytest.CaptureFixture[str], spot: Spot
) -> None:
    code, _severity, file, line, column, _text = spot
    _, out, err = run(["check", fail_fixture(code), "--format", "sarif"], capsys)
    assert err == ""
    (sarif_run,) = json.loads(out)["runs"]
    hits = [r for r in sarif_run["results"] if r["ruleId"] == code]
    assert len(hits) == 1
    (location,) = hits[0]["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == f"data/{file}"
    assert physical["region"]["startLine"] == line
    assert physical["region"]["startColumn"] == column


@pytest.mark.parametrize("code", RULE_IDS)
def test_rule_does_not_fire_on_its_passing_fixture(
    in_data: Path, capsys: pytest.CaptureFixture[str], code: str
) -> None:
    path = f"integration/rules/{code.lower()}-pass.specgate.yaml"
    _, report = check_json(path, capsys)
    deployment = only_deployment(report)
    assert code not in codes_of(deployment)
    assert "inputs" in deployment  # the referenced files were read


# --- input errors ----------------------------------------------------------------------------

#: fixture in integration/errors, the start of its one error line.
ERRORS = [
    (
        "missing",
        "integration/errors/missing.specgate.yaml:6:22: speculation.engine_config "
        "'../serving/does-not-exist.yaml' does not exist",
    ),
    (
        "absolute",
        "integration/errors/absolute.specgate.yaml:6:22: speculation.engine_config must be "
        "relative to the claims file, not '/etc/hostname'",
    ),
    (
        "leaves-repository",
        "integration/errors/leaves-repository.specgate.yaml:5:18: model.hf_config "
        "'../../../../../../../../../../etc/passwd' leaves the repository",
    ),
    # The unclosed flow mapping on line 2 is noticed at the ':' of "max-num-seqs" (12
    # characters) on line 3.
    ("unparseable", "integration/serving/vllm-unparseable.yaml:3:13: YAML syntax error"),
    (
        "two-configs",
        "real/sglang/config/attention_backend-bench_serving_spec_decode.yaml: 2 speculative "
        "configurations",
    ),
]
ERROR_IDS = [e[0] for e in ERRORS]


@pytest.mark.parametrize(("name", "message"), ERRORS, ids=ERROR_IDS)
def test_input_error_exits_2_with_one_line_naming_the_file(
    in_data: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    # Text format: the error is one line of the report (stdout), as for an unparseable
    # claims file; the machine formats repeat it on stderr (next tests).
    code, out, err = run(["check", f"integration/errors/{name}.specgate.yaml"], capsys)
    assert code == 2
    assert err == ""
    # one style with stderr's input errors (newuser-r4 #10): "specgate: FILE:LINE:COL: …"
    rows = out.splitlines()
    errors = [r for r in rows if r.startswith("specgate: ") and r != rows[-1]]  # not the tally
    assert len(errors) == 1, out
    assert errors[0].startswith(f"specgate: {message}")
    assert "Traceback" not in out


def test_two_configurations_error_lists_both_pointers(
    in_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["check", "integration/errors/two-configs.specgate.yaml", "--format", "json"], capsys
    )
    assert code == 2
    (file,) = json.loads(out)["files"]
    assert err == f"specgate: {file['error']}\n"
    # models[0] is DeepSeek-V3 (EAGLE + NextN), models[1] Llama-3.1-8B (EAGLE3).
    assert "/models/0/additional_server_arguments" in file["error"]
    assert "/models/1/additional_server_arguments" in file["error"]


@pytest.mark.parametrize(("name", "message"), ERRORS, ids=ERROR_IDS)
def test_input_error_does_not_stop_the_other_files(
    in_data: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    claims = f"integration/errors/{name}.specgate.yaml"
    other = "integration/rules/sg301-pass.specgate.yaml"
    code, out, err = run(["check", claims, other, "--format", "json"], capsys)
    assert code == 2
    # Machine formats keep stdout parseable and repeat the error as one line on stderr.
    assert err.count("\n") == 1
    assert err.startswith(f"specgate: {message}")
    report = json.loads(out)
    files = {f["path"]: f for f in report["files"]}
    assert files[claims]["status"] == "error"
    assert files[claims]["deployments"] == []
    assert files[claims]["error"].startswith(message)
    assert files[other]["status"] == "ready"
    assert files[other]["deployments"][0]["metrics"]["draft_length"] == 7
    assert report["status"] == "error"


def test_serving_config_read_nothing_from_is_a_finding(
    in_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Contract change (issue 24): a serving config that parses but configures nothing
    # specgate reads was an input error (exit 2, status error); it is SG312 on the
    # deployment now, and the other file is checked as before.
    claims = "integration/errors/no-speculation.specgate.yaml"
    other = "integration/rules/sg301-pass.specgate.yaml"
    code, out, err = run(["check", claims, other, "--format", "json"], capsys)
    assert code != 2 and err == ""
    report = json.loads(out)
    files = {f["path"]: f for f in report["files"]}
    assert files[claims]["error"] is None
    (deployment,) = files[claims]["deployments"]
    (sg312,) = [f for f in deployment["findings"] if f["code"] == "SG312"]
    assert sg312["file"] == "integration/serving/vllm-no-speculation.yaml"
    assert files[other]["deployments"][0]["metrics"]["draft_length"] == 7


def test_symlink_that_leaves_the_repository_is_an_input_error(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside-vllm.yaml"
    outside.write_text(
        "speculative_config:\n  method: eagle3\n  num_speculative_tokens: 3\n", "utf-8"
    )
    link = repo / "data" / "integration" / "serving" / "link-outside.yaml"
    try:
        os.symlink(outside, link)
    except OSError:  # pragma: no cover - platforms without symlinks
        pytest.skip("symlinks are not available")
    claims = repo / "data" / "integration" / "errors" / "symlink.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: link\n    speculation:\n      enabled: false\n"
        "      engine_config: ../serving/link-outside.yaml\n",
        "utf-8",
    )
    code, out, err = run(
        ["check", "integration/errors/symlink.specgate.yaml", "integration/rules"], capsys
    )
    assert code == 2
    assert err == ""
    errors = [row for row in out.splitlines() if row.startswith("specgate: integration/")]
    assert errors == [
        "specgate: integration/errors/symlink.specgate.yaml:6:22: speculation.engine_config "
        "'../serving/link-outside.yaml' leaves the repository"
    ]
    # the rule fixtures in the same run were still checked
    assert "integration/rules/sg301-fail.specgate.yaml: fail" in out


def test_github_annotates_an_unparseable_referenced_file_on_that_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(
        ["check", "integration/errors/unparseable.specgate.yaml", "--format", "github"], capsys
    )
    assert "file=data/integration/serving/vllm-unparseable.yaml,line=3,col=13::" in out


def test_sarif_locates_an_unparseable_referenced_file_on_that_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(
        ["check", "integration/errors/unparseable.specgate.yaml", "--format", "sarif"], capsys
    )
    (sarif_run,) = json.loads(out)["runs"]
    (invocation,) = sarif_run["invocations"]
    (notification,) = invocation["toolExecutionNotifications"]
    physical = notification["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "data/integration/serving/vllm-unparseable.yaml"
    assert physical["region"]["startLine"] == 3


# --- a stated number and the referenced file: SG301, never a silent preference -------------


@pytest.mark.parametrize(
    "case",
    [
        # D: claims 5 (line 7: "      draft_length: " is 20 characters), recipe 7.
        # The referenced 7 inside the JSON string (column 88, counted in RULES above).
        (
            "rules/sg301-fail",
            "draft length D: the claims file says 5",
            (7, 21),
            (RECIPE, 5, 88),
        ),
        # mechanism: claims eagle (line 7, "      mechanism: " 17 characters), recipe
        # "method":"eagle3": after the 7 (column 88) come ',"method":' (10 characters),
        # so "eagle3" opens at column 99.
        (
            "agreement/mechanism-disagrees",
            "mechanism: the claims file says eagle",
            (7, 18),
            (RECIPE, 5, 99),
        ),
        # G: claims 4 (line 6, "      query_heads_per_kv: " 26 characters), config
        # 64/8 = 8, read at num_attention_heads (line 43: '  "num_attention_heads": ' is
        # 25 characters).
        ("agreement/g-disagrees", "the claims file says 4", (6, 27), (GPT_OSS, 43, 26)),
        # AL: claims 2.16 (line 9, "      accept_length: " 21 characters), the log pooled
        # 1 + 875/625 = 2.4 at the first SpecDecoding line (line 2).
        (
            "agreement/al-disagrees",
            "accept length AL: the claims file says 2.16",
            (9, 22),
            ("real/vllm/measured/vllm-issue19254-ngram-k3-qwen3-32b.log", 2, 1),
        ),
    ],
)
def test_stated_number_that_disagrees_is_sg301(
    in_data: Path,
    capsys: pytest.CaptureFixture[str],
    case: tuple[str, str, tuple[int, int], tuple[str, int, int]],
) -> None:
    fixture, conflict, stated, where = case
    # docs/trust.md#one-cause-one-finding (contract change, issue 16): SG301 sits on the claims
    # file's line and names the referenced file's line (JSON "related", SARIF relatedLocations).
    code, report = check_json(f"integration/{fixture}.specgate.yaml", capsys)
    deployment = only_deployment(report)
    hits = [f for f in deployment["findings"] if f["code"] == "SG301"]
    assert len(hits) == 1
    assert hits[0]["message"].startswith(conflict) or conflict in hits[0]["message"]
    assert "file" not in hits[0]  # the claims file itself
    assert (hits[0]["line"], hits[0]["column"]) == stated
    (related,) = hits[0]["related"]
    assert (related["file"], related["line"], related["column"]) == where
    assert code == 1


def test_stated_al_keeps_the_claims_value_in_metrics(
    in_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Neither value silently wins the finding; metrics show the stated 2.16 and inputs the
    # measured 2.4, side by side.
    _, report = check_json("integration/agreement/al-disagrees.specgate.yaml", capsys)
    deployment = only_deployment(report)
    assert deployment["metrics"]["accept_length"] == 2.16
    assert deployment["inputs"]["acceptance"]["accept_length"] == 2.4
    assert deployment["inputs"]["acceptance"]["formula"] == "1 + 875/625"


@pytest.mark.parametrize(
    "fixture",
    [
        "rules/sg301-pass",  # D 7 = 7
        "agreement/mechanism-agrees",  # eagle3 = eagle3
        "agreement/g-agrees",  # 8 = 64/8
        "agreement/al-agrees",  # 2.4 = 1 + 875/625
        "agreement/al-agrees-to-print-precision",  # |2.404 − 2.4| ≤ 0.005
    ],
)
def test_stated_number_that_agrees_gives_no_finding(
    in_data: Path, capsys: pytest.CaptureFixture[str], fixture: str
) -> None:
    code, report = check_json(f"integration/{fixture}.specgate.yaml", capsys)
    deployment = only_deployment(report)
    assert "SG301" not in codes_of(deployment)
    assert deployment["status"] == "ready"
    assert code == 0


# --- G per rank: TP > KV and MLA -------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        # Qwen3-30B-A3B: 32/4 = 8 before the split; TP 8 > KV 4 replicates KV heads:
        # 32/8 = 4 per rank, D* = 128/4 − 1 = 31 (SOURCES.md gym row).
        ("qwen3-30b-a3b-tp8", (8, 8, 4, 31, False)),
        # DeepSeek-V3 MLA at TP 8 (curated R1 latency config): 128/8 = 16;
        # docs/theory.md#attention-tiles moves D* from 128/16 − 1 = 7 to MLA's 64-row tiles: 64/16 −
        # 1 = 3.
        ("deepseek-v3-tp8", (8, 128, 16, 3, True)),
        # DeepSeek-V3 MLA with no engine config (TP 1): 128, D* = max(1 − 1, 0) = 0.
        ("deepseek-v3-tp1", (None, 128, 128, 0, True)),
        # DeepSeek's own schema: n_heads 128, kv_lora_rank 512, no KV field: MLA, not MHA.
        ("deepseek-v3-inference-671b", (None, 128, 128, 0, True)),
    ],
)
def test_query_heads_per_kv_is_per_rank(
    in_data: Path,
    capsys: pytest.CaptureFixture[str],
    fixture: str,
    expected: tuple[int | None, int, int, int, bool],
) -> None:
    tp, h_over_kv, g, d_star, mla = expected
    _, report = check_json(f"integration/tp/{fixture}.specgate.yaml", capsys)
    deployment = only_deployment(report)
    assert deployment["metrics"]["query_heads_per_kv"] == g
    assert deployment["metrics"]["attention_optimal_draft_length"] == d_star
    model = deployment["inputs"]["model"]
    assert model["query_heads_per_kv"] == h_over_kv
    assert model["effective_query_heads_per_kv"] == g
    assert model["mla"] is mla
    if tp is not None:
        assert deployment["inputs"]["engine"]["tensor_parallel_size"] == tp
    assert ("SG306" in codes_of(deployment)) is mla


# --- tree drafting: SGLang PR 2150 -----------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "sg103"), [("al-over-depth", True), ("al-at-depth-bound", False)]
)
def test_tree_al_is_judged_against_depth_and_tile_rule_uses_n_verify(
    in_data: Path, capsys: pytest.CaptureFixture[str], fixture: str, sg103: bool
) -> None:
    _, report = check_json(f"integration/tree/pr2150-{fixture}.specgate.yaml", capsys)
    deployment = only_deployment(report)
    m = deployment["metrics"]
    engine = deployment["inputs"]["engine"]
    assert engine["engine"] == "sglang"
    assert engine["mechanism"] == "eagle"
    assert (engine["draft_length"], engine["verify_tokens"]) == (5, 64)
    assert (m["draft_length"], m["verify_tokens"]) == (5, 64)
    # G = 32/32 = 1, D* = 127. G·N_verify = 64 is not a multiple of 128 ...
    assert m["query_heads_per_kv"] == 1
    assert m["attention_optimal_draft_length"] == 127
    assert m["tile_aligned"] is False
    found = codes_of(deployment)
    # ... but D = 5 ≤ D* = 127, so the tile rule stays silent although attention-dominated.
    assert "SG201" not in found
    # AL ≤ 1 + depth = 6: 6.5 is out of range, 6 is the bound itself (strict comparison).
    # Against N_verify (1 + 64) neither would be.
    assert ("SG103" in found) is sg103
    if sg103:
        (hit,) = [f for f in deployment["findings"] if f["code"] == "SG103"]
        # the AL is stated in the claims file: line 17, "      accept_length: 6.5" → col 22
        assert (hit.get("file"), hit["line"], hit["column"]) == (None, 17, 22)
