"""Argument value types and the parser classes every subcommand shares.

Each type turns one flag's text into a value or raises ``argparse.ArgumentTypeError``
(argparse words it as a usage error, exit 2); the bounds are the claims file's
(:mod:`specgate.core.limits`), so the flags accept what a claims file may hold.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from specgate.core.errors import UsageError

if TYPE_CHECKING:
    import datetime

    from _typeshed import SupportsWrite


def positive_float(
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


class Written(float):
    """A number flag's value with half a unit of the last digit it was written with
    (``"1.6"`` → 0.05; ``None`` when not a plain decimal), so that ``specgate doctor``
    reads a speedup's precision as ``check`` reads the claims file's text
    (:func:`specgate.core.numbers.half_unit`)."""

    half_unit: float | None = None


def as_written(parse: Callable[[str], float]) -> Callable[[str], Written]:
    """An argparse type: ``parse``'s number, keeping the precision of its text."""

    def number(text: str) -> Written:
        from specgate.core.numbers import half_unit

        value = Written(parse(text))
        value.half_unit = half_unit(text)
        return value

    return number


def closed_set(choices: tuple[str, ...], what: str) -> Callable[[str], str]:
    """An argparse type: one of ``choices``, with did-you-mean on a typo."""

    def choice(text: str) -> str:
        if text in choices:
            return text
        from specgate.core.suggest import hint

        raise argparse.ArgumentTypeError(
            f"{text!r} is not {what} ({', '.join(choices)}){hint(text, choices)}"
        )

    return choice


def count(text: str) -> int:
    """An argparse type: a whole number ≥ 0 (``4`` or ``4.0``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not value.is_integer() or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ≥ 0")
    return int(value)


def rates(text: str) -> tuple[float, ...]:
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


def iso_date(text: str) -> datetime.date:
    """An argparse type: a calendar date ``YYYY-MM-DD``."""
    import datetime

    try:
        return datetime.date.fromisoformat(text) if len(text) == 10 else _no_date(text)
    except ValueError:
        return _no_date(text)


def web_address(text: str) -> str:
    """An argparse type: an ``https://`` (or ``http://``) address without whitespace or
    control characters (``--docs-url``; the same test as ``[tool.specgate] docs-url``)."""
    if not text.startswith(("https://", "http://")) or any(
        c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text
    ):
        raise argparse.ArgumentTypeError(f"{text!r} is not an https:// address")
    return text


def _no_date(text: str) -> datetime.date:
    raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD")


def today_from(args: argparse.Namespace) -> datetime.date | None:
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
    import datetime

    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
    return moment.date()


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum] (one message for every way
    to miss it). The maxima are the claims file's (:mod:`specgate.core.limits`), so the
    doctor accepts what a claims file may hold and no more."""

    def whole(text: str) -> int:
        try:
            value = count(text)
        except argparse.ArgumentTypeError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"≥ {minimum}" if maximum is None else f"from {minimum} to {maximum:,}"
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number {bound}")
        return value

    return whole


positive_whole = whole_number(1)


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


class Formatter(argparse.HelpFormatter):
    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or _help_width())


class RawFormatter(Formatter, argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (examples keep their layout)."""


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """Write ``--help``/``--version`` text without argparse's silence on a failed
        write (it drops ``OSError``): a full disk behind ``> file`` is exit 2, not 0."""
        if message:
            (file or sys.stderr).write(message)
