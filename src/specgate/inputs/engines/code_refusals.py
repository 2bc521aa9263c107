"""Refusals a reader raises in code, judged at the releases their source was read at
(docs/engines.md#refusals-and-rewrites, issue 27), as a data check with ``seen_in`` is:
pinned at or after the oldest release read it fails; pinned older it warns; with the
version unknown it fails only when every release the settings allow is at or after it,
else it warns and asks to pin ``speculation.engine_version``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from specgate.inputs.knowledge import EngineKnowledge, Version, format_version
from specgate.inputs.types import EngineIssue


class Refusal(str):
    """The message of a refusal read in the engine's source (a mark :func:`judged`
    reads; any other message is left as it is)."""

    __slots__ = ()


class Unconfirmed(Refusal):
    """A refusal resting on an entry of the engine's data whose source is not confirmed
    (``"confirmed": false``): a warning wherever it applies, never a fail
    (docs/trust.md#what-a-fail-may-rest-on). ``Builder.issue`` lowers it; :func:`judged`
    keeps the mark."""

    __slots__ = ()


def resting_on(message: str, data: EngineKnowledge, *tables: str) -> Refusal:
    """The refusal ``message`` whose condition reads the data tables ``tables``: a
    :class:`Refusal`, or, when one of them is not confirmed in the engine's source, an
    :class:`Unconfirmed` one that says so.

    Example: llama.cpp's unknown ``--spec-type``, read against its ``spec_types`` table
    (``confirmed: false``) → ``Unconfirmed("… (its spec_types table, common/arg.cpp, is
    not confirmed in the engine's source: a warning, not a fail)")``."""
    unsure = [t for t in tables if not data.table_confirmed(t)]
    if not unsure:
        return Refusal(message)
    named = "; ".join(f"its {t} table, {data.table_source(t)}" for t in unsure)
    return Unconfirmed(
        f"{message} ({named}, is not confirmed in the engine's source: a warning, not a fail)"
    )


def judged(
    issues: Sequence[EngineIssue],
    pinned: Version | None,
    low: Version | None,
    since: Version,
    engine: str,
    *,
    since_shown: str | None = None,
) -> tuple[EngineIssue, ...]:
    """``issues`` with each :class:`Refusal` that would fail lowered to a warning where
    it was not read: ``pinned`` below ``since``; unpinned (``pinned`` None) unless the
    lowest release the settings allow (``low``) is at or after ``since``."""
    if pinned is not None and pinned >= since:
        return tuple(issues)
    if pinned is None and low is not None and low >= since:
        return tuple(issues)
    why = (
        "; a warning, not a fail: not confirmed at this release"
        if pinned is not None
        else f"; read in {engine} {since_shown or format_version(since)} on, and the version "
        "run is not "
        "known (another release may behave otherwise): a warning, not a fail; state "
        "speculation.engine_version to pin it"
    )
    return tuple(
        replace(i, message=type(i.message)(i.message + why), severity="warn")
        if isinstance(i.message, Refusal)
        and i.severity in (None, "fail")
        and why not in i.message
        else i
        for i in issues
    )
