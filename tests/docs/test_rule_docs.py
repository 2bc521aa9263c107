"""The rule catalogue documents itself: docs/rules.md is generated from the registry,
every rule has a complete doc, and every example does what it says."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from specgate.change.baseline import open_baseline
from specgate.check.run import CheckOptions, check_file
from specgate.rules.catalogue import REGISTRY
from specgate.rules.docs import BASE_PREFIX, render_catalogue_markdown, split_example

ROOT = Path(__file__).resolve().parents[2]


def _write(folder: Path, files: list[tuple[str, str]]) -> None:
    for name, content in files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def _codes(example: str, folder: Path) -> set[str]:
    """Materialise an example (claims file plus referenced files) and check it; files
    named ``base:PATH`` are committed first and the check compares with that commit."""
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
    report = check_file(claims, claims.as_posix(), options)
    assert report.error is None, report.error
    return {f.code for f in report.all_findings()}


def test_docs_rules_md_is_current() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_catalogue_markdown(), (
        "docs/rules.md is stale: run `specgate rules --format markdown > docs/rules.md`"
    )


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_rule_doc_is_complete(code: str) -> None:
    rule = REGISTRY[code]
    assert rule.summary and rule.summary.endswith(".")
    assert "**What it checks.**" in rule.doc
    assert "**Why.**" in rule.doc
    assert rule.fail_example.startswith("version: 1")
    assert rule.pass_example.startswith("version: 1")


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_failing_example_raises_its_rule(code: str, tmp_path: Path) -> None:
    assert code in _codes(REGISTRY[code].fail_example, tmp_path)


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_passing_example_does_not_raise_its_rule(code: str, tmp_path: Path) -> None:
    assert code not in _codes(REGISTRY[code].pass_example, tmp_path)


def test_codes_and_names_are_unique_and_well_formed() -> None:
    names = [r.name for r in REGISTRY.values()]
    assert len(names) == len(set(names))
    for code, rule in REGISTRY.items():
        assert rule.code == code
        assert len(code) == 5 and code.startswith("SG") and code[2:].isdigit()
        assert rule.name == rule.name.lower() and " " not in rule.name
        assert rule.severity in ("fail", "warn", "info", "note")
