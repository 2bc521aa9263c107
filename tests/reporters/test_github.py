"""The GitHub format (docs/reports.md#github-format): annotation paths, the 10-per-level limit, the
job summary budget and the step outputs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.core.paths import repo_relative
from specgate.reporters.summary import SUMMARY_LIMIT_BYTES

FAILING = """\
version: 1
deployments:
  - name: chat-70b
    speculation: {enabled: true, draft_length: 7, draft_depth_ratio: 0.05}
    evidence: {accept_length: 3.2, cache_coherence_eval: true}
    claims: {speedup: 3}
"""
# 3.2 / 1.35 = 2.370 < 3: one SG104 at line 6, "    claims: {speedup: 3}" → col 23


def many_failures(fails: int, infos: int, notes: int = 0) -> str:
    """``fails`` deployments with an SG104 each; the first ``infos`` are attention-dominated
    with G 64, so G·(1 + D) = 256 rows fill 2 tiles of 128 (an SG206 info, and no SG201:
    no room left in the last tile); the first ``notes`` lack ρ (an SG204 note)."""
    lines = ["version: 1", "deployments:"]
    for i in range(fails):
        rho = "" if i < notes else ", draft_depth_ratio: 0.05"
        lines += [
            f"  - name: d{i:02}",
            f"    speculation: {{enabled: true, draft_length: 3{rho}}}",
            "    evidence: {accept_length: 2, cache_coherence_eval: true}",
            "    claims: {speedup: 9}",
        ]
        if i < infos:
            lines += [
                "    model: {query_heads_per_kv: 64}",
                "    workload: {attention_dominated: true}",
            ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def github(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["check", *argv, "--format", "github"])
    out, err = capsys.readouterr()
    # stderr only ever names files that could not be read, one line each
    assert all(line.startswith("specgate: ") for line in err.splitlines())
    if code != 2:
        assert err == ""
    return code, out.splitlines()


# --- annotation paths ----------------------------------------------------------------------


@pytest.mark.parametrize("given", ["deploy/c.specgate.yaml", "./deploy/c.specgate.yaml", "."])
def test_paths_relative_to_the_git_top_level_from_a_subfolder(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    sub = repo / "services" / "chat"
    (sub / "deploy").mkdir(parents=True)
    (sub / "deploy" / "c.specgate.yaml").write_text(FAILING, "utf-8")
    clean_env.chdir(sub)
    code, lines = github([given], capsys)
    assert code == 1
    assert lines == [
        "::error title=specgate (SG104),file=services/chat/deploy/c.specgate.yaml,line=6,col=23"
        "::claimed-speedup-over-theory: claimed 3x exceeds AL / (β + ρ·passes) = "
        "3.2 / (1 + 0.05·7) = 2.3704x"
    ]


def test_file_outside_any_git_repository(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    claims = folder / "c.specgate.yaml"
    claims.write_text(FAILING, "utf-8")
    assert repo_relative(claims) is None, "precondition: the temp folder is in no git repository"
    clean_env.chdir(folder)
    code, lines = github(["c.specgate.yaml"], capsys)
    assert code == 1
    (line,) = lines
    head, message = line.split("::", 2)[1:]
    # no file, line or col property; the path and place go into the message
    assert head == "error title=specgate (SG104)"
    assert message.startswith("c.specgate.yaml:6:23: claimed-speedup-over-theory: claimed 3x")


def test_properties_are_escaped_like_the_toolkit(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a file name with ',' and ':' (escaped %2C, %3A in properties) and a deployment name with
    # '%' (escaped %25 in the message); the SG003 message names the duplicate
    text = "version: 1\ndeployments:\n  - name: 50%\n  - name: 50%\n"
    (repo / "a,b:c.specgate.yaml").write_text(text, "utf-8")
    clean_env.chdir(repo)
    code, lines = github(["a,b:c.specgate.yaml"], capsys)
    assert code == 1
    # "  - name: 50%" on line 4: value at col 11
    assert lines == [
        "::error title=specgate (SG003),file=a%2Cb%3Ac.specgate.yaml,line=4,col=11"
        "::duplicate-deployment-name: deployment name '50%25' is already used by deployments[0]"
    ]


def test_a_file_name_with_lf_percent_colon_comma_is_named_as_it_is(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # D12.4. actions/toolkit packages/core/src/command.ts escapeProperty: % → %25 first,
    # then CR → %0D, LF → %0A, : → %3A, , → %2C; the runner decodes them back, so file=
    # names the file itself (a visible "\\n" in its place would name no file). By hand:
    # "x\ny%z:w,v.specgate.yaml" → "x%0Ay%25z%3Aw%2Cv.specgate.yaml". (The message is
    # escapeData'd: test_properties_are_escaped_like_the_toolkit.)
    name = "x\ny%z:w,v.specgate.yaml"
    (repo / name).write_text(FAILING, "utf-8")
    clean_env.chdir(repo)
    code, lines = github(["."], capsys)
    assert code == 1
    assert lines == [
        "::error title=specgate (SG104),file=x%0Ay%25z%3Aw%2Cv.specgate.yaml,line=6,col=23"
        "::claimed-speedup-over-theory: claimed 3x exceeds AL / (β + ρ·passes) = "
        "3.2 / (1 + 0.05·7) = 2.3704x"
    ]


def test_the_job_summary_links_and_shows_a_hostile_file_name(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The link's URL is the path percent-encoded (RFC 3986: LF %0A, % %25, : %3A, , %2C;
    # '/' kept); its text is inert Markdown: LF shown as a visible \n whose backslash is
    # itself escaped (CommonMark §2.4), %, : and , as they are.
    (repo / "x\ny%z:w,v.specgate.yaml").write_text(FAILING, "utf-8")
    summary = repo / "summary.md"
    clean_env.chdir(repo)
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    clean_env.setenv("GITHUB_SERVER_URL", "https://github.com")
    clean_env.setenv("GITHUB_REPOSITORY", "o/r")
    clean_env.setenv("GITHUB_SHA", "0123456789abcdef")
    github(["."], capsys)
    text = summary.read_text("utf-8")
    assert (
        "[x\\\\ny%z:w,v.specgate.yaml:6](https://github.com/o/r/blob/0123456789abcdef/"
        "x%0Ay%25z%3Aw%2Cv.specgate.yaml#L6)"
    ) in text
    assert not any(line.startswith("y%z") for line in text.splitlines())  # no raw LF


def test_a_file_name_with_another_control_character_goes_in_the_message(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # ESC cannot stand raw in the log line and escapeProperty leaves it as it is: the
    # annotation names the file in its message, shown visibly, with no file property.
    (repo / "e\x1b.specgate.yaml").write_text(FAILING, "utf-8")
    clean_env.chdir(repo)
    code, lines = github(["."], capsys)
    assert code == 1
    (line,) = lines
    assert line.startswith("::error title=specgate (SG104)::e\\x1b.specgate.yaml:6:23: ")


def test_unparseable_file_is_an_error_at_its_line(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "deployments: [" never closed: libyaml reports the end of input, line 3
    (repo / "c.specgate.yaml").write_text("version: 1\ndeployments: [\n", "utf-8")
    clean_env.chdir(repo)
    code = main(["check", "c.specgate.yaml", "--format", "github"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err == (
        "specgate: c.specgate.yaml:3:1: YAML syntax error: while parsing a flow node did not "
        "find expected node content\n"
    )
    (line,) = out.splitlines()
    assert line.startswith("::error title=specgate (input error),file=c.specgate.yaml,line=3,")
    assert "YAML syntax error" in line


# --- annotation limits ---------------------------------------------------------------------


def annotations(lines: list[str], level: str) -> list[str]:
    return [line for line in lines if line.startswith(f"::{level} ")]


def test_fifteen_failures_give_ten_errors_and_one_overflow_notice(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(many_failures(15, 0), "utf-8")
    clean_env.chdir(repo)
    code, lines = github(["c.specgate.yaml"], capsys)
    assert code == 1
    errors = annotations(lines, "error")
    assert len(errors) == 10
    # the first ten by position: deployment k's claims line is 4k + 6
    assert [e.split(",line=")[1].split(",")[0] for e in errors] == [
        str(4 * k + 6) for k in range(10)
    ]
    (overflow,) = annotations(lines, "notice")
    assert "5 more findings" in overflow
    assert "--format text" in overflow
    assert len(lines) == 11


def test_overflow_notice_counts_within_the_ten_notices(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # 15 fails and 12 infos: 10 errors; 9 infos + the overflow notice = 10 notices;
    # left out: 5 errors + 3 infos = 8
    (repo / "c.specgate.yaml").write_text(many_failures(15, 12), "utf-8")
    clean_env.chdir(repo)
    _, lines = github(["c.specgate.yaml"], capsys)
    assert len(annotations(lines, "error")) == 10
    notices = annotations(lines, "notice")
    assert len(notices) == 10
    assert sum("(SG206)" in n for n in notices) == 9
    assert "8 more findings" in notices[-1]


def test_ten_notices_exactly_need_no_overflow(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(many_failures(10, 10), "utf-8")
    clean_env.chdir(repo)
    _, lines = github(["c.specgate.yaml"], capsys)
    assert len(annotations(lines, "error")) == 10
    notices = annotations(lines, "notice")
    assert len(notices) == 10
    assert all("(SG206)" in n for n in notices)


def test_notes_are_not_annotations(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/reports.md#job-summary: 3 deployments with an SG104 fail, 2 of them without ρ (an SG204
    # note each): 3 error annotations, no notice; the 2 notes stay in the summary and in the
    # note-count output
    (repo / "c.specgate.yaml").write_text(many_failures(3, 0, notes=2), "utf-8")
    clean_env.chdir(repo)
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(repo / "summary.md"))
    clean_env.setenv("GITHUB_OUTPUT", str(repo / "output.txt"))
    _, lines = github(["c.specgate.yaml"], capsys)
    assert len(annotations(lines, "error")) == 3
    assert annotations(lines, "notice") == []
    assert len(lines) == 3
    summary = (repo / "summary.md").read_text("utf-8")
    assert summary.count("SG204 draft-depth-ratio-assumed") == 2
    assert "note-count=2" in (repo / "output.txt").read_text("utf-8").splitlines()


def test_overflow_notice_points_at_the_job_summary_when_written(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(many_failures(15, 0), "utf-8")
    clean_env.chdir(repo)
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(repo / "summary.md"))
    _, lines = github(["c.specgate.yaml"], capsys)
    (overflow,) = annotations(lines, "notice")
    assert "job summary" in overflow


# --- job summary and outputs ---------------------------------------------------------------


def test_job_summary_is_appended(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING, "utf-8")
    summary = repo / "summary.md"
    summary.write_text("## earlier step\n\nkept\n", "utf-8")
    clean_env.chdir(repo)
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    github(["c.specgate.yaml"], capsys)
    text = summary.read_text("utf-8")
    assert text.startswith("## earlier step\n\nkept\n")
    added = text[len("## earlier step\n\nkept\n") :]
    assert "fail" in added.splitlines()[0]
    assert "chat-70b" in added
    # the metric rows: AL 3.2, D 7, ρ 0.05, theoretical 3.2/1.35 = 2.3704x, claimed 3x
    for row in (
        "| accept length AL | 3.2 |",
        "| draft length D | 7 |",
        "| draft depth ratio ρ | 0.05 (stated) |",
        "| verify cost β | 1 (memory-bound) |",
        "| theoretical speedup AL / (β + ρ·passes) | 2.3704x |",
        "| claimed speedup | 3x |",
    ):
        assert row in added
    assert "SG104" in added
    # nothing is known of the model (no size, no config): no class is recommended
    # (newuser-r4 #7; the table's unknown-as-medium row gave external-small-draft)
    assert "**Mechanism:** declared not stated." in added
    assert "recommended" not in added


def test_summary_option_without_github_format(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING, "utf-8")
    clean_env.chdir(repo)
    assert main(["check", "c.specgate.yaml", "--summary", "s.md"]) == 1
    capsys.readouterr()
    assert "SG104" in (repo / "s.md").read_text("utf-8")


def test_job_summary_stays_under_one_mib_including_earlier_content(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(many_failures(40, 40, notes=40), "utf-8")
    summary = repo / "summary.md"
    earlier = ("x" * 1023 + "\n") * (1024 - 2)  # 1 MiB − 2 KiB
    summary.write_text(earlier, "utf-8")
    assert summary.stat().st_size == SUMMARY_LIMIT_BYTES - 2048
    clean_env.chdir(repo)
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    github(["c.specgate.yaml"], capsys)
    data = summary.read_bytes()
    assert len(data) <= SUMMARY_LIMIT_BYTES
    assert data.startswith(earlier.encode())
    added = data[len(earlier) :].decode("utf-8")
    assert added.startswith("## ")
    last = added.rstrip("\n").splitlines()[-1]
    assert "left out" in last
    assert "1 MiB" in last


def test_step_outputs(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # 12 deployments: 12 SG104 fails, 2 SG204 notes (the first two lack ρ); one more with an
    # SG105 warn and one with an SG202 info
    text = many_failures(12, 0, notes=2) + (
        "  - name: warned\n"
        "    speculation: {enabled: true, draft_length: 3, draft_depth_ratio: 0.05}\n"
        "    evidence: {accept_length: 2.4}\n"
        "  - name: planned\n"
        "    model: {query_heads_per_kv: 8}\n"
        "    workload: {attention_dominated: true}\n"
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    outputs = repo / "outputs.txt"
    outputs.write_text("earlier=1\n", "utf-8")
    clean_env.chdir(repo)
    clean_env.setenv("GITHUB_OUTPUT", str(outputs))
    github(["c.specgate.yaml"], capsys)
    lines = outputs.read_text("utf-8").splitlines()
    assert lines[0] == "earlier=1"
    assert {"status=fail", "fail-count=12", "warn-count=1", "info-count=1"} <= set(lines)
    assert "note-count=2" in lines


def test_step_outputs_of_a_clean_run(
    repo: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "c.specgate.yaml").write_text(FAILING.replace("speedup: 3", "speedup: 2"), "utf-8")
    outputs = repo / "outputs.txt"
    clean_env.chdir(repo)
    clean_env.setenv("GITHUB_OUTPUT", str(outputs))
    code, lines = github(["c.specgate.yaml"], capsys)
    assert code == 0
    assert lines == []
    got = set(outputs.read_text("utf-8").splitlines())
    assert {"status=ready", "fail-count=0", "warn-count=0", "info-count=0"} <= got
