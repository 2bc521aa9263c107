"""Hostile inputs, one test per kind with more variants than the hostile-repository review listed.

Each is an input error for that file (exit 2, one line naming the file) or a finding
(exit 1), in bounded time, and the run goes on with the other files; never exit 3.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from .conftest import BASE, FORMATS, InProcess, run, with_engine

FAILING = BASE.replace("accept_length: 2.4", "accept_length: 1.2")


def _error_of(result_json: dict, path: str) -> str | None:  # type: ignore[type-arg]
    return next(f["error"] for f in result_json["files"] if f["path"] == path)


# --- 03: claims files confined to the repository (symlinks included) ---------------------


@pytest.mark.parametrize("chain", [1, 2])
def test_claims_symlink_out_of_the_repository_is_not_read(
    sg: InProcess, repo: Path, tmp_path: Path, chain: int
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:TOPSECRET:/root:/bin/bash\n", "utf-8")
    target: Path = secret
    for index in range(chain - 1):  # a link to a link (inside the repo) to the secret
        link = repo / f"hop{index}.yaml"
        link.symlink_to(target)
        target = link
    (repo / "leak.specgate.yaml").symlink_to(target)
    (repo / "ok.specgate.yaml").write_text(FAILING, "utf-8")
    for fmt in FORMATS:
        result = sg(["check", "--format", fmt, "."], repo)
        assert result.code == 2
        assert "TOPSECRET" not in result.out + result.err
    report = sg(["check", "--format", "json", "."], repo).json()
    assert "leads out of the repository" in _error_of(report, "leak.specgate.yaml")  # type: ignore[operator]
    # the run went on: the other file was checked
    assert [f["status"] for f in report["files"] if f["path"] == "ok.specgate.yaml"] == ["fail"]


def test_claims_file_through_a_symlinked_folder_out_of_the_repository(
    sg: InProcess, repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.specgate.yaml").write_text(FAILING, "utf-8")
    (repo / "linked").symlink_to(elsewhere, target_is_directory=True)
    named = sg(["check", "--format", "json", "linked/x.specgate.yaml"], repo)
    assert named.code == 2
    assert "leads out of the repository" in named.json()["files"][0]["error"]
    # a folder search does not follow symlinked folders at all
    (repo / "ok.specgate.yaml").write_text(BASE, "utf-8")
    found = sg(["check", "--format", "json", "."], repo).json()
    assert [f["path"] for f in found["files"]] == ["ok.specgate.yaml"]


def test_claims_symlink_inside_the_repository_is_read(sg: InProcess, repo: Path) -> None:
    (repo / "real").mkdir()
    (repo / "real" / "c.yaml").write_text(FAILING, "utf-8")
    (repo / "link.specgate.yaml").symlink_to(repo / "real" / "c.yaml")
    result = sg(["check", "--format", "github", "link.specgate.yaml"], repo)
    assert result.code == 1
    assert "file=link.specgate.yaml," in result.out  # annotated where the link stands


# --- 04, 12: symlink loops, over-long names, NUL bytes ------------------------------------


def test_symlink_loops_are_input_errors_and_the_run_goes_on(sg: InProcess, repo: Path) -> None:
    (repo / "ok.specgate.yaml").write_text(FAILING, "utf-8")
    (repo / "l1.specgate.yaml").symlink_to("l2.specgate.yaml")
    (repo / "l2.specgate.yaml").symlink_to("l1.specgate.yaml")
    (repo / "self.specgate.yaml").symlink_to("self.specgate.yaml")
    report = sg(["check", "--format", "json", "."], repo)
    assert report.code == 2
    data = report.json()
    for name in ("l1.specgate.yaml", "l2.specgate.yaml", "self.specgate.yaml"):
        assert _error_of(data, name) == f"{name}: symlink loop"
    assert _error_of(data, "ok.specgate.yaml") is None


@pytest.mark.parametrize(
    "reference",
    [
        '"a\\0b.yaml"',  # NUL
        "a" * 300 + ".yaml",  # one name over NAME_MAX
        "/".join(["d" * 200] * 30) + "/x.yaml",  # a path over PATH_MAX
        "loop.yaml",  # a symlink to itself
        "loop.yaml/x.yaml",  # through a loop
        "dangling.yaml",  # a symlink to nothing
    ],
)
@pytest.mark.parametrize("key", ["engine_config", "hf_config", "metrics"])
def test_unusable_reference_paths_are_input_errors(
    sg: InProcess, repo: Path, reference: str, key: str
) -> None:
    (repo / "loop.yaml").symlink_to("loop.yaml")
    (repo / "dangling.yaml").symlink_to("nowhere.yaml")
    if key == "engine_config":
        text = with_engine(reference)
    elif key == "hf_config":
        text = BASE.replace(
            "  - name: dep\n", f"  - name: dep\n    model:\n      hf_config: {reference}\n"
        )
    else:
        text = BASE.replace(
            "      accept_length: 2.4\n",
            f"      metrics: {{format: vllm-log, path: {reference}}}\n",
        )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    (repo / "ok.specgate.yaml").write_text(FAILING, "utf-8")
    result = sg(["check", "--format", "json", "."], repo)
    assert result.code == 2, result.err
    data = result.json()
    error = _error_of(data, "c.specgate.yaml")
    assert error is not None and error.startswith("c.specgate.yaml:")
    assert _error_of(data, "ok.specgate.yaml") is None


@pytest.mark.skipif(sys.platform != "linux", reason="Linux accepts arbitrary bytes in names")
def test_undecodable_and_surrogate_text_in_every_format(sg: InProcess, repo: Path) -> None:
    # 05/06: a JSON "\ud800" name, a non-UTF-8 file name: no format may crash.
    (repo / "c.specgate.json").write_text(
        '{"version":1,"deployments":[{"name":"\\udfff\\ud800 x","speculation":{"enabled":false}}]}',
        "utf-8",
    )
    with open(os.path.join(os.fsencode(repo), b"\xff\xfe.specgate.yaml"), "wb") as handle:
        handle.write(FAILING.encode())
    for fmt in FORMATS:
        result = sg(
            ["check", "--format", fmt, "."], repo, env={"GITHUB_STEP_SUMMARY": str(repo / "s.md")}
        )
        assert result.code == 1, (fmt, result.err)
    sarif = json.loads(sg(["check", "--format", "sarif", "."], repo).out)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    }
    assert "%FF%FE.specgate.yaml" in uris  # the original bytes, percent-encoded
    data = sg(["check", "--format", "json", "."], repo).json()
    names = [d["name"] for f in data["files"] for d in f["deployments"]]
    assert "\udfff\ud800 x" in names  # JSON escapes carry the surrogates back


@pytest.mark.parametrize("encoding", ["cp1252", "ascii", "latin-1"])
def test_output_is_utf8_on_any_locale(repo: Path, encoding: str) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING.replace("name: dep", "name: ρ·D ✓"), "utf-8")
    for fmt in FORMATS:
        result = run(
            ["check", "--format", fmt, "c.specgate.yaml"],
            repo,
            env={"PYTHONIOENCODING": encoding, "PYTHONUTF8": "0", "LC_ALL": "C"},
        )
        assert result.code == 1, result.err
        if fmt != "github":  # annotations here carry no ρ
            assert "ρ" in result.out  # written as UTF-8, not escaped or crashed


# --- 08-11: deep nesting and huge numbers in referenced files ----------------------------


@pytest.mark.parametrize("depth", [1500, 5000])
@pytest.mark.parametrize("where", ["json string", "json file", "yaml file"])
def test_deep_nesting(sg: InProcess, repo: Path, depth: int, where: str) -> None:
    nested = "[" * depth + "]" * depth
    if where == "json string":
        (repo / "e.yaml").write_text(f"speculative_config: '{nested}'\n", "utf-8")
        text = with_engine("e.yaml", drop_draft_length=True)
    elif where == "json file":
        (repo / "m.json").write_text('{"num_attention_heads": ' + nested + "}", "utf-8")
        text = BASE.replace(
            "  - name: dep\n", "  - name: dep\n    model:\n      hf_config: m.json\n"
        )
    else:
        text = BASE + "x-deep: " + "[" * depth + "]" * depth + "\n"
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "c.specgate.yaml"], repo)
    assert result.code in (1, 2), result.err
    assert "internal error" not in result.err


HUGE = "1" + "0" * 400
HUGER = "1" + "0" * 5000


@pytest.mark.parametrize("number", [HUGE, HUGER, f"-{HUGE}", "1e400", "2" + "0" * 20])
@pytest.mark.parametrize(
    "where", ["engine D", "engine tp", "hf heads", "hf vocab", "vllm log", "claims D", "claims AL"]
)
def test_huge_numbers(sg: InProcess, repo: Path, number: str, where: str) -> None:
    text = BASE
    if where.startswith("engine"):
        key = "num_speculative_tokens" if where == "engine D" else "tensor_parallel_size"
        extra = "" if where == "engine D" else ", num_speculative_tokens: 3"
        (repo / "e.yaml").write_text(
            f"speculative_config: {{method: ngram, {key}: {number}{extra}}}\n"
            if where == "engine D"
            else f"tensor_parallel_size: {number}\nspeculative_config: {{method: ngram{extra}}}\n",
            "utf-8",
        )
        text = with_engine("e.yaml", drop_draft_length=True)
    elif where.startswith("hf"):
        key = "num_attention_heads" if where == "hf heads" else "vocab_size"
        (repo / "m.json").write_text(
            f'{{"{key}": {number}, "num_key_value_heads": 3, "num_attention_heads_x": 1}}'
            if where == "hf vocab"
            else f'{{"{key}": {number}, "num_key_value_heads": 3}}',
            "utf-8",
        )
        text = BASE.replace(
            "  - name: dep\n", "  - name: dep\n    model:\n      hf_config: m.json\n"
        )
    elif where == "vllm log":
        (repo / "v.log").write_text(
            "SpecDecoding metrics: Draft acceptance rate: 38.8%, Mean acceptance length: 2.16, "
            f"Accepted: {number} tokens, Drafted: 3{number} tokens, "
            "Per-position acceptance rate: 0.5, 0.3, 0.2\n",
            "utf-8",
        )
        text = BASE.replace(
            "      accept_length: 2.4\n", "      metrics: {format: vllm-log, path: v.log}\n"
        )
    elif where == "claims D":
        text = BASE.replace("draft_length: 3", f"draft_length: {number}")
    else:
        text = BASE.replace("accept_length: 2.4", f"accept_length: {number}")
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = run(["check", "--format", "json", "c.specgate.yaml"], repo, timeout=30)
    assert result.code in (0, 1, 2), result.err
    assert "internal error" not in result.err


# --- 13: bounded work --------------------------------------------------------------------


@pytest.mark.parametrize("d", [1025, 300_000_000, 10**18])
def test_draft_length_over_the_maximum_is_a_finding(sg: InProcess, repo: Path, d: int) -> None:
    text = BASE.replace("draft_length: 3", f"draft_length: {d}").replace(
        "      accept_length: 2.4\n", "      metrics: {format: iid-rate, alpha: 0.5}\n"
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    data = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert data.code == 1
    findings = data.json()["files"][0]["deployments"][0]["findings"]
    assert [(f["code"], f["path"]) for f in findings] == [
        ("SG001", "deployments[0].speculation.draft_length")
    ]
    assert "≤ 1024" in findings[0]["message"]


@pytest.mark.parametrize("d", [1025, 10**9])
def test_draft_length_from_a_serving_config_is_bounded_too(
    sg: InProcess, repo: Path, d: int
) -> None:
    # Contract change (new-user trial D10, "degrade, never stop"): a D past the bound is
    # a finding at its line (SG315, docs/engines.md#out-of-bounds), no longer exit 2 for
    # the whole file; nothing is computed with it (one bound: limits.MAX_DRAFT_LENGTH)
    (repo / "e.yaml").write_text(
        f"speculative_config: {{method: ngram, num_speculative_tokens: {d}}}\n", "utf-8"
    )
    text = with_engine("e.yaml", drop_draft_length=True)
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code == 1
    (file,) = result.json()["files"]
    assert file["error"] is None
    (hit,) = [f for f in file["deployments"][0]["findings"] if f["code"] == "SG315"]
    assert (hit["file"], hit["line"], hit["severity"]) == ("e.yaml", 1, "fail")
    assert f"num_speculative_tokens {d} is above specgate's limit of 1024" in hit["message"]


@pytest.mark.parametrize(
    "metrics",
    [
        "{format: histogram, histogram: {'99999999': 1}}",
        "{format: per-position, marginal: [" + ", ".join(["0.5"] * 1025) + "]}",
    ],
)
def test_inline_profiles_are_bounded(sg: InProcess, repo: Path, metrics: str) -> None:
    text = BASE.replace("      accept_length: 2.4\n", f"      metrics: {metrics}\n")
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code == 1
    codes = [f["code"] for d in result.json()["files"][0]["deployments"] for f in d["findings"]]
    assert codes == ["SG001"]


# --- 14: linear command-line splitting ----------------------------------------------------


@pytest.mark.parametrize("shape", ["one line", "continued lines", "many commands"])
def test_long_command_lines_split_in_linear_time(repo: Path, shape: str) -> None:
    if shape == "one line":
        line = "vllm serve m " + "--x 1 " * 40000 + "\n"
    elif shape == "continued lines":
        line = "vllm serve m \\\n" + "  --x 1 \\\n" * 30000 + "  --y 2\n"
    else:
        line = "echo a; " * 30000 + "vllm serve m\n"
    (repo / "serve.txt").write_text(line, "utf-8")
    (repo / "c.specgate.yaml").write_text(with_engine("serve.txt", drop_draft_length=True), "utf-8")
    # A hang guard, not a timing test: the quadratic split took 42 s on the first shape.
    result = run(["check", "c.specgate.yaml"], repo, timeout=30)
    # Contract change (issue 24): no speculative setting read is SG312 on the
    # deployment (it was an input error, exit 2); the guard is that the run completes.
    assert result.code != 2
    assert "SG312" in result.out
    assert "internal error" not in result.err


# --- 17: SARIF with backslashes -----------------------------------------------------------


@pytest.mark.parametrize("name", ["C:\\\\models\\\\x", "\\\\1\\\\g<0>", "a\\\\"])
def test_backslashes_in_names_keep_sarif_valid(sg: InProcess, repo: Path, name: str) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING.replace("name: dep", f'name: "{name}"'), "utf-8")
    result = sg(["check", "--format", "sarif", "c.specgate.yaml"], repo)
    assert result.code == 1, result.err
    log = json.loads(result.out)
    assert log["runs"][0]["results"]


@pytest.mark.skipif(sys.platform == "win32", reason="a backslash is a separator on Windows")
def test_backslash_in_a_file_name_is_percent_encoded(sg: InProcess, repo: Path) -> None:
    (repo / "a\\b.specgate.yaml").write_text(FAILING, "utf-8")
    result = sg(["check", "--format", "sarif", "."], repo)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(result.out)["runs"][0]["results"]
    }
    assert uris == {"a%5Cb.specgate.yaml"}
