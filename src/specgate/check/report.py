"""The report of a run: plain frozen records that every reporter formats.

Shapes follow docs/reports.md#json-report (the JSON shape itself is
:mod:`specgate.reporters.json_report`'s). The report carries all a reporter needs, the
rule catalogue included (:meth:`RunReport.rule_catalogue`, :mod:`specgate.check.catalogue`):
no reporter reads the rule registry, the rule docs or the base-revision policy.
"""

from typing import TYPE_CHECKING, Any, NamedTuple

from specgate.analysis.derived import Metrics
from specgate.analysis.mechanisms import MechanismClass
from specgate.core.findings import SEVERITY_RANK, Finding
from specgate.model.deployment import Deployment

if TYPE_CHECKING:
    from specgate.check.catalogue import RuleEntry


class DeploymentReport(NamedTuple):
    """One deployment's verdict: status, metrics, mechanism, findings, next actions."""

    name: str
    status: str
    metrics: Metrics
    recommended: MechanismClass
    declared: MechanismClass | None
    declared_mechanism: str | None
    findings: tuple[Finding, ...]
    next_actions: tuple[str, ...]
    #: The deployment judged, with what its referenced files gave (``inputs``).
    deployment: Deployment
    baseline: dict[str, Any] | None = None
    #: Findings silenced by a suppression (each with ``suppressed`` set); they
    #: change no status and stay in the reports, marked.
    suppressed_findings: tuple[Finding, ...] = ()
    #: Whether the attention tile rule (G, D*, tile alignment) applies: decode is
    #: attention-dominated (``workload.attention_dominated``).
    tile_rule_applies: bool = False
    #: The class the report recommends, ``None`` when the inputs support none or a
    #: declared mechanism works (:func:`specgate.analysis.mechanisms.advice`).
    advised: MechanismClass | None = None
    #: ``--only-new``: the findings of the deployment it was compared with at the
    #: base revision (``None``: new there, unreadable there, or no ``--only-new``).
    #: Not rendered: :mod:`specgate.check.only_new` marks ``findings`` with them.
    base_findings: tuple[Finding, ...] | None = None
    #: The rule code each of ``next_actions`` answers, in the same order (``--only-new``
    #: keeps only the actions of rules with a finding that counts).
    action_codes: tuple[str, ...] = ()

    @property
    def unchanged_fails(self) -> int:
        """``--only-new``: the fail findings unchanged since the base revision. They
        count toward no status (docs/change-gate.md), so the reports name them beside
        it: a ``ready`` deployment that carries one is not shown as passing."""
        return sum(
            1 for f in self.findings if f.severity == "fail" and f.baseline_state == "unchanged"
        )

    @property
    def status_label(self) -> str:
        """The status as the reports show it: ``ready (1 unchanged fail at base)`` when
        :attr:`unchanged_fails` is not 0, else the status."""
        n = self.unchanged_fails
        if not n:
            return self.status
        return f"{self.status} ({n} unchanged fail{'s' if n > 1 else ''} at base)"

    @property
    def config_digest(self) -> str:
        """The deployment's config digest (``sha256:…``, docs/change-gate.md#config-digest). Made
        when read: the digest's SHA-256 (hashlib loads OpenSSL) is start-up cost for outputs that
        never show it."""
        from specgate.analysis.digest import config_digest

        return config_digest(self.deployment)

    @property
    def version_assumed(self) -> str | None:
        """When the deployment's engine config is read at an engine version neither the
        claims file states nor an image tag or requirement pins, the sentence saying so
        and which version was read (the version note of
        :func:`specgate.inputs.version.detect_version`: ``vllm version unknown (image not
        pinned: vllm/vllm-openai:latest): read as the newest behaviour specgate
        knows (0.32.0); …``); None otherwise. Said once per deployment."""
        inputs = self.deployment.inputs
        engine = inputs.engine if inputs is not None else None
        # a pre-release keeps its source, but pins no one release (docs/engines.md#pre-releases)
        if engine is None or engine.version is not None:
            return None
        return next((note for note in engine.notes if " version unknown" in note), None)


class FileReport(NamedTuple):
    """One claims file: file-level findings, deployments, or the error that stopped it."""

    path: str
    status: str
    error: str | None
    findings: tuple[Finding, ...]
    deployments: tuple[DeploymentReport, ...]
    error_line: int | None = None
    error_column: int | None = None
    error_file: str | None = None
    suppressed: int = 0
    #: File-level findings silenced by a suppression (see DeploymentReport).
    suppressed_findings: tuple[Finding, ...] = ()

    @property
    def error_location_file(self) -> str:
        """The file the error's line and column belong to: a referenced serving,
        model or metrics file when the error is there, else the claims file."""
        return self.error_file or self.path

    def all_findings(self, *, suppressed: bool = False) -> list[Finding]:
        """File-level and deployment findings together, in report order; with
        ``suppressed``, the suppressed ones too."""
        found = list(self.findings)
        if suppressed:
            found.extend(self.suppressed_findings)
        for deployment in self.deployments:
            found.extend(deployment.findings)
            if suppressed:
                found.extend(deployment.suppressed_findings)
        return found


class RunReport(NamedTuple):
    """A whole run over one or more files."""

    status: str
    files: tuple[FileReport, ...]
    #: ``--only-new``: every finding carries its ``baseline_state``.
    only_new: bool = False

    def all_findings(self, *, suppressed: bool = False) -> list[Finding]:
        """Every finding of every file (with ``suppressed``, the suppressed ones too)."""
        return [f for file in self.files for f in file.all_findings(suppressed=suppressed)]

    def counts(self) -> dict[str, int]:
        """Findings by severity: ``{"fail": n, "warn": n, "info": n, "note": n}``; with
        ``--only-new`` the unchanged ones are not counted (:attr:`unchanged`)."""
        counts = dict.fromkeys(SEVERITY_RANK, 0)
        for finding in self.all_findings():
            if finding.baseline_state != "unchanged":
                counts[finding.severity] += 1
        return counts

    @property
    def unchanged(self) -> int:
        """``--only-new``: findings already at the base revision (counted nowhere)."""
        return sum(1 for f in self.all_findings() if f.baseline_state == "unchanged")

    @property
    def suppressed(self) -> int:
        """Findings left out by configuration ``ignore``/``select`` or inline comments."""
        return sum(f.suppressed for f in self.files)

    @property
    def deployment_count(self) -> int:
        """Number of deployments checked."""
        return sum(len(f.deployments) for f in self.files)

    def rule_catalogue(self, docs_url: str | None = None) -> "tuple[RuleEntry, ...]":
        """Every rule of the catalogue, sorted by code, with its help address under
        ``docs_url`` (:func:`specgate.check.catalogue.rule_catalogue`)."""
        from specgate.check.catalogue import rule_catalogue

        return rule_catalogue(docs_url)

    @property
    def baseline_codes(self) -> frozenset[str]:
        """The codes of the rules that compare with the base revision (SG401–SG403):
        reporters name their suppressed findings one by one, never only as a count."""
        from specgate.rules.registry import BASELINE_CODES

        return BASELINE_CODES
