"""The project carries its own contract (docs/claims-file.md, theory.md, engines.md,
change-gate.md, trust.md, reports.md, rules.md): code, tests and docs cite those pages, a
paper, or an engine's source at a commit — never a file outside the repository.

Two things are held here:

1. No tracked file outside the fixtures of record (copies of published files, byte for
   byte) cites the maintainers' design brief (``DESIGN.md``, ``DESIGN §…``), their notes
   (``notes/domain.md`` …) or their shared folder (``../shared``, ``shared/fixtures`` …).
2. Every ``docs/PAGE.md#anchor`` and ``README.md#anchor`` cited anywhere in the repository
   names a page that exists and a heading of it, by GitHub's anchor rules: lower-cased,
   punctuation other than ``-`` and ``_`` dropped, spaces turned into ``-``, and ``-1``,
   ``-2`` … added to repeated headings.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Citations of material outside the repository.
OUTSIDE = re.compile(
    r"DESIGN(?:\.md|\s*§|\s*\\u00a7)"
    r"|notes/(?:domain|architecture|ecosystem)\.md"
    r"|\.\./shared/(?:seed|cases|fixtures|notes|DESIGN|STYLE)"
    r"|/work/(?:shared|coord)"
    r"|(?<![\w.-])shared/(?:fixtures|cases|notes|seed)\b"
    r"|(?<![\w/.-])fixtures/real/"
)

#: Copies of published files, kept byte for byte: their text is the publisher's.
FIXTURES_OF_RECORD = (
    "tests/data/published-2026-12/",
    "tests/data/real/",
    "tests/data/engine_oracle/",
)
#: Their notes are ours, and held like every other file.
OUR_NOTES = re.compile(r"(?:^|/)(?:SOURCES?[\w-]*|README)\.md$")

#: Files that name the forbidden citations in order to forbid them.
GUARDS = {
    "tests/docs/test_contract_docs.py",
    "tests/docs/test_user_text.py",
    "tests/measure/test_measure_gate.py",
}

#: Pages of the same name in an engine's repository, cited as that engine's source.
FOREIGN = {"docs/speculative.md"}  # ggml-org/llama.cpp's speculative decoding page

#: A page of this repository and, optionally, one of its anchors.
CITATION = re.compile(r"(?<![\w/.-])((?:docs/[\w.-]+\.md)|README\.md)(?:#([A-Za-z0-9_-]+))?")


def _tracked() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):  # an sdist: no git history
        return sorted(
            str(p.relative_to(ROOT)).replace("\\", "/")
            for p in ROOT.rglob("*")
            if p.is_file() and ".git" not in p.parts and ".venv" not in p.parts
        )
    return [p for p in out.decode("utf-8").split("\0") if p]


def _text(path: str) -> str | None:
    try:
        return (ROOT / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # a binary file, or one not checked out
        return None


def _held(path: str) -> bool:
    if path in GUARDS:
        return False
    if path.startswith(FIXTURES_OF_RECORD):
        return bool(OUR_NOTES.search(path))
    return True


def outside_citations(text: str) -> list[str]:
    """Each citation of material outside the repository in ``text``."""
    return [m.group(0) for m in OUTSIDE.finditer(text)]


def test_outside_citations_are_recognised() -> None:
    assert outside_citations("the bound of DESIGN.md §12.3") == ["DESIGN.md"]
    assert outside_citations("(DESIGN §13, issue 16)") == ["DESIGN §"]
    assert outside_citations("See notes/domain.md §1.1.") == ["notes/domain.md"]
    assert outside_citations("copied from ../shared/fixtures/real/x") == ["../shared/fixtures"]
    assert outside_citations("in /work/shared/cases") == ["/work/shared"]
    assert outside_citations("shared/fixtures/real/hf-config/a.json") == ["shared/fixtures"]
    assert outside_citations("see fixtures/real/SOURCES.md") == ["fixtures/real/"]
    # A path of a test's own temporary repository is no citation, nor our copies.
    assert outside_citations("deploy/specgate.yaml → ../shared/common.yaml") == []
    assert outside_citations("hf_config: ../../shared/config.json") == []
    assert outside_citations("tests/data/real/SOURCES.md") == []
    assert outside_citations("docs/theory.md#proven-verify-cost") == []


def test_no_file_cites_material_outside_the_repository() -> None:
    found = []
    for path in _tracked():
        if not _held(path):
            continue
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            found.extend(f"{path}:{number}: {hit}" for hit in outside_citations(line))
    assert found == [], "cite docs/PAGE.md#anchor, a paper or an engine source instead"


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading's text (before de-duplication)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def test_slug_follows_github() -> None:
    assert slug("Proven verify cost") == "proven-verify-cost"
    assert slug("SG104 claimed-speedup-over-theory") == "sg104-claimed-speedup-over-theory"
    assert slug("Install, releases and tags") == "install-releases-and-tags"
    assert slug("`check --staged` and pre-commit") == "check---staged-and-pre-commit"
    assert slug("Which rho") == "which-rho"


@cache
def anchors(page: str) -> frozenset[str]:
    """Every heading anchor of ``page`` (a path relative to the repository)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in (ROOT / page).read_text(encoding="utf-8").splitlines():
        if re.match(r"\s{0,3}(```|~~~)", line):
            fenced = not fenced
            continue
        m = re.match(r"\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        base = slug(m.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return frozenset(out)


def _citations() -> Iterator[tuple[str, int, str, str | None]]:
    for path in _tracked():
        if path in GUARDS or (path.startswith(FIXTURES_OF_RECORD) and not OUR_NOTES.search(path)):
            continue
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for m in CITATION.finditer(line):
                if m.group(1) not in FOREIGN:
                    yield path, number, m.group(1), m.group(2)


def test_every_cited_page_and_anchor_exists() -> None:
    broken = []
    count = 0
    for path, number, page, anchor in _citations():
        count += 1
        if not (ROOT / page).is_file():
            broken.append(f"{path}:{number}: {page} does not exist")
        elif anchor is not None and anchor.lower() not in anchors(page):
            broken.append(f"{path}:{number}: {page}#{anchor} is no heading of {page}")
    assert count > 100  # the code does cite its contract
    assert broken == []


CONTRACT_PAGES = (
    "docs/claims-file.md",
    "docs/theory.md",
    "docs/engines.md",
    "docs/change-gate.md",
    "docs/trust.md",
    "docs/reports.md",
    "docs/rules.md",
)


@pytest.mark.parametrize("page", CONTRACT_PAGES)
def test_readme_links_every_contract_page(page: str) -> None:
    assert f"]({page})" in (ROOT / "README.md").read_text(encoding="utf-8")


def _schema_keys(node: object, defs: dict[str, object]) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield from _schema_keys(defs[ref.rsplit("/", 1)[1]], defs)
        for key, value in (node.get("properties") or {}).items():
            yield key
            yield from _schema_keys(value, defs)
        for keyword in ("items", "anyOf", "oneOf", "allOf"):
            child = node.get(keyword)
            for item in child if isinstance(child, list) else [child]:
                yield from _schema_keys(item, defs)


def test_claims_file_page_documents_every_schema_key() -> None:
    schema = json.loads(
        (ROOT / "src" / "specgate" / "data" / "claims-v1.schema.json").read_text("utf-8")
    )
    page = (ROOT / "docs" / "claims-file.md").read_text(encoding="utf-8")
    keys = set(_schema_keys(schema, schema["$defs"]))
    missing = sorted(k for k in keys if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", page))
    assert len(keys) > 80
    assert missing == []


def test_engines_page_names_every_engine_and_metrics_format() -> None:
    """docs/engines.md's tables cover what the schema accepts (both come from registries)."""
    schema = json.loads(
        (ROOT / "src" / "specgate" / "data" / "claims-v1.schema.json").read_text("utf-8")
    )
    deployment = schema["$defs"]["deployment"]["properties"]
    engines = deployment["speculation"]["properties"]["engine"]["enum"]
    formats = schema["$defs"]["metrics"]["properties"]["format"]["enum"]
    page = (ROOT / "docs" / "engines.md").read_text(encoding="utf-8")
    missing = [name for name in (*engines, *formats) if f"| `{name}` |" not in page]
    assert missing == []
