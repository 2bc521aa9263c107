"""`check` conventions users know from ruff and yamllint, end to end (README.md#command-line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import BASE, InProcess, run

FAILING = BASE.replace("accept_length: 2.4", "accept_length: 1.2")  # SG102 at line 10
# SG104 (claimed 9x over 2.087x) and SG204 (ρ not given) as well:
SEVERAL = FAILING.replace("      draft_depth_ratio: 0.05\n", "") + "    claims:\n      speedup: 9\n"


# --- standard input ---------------------------------------------------------------------


def test_stdin_with_a_file_name(repo: Path) -> None:
    (repo / "deploy").mkdir()
    result = run(
        ["check", "--format", "json", "--stdin-filename", "deploy/chat.specgate.yaml", "-"],
        repo,
        stdin=FAILING.encode(),
    )
    assert result.code == 1
    (file,) = result.json()["files"]
    assert file["path"] == "deploy/chat.specgate.yaml"
    assert [f["line"] for f in file["deployments"][0]["findings"]] == [10]


def test_stdin_json_by_suffix_and_references_from_its_folder(repo: Path) -> None:
    (repo / "deploy").mkdir()
    (repo / "deploy" / "e.yaml").write_text(
        "speculative_config: {method: ngram, num_speculative_tokens: 5}\n", "utf-8"
    )
    claims = {
        "version": 1,
        "deployments": [
            {
                "name": "d",
                "speculation": {
                    "enabled": True,
                    "engine": "vllm",
                    "engine_config": "e.yaml",
                    "draft_length": 3,
                },
                "evidence": {"accept_length": 2.4, "cache_coherence_eval": True},
            }
        ],
    }
    result = run(
        ["check", "--format", "json", "--stdin-filename", "deploy/c.specgate.json", "-"],
        repo,
        stdin=json.dumps(claims).encode(),
    )
    codes = [f["code"] for f in result.json()["files"][0]["deployments"][0]["findings"]]
    assert "SG301" in codes  # D 3 stated, 5 in deploy/e.yaml: read from the stdin file's folder


def test_stdin_without_a_name_and_with_files(repo: Path) -> None:
    (repo / "a.specgate.yaml").write_text(BASE, "utf-8")
    result = run(["check", "--format", "json", "-", "a.specgate.yaml"], repo, stdin=b"[\n")
    assert result.code == 2
    files = {f["path"]: f["error"] for f in result.json()["files"]}
    assert files["a.specgate.yaml"] is None
    assert files["-"].startswith("-:2:1: YAML syntax error")


@pytest.mark.parametrize(
    ("stdin", "reason"),
    [
        (b"\xff\xfe", "not valid UTF-8"),
        (b"a\x00b", "NUL byte"),
        (b"x" * (1024 * 1024 + 1), "larger"),
    ],
)
def test_stdin_input_limits(repo: Path, stdin: bytes, reason: str) -> None:
    result = run(["check", "-"], repo, stdin=stdin)
    assert result.code == 2
    assert reason in result.out


def test_stdin_filename_needs_the_dash(sg: InProcess, repo: Path) -> None:
    result = sg(["check", "--stdin-filename", "x.yaml", "."], repo)
    assert result.code == 2
    assert "--stdin-filename needs the PATH '-'" in result.err


# --- quiet, statistics, select/ignore, output-format ----------------------------------------


def test_quiet_prints_findings_only(sg: InProcess, repo: Path) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING, "utf-8")
    (repo / "ok.specgate.yaml").write_text(BASE, "utf-8")
    result = sg(["check", "-q", "."], repo)
    assert result.code == 1
    assert result.out.splitlines() == [
        # docs/theory.md#al-floor-and-guideline: the default floor is break-even × 1.1 = (1 +
        # 0.05·3) × 1.1 = 1.265
        "c.specgate.yaml:10:22: fail SG102 accept-length-below-floor: AL 1.2 is below the floor "
        "1.265 (the default floor: break-even AL 1.15 (β 1 + ρ 0.05·3) × (1 + 0.1))"
    ]
    assert sg(["check", "--quiet", "ok.specgate.yaml"], repo).out == ""


def test_statistics(sg: InProcess, repo: Path) -> None:
    (repo / "a.specgate.yaml").write_text(SEVERAL, "utf-8")
    (repo / "b.specgate.yaml").write_text(FAILING, "utf-8")
    result = sg(["check", "--statistics", "."], repo)
    assert result.code == 1
    # docs/theory.md#al-floor-and-guideline moves SEVERAL (no ρ: default floor 1 × 1.1 = 1.1 ≤ AL
    # 1.2) from SG102 to the SG110 guideline (a trained drafter below min(2, 1 + 3/2) = 2); FAILING
    # keeps SG102.
    assert result.out.splitlines() == [
        "    1  SG102  fail  accept-length-below-floor",
        "    1  SG104  fail  claimed-speedup-over-theory",
        "    1  SG110  warn  accept-length-below-guideline",
        "    1  SG204  note  draft-depth-ratio-assumed",
    ]
    data = json.loads(sg(["check", "--statistics", "--format", "json", "."], repo).out)
    assert data["rules"][0] == {
        "code": "SG102",
        "name": "accept-length-below-floor",
        "severity": "fail",
        "count": 1,
        "suppressed": 0,
    }


@pytest.mark.parametrize(
    ("args", "codes", "exit_code"),
    [
        (["--select", "SG104"], ["SG104"], 1),
        (["--select", "claimed-speedup-over-theory,SG204"], ["SG104", "SG204"], 1),
        (["--select", "SG2"], ["SG204"], 0),
        # docs/theory.md#al-floor-and-guideline: SEVERAL's AL 1.2 is SG110 (guideline, warn), not
        # SG102
        (["--ignore", "SG102", "--ignore", "SG104"], ["SG110", "SG204"], 0),
        (["--select", "SG1", "--ignore", "SG104"], ["SG110"], 0),
    ],
)
def test_select_and_ignore(
    sg: InProcess, repo: Path, args: list[str], codes: list[str], exit_code: int
) -> None:
    (repo / "c.specgate.yaml").write_text(SEVERAL, "utf-8")
    result = sg(["check", "--output-format", "json", *args, "c.specgate.yaml"], repo)
    assert result.code == exit_code
    findings = result.json()["files"][0]["deployments"][0]["findings"]
    assert sorted(f["code"] for f in findings if not f.get("suppressed")) == codes


def test_select_names_no_rule(sg: InProcess, repo: Path) -> None:
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    result = sg(["check", "--select", "SG999", "c.specgate.yaml"], repo)
    assert result.code == 2
    assert "--select 'SG999' names no rule" in result.err


def test_output_format_is_the_format(sg: InProcess, repo: Path) -> None:
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    assert (
        sg(["check", "--output-format", "sarif", "c.specgate.yaml"], repo).out
        == sg(["check", "--format", "sarif", "c.specgate.yaml"], repo).out
    )


def test_o_is_output(sg: InProcess, repo: Path) -> None:
    # ruff's -o FILE (new-user trial 2026-12-02, defect 12): the same report in the file,
    # nothing on standard output, and a clash named by the long form
    (repo / "c.specgate.yaml").write_text(FAILING, "utf-8")
    long = sg(["check", "--output", "long.txt", "c.specgate.yaml"], repo)
    short = sg(["check", "-o", "short.txt", "c.specgate.yaml"], repo)
    glued = sg(["check", "-oglued.txt", "c.specgate.yaml"], repo)
    assert (long.code, short.code, glued.code) == (1, 1, 1)
    assert short.out == glued.out == long.out == ""
    text = (repo / "long.txt").read_text("utf-8")
    assert "fail SG102" in text
    assert (repo / "short.txt").read_text("utf-8") == text == (repo / "glued.txt").read_text()
    clash = sg(["check", "c.specgate.yaml", "-o", "r.sarif", "--sarif-file", "r.sarif"], repo)
    assert clash.code == 2 and "--output and --sarif-file name the same file" in clash.err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # "json" is taken as a PATH: only the option is unknown
        (
            ["check", "--fromat", "json"],
            "specgate: unrecognized arguments: --fromat; "
            "did you mean --format? (see specgate check --help)",
        ),
        (
            ["doctor", "--accept-lenght=2"],
            "specgate: unrecognized arguments: "
            "--accept-lenght=2; did you mean --accept-length? (see specgate doctor --help)",
        ),
        (
            ["rules", "--bogus"],
            "specgate: unrecognized arguments: --bogus (see specgate rules --help)",
        ),
    ],
)
def test_unknown_options_name_the_subcommand_help(
    sg: InProcess, repo: Path, argv: list[str], expected: str
) -> None:
    result = sg(argv, repo)
    assert result.code == 2
    assert result.err == f"{expected}\n"


# --- .gitignore and exclude -------------------------------------------------------------------


def test_folder_search_respects_gitignore(sg: InProcess, repo: Path) -> None:
    (repo / ".gitignore").write_text("build/\n*.tmp.specgate.yaml\n", "utf-8")
    for path in (
        "build/x.specgate.yaml",
        "a.tmp.specgate.yaml",
        "keep/ok.specgate.yaml",
        "keep/sub/y.specgate.yaml",
        "keep/sub/z.specgate.yaml",
    ):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(BASE, "utf-8")
    # a nested .gitignore ignores one file and re-includes another pattern
    (repo / "keep" / "sub" / ".gitignore").write_text("y.specgate.yaml\n", "utf-8")
    data = sg(["check", "--format", "json", "."], repo).json()
    assert [f["path"] for f in data["files"]] == [
        "keep/ok.specgate.yaml",
        "keep/sub/z.specgate.yaml",
    ]
    # from a subfolder, the .gitignore above still applies
    sub = sg(["check", "--format", "json", "keep"], repo).json()
    assert [f["path"] for f in sub["files"]] == [
        "keep/ok.specgate.yaml",
        "keep/sub/z.specgate.yaml",
    ]
    # a file named on the command line is checked whatever .gitignore says
    named = sg(["check", "--format", "json", "build/x.specgate.yaml"], repo).json()
    assert [f["path"] for f in named["files"]] == ["build/x.specgate.yaml"]


def test_negated_gitignore_pattern(sg: InProcess, repo: Path) -> None:
    (repo / ".gitignore").write_text("*.specgate.yaml\n!keep.specgate.yaml\n", "utf-8")
    for name in ("a.specgate.yaml", "keep.specgate.yaml"):
        (repo / name).write_text(BASE, "utf-8")
    data = sg(["check", "--format", "json", "."], repo).json()
    assert [f["path"] for f in data["files"]] == ["keep.specgate.yaml"]


def test_all_ignored_is_still_no_claims_file_and_names_them(sg: InProcess, repo: Path) -> None:
    (repo / ".gitignore").write_text("*.yaml\n", "utf-8")
    (repo / "a.specgate.yaml").write_text(BASE, "utf-8")
    result = sg(["check", "."], repo)
    assert result.code == 2
    assert result.err == (
        "specgate: .: no claims file left to check: 1 claims file excluded by `exclude` or "
        "a .gitignore (a.specgate.yaml)\n"
    )


def test_all_excluded_names_five_and_counts_the_rest(sg: InProcess, repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.specgate]\nexclude = ["vendor"]\n', "utf-8")
    (repo / "vendor").mkdir()
    for index in range(7):
        (repo / "vendor" / f"v{index}.specgate.yaml").write_text(BASE, "utf-8")
    result = sg(["check", "."], repo)
    assert result.code == 2
    assert result.err.endswith(
        "7 claims files excluded by `exclude` or a .gitignore (vendor/v0.specgate.yaml, "
        "vendor/v1.specgate.yaml, vendor/v2.specgate.yaml, vendor/v3.specgate.yaml, "
        "vendor/v4.specgate.yaml and 2 more)\n"
    )


def test_configuration_exclude(sg: InProcess, repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        '[tool.specgate]\nexclude = ["vendor", "drafts/*.specgate.yaml"]\n', "utf-8"
    )
    for path in ("vendor/v.specgate.yaml", "drafts/d.specgate.yaml", "live/l.specgate.yaml"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(BASE, "utf-8")
    data = sg(["check", "--format", "json", "."], repo).json()
    assert [f["path"] for f in data["files"]] == ["live/l.specgate.yaml"]


# --- configuration keys, docs-url -------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("fail_on", "did you mean 'fail-on'?"),
        ("exclud", "did you mean 'exclude'?"),
        ("min-accept-lenght", "did you mean 'min-accept-length'?"),
        ("docs_url", "did you mean 'docs-url'?"),
        ("colour", "known: "),
    ],
)
def test_did_you_mean_for_configuration_keys(
    sg: InProcess, repo: Path, key: str, hint: str
) -> None:
    (repo / "pyproject.toml").write_text(f'[tool.specgate]\n{key} = "x"\n', "utf-8")
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    result = sg(["check", "c.specgate.yaml"], repo)
    assert result.code == 2
    assert f"unknown key '{key}' ({hint}" in result.err
    assert "pyproject.toml:2" in result.err


def _help_uris(sarif_text: str) -> set[str | None]:
    rules = json.loads(sarif_text)["runs"][0]["tool"]["driver"]["rules"]
    return {rule.get("helpUri") for rule in rules}


def test_help_uri_only_from_a_known_docs_url(sg: InProcess, repo: Path) -> None:
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    assert _help_uris(sg(["check", "--format", "sarif", "c.specgate.yaml"], repo).out) == {None}
    action = {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_ACTION_REPOSITORY": "acme/specgate",
        "GITHUB_ACTION_REF": "v1",
    }
    uris = _help_uris(sg(["check", "--format", "sarif", "c.specgate.yaml"], repo, env=action).out)
    assert (
        "https://github.com/acme/specgate/blob/v1/docs/rules.md#sg104-claimed-speedup-over-theory"
        in uris
    )
    (repo / "pyproject.toml").write_text(
        '[tool.specgate]\ndocs-url = "https://docs.example/specgate/rules.html"\n', "utf-8"
    )
    uris = _help_uris(sg(["check", "--format", "sarif", "c.specgate.yaml"], repo, env=action).out)
    assert "https://docs.example/specgate/rules.html#sg104-claimed-speedup-over-theory" in uris


def test_help_uri_from_the_docs_url_option_and_the_actions_env(sg: InProcess, repo: Path) -> None:
    # new-user defect 10: `--docs-url` (the Action's `docs-url` input) over the
    # configuration; inside the composite Action, SPECGATE_ACTION_REPOSITORY/_REF (set from
    # github.action_repository/action_ref in the step's env) over the GITHUB_ACTION_* the
    # runner leaves empty there (actions/runner#2473)
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    (repo / "pyproject.toml").write_text(
        '[tool.specgate]\ndocs-url = "https://docs.example/specgate/rules.html"\n', "utf-8"
    )
    given = ["check", "--format", "sarif", "--docs-url", "https://x.example/r.md"]
    given.append("c.specgate.yaml")
    assert "https://x.example/r.md#sg104-claimed-speedup-over-theory" in _help_uris(
        sg(given, repo).out
    )
    (repo / "pyproject.toml").unlink()
    action = {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_ACTION_REPOSITORY": "",
        "GITHUB_ACTION_REF": "",
        "SPECGATE_ACTION_REPOSITORY": "acme/specgate",
        "SPECGATE_ACTION_REF": "0123456789abcdef0123456789abcdef01234567",
    }
    uris = _help_uris(sg(["check", "--format", "sarif", "c.specgate.yaml"], repo, env=action).out)
    assert (
        "https://github.com/acme/specgate/blob/0123456789abcdef0123456789abcdef01234567/"
        "docs/rules.md#sg104-claimed-speedup-over-theory" in uris
    )
    bad = sg(["check", "--format", "sarif", "--docs-url", "javascript:x", "c.specgate.yaml"], repo)
    assert bad.code == 2 and "is not an https:// address" in bad.err


def test_sarif_rules_embed_their_help(sg: InProcess, repo: Path) -> None:
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    rules = json.loads(sg(["check", "--format", "sarif", "c.specgate.yaml"], repo).out)["runs"][0][
        "tool"
    ]["driver"]["rules"]
    sg104 = next(r for r in rules if r["id"] == "SG104")
    assert "AL / (β + ρ·passes)" in sg104["help"]["text"]  # the docs/theory.md#cost-model bound
    assert sg104["help"]["markdown"].startswith("##") or "SG104" in sg104["help"]["markdown"]


def test_one_run_writes_annotations_and_sarif(sg: InProcess, repo: Path) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING, "utf-8")
    result = sg(
        ["check", "--format", "github", "--sarif-file", "out.sarif", "c.specgate.yaml"], repo
    )
    assert result.code == 1
    assert result.out.startswith("::error title=specgate (SG102),file=c.specgate.yaml,line=10")
    log = json.loads((repo / "out.sarif").read_text("utf-8"))
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["SG102"]


def test_init_makes_folders_and_shows_the_references(sg: InProcess, repo: Path) -> None:
    result = sg(["init", "deploy/chat/specgate.yaml"], repo)
    assert result.code == 0
    text = (repo / "deploy" / "chat" / "specgate.yaml").read_text("utf-8")
    for key in ("engine_config:", "hf_config:", "draft_hf_config:", "metrics:"):
        assert f"# {key}" in text
    assert sg(["check", "--strict", "deploy"], repo).code == 0


# --- a verdict switched off by the checked repository is never silent (hostile H2) ------------


def test_fail_on_never_from_a_configuration_file_is_announced(sg: InProcess, repo: Path) -> None:
    # FAILING fails SG102; a pyproject.toml in the pull request sets fail-on never: the exit
    # is 0 as configured, but stderr, the github annotations and the job summary say so.
    (repo / "c.specgate.yaml").write_text(FAILING, "utf-8")
    (repo / "pyproject.toml").write_text('[tool.specgate]\nfail-on = "never"\n', "utf-8")
    summary = repo / "summary.md"
    result = sg(["check", "--format", "github", "--summary", str(summary), "."], repo)
    assert result.code == 0
    assert "fail-on never is set by pyproject.toml" in result.err
    first = result.out.splitlines()[0]
    assert first.startswith("::warning title=specgate::fail-on never is set by")
    assert "::error title=specgate (SG102)" in result.out
    assert "fail-on never is set by pyproject.toml" in summary.read_text("utf-8")
    # the command line decides: no note when --fail-on is given, even never
    quiet = sg(["check", "--fail-on", "never", "."], repo)
    assert quiet.code == 0
    assert "fail-on never is set by" not in quiet.err



@pytest.mark.parametrize(
    ("files", "hidden"),
    [
        # exclude in the pull request's own configuration
        ({"pyproject.toml": '[tool.specgate]\nexclude = ["c.specgate.yaml"]\n'}, "c.specgate.yaml"),
        # a .gitignore naming the file, or ignoring everything in a folder, or the folder
        ({".gitignore": "c.specgate.yaml\n"}, "c.specgate.yaml"),
        ({"sub/.gitignore": "*\n"}, "sub/c.specgate.yaml"),
        ({".gitignore": "sub/\n"}, "sub/c.specgate.yaml"),
    ],
)
def test_claims_files_passed_over_by_a_folder_search_are_named(
    sg: InProcess, repo: Path, files: dict[str, str], hidden: str
) -> None:
    # Hostile H1: the checked repository writes exclude and .gitignore, so a failing claims
    # file it hides from the folder search must be named, not silently dropped.
    (repo / "ok.specgate.yaml").write_text(BASE, "utf-8")
    target = repo / hidden
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(FAILING, "utf-8")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, "utf-8")
    summary = repo / "summary.md"
    result = sg(["check", "--format", "github", "--summary", str(summary), "."], repo)
    assert result.code == 0  # the hidden file is not checked: its fail does not count
    note = f"1 claims file(s) not checked: exclude or .gitignore covers them ({hidden})"
    assert note in result.err
    assert result.out.startswith("::warning title=specgate::1 claims file(s) not checked")
    assert note in summary.read_text("utf-8")
    # named as a PATH it is checked
    assert sg(["check", hidden], repo).code == 1


def test_a_gitignore_pattern_cannot_stall_the_folder_search(sg: InProcess, repo: Path) -> None:
    # Hostile H8: `a*a*a*a*a*a*a*a*b` against a 200-character name made pathspec's
    # backtracking regex run for minutes. The matcher (specgate.project.gitignore) is
    # polynomial: the line applies, matches nothing here (no `b`), so the file is checked;
    # an ordinary pattern still applies.
    long_name = "a" * 200 + ".specgate.yaml"
    (repo / long_name).write_text(FAILING, "utf-8")
    (repo / "skip.specgate.yaml").write_text(FAILING, "utf-8")
    (repo / ".gitignore").write_text("a*a*a*a*a*a*a*a*b\nskip.*\n", "utf-8")
    result = sg(["check", "--format", "json", "."], repo)
    assert result.code == 1
    assert [f["path"] for f in result.json()["files"]] == [long_name]
    assert "(skip.specgate.yaml)" in result.err  # named as passed over by .gitignore


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--output", "r.sarif", "--sarif-file", "./r.sarif"], "--output and --sarif-file"),
        (["--sarif-file", "s.md", "--summary", "s.md"], "--sarif-file and --summary"),
    ],
)
def test_two_reports_into_one_file_is_a_usage_error(
    sg: InProcess, repo: Path, flags: list[str], said: str
) -> None:
    (repo / "c.specgate.yaml").write_text(BASE, "utf-8")
    result = sg(["check", "c.specgate.yaml", *flags], repo)
    assert result.code == 2
    assert f"{said} name the same file" in result.err
    assert not any(p.suffix in (".sarif", ".md") for p in repo.iterdir())
