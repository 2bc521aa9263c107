"""One generic test over tests/data/core/rules/*.yaml: each fixture states its expected
findings and status in its leading comments, and the check must produce exactly those.

    # expect: SG104@12:16, SG102@10:22     (or "none")
    # status: fail                         (the file's status)
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.rules.catalogue import REGISTRY

RULES = Path(__file__).resolve().parent.parent / "data" / "core" / "rules"
FIXTURES = sorted(RULES.glob("*.yaml"))
_EXPECT = re.compile(r"^# expect: (.*)$", re.M)
_STATUS = re.compile(r"^# status: (\w+)$", re.M)
_ITEM = re.compile(r"^(SG\d{3})@(\d+):(\d+)$")


def expectations(path: Path) -> tuple[Counter[tuple[str, int, int]], str]:
    text = path.read_text(encoding="utf-8")
    expect, status = _EXPECT.search(text), _STATUS.search(text)
    assert expect is not None and status is not None, f"{path.name} states no expectation"
    wanted: Counter[tuple[str, int, int]] = Counter()
    if expect.group(1).strip() != "none":
        for item in expect.group(1).split(","):
            match = _ITEM.match(item.strip())
            assert match is not None, f"{path.name}: bad expectation {item!r}"
            wanted[(match.group(1), int(match.group(2)), int(match.group(3)))] += 1
    return wanted, status.group(1)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixture_findings_are_exactly_the_stated_ones(path: Path) -> None:
    wanted, status = expectations(path)
    report = check_file(path, path.name, CheckOptions())
    assert report.error is None
    got = Counter((f.code, f.line, f.column) for f in report.all_findings())
    assert got == wanted
    assert report.status == status
    assert all(f.file == path.name for f in report.all_findings())


def test_every_v1_rule_has_a_failing_fixture() -> None:
    covered = set()
    for path in FIXTURES:
        covered |= {code for code, _, _ in expectations(path)[0]}
    # the v1 catalogue of docs/rules.md
    v1 = {"SG001", "SG002", "SG003", *(f"SG10{i}" for i in range(1, 6))}
    v1 |= {f"SG20{i}" for i in range(1, 5)}
    assert v1 <= set(REGISTRY)
    assert v1 - covered == set()


def test_there_are_passing_fixtures() -> None:
    passing = [p for p in FIXTURES if not expectations(p)[0]]
    assert len(passing) >= 2
    assert all(expectations(p)[1] == "ready" for p in passing)
