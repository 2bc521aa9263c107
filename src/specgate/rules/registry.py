"""Rule records, the context a rule sees, and the one registry of rules."""

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from specgate.analysis.derived import Metrics
from specgate.analysis.mechanisms import MechanismClass
from specgate.core.findings import Severity
from specgate.load.document import NodePath, Span
from specgate.model.deployment import Deployment

if TYPE_CHECKING:
    from datetime import date

    from specgate.model.base_view import BaseView
else:  # a record's field types are evaluated when its class is made; a quoted one
    # costs a compile() (the first one ~1 ms), so these stand in for what is not imported
    date = BaseView = object


#: The rules that compare with the base revision (``--baseline REF``, SG401–SG404,
#: :mod:`specgate.rules.baseline`): who may silence them is the base revision's policy
#: (:mod:`specgate.change.base_policy`). Held here, so that knowing them imports no rule.
BASELINE_CODES = frozenset({"SG401", "SG402", "SG403", "SG404", "SG412"})


def _no_path(_path: NodePath) -> bool:
    return False


class RuleContext(NamedTuple):
    """What a rule judges: one deployment, its derived metrics and recommendation;
    ``today`` (UTC) for evidence age (the check reads the clock only for a deployment
    with ``evidence.provenance``), ``baseline`` the deployment at the base REF
    (``None`` without ``--baseline`` or when the deployment is new)."""

    deployment: Deployment
    metrics: Metrics
    recommended: MechanismClass
    declared: MechanismClass | None
    has_path: Callable[[NodePath], bool] = _no_path
    today: date | None = None
    baseline: BaseView | None = None


class Hit(NamedTuple):
    """A rule firing: its message, the node path it concerns and the next action.

    ``where`` places a finding about a value inside a referenced file (file as
    shown, span); ``None`` locates ``path`` in the claims file. ``severity`` overrides
    the rule's default for this finding (an engine behaviour that is not confirmed at
    the version in force warns where a confirmed one fails); ``related`` names other
    places the finding concerns (file as shown, span); ``subject`` the key or flag
    the finding is about when ``path`` does not name it, and ``excess`` how far past
    its bound the deployment is (larger is worse), both for ``--only-new``
    (:class:`~specgate.core.findings.Finding`); ``details`` the evidence beside the
    message (formulas, sources, version reasoning; ``""``: none).
    """

    message: str
    path: NodePath
    action: str
    where: tuple[str, Span | None] | None = None
    severity: Severity | None = None
    related: tuple[tuple[str, Span | None], ...] = ()
    subject: str | None = None
    excess: float | None = None
    details: str = ""


Check = Callable[[RuleContext], Iterator[Hit]]


class Rule(NamedTuple):
    """A catalogue entry.

    Attributes:
        code, name, severity: stable identity and default severity.
        summary: one line (``specgate rules``, SARIF shortDescription).
        raw_doc / raw_fail_example / raw_pass_example: the texts as written in the
            source (a docstring's indentation included); read them cleaned through
            :attr:`doc`, :attr:`fail_example` and :attr:`pass_example`.
        check: the pure function, or ``None`` for rules the loader raises
            (SG001–SG003) or that need referenced files (SG3xx).
    """

    code: str
    name: str
    severity: Severity
    summary: str
    raw_doc: str
    raw_fail_example: str
    raw_pass_example: str
    check: Check | None = None

    @property
    def doc(self) -> str:
        """What it checks and why, with the formula and its source (Markdown)."""
        return _dedent(self.raw_doc)

    @property
    def fail_example(self) -> str:
        """A whole claims file (YAML) that raises this rule; the tests run it."""
        return _dedent(self.raw_fail_example)

    @property
    def pass_example(self) -> str:
        """A whole claims file (YAML) that does not raise this rule."""
        return _dedent(self.raw_pass_example)


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
                raw_doc=check.__doc__ or "",
                raw_fail_example=fail_example,
                raw_pass_example=pass_example,
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
    """``text`` without its common indentation and outer blank lines, ending in one newline
    (empty for blank text). Cleaned on demand, not at registration: only the rule catalogue,
    SARIF and the docs read these texts, and ``inspect`` would cost every start-up ~5 ms."""
    from inspect import cleandoc

    return cleandoc(text) + "\n" if text.strip() else ""
