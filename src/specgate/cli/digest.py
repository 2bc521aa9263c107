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
        "PATH:NAME sha256:…), the value evidence.provenance.config_digest records; or, "
        "with --chat-template, the digest of a chat template. A digest is 'sha256:' and "
        "the first 16 hex digits (the first 64 bits) of a SHA-256: of the canonical JSON of "
        "the ten fields of the speculative configuration, or of the template's text with LF "
        "line endings.",
    )
    digest.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="claims files or folders to search (default: the current folder)",
    )
    digest.add_argument(
        "--chat-template",
        action="append",
        default=[],
        metavar="FILE",
        help="print the digest of a chat template instead (a .jinja file, or the "
        "chat_template of a tokenizer_config.json): the value workload.chat_template and "
        "evidence.provenance.chat_template record; repeatable",
    )

def run(args: argparse.Namespace, out: TextIO) -> int:
    """``specgate digest``: one line per deployment, ``PATH:NAME sha256:…`` (with
    ``--chat-template``, one line per template file, ``FILE sha256:…``)."""
    if args.chat_template:
        return _templates(args, out)
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


def _templates(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from specgate.core.errors import InputError, UsageError
    from specgate.inputs.chat_template import read_template, template_digest
    from specgate.reporters.safe_text import visible

    if args.paths:
        raise UsageError("specgate digest: --chat-template takes no claims paths")
    lines = []
    code = EXIT_OK
    for name in args.chat_template:
        # each file on its own: one that gives no template is its line on stderr (exit 2),
        # and the digests of the others are still printed
        try:
            lines.append(f"{visible(name)} {template_digest(read_template(Path(name), name))}\n")
        except InputError as exc:
            say(exc.one_line())
            code = EXIT_USAGE
    out.write("".join(lines))
    return code
