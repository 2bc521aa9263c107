"""Every finding carries its evidence beside its message (issue 26 deliverable 2, new-user
defect 5: ``--verbose`` printed nothing more, JSON ``details`` was "" for SG104, SG204,
SG401 and SG403).

Each rule's failing and passing examples are run as ``specgate rules`` documents them
(files named ``base:PATH`` committed first and compared with ``--baseline``); every
finding they raise, of any severity, has non-empty ``details``, and no phrase (a run of
:data:`tests.reporters.test_message_budget.RUN` words) appears twice between the message
and the details.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.reporters.test_message_budget import repeated_phrase

from specgate.change.baseline import open_baseline
from specgate.check.run import CheckOptions, check_file
from specgate.core.findings import Finding
from specgate.rules.catalogue import REGISTRY
from specgate.rules.docs import BASE_PREFIX, split_example


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def _write(folder: Path, files: list[tuple[str, str]]) -> None:
    for name, content in files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def example_findings(example: str, folder: Path) -> list[Finding]:
    """Every finding (suppressed ones too) of a rule example checked in ``folder``."""
    folder.mkdir(parents=True)
    files = split_example(example)
    base = [(n[len(BASE_PREFIX) :], c) for n, c in files if n.startswith(BASE_PREFIX)]
    head = [(n, c) for n, c in files if not n.startswith(BASE_PREFIX)]
    options = CheckOptions()
    if base:
        _git(folder, "init", "-q")
        _write(folder, base)
        _git(folder, "add", "-A")
        _git(folder, "commit", "-q", "-m", "base")
        options = CheckOptions(baseline=open_baseline("HEAD", folder))
    _write(folder, head)
    claims = folder / head[0][0]
    return list(check_file(claims, claims.as_posix(), options).all_findings(suppressed=True))


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_every_example_finding_has_details_and_no_phrase_twice(
    code: str, tmp_path: Path
) -> None:
    rule = REGISTRY[code]
    found = example_findings(rule.fail_example, tmp_path / "fail")
    found += example_findings(rule.pass_example, tmp_path / "pass")
    assert code in {f.code for f in found}  # the failing example raises it, details and all
    empty = [f"{f.code}: {f.message}" for f in found if not f.details.strip()]
    assert empty == []
    twice = [
        f"{f.code} says {phrase!r} twice"
        for f in found
        if (phrase := repeated_phrase(f"{f.message} {f.details}")) is not None
    ]
    assert twice == []
