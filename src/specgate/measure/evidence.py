"""``specgate measure``: turn a benchmark run into an ``evidence`` block
(README.md#record-evidence).

Three sources of the measurement:

- ``--metrics-url URL -- CMD …``: scrape the engine's Prometheus endpoint, run the
  user's benchmark command, scrape again; AL, the per-position profile and the
  verification steps come from the counter deltas (vLLM's ``vllm:spec_decode_*``
  counters, read by :func:`specgate.inputs.metrics.vllm_prometheus.read_prometheus`).
- ``--before FILE --after FILE``: the same from two saved scrapes.
- ``--from FILE --metrics-format F``: any file format of docs/engines.md#metrics-formats.

The result is printed as YAML (one top-level key, ``evidence``) or, with
``--write CLAIMS --deployment NAME``, written into that deployment of the claims
file (see :mod:`specgate.measure.writer`). Any failure — a network error, a body
that is not Prometheus text, counters that went backwards, no spec-decode
counters, a failing command — is one line and exit 2, and nothing is written.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from specgate.core.errors import InputError, UsageError
from specgate.inputs.types import Acceptance


@dataclass(frozen=True)
class Measurement:
    """A measured AL and how to point at it: ``metrics`` is the ``evidence.metrics``
    block to record (a file pointer, an inline profile, or ``None``)."""

    acceptance: Acceptance
    metrics: dict[str, Any] | None


def check_scrape(text: str, shown: str, labels: dict[str, str]) -> None:
    """Check one scrape before anything is run on it: spec-decode counters present,
    ``labels`` matching exactly one model (the scrape before a benchmark, so a
    wrong URL or label costs no benchmark run).

    Raises:
        InputError: not Prometheus text; no spec-decode counters (naming ``--from``
            for other engines' formats); no series or several models' series.
    """
    from specgate.inputs.metrics.vllm_prometheus import check_counters

    try:
        check_counters(text, shown, labels)
    except InputError as exc:
        raise _with_hint(exc) from None


def _with_hint(exc: InputError) -> InputError:
    if "no vLLM spec-decode counters" in str(exc):
        return InputError(
            f"{exc.one_line()}; for another engine's output use --from FILE --metrics-format FORMAT"
        )
    return exc


def from_scrapes(
    before: tuple[str, str],
    after: tuple[str, str],
    labels: dict[str, str],
    draft_length: int | None = None,
) -> Acceptance:
    """AL from two scrapes ``(text, shown)`` of vLLM's counters (``draft_length``: k
    for vLLM V0 counters, which do not state it).

    Raises:
        InputError: not Prometheus text, counters that fell (a restart), no
            spec-decode counters (naming ``--from`` for other engines' formats),
            impossible counters.
    """
    from specgate.inputs.metrics.vllm_prometheus import read_prometheus

    check_scrape(*before, labels)
    check_scrape(*after, labels)
    try:
        return read_prometheus(
            after[0], after[1], baseline=before, labels=labels, draft_length=draft_length
        )
    except InputError as exc:
        raise _with_hint(exc) from None


def confine(path: Path, flag: str, *, must_exist: bool = True) -> Path:
    """The real path ``path`` (given with ``flag``) leads to, inside the repository
    holding it as written (:func:`specgate.core.paths.confined`, the check every
    subcommand applies): a scrape, metrics file, claims file or save folder that is a
    symlink out of the repository is neither read (so never quoted in an error) nor
    written through.

    Raises:
        InputError: the path leads out, loops, is too long, or (``must_exist``) is
            missing; named with ``flag``.
    """
    from specgate.core.paths import PathProblem, confined

    try:
        return confined(path, must_exist=must_exist)
    except PathProblem as problem:
        reason = "no such file" if str(problem) == "no such file" else str(problem)
        raise InputError(f"{flag} {path}: {reason}") from None


def from_file(
    path: Path,
    fmt: str,
    draft_length: int | None = None,
    labels: dict[str, str] | None = None,
) -> Acceptance:
    """AL from one file in a docs/engines.md#metrics-formats file format (``draft_length``: k for
    data that does not state it, e.g. vLLM log lines without per-position rates; ``labels``:
    the series of a shared Prometheus scrape, as ``evidence.metrics.labels``).

    Raises:
        InputError: a missing, unreadable or malformed file (named as given), or a
            format that is not a file format.
    """
    from specgate.inputs.metrics.read import FILE_FORMATS, MetricsSpec, read_acceptance

    if fmt not in FILE_FORMATS:
        raise UsageError(
            f"--metrics-format {fmt!r}: not a file format "
            f"(one of {', '.join(sorted(FILE_FORMATS))})"
        )
    target = confine(path, "--from")  # an in-repository symlink is read where it leads
    if not target.is_file():
        what = "a folder" if target.is_dir() else "not a regular file"
        raise InputError(f"--from {path}: {what}")
    try:
        acceptance = read_acceptance(
            MetricsSpec(
                format=fmt, path=target.name, draft_length=draft_length, labels=labels or {}
            ),
            base_dir=target.parent,
            shown_base="",
            root=target.parent,
        )
        return replace(acceptance, path=path.as_posix())
    except InputError as exc:
        if exc.file == target.name:  # named as the user gave it, not where a link leads
            exc = InputError(exc.reason, path.as_posix(), exc.line, exc.column)
        if "D is needed" in str(exc) and draft_length is None:
            raise InputError(f"{exc.one_line()}; give it with --draft-length D") from None
        raise exc from None


def plausible(
    acceptance: Acceptance, draft_length: int | None = None, given: str = "--draft-length"
) -> None:
    """Refuse a measurement that ``specgate check`` would fail as impossible, with the
    very test check applies (:func:`specgate.inputs.metrics.consistency.impossible`:
    SG103's AL range, SG305's profile and accepted-past-emitted cross-check, accepted
    above proposed drafts, a step count beyond 2^53). D is what the data states, else
    ``draft_length`` (``--draft-length``, else the D the ``--deployment`` serves).

    Raises:
        InputError: one line naming the source and the first impossible number.
    """
    from specgate.inputs.metrics.consistency import impossible

    problems = impossible(acceptance, draft_length, given)
    if problems:
        raise InputError(problems[0])


def undrafted_note(acceptance: Acceptance) -> str | None:
    """The share of generated tokens outside drafted steps and the all-steps AL bound
    (:func:`specgate.inputs.metrics.consistency.undrafted_share`), when the data
    states the generated tokens (vLLM's ``vllm:generation_tokens_total``)."""
    from specgate.inputs.metrics.consistency import undrafted_share

    share = undrafted_share(acceptance)
    return None if share is None else share.message()


def draft_length_mismatch(
    acceptance: Acceptance, given: int | None, served: int | None, deployment: str | None
) -> str | None:
    """Why the measurement cannot be recorded as evidence of ``deployment``'s config:
    the D it was measured at (what the data states — draft tokens per draft — else
    ``--draft-length``) differs from the D the deployment serves. ``None`` when
    they agree or either is unknown.

    Raises:
        UsageError: ``--draft-length`` contradicts the D the data states.
    """
    stated = acceptance.draft_length
    if stated is not None and given is not None and stated != given:
        raise UsageError(
            f"specgate measure: {acceptance.path or 'the metrics'} states D = {stated} "
            f"(draft tokens per draft), not --draft-length {given}"
        )
    measured = stated if stated is not None else given
    if measured is None or served is None or measured == served or deployment is None:
        return None
    return (
        f"AL was measured at D = {measured} but deployment {deployment!r} serves D = "
        f"{served}: its config_digest would vouch for a config that was not measured"
    )


def outside_repository(metrics: dict[str, Any] | None, claims: Path) -> str | None:
    """The first ``metrics`` pointer (``path``, ``baseline_path``; relative to the
    claims file) that resolves outside the repository holding ``claims``, which
    ``specgate check`` would refuse to read; else ``None``."""
    from specgate.core.paths import PathEscape, PathProblem, confined, repository_top

    if not metrics:
        return None
    try:
        top = repository_top(claims.parent if str(claims.parent) else Path("."))
    except PathProblem:
        return None
    for key in ("path", "baseline_path"):
        pointer = metrics.get(key)
        if isinstance(pointer, str):
            try:
                confined(claims.parent / pointer, top=top, must_exist=False)
            except PathEscape:
                return pointer
            except PathProblem:
                continue
    return None


def inline_profile(acceptance: Acceptance) -> dict[str, Any] | None:
    """``{format: per-position, marginal: […]}`` when the counters gave a full profile."""
    if not acceptance.marginal:
        return None
    return {"format": "per-position", "marginal": [round(m, 4) for m in acceptance.marginal]}


def evidence_block(
    measurement: Measurement,
    *,
    today: datetime.date,
    concurrency: int | None = None,
    digest: str | None = None,
    engine: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``evidence`` mapping to print or write: AL (4 decimals), ``metrics`` when
    known, ``provenance`` with ``measured_at``, ``steps``, ``concurrency``,
    ``config_digest`` and what the engine said about itself (``engine``,
    ``engine_version``, ``served_model``, ``max_model_len``) when known."""
    acceptance = measurement.acceptance
    block: dict[str, Any] = {"accept_length": round(acceptance.accept_length, 4)}
    if measurement.metrics is not None:
        block["metrics"] = measurement.metrics
    provenance: dict[str, Any] = {"measured_at": today.isoformat()}
    if acceptance.steps is not None:
        provenance["steps"] = acceptance.steps
    if concurrency is not None:
        provenance["concurrency"] = concurrency
    if digest is not None:
        provenance["config_digest"] = digest
    provenance.update(engine or {})
    block["provenance"] = provenance
    return block


def render(block: dict[str, Any]) -> str:
    """The printed YAML: a mapping whose only top-level key is ``evidence``.

    A string holding ``##[`` (an engine's ``/version`` answer, a dataset name) is
    written double-quoted and unfolded, its ``[`` as ``\\x5b``, which YAML reads back
    as ``[``: no printed line holds a legacy workflow command
    (:func:`~specgate.core.workflow_text.defuse`)."""
    import yaml

    from specgate.core.workflow_text import LEGACY_PREFIX, defuse

    class _Dumper(yaml.SafeDumper):
        """Mappings in block style, lists of numbers in flow style."""

    def _list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
        return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)

    def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
        style = '"' if LEGACY_PREFIX in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    _Dumper.add_representer(list, _list)
    _Dumper.add_representer(str, _str)
    text = yaml.dump(
        {"evidence": block},
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=2**31 - 1,
    )
    # Every ``##[`` stands inside a double-quoted scalar (keys are specgate's own).
    return defuse(text, "\\x5b")


def relative_to(path: Path, folder: Path) -> str:
    """``path`` relative to ``folder`` with ``/`` (for a ``metrics`` pointer)."""
    return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()


def save_scrapes(folder: Path, before: str, after: str, stamp: str) -> tuple[Path, Path]:
    """Write the two scrapes into ``folder`` (created); returns (before, after) paths.

    Raises:
        UsageError: the folder or files cannot be written.
    """
    try:
        real = confine(folder, "--save-dir", must_exist=False)
        real.mkdir(parents=True, exist_ok=True)
        real = confine(folder, "--save-dir")  # created: no symlink swapped in on the way
        first = real / f"metrics-{stamp}-before.prom"
        second = real / f"metrics-{stamp}-after.prom"
        for path, text in ((first, before), (second, after)):
            # a new file: a link planted under this name is refused, not followed
            with open(path, "x", encoding="utf-8", newline="\n") as out:
                out.write(text)
    except InputError as exc:
        raise UsageError(exc.one_line()) from None
    except OSError as exc:
        raise UsageError(f"--save-dir {folder}: {exc.strerror or exc}") from None
    return first, second
