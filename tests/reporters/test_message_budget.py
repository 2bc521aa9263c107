"""Every finding the suite's inputs raise says what is wrong in at most 200 characters
and says no phrase twice; formulas, sources and version reasoning sit in ``details``.

"A phrase twice": the same run of :data:`RUN` words (case, punctuation and numbers'
formatting aside) appears twice in a finding's message and details read together, as in
"judged at TensorRT-LLM 1.2.0 (version unknown: the newest specgate knows); read as
TensorRT-LLM 1.2.0, the newest specgate knows".

The inputs: every claims file under ``examples/`` and ``tests/data/`` (each checked in
its own folder, as a user runs it; a file that is an input error raises no finding), and
every rule's failing and passing example.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.core.findings import MESSAGE_LIMIT, Finding
from specgate.rules.catalogue import REGISTRY
from specgate.rules.docs import BASE_PREFIX, split_example

ROOT = Path(__file__).resolve().parents[2]
#: Words in a run that counts as a phrase ("the newest specgate knows").
RUN = 4
_WORD = re.compile(r"[\w.·/≥≤+−-]+")

CLAIMS_FILES = sorted(
    p.relative_to(ROOT).as_posix()
    for folder in ("examples", "tests/data")
    for p in (ROOT / folder).rglob("*.specgate.yaml")
)


def repeated_phrase(text: str) -> str | None:
    """The first run of :data:`RUN` words that appears twice in ``text``, else None."""
    words = [w.strip(".").casefold() for w in _WORD.findall(text)]
    words = [w for w in words if w]
    runs = Counter(tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1))
    twice = [run for run, count in runs.items() if count > 1]
    return " ".join(twice[0]) if twice else None


def test_a_repeated_phrase_is_found_and_a_distinct_one_is_not() -> None:
    # the SG307 details said "the newest specgate knows" twice
    said_twice = (
        "judged at TensorRT-LLM 1.2.0 (version unknown: the newest specgate knows); "
        "read as TensorRT-LLM 1.2.0, the newest specgate knows"
    )
    assert repeated_phrase(said_twice) == "the newest specgate knows"
    assert repeated_phrase("AL 2 is below the floor 2.2 = 1.1 · 2 at D = 3 and D = 4") is None


def _problems(findings: list[Finding]) -> list[str]:
    out = []
    for f in findings:
        if len(f.message) > MESSAGE_LIMIT:
            out.append(f"{f.code} message of {len(f.message)} characters: {f.message}")
        twice = repeated_phrase(f"{f.message} {f.details}")
        if twice is not None:
            out.append(f"{f.code} says {twice!r} twice: {f.message} | {f.details}")
    return out


@pytest.mark.parametrize("path", CLAIMS_FILES)
def test_every_claims_file_finding_is_concise(path: str) -> None:
    claims = ROOT / path
    report = check_file(claims, path, CheckOptions())
    assert _problems(list(report.all_findings(suppressed=True))) == []


def _example_findings(example: str, folder: Path) -> list[Finding]:
    files = [(n, c) for n, c in split_example(example) if not n.startswith(BASE_PREFIX)]
    for name, content in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content, encoding="utf-8")
    claims = folder / files[0][0]
    report = check_file(claims, claims.as_posix(), CheckOptions())
    return list(report.all_findings(suppressed=True))


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_every_rule_example_finding_is_concise(code: str, tmp_path: Path) -> None:
    rule = REGISTRY[code]
    found = _example_findings(rule.fail_example, tmp_path / "fail")
    found += _example_findings(rule.pass_example, tmp_path / "pass")
    assert _problems(found) == []
