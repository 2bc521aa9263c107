"""Inline suppressions in a serving file: ``# specgate: ignore[SG314] -- reason``.

A finding about the serving config itself (the form or value specgate could not read:
SG312-SG315) sits on a line of the serving file, not of the claims file; the
team accepts it where it stands, in that file, with the claims file's directive
syntax and placement (:mod:`specgate.project.suppress`): after the text on the
finding's line, or alone on the line before it. A directive alone on the line before
a command covers the whole logical command: every line a trailing ``\\`` continues
(docs/reports.md#suppressions; a finding on the third line of a continued
``vllm serve`` is that command's). Shell, Python, YAML and ``.env`` files all take ``#``
comments; a JSON serving file has none (use ``ignore`` in the configuration).

A serving file is scanned when one of those findings points into it. A directive
there that names no rule is SG004 at its line, as in the claims file, and so is one
naming a rule that is not suppressible in a serving file (every other rule judges the
claims, and is suppressed in the claims file). A directive that suppresses nothing
is not reported in a serving file (it may serve another claims file that reads it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from specgate.core.errors import InputError
from specgate.core.findings import Finding
from specgate.load.document import Span

if TYPE_CHECKING:
    from specgate.project.suppress import Directive, InlineIgnores

#: The rules a directive in a serving file may suppress (docs/engines.md#unsettled-values;
#: the run's own copy, ``specgate.check.run._SERVING_CODES``, is held to it by a test).
SERVING_CODES = frozenset({"SG312", "SG313", "SG314", "SG315"})


class ServingIgnores:
    """The directives of the serving files a check's findings point into.

    ``claims``: the claims file as shown (its own directives are read elsewhere).
    ``bad``: the SG004 findings for the directives read so far that cannot apply.
    """

    def __init__(self, claims: str) -> None:
        self.claims = claims
        self._scanned: dict[str, InlineIgnores | None] = {}
        self.bad: list[Finding] = []

    def match(self, finding: Finding) -> Directive | None:
        """The serving-file directive that suppresses ``finding``, if any."""
        if finding.code not in SERVING_CODES or finding.file in (None, self.claims):
            return None
        assert finding.file is not None
        inline = self._scan(finding.file)
        return None if inline is None else inline.match(finding.code, finding.line)

    def reason(self, finding: Finding, allowed: Callable[[str], bool]) -> str | None:
        """Why a serving-file directive suppresses ``finding`` (``"inline: …"``), or
        None; ``allowed``: whether the base revision lets an inline directive silence
        the code (:meth:`specgate.change.base_policy.BaseGate.inline_allowed`)."""
        directive = self.match(finding)
        if directive is None or not allowed(finding.code):
            return None
        return "inline: " + (directive.reason or "no reason given")

    def _scan(self, file: str) -> InlineIgnores | None:
        if file in self._scanned:
            return self._scanned[file]
        self._scanned[file] = None
        if file.lower().endswith(".json"):
            return None
        from specgate.load.read import read_text

        try:  # the same bounded read as every reader's (1 MiB, UTF-8, no FIFO)
            text = read_text(Path(file), file)
        except InputError:
            return None
        if "specgate" not in text:
            return None
        from specgate.check.evaluate import make_finding
        from specgate.project.suppress import scan

        inline = scan(text)
        for bad in inline.bad:
            message = (
                f"ignore[{bad.reference}] {bad.reason}" if bad.reference
                else f"ignore {bad.reason}"
            )
            self.bad.append(make_finding("SG004", message, (), (file, Span(bad.line, bad.column))))
        for directive in inline.directives:
            if directive.code not in SERVING_CODES:
                self.bad.append(make_finding(
                    "SG004",
                    f"ignore[{directive.code}] cannot be suppressed in a serving file: only "
                    f"{', '.join(sorted(SERVING_CODES))} are (suppress it in the claims file)",
                    (),
                    (file, Span(directive.line, directive.column)),
                ))
        whole = _whole_commands(inline, text.splitlines())
        self._scanned[file] = whole
        return whole


def _continued(line: str) -> bool:
    """Whether ``line`` goes on on the next one: it ends in an odd run of backslashes
    (an even run is escaped backslashes) and is not a comment."""
    stripped = line.rstrip("\r")
    run = len(stripped) - len(stripped.rstrip("\\"))
    return run % 2 == 1 and not stripped.lstrip().startswith("#")


def _whole_commands(inline: InlineIgnores, lines: list[str]) -> InlineIgnores:
    """``inline`` with each directive alone on its line also covering the lines its
    command's trailing backslashes continue onto (docs/reports.md#suppressions)."""
    from dataclasses import replace

    extra: list[Directive] = []
    for directive in inline.directives:
        if directive.target == directive.line:
            continue  # after a value: its own line only
        target = directive.target
        while target <= len(lines) and _continued(lines[target - 1]):
            target += 1
            extra.append(replace(directive, target=target))
    if not extra:
        return inline
    by_line = {line: set(codes) for line, codes in inline.by_line.items()}
    for directive in extra:
        by_line.setdefault(directive.target, set()).add(directive.code)
    return replace(
        inline,
        directives=inline.directives + tuple(extra),
        by_line={line: frozenset(codes) for line, codes in by_line.items()},
    )
