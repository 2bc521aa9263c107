"""``podman-compose run`` and ``podman compose run`` command lines.

podman-compose is Python and parses its command line with argparse
(``containers/podman-compose:podman_compose.py@v1.6.0``, ``PodmanCompose._parse_args``:
the global parser, then one subparser per command). Its global options and its ``run``
options are data (``container-runners.json`` ``argparse``, recorded with ``ast`` by
``scripts/record_runner_options.py``), and :func:`read_podman_compose` builds the same
argparse parsers from them, so the words are read by the parser podman-compose itself
uses (abbreviated long options, ``-eA=1``, options after options), never by a copy of
its rules. ``-h`` is a refusal here (argparse would print help and exit).

``podman compose ARGS`` (``cmd/podman/compose.go@v5.8.2``, ``DisableFlagParsing``)
passes ARGS to an external provider the machine chooses: docker-compose when installed,
else podman-compose. :func:`podman_compose_args` gives those ARGS; the caller reads
them both ways and settles only what both readings agree on.
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Sequence
from functools import cache
from typing import Any, NoReturn

from specgate.core.data import read_data
from specgate.inputs.runners import RunnerLaunch, global_tables, options_until_word

RUNNER = "podman-compose run"


class _Refused(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise _Refused(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _Refused(message or f"exit {status}")


def _add(parser: argparse.ArgumentParser, spec: dict[str, Any]) -> None:
    flags = spec["flags"]
    kwargs: dict[str, Any] = {"action": spec["action"]}
    if spec["nargs"] is not None:
        kwargs["nargs"] = spec["nargs"]
    if not flags[0].startswith("-"):
        parser.add_argument(flags[0], **kwargs)
    else:
        parser.add_argument(*flags, **kwargs)


@cache
def _table() -> dict[str, Any]:
    data = json.loads(read_data("container-runners.json"))
    table: dict[str, Any] = data["argparse"][0]
    return table


@cache
def _parser() -> _Parser:
    table = _table()
    main = _Parser(prog="podman-compose", add_help=False, allow_abbrev=True)
    main.add_argument("-h", "--help", action="store_true", dest="main_help")
    for spec in table["globals"]:
        _add(main, spec)
    commands = main.add_subparsers(dest="command", parser_class=_Parser)
    run = commands.add_parser("run", add_help=False)
    run.add_argument("-h", "--help", action="store_true")
    for spec in table["run"]:
        _add(run, spec)
    return main


def source() -> str:
    """The recorded source, ``repo:file@tag``."""
    recorded = _table()["source"]
    return f"{recorded['repo']}:{','.join(recorded['files'])}@{recorded['tag']}"


def read_podman_compose(words: Sequence[str]) -> RunnerLaunch | None:
    """``words`` (``podman-compose …``) read by podman-compose's own argparse parsers:
    a ``run`` launch, unsettled when argparse refuses the words or ``-h`` is given;
    None when the words run another command."""
    if not words or words[0].rsplit("/", 1)[-1] != "podman-compose" or "run" not in words:
        return None
    try:
        args = _parser().parse_args(list(words[1:]))
    except _Refused as refused:
        return _unsettled(f"podman-compose refuses the words: {refused}")
    if args.command != "run":
        return None
    if args.help or args.main_help:
        return _unsettled("podman-compose -h prints help")
    tail = list(args.cnt_command or [])
    at = len(words) - len(tail) - 1
    if words[at] != args.service or list(words[at + 1:]) != tail:
        return _unsettled("podman-compose run: the service word is not located")
    try:
        entrypoint = tuple(shlex.split(args.entrypoint)) if args.entrypoint else None
    except ValueError:
        return _unsettled("podman-compose run --entrypoint cannot be split as shlex splits it")
    env = list(args.env or [])
    if any("=" not in item for item in env):
        # compose_run_update_container_from_args: dict(each.split("=", 1)) fails
        return _unsettled("podman-compose run -e NAME without a value stops podman-compose")
    options = tuple(("env", item) for item in env)
    globals_read = tuple(("file", item) for item in args.file or ())
    if args.env_file is not None:
        globals_read += (("env-file", args.env_file),)
    return RunnerLaunch(
        RUNNER, args.service, at, tuple(tail) or None, entrypoint, options, None, source(),
        (at,) * len(options), globals_read,
    )


def _unsettled(reason: str) -> RunnerLaunch:
    return RunnerLaunch(RUNNER, None, None, None, None, (), reason, source())


def podman_compose_args(words: Sequence[str]) -> tuple[str, ...] | None:
    """The words ``podman [GLOBALS] compose`` passes to its compose provider, or None
    when ``words`` are no ``podman compose`` (or podman refuses a global)."""
    if not words or words[0].rsplit("/", 1)[-1] != "podman":
        return None
    read: list[tuple[str, str | None, int]] = []
    try:
        at = options_until_word(global_tables()["podman"], words, 1, read)
    except ValueError:
        return None
    if at >= len(words) or words[at] != "compose":
        return None
    return tuple(words[at + 1:])
