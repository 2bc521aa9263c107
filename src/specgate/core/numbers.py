"""How numbers are written in messages and reports (one place for all formats)."""

from __future__ import annotations

import math
from fractions import Fraction

#: From here on (in magnitude) numbers are written in scientific notation.
LARGE = 10**15
#: Below this magnitude a non-zero number would print as 0 at 4 decimals.
SMALL = 0.00005


def _scientific_int(value: int) -> str:
    """``1e+30``-style for an int of any size (float() would overflow past ~1e308)."""
    from decimal import Decimal

    mantissa, exponent = f"{Decimal(value):.3e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e+{int(exponent)}"


def fmt(value: float | int | Fraction) -> str:
    """A number for people: at most 4 decimals, no trailing zeros (``1.037``, ``3``).

    Magnitudes of 10^15 and more, and non-zero ones below 0.00005 (which 4 decimals
    would show as 0), are written in scientific notation with 4 significant digits
    (``1e+308``, ``1e-320``), never as a 309-digit integer; ``inf`` and ``nan`` as
    such.
    """
    if isinstance(value, bool):  # pragma: no cover - guarded by callers
        return str(value).lower()
    if isinstance(value, int):
        return str(value) if abs(value) < LARGE else _scientific_int(value)
    if isinstance(value, Fraction) and abs(value) >= LARGE:
        return _scientific_int(round(value))
    number = float(value)
    if not math.isfinite(number):
        return str(number)
    if abs(number) >= LARGE or (number != 0 and abs(number) < SMALL):
        return f"{number:.4g}".replace("e+0", "e+").replace("e-0", "e-")
    text = f"{number:.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def round4(value: float | int | Fraction) -> float | int:
    """The JSON form: rounded to 4 places; whole values are written as ints (``2``, not ``2.0``)."""
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return value.numerator
        value = float(value)
    rounded = round(value, 4)
    return int(rounded) if rounded.is_integer() else rounded


#: The largest power of ten a float holds (``10.0 ** 309`` overflows).
_LARGEST_POWER = 308


def half_unit(text: str) -> float | None:
    """Half a unit of the last digit ``text`` prints: the precision of a number as
    written. ``"253"`` → 0.5, ``"2.28"`` → 0.005, ``"2.50"`` → 0.005, ``"2.5e3"`` → 50,
    ``"1_000"`` → 0.5; ``None`` for text that is not a plain decimal number (hex, octal,
    ``.inf``, a quoted string's quotes) and for a unit past the largest float
    (``"1e400"``: the number itself is out of range, which the schema reports) or
    below the smallest (``"1e-400"``, ``"4e-324"``: it would read as 0, exact).

    Used so that a claim equal to the source's own rounding of a measured ratio is not
    called an excess (review real.md defect 3: 253/111 = 2.2793 printed as "2.28x").
    """
    body = text.strip().replace("_", "").lstrip("+-")
    mantissa, _, exponent = body.lower().partition("e")
    whole, dot, decimals = mantissa.partition(".")
    if not (whole + decimals).isdigit() or not (whole or decimals) or not whole.isascii():
        return None
    power = 0
    if exponent:
        sign = -1 if exponent.startswith("-") else 1
        digits = exponent.lstrip("+-")
        if not digits.isdigit() or not digits.isascii() or len(digits) > 3:
            return None
        power = sign * int(digits)
    places = len(decimals) if dot else 0
    if power - places > _LARGEST_POWER:  # 1e400: no float has such a unit (SG001 says why)
        return None
    unit = 0.5 * 10.0 ** (power - places)
    # 1e-400, 4e-324: the unit is below the smallest float and would read as 0, an
    # exact number; unknown instead
    return unit if unit > 0 else None
