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
        help="where to write it (default: specgate.yaml); a folder (DIR/ or an existing "
        "one): DIR/specgate.yaml",
    )


#: The starter's lines on editor support while no schema URL is published.
_SAVED_COPY = (
    "# speculation.enabled are optional. For editor completion, save the schema with\n"
    "# `specgate schema > specgate.schema.json` and add this first line:\n"
    "#   # yaml-language-server: $schema=./specgate.schema.json\n"
)


def starter_text() -> str:
    """The starter claims file; once this project's repository is published, its first
    line is the modeline naming this release's schema URL (``core/project.py``)."""
    from specgate.core.data import read_data
    from specgate.core.project import schema_url

    text = read_data("starter-claims.yaml")
    url = schema_url()
    if url is None:
        return text
    text = text.replace(
        _SAVED_COPY,
        "# speculation.enabled are optional. The first line gives editors (VS Code's YAML\n"
        "# extension, JetBrains IDEs) the schema of the release that wrote this file.\n",
    )
    return f"# yaml-language-server: $schema={url}\n" + text


def run(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path
    shown = str(args.path)
    target = Path(shown)
    if shown.endswith(("/", "\\")) or target.is_dir():
        # a folder, named as one or existing: the starter goes in it
        target = target / "specgate.yaml"
        shown = str(target)
    if target.suffix.lower() not in (".yaml", ".yml"):
        raise UsageError(
            f"specgate init: {shown}: the starter is commented YAML; give a .yaml or .yml name"
        )
    if target.is_dir():
        raise UsageError(f"specgate init: {shown} is a folder; give a file name")
    try:
        # deploy/chat.specgate.yaml in a fresh repository: the folders are made.
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"specgate init: cannot make the folder {target.parent}: {exc.strerror or exc}"
        ) from None
    try:
        with target.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(starter_text())
    except FileExistsError:
        raise UsageError(f"specgate init: {shown} already exists (not overwritten)") from None
    except OSError as exc:
        raise UsageError(f"specgate init: cannot write {shown}: {exc.strerror}") from None
    out.write(
        f"wrote {shown}: replace the numbers with your measurements, then run "
        f"`specgate check {shown}`\n"
    )
    return EXIT_OK
