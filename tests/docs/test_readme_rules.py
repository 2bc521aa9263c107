"""README's rule entries keep each rule's documented exceptions (review #20: SG403's
bullet left out "not reported when SG407 or SG309 already says this evidence is stale",
so a reader expected SG403 next to SG309)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specgate.rules.catalogue import REGISTRY

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
_EXCEPTION = re.compile(r"Not reported when[^.]*\.")


def readme_entry(code: str) -> str:
    """The README's table row or bullet about ``code`` (all of them, joined)."""
    entries = [row for row in README.splitlines() if row.startswith(f"| {code} |")]
    for bullet in re.finditer(rf"^- \*\*{code}\*\*.*?(?=^- \*\*|^\S|\Z)", README, re.M | re.S):
        entries.append(bullet.group(0))
    return "\n".join(entries)


def test_readme_entry_finds_the_sg403_bullet() -> None:
    assert "config digest" in readme_entry("SG403")
    assert readme_entry("SG999") == ""


@pytest.mark.parametrize(
    "code", [code for code, rule in REGISTRY.items() if _EXCEPTION.search(rule.doc)]
)
def test_readme_names_the_rules_an_exception_defers_to(code: str) -> None:
    found = _EXCEPTION.search(REGISTRY[code].doc)
    assert found is not None
    sentence = " ".join(found.group(0).split())
    entry = readme_entry(code)
    assert entry, code
    for other in re.findall(r"SG\d{3}", sentence):
        assert other in entry, (code, other, sentence)
