"""The keys of an engine's speculative block judged by the knowledge data
(docs/engines.md#refusals-and-rewrites).

Each key of the block is looked up among the engine's ``fields``
(``specgate/data/engines/ENGINE.json``): a key the engine never had is an SG307
refusal (with the closest key); a key the engine at the version in force does not
have (a former key, or one added later) is SG310, a warn when that version's presence
was not recorded; a value the engine's validation refuses (type, bounds, enum) is an
SG307 refusal "the engine refuses to start: …" naming the source file. Values are
judged as the engine's validator reads them (pydantic's lax mode for vLLM: ``"3"``
and ``true`` are integers, ``"yes"`` a boolean, ``3.5`` not an integer).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Mapping

from specgate.inputs.engines._base import Builder
from specgate.inputs.engines._source import Opt
from specgate.inputs.knowledge import (
    EngineKnowledge,
    Field,
    Recorded,
    Version,
    absent_throughout,
    format_version,
    gone_after,
    presence_at,
    replacement_clause,
    replacing,
    value_recorded,
)

_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def did_you_mean(name: str, known: Collection[str]) -> str | None:
    """The known name closest to ``name``: a case-only difference first, else difflib's."""
    folded = [k for k in known if k.lower() == name.lower()]
    if folded:
        return folded[0]
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def _version_text(
    data: EngineKnowledge, version: Version | None, shown: str | None = None
) -> str:
    if shown is not None:
        return f"{data.display_name} {shown}"
    if version is None:
        return f"{data.display_name} {data.newest_text} (the newest known)"
    return f"{data.display_name} {format_version(version)}"


def check_block(
    block: Mapping[str, Opt],
    data: EngineKnowledge,
    name: str,
    version: Version | None,
    b: Builder,
    *,
    method: str | None,
    draft_model: bool,
    skip: Collection[str] = (),
    shown: str | None = None,
    low: Version | None = None,
) -> None:
    """Judge every key of the block ``name`` (``speculative_config``) by the engine's
    fields at ``version``; ``method`` is the method in force (a field may apply to some
    methods only), ``draft_model`` whether a draft model config is built, ``skip`` keys
    whose values other code judges (one cause, one finding); ``shown`` names a version
    the settings imply (the version unknown) in messages, ``low`` the oldest release
    they allow then."""
    fields = data.block_fields(name)
    for key, opt in block.items():
        field = fields.get(key)
        spelled = opt.spelled or key
        field_name = f"{name}_key:{key}"
        if field is None:
            hint = did_you_mean(key, [f for f, spec in fields.items() if not _former(spec)])
            suggestion = f" (did you mean {hint!r}?)" if hint else ""
            unread = (
                "; D is not read from the engine config" if hint == "num_speculative_tokens" else ""
            )
            b.at(field_name, opt)
            b.issue(
                "SG307",
                f"{data.display_name} refuses unknown key {spelled!r}{suggestion} in {name}: "
                f"SpeculativeConfig forbids extra keys{unread}",
                field_name,
                action=f"Replace {spelled} with {hint}." if hint
                else f"Remove {spelled}: {data.display_name}'s {name} has no such key.",
            )
            continue
        presence = presence_at(field.recorded, version, data.newest)
        if presence != "present":
            b.at(field_name, opt)
            _absent(
                data,
                field,
                spelled,
                name,
                version=version,
                unknown=presence == "unknown",
                b=b,
                field_name=field_name,
                shown=shown,
            )
            continue
        if shown is not None and version is not None:
            where = (name, key, field_name)
            _gone_later(data, field, opt, where, version=version, shown=shown, b=b)
        if key in skip or opt.value is None:
            continue
        if field.with_draft_model and not draft_model:
            continue
        if field.methods and method not in field.methods:
            continue
        pinned = version is not None and shown is None
        problem = value_problem(field, opt.value, version, data.newest, pinned=pinned, low=low)
        if problem is None:
            continue
        reason, confirmed = problem
        b.at(field_name, opt)
        b.issue(
            "SG307",
            f"{_version_text(data, version, shown)} refuses to start: {name} {key} {reason} "
            f"({field.source})",
            field_name,
            None if confirmed else "warn",
            action=f"Set {spelled} to a value {data.display_name} accepts: {reason}.",
        )


def _gone_later(
    data: EngineKnowledge,
    field: Field,
    opt: Opt,
    where: tuple[str, str, str],
    *,
    version: Version,
    shown: str,
    b: Builder,
) -> None:
    """A warn for a key (SG310) or a value (SG307) the release an unpinned config is read
    at has and a later recorded release lacks: the key or value narrowed the release
    (settings.used_block_keys), which may still be that later one
    (docs/engines.md#versions). ``where``: the block, the key, the finding's field."""
    name, key, field_name = where
    spelled = opt.spelled or key
    read = shown.split(" (", maxsplit=1)[0]
    at = f"read as {data.display_name} {read}, the newest the settings allow"
    pin = "state speculation.engine_version to pin the version you run"
    later = gone_after(field.recorded, version)
    if later is not None:
        b.at(field_name, opt)
        b.issue(
            "SG310",
            f"{spelled} in {name} was removed by {data.display_name} {format_version(later)} "
            f"(recorded in {_seen(field.recorded)}); the version is not pinned and may be "
            f"that release or a later one: {at}; {pin}",
            field_name,
            "warn",
            action=_absent_action(data, field, spelled, None),
        )
        return
    recorded = value_recorded(field, opt.value, data) if field.values_table is None else ()
    later = gone_after(recorded, version)
    if later is not None:
        b.at(field_name, opt)
        b.issue(
            "SG307",
            f"{data.display_name} {format_version(later)} refuses {name} {key} "
            f"{opt.value!r} (recorded in {_seen(recorded)}, not in {format_version(later)}; "
            f"{field.source}); the version is not pinned and may be that release or a later "
            f"one: {at}; {pin}",
            field_name,
            "warn",
            action=f"Set {spelled} to a value {data.display_name} {format_version(later)} "
            "accepts, or pin the release that has it.",
        )


def _former(field: Field) -> bool:
    return bool(field.recorded) and not any(present for _, present in field.recorded)


def _absent(
    data: EngineKnowledge,
    field: Field,
    spelled: str,
    name: str,
    *,
    version: Version | None,
    unknown: bool,
    b: Builder,
    field_name: str,
    shown: str | None = None,
) -> None:
    """SG310 for a key the engine at ``version`` does not have (a warn when its presence
    there was not recorded, or when the version is only implied by the settings used:
    docs/engines.md#versions asks to pin it)."""
    seen = [format_version(v) for v, present in field.recorded if present]
    missing = [format_version(v) for v, present in field.recorded if not present]
    if seen:
        history = f"recorded in {data.display_name} {', '.join(seen)}"
        history += f", not in {', '.join(missing)}" if missing else ""
    else:
        history = f"refused by {data.display_name} {', '.join(missing)}: a key of older releases"
    instead = replacement_clause(field.replacement)
    action = _absent_action(data, field, spelled, version)
    if shown is not None and seen:
        action = (
            f"{action.removesuffix('.')}, or state speculation.engine_version if the "
            f"deployment runs a release that has it ({', '.join(seen)})."
        )
    if shown is not None:
        # the recorded fact first, then why it may apply: the version is only implied
        # (new-user trial 2026-12-02, defect 11: "may not exist in releases before
        # 0.27.1" read as the opposite of "refused from 0.27.1 on")
        fact = history if seen else history.replace(": a key", " (a key") + ")"
        at = shown.split(" (")[0]
        b.issue(
            "SG310",
            f"{spelled} in {name} is {fact}; the version is not pinned and may be one "
            f"without it{instead}; the settings used put it at {data.display_name} {at}, "
            "where it is not recorded: state speculation.engine_version to pin the version "
            "you run",
            field_name,
            "warn",
            action=action,
        )
        return
    if unknown:
        why = "not recorded at this version"
        b.issue(
            "SG310",
            f"{spelled} in {name} may not exist in {_version_text(data, version, shown)} "
            f"({history}; {why}){instead}",
            field_name,
            "warn",
            action=action,
        )
        return
    b.issue(
        "SG310",
        f"{spelled} is not a {name} key of {_version_text(data, version)}, which refuses it "
        f"(extra keys are forbidden; {history}){instead}",
        field_name,
        action=action,
    )


def _absent_action(
    data: EngineKnowledge, field: Field, spelled: str, version: Version | None
) -> str:
    """SG310's next action for a key the version in force lacks: one a later recorded
    release added, that release to run; a former key, the replacement the engine's
    source gives (data ``replacement``), or that it was removed with none."""
    name = data.display_name
    later = [v for v, present in field.recorded if present and (version is None or v > version)]
    if later and version is not None:
        return (
            f"Remove {spelled}, or run {name} {format_version(min(later))} or later "
            "(and state it as speculation.engine_version)."
        )
    kept = [v for v, present in field.recorded if present]
    gone = [v for v, present in field.recorded if not present and (not kept or v > max(kept))]
    removed = f"{name} {format_version(min(gone))}" if kept and gone else name
    return replacing(spelled, field.replacement, removed)


#: (pinned, the oldest release the settings allow when not pinned)
Allowed = tuple[bool, "Version | None"]


def value_problem(
    field: Field,
    value: object,
    version: Version | None,
    newest: Version,
    *,
    pinned: bool = True,
    low: Version | None = None,
) -> tuple[str, bool] | None:
    """Why the engine refuses ``value`` for ``field`` (and whether that is confirmed at
    ``version``), or None when it accepts it. Not ``pinned`` (``low``: the oldest release
    the settings allow), a value some releases have is a confirmed refusal only where
    no release allowed has it (docs/engines.md#versions)."""
    kind = field.type
    if kind == "any":
        return None
    if kind == "str":
        return None if isinstance(value, str) else (f"must be a string, not {value!r}", True)
    if kind == "list":
        return None if isinstance(value, list) else (f"must be a list, not {value!r}", True)
    if kind == "bool":
        return None if _as_bool(value) is not None else (f"must be a boolean, not {value!r}", True)
    if kind == "enum":
        return _enum_problem(field, value, version, newest, (pinned, low))
    number = _as_number(value, integer=kind == "int")
    if number is None:
        what = "a whole number" if kind == "int" else "a number"
        return f"must be {what}, not {value!r}", True
    if field.gt is not None and not number > field.gt:
        return f"is {_shown(number)}; it must be greater than {_shown(field.gt)}", True
    if field.ge is not None and not number >= field.ge:
        return f"is {_shown(number)}; it must be at least {_shown(field.ge)}", True
    if field.le is not None and not number <= field.le:
        return f"is {_shown(number)}; it must be at most {_shown(field.le)}", True
    return None


def _enum_problem(
    field: Field, value: object, version: Version | None, newest: Version, allowed: Allowed
) -> tuple[str, bool] | None:
    if not isinstance(value, str):
        return f"must be one of its names, not {value!r}", True
    wanted = value.upper() if field.upper else value
    if wanted in (v.upper() if field.upper else v for v in field.values):
        return None
    widened = field.any_string_since
    if widened is not None and (newest if version is None else version) >= widened:
        return None  # its type takes any string there (data any_string_since)
    for values, recorded in field.versioned_values:
        if wanted in (v.upper() if field.upper else v for v in values):
            presence = presence_at(recorded, version, newest)
            seen = _seen(recorded)
            if presence == "present":
                return None
            confirmed = presence == "absent" and (
                allowed[0]
                or absent_throughout(recorded, allowed[1], newest if version is None else version)
            )
            unsure = (
                "; the version run is not pinned and may be one that has it"
                if presence == "absent" and not confirmed
                else ""
            )
            return (
                f"{value!r} is not one of its values at this version (recorded in {seen}){unsure}",
                confirmed,
            )
    shown = ", ".join(field.values[:6]) + (", …" if len(field.values) > 6 else "")
    return f"{value!r} is not one of its {len(field.values)} values ({shown})", True


def _seen(recorded: Recorded) -> str:
    """``0.19.1, 0.22.1``: the releases something was recorded present at."""
    return ", ".join(format_version(v) for v, present in recorded if present)


def _shown(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _as_bool(value: object) -> bool | None:
    """A boolean as pydantic's lax mode reads it, else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def _as_number(value: object, *, integer: bool) -> float | None:
    """A number as pydantic's lax mode reads it (``true`` is 1, ``"3"`` is 3; an
    integer field refuses ``3.5``), else None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        if integer and not value.strip().lstrip("+-").isdigit():
            return None
    else:
        return None
    if not math.isfinite(number):
        return None if integer else number
    if integer and not number.is_integer():
        return None
    return number
