"""Rule records, the context a rule sees, and the one registry of rules."""

from __future__ import annotations

import datetime
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specgate.comparison import BaseView
    from specgate.derived import Metrics
    from specgate.document import NodePath, Span
    from specgate.findings import Severity
    from specgate.mechanisms import MechanismClass
    from specgate.model import Deployment


@dataclass(frozen=True)
class RuleContext:
    """What a rule judges: one deployment, its derived metrics and recommendation;
    ``today`` (UTC) for evidence age, ``baseline`` the deployment at the base REF
    (``None`` without ``--baseline`` or when the deployment is new)."""

    deployment: Deployment
    metrics: Metrics
    recommended: MechanismClass
    declared: MechanismClass | None
    has_path: Callable[[NodePath], bool] = field(default=lambda _path: False)
    today: datetime.date | None = None
    baseline: BaseView | None = None


@dataclass(frozen=True)
class Hit:
    """A rule firing: its message, the node path it concerns and the next action.

    ``where`` places a finding about a value inside a referenced file (file as
    shown, span); ``None`` locates ``path`` in the claims file.
    """

    message: str
    path: NodePath
    action: str
    where: tuple[str, Span | None] | None = None


Check = Callable[[RuleContext], Iterator[Hit]]


@dataclass(frozen=True)
class Rule:
    """A catalogue entry.

    Attributes:
        code, name, severity: stable identity and default severity.
        summary: one line (``specgate rules``, SARIF shortDescription).
        doc: what it checks and why, with the formula and its source (Markdown).
        fail_example / pass_example: whole claims files (YAML) that do and do not
            raise this rule; the tests run both.
        check: the pure function, or ``None`` for rules the loader raises
            (SG001–SG003) or that need referenced files (SG3xx).
    """

    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    fail_example: str
    pass_example: str
    check: Check | None = None


REGISTRY: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    """Add ``rule`` to the registry (codes and names must be new)."""
    if rule.code in REGISTRY or any(r.name == rule.name for r in REGISTRY.values()):
        raise ValueError(f"rule {rule.code} {rule.name} registered twice")
    REGISTRY[rule.code] = rule
    return rule


def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    fail_example: str,
    pass_example: str,
) -> Callable[[Check], Check]:
    """Decorator: register a check function; its docstring is the rule's doc."""

    def wrap(check: Check) -> Check:
        register(
            Rule(
                code=code,
                name=name,
                severity=severity,
                summary=summary,
                doc=_dedent(check.__doc__ or ""),
                fail_example=_dedent(fail_example),
                pass_example=_dedent(pass_example),
                check=check,
            )
        )
        return check

    return wrap


def lookup(key: str) -> Rule | None:
    """A rule by code (any case) or name."""
    wanted = key.strip()
    found = REGISTRY.get(wanted.upper())
    if found is not None:
        return found
    return next((r for r in REGISTRY.values() if r.name == wanted.lower()), None)


def _dedent(text: str) -> str:
    return inspect.cleandoc(text) + "\n" if text.strip() else ""
