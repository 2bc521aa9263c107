"""A refusal's lifetime: the releases (or builds) an engine behaviour holds in, found
from the engine's git history, not only the releases its source was read at.

A check of an engine's data (``checks`` in ``specgate/data/engines/ENGINE.json``) may
carry ``lifetime``::

    "lifetime": {"first": "b2995", "first_after": "b1321",
                 "last": "b4094", "until": "b4295",
                 "source": {"repo": …, "file": …, "commit": …}}

``first``: the oldest version known to hold it; ``last``: the newest known to hold it
(absent: it still holds at the newest version specgate knows); ``first_after``: the
newest version known not to hold it yet; ``until``: the oldest version known no longer
to hold it. Between ``first_after`` and ``first``, and between ``last`` and ``until``,
the version's answer is not known (the commit that changed it lies there): the check
warns. Outside ``(first_after, until)`` it does not apply. ``source`` names the commit
the history was read at (the one that introduced or removed the behaviour).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from specgate.inputs.knowledge import EngineKnowledge, Version, parse_version, source_text

Held = Literal["holds", "absent", "unknown"]


@dataclass(frozen=True)
class Lifetime:
    """The versions a behaviour holds in (see the module doc); versions as integer
    tuples (``b4094`` → ``(4094,)``, ``4.45.0`` → ``(4, 45, 0)``)."""

    first: Version
    first_after: Version | None
    last: Version | None
    until: Version | None
    source: str

    @classmethod
    def from_data(cls, raw: Mapping[str, Any], source: str) -> Lifetime:
        """The lifetime of a data entry (already validated by the schema).

        Raises:
            ValueError: ``first`` is not a version, or the bounds are out of order
                (``first_after`` < ``first`` ≤ ``last`` < ``until``; ``first`` = ``last``:
                it held at that one release).
        """
        first = parse_version(str(raw["first"]))
        if first is None:
            raise ValueError(f"lifetime first {raw['first']!r} is not a version")
        life = cls(
            first=first,
            first_after=_version(raw.get("first_after")),
            last=_version(raw.get("last")),
            until=_version(raw.get("until")),
            source=source,
        )
        # first == last is a behaviour that held at exactly one release (or build): the
        # only bounds that may be equal; first_after and until are releases known not to
        # hold it, so they lie strictly outside [first, last]
        newest = life.last if life.last is not None else life.first
        if (
            (life.last is not None and life.last < life.first)
            or (life.first_after is not None and life.first_after >= life.first)
            or (life.until is not None and life.until <= newest)
        ):
            raise ValueError(f"lifetime bounds out of order: {raw}")
        return life

    def at(self, version: Version) -> Held:
        """Whether the behaviour holds at ``version``: ``holds`` in ``[first, last]``,
        ``absent`` at or below ``first_after`` and at or above ``until``, else
        ``unknown``.

        Example: first b2995, first_after b1321, last b4094, until b4295 →
        b3000 ``holds``, b2000 ``unknown``, b1000 ``absent``, b4200 ``unknown``.
        """
        if self.first_after is not None and version <= self.first_after:
            return "absent"
        if self.until is not None and version >= self.until:
            return "absent"
        if version >= self.first and (self.last is None or version <= self.last):
            return "holds"
        return "unknown"

    def throughout(self, low: Version | None, high: Version) -> bool:
        """Whether it holds at every version of ``[low, high]`` (``low`` None: no
        lower bound, so not every version)."""
        return low is not None and self.at(low) == "holds" and self.at(high) == "holds"


def behaviour_lifetime(data: EngineKnowledge, name: str) -> Lifetime | None:
    """The lifetime of the engine's behaviour ``name`` (``behaviours`` in its data);
    None when it states since/until instead.

    Raises:
        KeyError: no such behaviour in the data.
    """
    raw = data.behaviour(name).get("lifetime")
    return None if raw is None else Lifetime.from_data(raw, source_text(raw["source"]))


def behaviour_at(data: EngineKnowledge, name: str, version: Version | None) -> Held:
    """Whether the engine's behaviour ``name`` holds at ``version`` (None: the newest
    known): by its lifetime, ``holds``, ``absent`` or ``unknown`` (between a release
    known without it and the first known with it); a behaviour with since/until holds
    or is absent (:meth:`EngineKnowledge.behaves`).

    Raises:
        KeyError: no such behaviour in the data.
    """
    life = behaviour_lifetime(data, name)
    if life is None:
        return "holds" if data.behaves(name, version) else "absent"
    return life.at(data.newest if version is None else version)


def _version(text: object) -> Version | None:
    return parse_version(text) if isinstance(text, str) else None
