"""Findings that rest on an assumed draft length D (DESIGN §13).

When the serving config leaves D to the engine's default, the default differs
between the engine's versions, and the version is neither stated nor detected, the D
judged is a guess (llama.cpp: 5 tokens up to b4094, 16 from b4295, 3 from b9518). A
fail rests on what is stated, measured or known of the engine at its version, so each
finding that would fail because of that D warns instead, and says which input settles
it (``speculation.engine_version`` or the setting that states D).
"""

from __future__ import annotations

from specgate.analysis.derived import Metrics
from specgate.core.findings import Severity
from specgate.model.deployment import Deployment
from specgate.rules.registry import Hit

#: The fail rules whose verdict depends on D (SG301 is softened where the conflict is
#: built: a stated D wins over an assumed default).
_USES_D = frozenset({"SG102", "SG103", "SG104", "SG106", "SG309"})


def soften(
    code: str, severity: Severity, hit: Hit, deployment: Deployment, metrics: Metrics
) -> Hit:
    """``hit`` as a warning that names the assumption when it would fail (``severity``,
    the rule's) on an assumed D; else ``hit`` unchanged.

    SG103 only for AL above 1 + D (an AL below 1 is impossible at every D); SG106 only
    for the theory's S < 1 (a claim or measurement below 1x needs no D); SG102 only for
    the default floor that is not a plain gain test (ρ derived from a measured speedup
    makes the floor AL / S_measured, which no D changes).
    """
    assumed = deployment.speculation.draft_length_assumed
    if assumed is None or code not in _USES_D or (hit.severity or severity) != "fail":
        return hit
    evidence_al = deployment.path("evidence", "accept_length")
    if code in ("SG103", "SG106") and (
        hit.path != evidence_al or metrics.accept_length is None or metrics.accept_length < 1
    ):
        return hit
    if code == "SG102" and (
        metrics.accept_length_floor.source != "default"
        or (metrics.draft_depth_ratio_source == "derived" and not metrics.evidence_stale)
    ):
        return hit
    return hit._replace(
        message=f"{hit.message} ({assumed})",
        action=f"Settle D first: {assumed}. Then: {hit.action}",
        severity="warn",
    )
