"""The pyproject pre-check (specgate.project.tool_table): a file that holds
``[tool.specgate]`` is never skipped, whatever TOML spelling it uses.

The oracle is Python's own TOML parser (``tomllib``, TOML 1.0): every text below that
it reads with a ``tool.specgate`` key must be one ``may_hold_table`` answers ``True``
for. The texts that hold no table were worked by hand (the key ``specgate`` stands in a
value, a comment or another table) and tomllib is asked to agree.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.project.tool_table import may_hold_table

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _holds(text: str) -> bool:
    """Whether tomllib reads a ``tool.specgate`` key in ``text`` (a table or not)."""
    tool = tomllib.loads(text).get("tool")
    return isinstance(tool, dict) and "specgate" in tool


HOLDING = [
    '[tool.specgate]\nfail-on = "fail"\n',
    "[ tool . specgate ]\n",
    "[\ttool\t.\tspecgate\t]\n",
    '[tool."specgate"]\n',
    "[tool.'specgate']\n",
    '["tool".specgate]\n',
    "[tool.specgate] # settings\n",
    '[tool]\nspecgate = {fail-on = "fail"}\n',
    '[tool]\nspecgate.fail-on = "fail"\n',
    '[tool]\n"specgate" . "fail-on" = "fail"\n',
    "[tool]\n'specgate'={}\n",
    'tool.specgate.fail-on = "fail"\n',
    "tool . specgate . only-new = true\n",
    'tool = {specgate = {fail-on = "fail"}}\n',
    "tool = {a = 1, specgate = {}}\n",
    "tool.specgate={}\n",
    '[tool.specgate.per-file-ignores]\n"a.yaml" = ["SG101"]\n',
    "[[tool.specgate]]\n",  # an array of tables: parsed, then "must be a table"
    "[[tool.specgate.x]]\n",
    # Escapes in basic-string keys spell letters (TOML 1.0 \uXXXX and \UXXXXXXXX).
    '[tool."spec\\u0067ate"]\n',
    '[tool."spec\\U00000067ate"]\n',
    '["t\\u006fol".specgate]\n',
    '[tool]\n"spec\\u0067ate" = {}\n',
    # Line ends, strings and comments that a line-by-line reading could get wrong.
    '[project]\r\nname = "x"\r\n\r\n[tool.specgate]\r\nfail-on = "fail"\r\n',
    '[project]\nx = [\n  "]",\n  "[",\n  \'{\',\n]\n[tool.specgate]\n',
    'a = """\n]\n[\n"""\n[tool.specgate]\n',
    "a = '''\n[\n'''\n[tool.specgate]\n",
    "a = 1 # it's a \"quote\" [\n[tool.specgate]\n",
    'a = "\\"[" \n[tool.specgate]\n',
    'a = "\\\\"\n[tool.specgate]\n',
    "a = [ # [ in a comment\n  1,\n]\n[tool.specgate]\n",
    'a = {b = "}", c = [1, [2]]}\n[tool.specgate]\n',
    "[x]\na = [\n  [1, 2],\n  [3],\n]\n[tool]\nspecgate = {}\n",
]

NOT_HOLDING = [
    '[project]\nname = "specgate"\n',
    '[project.scripts]\nspecgate = "specgate.cli.main:entry"\n',
    "# [tool.specgate]\n[tool.ruff]\nline-length = 100\n",
    "[tool.ruff]\nspecgate = 1\n",
    '[tool.x]\ny = ["[tool.specgate]", "specgate"]\n',
    '[tool.mypy]\nfiles = [\n  "src/specgate",\n]\n'
    '[tool.importlinter]\nroot_package = "specgate"\n',
    "[tool]\nx = {specgate = 1}\n",
    'a = "[tool.specgate]"\n',
    "tool-specgate = 1\n",
    "[tool.specgates]\n",
    "[toolx.specgate]\n",
    "[tool.SpecGate]\n",
    "[tool.x.specgate]\n",
    "[[tool.x]]\nspecgate = 1\n",
    "a = 'specgate' # specgate\n",
    '[project]\ndescription = "a [tool.specgate] table # not a comment"\n',
    '"tool"."x" = "specgate"\n',
]


@pytest.mark.parametrize("text", HOLDING)
def test_every_spelling_of_the_table_is_parsed(text: str) -> None:
    assert _holds(text), "the oracle reads no table: the case is mis-written"
    assert may_hold_table(text)


@pytest.mark.parametrize("text", NOT_HOLDING)
def test_a_file_without_the_table_is_not_parsed(text: str) -> None:
    assert not _holds(text), "the oracle reads a table: the case is mis-written"
    assert not may_hold_table(text)


def test_this_projects_pyproject_is_not_parsed() -> None:
    # It names specgate forty times (scripts, packages, import-linter layers), in values
    # and in other tables: the case the pre-check is for.
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "specgate" in text
    assert not _holds(text)
    assert not may_hold_table(text)


@pytest.mark.parametrize("lead", ["", '[project]\nname = "specgate"\n', "a = [\n  1,\n]\n"])
def test_every_quoting_and_spacing_of_the_header(lead: str) -> None:
    # Each of tool and specgate bare, basic-quoted, literal-quoted or escaped, with no
    # space, spaces or tabs around the dot and inside the brackets, as a header, a
    # dotted key under [tool] and a dotted key at the top level (the latter only with
    # no table before it).
    tools = ["tool", '"tool"', "'tool'", '"t\\u006fol"']
    specgates = ["specgate", '"specgate"', "'specgate'", '"spec\\u0067ate"']
    spaces = ["", " ", "\t", " \t "]
    for tool, specgate, space in itertools.product(tools, specgates, spaces):
        dotted = f"{tool}{space}.{space}{specgate}"
        forms = [
            f"{lead}[{space}{dotted}{space}]\nfail-on = 'fail'\n",
            f"{lead}[{space}{tool}{space}]\n{specgate}{space}.{space}fail-on = 'fail'\n",
        ]
        if "[" not in lead:
            forms.append(f"{lead}{dotted}{space}.{space}fail-on{space}={space}'fail'\n")
        for text in forms:
            assert _holds(text), text
            assert may_hold_table(text), text


def _claims_repo(tmp_path: Path, pyproject: str) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    # AL 1.5 at D = 3: below the default floor (1 + 0.15·3) · 1.1 = 1.595 → SG102 (fail).
    (tmp_path / "chat.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: chat\n    speculation:\n      enabled: true\n"
        "      draft_length: 3\n      draft_depth_ratio: 0.15\n    evidence:\n"
        "      accept_length: 1.5\n      cache_coherence_eval: true\n",
        encoding="utf-8",
    )
    return tmp_path


def test_a_spaced_quoted_header_still_configures_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # fail-on = never turns the SG102 fail into exit 0, so the table was read.
    monkeypatch.chdir(_claims_repo(tmp_path, '[ tool . "specgate" ]\nfail-on = "never"\n'))
    assert main(["check", "chat.specgate.yaml"]) == 0
    assert main(["check", "chat.specgate.yaml", "--fail-on", "fail"]) == 1
    capsys.readouterr()


def test_a_pyproject_that_cannot_hold_the_table_is_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Contract change: a pyproject.toml with a TOML syntax error that does not mention
    # specgate was an input error (exit 2); its syntax is its own tools' to check now,
    # and the run goes on with the defaults (SG102 fails: exit 1).
    monkeypatch.chdir(_claims_repo(tmp_path, "[tool.ruff\nline-length = 100\n"))
    assert main(["check", "chat.specgate.yaml"]) == 1
    capsys.readouterr()
    # One that may hold the table is still parsed, and its error still reported.
    (tmp_path / "pyproject.toml").write_text("[tool.specgate\n", encoding="utf-8")
    assert main(["check", "chat.specgate.yaml"]) == 2
    assert "pyproject.toml" in capsys.readouterr().err
