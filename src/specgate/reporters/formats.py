"""Output formats by name: ``check --format NAME`` renders with the row ``NAME``.

Each row is ``render(run, options) -> str`` with no I/O; the reporter module is imported
when its row runs (SARIF's hashlib is no cost to text output). A new output format is
one reporter module and one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeAlias

    from specgate.check.report import RunReport

    #: A renderer: the report and the options in, the text out.
    Render: TypeAlias = Callable[[RunReport, "RenderOptions"], str]


class RenderOptions:
    """What the command line tells a reporter (a plain class: this module is read at
    every ``check`` start-up, and a NamedTuple class costs a compile of its own).

    ``repo_paths`` gives each shown path's repository-relative path (it looks at the
    file system, so the CLI supplies it and it runs only for the formats that need it);
    ``summary_written`` says a job summary is written in the same run (github);
    ``verbose`` shows each finding's details under it (text).
    """

    __slots__ = ("colour", "docs_url", "quiet", "repo_paths", "summary_written", "verbose")

    def __init__(
        self,
        repo_paths: Callable[[], Mapping[str, str | None]],
        *,
        colour: bool = False,
        quiet: bool = False,
        docs_url: str | None = None,
        summary_written: bool = False,
        verbose: bool = False,
    ) -> None:
        self.repo_paths = repo_paths
        self.colour = colour
        self.quiet = quiet
        self.docs_url = docs_url
        self.summary_written = summary_written
        self.verbose = verbose


def _text(run: RunReport, options: RenderOptions) -> str:
    from specgate.reporters import text

    return text.render(run, colour=options.colour, quiet=options.quiet, verbose=options.verbose)


def _json(run: RunReport, options: RenderOptions) -> str:
    from specgate.reporters import json_report

    return json_report.render(run)


def _github(run: RunReport, options: RenderOptions) -> str:
    from specgate.reporters import github

    return github.render(run, options.repo_paths(), summary_written=options.summary_written)


def _sarif(run: RunReport, options: RenderOptions) -> str:
    from specgate.reporters import sarif

    return sarif.render(run, options.repo_paths(), docs_url=options.docs_url)


#: ``--format`` name → renderer, in the order ``--help`` lists them.
FORMATS: dict[str, Render] = {"text": _text, "json": _json, "github": _github, "sarif": _sarif}
