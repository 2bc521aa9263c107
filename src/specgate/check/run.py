"""Run the rules over claims files: a file (or standard input) → report records.

This module wires the loader, the schema, the builder, references and the change gate
to :func:`specgate.check.evaluate.evaluate`, which judges each deployment; it holds no
formulas and no formatting. ``CheckOptions`` lives in :mod:`specgate.check.options`
and is importable from here too.
"""

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from specgate.check.evaluate import Locator, evaluate, make_finding
from specgate.check.options import CheckOptions
from specgate.check.report import DeploymentReport, FileReport, RunReport
from specgate.core.concise import concise, join_details
from specgate.core.errors import InputError
from specgate.core.findings import Finding, status_of, worst
from specgate.load.document import Document, NodePath, Span
from specgate.model.deployment import Deployment

if TYPE_CHECKING:
    from pathlib import Path

    from specgate.change.base_policy import BaseGate
    from specgate.change.baseline import BaselineSource, Judge
    from specgate.check.serving_ignores import ServingIgnores

    # Imported where used: `specgate doctor` needs neither configuration files,
    # suppressions nor path checks, and starts faster without them.
    from specgate.project.config import Config, ConfigFinder
    from specgate.project.suppress import InlineIgnores

__all__ = ["CheckOptions", "check_document", "check_file", "check_files", "check_stdin"]

#: Compiled on first use (``re``'s cache): only suppressed findings are placed by it.
_DEPLOYMENT_PATH = r"^deployments\[(\d+)\]"

def _deployment_index(path: NodePath) -> int | None:
    if len(path) >= 2 and path[0] == "deployments" and isinstance(path[1], int):
        return path[1]
    return None


def _check_parsed(
    document: Document,
    options: CheckOptions,
    *,
    keep: Callable[[Finding], bool] | None = None,
    claims_path: "Path | None" = None,
) -> FileReport:
    """Check a parsed claims file; ``keep`` filters findings (suppressions).

    Raises:
        InputError: a referenced file that cannot be resolved or read.
    """
    from pathlib import Path

    from specgate.model.build import build_deployment, without_refused
    from specgate.model.validate import validate

    shown = document.file
    locator = Locator(shown, document)
    file_level: list[Finding] = []
    per_deployment: dict[int, list[Finding]] = {}

    def place(finding: Finding, path: NodePath) -> None:
        index = _deployment_index(path)
        if index is None:
            file_level.append(finding)
        else:
            per_deployment.setdefault(index, []).append(finding)

    if document.empty:
        file_level.append(
            make_finding(
                "SG001",
                "the file is empty: expected version and deployments",
                (),
                (shown, Span(1, 1)),
            )
        )
        return _file_report(shown, file_level, [])

    for duplicate in document.duplicates:
        message = (
            f"key {duplicate.key!r} repeated (first at line {duplicate.first.line}); "
            "engines read the last value, reviewers may read the first"
        )
        place(
            make_finding("SG002", message, duplicate.path, (shown, duplicate.span)), duplicate.path
        )

    refused: list[NodePath] = []
    for violation in validate(document.data):
        refused.append(violation.path)
        pos = document.positions.get(violation.path)
        unknown_key = violation.message.startswith("unknown key")
        span = (
            document.key_span(violation.path)
            if unknown_key and pos
            else document.locate(violation.path)
        )
        place(
            make_finding("SG001", violation.message, violation.path, (shown, span)), violation.path
        )

    data = document.data if isinstance(document.data, dict) else {}
    raw_deployments = data.get("deployments")
    deployments: list[Deployment] = []
    if isinstance(raw_deployments, list):
        names: dict[str, int] = {}
        for index, raw in enumerate(raw_deployments):
            deployment, problems = build_deployment(
                without_refused(raw, index, refused), index, document.scalar_text
            )
            deployments.append(deployment)
            for problem in problems:
                place(
                    make_finding(
                        "SG001", problem.message, problem.path, locator.locate(problem.path)
                    ),
                    problem.path,
                )
            name = raw.get("name") if isinstance(raw, dict) else None
            if isinstance(name, str):
                if name in names:
                    path = ("deployments", index, "name")
                    place(
                        make_finding(
                            "SG003",
                            f"deployment name {name!r} is already used by "
                            f"deployments[{names[name]}]",
                            path,
                            locator.locate(path),
                        ),
                        path,
                    )
                else:
                    names[name] = index

    raws = raw_deployments if isinstance(raw_deployments, list) else []
    _resolve_references(
        deployments,
        raws,
        document,
        per_deployment=per_deployment,
        locator=locator,
        claims_path=claims_path or Path(shown),
    )
    reports = _evaluate_all(
        deployments,
        raws,
        locator,
        options=options,
        per_deployment=per_deployment,
        keep=keep,
        claims_path=claims_path or Path(shown),
        file_level=file_level,
    )
    if keep is not None:
        file_level = [f for f in file_level if keep(f)]
    return _file_report(shown, file_level, reports)


def _resolve_references(
    deployments: list[Deployment],
    raws: list[object],
    document: Document,
    *,
    per_deployment: dict[int, list[Finding]],
    locator: Locator,
    claims_path: "Path",
) -> None:
    """Replace each deployment whose schema is sound by its view with the referenced
    files read (docs/claims-file.md#referenced-files), in place, and record where their values sit.

    Raises:
        InputError: a referenced file that cannot be resolved or read.
    """
    from specgate.model.reads import references_files

    for position, deployment in enumerate(deployments):
        raw = raws[deployment.position]
        blocked = any(
            f.code in ("SG001", "SG002") for f in per_deployment.get(deployment.position, [])
        )
        if blocked or not isinstance(raw, dict) or not references_files(raw):
            continue  # resolving a deployment that references no file leaves it as it is
        from specgate.model.resolve import resolve

        try:
            deployments[position], overrides = resolve(deployment, raw, document, claims_path)
        except (RecursionError, OverflowError, ValueError) as exc:
            raise _referenced_input_error(exc, document, deployment.position) from None
        locator.overrides.update(overrides)
        if deployments[position].inputs is not None:
            # step-time inputs that contradict a referenced file (docs/theory.md#step-time-inputs)
            from specgate.model.step_inputs import problems

            for path, message in problems(deployments[position]):
                found = make_finding("SG001", message, path, locator.locate(path))
                per_deployment.setdefault(deployment.position, []).append(found)


def _evaluate_all(
    deployments: list[Deployment],
    raws: list[object],
    locator: Locator,
    *,
    options: CheckOptions,
    per_deployment: dict[int, list[Finding]],
    keep: Callable[[Finding], bool] | None,
    claims_path: "Path",
    file_level: list[Finding],
) -> list[DeploymentReport]:
    """Judge each deployment; with ``--baseline``, against itself at the base REF
    (deployments of the file at REF found nowhere at the head: SG412 in ``file_level``)."""
    source = options.baseline
    if source is None:
        return [
            evaluate(d, locator, options, blocking=per_deployment.get(d.position, []), keep=keep)
            for d in deployments
        ]
    from specgate.change.baseline import (
        baseline_json,
        head_blobs,
        read_base,
        unreadable_view,
        view_of,
    )
    from specgate.change.match import match_file, vanished_message
    from specgate.rules import baseline as _registers_sg412  # noqa: F401  (SG401–SG412)

    floor = options.min_accept_length
    base_file = read_base(source, claims_path, floor)
    matched = match_file(source, base_file, deployments, floor)
    for name in matched.vanished:
        path = ("deployments",)
        message = vanished_message(source, name)
        file_level.append(make_finding("SG412", message, path, locator.locate(path)))
    reports = []
    for d in deployments:
        view = None
        base, error = matched.found[d.position]
        raw = raws[d.position] if d.position < len(raws) else None
        if base is not None and isinstance(raw, dict):
            view = view_of(source, base, head_blobs(source, raw, claims_path), d)
        elif error is not None:
            view = unreadable_view(source, error)
        blocking = per_deployment.get(d.position, [])
        report = evaluate(d, locator, options, blocking=blocking, keep=keep, baseline=view)
        reports.append(
            report._replace(
                baseline=baseline_json(source, view, d, report.metrics, error),
                base_findings=None if base is None else base.findings,
            )
        )
    return reports


def base_judge(options: CheckOptions) -> "Judge":
    """``--only-new``'s judge of a claims file at the base revision: the rules run on
    its private copy as on the head's file (the run's AL floor and date, every rule
    selected, no baseline of its own, no configuration: what a configuration silences
    is still a finding that was there)."""
    from specgate.change.baseline import BaseFindings

    def judge(document: Document, claims: "Path", floor: float | None) -> BaseFindings:
        at_base = CheckOptions(min_accept_length=floor, today=options.today)
        report = check_document(document, at_base, path=claims)
        by_name: dict[str, tuple[Finding, ...]] = {}
        for d in report.deployments:  # the first of a name, as the base is read
            by_name.setdefault(d.name, (*d.findings, *d.suppressed_findings))
        return BaseFindings(file=(*report.findings, *report.suppressed_findings), by_name=by_name)

    return judge

def _referenced_input_error(exc: BaseException, document: Document, index: int) -> InputError:
    """A referenced file that a reader could not interpret within Python's limits
    (nesting deeper than the recursion limit, an integer over 4,300 digits or out of
    float range) is an input error of that deployment, not an internal error:
    hostile repositories hold such files (docs/trust.md#hostile-repositories)."""
    if isinstance(exc, RecursionError):
        reason = "nesting too deep"
    elif isinstance(exc, OverflowError):
        reason = "a number out of range"
    elif "digits" in str(exc) or "int" in str(exc):
        reason = "an integer too long"
    else:
        raise exc
    span = document.locate(("deployments", index))
    return InputError(
        f"deployments[{index}]: a referenced file holds {reason}; not read",
        document.file,
        span.line if span else None,
        span.column if span else None,
    )


def _file_report(
    shown: str, file_level: list[Finding], reports: list[DeploymentReport]
) -> FileReport:
    findings = tuple(sorted(file_level, key=Finding.sort_key))
    statuses = [r.status for r in reports]
    if any(f.severity == "fail" for f in findings):
        statuses.append("fail")
    return FileReport(
        path=shown,
        status=worst(statuses),
        error=None,
        findings=findings,
        deployments=tuple(reports),
    )


def _suppression_findings(
    document: Document, shown: str
) -> "tuple[list[Finding], InlineIgnores | None]":
    """SG004 for bad directives, and the directives (``None``: the file has none, as
    a file whose text never says ``specgate`` cannot: every directive does)."""
    text = document.text
    if not text or shown.endswith(".json") or "specgate" not in text:
        return [], None
    from specgate.project.suppress import scan

    inline = scan(text)
    found = [
        make_finding(
            "SG004",
            f"ignore[{bad.reference}] {bad.reason}" if bad.reference else f"ignore {bad.reason}",
            (),
            (shown, Span(bad.line, bad.column)),
        )
        for bad in inline.bad
    ]
    return found, inline


#: The findings a directive in the serving file may suppress (check/serving_ignores.py).
_SERVING_CODES = frozenset({"SG312", "SG313", "SG314", "SG315"})


def _serving_reason(
    serving: "list[ServingIgnores]", shown: str, finding: Finding, gate: "Callable[[], BaseGate]"
) -> str | None:
    """Why a directive in the serving file ``finding`` points into suppresses it, or
    None; ``serving`` holds the directives read (made here on first use, so a check
    with no such finding imports nothing more)."""
    if finding.code not in _SERVING_CODES or finding.file == shown:
        return None
    if not serving:
        from specgate.check.serving_ignores import ServingIgnores

        serving.append(ServingIgnores(shown))
    return serving[0].reason(finding, lambda code: gate().inline_allowed(code))


def _error_report(shown: str, exc: InputError) -> FileReport:
    """The report of a file that could not be read, parsed or resolved.

    An error inside a referenced file keeps that file (``error_file``) with its
    line and column, and the message says which claims file points at it.
    """
    elsewhere = exc.file is not None and exc.file != shown
    message = exc.one_line() + (f" (referenced from {shown})" if elsewhere else "")
    return FileReport(
        path=shown,
        status="error",
        error=message,
        findings=(),
        deployments=(),
        error_line=exc.line,
        error_column=exc.column,
        error_file=exc.file if elsewhere else None,
    )


def check_file(
    path: "Path",
    shown: str,
    options: CheckOptions,
    config: "Config | None" = None,
) -> FileReport:
    """Read, parse and check one claims file; a read or parse failure becomes an
    ``error`` file report (its status is ``error``).

    Args:
        path: the file on disk; ``shown``: its path as reported.
        options: run-wide options (the CLI's, which beat the configuration's).
        config: the configuration in force for this file.
    """
    from specgate.load.read import load_document

    try:
        document = load_document(path, shown)
    except InputError as exc:
        return _error_report(shown, exc)
    try:
        return check_document(document, options, config=config, path=path)
    except InputError as exc:
        return _error_report(shown, exc)


def _gate_maker(
    source: "BaselineSource | None", config: "Config", claims: "Path"
) -> "Callable[[], BaseGate]":
    """The base revision's say on silencing (:class:`~specgate.change.base_policy.BaseGate`),
    made when a finding is first silenced: a clean file never imports it."""
    made: list[BaseGate] = []

    def gate() -> "BaseGate":
        if not made:
            from specgate.change.base_policy import BaseGate

            made.append(BaseGate(source, config, claims))
        return made[0]

    return gate


def check_document(
    document: Document,
    options: CheckOptions,
    *,
    config: "Config | None" = None,
    path: "Path | None" = None,
) -> FileReport:
    """Check a parsed claims file under ``config``, with its inline suppressions.

    A finding that a rule not selected raises is dropped; one that ``ignore``,
    ``per-file-ignores`` or an inline directive silences is kept in the report,
    marked suppressed with the reason, and changes no status. An inline directive
    that silences nothing is SG005.

    Args:
        document: the parsed file (``document.text`` holds its source for comments).
        options: run-wide options (the CLI's, which beat the configuration's).
        config: the configuration in force for this file.
        path: the file on disk (for ``per-file-ignores``); defaults to ``document.file``.
    """
    from pathlib import Path

    from specgate.project.config import DEFAULT, UNIGNORABLE

    config = config or DEFAULT
    shown = document.file
    on_disk = path if path is not None else Path(shown)
    extra, inline = _suppression_findings(document, shown)
    serving: list[ServingIgnores] = []  # made when a finding points into a serving file
    select = options.select if options.select is not None else config.select
    ignored = config.ignored_for(on_disk) | options.ignore
    suppressed: list[Finding] = []
    used: set[tuple[int, str]] = set()

    def why(finding: Finding) -> str | None:
        """The reason ``finding`` is suppressed, or ``None`` when it stands."""
        if finding.code in UNIGNORABLE:
            return None
        if finding.code in options.ignore:
            return "ignored on the command line (--ignore)"
        if finding.code in ignored:
            if not gate().ignore_allowed(finding.code):
                refused[(finding.code, finding.line)] = (
                    f"`ignore` in {config.path} does not silence {finding.code} at the base "
                    "revision"
                )
                return None
            return f"ignored in the configuration ({config.path or '[tool.specgate]'})"
        if inline is not None and finding.file == shown:
            directive = inline.match(finding.code, finding.line)
            if directive is not None:
                used.add((directive.line, directive.code))
                if not gate().inline_allowed(finding.code):
                    refused[(finding.code, finding.line)] = (
                        f"the ignore[{finding.code}] on this line is not in the claims file "
                        "at the base revision"
                    )
                    return None
                return "inline: " + (directive.reason or "no reason given")
        # SG312-SG315 sit in the serving file: accepted there (check/serving_ignores.py)
        return _serving_reason(serving, shown, finding, gate)

    gate = _gate_maker(options.baseline, config, on_disk)
    refused: dict[tuple[str, int | None], str] = {}

    def keep(finding: Finding) -> bool:
        if select is not None and finding.code not in select and finding.code not in UNIGNORABLE:
            if options.select is not None or gate().deselect_allowed(finding.code):
                return False
            refused[(finding.code, finding.line)] = (
                f"`select` in {config.path} leaves {finding.code} out, which it did not at the "
                "base revision"
            )
        reason = why(finding)
        if reason is not None:
            suppressed.append(finding._replace(suppressed=reason))
        return reason is None

    floor = options.min_accept_length
    if floor is None:
        floor = config.min_accept_length
    here = options
    if floor is not options.min_accept_length:
        here = options._replace(min_accept_length=floor)
    report = _check_parsed(document, here, keep=keep, claims_path=on_disk)
    unused = [
        make_finding(
            "SG005",
            f"ignore[{d.code}] suppresses nothing on line {d.target}; remove it "
            "(a stale suppression hides the next finding there)",
            (),
            (shown, Span(d.line, d.column)),
        )
        for d in (inline.directives if inline is not None else ())
        if (d.line, d.code) not in used
    ]
    extra = [f for f in (*extra, *unused, *(serving[0].bad if serving else ())) if keep(f)]
    report = _with_suppressed(report, suppressed)
    if refused:
        report = _explain_refused(report, refused, shown)
    if extra:
        findings = tuple(sorted((*report.findings, *extra), key=Finding.sort_key))
        statuses = [d.status for d in report.deployments] + [status_of(list(findings))]
        report = report._replace(findings=findings, status=worst(statuses))
    return _marked(report, here, on_disk)


def _marked(report: FileReport, options: CheckOptions, claims: "Path") -> FileReport:
    """With ``--only-new``, ``report`` with each finding marked against the base
    revision (:mod:`specgate.check.only_new`); else ``report``."""
    if not options.only_new or options.baseline is None:
        return report
    from specgate.change.baseline import read_base
    from specgate.check.only_new import mark

    base_file = read_base(options.baseline, claims, options.min_accept_length)
    return mark(report, None if base_file is None else base_file.findings)


def _explain_refused(
    report: FileReport, refused: dict[tuple[str, int | None], str], shown: str
) -> FileReport:
    """Say on each baseline finding that this change tried to silence (an inline
    suppression, an ``ignore`` or a ``select`` the base revision did not have) why
    it still stands."""

    def told(finding: Finding) -> Finding:
        why = refused.get((finding.code, finding.line))
        if finding.file != shown or why is None:
            return finding
        # past make_finding: the message guard again (core/concise.py); the why, which
        # names a file, opens the details, so the refusal itself stays in the message
        message, details = concise(
            f"{finding.message} (not suppressed: a change cannot silence its own baseline "
            "gate)",
            join_details(f"not suppressed: {why}", finding.details),
        )
        return finding._replace(message=message, details=details)

    deployments = tuple(
        d._replace(findings=tuple(told(f) for f in d.findings)) for d in report.deployments
    )
    return report._replace(
        findings=tuple(told(f) for f in report.findings), deployments=deployments
    )


def _with_suppressed(report: FileReport, suppressed: list[Finding]) -> FileReport:
    """``report`` holding each suppressed finding with its deployment (or the file)."""
    if not suppressed and not report.suppressed and not report.suppressed_findings:
        return report  # nothing to add or to clear
    by_deployment: dict[int, list[Finding]] = {}
    file_level: list[Finding] = []
    for finding in suppressed:
        match = re.match(_DEPLOYMENT_PATH, finding.path)
        index = int(match.group(1)) if match else None
        if index is not None and index < len(report.deployments):
            by_deployment.setdefault(index, []).append(finding)
        else:
            file_level.append(finding)
    deployments = tuple(
        d._replace(suppressed_findings=tuple(sorted(by_deployment[i], key=Finding.sort_key)))
        if i in by_deployment
        else d
        for i, d in enumerate(report.deployments)
    )
    return report._replace(
        deployments=deployments,
        suppressed=len(suppressed),
        suppressed_findings=tuple(sorted(file_level, key=Finding.sort_key)),
    )


def check_stdin(
    raw: bytes, name: str | None, options: CheckOptions, finder: "ConfigFinder"
) -> FileReport:
    """Check a claims file read from standard input.

    Args:
        raw: the bytes read (at most the size limit plus one).
        name: ``--stdin-filename``: picks JSON or YAML by suffix, is the name shown,
            finds the configuration and is the base of referenced files; ``None``
            shows ``-`` and resolves from the current folder.
    """
    from pathlib import Path

    from specgate.core.paths import PathProblem, resolve, shown_path
    from specgate.load.read import decode, parse_text

    on_disk = Path(name) if name else Path.cwd() / "-"
    shown = shown_path(on_disk) if name else "-"
    try:
        text = decode(raw, shown)
        document = parse_text(text, shown, json_syntax=on_disk.suffix.lower() == ".json")
    except InputError as exc:
        return _error_report(shown, exc)
    try:
        config = finder.for_folder(resolve(on_disk.absolute().parent))
    except PathProblem as problem:
        return _error_report(shown, InputError(str(problem), shown))
    try:
        return check_document(document, options, config=config, path=on_disk)
    except InputError as exc:
        return _error_report(shown, exc)


def _config_findings(config: "Config") -> list[Finding]:
    assert config.path is not None
    return [
        make_finding(
            "SG004",
            f"{reference!r} in [tool.specgate] names no rule",
            (),
            (config.path, Span(line, 1)),
        )
        for reference, line in config.unknown_rules
    ]


def check_files(
    files: "list[tuple[Path, str]]",
    options: CheckOptions,
    finder: "ConfigFinder | None" = None,
) -> RunReport:
    """Check every file (already discovered and sorted); the run's status is the worst.

    Configuration problems (SG004 for unknown rule references) are reported once,
    with the first claims file that uses that configuration.
    """
    from specgate.model.reads import shared_reads
    from specgate.project.config import ConfigFinder

    finder = finder or ConfigFinder()
    with shared_reads():
        return _check_files(files, options, finder)


def _check_files(
    files: "list[tuple[Path, str]]", options: CheckOptions, finder: "ConfigFinder"
) -> RunReport:
    from specgate.core.paths import PathProblem, confined

    reported: set[str] = set()
    reports: list[FileReport] = []
    for path, shown in files:
        try:
            # The file read is the one confinement checked (symlinks resolved).
            target = confined(path)
        except PathProblem as problem:
            reports.append(_error_report(shown, InputError(str(problem), shown)))
            continue
        config = finder.for_file(target)
        report = check_file(target, shown, options, config)
        if config.path is not None and config.unknown_rules and config.path not in reported:
            reported.add(config.path)
            if report.error is None:
                findings = tuple(
                    sorted((*report.findings, *_config_findings(config)), key=Finding.sort_key)
                )
                statuses = [d.status for d in report.deployments] + [status_of(list(findings))]
                report = report._replace(findings=findings, status=worst(statuses))
        reports.append(report)
    return RunReport(
        status=worst([r.status for r in reports]),
        files=tuple(reports),
        only_new=options.only_new and options.baseline is not None,
    )
