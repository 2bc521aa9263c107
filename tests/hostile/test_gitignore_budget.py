"""One run's ``.gitignore`` work is bounded (hostile review r4, defect 3).

Nested ``.gitignore`` files of 20,000 ``*a*a…*a`` patterns (git stores the one blob
once, a 1.3 MB repository) made ``specgate check .`` run past 60 s and 330 MB: each
pattern was polynomial but nothing bounded patterns × paths, and every copy of the
file was compiled again. Now identical texts (and lines) are compiled once, and the
run's matching work, distinct patterns and distinct text have bounds whose breach is an
input error naming the ``.gitignore``. Each pattern test is charged its fixed cost too
(issue 25: 38,015 short literal patterns took 26-50 s within the old budget).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.project import gitignore
from specgate.project.gitignore import Budget, Spent

from .conftest import BASE, InProcess

TEXT = "*.pyc\nbuild/\n/a/b\n# a comment\n"


def test_identical_files_and_lines_compile_once() -> None:
    budget = Budget(patterns=3)
    first = budget.compile(TEXT)
    assert budget.compile(TEXT) is first  # the same text: the cached tuple
    assert budget.patterns == 0  # *.pyc, build/, /a/b: three patterns, one each
    # another file sharing every line but in another order costs no new pattern
    other = budget.compile("/a/b\n*.pyc\n")
    assert budget.patterns == 0
    assert other.patterns == (first.patterns[2], first.patterns[0])
    with pytest.raises(Spent, match="3 distinct patterns"):
        budget.compile("new\n")


def test_work_is_charged_by_pattern_tests_length_and_depth() -> None:
    # By hand: each pattern test costs TEST_COST (20) plus the pattern's length.
    # "*.pyc" (5) and "build" (5, its "/" dropped) match one name at any depth,
    # charged once; "/a/b" (4) spans folders, charged per component: a two-component
    # path costs (20 + 5) + (20 + 5) + (20 + 4) * 2 = 98.
    assert gitignore.TEST_COST == 20
    budget = Budget(work=98)
    compiled = budget.compile(TEXT)
    assert (compiled.flat_width, compiled.deep_width) == (50, 24)
    assert budget.verdict(compiled, ("a", "b"), False) is True
    assert budget.work == 0
    with pytest.raises(Spent, match="budget of 98 "):
        budget.verdict(compiled, ("x",), False)


def test_many_short_literal_patterns_cost_what_testing_them_costs() -> None:
    # issue 25: 38,015 literal patterns of 2-6 characters were charged ~5 units a
    # test while each test costs about as much as a 20-character pattern's: 26-50 s
    # within budget. Each test is now charged TEST_COST more, so a path tested against
    # the file costs at least 38,015 * 21 and the budget ends the search in its bound.
    text = "".join(f"f{i}\n" for i in range(38_015))
    budget = Budget()
    compiled = budget.compile(text)
    assert compiled.flat_width >= 38_015 * 21
    tests = gitignore.MAX_MATCH_WORK // compiled.flat_width
    assert tests < 300  # paths tested before the bound (about 900 under the old charge)


def test_distinct_text_is_bounded() -> None:
    budget = Budget(text_bytes=10)
    budget.compile("a\nb\n")  # 4 characters
    budget.compile("a\nb\n")  # the same text again: free
    with pytest.raises(Spent, match="10 characters"):
        budget.compile("cccc\ndddd\n")  # 10 more: 14 > 10


def test_a_flat_pattern_tests_only_the_last_component() -> None:
    # "**" then one segment: only the last name can decide (git: "*.pyc" matches a
    # name at any depth); the same verdicts as the per-component walk gave.
    (pattern,) = gitignore.parse_lines(["*.pyc"])
    assert pattern.flat
    assert gitignore.matches(pattern, ("x", "y", "z.pyc"), False)
    assert not gitignore.matches(pattern, ("a.pyc", "y"), True)
    assert not gitignore.matches(pattern, (), True)


def _nested(repo: Path, depth: int, text: str) -> None:
    folder = repo
    for _ in range(depth):
        (folder / ".gitignore").write_text(text, "utf-8")
        folder = folder / "d"
        folder.mkdir()
    (folder / "c.specgate.yaml").write_text(BASE, "utf-8")


def test_the_run_budget_is_an_input_error_naming_the_gitignore(
    sg: InProcess, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a small budget stands for the real one (reaching 200 million takes seconds)
    monkeypatch.setattr(gitignore, "MAX_MATCH_WORK", 2_000)
    text = "".join(f"*a*a*a*a*ab{i}\n" for i in range(50))  # 50 patterns of 12-13
    _nested(repo, 6, text)
    result = sg(["check", "."], repo)
    assert result.code == 2
    assert result.err.startswith("specgate: ")
    assert (
        ".gitignore: matching the .gitignore files' patterns passes this run's budget of 2,000"
        in result.err
    )
    # the same tree under the real budget is searched as before
    monkeypatch.setattr(gitignore, "MAX_MATCH_WORK", 200_000_000)
    assert sg(["check", "--format", "json", "."], repo).json()["files"][0]["path"] == (
        "d/d/d/d/d/d/c.specgate.yaml"
    )


def test_an_oversized_gitignore_is_an_input_error(sg: InProcess, repo: Path) -> None:
    _nested(repo, 1, "x\n" * (128 * 1024 + 1))  # 256 KiB + 2 characters
    result = sg(["check", "."], repo)
    assert result.code == 2
    assert result.err == (
        "specgate: .gitignore: a .gitignore over 256 KiB; specgate will not search the "
        "folder without its patterns\n"
    )
