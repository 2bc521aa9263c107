"""The rule catalogue as the report carries it: one plain record per rule, so that no
reporter reads the rule registry, the rule docs or the base-revision policy.

Imported when a report is asked for its catalogue (SARIF): rule texts are cleaned
(``inspect``) only for the outputs that show them.
"""

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from specgate.rules.registry import Rule


class RuleEntry(NamedTuple):
    """One rule as the reporters see it (SARIF ``reportingDescriptor``, summaries).

    ``doc``, ``fail_example`` and ``pass_example`` are the cleaned texts;
    ``markdown`` the rule's whole doc as ``specgate rules CODE`` prints it (``###``
    heading); ``help_uri`` its address in this project's docs, when known;
    ``baseline`` whether it compares with the base revision (SG401–SG403).
    """

    code: str
    name: str
    severity: str
    summary: str
    doc: str
    fail_example: str
    pass_example: str
    markdown: str
    help_uri: str | None
    baseline: bool


def rule_catalogue(docs_url: str | None = None) -> tuple[RuleEntry, ...]:
    """A snapshot of the rule catalogue, sorted by code, each rule's help address under
    ``docs_url`` (this project's ``docs/rules.md``; none when ``None``).

    Built when asked: rule texts are cleaned (``inspect``) only for the outputs that
    show them (SARIF), not at start-up.
    """
    from specgate.rules.catalogue import REGISTRY

    rules = sorted(REGISTRY.values(), key=lambda r: r.code)
    return tuple(rule_entry(rule, docs_url) for rule in rules)


def rule_entry(rule: "Rule", docs_url: str | None = None) -> RuleEntry:
    """``rule``'s catalogue entry, its help address under ``docs_url`` (see
    :func:`rule_catalogue`)."""
    from specgate.rules.docs import help_uri, rule_markdown
    from specgate.rules.registry import BASELINE_CODES

    return RuleEntry(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        summary=rule.summary,
        doc=rule.doc,
        fail_example=rule.fail_example,
        pass_example=rule.pass_example,
        markdown=rule_markdown(rule),
        help_uri=help_uri(rule, docs_url),
        baseline=rule.code in BASELINE_CODES,
    )
