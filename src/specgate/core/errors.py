"""Errors that end a file's check or a whole run with a one-line message.

``InputError`` is a file that cannot be read or parsed (exit 2); ``UsageError``
is a command line that makes no sense (exit 2). Both carry a message that is
printed as one line, never a traceback.
"""

from __future__ import annotations


class SpecgateError(Exception):
    """Base class of every error specgate reports as one line."""


class InputError(SpecgateError):
    """A file that cannot be read, decoded or parsed, or breaks an input limit.

    Attributes:
        file: the file's path as given (string), or ``None`` when no file is involved.
        line: 1-based line of the problem when known, else ``None``.
        column: 1-based column when known, else ``None``.
        reason: the message without the location prefix.
    """

    def __init__(
        self,
        reason: str,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.reason = reason.strip().replace("\n", " ")
        self.file = file
        self.line = line
        self.column = column
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """``file:line:col: reason`` with the parts that are known."""
        where = ""
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        return where + self.reason


class UnreadForm(InputError):
    """A file that parses, holding a value in a form specgate does not follow (a chart
    value its template prints as Go prints it, a template expression, a value the chart
    renders in a way not read here). Not the end of the run: a finding on the
    deployment that names the file, at the value's line (SG312); every other deployment
    and file is still checked. ``speculates``: whether the value may set speculation
    (unknown, so True: a deployment stating speculation off is not taken to agree)."""

    speculates = True


class LimitReached(InputError):
    """A reader reached one of its bounds (:mod:`specgate.core.limits`): the file is
    refused at the line where the bound was reached, never read differently past it.
    A reader that falls back on an input error (a wrapper's inner script it cannot
    split) must not fall back on this one."""


class OutOfBounds(InputError):
    """A number a serving config holds, read, but past a bound specgate judges within
    (a draft-token count above :data:`specgate.core.limits.MAX_DRAFT_LENGTH` or below
    what counts tokens): the file parses and the engine reads the number, so this
    is not the end of the run but a finding on the deployment at the value's line
    (SG315); every other deployment and file is still checked
    (docs/engines.md#out-of-bounds). ``what``: the setting as named (at most 60
    characters)."""

    def __init__(
        self, reason: str, file: str | None, line: int | None, *, what: str,
        column: int | None = None,
    ) -> None:
        super().__init__(reason, file, line, column)
        self.what = what[:60]


class RefusedValue(InputError):
    """A value a serving config holds that is not of the type its setting takes (an
    integer flag given ``four``, a JSON-valued flag holding text that is not JSON): the
    file parses, so this is not the end of the run but SG307 on the deployment at the
    value's line (docs/engines.md#refused-values); every other deployment and file is
    still checked. ``what``: the setting as named (at most 60 characters);
    ``value``: the value as read; ``details``: the evidence beside the message (where the
    engine's message was taken, how the version was judged); ``severity``: ``"fail"``
    where the engine's refusal of such a value is known at the version in force (then
    ``reason`` gives the engine's own message), else ``"warn"``; ``missing``: a flag
    that takes a value given none (``--max-model-len`` as the last word), ``value``
    then the flag as spelled; ``form``: with ``missing``, ``"dotted"`` when the word
    after the flag is one vLLM's ``FlexibleArgumentParser`` takes as a dotted argument
    (``-1.5``), ``"option"`` when argparse reads that word as an option,
    ``"repeated"`` for a flag given again where the parser refuses a repeat (TGI's
    clap), ``""`` otherwise (the last word, or a shell operator next)."""

    def __init__(
        self, reason: str, file: str | None, line: int | None, *, what: str,
        column: int | None = None, severity: str = "warn", value: object = None,
        details: str = "", missing: bool = False, form: str = "",
    ) -> None:
        super().__init__(reason, file, line, column)
        self.what = what[:60]
        self.severity = severity
        self.value = value
        self.details = details
        self.missing = missing
        self.form = form


class UnusableMeasurement(InputError):
    """A metrics file (``evidence.metrics``) that parses as its format, holding a value
    that cannot be used as a measurement: not the end of the run but SG316 on the
    deployments that use it, at the value's line; the deployment is judged without that
    measurement, and every other deployment and file is still checked
    (docs/engines.md#metrics-not-read). ``severity``: ``"fail"`` where the file holds a
    value its format forbids (a negative or fractional counter, a non-number where a
    count is required, counts no run can give); ``"warn"`` where it holds a form
    specgate does not read (records that cannot be pooled, no speculative counters
    found, a log of several configurations)."""

    def __init__(
        self, reason: str, file: str | None = None, line: int | None = None,
        column: int | None = None, *, severity: str = "fail",
    ) -> None:
        super().__init__(reason, file, line, column)
        self.severity = severity


class UsageError(SpecgateError):
    """A command line that specgate cannot act on (bad flag value, missing path)."""


class UnsettledValue(InputError):
    """A serving config value a launcher reader cannot settle, by where it is set.

    ``origin`` is ``"outside"`` when the value is the deployment's, set from outside
    the repository (an environment variable no file specgate reads assigns, a
    Compose ``${VAR}`` no ``.env`` or default fills in, the script's arguments
    ``$@``/``$1``, Python's ``os.environ``/``os.getenv``/``sys.argv``), and
    ``"repository"`` when the repository sets it in a way specgate does not follow
    (``$(…)``, a sourced file not read, ``eval``, a Python value computed by a
    call). ``what`` is the variable or expression as written (at most 60
    characters), ``source`` where a variable gets its value when that is elsewhere
    (``os.environ['DRAFT'], serve.py:4``; ``""`` when ``what`` says it), and
    ``reason`` the reader's full account. The check of the deployment goes on
    (docs/engines.md#unsettled-values): SG313 warns for the first, SG314 fails for
    the second; neither ends the run.
    """

    def __init__(
        self,
        reason: str,
        file: str | None,
        line: int | None,
        *,
        origin: str,
        what: str,
        column: int | None = None,
        source: str = "",
        otherwise: str = "",
    ) -> None:
        super().__init__(reason, file, line, column)
        self.origin = origin
        self.what = what[:60]
        self.source = source[:100]
        #: when ``what`` names variables any of which may be set (an ``envFrom``), what
        #: applies if none is (``llama.cpp's default D 16 at b7000 applies``); else ""
        self.otherwise = otherwise[:160]
