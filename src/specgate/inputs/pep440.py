"""PEP 440 version specifiers over the releases an engine's data lists
(docs/engines.md#versions): what pip admits of them, so a requirement settles a release
only where pip would install it.

The listed releases are final releases and post-releases (``0.4.4``, ``0.4.4.post4``; a
:data:`specgate.inputs.knowledge.Version` tuple whose post number is kept as
``POST_BASE + N``). A clause's version may be any PEP 440 version (epoch, pre-, post-,
dev-release, local label), compared as PEP 440 orders them ("Version specifiers": zero
padding, ``==X.*`` prefix matching, ``~=``, ``>V`` admitting no post-release of V,
``===`` string equality). A clause pip refuses (``~=1``, ``>=1.*``, a version that is
not PEP 440) tests nothing: :func:`clause_test` returns None.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from specgate.inputs.knowledge import Version, format_version

#: PEP 440's version form (its appendix regex, as the ``packaging`` library spells it).
_PEP440 = re.compile(
    r"^\s*v?(?:(?P<epoch>[0-9]+)!)?(?P<release>[0-9]+(?:\.[0-9]+)*)"
    r"(?:[-_.]?(?P<pre_l>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>[0-9]+)?)?"
    r"(?:-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$",
    re.IGNORECASE,
)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_INF = float("inf")

#: (epoch, release without trailing zeros, pre, post, dev, has a local label): PEP 440's
#: order (the ``packaging`` library's comparison key, local labels aside).
Key = tuple[int, tuple[int, ...], tuple[float, float], float, float, bool]


class _Parsed:
    """A PEP 440 version: its release numbers, its order key, whether it is a post-release."""

    def __init__(self, match: re.Match[str]) -> None:
        self.release = tuple(int(p) for p in match["release"].split("."))
        post_n = match["post_n1"] or match["post_n2"]
        self.post = int(post_n or 0) if (match["post_n1"] or match["post_l"]) else None
        self.local = match["local"] is not None
        #: an epoch and a release alone (what a ``==X.*`` prefix may hold)
        self.plain = not any(match[g] for g in ("pre_l", "post_n1", "post_l", "dev_l", "local"))
        trimmed = self.release
        while len(trimmed) > 1 and trimmed[-1] == 0:
            trimmed = trimmed[:-1]
        dev = float(match["dev_n"] or 0) if match["dev_l"] else _INF
        if match["pre_l"]:
            pre = (float(_PRE[match["pre_l"].lower()]), float(match["pre_n"] or 0))
        elif dev != _INF and self.post is None:
            pre = (-_INF, -_INF)  # a dev release sorts before its pre-releases
        else:
            pre = (_INF, _INF)
        post = float(self.post) if self.post is not None else -_INF
        self.key: Key = (int(match["epoch"] or 0), trimmed, pre, post, dev, self.local)


def _parse(text: str) -> _Parsed | None:
    match = _PEP440.match(text)
    return _Parsed(match) if match is not None else None


def _candidate(version: Version) -> _Parsed:
    """A listed release as PEP 440 reads it (its text is :func:`format_version`'s)."""
    parsed = _parse(format_version(version))
    if parsed is None:  # pragma: no cover - a listed release always parses
        raise ValueError(version)
    return parsed


def _cut(key: Key) -> tuple[int, tuple[int, ...], tuple[float, float], float, float]:
    return key[:5]


def _prefix(spec: _Parsed, candidate: _Parsed) -> bool:
    """``==spec.*``: the candidate's epoch is the spec's and its release, zero padded to
    the spec's length, starts with the spec's (a candidate's post-release counts with
    its release)."""
    size = len(spec.release)
    padded = (*candidate.release, *(0,) * max(0, size - len(candidate.release)))
    return candidate.key[0] == spec.key[0] and padded[:size] == spec.release


def clause_test(op: str, text: str) -> Callable[[Version], bool] | None:
    """The test a PEP 440 clause ``op text`` puts on a listed release, None when pip
    refuses the clause."""
    if op == "===":
        wanted = text.strip().lower()
        return lambda v: format_version(v).lower() == wanted
    prefix = text.endswith(".*")
    spec = _parse(text[:-2] if prefix else text)
    if spec is None or (prefix and (op not in ("==", "!=") or not spec.plain)):
        return None  # ``==X.*`` takes an epoch and a release only
    if spec.local and op not in ("==", "!="):
        return None
    if prefix:
        if op == "==":
            return lambda v: _prefix(spec, _candidate(v))
        return lambda v: not _prefix(spec, _candidate(v))
    if op == "~=":
        if len(spec.release) < 2:
            return None
        head = _parse(".".join(str(p) for p in spec.release[:-1]))
        assert head is not None
        return lambda v: _cut(_candidate(v).key) >= _cut(spec.key) and _prefix(head, _candidate(v))
    if op in ("==", "!="):
        # a spec without a local label ignores the candidate's (the listed have none)
        def equal(v: Version) -> bool:
            return _candidate(v).key == spec.key

        return equal if op == "==" else (lambda v: not equal(v))
    tests: dict[str, Callable[[Version], bool]] = {
        ">=": lambda v: _cut(_candidate(v).key) >= _cut(spec.key),
        "<=": lambda v: _cut(_candidate(v).key) <= _cut(spec.key),
        "<": lambda v: _cut(_candidate(v).key) < _cut(spec.key),
        # >V admits no post-release of V unless V is one (PEP 440 "Exclusive ordered
        # comparison"); the listed releases have no local label
        ">": lambda v: _cut(_candidate(v).key) > _cut(spec.key)
        and not (spec.post is None and _candidate(v).post is not None
                 and _candidate(v).key[:2] == spec.key[:2]),
    }
    return tests.get(op)

