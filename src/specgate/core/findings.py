"""The one record every location travels in after the rules: :class:`Finding`."""

from typing import Literal, NamedTuple

Severity = Literal["fail", "warn", "info", "note"]
Status = Literal["ready", "actionable", "fail"]
FileStatus = Literal["ready", "actionable", "fail", "error"]

#: The most characters a finding's message has; what is longer goes to ``details``.
MESSAGE_LIMIT = 200

#: Most severe first.
SEVERITY_RANK: dict[str, int] = {"fail": 0, "warn": 1, "info": 2, "note": 3}
STATUS_RANK: dict[str, int] = {"ready": 0, "actionable": 1, "fail": 2, "error": 3}


class Finding(NamedTuple):
    """A rule's verdict at one place.

    Attributes:
        code: stable rule code, ``SGnnn``.
        name: the rule's kebab-case name.
        severity: ``fail`` | ``warn`` | ``info`` | ``note``.
        message: what is wrong, in one line of at most :data:`MESSAGE_LIMIT`
            characters, with the numbers that led to it.
        file: the file it is annotated on, relative to the current folder with
            ``/`` (a referenced serving or model config when the value came from
            there); ``None`` when there is no file (``specgate doctor``).
        path: JSON path in the claims file, e.g. ``deployments[0].claims.speedup``.
        line, column: 1-based position in ``file``; ``None`` when there is no file.
        suppressed: ``None`` for a finding in force; for a suppressed one, how it was
            suppressed and why (``"inline: <reason>"``, ``"configuration: ..."``),
            the SARIF suppression's justification.
        related: other places the finding concerns, as ``(file, line, column)``
            (SG301 sits on the claims file's line and names the served file's line:
            SARIF ``relatedLocations``, JSON ``related``).
        subject: the key or flag the finding is about when ``path`` does not name
            it (an engine issue sits at ``speculation.engine_config`` and is about one
            key of that file); part of the finding's identity (``--only-new``).
        excess: how far past its bound the deployment is, in the rule's own unit
            (larger is worse), for the rules that measure it; ``--only-new`` calls a
            finding whose excess grew ``updated``.
        baseline_state: with ``--only-new``, ``new``, ``unchanged`` or ``updated``
            against the base revision (:mod:`specgate.check.only_new`); ``None``
            otherwise.
        details: the evidence beside the message: formulas, sources with their
            commits, version reasoning (``""``: none). JSON ``details``, SARIF
            result ``properties.details``, the job summary's ``<details>``, text with
            ``--verbose``.
    """

    code: str
    name: str
    severity: Severity
    message: str
    file: str | None
    path: str
    line: int | None
    column: int | None
    suppressed: str | None = None
    related: tuple[tuple[str, int | None, int | None], ...] = ()
    subject: str | None = None
    excess: float | None = None
    baseline_state: str | None = None
    details: str = ""

    def sort_key(self) -> tuple[str, int, int, int, str]:
        """Order: file, line, column, severity (most severe first), code."""
        return (
            self.file or "",
            self.line or 0,
            self.column or 0,
            SEVERITY_RANK[self.severity],
            self.code,
        )


def status_of(findings: list[Finding]) -> Status:
    """``fail`` on any fail; else ``actionable`` on any warn or info; else ``ready``.

    A note is an info that never changes the status.
    """
    severities = {f.severity for f in findings}
    if "fail" in severities:
        return "fail"
    if severities & {"warn", "info"}:
        return "actionable"
    return "ready"


def worst(statuses: list[str]) -> str:
    """The most severe of ``statuses`` (``ready`` for none)."""
    return max(statuses, key=STATUS_RANK.__getitem__, default="ready")
