"""Run-wide check settings: what the command line and the configuration give every file."""

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import datetime
    from datetime import date

    from specgate.change.baseline import BaselineSource
else:  # a record's field types are evaluated when its class is made; a quoted one
    # costs a compile() (the first one ~1 ms), so these stand in for what is not imported
    BaselineSource = date = object


class CheckOptions(NamedTuple):
    """Run-wide settings: ``min_accept_length`` overrides every file's policy;
    ``today`` is the UTC date evidence age is judged against (``None``: the clock);
    ``baseline`` the base revision of ``--baseline`` (``None``: no comparison);
    ``select`` (when given) replaces the configuration's, ``ignore`` adds to it
    (the command line's ``--select``/``--ignore``); ``only_new`` (``--only-new``, with
    a baseline only) marks each finding ``new``/``unchanged``/``updated`` against the
    base revision and leaves the unchanged ones out of every status."""

    min_accept_length: float | None = None
    today: date | None = None
    baseline: BaselineSource | None = None
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    only_new: bool = False


def utc_today() -> "datetime.date":
    """Today's date in UTC."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).date()
