"""``specgate rules``: the rule catalogue, or one rule's doc (:mod:`specgate.rules.docs`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from specgate.cli.commands import COMMANDS
from specgate.cli.output import EXIT_OK

if TYPE_CHECKING:
    from specgate.cli.args import Parser


def add_parser(sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
    """``rules``'s parser (it has no option that costs to build, so ``full`` changes
    nothing)."""
    rules = sub.add_parser(
        "rules",
        help=COMMANDS["rules"][1],
        description="List the rule catalogue, or print one rule's doc.",
    )
    rules.add_argument("rule", nargs="?", metavar="CODE_OR_NAME", help="e.g. SG104")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def run(args: argparse.Namespace, out: TextIO) -> int:
    from specgate.rules.docs import render_rule, render_rules

    if args.rule:
        out.write(render_rule(args.rule, args.format))
    else:
        out.write(render_rules(args.format))
    return EXIT_OK
