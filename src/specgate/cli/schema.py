"""``specgate schema``: print the claims-file JSON Schema (draft 2020-12)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from specgate.cli.commands import COMMANDS
from specgate.cli.output import EXIT_OK

if TYPE_CHECKING:
    from specgate.cli.args import Parser


def add_parser(sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
    """``schema``'s parser (it has no option that costs to build, so ``full`` changes
    nothing)."""
    schema = sub.add_parser(
        "schema",
        help=COMMANDS["schema"][1],
        description="Print the claims-file JSON Schema (draft 2020-12). Its $id is the "
        "schema's versioned URL for editors once this project's repository is published "
        "(https://raw.githubusercontent.com/OWNER/REPO/vX.Y.Z/"
        "src/specgate/data/claims-v1.schema.json); until then, save it and point the "
        "modeline at the saved copy.",
    )
    schema.add_argument(
        "--url",
        action="store_true",
        help="print only the versioned schema URL of this release (exit 2 while none is "
        "published)",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Print the claims-file JSON Schema (its ``$id`` the versioned URL when known), or
    with ``--url`` that URL alone.

    Raises:
        UsageError: ``--url`` while no repository is published.
    """
    from specgate.core.project import schema_url
    from specgate.model.validate import schema_text

    url = schema_url()
    if args.url:
        if url is None:
            from specgate.core.errors import UsageError

            raise UsageError(
                "specgate schema --url: this build records no published repository, so "
                "there is no schema URL yet; save the schema (specgate schema > "
                "specgate.schema.json) and start the claims file with "
                "# yaml-language-server: $schema=./specgate.schema.json"
            )
        out.write(url + "\n")
        return EXIT_OK
    text = schema_text()
    if url is not None:
        text = text.replace('"$id": "urn:specgate:claims:v1"', f'"$id": "{url}"', 1)
    out.write(text)
    return EXIT_OK
