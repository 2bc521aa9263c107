"""Which engine versions the settings used allow, SG310 at that version, and the
engine's own checks (docs/engines.md#versions, docs/engines.md#refusals-and-rewrites).

Every flag and key in the knowledge data has the versions it exists in (``since``,
``removed_in``; ``since_after`` and ``removed_after`` bound a change that was not
pinned to one release: between them its presence is not confirmed). The versions in
which every setting used exists form the **implied range**:

- version stated or detected: a setting the engine at that version does not have is
  SG310 fail (removed, or not yet added); one whose presence there is not confirmed
  warns;
- version unknown and the implied range not empty: the newest version confirmed to
  have every setting used is read (its defaults, its checks), and each removed setting
  is SG310 **warn**, naming the range and asking to pin ``speculation.engine_version``;
- no version has every setting used (a removed flag beside one added after it, or a
  spelling under the engine's own flag prefixes that no version has: llama.cpp's parser
  exits "invalid argument"): SG310 fail, whatever the version.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from specgate.inputs.cmdline import FlagSpec, canonical_flag
from specgate.inputs.engines._source import CommandSource, Opt, Options
from specgate.inputs.engines.checks import Fired, evaluate, view
from specgate.inputs.engines.model_override import lowered, model_override, overridden
from specgate.inputs.engines.model_override import reads_model_config as _reads_config
from specgate.inputs.engines.parser_refusals import parser_issues
from specgate.inputs.engines.vllm_facts import vllm_facts
from specgate.inputs.knowledge import (
    EngineKnowledge,
    Setting,
    Version,
    knowledge,
    replacement_clause,
    replacing,
    shown_version,
    value_recorded,
)
from specgate.inputs.types import (
    EngineConfig,
    EngineIssue,
    IssueSeverity,
    ModelShape,
    VersionInForce,
)
from specgate.inputs.version import EngineVersion
from specgate.load.document import Span


@dataclass(frozen=True)
class Used:
    """A setting the config uses, as spelled, where, and the versions it exists in."""

    setting: Setting
    spelled: str
    span: Span
    low: Version | None  # first version that may have it (after since_after, else since)
    sure_low: Version | None  # first version known to have it
    high: Version | None  # first version without it (removed_in)
    sure_high: Version | None  # last version known to have it


@dataclass(frozen=True)
class Implied:
    """The versions every setting used exists in: ``[low, high)`` (None: unbounded),
    ``newest``: the newest version known to have every one (what an unknown version
    is read as), ``empty``: no version has them all."""

    low: Version | None
    high: Version | None
    newest: Version | None
    empty: bool
    #: ``newest`` is a version known to have them (else the one just below ``high``)
    newest_known: bool = True

    def text(self, engine: str) -> str:
        """``b8942 or earlier`` / ``0.8.0 to 0.9.1`` / ``any version`` for messages."""
        if not self.newest_known and self.high is not None and not knowledge(engine).builds:
            start = f"from {shown_version(engine, self.low)} " if self.low is not None else ""
            return f"{start}before {shown_version(engine, self.high)}".strip()
        if self.newest is not None and self.low is not None:
            first, last = shown_version(engine, self.low), shown_version(engine, self.newest)
            return first if first == last else f"{first} to {last}"
        if self.newest is not None:
            return f"{shown_version(engine, self.newest)} or earlier"
        if self.low is not None:
            return f"{shown_version(engine, self.low)} or later"
        return "any version"

    def json(self, engine: str) -> dict[str, str | None]:
        """``{"from": …, "to": …, "newest_confirmed": …}`` for the JSON report."""
        return {
            "from": shown_version(engine, self.low) if self.low is not None else None,
            "before": shown_version(engine, self.high) if self.high is not None else None,
            "newest_confirmed": (
                shown_version(engine, self.newest)
                if self.newest is not None and self.newest_known
                else None
            ),
        }


def _below(version: Version) -> Version:
    """The version just before ``version`` (``b9518`` → ``b9517``; ``0.8.0`` → ``0.7.9999``)."""
    if version[-1] > 0:
        return (*version[:-1], version[-1] - 1)
    if len(version) > 1:
        return (*_below(version[:-1]), 9999)
    return version


def _last_with(
    data: EngineKnowledge, removed_after: Version | None, removed: Version | None
) -> Version | None:
    """The last release known to have a setting ``removed`` in a release: the one
    recorded (``removed_after``), else the release the registry served before
    ``removed`` (data ``releases``), else the build before it (llama.cpp's builds are
    numbered one by one); None when no release before it is known (vLLM 0.8.0 is the
    first listed: no ``0.7.9999`` is made up, docs/engines.md#versions)."""
    if removed_after is not None or removed is None:
        return removed_after
    if data.builds:
        return _below(removed)
    return data.release_before(removed)


def _next(version: Version) -> Version:
    return (*version[:-1], version[-1] + 1)


def used_settings(data: EngineKnowledge, opts: Options) -> list[Used]:
    """The settings of the data that ``opts`` uses (a variable stands for its flag)."""
    env_flags = data.env_flags()
    out: list[Used] = []
    for key, opt in opts.items():
        written = opt.spelled or key
        flag = env_flags.get(written)
        setting = data.setting(flag or written)
        if setting is None:
            continue
        since, after, removed = setting.exists(None if flag else written)
        out.append(
            Used(
                setting,
                written if flag is None else f"{written} (the variable of {flag})",
                opt.name_span or opt.span,
                low=_first_after(data, after) if after is not None else since,
                sure_low=since,
                high=removed,
                sure_high=_last_with(data, setting.removed_after, removed),
            )
        )
    return out


def used_block_keys(data: EngineKnowledge, opts: Options, own: Options) -> list[Used]:
    """The keys of the speculative block (``block`` in the data) whose presence by
    version was recorded (the engine's ``fields``), as settings that narrow the
    implied range: a key recorded absent at every version read exists only below the
    oldest of them; one recorded present from some version, only from after the last
    version recorded without it. A value recorded by version narrows it the same way
    (an enum's ``versioned_values``, a name of its ``values_table``: vLLM ``method:
    medusa``, recorded up to 0.32.0 and not at 0.33.0, puts the release at 0.32.x or
    earlier). They narrow the range only: their SG310 and SG307 are the block reader's
    (``fields.check_block``, vLLM's method check). A bare block (no serve-level options)
    is read as the block."""
    if data.block is None:
        return []
    inner = opts.get(data.block)
    block = inner.sub if inner is not None and inner.sub is not None else (opts if not own else {})
    fields = data.block_fields(data.block)
    out: list[Used] = []
    for key, opt in block.items():
        spec = fields.get(key)
        if spec is None:
            continue
        for recorded, spelled in (
            (spec.recorded, opt.spelled or key),
            (value_recorded(spec, opt.value, data), f"{opt.spelled or key}: {opt.value}"),
        ):
            present = [v for v, p in recorded if p]
            absent = [v for v, p in recorded if not p]
            bounds = _recorded_bounds(data, present, absent) if recorded else None
            if bounds is not None:
                out.append(Used(_placeholder(key, spec.source), spelled, opt.span, *bounds))
    return out


def _first_after(data: EngineKnowledge, version: Version) -> Version:
    """The first release that may have what ``version`` (a release known without it)
    lacks: the next one the registry serves (data ``releases``: after SGLang
    0.5.10.post1 comes 0.5.11, so a flag first in 0.5.11 and not in 0.5.10.post1 exists
    from 0.5.11 exactly), else the next number (``0.19.1`` → ``0.19.2``, ``b4094`` →
    ``b4095``), a release that may exist."""
    return data.release_after(version) or _next(version)


def _recorded_bounds(
    data: EngineKnowledge, present: list[Version], absent: list[Version]
) -> tuple[Version | None, Version | None, Version | None, Version | None] | None:
    """(low, sure_low, high, sure_high) of something recorded present at ``present`` and
    absent at ``absent`` (:class:`Used`): below the oldest recorded present, from the
    release after the newest absent before it (:func:`_first_after`); above the newest
    present, before the oldest absent after it. None when neither bounds it."""
    low = sure_low = high = sure_high = None
    if not present:
        high = min(absent)
    else:
        before = [v for v in absent if v < min(present)]
        if before:
            low, sure_low = _first_after(data, max(before)), min(present)
        after = [v for v in absent if v > max(present)]
        if after:
            high, sure_high = min(after), max(present)
    if low is None and high is None:
        return None
    return low, sure_low, high, sure_high


def _placeholder(name: str, source: str) -> Setting:
    """A setting standing for a key or word that only narrows the implied range."""
    return Setting(
        name=name,
        aliases=(),
        switch=False,
        into=None,
        since=None,
        removed_in=None,
        replacement=None,
        unknown_version=None,
        source=source,
        removed_text=None,
    )


def requirement_bounds(found: EngineVersion) -> list[Used]:
    """The releases a requirement range admits (``vllm>=0.9.2,<0.10``:
    :attr:`EngineVersion.bounds`), as a setting that narrows the implied range: the
    config is read at the newest release the range admits, never one it excludes
    (docs/engines.md#versions)."""
    if found.bounds is None:
        return []
    low, high, last = found.bounds
    placeholder = _placeholder("requirement range", "the project's requirement files")
    return [Used(placeholder, "requirement range", Span(1, 1), low, low, high, last)]


def parser_bounds(data: EngineKnowledge, spec: FlagSpec, source: CommandSource) -> list[Used]:
    """The words of :func:`parser_words` that some recorded parsers read as a flag and
    others refuse (``--speculative-e``: SGLang 0.5.10 to 0.5.21 read it as
    ``--speculative-eagle-topk``, 0.5.23 refuses it as ambiguous), as settings that
    narrow the implied range to the releases that read them: with the version unknown,
    the command is read as the newest of those releases reads it, as a removed flag is
    (docs/engines.md#flag-spellings). Empty for an engine with fewer than two recorded
    parsers."""
    if spec.engine_parser is None or len(data.parser_versions) < 2:
        return []
    from specgate.inputs.knowledge import parse_version
    from specgate.inputs.parsers import recorded_parser

    releases = [(v, parse_version(v)) for v in data.parser_versions]
    out: list[Used] = []
    for word, span in parser_words(data, spec, source):
        read = [
            (version, recorded_parser(data.engine, text).read(word)[0] == "flag")
            for text, version in releases
            if version is not None
        ]
        present = [v for v, flag in read if flag]
        absent = [v for v, flag in read if not flag]
        bounds = _recorded_bounds(data, present, absent) if present and absent else None
        if bounds is not None:
            newest = recorded_parser(data.engine, data.parser_versions[-1])
            out.append(Used(_placeholder(word, newest.source), word, span, *bounds))
    return out


def implied_range(data: EngineKnowledge, used: Iterable[Used]) -> Implied:
    """The versions every setting in ``used`` may exist in."""
    low: Version | None = None
    high: Version | None = None
    newest: Version | None = None
    for u in used:
        if u.low is not None and (low is None or u.low > low):
            low = u.low
        if u.high is not None and (high is None or u.high < high):
            high = u.high
        if u.sure_high is not None and (newest is None or u.sure_high < newest):
            newest = u.sure_high
    empty = low is not None and high is not None and low >= high
    if newest is not None and low is not None and newest < low:
        newest = None
    if newest is not None and high is not None and newest >= high:
        # a key known at no recorded release (high, no sure_high) bounds it lower
        newest = None
    known = newest is not None
    if newest is None and high is not None and not empty:
        newest = _below(high)
    if newest is not None and newest > data.newest:
        newest = None
    return Implied(low, high, newest, empty, known)


def unknown_spellings(
    data: EngineKnowledge, spec: FlagSpec, source: CommandSource
) -> list[tuple[str, Span]]:
    """Words of the command under the engine's own flag prefixes (``flag_namespaces``)
    that no setting spells, compared as the engine's parser spells them
    (:func:`~specgate.inputs.cmdline.canonical_flag`: llama.cpp reads ``--draft_max`` as
    ``--draft-max``): the engine's parser refuses them at any version."""
    if not data.flag_namespaces:
        return []
    known = {canonical_flag(s, spec) for setting in data.settings for s in setting.spellings()}
    out: list[tuple[str, Span]] = []
    argv = source.command.argv
    for index, word in enumerate(argv):
        if word == "--":
            break
        name, eq, _ = word.partition("=")
        if eq and not spec.equals and word.startswith("-") and (
            name.startswith(data.flag_namespaces) or canonical_flag(name, spec) in known
        ):
            name = word  # no --flag=value form: the whole word is refused
        elif not name.startswith(data.flag_namespaces) or canonical_flag(name, spec) in known:
            continue
        span = source.spans[index] if index < len(source.spans) else Span(1, 1)
        out.append((name, span))
    return out


def between_recorded(
    config: EngineConfig,
    data: EngineKnowledge,
    words: Sequence[tuple[str, Span]],
    found: EngineVersion,
) -> EngineConfig:
    """``config`` with an SG310 warn for each word (:func:`parser_words`) that the
    recorded parser standing for the pinned release (the nearest before it) reads as a
    flag but the next recorded release refuses: the pinned release's parser was not
    recorded and lies between them, so whether it starts is not known (pinned SGLang
    0.5.22: 0.5.21 reads ``--speculative-e`` as ``--speculative-eagle-topk``, 0.5.23
    refuses it as ambiguous). The word is read as the release before reads it."""
    from specgate.inputs.knowledge import format_version
    from specgate.inputs.parsers import recorded_parser

    at = data.parser_version_at(found.version)
    stated = format_version(found.version) if found.version is not None else None
    following = _following_parser(data, found.version)
    if not words or at is None or at == stated or following is None:
        return config
    parser = recorded_parser(data.engine, at)
    reported = {i.field for i in config.issues if i.code == "SG310"}
    spans = dict(config.spans)
    issues = list(config.issues)
    for spelled, span in words:
        answer, matches = parser.read(spelled)
        later = _refusal(data, following, spelled) if answer == "flag" else None
        field_name = f"setting:{spelled}"
        if later is None or field_name in reported:
            continue
        reported.add(field_name)
        spans[field_name] = span
        message = (
            f"{spelled} is {matches[0]} to {data.display_name} {at}, read so here, but "
            f"{later}; the version run, {stated}, lies between them and its parser was not "
            "recorded: whether it starts is not known"
        )
        issues.append(EngineIssue("SG310", message, field_name, severity="warn"))
    return replace(config, spans=spans, issues=tuple(issues))


def _following_parser(data: EngineKnowledge, version: Version | None) -> str | None:
    """The oldest recorded parser after ``version`` (None: the version is not known, or
    none is recorded after it)."""
    from specgate.inputs.knowledge import parse_version

    if version is None:
        return None
    return next((v for v in data.parser_versions if (parse_version(v) or ()) > version), None)


def _refusal(data: EngineKnowledge, at: str, word: str) -> str | None:
    """``SGLang 0.5.23 refuses it ('error: …')`` when the parser recorded at ``at``
    refuses ``word`` (ambiguous or unrecognized), else None."""
    from specgate.inputs.parsers import recorded_parser

    answer, matches = recorded_parser(data.engine, at).read(word)
    if answer == "ambiguous":
        said = f"ambiguous option: {word} could match {', '.join(matches[:8])}"
    elif answer == "unrecognized":
        said = f"unrecognized arguments: {word}"
    else:
        return None
    return f"{data.display_name} {at} refuses it ('error: {said}')"


def parser_words(
    data: EngineKnowledge, spec: FlagSpec, source: CommandSource
) -> list[tuple[str, Span]]:
    """Long spellings of the command that name no setting of the data, compared as the
    engine's parser spells them (``--speculative_model`` is vLLM's
    ``--speculative-model``, judged by that setting's versions): the engine's recorded
    parser judges them (:func:`parser_issues`). Those about speculation (``spec`` in the
    name) wherever they stand, and any other that a recorded parser finds ambiguous
    (``--max-``: the engine refuses to start, and specgate reads no flag from it) from
    the first word naming the engine on (the words of a ``docker run`` before the image
    are not the engine's). Empty for an engine whose parser was not recorded; words after
    ``--`` and vLLM's dotted ``--speculative-config.KEY`` are not flags of it."""
    if not data.parser_versions:
        return []
    from specgate.inputs.parsers import recorded_parser

    parsers = [recorded_parser(data.engine, v) for v in data.parser_versions]
    spelled = {canonical_flag(s, spec) for setting in data.settings for s in setting.spellings()}
    out: list[tuple[str, Span]] = []
    argv = source.command.argv[:4096]
    start = next(
        (i for i, w in enumerate(argv[:64]) if data.engine in w.rsplit("/", 1)[-1].lower()), 0
    )
    for index, word in enumerate(argv):
        if word == "--":
            break
        name = word.partition("=")[0]
        if not name.startswith("--") or "." in name:
            continue
        if canonical_flag(name, spec) in spelled:
            continue  # a setting of the data: judged by its versions (SG310)
        if "spec" not in name and (
            index < start or all(p.read(name)[0] != "ambiguous" for p in parsers)
        ):
            continue
        out.append((name, source.spans[index] if index < len(source.spans) else Span(1, 1)))
    return out


def version_issues(
    config: EngineConfig,
    data: EngineKnowledge,
    used: list[Used],
    implied: Implied,
    *,
    found: EngineVersion,
    unknown: list[tuple[str, Span]],
    parsed: Sequence[tuple[str, Span]] = (),
) -> EngineConfig:
    """SG310 for every setting the engine at the version in force does not have (see
    the module doc), for spellings no version has, and for the spellings ``parsed``
    the engine's parser refuses (:func:`parser_issues`). Settings a reader already
    reported (same field) are not repeated."""
    spans = dict(config.spans)
    issues = list(config.issues)
    reported = {i.field for i in issues if i.code == "SG310"}
    name = data.display_name
    version = found.version
    pin = "state speculation.engine_version to pin the version you run"
    allowed = (implied.low, implied.newest or data.newest)
    for spelled, span, refusal, how, action in parser_issues(
        data, list(parsed), found, allowed
    ):
        field_name = f"setting:{spelled}"
        if field_name in reported:
            continue
        reported.add(field_name)
        spans[field_name] = span
        issues.append(EngineIssue("SG310", refusal, field_name, severity=how, action=action))
    for spelled, span in unknown:
        field_name = f"setting:{spelled}"
        if field_name in reported:
            continue
        reported.add(field_name)
        spans[field_name] = span
        flag, eq, value = spelled.partition("=")
        if eq:
            issues.append(EngineIssue(
                "SG310",
                f"{name} reads no {flag}=VALUE form: its parser looks the whole word "
                f"{spelled} up, refuses it and the server does not start",
                field_name,
                details=f"'error: invalid argument: {spelled}' (docs/engines.md#flag-spellings)",
                action=f"Write {flag} {value} as two words.",
            ))
            continue
        meant = _nearest(data, spelled)
        hint = f"; did you mean {meant}?" if meant else ""
        issues.append(
            EngineIssue(
                "SG310",
                f"{name} has no flag {spelled}: its parser refuses it and the server does "
                f"not start{hint}",
                field_name,
                details=f"no version specgate knows has it (up to {data.newest_text}); "
                f"'error: invalid argument: {spelled}'",
                action=f"Remove {spelled}: no {name} version has it, so it has no "
                "replacement" + (f" (if you meant {meant}, write that)." if meant else "."),
            )
        )
    for u in used:
        field_name = f"setting:{u.setting.name}"
        if field_name in reported:
            continue
        message, severity, details = _judge(
            u, data, version, found.text, implied=implied, pin=pin
        )
        if message is None:
            continue
        if severity is None and not u.setting.confirmed:
            # what is not confirmed in the engine's source never fails (docs/trust.md)
            severity = "warn"
            details = (details + "; " if details else "") + (
                f"its entry ({u.setting.source}) is not confirmed in the engine's source: "
                "a warning, not a fail"
            )
        reported.add(field_name)
        spans[field_name] = u.span
        issues.append(
            EngineIssue(
                "SG310",
                message,
                field_name,
                severity=severity,
                details=details,
                action=_action(u, data, version, found.text),
            )
        )
    return replace(config, spans=spans, issues=tuple(issues))


def _nearest(data: EngineKnowledge, spelled: str) -> str | None:
    """The flag ``spelled`` most likely means, among the newest version's: one that ends
    with the same words (``--draft-n-max`` → ``--spec-draft-n-max``), else the closest."""
    current = sorted(
        {
            name
            for setting in data.settings
            if setting.removed_in is None and setting.name.startswith("-")
            for name in setting.spellings()
        }
    )
    body = spelled.lstrip("-")
    ending = [name for name in current if name.lstrip("-").endswith("-" + body)]
    if ending:
        return min(ending, key=len)
    close = difflib.get_close_matches(spelled, current, n=1, cutoff=0.75)
    return close[0] if close else None


def _judge(
    u: Used,
    data: EngineKnowledge,
    version: Version | None,
    text: str | None,
    *,
    implied: Implied,
    pin: str,
) -> tuple[str | None, IssueSeverity | None, str]:
    """(message, severity: None = the rule's fail, ``warn``, details: the version
    reasoning, ``""`` when the message holds it) for one used setting."""
    name = data.display_name
    setting = u.setting
    instead = replacement_clause(setting.replacement)
    shown = _shown(data)
    if version is not None:
        at = f"{name} {text}"
        if u.high is not None and version >= u.high:
            return (
                f"{u.spelled} was removed in {name} {shown(u.high)} ({at}){instead}; its "
                "value is still read",
                None,
                "",
            )
        if u.sure_high is not None and version > u.sure_high:
            return (
                f"{u.spelled} was removed after {name} {shown(u.sure_high)} (by "
                f"{shown(u.high) if u.high else 'a later release'}); whether {at} still "
                f"has it is not confirmed{instead}",
                "warn",
                "",
            )
        if u.sure_low is not None and version < u.sure_low:
            if u.low is not None and version >= u.low:
                return (
                    f"{u.spelled} appeared in {name} after {shown(_below(u.low))} (it is in "
                    f"{shown(u.sure_low)}); whether {at} has it is not confirmed",
                    "warn",
                    "",
                )
            return (
                f"{u.spelled} does not exist in {at}: it was added in "
                f"{shown(u.sure_low)}; the engine refuses it",
                None,
                "",
            )
        return None, None, ""
    if u.high is None:
        return None, None, ""
    if implied.empty:
        return (
            f"{u.spelled} was removed in {name} {shown(u.high)}, but other settings of "
            f"this config exist only from {shown(implied.low) if implied.low else '?'}: no "
            f"version of {name} has every setting used{instead}",
            None,
            "",
        )
    return (
        f"{u.spelled} was removed in {name} {shown(u.high)}{instead}",
        "warn",
        f"the settings used imply {name} {implied.text(data.engine)}, read as "
        f"{shown(implied.newest)} (version unknown): {pin}",
    )


def _action(u: Used, data: EngineKnowledge, version: Version | None, text: str | None) -> str:
    """SG310's next action for a used setting :func:`_judge` reports: not yet added at
    the version run, the release to run; else the replacement the engine's source gives
    (data ``replacement``), or that it was removed with none."""
    name = data.display_name
    if version is not None and u.sure_low is not None and version < u.sure_low:
        return (
            f"Remove {u.spelled}, or run {name} {_shown(data)(u.sure_low)} or later "
            "(and state it as speculation.engine_version)."
        )
    removed = f"{name} {_shown(data)(u.high)}" if u.high is not None else name
    action = replacing(u.spelled, u.setting.replacement, removed)
    if version is None and u.high is not None:
        action = (
            f"{action.removesuffix('.')}, or state speculation.engine_version if the "
            f"deployment runs a release before {_shown(data)(u.high)}."
        )
    return action


def _shown(data: EngineKnowledge) -> _Shown:
    return _Shown(data.engine)


class _Shown:
    def __init__(self, engine: str) -> None:
        self.engine = engine

    def __call__(self, version: Version | None) -> str:
        return shown_version(self.engine, version) if version is not None else "?"


def in_force(data: EngineKnowledge, found: EngineVersion, implied: Implied) -> VersionInForce:
    """The version the engine's checks and defaults are read at."""
    if found.version is not None:
        shown = f"{found.text}"
        return VersionInForce(found.version, None, data.newest, shown)
    if implied.newest is not None and implied.newest < data.newest:
        if implied.newest_known or implied.high is None or data.builds:
            newest = shown_version(data.engine, implied.newest)
            shown = f"{newest} (version unknown: the newest the settings allow)"
        else:
            before = shown_version(data.engine, implied.high)
            shown = (
                f"releases before {before} "
                "(version not pinned; the settings used exist only in those)"
            )
        return VersionInForce(None, implied.newest, data.newest, shown, implied.low)
    shown = f"{data.newest_text} (version unknown: the newest specgate knows)"
    return VersionInForce(None, None, data.newest, shown, implied.low)


def engine_checks(
    config: EngineConfig,
    data: EngineKnowledge,
    opts: Options,
    env: Mapping[str, Opt],
    at: VersionInForce,
) -> EngineConfig:
    """``config`` with the issues of the engine's checks that need no model config."""
    options = view(opts, data.block, env)
    fields = config_fields(config)
    spans = dict(config.spans)
    issues = list(config.issues)
    fired = evaluate(data, options, fields, at)
    for hit in fired:
        if hit.span is not None:
            spans[hit.issue.field] = hit.span
        elif "mechanism" in spans:
            spans[hit.issue.field] = spans["mechanism"]
        issues.append(hit.issue)
    config = replace(config, spans=spans, issues=tuple(issues), check_options=options)
    return served(config, fired)


def served(config: EngineConfig, fired: list[Fired]) -> EngineConfig:
    """``config`` with the draft length the engine serves where a rewrite changes it
    (docs/engines.md#refusals-and-rewrites: the served value replaces the written one for every
    rule)."""
    for hit in fired:
        d = hit.served_draft_length
        if d is None or d == config.draft_length:
            continue
        note = (
            f"{knowledge(config.engine).display_name} serves D = {d}, not the "
            f"{config.draft_length} written ({hit.check.id}); every rule uses the served D"
        )
        span = config.spans.get(hit.issue.field) or config.spans.get("draft_length")
        spans = {**config.spans, "draft_length": span} if span else config.spans
        config = replace(
            config,
            draft_length=d,
            verify_tokens=d + 1
            if config.verify_tokens in (None, (config.draft_length or 0) + 1)
            else config.verify_tokens,
            spans=spans,
            notes=(*config.notes, note),
        )
    return config


def config_fields(config: EngineConfig) -> dict[str, object]:
    """What a reader resolved, as checks read it (``field.NAME``)."""
    return {
        "mechanism": config.mechanism,
        "draft_length": config.draft_length,
        "verify_tokens": config.verify_tokens,
        "tensor_parallel_size": config.tensor_parallel_size,
        "draft_tensor_parallel_size": config.draft_tensor_parallel_size,
        "draft_model": config.draft_model,
        "draft_length_is_max": config.draft_length_is_max,
        "resolved": config.resolution.get("engine_values"),
        "resolved_by_models": bool(config.resolution.get("resolved_by_models")),
    }


def model_facts(
    target: ModelShape | None,
    draft: ModelShape | None,
    workload: Mapping[str, object],
) -> dict[str, object]:
    """The facts model-config checks read (``fact.NAME``): each shape's fields and
    config scalars, their vocabulary difference, and the claims file's workload."""
    facts: dict[str, object] = {f"workload.{k}": v for k, v in workload.items()}
    for role, shape in (("target", target), ("draft", draft)):
        if shape is None:
            continue
        for name in ("vocab_size", "mtp_layers", "mtp_known", "mla", "model_type"):
            facts[f"{role}.{name}"] = getattr(shape, name)
        facts[f"{role}.architectures"] = list(shape.architectures) or None
        facts[f"{role}.architecture"] = shape.architectures[0] if shape.architectures else None
        facts[f"{role}.keys"] = list(shape.keys)
        facts[f"{role}.read"] = True
        facts.update((f"{role}.config.{k}", v) for k, v in shape.scalars.items())
    if (
        target is not None
        and draft is not None
        and target.vocab_size is not None
        and draft.vocab_size is not None
    ):
        facts["vocab_difference"] = abs(target.vocab_size - draft.vocab_size)
    return facts


def model_checks(
    config: EngineConfig,
    target: ModelShape | None,
    draft: ModelShape | None,
    workload: Mapping[str, object],
) -> tuple[EngineConfig, list[EngineIssue]]:
    """The issues of the engine's checks that need the model configs or the workload,
    each placed at its option in the engine config or at the model config's line, and
    ``config`` with the draft length the engine serves where one of them rewrites it."""
    at = config.version_in_force
    if at is None:
        return config, []
    data = knowledge(config.engine)
    facts = model_facts(target, draft, workload)
    override, doubt = model_override(data, config.check_options)
    facts = overridden(facts, override) if override is not None else facts
    # vLLM: the model runner that serves, multimodal inputs (docs/engines.md#model-runner-v2)
    fields = config_fields(config)
    facts.update(vllm_facts(data, at, config.check_options, fields, facts))
    out: list[EngineIssue] = []
    shapes = {"target": target, "draft": draft}
    fired = evaluate(data, config.check_options, fields, at, facts)
    for hit in fired:
        issue, check = hit.issue, hit.check
        if doubt and _reads_config(check.when):
            issue = lowered(issue, doubt)
        where: tuple[str, Span | None] | None = None
        span = hit.span
        if span is None:
            for name in check.at:
                role, _, field_name = name.removeprefix("fact.").partition(".")
                shape = shapes.get(role) if name.startswith("fact.") else None
                if shape is not None:
                    where = (shape.path, shape.spans.get(field_name))
                    break
            else:
                span = config.spans.get("draft_model") or config.spans.get("mechanism")
        if where is None and span is not None:
            where = (config.path, span)
        out.append(replace(issue, where=where))
    return served(config, fired), out
