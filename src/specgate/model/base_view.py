"""What the baseline rules (SG401–SG404) know about a deployment at the base REF.

A plain record built by :mod:`specgate.change.baseline` (which does the git I/O) so the
rules stay pure functions of the typed model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specgate.model.deployment import Deployment


@dataclass(frozen=True)
class BaseView:
    """One deployment as it was at the base revision.

    Attributes:
        ref: the REF as given (``--baseline``); ``commit``: the commit it resolved to.
        accept_length: AL at REF (stated or read from its metrics), else ``None``.
        accept_length_se: SE of that AL from a per-step distribution, else ``None``.
        accept_length_estimate: that AL was only an estimate (``inputs.acceptance.
            estimate`` at REF): a head estimate then may soften SG401, else not.
        theoretical_speedup, claimed_speedup, measured_speedup: at REF, else ``None``.
        config_digest: the config digest at REF.
        evidence_files_same: every evidence file (``evidence.metrics.path`` and
            ``baseline_path``) has the same git blob at REF as in the work tree, and
            the set of evidence files is the same.
        max_accept_length_drop: the base's ``policy.max_accept_length_drop``
            (a pull request cannot loosen its own gate), else ``None``.
        measured_speedup_se: the base's ``evidence.measured_speedup_se``, else ``None``.
        max_speedup_drop: the base's ``policy.max_speedup_drop``, else ``None``.
        error: why the deployment, which exists at REF, could not be read there
            (every value above is then unknown and SG410 says so), else ``None``.
        renamed_from: the deployment's name at REF when it is spelled otherwise
            there (another case or spacing, or a renamed deployment matched by its
            configuration), else ``None``.
        accept_length_half_unit, measured_speedup_half_unit: half a unit of the last
            digit ``evidence.accept_length`` / ``evidence.measured_speedup`` are written
            with at REF (their precision as written), else ``None``.
        draft_length: D at REF (stated or read from its engine config), else ``None``:
            an AL the head keeps unchanged was measured at it (SG403's reading).
        config_fields: the config digest's fields at REF as (name, value) pairs in the
            digest's order (:mod:`specgate.analysis.digest`), so SG403 names what
            changed (``D 3 → 5``); ``()`` when unknown.
        draft_depth_ratio, proven_draft_depth_ratio: ρ at REF and how it is known
            (``draft_depth_ratio_source``: stated, derived …), else ``None``: a head that
            keeps REF's measured speedup while its AL moved prices its theory with it.
        config_unread: why REF's serving config was not read (a form not read, a value
            not settled, past a bound or not of its type: judged on the claims file's
            stated values there, as at the head), else ``None``: ``config_digest`` is
            then ``""`` and ``config_fields`` ``()``, and SG403 does not compare them.
    """

    ref: str
    commit: str
    accept_length: float | None
    accept_length_se: float | None
    theoretical_speedup: float | None
    claimed_speedup: float | None
    measured_speedup: float | None
    config_digest: str
    evidence_files_same: bool
    max_accept_length_drop: float | None
    measured_speedup_se: float | None = None
    max_speedup_drop: float | None = None
    error: str | None = None
    accept_length_estimate: bool = False
    renamed_from: str | None = None
    accept_length_half_unit: float | None = None
    measured_speedup_half_unit: float | None = None
    draft_length: int | None = None
    config_fields: tuple[tuple[str, object], ...] = ()
    draft_depth_ratio: float | None = None
    proven_draft_depth_ratio: float | None = None
    draft_depth_ratio_source: str | None = None
    config_unread: str | None = None

    def ratio_for(
        self, deployment: Deployment, measured_speedup: float | None
    ) -> tuple[float, float, str] | None:
        """REF's ρ, its proven value and REF when the head keeps REF's measured speedup
        (within 5·10⁻⁵) while its AL moved and states no ρ: that speedup was measured with
        REF's AL, so re-fitting ρ to the head's AL would hide the AL change in the theory
        (new-user defect 6: AL 2.8 → 2.1 showed "theoretical 1.95 → 1.95"); else
        ``None``."""
        al = deployment.evidence.accept_length
        if (
            self.error is not None
            or self.draft_depth_ratio_source != "derived"
            or self.draft_depth_ratio is None
            or self.proven_draft_depth_ratio is None
            or deployment.speculation.draft_depth_ratio is not None
            or measured_speedup is None
            or self.measured_speedup is None
            or abs(measured_speedup - self.measured_speedup) > 5e-5
            or al is None
            or self.accept_length is None
            or abs(al - self.accept_length) <= 5e-5
        ):
            return None
        return self.draft_depth_ratio, self.proven_draft_depth_ratio, self.ref

    def measured_at(self, deployment: Deployment) -> tuple[int, str] | None:
        """The base revision's D and REF when the head keeps the base's AL and evidence
        unchanged (SG403's reading: the AL was measured for the base's config), else
        ``None``."""
        if (
            self.error is not None
            or self.draft_length is None
            or not self.evidence_files_same
            or deployment.evidence.accept_length is None
            or deployment.evidence.accept_length != self.accept_length
        ):
            return None
        return self.draft_length, self.ref
