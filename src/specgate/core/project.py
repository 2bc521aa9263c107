"""This project's own addresses: where a release's files live, once it is published.

The claims-file schema has a versioned URL for editors (the ``# yaml-language-server:
$schema=URL`` modeline, JetBrains' ``# $schema: URL``): the schema file as tagged in
this project's repository,

    https://raw.githubusercontent.com/<REPOSITORY>/v<version>/src/specgate/data/claims-v1.schema.json

which exists as soon as the release tag ``v<version>`` is pushed; a file's modeline
keeps naming the schema of the release it was written for. ``REPOSITORY`` is set when the
repository is published (the release workflow refuses a tag pushed anywhere else); until
then there is no URL to promise, and ``specgate schema`` / ``specgate init`` say how to
use a saved copy instead.
"""

from __future__ import annotations

from specgate import __version__

#: ``owner/name`` of this project's GitHub repository, or ``None`` while it is unpublished.
REPOSITORY: str | None = None
#: The schema file's path in the repository (and in a source checkout).
SCHEMA_PATH = "src/specgate/data/claims-v1.schema.json"


def schema_url(version: str = __version__, repository: str | None = None) -> str | None:
    """The versioned schema URL of release ``version`` (``None`` while no repository is
    published). ``repository`` defaults to :data:`REPOSITORY`."""
    where = repository if repository is not None else REPOSITORY
    if where is None:
        return None
    return f"https://raw.githubusercontent.com/{where}/v{version}/{SCHEMA_PATH}"


def repository_url() -> str | None:
    """``https://github.com/<REPOSITORY>``, or ``None`` while unpublished."""
    return None if REPOSITORY is None else f"https://github.com/{REPOSITORY}"
