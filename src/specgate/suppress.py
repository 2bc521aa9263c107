"""Inline suppressions: ``# specgate: ignore[SG105] reason`` in YAML claims files.

A directive alone on its line covers the next line; a directive after a value
covers its own line. Several codes or names may be listed, comma-separated.
JSON has no comments: use ``ignore``/``per-file-ignores`` in the configuration.

The scan is line-based: PyYAML's composer drops comments, so a directive is
recognised wherever ``# specgate: ignore[...]`` follows white space or starts a
line (text inside a quoted string that spells a directive would count too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from specgate.config import UNIGNORABLE

_DIRECTIVE = re.compile(r"(?:^|\s)#\s*specgate:\s*ignore\[([^\]]*)\]")


@dataclass(frozen=True)
class BadReference:
    """A directive naming no rule, or a rule that cannot be suppressed."""

    reference: str
    line: int
    column: int
    reason: str


@dataclass(frozen=True)
class InlineIgnores:
    """Suppressed codes by the 1-based line they apply to, and bad references."""

    by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    bad: tuple[BadReference, ...] = ()

    def suppresses(self, code: str, line: int | None) -> bool:
        """Whether a finding of ``code`` at ``line`` is suppressed."""
        return line is not None and code in self.by_line.get(line, frozenset())


def scan(text: str) -> InlineIgnores:
    """Find every directive in ``text`` (YAML source)."""
    from specgate.rules import lookup

    by_line: dict[int, set[str]] = {}
    bad: list[BadReference] = []
    for number, line in enumerate(text.splitlines(), 1):
        if "specgate" not in line:
            continue
        match = _DIRECTIVE.search(line)
        if match is None:
            continue
        own_line = not line[: match.start()].strip()
        target = number + 1 if own_line else number
        column = match.start(1) + 1
        for reference in (r.strip() for r in match.group(1).split(",")):
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
                by_line.setdefault(target, set()).add(rule.code)
    return InlineIgnores({k: frozenset(v) for k, v in by_line.items()}, tuple(bad))
