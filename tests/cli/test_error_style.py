"""One style for every error line, whichever subcommand says it (newuser-r4 #10: the
prefixes were ``error: cfg.json:2:27: …`` from check, ``specgate: nothere.yaml: …``,
``specgate rules: …``, ``specgate init: …``). The tests' documented form, ``specgate:
…`` (``specgate: FILE:LINE:COL: reason`` for a file), is the one kept: one line,
exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.cli.output import one_style


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "bad.specgate.yaml").write_text("version: 1\ndeployments: [\n", "utf-8")
    (tmp_path / "specgate.yaml").write_text("version: 1\ndeployments: []\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


CASES = {
    # argv → the one line on standard error (or, for check's text report, standard output)
    "check-missing": (["check", "nothere.yaml"], "specgate: nothere.yaml: no such file or folder"),
    "check-syntax-json": (
        ["check", "bad.specgate.yaml", "--format", "json"],
        "specgate: bad.specgate.yaml:3:1: YAML syntax error: ",
    ),
    "check-bad-format": (
        ["check", "--format", "xml"],
        "specgate: argument --format/--output-format: invalid choice: 'xml'",
    ),
    "check-unknown-option": (["check", "--bogus"], "specgate: unrecognized arguments: --bogus"),
    "rules-unknown": (["rules", "SG999"], "specgate: no rule 'SG999'"),
    "init-exists": (["init", "specgate.yaml"], "specgate: specgate.yaml already exists"),
    "measure-missing": (
        ["measure", "--before", "nope.prom", "--after", "x.prom"],
        "specgate: --before nope.prom: no such file",
    ),
    "measure-flags": (["measure", "--from", "x.json"], "specgate: --from needs --metrics-format"),
    "doctor-flags": (["doctor", "--query-heads", "32"], "specgate: --query-heads needs --kv-heads"),
    "doctor-unknown-option": (["doctor", "--bogus"], "specgate: unrecognized arguments: --bogus"),
    "digest-missing": (["digest", "nothere.yaml"], "specgate: nothere.yaml: no such file"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_subcommand_says_an_error_the_same_way(
    repo: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    argv, start = CASES[case]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(start), err
    assert out == "" or argv[-1] == "json"


def test_checks_text_report_writes_a_file_error_as_stderr_would(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "bad.specgate.yaml", "-q"])
    out, err = capsys.readouterr()
    # libyaml: "deployments: [" never closed, the end of input is line 3, column 1
    assert (code, err) == (2, "")
    assert out == (
        "specgate: bad.specgate.yaml:3:1: YAML syntax error: while parsing a flow node did not "
        "find expected node content\n"
    )
    main(["check", "bad.specgate.yaml", "--format", "json"])
    assert capsys.readouterr().err == out  # the same line, whichever format


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("specgate measure: --labels 'x' is not NAME=VALUE",
         "specgate: --labels 'x' is not NAME=VALUE"),
        ("specgate check --staged: not inside a git repository",
         "specgate: --staged: not inside a git repository"),
        ("specgate measure --write needs ruamel.yaml", "specgate: --write needs ruamel.yaml"),
        ("specgate: nothere.yaml: no such file", "specgate: nothere.yaml: no such file"),
        ("c.yaml:3:1: YAML syntax error", "specgate: c.yaml:3:1: YAML syntax error"),
        ("specgate rules are listed", "specgate: specgate rules are listed"),
    ],
)  # fmt: skip
def test_one_style(said: str, shown: str) -> None:
    assert one_style(said) == shown
