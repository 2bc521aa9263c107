"""Exit codes and the channels a command writes to: standard error (one escaped line),
output files (atomic), appends (job summary, step outputs) under an exclusive lock.

The commands render first and write here only after rendering succeeded.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from specgate.core.errors import UsageError

if TYPE_CHECKING:
    from specgate.check.report import RunReport

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


FAIL_ON = ("fail", "actionable", "never")


def say(message: str) -> None:
    """Write ``specgate: message`` to standard error as one escaped line: text from the
    checked repository (a file name with a newline, a YAML tag with a CR) can neither
    break the line nor start a workflow command.

    Every line starts ``specgate: `` whichever subcommand says it (newuser-r4 #10: the
    prefixes were ``specgate:``, ``specgate rules:``, ``specgate init:`` …): a message
    that names its subcommand as its source (``specgate measure: …``, ``specgate check
    --staged: …``) loses that name, keeping any option after it (``specgate: --staged:
    …``). Input errors read ``specgate: FILE:LINE:COL: reason``, as the text report's
    line for an unreadable file does."""
    if sys.stderr is None:  # `2>&-`: nowhere to say it (print would pick stdout)
        return
    from specgate.reporters.safe_text import visible

    print(visible(one_style(message)), file=sys.stderr)


def one_style(message: str) -> str:
    """``message`` as every specgate error line is written: ``specgate: …``."""
    if message.startswith("specgate: "):
        return message
    if message.startswith("specgate "):
        rest = message[len("specgate ") :]
        word, _, after = rest.partition(" ")
        if word.endswith(":") and word[:-1].isalpha():  # "specgate measure: …"
            return f"specgate: {after}"
        if word.isalpha() and after.startswith("-"):  # "specgate check --staged: …"
            return f"specgate: {after}"
    return f"specgate: {message}"


def exit_for(status: str, fail_on: str) -> int:
    if status == "error":
        return EXIT_USAGE
    if fail_on == "fail" and status == "fail":
        return EXIT_FINDINGS
    if fail_on == "actionable" and status in ("actionable", "fail"):
        return EXIT_FINDINGS
    return EXIT_OK


def write_file(path: str, text: str) -> None:
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


def append(path: str, text: str) -> None:
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


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def append_summary(path: str, run: RunReport, notes: Sequence[str] = ()) -> None:
    """Append the job summary to ``path`` within what its 1 MiB budget leaves.

    Several steps (or parallel jobs sharing a file) may append at once: the file is
    locked exclusively (:func:`specgate.core.output_file.exclusive`), its size is
    read again under the lock, the summary is rendered for what remains and written
    in one write before the lock is released.

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
    from specgate.core.output_file import exclusive

    with handle, exclusive(handle):
        existing = os.fstat(handle.fileno()).st_size
        text = summary.render(
            run,
            max(summary.SUMMARY_LIMIT_BYTES - existing, 0),
            repo_paths=repo_paths(run),
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


def repo_paths(run: RunReport) -> dict[str, str | None]:
    from specgate.core.paths import repo_relative

    findings = run.all_findings(suppressed=True)
    shown = (
        {f.error_location_file for f in run.files}
        | {x.file for x in findings if x.file is not None}
        | {other for x in findings for other, _, _ in x.related}
    )
    return {s: repo_relative(s) for s in shown}
