"""``specgate digest``: each deployment's config digest, one line ``PATH:NAME sha256:…``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from specgate.cli.commands import COMMANDS
from specgate.cli.output import EXIT_OK, EXIT_USAGE, say

if TYPE_CHECKING:
    from specgate.cli.args import Parser


def add_parser(sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
    """``digest``'s parser (it has no option that costs to build, so ``full`` changes
    nothing)."""
    digest = sub.add_parser(
        "digest",
        help=COMMANDS["digest"][1],
        description="Print the config digest of every deployment (one line each: "
        "PATH:NAME sha256:…), the value evidence.provenance.config_digest records.",
    )
    digest.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="claims files or folders to search (default: the current folder)",
    )



def run(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate digest``: one line per deployment, ``PATH:NAME sha256:…``."""
    from specgate.check.run import CheckOptions, check_files
    from specgate.project.discovery import discover
    from specgate.reporters.safe_text import visible

    run = check_files(discover(args.paths), CheckOptions())
    code = EXIT_OK
    lines = []
    for file in run.files:
        if file.error is not None:
            say(file.error)
            code = EXIT_USAGE
            continue
        for deployment in file.deployments:
            name = visible(f"{file.path}:{deployment.name}")
            lines.append(f"{name} {deployment.config_digest}\n")
    out.write("".join(lines))
    return code
