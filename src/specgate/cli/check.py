"""``specgate check``: its flags, the files it selects, the run, and every channel its
report goes to (output, SARIF file, job summary, step outputs, standard error)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from specgate.cli.args import RawFormatter, iso_date, positive_float, today_from, web_address
from specgate.cli.commands import COMMANDS
from specgate.cli.output import (
    EXIT_OK,
    FAIL_ON,
    append,
    append_summary,
    exit_for,
    repo_paths,
    say,
    use_colour,
    write_file,
)
from specgate.core.errors import SpecgateError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from specgate.change.baseline import BaselineSource
    from specgate.change.staged import IndexOverlay
    from specgate.check.report import FileReport, RunReport
    from specgate.check.run import CheckOptions
    from specgate.cli.args import Parser
    from specgate.project.config import Config, ConfigFinder

_CHECK_EPILOG = """\
examples:
  specgate check                          search the current folder for claims files
  specgate check deploy/chat.specgate.yaml --format json
  specgate check . --strict               fail on warnings and infos too
  specgate check . --format github        annotations + job summary in GitHub Actions

exit codes: 0 clean, 1 findings reach --fail-on, 2 usage or input error, 3 internal error
"""


def add_parser(sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
    """``check``'s parser; its options only when ``full``."""
    check = sub.add_parser(
        "check",
        help=COMMANDS["check"][1],
        description="Check claims files against the theory and report findings.",
        epilog=_CHECK_EPILOG,
        formatter_class=RawFormatter,
    )
    if full:
        _check_arguments(check)


def _check_arguments(check: argparse.ArgumentParser) -> None:
    from specgate.reporters.formats import FORMATS

    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="claims files or folders to search (default: the current folder)",
    )
    check.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=tuple(FORMATS),
        default="text",
        help="output format (default: text); --output-format is the same option, as in ruff",
    )
    check.add_argument(
        "--sarif-file",
        metavar="FILE",
        help="also write the SARIF report to FILE in the same run (the Action uses it with "
        "--format github: one check gives annotations and SARIF)",
    )
    check.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="the name of the claims file read from standard input (PATH '-'): it picks "
        "JSON or YAML by suffix, names the file in reports, and referenced files are "
        "resolved from its folder",
    )
    check.add_argument(
        "--select",
        action="append",
        metavar="RULES",
        help="report only these rules (codes, names or code prefixes such as SG1, comma-"
        "separated; replaces [tool.specgate] select)",
    )
    check.add_argument(
        "--ignore",
        action="append",
        metavar="RULES",
        help="suppress these rules (comma-separated; added to [tool.specgate] ignore): their "
        "findings change no status and stay in JSON, SARIF and the summary, marked suppressed",
    )
    check.add_argument(
        "-q",
        "--quiet",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="text format: print findings and errors only (no metrics, next actions or "
        "status line; the pre-commit hook's default, --no-quiet for the whole report)",
    )
    check.add_argument(
        "--statistics",
        action="store_true",
        help="print how many findings each rule raised instead of the findings",
    )
    check.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE instead of standard output (-o as in ruff)",
    )
    check.add_argument(
        "--summary",
        metavar="FILE",
        help="append the Markdown job summary to FILE "
        "(default with --format github: $GITHUB_STEP_SUMMARY when set)",
    )
    check.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default=None,
        help="exit 1 when the run's status reaches this level "
        "(default: [tool.specgate] fail-on, else fail)",
    )
    check.add_argument("--strict", action="store_true", help="same as --fail-on actionable")
    check.add_argument(
        "--min-accept-length",
        type=positive_float(1.0),
        metavar="AL",
        help="AL floor for every deployment, overriding policy.min_accept_length",
    )
    check.add_argument(
        "--baseline",
        metavar="REF",
        help="compare every deployment with itself at git revision REF (AL regression, "
        "claims raised without evidence, evidence stale after a config change)",
    )
    check.add_argument(
        "--only-new",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --baseline (or --staged): mark every finding new, unchanged or updated "
        "against REF; unchanged ones are still reported but change no status or exit code "
        "(default: [tool.specgate] only-new, else off)",
    )
    check.add_argument(
        "--today",
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="the UTC date evidence age is judged against (default: $SOURCE_DATE_EPOCH, "
        "else the clock)",
    )
    changes = check.add_mutually_exclusive_group()
    changes.add_argument(
        "--changed",
        nargs="*",
        metavar="FILE",
        help="check the claims files among FILEs and every claims file of the repository "
        "that references one of them (serving, model or metrics files); "
        "other files are ignored",
    )
    changes.add_argument(
        "--changed-since",
        metavar="REF",
        help="as --changed, for the files `git diff --name-only REF` lists",
    )
    changes.add_argument(
        "--staged",
        action="store_true",
        help="as --changed, for the files a pre-commit run covers, asked from git (the "
        "pre-commit hook's mode; no file names on the command line): the files changed "
        "between $PRE_COMMIT_FROM_REF and $PRE_COMMIT_TO_REF when set, else the staged "
        "files, else (nothing staged) every tracked claims file",
    )
    check.add_argument(
        "--verbose",
        action="store_true",
        help="text format: print each finding's details (formulas, sources, version "
        "reasoning) under it; with --changed, --changed-since or --staged: also name the "
        "files ignored and the claims files skipped",
    )
    check.add_argument(
        "--docs-url",
        type=web_address,
        metavar="URL",
        help="SARIF: the address of specgate's docs/rules.md, each rule's helpUri is "
        "URL#sgNNN-name (default: [tool.specgate] docs-url, else inside the GitHub Action "
        "the Action's own docs/rules.md, else none)",
    )
    check.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE (a pyproject.toml with [tool.specgate], or a TOML file "
        "holding those keys) instead of the nearest pyproject.toml",
    )


def _summary_path(args: argparse.Namespace) -> str | None:
    """Where the job summary goes: ``--summary``, else ``$GITHUB_STEP_SUMMARY`` in
    github format, else nowhere."""
    path: str | None = args.summary
    if path is None and args.format == "github":
        path = os.environ.get("GITHUB_STEP_SUMMARY") or None
    return path or None


def _render(
    fmt: str, args: argparse.Namespace, run: RunReport, out: TextIO, summary_written: bool
) -> str:
    """The report in format ``fmt`` (no I/O)."""
    if args.statistics:
        from specgate.reporters import statistics

        return statistics.render(run, json_format=fmt == "json")
    from specgate.reporters.formats import FORMATS, RenderOptions

    docs_url = None
    if fmt == "sarif":
        from specgate.rules.docs import docs_base_url

        docs_url = docs_base_url(args.docs_url)
    options = RenderOptions(
        repo_paths=lambda: repo_paths(run),
        colour=fmt == "text" and args.output is None and use_colour(out),
        quiet=args.quiet,
        docs_url=docs_url,
        summary_written=summary_written,
        verbose=args.verbose,
    )
    return FORMATS[fmt](run, options)


def _rule_set(values: list[str] | None, option: str) -> frozenset[str] | None:
    """Codes named by ``--select``/``--ignore`` values (comma-separated codes, names
    or code prefixes).

    Raises:
        UsageError: a reference that names no rule (with did-you-mean); a --select naming
            no rule at all.
    """
    if values is None:
        return None
    from specgate.project.config import matching_codes, rule_hint

    codes: set[str] = set()
    for value in values:
        for reference in (part.strip() for part in value.split(",")):
            if not reference:
                continue
            matched = matching_codes(reference)
            if not matched:
                raise UsageError(
                    f"specgate check: {option} {reference!r} names no rule{rule_hint(reference)}"
                )
            codes |= matched
    if option == "--select" and not codes:
        raise UsageError(
            "specgate check: --select names no rule: it would switch every rule off"
        )
    return frozenset(codes)


def _read_stdin(
    args: argparse.Namespace, options: CheckOptions, finder: ConfigFinder
) -> FileReport:
    """Check the claims file given on standard input (PATH ``-``)."""
    from specgate.check.run import check_stdin
    from specgate.load.read import MAX_BYTES

    raw = sys.stdin.buffer.read(MAX_BYTES + 1)
    return check_stdin(raw, args.stdin_filename, options, finder)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate check``: in github format an error that stops the run still reaches the
    pull request (:func:`_report_usage_error`)."""
    try:
        return _check(args, out)
    except SpecgateError as exc:
        if args.format == "github":
            _report_usage_error(str(exc), out, _summary_path(args))
        raise


def _report_usage_error(message: str, out: TextIO, summary_path: str | None) -> None:
    """In github format a usage or input error that stops the run still reaches the
    pull request: an ``::error`` annotation with its cause, ``status=error`` in the
    step outputs and a line in the job summary."""
    from specgate.reporters.safe_text import visible
    from specgate.reporters.summary import md
    from specgate.reporters.workflow_commands import annotation

    out.write(annotation("error", visible(message), title="specgate (input error)") + "\n")
    outputs = os.environ.get("GITHUB_OUTPUT")
    if outputs:
        append(outputs, "status=error\n")
    if summary_path:
        append(summary_path, f"## ⛔ specgate: error\n\n{md(message)}\n")


def _check_options(args: argparse.Namespace, config: Config) -> CheckOptions:
    """The run-wide options ``check``'s flags set.

    Raises:
        UsageError: a bad ``--today``/``SOURCE_DATE_EPOCH``, ``--select``/``--ignore``
            or ``--baseline`` (not a commit, no repository); ``--only-new`` without a
            baseline.
    """
    from pathlib import Path

    from specgate.check.run import CheckOptions

    baseline = None
    if args.baseline is not None:
        from specgate.change.baseline import open_baseline

        baseline = open_baseline(args.baseline, Path.cwd())
    elif args.staged:
        baseline = _staged_base(Path.cwd())
    today = today_from(args)
    only_new = _only_new(args, baseline, config)
    if only_new and baseline is not None:
        from dataclasses import replace

        from specgate.check.run import base_judge

        baseline = replace(baseline, judge=base_judge(CheckOptions(today=today)))
    return CheckOptions(
        min_accept_length=args.min_accept_length,
        today=today,
        baseline=baseline,
        select=_rule_set(args.select, "--select"),
        ignore=_rule_set(args.ignore, "--ignore") or frozenset(),
        only_new=only_new,
    )


def _only_new(args: argparse.Namespace, baseline: BaselineSource | None, config: Config) -> bool:
    """Whether the run marks findings against the base revision: ``--only-new`` /
    ``--no-only-new``, else ``only-new`` of the configuration at the base revision (a
    change cannot set its own gate, README "Only new findings"), which without a
    baseline has no effect.

    Raises:
        UsageError: ``--only-new`` without ``--baseline`` (or ``--staged``'s base).
    """
    if args.only_new is not None:
        if args.only_new and baseline is None:
            raise UsageError(
                "specgate check: --only-new needs --baseline REF (the revision whose "
                "findings are not new), or --staged"
            )
        return bool(args.only_new)
    if baseline is None:
        return False
    from specgate.change.baseline import base_config

    return base_config(baseline, config).only_new is True


def _staged_base(cwd: Path) -> BaselineSource | None:
    """``--staged`` compares with the revision the change starts from, as
    ``--baseline`` would: ``PRE_COMMIT_FROM_REF`` when pre-commit sets it (pre-push),
    else ``HEAD`` (the work tree holds what is staged). ``None`` when there is none yet
    (a first commit) or no repository (``--staged`` then says so itself): an AL kept
    over a change of D is then known to be the base's (SG403), and the fails use its
    bound at the new D."""
    from specgate.change.baseline import open_baseline
    from specgate.change.staged import FROM_REF, TO_REF

    ref = os.environ.get(FROM_REF, "") if os.environ.get(TO_REF, "") else ""
    try:
        return open_baseline(ref or "HEAD", cwd)
    except UsageError:
        return None


def _index_overlay(args: argparse.Namespace) -> IndexOverlay | None:
    """``--staged`` at a commit (no ``PRE_COMMIT_*_REF``): the index, read where the work
    tree differs from it (docs/change-gate.md#staged); ``None`` otherwise, or when the
    work tree holds what is staged."""
    if not args.staged:
        return None  # a plain check imports nothing of --staged (tests/test_imports.py)
    from specgate.change.staged import FROM_REF, TO_REF

    if os.environ.get(FROM_REF) or os.environ.get(TO_REF):
        return None
    from pathlib import Path

    from specgate.change.staged import index_overlay

    overlay = index_overlay(Path.cwd())
    return overlay if overlay is not None and overlay.differs else None


def _distinct_outputs(named: dict[str, str | None]) -> None:
    """Each output file at most once: two reports written to one file would leave one.

    Raises:
        UsageError: two flags name the same file (after following symlinks).
    """
    seen: dict[str, str] = {}
    for flag, path in named.items():
        if not path:
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise UsageError(
                f"specgate check: {seen[key]} and {flag} name the same file ({path}); "
                "one report would replace the other"
            )
        seen[key] = flag


def _check(args: argparse.Namespace, out: TextIO) -> int:
    """``check``; under ``--staged`` at a commit, every file is read as staged (the
    configuration, the claims files, what they reference: docs/change-gate.md#staged)."""
    staged = _index_overlay(args)
    if staged is None:
        return _check_run(args, out, None)
    from specgate.core.revision_tree import overlaying

    try:
        with overlaying(staged):
            return _check_run(args, out, staged)
    finally:
        staged.close()


def _check_run(args: argparse.Namespace, out: TextIO, staged: IndexOverlay | None) -> int:
    from pathlib import Path

    from specgate.check.report import RunReport as Run
    from specgate.check.run import check_files
    from specgate.core.findings import worst
    from specgate.project.config import ConfigFinder, load_config

    if args.strict and args.fail_on not in (None, "actionable"):
        raise UsageError("specgate check: --strict conflicts with --fail-on " + args.fail_on)
    _distinct_outputs(
        {"--output": args.output, "--sarif-file": args.sarif_file, "--summary": args.summary}
    )
    paths = list(args.paths)
    use_stdin = "-" in paths
    if args.stdin_filename is not None and not use_stdin:
        raise UsageError("specgate check: --stdin-filename needs the PATH '-' (standard input)")
    if paths.count("-") > 1:
        raise UsageError("specgate check: standard input ('-') can be given once")
    explicit = None
    if args.config:
        explicit = load_config(Path(args.config), args.config, explicit=True)
    finder = ConfigFinder(explicit)
    run_config = explicit or finder.for_folder(Path.cwd().resolve())
    args.docs_url = args.docs_url or run_config.docs_url
    fail_on = "actionable" if args.strict else (args.fail_on or run_config.fail_on or "fail")
    options = _check_options(args, run_config)
    baseline = options.baseline
    changed = args.changed is not None or args.changed_since is not None or args.staged
    hidden: list[str] = []
    if staged is not None and baseline is not None:
        baseline.head_hashes.update(staged.blob_ids())  # the head's evidence: as staged
    files = _selected_files(args, paths, finder, hidden)
    if changed and not files and args.format == "text":
        return _nothing_affected(args, out)
    if baseline is not None:
        from specgate.change.baseline import prefetch

        prefetch(baseline, [path for path, _ in files])
        from specgate.change.git import ignored_by
        from specgate.core.revision_tree import ignoring

        # a file git ignores is no commit's: the gate does not read it as the head's
        # (docs/change-gate.md#baseline)
        with ignoring(ignored_by(baseline.top)):
            run = check_files(files, options, finder)
    else:
        run = check_files(files, options, finder)
    if use_stdin:
        stdin_report = _read_stdin(args, options, finder)
        reports = sorted((*run.files, stdin_report), key=lambda f: f.path)
        run = Run(
            status=worst([f.status for f in reports]), files=tuple(reports), only_new=run.only_new
        )

    _emit(args, run, out, (*_verdict_notes(args, run_config), *_hidden_note(hidden)))
    return exit_for(run.status, fail_on)


def _emit(args: argparse.Namespace, run: RunReport, out: TextIO, notes: Sequence[str]) -> None:
    """Write ``check``'s report to every channel it asked for: the output (or
    ``--output``), the SARIF file, input errors and ``notes`` on standard error (and as
    annotations in the github format), the job summary and the step outputs."""
    summary_path = _summary_path(args)
    text = _render(args.format, args, run, out, summary_path is not None)
    if args.format == "github" and not args.output:
        # first, so GitHub's 10 warnings per step never drop it
        from specgate.reporters.safe_text import visible
        from specgate.reporters.workflow_commands import annotation

        out.writelines(
            annotation("warning", visible(note), title="specgate") + "\n" for note in notes
        )
    if args.output:
        write_file(args.output, text)
    else:
        out.write(text)
    if args.sarif_file:
        write_file(args.sarif_file, _render("sarif", args, run, out, False))
    if args.format != "text" or args.output:
        for file in run.files:
            if file.error is not None:
                say(file.error)
    for note in notes:
        say(note)
    if summary_path:
        append_summary(summary_path, run, notes)
    if args.format == "github" and os.environ.get("GITHUB_OUTPUT"):
        from specgate.reporters import github as github_format

        append(os.environ["GITHUB_OUTPUT"], github_format.render_outputs(run))


def _verdict_notes(args: argparse.Namespace, config: Config) -> tuple[str, ...]:
    """What the run must say about its own verdict: a ``fail-on = "never"`` that a
    configuration file (which a pull request can edit) set, not the command line, so
    a gate switched off by the checked repository is never silent (docs/trust.md#suppressions)."""
    if args.strict or args.fail_on is not None or config.fail_on != "never":
        return ()
    from specgate.reporters.safe_text import visible

    return (
        f"fail-on never is set by {visible(config.path or 'the configuration')}: no finding "
        "fails this run; pass --fail-on (the Action's fail-on input) to decide it here",
    )


def _hidden_note(hidden: list[str]) -> tuple[str, ...]:
    """One sentence naming the claims files a folder search passed over (``exclude`` or
    ``.gitignore``), which the checked repository itself can write."""
    if not hidden:
        return ()
    from specgate.reporters.safe_text import visible

    names = ", ".join(visible(name) for name in sorted(hidden)[:5])
    more = f" and {len(hidden) - 5} more" if len(hidden) > 5 else ""
    return (
        f"{len(hidden)} claims file(s) not checked: exclude or .gitignore covers them "
        f"({names}{more}); name them as PATHs to check them",
    )


def _selected_files(
    args: argparse.Namespace,
    paths: list[str],
    finder: ConfigFinder,
    hidden: list[str] | None = None,
) -> list[tuple[Path, str]]:
    """The claims files to check: ``--changed``/``--changed-since``/``--staged``'s,
    else the PATHs' (standard input ``-`` is read separately).

    Raises:
        UsageError: ``-`` with ``--changed``; PATHs that do not exist or hold no claims file.
    """
    from specgate.project.discovery import discover

    if args.changed is not None or args.changed_since is not None or args.staged:
        if "-" in paths:
            raise UsageError("specgate check: standard input ('-') does not go with --changed")
        return _changed_files(args)
    rest = [p for p in paths if p != "-"]
    return discover(rest, finder, hidden) if rest or "-" not in paths else []


def _changed_files(args: argparse.Namespace) -> list[tuple[Path, str]]:
    """The claims files ``--changed`` / ``--changed-since`` / ``--staged`` select
    (docs/change-gate.md#staged).

    Raises:
        UsageError: PATHs given as well; ``--changed-since`` outside a repository or
            not naming a commit; PATHs with ``--staged``, or what
            :func:`specgate.change.staged.staged_files` raises.
    """
    from pathlib import Path

    from specgate.change.changed import affected

    cwd = Path.cwd()
    if args.staged:
        from specgate.change.staged import staged_files

        if args.paths:
            # The hook passes no file names; any PATH here is a misconfiguration.
            raise UsageError("specgate check --staged takes no PATH (git lists the files)")
        changed = staged_files(cwd, os.environ)
    elif args.changed_since is not None:
        from specgate.change import git

        top = git.top_level(cwd)
        if top is None:
            raise UsageError(f"--changed-since {args.changed_since}: not inside a git repository")
        commit = git.resolve_commit(top, args.changed_since, "--changed-since")
        try:
            changed = [top / p for p in git.changed_since(top, commit)]
        except git.GitError as exc:
            raise UsageError(f"--changed-since {args.changed_since}: {exc}") from None
    else:
        # pre-commit appends the file names after the hook's args, so names that
        # argparse left as PATHs (after an option such as --format) are changed files too.
        changed = [Path(p) for p in (*args.changed, *args.paths)]
    found = affected(changed, cwd)
    if args.verbose:
        for name in found.ignored:
            say(f"ignored {name}: no claims file reads it")
        for name, reason in found.skipped:
            say(f"skipped {name}: {reason}")
    return found.claims


def _nothing_affected(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 0 with one line when no claims file is affected (other formats render
    an empty run: JSON ``files: []``, no annotations, step outputs written)."""
    text = "specgate: no claims file is affected by the changed files\n"
    if args.output:
        write_file(args.output, text)
    else:
        out.write(text)
    return EXIT_OK
