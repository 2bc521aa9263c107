"""The command line's entry point: ``specgate COMMAND …`` (the console script) and
``python -m specgate``.

The CLI only wires: it parses arguments, runs the subcommand its table names, and the
subcommand asks a reporter for text and only then writes streams and files. Exit
codes: 0 clean, 1 the run's status reaches ``--fail-on``, 2 usage or input error,
3 internal error.
"""

from __future__ import annotations

import specgate.cli.gc_tune  # noqa: F401 - first: tunes the collector for the imports below

# isort: split
import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from specgate.cli.output import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, say
from specgate.cli.parser import build_parser, command_module, command_of, parse
from specgate.core.errors import SpecgateError


def _utf8_streams() -> None:
    """Standard output and error write UTF-8 whatever the locale (a cp1252 console
    must not crash on ρ); text that cannot be encoded (lone surrogates from
    undecodable file names) is written as backslash escapes."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:  # noqa: SIM105 - contextlib.suppress would import contextlib (0.5 ms)
                reconfigure(encoding="utf-8", errors="backslashreplace")
            except (OSError, ValueError):  # a detached stream
                pass


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, out: TextIO) -> int:
    """Run the command ``args`` names (:data:`~specgate.cli.commands.COMMANDS`); its exit
    code."""
    if args.command is None:
        parser.print_help(out)
        return EXIT_USAGE
    return command_module(args.command).run(args, out)


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
    if out is None:  # `specgate … >&-`: Python has no standard output at all
        say("input/output error: standard output is closed")
        return EXIT_USAGE
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=command_of(words))
    try:
        try:
            args = parse(parser, words)
        except SystemExit as exc:  # argparse's --help / --version, or its usage error
            out.flush()  # help written to a full disk is an error, not exit 0
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        code = _dispatch(parser, args, out)
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


def entry() -> None:
    """The console script and ``python -m specgate``: :func:`main`, then leave at once.

    Once standard output and error are flushed nothing is left to do, so the process
    exits without the interpreter's teardown (freeing every module and object, a tenth
    of a one-file check; mypy leaves the same way, ``mypy.util.hard_exit``). Nothing
    is lost: every file a command writes is closed when the command returns, and no
    ``atexit`` hook or non-daemon thread exists. When a flush fails the normal exit
    runs instead, so Python reports the failure as it always did (exit code 120).
    """
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        sys.exit(code)
    os._exit(code)
