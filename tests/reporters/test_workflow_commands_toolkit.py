"""Byte-for-byte cross-check of our workflow commands against the real @actions/core.

tests/js pins @actions/core 3.0.1 (package.json + package-lock.json); tests/js/emit.mjs
runs each case through the toolkit's public functions and returns the exact bytes they
wrote to stdout. Every string of tests/data/workflow_command_corpus.json is used as a
message and as each property value. Install the toolkit with::

    npm ci --prefix tests/js

The comparison tests skip only when ``node`` is not on PATH or tests/js/node_modules is
absent.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from specgate.reporters.workflow_commands import annotation, format_command

TESTS = Path(__file__).resolve().parent.parent
JS_DIR = TESTS / "js"
EMIT = JS_DIR / "emit.mjs"
TOOLKIT = JS_DIR / "node_modules" / "@actions" / "core"
CORPUS = TESTS / "data" / "workflow_command_corpus.json"
GENERATOR = TESTS / "data" / "make_workflow_command_corpus.py"
PINNED_VERSION = "3.0.1"
LEVELS = ("error", "warning", "notice")


@dataclass(frozen=True)
class Case:
    """One call into the toolkit (``js``) and the line we emit for it (``ours``)."""

    group: str
    js: dict[str, Any]
    ours: str


def corpus_strings() -> list[str]:
    document = json.loads(CORPUS.read_text(encoding="utf-8"))
    strings: list[str] = document["strings"]
    return strings


def _annotation_case(
    group: str,
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> Case:
    # The toolkit call gets exactly the arguments that are not None, under the toolkit's
    # own names (AnnotationProperties: startLine, startColumn).
    given = {"title": title, "file": file, "startLine": line, "startColumn": col}
    js: dict[str, Any] = {"call": level, "message": message}
    properties = {key: value for key, value in given.items() if value is not None}
    if properties:
        js["properties"] = properties
    ours = annotation(level, message, file=file, line=line, col=col, title=title)  # type: ignore[arg-type]
    return Case(group, js, ours)


def build_cases(strings: list[str]) -> list[Case]:
    """Deterministic cases: each string as message, title, file, name and value."""
    n = len(strings)
    cases: list[Case] = []
    for i, text in enumerate(strings):
        other = strings[(7 * i + 3) % n]
        third = strings[(13 * i + 5) % n]
        level = LEVELS[i % 3]
        cases.append(_annotation_case("message", level, text))
        cases.append(_annotation_case("title", level, "m", title=text))
        cases.append(_annotation_case("file", level, "m", file=text))
        cases.append(_annotation_case("title-last", level, other, title=text))
        cases.append(
            _annotation_case(
                "all",
                level,
                third,
                title=text,
                file=other,
                line=i % 4,  # 0 is dropped by the toolkit
                col=i % 3,
            )
        )
        cases.append(
            _annotation_case("swapped", level, text, title=third, file=text, line=i + 1, col=1)
        )
        # All six AnnotationProperties: toCommandProperties sends six keys, in its order.
        six: dict[str, str | int | None] = {
            "title": text or None,
            "file": third if i % 2 else None,
            "line": i % 5,
            "endLine": i % 7,
            "col": i % 2,
            "endColumn": i % 3,
        }
        cases.append(
            Case(
                "six-properties",
                {
                    "call": level,
                    "message": other,
                    "properties": {
                        "title": six["title"],
                        "file": six["file"],
                        "startLine": six["line"],
                        "endLine": six["endLine"],
                        "startColumn": six["col"],
                        "endColumn": six["endColumn"],
                    },
                },
                format_command(level, six, other),
            )
        )
        cases.append(
            Case("debug", {"call": "debug", "message": text}, format_command("debug", {}, text))
        )
        cases.append(
            Case("group", {"call": "startGroup", "name": text}, format_command("group", {}, text))
        )
        cases.append(
            Case(
                "save-state",
                {"call": "saveState", "name": text, "value": other},
                format_command("save-state", {"name": text}, other),
            )
        )
    # The empty-everything corners.
    for level in LEVELS:
        cases.append(_annotation_case("empty", level, "", title="", file="", line=0, col=0))
        cases.append(_annotation_case("empty", level, ""))
    return cases


def _missing_toolkit_reason() -> str | None:
    if shutil.which("node") is None:
        return "node is not on PATH: the toolkit cross-check needs Node.js (20 or later)"
    if not TOOLKIT.is_dir():
        return "tests/js/node_modules is absent: run `npm ci --prefix tests/js` first"
    return None


def run_toolkit(calls: list[dict[str, Any]]) -> list[bytes]:
    """Run tests/js/emit.mjs on ``calls``; the bytes the toolkit wrote for each."""
    node = shutil.which("node")
    assert node is not None
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_ENV", "NODE_OPTIONS"}
    }
    completed = subprocess.run(
        [node, str(EMIT)],
        input=json.dumps(calls).encode("utf-8"),
        capture_output=True,
        cwd=JS_DIR,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr.decode("utf-8", "replace")
    encoded: list[str] = json.loads(completed.stdout.decode("utf-8"))
    assert len(encoded) == len(calls)
    return [base64.b64decode(item) for item in encoded]


@pytest.fixture(scope="module")
def toolkit() -> None:
    """Skip unless node and the pinned toolkit are installed."""
    reason = _missing_toolkit_reason()
    if reason is not None:
        pytest.skip(reason)
    version = json.loads((TOOLKIT / "package.json").read_text(encoding="utf-8"))["version"]
    assert version == PINNED_VERSION, f"installed @actions/core {version}, pinned {PINNED_VERSION}"


@pytest.fixture(scope="module")
def toolkit_results(toolkit: None) -> tuple[list[Case], list[bytes]]:
    cases = build_cases(corpus_strings())
    return cases, run_toolkit([case.js for case in cases])


# --------------------------------------------------------------------------------------
# Corpus sanity (no node needed)
# --------------------------------------------------------------------------------------


def test_corpus_is_large_and_hostile() -> None:
    strings = corpus_strings()
    assert len(strings) >= 200
    assert len(set(strings)) == len(strings)
    for needle in ("%", "%25", "\r", "\n", "\r\n", ":", ",", "=", "::", ":: ::", "\t", "🎉"):
        assert any(needle in text for text in strings), needle
    assert "" in strings
    assert any(text.startswith(" ") for text in strings)
    assert any(len(text) >= 4000 for text in strings)
    assert any(not text.isascii() for text in strings)


def test_corpus_matches_its_generator() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _REGENERATE, str(GENERATOR)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert json.loads(completed.stdout) == corpus_strings()


_REGENERATE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("make_corpus", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
sys.stdout.write(json.dumps(module.build()))
"""


# --------------------------------------------------------------------------------------
# The cross-check
# --------------------------------------------------------------------------------------


@pytest.mark.usefixtures("toolkit")
def test_harness_reproduces_the_noted_sample() -> None:
    # Hand-written expectation (ecosystem notes docs/theory.md#vocabulary): proves emit.mjs runs the
    # real toolkit.
    [written] = run_toolkit(
        [
            {
                "call": "error",
                "message": "50% done\r\nline2: a,b",
                "properties": {
                    "title": "R001: bad, very",
                    "file": "dir,x/a:b%.yaml",
                    "startLine": 3,
                    "endLine": 3,
                    "startColumn": 1,
                    "endColumn": 5,
                },
            }
        ]
    )
    assert written == (
        b"::error title=R001%3A bad%2C very,file=dir%2Cx/a%3Ab%25.yaml,"
        b"line=3,endLine=3,col=1,endColumn=5::50%25 done%0D%0Aline2: a,b" + os.linesep.encode()
    )


@pytest.mark.usefixtures("toolkit")
def test_toolkit_quirks_we_copy() -> None:
    # Hand-written: falsy values dropped, yet the space stays when the object has keys.
    written = run_toolkit(
        [
            {
                "call": "warning",
                "message": "plain",
                "properties": {"file": "c.yaml", "startLine": 0},
            },
            {"call": "notice", "message": "m", "properties": {"title": ""}},
            {"call": "notice", "message": "m"},
            {"call": "saveState", "name": "n,1", "value": "v\n"},
            {"call": "error", "message": "m", "properties": {"startLine": True, "startColumn": 12}},
        ]
    )
    eol = os.linesep.encode()
    assert written == [
        b"::warning file=c.yaml::plain" + eol,
        b"::notice ::m" + eol,
        b"::notice::m" + eol,
        b"::save-state name=n%2C1::v%0A" + eol,
        b"::error line=true,col=12::m" + eol,
    ]
    six: dict[str, str | int | None] = dict.fromkeys(("title", "file", "endLine", "endColumn"))
    ours = [
        annotation("warning", "plain", file="c.yaml", line=0),
        annotation("notice", "m", title=""),
        annotation("notice", "m"),
        format_command("save-state", {"name": "n,1"}, "v\n"),
        format_command("error", {**six, "line": True, "col": 12}, "m"),
    ]
    assert [line.encode() + eol for line in ours] == written


GROUPS = (
    "message",
    "title",
    "file",
    "title-last",
    "all",
    "swapped",
    "six-properties",
    "debug",
    "group",
    "save-state",
    "empty",
)


@pytest.mark.parametrize("group", GROUPS)
def test_byte_identical_to_actions_core(
    group: str, toolkit_results: tuple[list[Case], list[bytes]]
) -> None:
    cases, written = toolkit_results
    eol = os.linesep.encode("ascii")
    checked = 0
    mismatches: list[str] = []
    for case, toolkit_bytes in zip(cases, written, strict=True):
        if case.group != group:
            continue
        checked += 1
        ours = case.ours.encode("utf-8") + eol
        if ours != toolkit_bytes:
            mismatches.append(f"{case.js!r}\n  toolkit: {toolkit_bytes!r}\n  ours:    {ours!r}")
    assert checked > 0
    assert not mismatches, f"{len(mismatches)} of {checked} differ:\n" + "\n".join(mismatches[:5])


def test_every_case_compared(toolkit_results: tuple[list[Case], list[bytes]]) -> None:
    cases, written = toolkit_results
    assert {case.group for case in cases} == set(GROUPS)
    assert len(written) == len(cases) >= 200 * 10
