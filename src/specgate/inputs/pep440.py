"""PEP 440 version specifiers over the releases an engine's data lists
(docs/engines.md#versions): what pip admits of them, so a requirement settles a release
only where pip would install it.

The clause is read by the ``packaging`` library, the implementation pip itself vendors
("Version specifiers": zero padding, ``==X.*`` prefix matching, ``~=``, ``>V`` admitting
no post-release of V, ``===`` string equality). The listed releases are final releases and
post-releases (``0.4.4``, ``0.4.4.post4``), given to it as :func:`format_version` spells
them. A clause pip refuses (``~=1``, ``>=1.*``, a version that is not PEP 440) tests
nothing: :func:`clause_test` returns None.
"""

from __future__ import annotations

from collections.abc import Callable

from specgate.inputs.knowledge import Version, format_version


def clause_test(op: str, text: str) -> Callable[[Version], bool] | None:
    """The test a PEP 440 clause ``op text`` puts on a listed release, None when pip
    refuses the clause."""
    from packaging.specifiers import InvalidSpecifier, Specifier

    try:
        spec = Specifier(f"{op}{text.strip()}")
    except InvalidSpecifier:
        return None
    return lambda v: spec.contains(format_version(v), prereleases=True)
