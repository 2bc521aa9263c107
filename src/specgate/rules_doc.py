"""``specgate rules``: the catalogue as text, JSON or Markdown, from the registry."""

from __future__ import annotations

import json
from typing import Any

from specgate.errors import UsageError
from specgate.rules import REGISTRY, Rule, lookup

DOCS_URL = "https://github.com/specgate/specgate/blob/main/docs/rules.md"


def anchor(rule: Rule) -> str:
    """The rule's anchor in docs/rules.md, e.g. ``sg104-claimed-speedup-over-theory``."""
    return f"{rule.code.lower()}-{rule.name}"


def help_uri(rule: Rule) -> str:
    """The rule's documentation address."""
    return f"{DOCS_URL}#{anchor(rule)}"


def rule_json(rule: Rule) -> dict[str, Any]:
    """A rule as JSON (``specgate rules --format json``)."""
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "summary": rule.summary,
        "doc": rule.doc,
        "fail_example": rule.fail_example,
        "pass_example": rule.pass_example,
        "help_uri": help_uri(rule),
    }


def render_rules(fmt: str = "text") -> str:
    """The catalogue: one line per rule, or a JSON list."""
    rules = sorted(REGISTRY.values(), key=lambda r: r.code)
    if fmt == "json":
        return json.dumps([rule_json(r) for r in rules], indent=2, ensure_ascii=False) + "\n"
    width = max(len(r.name) for r in rules)
    lines = [f"{r.code}  {r.severity:<4}  {r.name:<{width}}  {r.summary}" for r in rules]
    lines.append("")
    lines.append("`specgate rules CODE` prints a rule's doc with failing and passing examples.")
    return "\n".join(lines) + "\n"


def rule_markdown(rule: Rule, heading: str = "###") -> str:
    """One rule's full doc as Markdown."""
    return (
        f"{heading} {rule.code} {rule.name}\n\n"
        f"Severity: `{rule.severity}`. {rule.summary}\n\n"
        f"{rule.doc}\n"
        f"Failing example:\n\n```yaml\n{rule.fail_example}```\n\n"
        f"Passing example:\n\n```yaml\n{rule.pass_example}```\n"
    )


def render_rule(key: str, fmt: str = "text") -> str:
    """One rule's doc.

    Raises:
        UsageError: no rule has that code or name.
    """
    rule = lookup(key)
    if rule is None:
        raise UsageError(f"specgate rules: no rule {key!r} (run `specgate rules` for the list)")
    if fmt == "json":
        return json.dumps(rule_json(rule), indent=2, ensure_ascii=False) + "\n"
    return rule_markdown(rule, heading="#")
