"""The argument parser: each subcommand module adds its own subparser (``add_parser``),
in the order of :data:`COMMANDS`; an unknown option is reported by the subcommand it
was given to.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO, cast

from specgate import __version__
from specgate.cli.args import Parser, RawFormatter
from specgate.cli.commands import COMMANDS as COMMAND_TABLE
from specgate.core.errors import UsageError

if TYPE_CHECKING:  # a Protocol class costs every start-up; only mypy reads it
    from typing import Protocol

    class CommandModule(Protocol):
        """What every subcommand module offers (:data:`~specgate.cli.commands.COMMANDS`)."""

        def add_parser(self, sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
            """Add the subcommand's parser to ``sub``; its options only when ``full``."""

        def run(self, args: argparse.Namespace, out: TextIO) -> int:
            """Run the subcommand; its exit code."""


def command_module(name: str) -> CommandModule:
    """The module of subcommand ``name`` (imported now; by ``__import__``, which costs no
    import of :mod:`importlib` at start-up)."""
    module = COMMAND_TABLE[name][0]
    __import__(module)
    return cast("CommandModule", sys.modules[module])


_DESCRIPTION = """\
specgate checks speculative-decoding claims against theory.

A claims file states, per deployment, the draft length D, the measured accept
length AL (tokens per target step, bonus token included), the draft depth ratio
ρ (one draft pass's time over one target step's), the query heads per KV head
G, and the claimed speedup. specgate checks AL ∈ [1, 1 + D], claimed speedup ≤
AL / (β + ρ·passes) (β: the verify cost at the served concurrency; passes: draft
passes per step, D for a chain), AL against break-even, the attention tile rule
D* = floor(M/G) − 1 (M = 128 tile rows, 64 for multi-latent attention), and more
(`specgate rules`).
"""


def _subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(name)
            return found if isinstance(found, argparse.ArgumentParser) else None
    return None


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; an unknown option is reported by the subcommand it was given
    to, with the closest known option and that subcommand's ``--help``.

    Raises:
        UsageError: unknown options or bad values.
    """
    args, extras = parser.parse_known_args(argv)
    if not extras:
        return args
    import difflib

    command = getattr(args, "command", None)
    sub = _subcommand(parser, command) if command else None
    owner = sub or parser
    known = [o for action in owner._actions for o in action.option_strings]
    unknown = extras[0]
    hint = difflib.get_close_matches(unknown.split("=", 1)[0], known, n=1)
    suggestion = f"; did you mean {hint[0]}?" if hint else ""
    listed = " ".join(extras)
    raise UsageError(
        f"{owner.prog}: unrecognized arguments: {listed}{suggestion} (see {owner.prog} --help)"
    )


#: The subcommands, in the order ``--help`` lists them.
COMMANDS = tuple(COMMAND_TABLE)


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option, when that
    is a known command (``None`` otherwise). The top-level parser has only flags
    (``--help``, ``--version``), so that word is the one argparse dispatches on."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: the whole one by default (``--help`` of every command);
    with ``only``, every subcommand is listed with its help as usual but only that
    one gets its options (argparse builds a formatter for each option it adds, which
    every run would otherwise pay for the commands it does not run)."""
    parser = Parser(
        prog="specgate",
        description=_DESCRIPTION,
        formatter_class=RawFormatter,
    )
    parser.add_argument("--version", action="version", version=f"specgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    # The commands not run stand in argparse's map (its choices) with one parser that is
    # never initialised: argparse runs only the parser of the command named, which is
    # ``only``, and initialising even an empty parser costs its gettext look-ups.
    unused = Parser.__new__(Parser)
    for name, (_module, line) in COMMAND_TABLE.items():
        if only in (None, name):
            command_module(name).add_parser(sub, full=True)
            continue
        # Listed by its line alone (its module is not imported), as add_parser would
        # list it, with no parser of its own: each parser made costs its own gettext
        # look-ups and action registry (a fifth of a check's parser).
        sub._choices_actions.append(sub._ChoicesPseudoAction(name, (), line))
        sub._name_parser_map[name] = unused
    return parser
