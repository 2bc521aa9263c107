"""Judge one deployment: its metrics, the rules over them, and the report record.

:func:`evaluate` is shared by ``specgate check`` (through :mod:`specgate.check.run`, which
reads files and resolves references) and ``specgate doctor`` (a deployment built from
flags); it holds no formulas and no formatting.
"""

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from specgate.analysis import derived, mechanisms
from specgate.check.options import CheckOptions, utc_today
from specgate.check.report import DeploymentReport
from specgate.core.concise import concise
from specgate.core.findings import SEVERITY_RANK, Finding, Severity, status_of
from specgate.load.document import Document, NodePath, Span, format_path
from specgate.model.deployment import Deployment
from specgate.rules.families import load_for
from specgate.rules.registry import REGISTRY, Hit, RuleContext

if TYPE_CHECKING:
    from specgate.model.base_view import BaseView

_SCHEMA_ACTIONS = {
    "SG001": "Fix the schema violations (run `specgate schema` for the format); other rules "
    "run once the file is valid.",
    "SG002": "Remove the repeated key so the file says one value.",
    "SG003": "Give each deployment a unique name.",
}

#: The details of the rules on the file itself, which have no numbers to show: what
#: they rest on (issue 26: every finding carries its evidence).
_FILE_DETAILS = {
    "SG001": "the format: docs/claims-file.md; `specgate schema` prints its JSON Schema",
    "SG002": "YAML requires unique mapping keys; PyYAML, which specgate reads with, keeps the "
    "last value (docs/claims-file.md#format-rules)",
    "SG003": "findings, suppressions and --baseline pair deployments by name "
    "(docs/claims-file.md#deployment)",
    "SG004": "`specgate rules` lists every code and name (docs/trust.md#suppressions)",
    "SG005": "an inline suppression applies to the findings of the line it names "
    "(docs/trust.md#suppressions)",
    "SG412": "deployments are paired by name, then by configuration "
    "(docs/change-gate.md#pairing-deployments)",
}


class Locator:
    """Turns node paths into (file, span); values read from referenced files
    carry that file's location in ``overrides`` (filled as references resolve)."""

    __slots__ = ("document", "file", "overrides")

    def __init__(self, file: str | None, document: Document | None = None) -> None:
        self.file = file
        self.document = document
        self.overrides: dict[NodePath, tuple[str, Span]] = {}

    def locate(self, path: NodePath) -> tuple[str | None, Span | None]:
        """The file and span a finding about ``path`` is annotated on."""
        if path in self.overrides:
            return self.overrides[path]
        if self.document is None:
            return self.file, None
        return self.file, self.document.locate(path)

    def has(self, path: NodePath) -> bool:
        """Whether ``path`` exists in the claims file (or a referenced file)."""
        if path in self.overrides:
            return True
        return self.document is not None and self.document.has(path)


def make_finding(
    code: str,
    message: str,
    path: NodePath,
    where: tuple[str | None, Span | None],
    *,
    severity: Severity | None = None,
    related: tuple[tuple[str, Span | None], ...] = (),
    subject: str | None = None,
    excess: float | None = None,
    details: str = "",
) -> Finding:
    """A :class:`Finding` of registered rule ``code`` at ``where``, at the rule's
    severity unless ``severity`` is given; a message over the limit keeps what is wrong
    and moves the rest to ``details`` (:func:`~specgate.core.concise.concise`)."""
    rule = REGISTRY[code]
    file, span = where
    if span is not None and span.file is not None:
        file = span.file  # a value another file sets (a Compose override): that file's line
    message, details = concise(message, details or _FILE_DETAILS.get(code, ""))
    return Finding(
        code=code,
        name=rule.name,
        severity=severity or rule.severity,
        message=message,
        details=details,
        file=file,
        path=format_path(path),
        line=span.line if span else None,
        column=span.column if span else None,
        related=tuple(
            (at.file if at and at.file else other, at.line if at else None,
             at.column if at else None)
            for other, at in related
        ),
        subject=subject,
        excess=excess,
    )


def _nowhere(_path: NodePath) -> bool:
    return False


#: Rules whose action names each finding's own setting (what replaces it, the value the
#: engine takes): their one step per deployment says each distinct one, in order
#: (docs/reports.md#next-actions).
_EACH_SETTING = frozenset({"SG307", "SG310"})


def _next_actions(pairs: Iterable[tuple[Finding, str]]) -> tuple[tuple[str, str], ...]:
    """One action per distinct rule that fired, most severe first, as (rule code,
    action); a finding with no action (a note that nothing the user sets would change)
    adds none, and no clause an action already shown says is said again
    (:func:`_unsaid`: one instruction, once per deployment). A rule of
    :data:`_EACH_SETTING` says each of its findings' distinct actions in its one step,
    most severe first, then by file and line."""
    ordered = sorted(pairs, key=lambda p: (SEVERITY_RANK[p[0].severity], p[0].code))
    each: dict[str, list[str]] = {}
    by_place = sorted(
        ordered,
        key=lambda p: (SEVERITY_RANK[p[0].severity], p[0].file or "", p[0].line or 0),
    )
    for finding, action in by_place:
        if action and finding.code in _EACH_SETTING:
            said = each.setdefault(finding.code, [])
            if action not in said:
                said.append(action)
    seen: set[str] = set()
    actions: list[tuple[str, str]] = []
    for finding, action in ordered:
        if not action or finding.code in seen:
            continue
        seen.add(finding.code)
        step = " ".join(each.get(finding.code, [action]))
        fresh = _unsaid(step, [shown for _, shown in actions])
        if fresh:
            actions.append((finding.code, fresh))
    return tuple(actions)


def _unsaid(action: str, shown: list[str]) -> str:
    """``action`` less each of its clauses (split at ``"; "``) that an action already
    shown says word for word: ``""`` when nothing is left (SG204's "Measure ρ …" after
    SG108's "Measure ρ …, or lower claims.speedup …"); SG110's "Measure ρ …; improve
    the drafter's match …" after SG108's keeps "Improve the drafter's match …"."""
    clauses = action.removesuffix(".").split("; ")
    kept = [c for c in clauses if not any(c in s or _lower(c) in s for s in shown)]
    if len(kept) == len(clauses):
        return action
    if not kept:
        return ""
    text = "; ".join(kept)
    return text[0].upper() + text[1:] + "."


def _lower(clause: str) -> str:
    """``clause`` as it reads inside a sentence (its first letter lower-cased)."""
    return clause[:1].lower() + clause[1:]


def evaluate(
    deployment: Deployment,
    locator: Locator,
    options: CheckOptions,
    *,
    blocking: list[Finding] | None = None,
    extra: Callable[[RuleContext], Iterable[tuple[str, Hit]]] | None = None,
    keep: Callable[[Finding], bool] | None = None,
    baseline: "BaseView | None" = None,
) -> DeploymentReport:
    """Judge one deployment.

    Args:
        deployment: the typed deployment.
        locator: maps node paths to file locations.
        options: run-wide options.
        blocking: schema findings (SG001/SG002/SG003) of this deployment; when any
            SG001/SG002 is present no other rule runs (fix the schema first).
        extra: more (code, hit) pairs, e.g. from referenced-file rules.
        keep: a filter applied before the status is decided (configuration
            ``select``/``ignore`` and inline suppressions).
        baseline: the deployment at the base revision (SG401–SG403), if any.
    """
    metrics = derived.compute(
        deployment,
        options.min_accept_length,
        measured_at=None if baseline is None else baseline.measured_at(deployment),
        base_ratio=None
        if baseline is None
        else baseline.ratio_for(deployment, derived.measured_speedup(deployment)),
    )
    unpriced = derived.non_finite(metrics)
    # never judged against NaN or infinity (docs/trust.md#bounded-work): SG001, blocking
    if unpriced:
        blocking = [*(blocking or []), _non_finite_finding(unpriced, deployment, locator)]
    recommended = mechanisms.recommend(deployment)
    declared = mechanisms.declared(deployment)
    today = options.today
    if today is None and deployment.evidence.provenance is not None:
        today = utc_today()  # evidence age (SG405) is the one rule that reads the date
    ctx = RuleContext(
        deployment, metrics, recommended, declared, locator.has, today=today, baseline=baseline
    )
    load_for(ctx)
    pairs: list[tuple[Finding, str]] = [(f, _SCHEMA_ACTIONS[f.code]) for f in blocking or []]
    if not any(f.code in ("SG001", "SG002") for f in blocking or []):
        hits: list[tuple[str, Hit]] = []
        for rule in REGISTRY.values():
            check = rule.check
            if check is not None:
                code = rule.code
                for hit in check(ctx):  # a loop: no generator per rule and deployment
                    hits.append((code, hit))
        if extra is not None:
            hits.extend(extra(ctx))
        if (
            deployment.speculation.draft_length_assumed is not None
            or deployment.speculation.draft_length_moves is not None
            or deployment.accept_length_estimate is not None
        ):  # a fail on an estimated AL or an assumed D stands only if it holds over its range
            from specgate.rules.uncertain import settle

            hits = settle(ctx, hits, options.min_accept_length)
        if hits:  # how an estimate is labelled is read only for a finding to word
            from specgate.rules.estimates import labelled

            for code, hit in hits:
                where = hit.where if hit.where is not None else locator.locate(hit.path)
                message = labelled(hit.message, deployment, metrics.accept_length)
                finding = make_finding(
                    code,
                    message,
                    hit.path,
                    where,
                    severity=hit.severity,
                    related=hit.related,
                    subject=hit.subject,
                    excess=hit.excess,
                    details=hit.details,
                )
                pairs.append((finding, hit.action))
    if keep is not None:
        pairs = [(f, action) for f, action in pairs if keep(f)]
    if deployment.inputs is not None:
        from specgate.rules.actions import placed

        document = locator.document
        states = document.has if document is not None else _nowhere
        pairs = [(f, placed(action, deployment, states)) for f, action in pairs]
    findings = tuple(sorted((f for f, _ in pairs), key=Finding.sort_key))
    status = status_of(list(findings))
    actions = () if status == "ready" else _next_actions(pairs)
    return DeploymentReport(
        name=deployment.name,
        status=status,
        metrics=metrics,
        recommended=recommended,
        declared=declared,
        declared_mechanism=deployment.speculation.mechanism,
        findings=findings,
        next_actions=tuple(action for _, action in actions),
        action_codes=tuple(code for code, _ in actions),
        deployment=deployment,
        tile_rule_applies=bool(deployment.workload.attention_dominated),
        advised=mechanisms.advice_for(deployment, metrics),
    )


def _non_finite_finding(
    unpriced: list[tuple[str, float]], deployment: Deployment, locator: Locator
) -> Finding:
    """SG001 at the deployment: its numbers, though each within its bounds, price a
    metric as NaN or infinity; no other rule runs on it."""
    from specgate.core.numbers import fmt

    names = ", ".join(f"{name} = {fmt(value)}" for name, value in unpriced[:4])
    path: NodePath = ("deployments", deployment.position)
    message = (
        f"this deployment's numbers give non-finite metrics ({names}); no rule can judge "
        "it: bring the hardware, workload and model numbers to physical values"
    )
    return make_finding("SG001", message, path, locator.locate(path))
