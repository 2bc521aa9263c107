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
    sub.add_parser(
        "schema",
        help=COMMANDS["schema"][1],
        description="Print the claims-file JSON Schema (draft 2020-12).",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Print the claims-file JSON Schema as shipped."""
    from specgate.model.validate import schema_text

    out.write(schema_text())
    return EXIT_OK
