"""Inline suppressions: ``# specgate: ignore[SG104] -- reason`` in YAML claims files.

A directive alone on its line covers the next line; a directive after a value
covers its own line. Several codes or names may be listed, comma-separated; the
text after ``]`` (an optional ``--`` first) is the reason, kept as the SARIF
suppression's justification. JSON has no comments: use ``ignore`` or
``per-file-ignores`` in the configuration.

Suppressions stay visible: a suppressed finding is still reported, marked
suppressed (JSON ``"suppressed": true``, SARIF ``suppressions``, the job
summary); a directive that suppresses nothing is SG005; a bare
``# specgate: ignore`` naming no rule, or a reference to no rule, is SG004.

The scan is line-based: PyYAML's composer drops comments, so a directive is
recognised wherever ``# specgate:`` follows white space or starts a line (text
inside a quoted string that spells a directive would count too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from specgate.project.config import UNIGNORABLE

_DIRECTIVE = re.compile(r"(?:^|\s)#\s*specgate:\s*ignore\b(?:\[([^\]\n]*)\])?(.*)$")


@dataclass(frozen=True)
class BadReference:
    """A directive naming no rule, or a rule that cannot be suppressed."""

    reference: str
    line: int
    column: int
    reason: str


@dataclass(frozen=True)
class Directive:
    """One rule named by one inline directive.

    Attributes:
        code: the rule's code.
        target: the 1-based line it covers.
        line, column: where the directive's code list starts.
        reason: the text after ``]`` (without ``--``), or ``None``.
    """

    code: str
    target: int
    line: int
    column: int
    reason: str | None


@dataclass(frozen=True)
class InlineIgnores:
    """The directives of a file and its bad references."""

    directives: tuple[Directive, ...] = ()
    bad: tuple[BadReference, ...] = ()
    by_line: dict[int, frozenset[str]] = field(default_factory=dict)

    def match(self, code: str, line: int | None) -> Directive | None:
        """The directive that suppresses a finding of ``code`` at ``line``, if any."""
        if line is None or code not in self.by_line.get(line, frozenset()):
            return None
        return next(d for d in self.directives if d.target == line and d.code == code)

    def suppresses(self, code: str, line: int | None) -> bool:
        """Whether a finding of ``code`` at ``line`` is suppressed."""
        return self.match(code, line) is not None


def _reason(rest: str) -> str | None:
    text = rest.strip()
    if text.startswith("--"):
        text = text[2:].strip()
    return text or None


def scan(text: str) -> InlineIgnores:
    """Find every directive in ``text`` (YAML source)."""
    from specgate.rules.catalogue import lookup

    directives: list[Directive] = []
    bad: list[BadReference] = []
    for number, line in enumerate(text.splitlines(), 1):
        if "specgate" not in line:
            continue
        match = _DIRECTIVE.search(line)
        if match is None:
            continue
        own_line = not line[: match.start()].strip()
        target = number + 1 if own_line else number
        codes_text, rest = match.group(1), match.group(2)
        if codes_text is None or not codes_text.strip():
            column = line.index("#", match.start()) + 1
            bad.append(
                BadReference(
                    "", number, column, "names no rule: write ignore[SGnnn] -- reason"
                )
            )
            continue
        column = match.start(1) + 1
        reason = _reason(rest)
        for reference in (r.strip() for r in codes_text.split(",")):
            if not reference:
                continue
            rule = lookup(reference)
            if rule is None:
                bad.append(BadReference(reference, number, column, "names no rule"))
            elif rule.code in UNIGNORABLE:
                bad.append(
                    BadReference(reference, number, column, "cannot be suppressed (fix the file)")
                )
            else:
                directives.append(Directive(rule.code, target, number, column, reason))
    by_line: dict[int, set[str]] = {}
    for directive in directives:
        by_line.setdefault(directive.target, set()).add(directive.code)
    return InlineIgnores(
        tuple(directives), tuple(bad), {k: frozenset(v) for k, v in by_line.items()}
    )
