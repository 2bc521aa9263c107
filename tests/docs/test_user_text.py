"""What a user reads cites only what a user can open: no design document kept outside the
repository (``DESIGN.md``, a bare ``§12.1``), and no path of the maintainers' machines
(``/work/…``, ``/tmp/…``). Read: README.md, docs/, examples/, action.yml, the pre-commit
hook, the packaged data (schemas included), every rule's doc, summary and examples
(``specgate rules``), and every string literal in the package that is not a docstring
(messages, ``--help``, next actions). A ``§`` is allowed only right after a paper it
belongs to (``arXiv:2412.19437, §5.4.3``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from specgate.rules.catalogue import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "specgate"

#: A design document users cannot read, and paths of the maintainers' machines.
_FORBIDDEN = re.compile(r"DESIGN(?:\.md|\s*§)|/work/|/tmp/")
#: A section sign is fine after a paper's arXiv id (within the same parenthesis).
_PAPER_SECTION = re.compile(r"arXiv:\d{4}\.\d{4,5}(?:v\d+)?,?\s*(?:[^()§]{0,40})?$")


def problems(text: str) -> list[str]:
    """Each citation of unreadable material in ``text``, with a little context."""
    found = [m.group(0) for m in _FORBIDDEN.finditer(text)]
    for m in re.finditer("§", text):
        if not _PAPER_SECTION.search(text[max(0, m.start() - 60) : m.start()]):
            found.append(text[max(0, m.start() - 30) : m.end() + 10])
    return found


_TEXT_SUFFIXES = {".md", ".yaml", ".yml", ".json", ".sh", ".txt", ""}


def _files() -> Iterator[Path]:
    yield ROOT / "README.md"
    yield ROOT / "action.yml"
    yield ROOT / ".pre-commit-hooks.yaml"
    for folder in (ROOT / "docs", ROOT / "examples", PACKAGE / "data"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in _TEXT_SUFFIXES:
                yield path


def _literals(path: Path) -> Iterator[tuple[int, str]]:
    """String literals of a module other than docstrings (a string statement)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    statements = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in statements
        ):
            yield node.lineno, node.value


def test_the_checker_finds_what_it_should() -> None:
    # The kinds this test exists for, and the citations that stay.
    assert problems("the step-time model of §12.1") == ["the step-time model of §12.1"]
    assert problems("DESIGN.md's hint for parallel draft heads") == ["DESIGN.md"]
    assert problems("knowledge data, DESIGN §13)") == ["DESIGN §", "knowledge data, DESIGN §13)"]
    assert problems("served_model: /work/oracle/models/x") == ["/work/"]
    assert problems("the report (arXiv:2412.19437, §5.4.3)") == []
    assert problems("a design choice") == []


@pytest.mark.parametrize("path", list(_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_user_facing_files_cite_only_what_users_can_read(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    assert problems(text) == []


def test_rule_docs_cite_only_what_users_can_read() -> None:
    found = {
        (rule.code, field): problems(getattr(rule, field))
        for rule in REGISTRY.values()
        for field in ("summary", "doc", "fail_example", "pass_example")
    }
    assert {key: value for key, value in found.items() if value} == {}


def test_messages_and_help_cite_only_what_users_can_read() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {hit}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, text in _literals(path)
        for hit in problems(text)
    ]
    assert found == []


def test_sg204_doc_states_each_class_typical_draft_depth_ratio() -> None:
    # The examples cite `specgate rules SG204` for the typical ρ (suffix-ngram 0,
    # parallel-draft-head 0.14 (docs/validation.md's back-solved EAGLE ρ), target-attached-mtp
    # 0.02, external-small-draft 0.15):
    # the doc must say what the recommendation uses.
    from specgate.analysis import mechanisms

    doc = REGISTRY["SG204"].doc.replace("\n", " ")
    stated = {
        "suffix-ngram": "ρ ≈ 0 ",
        "parallel-draft-head": "0.14",
        "target-attached-mtp": "0.02",
        "external-small-draft": "0.15",
    }
    for cls in mechanisms.CLASSES:
        assert f"{cls.name} {stated[cls.name]}" in doc
        assert float(stated[cls.name].strip("ρ≈ ")) == cls.draft_depth_ratio_hint


def test_digest_docs_say_how_much_of_the_sha256_is_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Review #15: `specgate digest` prints sha256: + 16 hex digits (the stored form the
    # claims schema's pattern ^sha256:[0-9a-f]{16}$ holds); the docs must say so.
    import hashlib

    from specgate.analysis.digest import digest_of
    from specgate.cli.main import main

    expected = "sha256:" + hashlib.sha256(b"{}").hexdigest()[:16]
    assert digest_of({}) == expected
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "The config digest is `sha256:` and the first 16 hex digits (the first 64 bits" in readme
    assert main(["digest", "--help"]) == 0  # --help: main returns, never raises
    shown = " ".join(capsys.readouterr().out.split())
    assert "the first 16 hex digits (the first 64 bits) of a SHA-256" in shown
