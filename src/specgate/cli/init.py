"""``specgate init``: write the commented starter claims file (refuses to overwrite)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from specgate.cli.commands import COMMANDS
from specgate.cli.output import EXIT_OK
from specgate.core.errors import UsageError

if TYPE_CHECKING:
    from specgate.cli.args import Parser


def add_parser(sub: argparse._SubParsersAction[Parser], *, full: bool) -> None:
    """``init``'s parser (it has no option that costs to build, so ``full`` changes
    nothing)."""
    init = sub.add_parser(
        "init",
        help=COMMANDS["init"][1],
        description="Write a starter claims file that shows every field with its unit, "
        "and (commented out) how to read them from the files you already commit: "
        "engine_config, hf_config, draft_hf_config and evidence.metrics. Missing folders "
        "are made. Refuses to overwrite an existing file.",
    )
    init.add_argument(
        "path",
        nargs="?",
        default="specgate.yaml",
        metavar="PATH",
        help="where to write it (default: specgate.yaml)",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from specgate.core.data import read_data
    target = Path(args.path)
    if target.suffix.lower() not in (".yaml", ".yml"):
        raise UsageError(
            f"specgate init: {args.path}: the starter is commented YAML; give a .yaml or .yml name"
        )
    if target.is_dir():
        raise UsageError(f"specgate init: {args.path} is a folder; give a file name")
    try:
        # deploy/chat.specgate.yaml in a fresh repository: the folders are made.
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"specgate init: cannot make the folder {target.parent}: {exc.strerror or exc}"
        ) from None
    try:
        with target.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(read_data("starter-claims.yaml"))
    except FileExistsError:
        raise UsageError(f"specgate init: {args.path} already exists (not overwritten)") from None
    except OSError as exc:
        raise UsageError(f"specgate init: cannot write {args.path}: {exc.strerror}") from None
    out.write(
        f"wrote {args.path}: replace the numbers with your measurements, then run "
        f"`specgate check {args.path}`\n"
    )
    return EXIT_OK
