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


def release_of(text: str) -> str | None:
    """The release a pre-release or development release is of (docs/engines.md#pre-releases),
    as PEP 440 orders it (``packaging``'s ``Version``: ``0.5.23rc0 < 0.5.23``):
    ``v0.11.0rc1`` → ``0.11.0``, ``0.5.23rc0`` → ``0.5.23``, ``1.0.0rc4.post1`` (a
    post-release of the candidate) → ``1.0.0``, ``0.4.4.post1.dev0`` → ``0.4.4.post1``.
    None for a final release or post-release, a version with an epoch, or a text that is
    not PEP 440 (``v0.5.3rc1-cu126``: the tag's release part is given, not the tag)."""
    from packaging.version import InvalidVersion, Version

    try:
        version = Version(text.strip())
    except InvalidVersion:
        return None
    if not version.is_prerelease or version.epoch:
        return None
    base = ".".join(str(part) for part in version.release)
    if version.pre is None and version.post is not None:  # a dev release of a post-release
        base += f".post{version.post}"
    return base
