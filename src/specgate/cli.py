"""The command line: ``specgate check | doctor | schema | rules``.

The CLI only wires: it parses arguments, calls the checker, asks a reporter for
text, and only then writes streams and files. Exit codes: 0 clean, 1 the run's
status reaches ``--fail-on``, 2 usage or input error, 3 internal error.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from specgate import __version__
from specgate.errors import SpecgateError, UsageError

if TYPE_CHECKING:
    from specgate.report import RunReport

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
FAIL_ON = ("fail", "actionable", "never")

_DESCRIPTION = """\
specgate checks speculative-decoding claims against theory.

A claims file states, per deployment, the draft length D, the measured accept
length AL (tokens per target step, bonus token included), the draft depth ratio
ρ (one draft token's cost in target steps), the query heads per KV head G, and
the claimed speedup. specgate checks AL ∈ [1, 1 + D], claimed speedup ≤
AL / (β + ρ·passes) (β: the verify cost at the served concurrency), AL against
break-even, the attention tile rule D* = floor(128/G) − 1, and more
(`specgate rules`).
"""

_CHECK_EPILOG = """\
examples:
  specgate check                          search the current folder for claims files
  specgate check deploy/chat.specgate.yaml --format json
  specgate check . --strict               fail on warnings and infos too
  specgate check . --format github        annotations + job summary in GitHub Actions

exit codes: 0 clean, 1 findings reach --fail-on, 2 usage or input error, 3 internal error
"""

_DOCTOR_EPILOG = """\
example:
  specgate doctor --speculative-decoding --accept-length=1.4 --draft-length=7 \\
      --draft-depth-ratio=0.05 --claimed-speedup=3 --json
"""


def _positive_float(
    minimum: float | None = None, *, strict: bool = False
) -> Callable[[str], float]:
    """An argparse type: a finite real number, optionally bounded below."""
    import math

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if minimum is not None and (value <= minimum if strict else value < minimum):
            sign = ">" if strict else "≥"
            raise argparse.ArgumentTypeError(f"{text} must be {sign} {minimum:g}")
        return value

    return number


def _count(text: str) -> int:
    """An argparse type: a whole number ≥ 0 (``4`` or ``4.0``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not value.is_integer() or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ≥ 0")
    return int(value)


def _rates(text: str) -> tuple[float, ...]:
    """An argparse type: comma-separated rates in [0, 1] (``0.8,0.6,0.45``)."""
    import math

    parts = text.split(",")
    if len(parts) > _MAX_RATES:
        raise argparse.ArgumentTypeError(f"at most {_MAX_RATES} rates")
    rates = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part.strip()!r} is not a number") from None
        if not math.isfinite(value) or not 0 <= value <= 1:
            raise argparse.ArgumentTypeError(f"{part.strip()!r} is not a rate in [0, 1]")
        rates.append(value)
    return tuple(rates)


#: ``--per-position`` takes at most this many rates (draft lengths beyond are unheard of).
_MAX_RATES = 1024
def _date(text: str) -> datetime.date:
    """An argparse type: a calendar date ``YYYY-MM-DD``."""
    try:
        return datetime.date.fromisoformat(text) if len(text) == 10 else _no_date(text)
    except ValueError:
        return _no_date(text)


def _no_date(text: str) -> datetime.date:
    raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD")


def _today(args: argparse.Namespace) -> datetime.date | None:
    """``--today``, else ``$SOURCE_DATE_EPOCH`` as a UTC date, else ``None`` (the clock).

    Raises:
        UsageError: ``SOURCE_DATE_EPOCH`` is not a whole number of seconds.
    """
    if args.today is not None:
        return args.today  # type: ignore[no-any-return]
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None or epoch == "":
        return None
    if not epoch.strip().isdigit() or len(epoch.strip()) > 12:
        raise UsageError(
            f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds since 1970-01-01"
        )
    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
    return moment.date()


def _heads(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be ≥ 1")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    """The whole argument parser (also used by the docs)."""
    parser = _Parser(
        prog="specgate",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"specgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check = sub.add_parser(
        "check",
        help="check claims files (the main job)",
        description="Check claims files against the theory and report findings.",
        epilog=_CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="claims files or folders to search (default: the current folder)",
    )
    check.add_argument(
        "--format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help="output format (default: text)",
    )
    check.add_argument(
        "--output", metavar="FILE", help="write the report to FILE instead of standard output"
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
        type=_positive_float(1.0),
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
        "--today",
        type=_date,
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
    check.add_argument(
        "--verbose",
        action="store_true",
        help="with --changed: name the files ignored and the claims files skipped",
    )
    check.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE (a pyproject.toml with [tool.specgate], or a TOML file "
        "holding those keys) instead of the nearest pyproject.toml",
    )

    _add_doctor(sub)

    init = sub.add_parser(
        "init",
        help="write a commented starter claims file",
        description="Write a starter claims file that shows every field with its unit. "
        "Refuses to overwrite an existing file.",
    )
    init.add_argument(
        "path",
        nargs="?",
        default="specgate.yaml",
        metavar="PATH",
        help="where to write it (default: specgate.yaml)",
    )

    sub.add_parser(
        "schema",
        help="print the claims-file JSON Schema",
        description="Print the claims-file JSON Schema (draft 2020-12).",
    )

    digest = sub.add_parser(
        "digest",
        help="print each deployment's config digest",
        description="Print the config digest of every deployment (one line each: "
        "PATH:NAME sha256:…), the value evidence.provenance.config_digest records.",
    )
    digest.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="claims files or folders to search (default: the current folder)",
    )

    _add_measure(sub)

    rules = sub.add_parser(
        "rules",
        help="list the rules, or show one rule's doc",
        description="List the rule catalogue, or print one rule's doc.",
    )
    rules.add_argument("rule", nargs="?", metavar="CODE_OR_NAME", help="e.g. SG104")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    return parser


_MEASURE_EPILOG = """\
examples:
  specgate measure --metrics-url http://127.0.0.1:8000/metrics -- \\
      vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --num-prompts 200
  specgate measure --before bench/before.prom --after bench/after.prom \\
      --write specgate.yaml --deployment chat-8b-eagle3
  specgate measure --from bench/server.log --metrics-format vllm-log

exit codes: 0 evidence printed or written, 2 nothing measured (nothing written)
"""


def _add_doctor(sub: argparse._SubParsersAction[_Parser]) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="check one deployment given as flags (no file needed)",
        description="Check one deployment described by flags, with the same rules as check.",
        epilog=_DOCTOR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from specgate.gpus import gpu_names

    number = _positive_float()
    doctor.add_argument(
        "--speculative-decoding", action="store_true", help="speculative decoding is enabled"
    )
    doctor.add_argument(
        "--accept-length",
        type=number,
        metavar="AL",
        help="measured accept length AL (tokens per target step, bonus included)",
    )
    doctor.add_argument("--draft-length", type=_count, metavar="D", help="draft length D")
    doctor.add_argument(
        "--draft-depth-ratio",
        type=_positive_float(0.0),
        metavar="RHO",
        help="draft depth ratio ρ (draft token cost / target step)",
    )
    doctor.add_argument(
        "--claimed-speedup",
        type=_positive_float(0.0, strict=True),
        metavar="X",
        help="claimed speedup, a ratio (2.4 = 2.4x)",
    )
    doctor.add_argument(
        "--min-accept-length",
        type=_positive_float(1.0),
        metavar="AL",
        help="AL floor (default: break-even AL × (1 + min gain), never above 1 + D)",
    )
    doctor.add_argument(
        "--query-heads-per-kv",
        type=_positive_float(0.0, strict=True),
        metavar="G",
        help="query heads per KV head G",
    )
    doctor.add_argument("--query-heads", type=_heads, metavar="H", help="query heads H")
    doctor.add_argument("--kv-heads", type=_heads, metavar="KV", help="KV heads")
    doctor.add_argument(
        "--attention-dominated",
        action="store_true",
        help="decode time is dominated by attention (long context)",
    )
    doctor.add_argument("--latency-region", choices=("low", "throughput"), default="low")
    doctor.add_argument("--model-size", choices=("tiny", "small", "medium", "large"))
    doctor.add_argument(
        "--repetitive",
        action="store_true",
        help="the workload repeats its own text (agents, code edits)",
    )
    doctor.add_argument(
        "--next-accept-length", type=number, metavar="AL", help="AL measured at --next-draft-length"
    )
    doctor.add_argument(
        "--next-draft-length", type=_count, metavar="D", help="a larger D whose AL was measured"
    )
    doctor.add_argument(
        "--cache-coherence-eval",
        action="store_true",
        help="rollback / cache-coherence evidence exists",
    )
    doctor.add_argument(
        "--verify-tokens",
        type=_heads,
        metavar="N",
        help="N_verify, tokens the target scores per step (nodes + 1 for a tree; ≥ 1 + D)",
    )
    doctor.add_argument(
        "--draft-passes",
        choices=("per_token", "single"),
        help="per_token: one draft forward per token; single: one forward for all drafts",
    )
    doctor.add_argument(
        "--concurrency", type=_heads, metavar="B", help="sequences decoding at once (default 1)"
    )
    doctor.add_argument("--gpu", choices=gpu_names(), help="GPU of the shipped table (for β)")
    doctor.add_argument(
        "--measured-speedup",
        type=_positive_float(0.0, strict=True),
        metavar="X",
        help="measured speedup over plain decoding, a ratio",
    )
    doctor.add_argument(
        "--per-position",
        type=_rates,
        metavar="M1,M2,...",
        help="measured per-position acceptance m_i = P(first i drafts accepted)",
    )
    doctor.add_argument(
        "--min-gain",
        type=_positive_float(0.0),
        metavar="G",
        help="default AL floor = break-even × (1 + G) (default 0.1)",
    )
    doctor.add_argument("--workload", metavar="NAME", help="workload name")
    doctor.add_argument("--model", metavar="NAME", help="model name")
    doctor.add_argument("--strict", action="store_true", help="exit 1 when actionable too")
    doctor.add_argument("--json", action="store_true", help="print the JSON deployment report")


def _add_measure(sub: argparse._SubParsersAction[_Parser]) -> None:
    measure = sub.add_parser(
        "measure",
        help="measure AL from an engine's metrics and print or write the evidence block",
        description="Measure the accept length from an engine's counters (around a "
        "benchmark command, or from saved scrapes or files) and print the evidence block, "
        "or write it into a claims file.",
        epilog=_MEASURE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = measure.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--metrics-url",
        metavar="URL",
        help="the engine's Prometheus endpoint (vLLM /metrics): scraped before and after "
        "the command given after --",
    )
    source.add_argument("--before", metavar="FILE", help="a saved scrape before the run")
    source.add_argument("--from", dest="from_file", metavar="FILE", help="a metrics file")
    measure.add_argument("--after", metavar="FILE", help="the saved scrape after the run")
    measure.add_argument(
        "--metrics-format", metavar="FORMAT", help="the format of --from (DESIGN.md §7)"
    )
    measure.add_argument(
        "--timeout",
        type=_positive_float(0.0, strict=True),
        default=10.0,
        metavar="SECONDS",
        help="timeout of each scrape (default 10)",
    )
    measure.add_argument(
        "--labels",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="select one model's series of a shared scrape (repeatable)",
    )
    measure.add_argument(
        "--save-dir",
        metavar="DIR",
        help="with --metrics-url: save both scrapes in DIR and point evidence.metrics at them",
    )
    measure.add_argument(
        "--concurrency", type=_heads, metavar="N", help="sequences decoding at once in the run"
    )
    measure.add_argument(
        "--claims", metavar="FILE", help="the claims file (for the deployment's config digest)"
    )
    measure.add_argument(
        "--write",
        metavar="CLAIMS",
        help="write the evidence into this claims file (needs --deployment)",
    )
    measure.add_argument("--deployment", metavar="NAME", help="the deployment to record")
    measure.add_argument(
        "--today", type=_date, metavar="YYYY-MM-DD", help="measured_at (default: today, UTC)"
    )
    measure.add_argument(
        "benchmark", nargs=argparse.REMAINDER, metavar="-- CMD", help="the benchmark command"
    )


def _exit_for(status: str, fail_on: str) -> int:
    if status == "error":
        return EXIT_USAGE
    if fail_on == "fail" and status == "fail":
        return EXIT_FINDINGS
    if fail_on == "actionable" and status in ("actionable", "fail"):
        return EXIT_FINDINGS
    return EXIT_OK


def _write_file(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temp file beside it, then rename).

    Raises:
        UsageError: the folder does not exist or is not writable.
    """
    import tempfile

    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temp, target)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _append(path: str, text: str) -> None:
    """Append ``text`` to ``path`` in one write (job summary, step outputs).

    Raises:
        UsageError: the file cannot be opened for appending.
    """
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as out:
            out.write(text)
    except OSError as exc:
        raise UsageError(f"cannot append to {path}: {exc.strerror or exc}") from None


def _colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def _summary(args: argparse.Namespace, run: RunReport) -> tuple[str | None, str]:
    """Where the job summary goes (``--summary``, else ``$GITHUB_STEP_SUMMARY`` in
    github format) and its text, within what the file's 1 MiB budget leaves."""
    path = args.summary
    if path is None and args.format == "github":
        path = os.environ.get("GITHUB_STEP_SUMMARY") or None
    if not path:
        return None, ""
    from specgate.reporters import summary

    try:
        existing = os.path.getsize(path)
    except OSError:
        existing = 0
    return path, summary.render(run, max(summary.SUMMARY_LIMIT_BYTES - existing, 0))


def _render(args: argparse.Namespace, run: RunReport, out: TextIO, summary_written: bool) -> str:
    """The report in the chosen format (no I/O)."""
    if args.format == "json":
        from specgate.reporters import json_report

        return json_report.render(run)
    if args.format in ("github", "sarif"):
        from specgate.gitpaths import repo_relative

        shown = {f.error_location_file for f in run.files} | {
            x.file for x in run.all_findings() if x.file is not None
        }
        repo_paths = {s: repo_relative(s) for s in shown}
        if args.format == "sarif":
            from specgate.reporters import sarif

            return sarif.render(run, repo_paths)
        from specgate.reporters import github

        return github.render(run, repo_paths, summary_written=summary_written)
    from specgate.reporters import text as text_format

    return text_format.render(run, colour=args.output is None and _colour(out))


def _run_check(args: argparse.Namespace, out: TextIO) -> int:
    from specgate.checker import CheckOptions, check_files
    from specgate.config import ConfigFinder, load_config
    from specgate.discovery import discover

    if args.strict and args.fail_on not in (None, "actionable"):
        raise UsageError("specgate check: --strict conflicts with --fail-on " + args.fail_on)
    explicit = None
    if args.config:
        explicit = load_config(Path(args.config), args.config, explicit=True)
    finder = ConfigFinder(explicit)
    run_config = explicit or finder.for_folder(Path.cwd().resolve())
    fail_on = "actionable" if args.strict else (args.fail_on or run_config.fail_on or "fail")
    today = _today(args)
    baseline = None
    if args.baseline is not None:
        from specgate.baseline import open_baseline

        baseline = open_baseline(args.baseline, Path.cwd())
    if args.changed is not None or args.changed_since is not None:
        files = _changed_files(args)
        if not files and args.format == "text":
            return _nothing_affected(args, out)
    else:
        files = discover(args.paths)
    if baseline is not None:
        from specgate.baseline import prefetch

        prefetch(baseline, [path for path, _ in files])
    options = CheckOptions(min_accept_length=args.min_accept_length, today=today, baseline=baseline)
    run = check_files(files, options, finder)

    summary_path, summary_text = _summary(args, run)
    text = _render(args, run, out, bool(summary_text))
    if args.output:
        _write_file(args.output, text)
    else:
        out.write(text)
    if args.format != "text" or args.output:
        for file in run.files:
            if file.error is not None:
                print(f"specgate: {file.error}", file=sys.stderr)
    if summary_path and summary_text:
        _append(summary_path, summary_text)
    if args.format == "github" and os.environ.get("GITHUB_OUTPUT"):
        from specgate.reporters import github as github_format

        _append(os.environ["GITHUB_OUTPUT"], github_format.render_outputs(run))
    return _exit_for(run.status, fail_on)


def _changed_files(args: argparse.Namespace) -> list[tuple[Path, str]]:
    """The claims files ``--changed`` / ``--changed-since`` select (§9.3).

    Raises:
        UsageError: PATHs given as well; ``--changed-since`` outside a repository or
            not naming a commit.
    """
    from specgate.changed import affected

    cwd = Path.cwd()
    if args.changed_since is not None:
        from specgate import git

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
        from specgate.reporters.safe_text import visible

        for name in found.ignored:
            print(f"specgate: ignored {visible(name)}: no claims file reads it", file=sys.stderr)
        for name, reason in found.skipped:
            print(f"specgate: skipped {visible(name)}: {visible(reason)}", file=sys.stderr)
    return found.claims


def _nothing_affected(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 0 with one line when no claims file is affected (other formats render
    an empty run: JSON ``files: []``, no annotations, step outputs written)."""
    text = "specgate: no claims file is affected by the changed files\n"
    if args.output:
        _write_file(args.output, text)
    else:
        out.write(text)
    return EXIT_OK


def _run_digest(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate digest``: one line per deployment, ``PATH:NAME sha256:…``."""
    from specgate.checker import CheckOptions, check_files
    from specgate.discovery import discover
    from specgate.reporters.safe_text import visible

    run = check_files(discover(args.paths), CheckOptions())
    code = EXIT_OK
    lines = []
    for file in run.files:
        if file.error is not None:
            print(f"specgate: {visible(file.error)}", file=sys.stderr)
            code = EXIT_USAGE
            continue
        for deployment in file.deployments:
            name = visible(f"{file.path}:{deployment.name}")
            lines.append(f"{name} {deployment.inputs['config_digest']}\n")
    out.write("".join(lines))
    return code


def _measured(args: argparse.Namespace, folder: Path) -> tuple[object, str, str] | None:
    """(Measurement, before text, after text) of the source the flags name.

    Raises:
        UsageError / InputError: flags that do not fit together; a failed scrape,
            command or read.
    """
    from specgate import measure
    from specgate.loader import read_text

    command = args.benchmark[1:] if args.benchmark[:1] == ["--"] else args.benchmark
    labels = dict(_label(text) for text in args.labels)
    if args.metrics_url is not None:
        if not command:
            raise UsageError("specgate measure: --metrics-url needs a command after --")
        before = measure.scrape(args.metrics_url, args.timeout)
        measure.run_command(command)
        after = measure.scrape(args.metrics_url, args.timeout)
        acceptance = measure.from_scrapes(
            (before, f"{args.metrics_url} (before)"), (after, f"{args.metrics_url} (after)"), labels
        )
        return measure.Measurement(acceptance, measure.inline_profile(acceptance)), before, after
    if command:
        raise UsageError("specgate measure: a command runs only with --metrics-url")
    if args.before is not None:
        if args.after is None:
            raise UsageError("specgate measure: --before needs --after")
        before = read_text(Path(args.before), args.before)
        after = read_text(Path(args.after), args.after)
        acceptance = measure.from_scrapes((before, args.before), (after, args.after), labels)
        pointer: dict[str, object] = {
            "format": "vllm-prometheus",
            "path": measure.relative_to(Path(args.after), folder),
            "baseline_path": measure.relative_to(Path(args.before), folder),
        }
        if labels:
            pointer["labels"] = labels
        return measure.Measurement(acceptance, pointer), "", ""
    if args.metrics_format is None:
        raise UsageError("specgate measure: --from needs --metrics-format")
    acceptance = measure.from_file(Path(args.from_file), args.metrics_format)
    pointer = {
        "format": args.metrics_format,
        "path": measure.relative_to(Path(args.from_file), folder),
    }
    return measure.Measurement(acceptance, pointer), "", ""


def _label(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageError(f"specgate measure: --labels {text!r} is not NAME=VALUE")
    return name, value


def _run_measure(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate measure``: print the evidence block, or write it with ``--write``."""
    from dataclasses import replace

    from specgate import measure
    from specgate.checker import utc_today

    claims = args.write or args.claims
    if args.write and args.claims and args.write != args.claims:
        raise UsageError("specgate measure: --write and --claims name different files")
    if (claims is None) != (args.deployment is None):
        raise UsageError("specgate measure: --write/--claims and --deployment go together")
    if args.after is not None and args.before is None:
        raise UsageError("specgate measure: --after needs --before")
    if args.save_dir is not None and args.metrics_url is None:
        raise UsageError("specgate measure: --save-dir applies to --metrics-url")
    folder = Path(claims).parent if claims else Path(".")
    digest = _digest_of(Path(claims), args.deployment) if claims else None
    today = _today(args) or utc_today()
    found = _measured(args, folder)
    assert found is not None
    measurement, before, after = found
    assert isinstance(measurement, measure.Measurement)
    if args.save_dir is not None:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        first, second = measure.save_scrapes(Path(args.save_dir), before, after, stamp)
        pointer = {
            "format": "vllm-prometheus",
            "path": measure.relative_to(second, folder),
            "baseline_path": measure.relative_to(first, folder),
        }
        measurement = replace(measurement, metrics=pointer)
    block = measure.evidence_block(
        measurement, today=today, concurrency=args.concurrency, digest=digest
    )
    if args.write:
        from specgate.evidence_writer import write_evidence

        write_evidence(Path(args.write), args.deployment, block)
        out.write(f"wrote the evidence of {args.deployment} in {args.write}\n")
        return EXIT_OK
    out.write(measure.render(block))
    return EXIT_OK


def _digest_of(claims: Path, name: str) -> str:
    """The config digest of deployment ``name`` in ``claims``.

    Raises:
        UsageError: the file cannot be read, or has no such deployment.
    """
    from specgate.checker import CheckOptions, check_file
    from specgate.discovery import shown_path

    report = check_file(claims, shown_path(claims), CheckOptions())
    if report.error is not None:
        raise UsageError(f"specgate measure: {report.error}")
    for deployment in report.deployments:
        if deployment.name == name:
            return str(deployment.inputs["config_digest"])
    raise UsageError(f"specgate measure: {claims} has no deployment named {name!r}")


def _run_doctor(args: argparse.Namespace, out: TextIO) -> int:
    from specgate.doctor import deployment_from_flags, render_doctor

    deployment = deployment_from_flags(args)
    text, status = render_doctor(deployment, args)
    out.write(text)
    return _exit_for(status, "actionable" if args.strict else "fail")


def _run_init(args: argparse.Namespace, out: TextIO) -> int:
    from importlib import resources

    starter = resources.files("specgate").joinpath("data/starter-claims.yaml")
    target = Path(args.path)
    if target.suffix.lower() not in (".yaml", ".yml"):
        raise UsageError(
            f"specgate init: {args.path}: the starter is commented YAML; give a .yaml or .yml name"
        )
    if target.is_dir():
        raise UsageError(f"specgate init: {args.path} is a folder; give a file name")
    try:
        with target.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(starter.read_text(encoding="utf-8"))
    except FileExistsError:
        raise UsageError(f"specgate init: {args.path} already exists (not overwritten)") from None
    except OSError as exc:
        raise UsageError(f"specgate init: cannot write {args.path}: {exc.strerror}") from None
    out.write(
        f"wrote {args.path}: replace the numbers with your measurements, then run "
        f"`specgate check {args.path}`\n"
    )
    return EXIT_OK


def _run_rules(args: argparse.Namespace, out: TextIO) -> int:
    from specgate.rules_doc import render_rule, render_rules

    if args.rule:
        out.write(render_rule(args.rule, args.format))
    else:
        out.write(render_rules(args.format))
    return EXIT_OK


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (never raises, never prints a traceback)."""
    out = stdout or sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        if args.command is None:
            parser.print_help(out)
            return EXIT_USAGE
        if args.command == "check":
            return _run_check(args, out)
        if args.command == "doctor":
            return _run_doctor(args, out)
        if args.command == "schema":
            from specgate.validate import schema_text

            out.write(schema_text())
            return EXIT_OK
        if args.command == "init":
            return _run_init(args, out)
        if args.command == "digest":
            return _run_digest(args, out)
        if args.command == "measure":
            return _run_measure(args, out)
        return _run_rules(args, out)
    except SpecgateError as exc:
        print(
            f"specgate: {exc}" if not str(exc).startswith("specgate") else str(exc), file=sys.stderr
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("specgate: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        print(f"specgate: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
