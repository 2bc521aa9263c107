"""The command line: ``specgate check | doctor | schema | rules``.

The CLI only wires: it parses arguments, calls the checker, asks a reporter for
text, and only then writes streams and files. Exit codes: 0 clean, 1 the run's
status reaches ``--fail-on``, 2 usage or input error, 3 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import errno
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from specgate import __version__
from specgate.core.errors import SpecgateError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from specgate.check.report import FileReport, RunReport
    from specgate.check.run import CheckOptions
    from specgate.project.config import Config, ConfigFinder

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
FAIL_ON = ("fail", "actionable", "never")

_DESCRIPTION = """\
specgate checks speculative-decoding claims against theory.

A claims file states, per deployment, the draft length D, the measured accept
length AL (tokens per target step, bonus token included), the draft depth ratio
ρ (one draft pass's time over one target step's), the query heads per KV head
G, and the claimed speedup. specgate checks AL ∈ [1, 1 + D], claimed speedup ≤
AL / (β + ρ·passes) (β: the verify cost at the served concurrency; passes: draft
passes per step, D for a chain), AL against break-even, the attention tile rule
D* = floor(M/G) − 1 (M = 128 tile rows, 64 for multi-latent attention), and more
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
    minimum: float | None = None, *, strict: bool = False, maximum: float | None = None
) -> Callable[[str], float]:
    """An argparse type: a finite real number, optionally bounded below (and above)."""
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
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text} must be ≤ {maximum:,g}")
        return value

    return number


def _closed_set(choices: tuple[str, ...], what: str) -> Callable[[str], str]:
    """An argparse type: one of ``choices``, with did-you-mean on a typo."""

    def choice(text: str) -> str:
        if text in choices:
            return text
        from specgate.core.suggest import hint

        raise argparse.ArgumentTypeError(
            f"{text!r} is not {what} ({', '.join(choices)}){hint(text, choices)}"
        )

    return choice


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


def _whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum] (one message for every way
    to miss it). The maxima are the claims file's (:mod:`specgate.core.limits`), so the
    doctor accepts what a claims file may hold and no more."""

    def whole(text: str) -> int:
        try:
            value = _count(text)
        except argparse.ArgumentTypeError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"≥ {minimum}" if maximum is None else f"from {minimum} to {maximum:,}"
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number {bound}")
        return value

    return whole


_heads = _whole(1)


def _help_width() -> int:
    """The width argparse would use (``shutil.get_terminal_size().columns - 2``),
    without importing shutil: argparse builds a formatter for every option it adds,
    so the import would cost every command, not only ``--help``."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(columns - 2, 20)


class _Formatter(argparse.HelpFormatter):
    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or _help_width())


class _RawFormatter(_Formatter, argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (examples keep their layout)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(name)
            return found if isinstance(found, argparse.ArgumentParser) else None
    return None


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; an unknown option is reported by the subcommand it was given
    to, with the closest known option and that subcommand's ``--help``.

    Raises:
        UsageError: unknown options or bad values.
    """
    args, extras = parser.parse_known_args(argv)
    if not extras:
        return args
    import difflib

    command = getattr(args, "command", None)
    sub = _subcommand(parser, command) if command else None
    owner = sub or parser
    known = [o for action in owner._actions for o in action.option_strings]
    unknown = extras[0]
    hint = difflib.get_close_matches(unknown.split("=", 1)[0], known, n=1)
    suggestion = f"; did you mean {hint[0]}?" if hint else ""
    listed = " ".join(extras)
    raise UsageError(
        f"{owner.prog}: unrecognized arguments: {listed}{suggestion} (see {owner.prog} --help)"
    )


#: The subcommands, in the order ``--help`` lists them.
COMMANDS = ("check", "doctor", "init", "schema", "digest", "measure", "rules")


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option, when that
    is a known command (``None`` otherwise). The top-level parser has only flags
    (``--help``, ``--version``), so that word is the one argparse dispatches on."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: the whole one by default (``--help`` of every command);
    with ``only``, every subcommand is listed with its help as usual but only that
    one gets its options (argparse builds a formatter for each option it adds, which
    every run would otherwise pay for the commands it does not run)."""
    parser = _Parser(
        prog="specgate",
        description=_DESCRIPTION,
        formatter_class=_RawFormatter,
    )
    parser.add_argument("--version", action="version", version=f"specgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check = sub.add_parser(
        "check",
        help="check claims files (the main job)",
        description="Check claims files against the theory and report findings.",
        epilog=_CHECK_EPILOG,
        formatter_class=_RawFormatter,
    )
    if only in (None, "check"):
        _check_arguments(check)
    _add_doctor(sub, full=only in (None, "doctor"))

    init = sub.add_parser(
        "init",
        help="write a commented starter claims file",
        description="Write a starter claims file that shows every field with its unit, "
        "and (commented out) how to read them from the files you already commit: "
        "engine_config, hf_config, draft_hf_config and evidence.metrics. Missing folders "
        "are made. Refuses to overwrite an existing file.",
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

    _add_measure(sub, full=only in (None, "measure"))

    rules = sub.add_parser(
        "rules",
        help="list the rules, or show one rule's doc",
        description="List the rule catalogue, or print one rule's doc.",
    )
    rules.add_argument("rule", nargs="?", metavar="CODE_OR_NAME", help="e.g. SG104")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    return parser


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
        action="store_true",
        help="text format: print findings and errors only (no metrics, no status line)",
    )
    check.add_argument(
        "--statistics",
        action="store_true",
        help="print how many findings each rule raised instead of the findings",
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
        help="with --changed, --changed-since or --staged: name the files ignored and "
        "the claims files skipped",
    )
    check.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE (a pyproject.toml with [tool.specgate], or a TOML file "
        "holding those keys) instead of the nearest pyproject.toml",
    )


_MEASURE_EPILOG = """\
examples:
  specgate measure --metrics-url http://127.0.0.1:8000/metrics -- \\
      vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --num-prompts 200
  specgate measure --before bench/before.prom --after bench/after.prom \\
      --write specgate.yaml --deployment chat-8b-eagle3
  specgate measure --from bench/server.log --metrics-format vllm-log

exit codes: 0 evidence printed or written, 2 nothing measured (nothing written)
"""


def _add_doctor(sub: argparse._SubParsersAction[_Parser], *, full: bool) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="check one deployment given as flags (no file needed)",
        description="Check one deployment described by flags, with the same rules as check.",
        epilog=_DOCTOR_EPILOG,
        formatter_class=_RawFormatter,
    )
    if not full:
        return
    from specgate.core.limits import MAX_DRAFT_LENGTH, MAX_HEADS
    from specgate.theory.gpus import gpu_names

    number = _positive_float()
    draft_length = _whole(0, MAX_DRAFT_LENGTH)
    heads = _whole(1, MAX_HEADS)
    doctor.add_argument(
        "--speculative-decoding", action="store_true", help="speculative decoding is enabled"
    )
    doctor.add_argument(
        "--accept-length",
        type=number,
        metavar="AL",
        help="measured accept length AL (tokens per target step, bonus included)",
    )
    doctor.add_argument("--draft-length", type=draft_length, metavar="D", help="draft length D")
    doctor.add_argument(
        "--draft-depth-ratio",
        type=_positive_float(0.0),
        metavar="RHO",
        help="draft depth ratio ρ (one draft pass's time / one target step's time)",
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
        type=_positive_float(1.0, maximum=MAX_HEADS),
        metavar="G",
        help="query heads per KV head G",
    )
    doctor.add_argument("--query-heads", type=heads, metavar="H", help="query heads H")
    doctor.add_argument("--kv-heads", type=heads, metavar="KV", help="KV heads")
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
        "--next-draft-length",
        type=draft_length,
        metavar="D",
        help="a larger D whose AL was measured",
    )
    doctor.add_argument(
        "--cache-coherence-eval",
        action="store_true",
        help="rollback / cache-coherence evidence exists",
    )
    doctor.add_argument(
        "--verify-tokens",
        type=_whole(1, MAX_DRAFT_LENGTH + 1),
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
    doctor.add_argument(
        "--gpu",
        type=_closed_set(gpu_names(), "a GPU of the shipped table"),
        metavar="GPU",
        help=f"GPU of the shipped table, for β: {', '.join(gpu_names())}",
    )
    doctor.add_argument(
        "--peak-tflops",
        type=_positive_float(0.0, strict=True),
        metavar="TFLOPS",
        help="peak dense TFLOP/s at the weights' precision (overrides --gpu's figure)",
    )
    doctor.add_argument(
        "--memory-bandwidth-tbps",
        type=_positive_float(0.0, strict=True),
        metavar="TBPS",
        help="memory bandwidth in TB/s (overrides --gpu's figure)",
    )
    doctor.add_argument(
        "--weight-bytes",
        type=_positive_float(0.0, strict=True),
        metavar="BYTES",
        help="bytes per weight (default 2; 1 for FP8)",
    )
    doctor.add_argument(
        "--attention-tile-rows",
        type=_heads,
        metavar="M",
        help="M, rows of one attention tile (default 128, 64 with multi-latent attention)",
    )
    doctor.add_argument(
        "--verify-cost-ratio",
        type=_positive_float(1.0),
        metavar="BETA",
        help="β measured: target step time at N_verify tokens over one token",
    )
    from specgate.core.vocabulary import MECHANISMS as mechanisms

    doctor.add_argument(
        "--mechanism",
        type=_closed_set(mechanisms, "a draft mechanism"),
        metavar="NAME",
        help=f"the draft mechanism: {', '.join(mechanisms)}",
    )
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


#: specgate.inputs.metrics.spec.FILE_FORMATS, spelled here so that building the
#: parser imports no reader (a test keeps the two equal).
_METRICS_FILE_FORMATS = (
    "vllm-prometheus",
    "vllm-log",
    "vllm-per-request",
    "sglang-log",
    "llamacpp-log",
    "llamacpp-timings",
    "sglang-server-info",
    "trtllm-iteration-stats",
    "speculation-profile",
)


def _add_measure(sub: argparse._SubParsersAction[_Parser], *, full: bool) -> None:
    measure = sub.add_parser(
        "measure",
        help="measure AL from an engine's metrics and print or write the evidence block",
        description="Measure the accept length from an engine's counters (around a "
        "benchmark command, or from saved scrapes or files) and print the evidence block, "
        "or write it into a claims file.",
        epilog=_MEASURE_EPILOG,
        formatter_class=_RawFormatter,
    )
    if not full:
        return
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
        "--metrics-format",
        metavar="FORMAT",
        help=f"the format of --from: {', '.join(_METRICS_FILE_FORMATS)}",
    )
    measure.add_argument(
        "--draft-length",
        type=_count,
        metavar="D",
        help="the D the run drafted at, for data that does not state it (vLLM log lines "
        "without per-position rates, vLLM V0 counters); data that states D wins",
    )
    measure.add_argument(
        "--timeout",
        type=_positive_float(0.0, strict=True),
        default=10.0,
        metavar="SECONDS",
        help="deadline for each whole scrape: connect, headers and body (default 10)",
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


def say(message: str) -> None:
    """Write ``specgate: message`` to standard error as one escaped line (messages that
    already name ``specgate …`` as their source keep it as the prefix): text from
    the checked repository (a file name with a newline, a YAML tag with a CR) can
    neither break the line nor start a workflow command."""
    from specgate.reporters.safe_text import visible

    line = message if message.startswith(("specgate ", "specgate:")) else f"specgate: {message}"
    print(visible(line), file=sys.stderr)


def _utf8_streams() -> None:
    """Standard output and error write UTF-8 whatever the locale (a cp1252 console
    must not crash on ρ); text that cannot be encoded (lone surrogates from
    undecodable file names) is written as backslash escapes."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):  # a detached stream
                reconfigure(encoding="utf-8", errors="backslashreplace")


def _exit_for(status: str, fail_on: str) -> int:
    if status == "error":
        return EXIT_USAGE
    if fail_on == "fail" and status == "fail":
        return EXIT_FINDINGS
    if fail_on == "actionable" and status in ("actionable", "fail"):
        return EXIT_FINDINGS
    return EXIT_OK


def _write_file(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (:mod:`specgate.core.output_file`: atomic for a regular
    file, in place for a device or FIFO).

    Raises:
        UsageError: the folder does not exist or is not writable, the disk is full.
    """
    from specgate.core.output_file import write_text

    try:
        write_text(path, text, errors="backslashreplace")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _append(path: str, text: str) -> None:
    """Append ``text`` to ``path`` in one write (job summary, step outputs).

    Raises:
        UsageError: the file cannot be opened for appending.
    """
    try:
        with open(
            path, "a", encoding="utf-8", errors="backslashreplace", newline="\n"
        ) as out:
            out.write(text)
    except OSError as exc:
        raise UsageError(f"cannot append to {path}: {exc.strerror or exc}") from None


def _colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def _append_summary(path: str, run: RunReport, notes: Sequence[str] = ()) -> None:
    """Append the job summary to ``path`` within what its 1 MiB budget leaves.

    Several steps (or parallel jobs sharing a file) may append at once: the file is
    locked exclusively (:func:`_exclusive`), its size is read again under the lock,
    the summary is rendered for what remains and written in one
    write before the lock is released.

    Raises:
        UsageError: the file cannot be opened for appending.
    """
    from specgate.reporters import summary

    try:
        # Unbuffered: one write under the lock, and a failed write (a full disk) leaves
        # nothing buffered for close() to fail on again.
        handle = open(path, "ab", buffering=0)  # noqa: SIM115 - held open across the lock
    except OSError as exc:
        raise UsageError(f"cannot append to {path}: {exc.strerror or exc}") from None
    with handle, _exclusive(handle):
        existing = os.fstat(handle.fileno()).st_size
        text = summary.render(
            run,
            max(summary.SUMMARY_LIMIT_BYTES - existing, 0),
            repo_paths=_repo_paths(run),
            links=summary.link_base(
                os.environ.get("GITHUB_SERVER_URL"),
                os.environ.get("GITHUB_REPOSITORY"),
                os.environ.get("GITHUB_SHA"),
            ),
            notes=notes,
        )
        if text:
            try:
                data = memoryview(text.encode("utf-8", "backslashreplace"))
                while data:  # a raw write may take part of the bytes
                    written = handle.write(data)
                    if not written:
                        raise OSError(errno.EIO, "the write made no progress")
                    data = data[written:]
            except OSError as exc:  # a full disk: said like any other append failure
                raise UsageError(f"cannot append to {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _exclusive(handle: BinaryIO) -> Iterator[None]:
    """Hold an exclusive lock on ``handle``'s file: ``fcntl.flock`` on POSIX; on
    Windows ``msvcrt.locking`` of its first byte (taken by every specgate process
    appending to the file, which is what the lock serialises)."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows runners
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
        try:
            yield
        finally:
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _summary_path(args: argparse.Namespace) -> str | None:
    """Where the job summary goes: ``--summary``, else ``$GITHUB_STEP_SUMMARY`` in
    github format, else nowhere."""
    path: str | None = args.summary
    if path is None and args.format == "github":
        path = os.environ.get("GITHUB_STEP_SUMMARY") or None
    return path or None


def _repo_paths(run: RunReport) -> dict[str, str | None]:
    from specgate.core.paths import repo_relative

    shown = {f.error_location_file for f in run.files} | {
        x.file for x in run.all_findings(suppressed=True) if x.file is not None
    }
    return {s: repo_relative(s) for s in shown}


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
        repo_paths=lambda: _repo_paths(run),
        colour=fmt == "text" and args.output is None and _colour(out),
        quiet=args.quiet,
        docs_url=docs_url,
        summary_written=summary_written,
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


def _run_check(args: argparse.Namespace, out: TextIO) -> int:
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
    from specgate.reporters.summary import md
    from specgate.reporters.workflow_commands import annotation

    out.write(annotation("error", message, title="specgate (input error)") + "\n")
    outputs = os.environ.get("GITHUB_OUTPUT")
    if outputs:
        _append(outputs, "status=error\n")
    if summary_path:
        _append(summary_path, f"## ⛔ specgate: error\n\n{md(message)}\n")


def _check_options(args: argparse.Namespace) -> CheckOptions:
    """The run-wide options ``check``'s flags set.

    Raises:
        UsageError: a bad ``--today``/``SOURCE_DATE_EPOCH``, ``--select``/``--ignore``
            or ``--baseline`` (not a commit, no repository).
    """
    from pathlib import Path

    from specgate.check.run import CheckOptions

    baseline = None
    if args.baseline is not None:
        from specgate.change.baseline import open_baseline

        baseline = open_baseline(args.baseline, Path.cwd())
    return CheckOptions(
        min_accept_length=args.min_accept_length,
        today=_today(args),
        baseline=baseline,
        select=_rule_set(args.select, "--select"),
        ignore=_rule_set(args.ignore, "--ignore") or frozenset(),
    )


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
    args.docs_url = run_config.docs_url
    fail_on = "actionable" if args.strict else (args.fail_on or run_config.fail_on or "fail")
    options = _check_options(args)
    baseline = options.baseline
    changed = args.changed is not None or args.changed_since is not None or args.staged
    hidden: list[str] = []
    files = _selected_files(args, paths, finder, hidden)
    if changed and not files and args.format == "text":
        return _nothing_affected(args, out)
    if baseline is not None:
        from specgate.change.baseline import prefetch

        prefetch(baseline, [path for path, _ in files])
    run = check_files(files, options, finder)
    if use_stdin:
        stdin_report = _read_stdin(args, options, finder)
        reports = sorted((*run.files, stdin_report), key=lambda f: f.path)
        run = Run(status=worst([f.status for f in reports]), files=tuple(reports))

    _emit(args, run, out, (*_verdict_notes(args, run_config), *_hidden_note(hidden)))
    return _exit_for(run.status, fail_on)


def _emit(args: argparse.Namespace, run: RunReport, out: TextIO, notes: Sequence[str]) -> None:
    """Write ``check``'s report to every channel it asked for: the output (or
    ``--output``), the SARIF file, input errors and ``notes`` on standard error (and as
    annotations in the github format), the job summary and the step outputs."""
    summary_path = _summary_path(args)
    text = _render(args.format, args, run, out, summary_path is not None)
    if args.format == "github" and not args.output:
        # first, so GitHub's 10 warnings per step never drop it
        from specgate.reporters.workflow_commands import annotation

        out.writelines(
            annotation("warning", note, title="specgate") + "\n" for note in notes
        )
    if args.output:
        _write_file(args.output, text)
    else:
        out.write(text)
    if args.sarif_file:
        _write_file(args.sarif_file, _render("sarif", args, run, out, False))
    if args.format != "text" or args.output:
        for file in run.files:
            if file.error is not None:
                say(file.error)
    for note in notes:
        say(note)
    if summary_path:
        _append_summary(summary_path, run, notes)
    if args.format == "github" and os.environ.get("GITHUB_OUTPUT"):
        from specgate.reporters import github as github_format

        _append(os.environ["GITHUB_OUTPUT"], github_format.render_outputs(run))


def _verdict_notes(args: argparse.Namespace, config: Config) -> tuple[str, ...]:
    """What the run must say about its own verdict: a ``fail-on = "never"`` that a
    configuration file (which a pull request can edit) set, not the command line, so
    a gate switched off by the checked repository is never silent (DESIGN.md §11)."""
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
    """The claims files ``--changed`` / ``--changed-since`` / ``--staged`` select (§9.3).

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
        _write_file(args.output, text)
    else:
        out.write(text)
    return EXIT_OK


def _run_digest(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate digest``: one line per deployment, ``PATH:NAME sha256:…``."""
    from specgate.check.run import CheckOptions, check_files
    from specgate.project.discovery import discover
    from specgate.reporters.safe_text import visible

    run = check_files(discover(args.paths), CheckOptions())
    code = EXIT_OK
    lines = []
    for file in run.files:
        if file.error is not None:
            say(file.error)
            code = EXIT_USAGE
            continue
        for deployment in file.deployments:
            name = visible(f"{file.path}:{deployment.name}")
            lines.append(f"{name} {deployment.config_digest}\n")
    out.write("".join(lines))
    return code


def _measured(args: argparse.Namespace, folder: Path) -> tuple[object, str, str] | None:
    """(Measurement, before text, after text) of the source the flags name.

    Raises:
        UsageError / InputError: flags that do not fit together; a failed scrape,
            command or read.
    """
    from pathlib import Path

    from specgate.load.read import read_text
    from specgate.measure import evidence as measure
    from specgate.measure import scrape

    command = args.benchmark[1:] if args.benchmark[:1] == ["--"] else args.benchmark
    labels = dict(_label(text) for text in args.labels)
    if args.metrics_url is not None:
        if not command:
            raise UsageError("specgate measure: --metrics-url needs a command after --")
        before = scrape.scrape(args.metrics_url, args.timeout)
        measure.check_scrape(before, f"{args.metrics_url} (before)", labels)  # before CMD runs
        scrape.run_command(command)
        after = scrape.scrape(args.metrics_url, args.timeout)
        acceptance = measure.from_scrapes(
            (before, f"{args.metrics_url} (before)"),
            (after, f"{args.metrics_url} (after)"),
            labels,
            args.draft_length,
        )
        return measure.Measurement(acceptance, measure.inline_profile(acceptance)), before, after
    if command:
        raise UsageError("specgate measure: a command runs only with --metrics-url")
    if args.before is not None:
        if args.after is None:
            raise UsageError("specgate measure: --before needs --after")
        before = read_text(Path(args.before), args.before)
        after = read_text(Path(args.after), args.after)
        acceptance = measure.from_scrapes(
            (before, args.before), (after, args.after), labels, args.draft_length
        )
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
    acceptance = measure.from_file(Path(args.from_file), args.metrics_format, args.draft_length)
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
    from pathlib import Path

    from specgate.check.run import utc_today
    from specgate.measure import evidence as measure

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
    digest, served = _digest_of(Path(claims), args.deployment) if claims else (None, None)
    today = _today(args) or utc_today()
    found = _measured(args, folder)
    assert found is not None
    measurement, before, after = found
    assert isinstance(measurement, measure.Measurement)
    measure.plausible(measurement.acceptance, args.draft_length)
    mismatch = measure.draft_length_mismatch(
        measurement.acceptance, args.draft_length, served, args.deployment
    )
    if mismatch and args.write:
        raise UsageError(f"specgate measure: {mismatch}; nothing written")
    if mismatch:
        say(f"{mismatch}: config_digest left out")
        digest = None
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
    outside = measure.outside_repository(measurement.metrics, Path(claims)) if claims else None
    if outside is not None:
        raise UsageError(
            f"specgate measure: the metrics pointer {outside!r} leaves the repository of "
            f"{claims}, and check would refuse it: copy the file into the repository "
            "first; nothing written"
        )
    if args.write:
        from specgate.measure.writer import write_evidence

        note = write_evidence(Path(args.write), args.deployment, block)
        if note:
            say(note)
        out.write(f"wrote the evidence of {args.deployment} in {args.write}\n")
        return EXIT_OK
    out.write(measure.render(block))
    return EXIT_OK


def _digest_of(claims: Path, name: str) -> tuple[str, int | None]:
    """The config digest of deployment ``name`` in ``claims``, and the D it serves.

    Raises:
        UsageError: the file cannot be read, or has no such deployment.
    """
    from specgate.check.run import CheckOptions, check_file
    from specgate.core.paths import shown_path

    report = check_file(claims, shown_path(claims), CheckOptions())
    if report.error is not None:
        raise UsageError(f"specgate measure: {report.error}")
    for deployment in report.deployments:
        if deployment.name == name:
            return deployment.config_digest, deployment.metrics.draft_length
    raise UsageError(f"specgate measure: {claims} has no deployment named {name!r}")


def _run_doctor(args: argparse.Namespace, out: TextIO) -> int:
    from specgate.doctor import deployment_from_flags, render_doctor

    deployment = deployment_from_flags(args)
    text, status = render_doctor(deployment, args)
    out.write(text)
    return _exit_for(status, "actionable" if args.strict else "fail")


def _run_init(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from specgate.core.data import read_data
    target = Path(args.path)
    if target.suffix.lower() not in (".yaml", ".yml"):
        raise UsageError(
            f"specgate init: {args.path}: the starter is commented YAML; give a .yaml or .yml name"
        )
    if target.is_dir():
        raise UsageError(f"specgate init: {args.path} is a folder; give a file name")
    try:
        # deploy/chat.specgate.yaml in a fresh repository: the folders are made.
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"specgate init: cannot make the folder {target.parent}: {exc.strerror or exc}"
        ) from None
    try:
        with target.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(read_data("starter-claims.yaml"))
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
    from specgate.rules.docs import render_rule, render_rules

    if args.rule:
        out.write(render_rule(args.rule, args.format))
    else:
        out.write(render_rules(args.format))
    return EXIT_OK


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, out: TextIO) -> int:
    """Run the command ``args`` names; its exit code."""
    if args.command is None:
        parser.print_help(out)
        return EXIT_USAGE
    if args.command == "check":
        return _run_check(args, out)
    if args.command == "doctor":
        return _run_doctor(args, out)
    if args.command == "schema":
        from specgate.model.validate import schema_text

        out.write(schema_text())
        return EXIT_OK
    if args.command == "init":
        return _run_init(args, out)
    if args.command == "digest":
        return _run_digest(args, out)
    if args.command == "measure":
        return _run_measure(args, out)
    return _run_rules(args, out)


def _abandon(out: TextIO) -> None:
    """Drop what ``out`` could not write: when it is standard output and still cannot
    be flushed, point its descriptor at the null device, so that Python's flush at exit
    does not fail again (and turn the exit code into 120)."""
    try:
        out.flush()
    except OSError:
        if out is sys.stdout:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, out.fileno())
            os.close(null)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (never raises, never prints a traceback)."""
    if stdout is None:
        _utf8_streams()
    out = stdout or sys.stdout
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=command_of(words))
    try:
        code = _dispatch(parser, _parse(parser, words), out)
        out.flush()  # a full disk or a failing stream shows here, not after exit
        return code
    except SpecgateError as exc:
        say(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # Every file specgate reads or writes turns its errors into input or usage
        # errors; an OSError that gets here is the output stream (a full disk behind
        # `> file`, a closed terminal) or the machine failing, not a bug.
        _abandon(out)
        say(f"input/output error: {exc.strerror or exc}")
        return EXIT_USAGE
    except Exception as exc:
        say(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
