"""The version a configuration is read at: its own spelling and source, the range
the settings used imply when none is stated, and the default D over that range."""

from __future__ import annotations

from dataclasses import replace

from specgate.inputs.engines import (
    settings,
)
from specgate.inputs.knowledge import EngineKnowledge, knowledge, own_version
from specgate.inputs.types import EngineConfig, VersionInForce
from specgate.inputs.version import EngineVersion


def with_version(
    config: EngineConfig,
    version: EngineVersion,
    implied: settings.Implied,
    at: VersionInForce,
    notes: list[str],
) -> EngineConfig:
    """``config`` with the version read (its own spelling and the text it came from),
    the implied range when the version is unknown, and the notes."""
    data = knowledge(config.engine)
    narrowed = version.version is None and (implied.low is not None or implied.high is not None)
    version_note = version.note
    if narrowed and version_note is not None:
        why = f" ({version.why})" if version.why else ""
        if implied.newest_known or implied.high is None or data.builds:
            considered = implied.text(config.engine)
            read = f"read as {at.shown.split(' (')[0]}"
        else:  # no listed release below the bound: say the range, never a made-up number
            considered = f"releases {implied.text(config.engine)}"
            read = "read as the last of them, a release specgate does not list"
        version_note = (
            f"{data.display_name} version unknown{why}: the settings used "
            f"{'and that range ' if version.bounds else ''}imply "
            f"{considered}; {read}; state speculation.engine_version to pin it"
        )
    assumed, values = _assumed_default(config, data, version, implied, at)
    return replace(
        config,
        # a reader's own assumption (the transformers assistant's generation config not
        # read) stands when the version settles the default
        draft_length_assumed=assumed or config.draft_length_assumed,
        draft_length_range=values if assumed else config.draft_length_range,
        version=own_version(config.engine, version.text or "", version.version)
        if version.version
        else None,
        version_raw=version.text,
        version_source=version.source,
        implied_versions=implied.json(config.engine) if narrowed else None,
        version_in_force=at,
        notes=(
            *notes,
            *config.notes,
            *((version.origin,) if version.origin else ()),
            *((version_note,) if version_note else ()),
        ),
    )


def pre_release_shown(at: VersionInForce, version: EngineVersion) -> VersionInForce:
    """``at``, naming the pre-release it stands for where it is read as the candidate's
    release (docs/engines.md#pre-releases): ``0.11.0 (v0.11.0rc1 is a pre-release of
    it)``; as it is otherwise."""
    bounds = version.bounds
    if version.version is not None or version.text is None or bounds is None:
        return at
    if bounds[2] != at.judged:  # other settings narrow it below the release
        return at
    shown = f"{at.shown.split(' (')[0]} ({version.text} is a pre-release of it)"
    return replace(at, shown=shown)


def _assumed_default(
    config: EngineConfig,
    data: EngineKnowledge,
    version: EngineVersion,
    implied: settings.Implied,
    at: VersionInForce,
) -> tuple[str | None, tuple[int, ...]]:
    """When D is the engine's default and that default differs between the versions the
    config may run (no version stated or detected; the settings used narrow the range),
    the sentence saying so and naming what settles it, and the defaults recorded over
    those versions (``()`` when some of them have none recorded: D is then unbounded);
    else ``(None, ())`` (docs/engines.md#versions: what rests on a guessed version fails only when
    it fails at every default it may be)."""
    if config.draft_length_default is None or config.draft_length is None:
        return None, ()
    if version.version is not None:
        return None, ()
    key, setting, since = config.draft_length_default
    low = (
        implied.low if since is None or (implied.low is not None and implied.low > since) else since
    )
    values, gap = data.default_values(key, low, implied.high)
    if len(values) < 2 and not gap:
        return None, ()
    known = ", ".join(str(v) for v in values)
    if gap:
        known += (
            ", and builds with none recorded"
            if data.builds
            else ", and releases with none recorded"
        )
    sentence = (
        f"D {config.draft_length} is {data.display_name}'s default {key.replace('_', '-')} "
        f"read at {at.shown.split(' (')[0]}, a version not pinned; the default differs "
        f"between the versions this config may run ({known}): state "
        f"speculation.engine_version or set {setting} to settle it"
    )
    lengths = tuple(v for v in values if isinstance(v, int) and not isinstance(v, bool))
    return sentence, (() if gap or len(lengths) != len(values) else lengths)

