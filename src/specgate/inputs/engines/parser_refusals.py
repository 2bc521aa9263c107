"""The engine's recorded command-line parser as judge of the words a command spells
(docs/engines.md#flag-spellings): the ones it refuses, at the version in force, and with
the version not pinned, whether every release the settings allow refuses them
(docs/engines.md#versions)."""

from __future__ import annotations

from specgate.inputs.knowledge import EngineKnowledge, Version, format_version, parse_version
from specgate.inputs.parsers import recorded_parser
from specgate.inputs.types import IssueSeverity
from specgate.inputs.version import EngineVersion
from specgate.load.document import Span


def parser_issues(
    data: EngineKnowledge,
    words: list[tuple[str, Span]],
    found: EngineVersion,
    allowed: tuple[Version | None, Version] | None = None,
) -> list[tuple[str, Span, str, IssueSeverity | None, str]]:
    """(spelled, span, message, severity, next action) for each word the engine's parser
    refuses:
    an abbreviation of several flags ("ambiguous option") or of none ("unrecognized
    arguments"), by the parser recorded at the version in force (a fail); at a version
    whose parser was not recorded, by the nearest recorded one at or before it
    (``EngineKnowledge.parser_version_at``; the newest when the version is not known):
    a warn, as the parser may differ there. With the version not known, a fail when
    every release the settings allow (``allowed``: the oldest, None when unbounded, and
    the newest) lies within the recorded parsers and each of them refuses it
    (docs/engines.md#versions)."""
    at = data.parser_version_at(found.version)
    if not words or at is None:
        return []

    stated = format_version(found.version) if found.version is not None else None
    parser = recorded_parser(data.engine, at)
    severity: IssueSeverity | None = None if at == stated else "warn"
    unsure = "" if severity is None else (
        f" (the parser recorded at {at}; the version run is "
        f"{'not known' if stated is None else stated}, whose parser may differ)"
    )
    out: list[tuple[str, Span, str, IssueSeverity | None, str]] = []
    for spelled, span in words:
        answer, matches = parser.read(spelled)
        if answer in ("flag", "positional"):
            continue
        everywhere = stated is None and allowed is not None and _refused_throughout(
            data, spelled, *allowed
        )
        if answer == "ambiguous":
            shown = ", ".join(matches[:8]) + (", …" if len(matches) > 8 else "")
            said = f"ambiguous option: {spelled} could match {shown}"
            why = "an abbreviation of several of its flags"
            action = f"Spell {spelled} out in full as the one flag meant (one of {shown})."
        else:
            said = f"unrecognized arguments: {spelled}"
            why = "no flag of its parser, nor a unique abbreviation of one"
            action = (
                f"Remove {spelled}: {data.display_name} {at} has no such flag and no "
                "replacement for it (spell a flag its parser has)."
            )
        out.append((
            spelled,
            span,
            f"{data.display_name} {at} refuses to start: {spelled} is {why} "
            f"('error: {said}'; {parser.source})"
            + (f" (refused by every recorded parser the settings allow, {everywhere})"
               if everywhere else unsure),
            None if everywhere else severity,
            action,
        ))
    return out


def _refused_throughout(
    data: EngineKnowledge, word: str, low: Version | None, high: Version
) -> str:
    """``"0.28.0 to 0.33.0"`` when the recorded parser standing for every release of
    ``[low, high]`` refuses ``word`` (the recorded one at or before ``low``, and each
    recorded after it up to ``high``), else ``""``: ``low`` None or older than the oldest
    recorded parser reaches releases whose parser is not known."""
    if low is None or not data.parser_versions:
        return ""
    releases = [(parse_version(v) or (), v) for v in data.parser_versions]
    if low < releases[0][0]:
        return ""
    start = max(v for v, _ in releases if v <= low)
    span = [text for v, text in releases if start <= v <= high]
    if not span or any(
        recorded_parser(data.engine, text).read(word)[0] in ("flag", "positional")
        for text in span
    ):
        return ""
    return f"{span[0]} to {span[-1]}"
