"""A deployment's ``evidence.metrics`` read into its measured AL
(docs/claims-file.md#referenced-files), or why it gives none.

Degrade, never stop (issue 24): a metrics file that parses but holds a value that
cannot be used as a measurement (:class:`~specgate.core.errors.UnusableMeasurement`)
is SG316 on the deployment at the value's line, and the deployment is judged without
that measurement, as when none is given (docs/engines.md#metrics-not-read); a file that
cannot be parsed at all as its format stays an input error of the run (exit 2).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from specgate.core.errors import InputError, UnusableMeasurement
from specgate.load.document import Document
from specgate.model.deployment import Deployment
from specgate.model.reads import once
from specgate.model.referenced import EngineUnread

if TYPE_CHECKING:
    from specgate.inputs.types import Acceptance

#: Metrics formats that derive AL from D (docs/claims-file.md#referenced-files).
_FROM_D = ("iid-rate", "draft-acceptance-rate")


class Measured(NamedTuple):
    """What ``evidence.metrics`` gave: the measurement, else why none (``unread``: a
    D not settled, SG101 warns; ``unusable``: a value of the file not usable, SG316)."""

    acceptance: Acceptance | None = None
    unread: str | None = None
    unusable: EngineUnread | None = None


def measure(
    deployment: Deployment,
    evidence_raw: dict[str, Any],
    document: Document,
    *,
    base_dir: Path,
    shown_base: str,
    engine_unread: EngineUnread | None,
) -> Measured:
    """The measured AL of ``evidence.metrics`` (none when not given), read at the
    deployment's D (as resolved from the serving config).

    Raises:
        InputError: a metrics file that cannot be read or parsed as its format, a path
            out of the repository, inline data the claims file states wrongly.
    """
    if "metrics" not in evidence_raw:
        return Measured()
    unread = _al_needs_unsettled_d(deployment, evidence_raw, engine_unread)
    if unread is not None:
        return Measured(unread=unread)
    try:
        acceptance = _acceptance(deployment, document, base_dir, shown_base)
    except UnusableMeasurement as exc:
        return Measured(
            unusable=EngineUnread(
                exc.reason, exc.file or document.file, exc.line, exc.column, True,
                "metrics", severity=exc.severity,
            )
        )
    spec = deployment.speculation
    if acceptance.format == "draft-acceptance-rate" and (
        spec.draft_length_is_max or spec.draft_length_moves is not None
    ):
        # AL = 1 + r·D assumes D drafts every step; D is only a maximum
        # (docs/theory.md#edge-cases).
        acceptance = replace(
            acceptance,
            estimate=True,
            note="an estimate: "
            + ("D is a maximum (adaptive drafting)" if spec.draft_length_is_max
               else "D moves during the run")
            + ", AL = 1 + r·D assumes every step drafts D tokens",
        )
    return Measured(acceptance=acceptance)


def _al_needs_unsettled_d(
    deployment: Deployment, evidence_raw: dict[str, Any], engine_unread: EngineUnread | None
) -> str | None:
    """Why ``evidence.metrics`` gives no AL: a format that derives AL from D, with no
    D in its block, the claims file or the serving config, whose D specgate could not
    settle or read (``engine_unread``). Degrade, never stop (issue 24): SG101 warns
    that the AL cannot be derived, and the run goes on. None otherwise."""
    metrics = evidence_raw.get("metrics")
    if (
        engine_unread is None
        or deployment.speculation.draft_length is not None
        or not isinstance(metrics, dict)
        or metrics.get("format") not in _FROM_D
        or "draft_length" in metrics
    ):
        return None
    return (
        f"evidence.metrics ({metrics['format']}) derives AL from D, which specgate does "
        f"not settle from {engine_unread.file} (its finding there says why) and the "
        "claims file does not state"
    )


def _acceptance(
    deployment: Deployment, document: Document, base_dir: Path, shown_base: str
) -> Acceptance:
    from specgate.inputs.metrics.read import MetricsSpec, read_acceptance

    draft_length = deployment.speculation.draft_length
    node = deployment.path("evidence", "metrics")
    spec = MetricsSpec.from_document(
        document, node, draft_length=draft_length, verify_tokens=_verify_tokens(deployment)
    )

    def read() -> Acceptance:
        return read_acceptance(spec, base_dir=base_dir, shown_base=shown_base)

    if spec.path is None:  # inline data: errors and values point at this claims file
        try:
            return read()
        except UnusableMeasurement:
            raise
        except InputError as exc:
            # the claims file's own values, parsed, that give no measurement (a histogram
            # of zero steps, iid-rate with no D anywhere): SG316 fails at them, as SG001
            # does for a value the schema refuses
            raise UnusableMeasurement(
                exc.reason, exc.file, exc.line, exc.column, severity="fail"
            ) from None
    key = (
        "metrics",
        base_dir,
        shown_base,
        repr(sorted((str(k), repr(v)) for k, v in spec.values.items())),
        draft_length,
        spec.verify_tokens,
    )
    return once(key, read)


def _verify_tokens(deployment: Deployment) -> int | None:
    """N_verify when the deployment verifies a tree (more than 1 + D tokens): stated,
    from the engine config, or 1 + Σ ``tree_level_nodes``; ``None`` for a chain."""
    spec = deployment.speculation
    n = spec.verify_tokens
    if n is None and spec.tree_level_nodes:
        n = 1 + sum(spec.tree_level_nodes)
    d = spec.draft_length
    return n if n is not None and d is not None and n > d + 1 else None
