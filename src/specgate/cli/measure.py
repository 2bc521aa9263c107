"""``specgate measure``: its flags, the measurement they name, and the evidence block
printed or written (:mod:`specgate.measure`)."""

from __future__ import annotations

import argparse
import datetime
from typing import TYPE_CHECKING, TextIO

from specgate.cli.args import (
    RawFormatter,
    count,
    iso_date,
    positive_float,
    positive_whole,
    today_from,
)
from specgate.cli.commands import COMMANDS
from specgate.cli.output import EXIT_OK, say
from specgate.core.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from specgate.cli.args import Parser
    from specgate.inputs.types import Acceptance

_MEASURE_EPILOG = """\
examples:
  specgate measure --metrics-url http://127.0.0.1:8000/metrics -- \\
      vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --num-prompts 200
  specgate measure --before bench/before.prom --after bench/after.prom \\
      --write specgate.yaml --deployment chat-8b-eagle3
  specgate measure --from bench/server.log --metrics-format vllm-log

exit codes: 0 evidence printed or written, 2 nothing measured (nothing written)
"""


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


def add_parser(sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
    """``measure``'s parser; its options only when ``full``."""
    measure = sub.add_parser(
        "measure",
        help=COMMANDS["measure"][1],
        description="Measure the accept length from an engine's counters (around a "
        "benchmark command, or from saved scrapes or files) and print the evidence block, "
        "or write it into a claims file.",
        epilog=_MEASURE_EPILOG,
        formatter_class=RawFormatter,
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
        type=count,
        metavar="D",
        help="the D the run drafted at, for data that does not state it (vLLM log lines "
        "without per-position rates, vLLM V0 counters); data that states D wins",
    )
    measure.add_argument(
        "--timeout",
        type=positive_float(0.0, strict=True),
        default=10.0,
        metavar="SECONDS",
        help="deadline for each whole scrape: connect, headers and body (default 10)",
    )
    measure.add_argument(
        "--labels",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="select one model's series of a shared scrape (repeatable); applies to "
        "--metrics-url, --before/--after and --from with --metrics-format vllm-prometheus",
    )
    measure.add_argument(
        "--save-dir",
        metavar="DIR",
        help="with --metrics-url: save both scrapes in DIR and point evidence.metrics at them",
    )
    measure.add_argument(
        "--concurrency",
        type=positive_whole,
        metavar="N",
        help="sequences decoding at once in the run",
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
        "--today", type=iso_date, metavar="YYYY-MM-DD", help="measured_at (default: today, UTC)"
    )
    measure.add_argument(
        "benchmark", nargs=argparse.REMAINDER, metavar="-- CMD", help="the benchmark command"
    )


def _measured(
    args: argparse.Namespace, folder: Path
) -> tuple[object, str, str, dict[str, object]] | None:
    """(Measurement, before text, after text, what the engine said about itself) of the
    source the flags name.

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
        from specgate.measure.engine_info import ask_vllm

        facts = ask_vllm(args.metrics_url, args.timeout, labels)  # the server that ran it
        if facts.notes:
            say(f"specgate measure: {'; '.join(facts.notes)} (the provenance records no more)")
        measurement = measure.Measurement(acceptance, measure.inline_profile(acceptance))
        return measurement, before, after, facts.provenance
    if command:
        raise UsageError("specgate measure: a command runs only with --metrics-url")
    if args.before is not None:
        if args.after is None:
            raise UsageError("specgate measure: --before needs --after")
        # confined like every file specgate reads: a scrape that is a symlink out of
        # the repository is neither read nor quoted in an error
        before = read_text(measure.confine(Path(args.before), "--before"), args.before)
        after = read_text(measure.confine(Path(args.after), "--after"), args.after)
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
        return measure.Measurement(acceptance, pointer), "", "", {}
    if args.metrics_format is None:
        raise UsageError("specgate measure: --from needs --metrics-format")
    if labels and args.metrics_format != "vllm-prometheus":
        raise UsageError(
            f"specgate measure: --labels selects series of a Prometheus scrape; "
            f"--metrics-format {args.metrics_format} has none"
        )
    acceptance = measure.from_file(
        Path(args.from_file), args.metrics_format, args.draft_length, labels
    )
    pointer = {
        "format": args.metrics_format,
        "path": measure.relative_to(Path(args.from_file), folder),
    }
    if labels:
        pointer["labels"] = labels
    from specgate.measure.engine_info import stated_in_file

    # the release the file states, recorded as a live engine's /version answer is
    facts = stated_in_file(
        measure.confine(Path(args.from_file), "--from"), args.from_file, args.metrics_format
    )
    if facts.notes:
        say(f"specgate measure: {'; '.join(facts.notes)}")
    return measure.Measurement(acceptance, pointer), "", "", facts.provenance


def _label(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageError(f"specgate measure: --labels {text!r} is not NAME=VALUE")
    return name, value


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate measure``: print the evidence block, or write it with ``--write``."""
    from dataclasses import replace
    from pathlib import Path

    from specgate.check.options import utc_today
    from specgate.measure import evidence as measure

    claims = _claims_flag(args)
    if args.write:
        _writer_available()  # before any benchmark runs
    flag = "--write" if args.write else "--claims"
    real_claims = measure.confine(Path(claims), flag) if claims else None
    folder = Path(claims).parent if claims else Path(".")
    digest, served = _digest_of(Path(claims), args.deployment) if claims else (None, None)
    if args.save_dir is not None:  # refused before the benchmark runs, not after
        measure.confine(Path(args.save_dir), "--save-dir", must_exist=False)
        probe = measure.relative_to(Path(args.save_dir) / "metrics.prom", folder)
        if claims and measure.outside_repository({"path": probe}, Path(claims)):
            raise UsageError(
                f"specgate measure: --save-dir {args.save_dir} is outside the repository of "
                f"{claims}, and check would refuse the metrics pointer; nothing measured"
            )
    today = today_from(args) or utc_today()
    found = _measured(args, folder)
    assert found is not None
    measurement, before, after, engine = found
    assert isinstance(measurement, measure.Measurement)
    _vouch(measurement.acceptance, args, served)
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
        measurement, today=today, concurrency=args.concurrency, digest=digest, engine=engine
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

        assert real_claims is not None
        note = write_evidence(real_claims, args.deployment, block)
        if note:
            say(note)
        out.write(f"wrote the evidence of {args.deployment} in {args.write}\n")
        return EXIT_OK
    out.write(measure.render(block))
    return EXIT_OK


def _vouch(acceptance: Acceptance, args: argparse.Namespace, served: int | None) -> None:
    """Refuse what ``check`` would fail as impossible (the same test, at the D the data
    states, else ``--draft-length``, else the deployment's served D), and say how much
    of the output came from steps that did not draft.

    Raises:
        InputError: the first impossible number.
    """
    from specgate.measure import evidence as measure

    if args.draft_length is not None or served is None:
        measure.plausible(acceptance, args.draft_length)
    else:
        measure.plausible(acceptance, served, f"the D {args.deployment} serves")
    note = measure.undrafted_note(acceptance)
    if note is not None:
        say(f"specgate measure: {note}")


def _writer_available() -> None:
    """``--write`` edits the file with ruamel.yaml (a core dependency): say so in one line,
    before a benchmark runs, when an installation lacks it.

    Raises:
        UsageError: ruamel.yaml cannot be imported.
    """
    try:
        import ruamel.yaml  # noqa: F401
    except ImportError:
        raise UsageError(
            "specgate measure --write needs ruamel.yaml, which this installation lacks: "
            "reinstall specdec-gate (it depends on ruamel.yaml), or pip install ruamel.yaml; "
            "nothing measured"
        ) from None


def _claims_flag(args: argparse.Namespace) -> str | None:
    """The claims file ``--write`` or ``--claims`` names, once the flags agree.

    Raises:
        UsageError: flags that do not go together.
    """
    claims: str | None = args.write or args.claims
    if args.write and args.claims and args.write != args.claims:
        raise UsageError("specgate measure: --write and --claims name different files")
    if (claims is None) != (args.deployment is None):
        raise UsageError("specgate measure: --write/--claims and --deployment go together")
    if args.after is not None and args.before is None:
        raise UsageError("specgate measure: --after needs --before")
    if args.save_dir is not None and args.metrics_url is None:
        raise UsageError("specgate measure: --save-dir applies to --metrics-url")
    return claims


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
