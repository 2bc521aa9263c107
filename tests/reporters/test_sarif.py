"""SARIF 2.1.0 output: schema validity, GitHub's required fields, URIs, fingerprints.

Expected values come from the SARIF 2.1.0 specification (OASIS, errata 01) and from
GitHub's "SARIF support for code scanning" page (docs.github.com:
code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning), not
from what the reporter printed:

- ``level`` is ``error``, ``warning`` or ``note`` (spec §3.27.10); specgate maps
  fail → error, warn → warning, info and note → note;
- ``ruleIndex`` is the index of the result's rule in ``tool.driver.rules`` (§3.27.6);
- ``region.startLine`` and ``startColumn`` are 1-based (§3.30.5, §3.30.6);
- URIs are relative to the repository root, ``/``-separated (§3.4.3, GitHub);
- GitHub requires ``id``, ``shortDescription.text``, ``fullDescription.text`` and
  ``help.text`` on rules and ``message.text``, the location's ``uri``,
  ``region.startLine`` and ``ruleId`` on results, and rejects empty strings.

The schema is the official OASIS file, kept in tests/data/sarif (see SOURCE.md there).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from specgate.check.catalogue import rule_entry
from specgate.check.report import FileReport, RunReport
from specgate.cli.main import main
from specgate.core.findings import Finding
from specgate.core.paths import repo_relative
from specgate.reporters import sarif
from specgate.rules.catalogue import REGISTRY
from specgate.rules.docs import split_example
from specgate.rules.registry import Rule

DATA = Path(__file__).parent.parent / "data" / "sarif"
SCHEMA_PATH = DATA / "sarif-schema-2.1.0.json"
FAILING = DATA / "failing.specgate.yaml"
BROKEN = DATA / "broken.specgate.yaml"
REPO_ROOT = Path(__file__).resolve().parents[2]

#: specgate severity → SARIF level (docs/reports.md#status severities; SARIF §3.27.10 levels).
EXPECTED_LEVEL = {"fail": "error", "warn": "warning", "info": "note", "note": "note"}

#: What the failing fixture states, by hand from its numbers and docs/rules.md
#: (line, column, code): AL 1.4 < floor 1.35·1.1 = 1.485 (SG102), claim 3 > 1.4/(1+0.05·7) (SG104),
#: no cache_coherence_eval (SG105), ρ not given (SG204), D = 40 > D* = 31 and
#: 4·41 = 164 not a multiple of 128 (SG201), attention-dominated, G = 8, no D (SG202).
FAILING_EXPECTED = {
    (10, 5, "SG105", "warning"),
    (11, 22, "SG102", "error"),
    (13, 16, "SG104", "error"),
    (18, 5, "SG204", "note"),
    (20, 21, "SG201", "warning"),
    (30, 5, "SG202", "note"),
    # docs/theory.md#cost-model adds: 164 rows fill 2 tiles (SG206, docs/theory.md#attention-tiles);
    # AL 3.1 below the floor at the typical ρ 0.15 of the recommended class, (1 + 0.15·40) · 1.1 =
    # 7.7 (SG110, docs/theory.md#al-floor-and-guideline)
    (20, 21, "SG206", "note"),
    (24, 22, "SG110", "warning"),
}


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def run_sarif(*paths: str | Path) -> tuple[int, dict[str, Any]]:
    """``specgate check --format sarif PATHS`` in-process: exit code and parsed log."""
    out = io.StringIO()
    code = main(["check", "--format", "sarif", *map(str, paths)], stdout=out)
    return code, json.loads(out.getvalue())


def the_run(log: dict[str, Any]) -> dict[str, Any]:
    assert len(log["runs"]) == 1
    run: dict[str, Any] = log["runs"][0]
    return run


def location(result: dict[str, Any]) -> dict[str, Any]:
    physical: dict[str, Any] = result["locations"][0]["physicalLocation"]
    return physical


def fingerprint(result: dict[str, Any]) -> str:
    value: str = result["partialFingerprints"]["specgateFindingHash/v1"]
    return value


def strings(node: Any, where: str = "$") -> Iterator[tuple[str, str]]:
    """Every string value (and object key) in ``node`` with its JSON path."""
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield f"{where}.{key} (key)", key
            yield from strings(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from strings(value, f"{where}[{i}]")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def assert_schema_valid(log: dict[str, Any], schema: dict[str, Any]) -> None:
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


@pytest.fixture(scope="module")
def failing_log() -> dict[str, Any]:
    code, log = run_sarif(FAILING)
    assert code == 1
    return log


@pytest.fixture(scope="module")
def mixed_log() -> dict[str, Any]:
    code, log = run_sarif(FAILING, BROKEN)
    assert code == 2  # an unreadable input wins (docs/reports.md#exit-codes)
    return log


def git_init(folder: Path) -> None:
    """A real repository when git is here, else the ``.git`` folder core.paths looks for."""
    git = shutil.which("git")
    if git is None:
        (folder / ".git").mkdir()
        return
    subprocess.run([git, "init", "-q", str(folder)], check=True)


# --------------------------------------------------------------------------------------
# The official schema
# --------------------------------------------------------------------------------------


def test_schema_file_is_the_oasis_2_1_0_schema(schema: dict[str, Any]) -> None:
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"


@pytest.mark.parametrize("which", ["failing_log", "mixed_log"])
def test_output_validates_against_the_official_schema(
    which: str, schema: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    assert_schema_valid(request.getfixturevalue(which), schema)


def test_validator_catches_a_broken_log(
    failing_log: dict[str, Any], schema: dict[str, Any]
) -> None:
    # The check above is only worth something if it fails on bad input.
    broken = json.loads(json.dumps(failing_log))
    broken["runs"][0]["results"][0]["level"] = "fail"  # not a SARIF level
    with pytest.raises(AssertionError, match="level"):
        assert_schema_valid(broken, schema)


def test_log_header(failing_log: dict[str, Any]) -> None:
    assert failing_log["version"] == "2.1.0"
    assert failing_log["$schema"] == (
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    )
    driver = the_run(failing_log)["tool"]["driver"]
    assert driver["name"] == "specgate"
    assert driver["version"]
    # No other project's site, and no page that does not exist yet (docs/reports.md#sarif: nothing
    # is published, so no package-index page): no informationUri unless a docs URL or the
    # published repository is known.
    assert "informationUri" not in driver


def test_render_is_json_text_ending_with_a_newline() -> None:
    text = sarif.render(RunReport(status="ready", files=()), {})
    assert text.endswith("}\n")
    log = json.loads(text)
    assert the_run(log)["results"] == []
    assert the_run(log)["invocations"] == [{"executionSuccessful": True}]


# --------------------------------------------------------------------------------------
# Rule descriptors
# --------------------------------------------------------------------------------------


def test_every_registry_rule_is_a_descriptor(failing_log: dict[str, Any]) -> None:
    rules = the_run(failing_log)["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(REGISTRY)
    for descriptor in rules:
        rule = REGISTRY[descriptor["id"]]
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["defaultConfiguration"]["level"] == EXPECTED_LEVEL[rule.severity]
        assert descriptor["properties"]["severity"] == rule.severity
        assert "helpUri" not in descriptor
        # the full help shows the doc and both examples
        for text in (descriptor["help"]["text"], descriptor["help"]["markdown"]):
            assert rule.summary in text
            for example in (rule.fail_example, rule.pass_example):
                for _name, content in split_example(example):
                    assert content.strip() in text
        # GitHub: at most 1024 characters; name at most 255
        assert len(descriptor["shortDescription"]["text"]) <= 1024
        assert len(descriptor["fullDescription"]["text"]) <= 1024
        assert len(descriptor["name"]) <= 255


def test_full_description_is_the_first_paragraph_of_the_doc() -> None:
    rule = REGISTRY["SG002"]
    descriptor = sarif.rule_descriptor(rule_entry(rule))
    # SG002's doc opens "**What it checks.** No mapping holds the same key twice. ..."
    text = descriptor["fullDescription"]["text"]
    assert text.startswith("What it checks. No mapping holds the same key twice.")
    assert "**" not in text
    assert "Why." not in text  # the second paragraph
    assert descriptor["fullDescription"]["markdown"].startswith("**What it checks.**")


def test_a_long_first_paragraph_is_cut_to_1024_characters() -> None:
    rule = Rule(
        code="SG999",
        name="test-only",
        severity="warn",
        summary="A test rule.",
        raw_doc=("word " * 600).strip() + "\n\nSecond paragraph.\n",
        raw_fail_example="version: 1\n",
        raw_pass_example="version: 1\n",
    )
    descriptor = sarif.rule_descriptor(rule_entry(rule))
    text = descriptor["fullDescription"]["text"]
    assert len(text) <= 1024
    assert text.endswith("word…")
    assert descriptor["defaultConfiguration"]["level"] == "warning"
    # the help keeps the whole doc
    assert descriptor["help"]["text"].count("word") == 600


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


def test_results_of_the_failing_fixture(failing_log: dict[str, Any]) -> None:
    results = the_run(failing_log)["results"]
    got = {
        (
            location(r)["region"]["startLine"],
            location(r)["region"]["startColumn"],
            r["ruleId"],
            r["level"],
        )
        for r in results
    }
    assert got == FAILING_EXPECTED
    assert len(results) == len(FAILING_EXPECTED)


def test_rule_index_points_at_the_rule(failing_log: dict[str, Any]) -> None:
    run = the_run(failing_log)
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_levels_follow_the_specgate_severity(failing_log: dict[str, Any]) -> None:
    results = the_run(failing_log)["results"]
    for result in results:
        severity = result["properties"]["severity"]
        assert result["level"] == EXPECTED_LEVEL[severity]
        assert severity == REGISTRY[result["ruleId"]].severity
    # all four severities' levels appear: fail, warn, info (SG202) and note (SG204)
    assert {r["properties"]["severity"] for r in results} == {"fail", "warn", "info", "note"}


def test_github_required_fields_and_no_empty_strings(mixed_log: dict[str, Any]) -> None:
    run = the_run(mixed_log)
    for rule in run["tool"]["driver"]["rules"]:
        for key in ("shortDescription", "fullDescription", "help"):
            assert rule[key]["text"].strip()
        assert rule["id"].strip()
    assert run["results"]
    for result in run["results"]:
        assert result["message"]["text"].strip()
        assert result["ruleId"].strip()
        physical = location(result)
        assert physical["artifactLocation"]["uri"].strip()
        assert physical["region"]["startLine"] >= 1
        assert result["partialFingerprints"]
    empty = [where for where, value in strings(mixed_log) if not value.strip()]
    assert empty == []


def test_uris_are_repo_relative_in_this_repository(failing_log: dict[str, Any]) -> None:
    expected = FAILING.resolve().relative_to(REPO_ROOT).as_posix()
    assert repo_relative(FAILING) == expected  # the test's premise: this is a git checkout
    for result in the_run(failing_log)["results"]:
        artifact = location(result)["artifactLocation"]
        assert artifact == {"uri": expected, "uriBaseId": "%SRCROOT%"}


# --------------------------------------------------------------------------------------
# URIs from a subfolder of a repository, and outside any repository
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("argument", ["sub/app.specgate.yaml", "./sub/app.specgate.yaml"])
def test_uri_is_repo_relative_from_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argument: str
) -> None:
    repo = tmp_path / "repo"
    (repo / "deploy" / "sub").mkdir(parents=True)
    git_init(repo)
    shutil.copy(FAILING, repo / "deploy" / "sub" / "app.specgate.yaml")
    monkeypatch.chdir(repo / "deploy")

    _, log = run_sarif(argument)
    results = the_run(log)["results"]
    assert results
    for result in results:
        artifact = location(result)["artifactLocation"]
        assert artifact == {"uri": "deploy/sub/app.specgate.yaml", "uriBaseId": "%SRCROOT%"}


def test_uri_of_a_file_outside_any_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "loose"
    folder.mkdir()
    target = folder / "app.specgate.yaml"
    shutil.copy(FAILING, target)
    if repo_relative(target) is not None:
        pytest.skip("the temp folder lies inside a git repository here")
    monkeypatch.chdir(tmp_path)

    _, log = run_sarif("./loose/app.specgate.yaml")
    results = the_run(log)["results"]
    assert results
    for result in results:
        # the path as shown, as a relative URI reference: no uriBaseId, no "./"
        assert location(result)["artifactLocation"] == {"uri": "loose/app.specgate.yaml"}


@pytest.mark.parametrize(
    ("shown", "repo_path", "expected"),
    [
        ("a/b.specgate.yaml", "x/a/b.specgate.yaml", {"uri": "x/a/b.specgate.yaml"}),
        # RFC 3986 §2.1: a space is percent-encoded; "/" stays a separator
        ("my deploy.yaml", "ops/my deploy.yaml", {"uri": "ops/my%20deploy.yaml"}),
        # a ":" in the first segment would read as a scheme (RFC 3986 §4.2)
        ("c:d.yaml", "c:d.yaml", {"uri": "c%3Ad.yaml"}),
        # a repository path uses "/"; a backslash is part of a POSIX name (%5C)
        ("x.yaml", "dir\\x.yaml", {"uri": "dir%5Cx.yaml"}),
    ],
)
def test_artifact_uri_in_a_repository(shown: str, repo_path: str, expected: dict[str, str]) -> None:
    assert sarif.artifact_uri(shown, repo_path) == {**expected, "uriBaseId": "%SRCROOT%"}


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        ("./loose/app.yaml", "loose/app.yaml"),
        ("../other/app.yaml", "../other/app.yaml"),
        ("dir\\app.yaml", "dir/app.yaml"),
        ("/srv/claims/app.yaml", "file:///srv/claims/app.yaml"),
        ("C:\\claims\\app.yaml", "file:///C:/claims/app.yaml"),
    ],
)
def test_artifact_uri_outside_a_repository(shown: str, expected: str) -> None:
    assert sarif.artifact_uri(shown, None) == {"uri": expected}


# --------------------------------------------------------------------------------------
# Fingerprints
# --------------------------------------------------------------------------------------


def by_rule(log: dict[str, Any]) -> dict[str, dict[str, Any]]:
    results = the_run(log)["results"]
    keyed = {r["ruleId"]: r for r in results}
    assert len(keyed) == len(results)  # one finding per rule in the fixture
    return keyed


def test_fingerprints_survive_lines_moving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git_init(tmp_path)
    target = tmp_path / "app.specgate.yaml"
    original = FAILING.read_text(encoding="utf-8")
    target.write_text(original, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    _, before = run_sarif("app.specgate.yaml")

    target.write_text("# an unrelated comment\n" + original, encoding="utf-8")
    _, after = run_sarif("app.specgate.yaml")

    old, new = by_rule(before), by_rule(after)
    assert old.keys() == new.keys()
    for code, result in old.items():
        assert location(new[code])["region"]["startLine"] == (
            location(result)["region"]["startLine"] + 1
        )
        assert fingerprint(new[code]) == fingerprint(result)


def test_fingerprints_survive_deployments_moving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git_init(tmp_path)
    monkeypatch.chdir(tmp_path)
    first = (
        "version: 1\ndeployments:\n"
        "  - name: a\n    speculation:\n      enabled: false\n      draft_length: 7\n"
        "      draft_depth_ratio: 0.05\n    evidence:\n      accept_length: 1.4\n"
        "    claims:\n      speedup: 3\n"
    )
    other = "  - name: b\n    speculation:\n      enabled: false\n"
    Path("app.specgate.yaml").write_text(first, encoding="utf-8")
    _, before = run_sarif("app.specgate.yaml")
    # deployment "a" becomes deployments[1]: its JSON paths change, its name does not
    head, body = first.split("  - name: a\n", 1)
    Path("app.specgate.yaml").write_text(head + other + "  - name: a\n" + body, "utf-8")
    _, after = run_sarif("app.specgate.yaml")

    old, new = by_rule(before), by_rule(after)
    assert old.keys() == new.keys() == {"SG102", "SG104"}
    for code in old:
        assert new[code]["properties"]["path"].startswith("deployments[1].")
        assert fingerprint(new[code]) == fingerprint(old[code])


def test_fingerprints_differ_between_findings(mixed_log: dict[str, Any]) -> None:
    prints = [fingerprint(r) for r in the_run(mixed_log)["results"]]
    assert len(prints) == len(set(prints)) == len(FAILING_EXPECTED)


def test_fingerprints_differ_for_same_rule_in_same_named_deployments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git_init(tmp_path)
    monkeypatch.chdir(tmp_path)
    deployment = (
        "  - name: twin\n    speculation:\n      enabled: false\n      draft_length: 7\n"
        "      draft_depth_ratio: 0.05\n    evidence:\n      accept_length: 3\n"
        "    claims:\n      speedup: 3\n"
    )
    Path("app.specgate.yaml").write_text(
        "version: 1\ndeployments:\n" + deployment + deployment, encoding="utf-8"
    )
    _, log = run_sarif("app.specgate.yaml")
    speedups = [r for r in the_run(log)["results"] if r["ruleId"] == "SG104"]
    assert len(speedups) == 2
    assert fingerprint(speedups[0]) != fingerprint(speedups[1])


def test_fingerprint_depends_on_file_and_rule() -> None:
    finding = Finding(
        code="SG104",
        name="claimed-speedup-over-theory",
        severity="fail",
        message="claimed 3x exceeds 1.037x",
        file="a.specgate.yaml",
        path="claims.speedup",
        line=3,
        column=4,
    )

    def print_of(f: Finding, repo_path: str) -> str:
        file = FileReport(
            path=f.file or "", status="fail", error=None, findings=(f,), deployments=()
        )
        log = json.loads(sarif.render(RunReport("fail", (file,)), {f.file or "": repo_path}))
        return fingerprint(the_run(log)["results"][0])

    base = print_of(finding, "a.specgate.yaml")
    assert print_of(finding, "b/a.specgate.yaml") != base
    other_rule = finding._replace(code="SG102", name="accept-length-below-floor")
    assert print_of(other_rule, "a.specgate.yaml") != base
    moved = finding._replace(line=30, column=1, message="other numbers")
    assert print_of(moved, "a.specgate.yaml") == base


# --------------------------------------------------------------------------------------
# Regions, unreadable files
# --------------------------------------------------------------------------------------


def test_a_finding_without_a_line_starts_at_line_1(schema: dict[str, Any]) -> None:
    finding = Finding(
        code="SG001",
        name="schema-violation",
        severity="fail",
        message="the document is empty",
        file="empty.specgate.yaml",
        path="",
        line=None,
        column=None,
    )
    file = FileReport(
        path="empty.specgate.yaml", status="fail", error=None, findings=(finding,), deployments=()
    )
    log = json.loads(sarif.render(RunReport("fail", (file,)), {"empty.specgate.yaml": None}))
    result = the_run(log)["results"][0]
    assert location(result)["region"] == {"startLine": 1}
    assert location(result)["artifactLocation"] == {"uri": "empty.specgate.yaml"}
    assert_schema_valid(log, schema)


def test_an_unparseable_file_is_a_notification(mixed_log: dict[str, Any]) -> None:
    run = the_run(mixed_log)
    broken_uri = BROKEN.resolve().relative_to(REPO_ROOT).as_posix()
    # no result on the broken file: no rule ran there
    assert all(location(r)["artifactLocation"]["uri"] != broken_uri for r in run["results"])
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert "YAML syntax error" in note["message"]["text"]
    physical = note["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": broken_uri, "uriBaseId": "%SRCROOT%"}
    # the fixture's flow mapping is never closed: the parser stops at the end, line 5
    assert physical["region"]["startLine"] == 5
    descriptors = run["tool"]["driver"]["notifications"]
    assert descriptors[note["descriptor"]["index"]]["id"] == note["descriptor"]["id"]


def test_an_unreadable_file_without_a_position(schema: dict[str, Any]) -> None:
    file = FileReport(
        path="gone.specgate.yaml",
        status="error",
        error="gone.specgate.yaml: cannot read: No such file or directory",
        findings=(),
        deployments=(),
    )
    log = json.loads(sarif.render(RunReport("error", (file,)), {"gone.specgate.yaml": None}))
    note = the_run(log)["invocations"][0]["toolExecutionNotifications"][0]
    assert note["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert the_run(log)["results"] == []
    assert_schema_valid(log, schema)


def test_the_cli_writes_sarif_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "specgate.sarif"
    stdout = io.StringIO()
    code = main(["check", "--format", "sarif", "--output", str(out), str(FAILING)], stdout=stdout)
    assert code == 1
    assert stdout.getvalue() == ""
    assert the_run(json.loads(out.read_text(encoding="utf-8")))["results"]
