"""How numbers are written in messages and reports (one place for all formats)."""

from __future__ import annotations

from fractions import Fraction


def fmt(value: float | int | Fraction) -> str:
    """A number for people: at most 4 decimals, no trailing zeros (``1.037``, ``3``)."""
    if isinstance(value, bool):  # pragma: no cover - guarded by callers
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    number = float(value)
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
