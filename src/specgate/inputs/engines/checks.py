"""The engines' own refusals, rewrites and warnings, as data
(docs/engines.md#refusals-and-rewrites).

Each engine's knowledge file (``specgate/data/engines/ENGINE.json``) lists ``checks``:
a condition on the options the serving config sets (and, for some, on the model
configs and the claims file's workload), what the engine does then (``effect``),
the message, the rule it feeds (SG302, SG304, SG307, SG310) and the engine source
it was read from, with the versions it was seen in. This module is the generic
evaluator; no flag or key is spelled here.

Option names are the readers' normalised keys (``spec_type``, ``speculative_algorithm``);
keys of the engine's speculative block (``block`` in the data: ``speculative_config``)
are ``spec.KEY``; environment variables ``env.NAME``; what the reader resolved
(``field.mechanism``, ``field.draft_length`` …) ``field.NAME``; the values the engine
runs after its own rewrites, in its order (SGLang's ``num_draft_tokens`` = steps + 1 at
``topk`` 1, the steps/topk/draft tokens it picks from the target's architecture)
``resolved.NAME``: a check of what the engine raises after it rewrote a setting reads
these, never the written option (``None`` while the rewrite is not known: the target's
architecture not yet read); facts known only once
the model configs and the deployment are read ``fact.NAME`` (``fact.target.vocab_size``,
``fact.draft.config.block_size``, ``fact.vocab_difference``, ``fact.workload.temperature``).

Conditions (JSON): ``{"set": K}``, ``{"unset": K}``, ``{"key": K, OP: X, …}`` (with
``"default": X``, the engine's default, read when K is unset) with
OP one of ``eq ne in not_in lt le gt ge outside has_item lacks_item true false
not_list shape`` (and ``*_key`` forms comparing with another key's value:
``gt_key``, ``ne_key`` …, that value plus ``plus`` and times ``times_key``'s),
``{"all": […]}``, ``{"any": […]}``, ``{"not": …}``.
Logic is three-valued: a value that is absent, or cannot be read as the operator
needs (``"abc"`` against a number), makes the comparison unknown, and a check fires
only when its condition is known true, so what a file does not say never fails it.

Severity (docs/engines.md#versions, BRIEF "a fail rests on what is known of the engine at its
version"): ``refuses`` fails; ``no-speculation`` and ``rewrites`` fail when a claim
or the evidence rests on the written config (``if-claimed``, decided by the rule),
else warn; ``ignored`` and ``warns`` warn. A check whose source is not confirmed, or
that applies at a version older than any it was seen in (``seen_in``; none recorded:
the newest version specgate knows), warns instead of failing, and says so. With the
version unknown the newest version the settings allow is read (docs/engines.md#versions), and a
check fails only when every version the settings allow is at or after the oldest it was
seen in; otherwise it warns and asks to pin ``speculation.engine_version``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from specgate.inputs.engines._source import UNSETTLED, Opt, Options
from specgate.inputs.engines.check_values import DERIVED, SHAPES
from specgate.inputs.engines.check_values import as_items as _items
from specgate.inputs.engines.check_values import number as _number
from specgate.inputs.engines.check_values import shown as _shown
from specgate.inputs.engines.lifetime import Lifetime
from specgate.inputs.knowledge import (
    EngineKnowledge,
    Version,
    parse_version,
    replacing,
    shown_version,
    source_text,
)
from specgate.inputs.types import EngineIssue, IssueCode, IssueSeverity, VersionInForce
from specgate.load.document import Span

Effect = Literal[
    "refuses", "no-speculation", "off-above", "rewrites", "ignored", "warns", "deprecated"
]

#: How each effect is judged when the behaviour is confirmed at the version in force.
EFFECT_SEVERITY: Mapping[str, IssueSeverity] = {
    "refuses": "fail",
    "no-speculation": "if-claimed",
    "off-above": "if-claimed",
    "rewrites": "if-claimed",
    "ignored": "warn",
    "warns": "warn",
    "deprecated": "warn",
}
_EFFECT_WORDS: Mapping[str, str] = {
    "refuses": "refuses to start",
    "no-speculation": "starts without speculation",
    "off-above": "turns speculation off at the served concurrency",
    "rewrites": "rewrites the config",
    "ignored": "ignores the setting",
    "warns": "warns",
    "deprecated": "deprecates the setting (still accepted)",
}
_OPS = frozenset(
    {"eq", "ne", "in", "not_in", "lt", "le", "gt", "ge", "outside", "has_item", "lacks_item"}
    | {"true", "false", "not_list", "shape", "not_number", "matches"}
)
#: A check's next action when its data gives none, by effect (``{spelled}``: the setting
#: it sits at; none there: the rule's own). ``warns``, ``off-above``: the check's own.
_EFFECT_ACTION: Mapping[str, str] = {
    "refuses": "Change {spelled} to a value {engine} accepts (the message says what it refuses).",
    "no-speculation": "Change {spelled} so that {engine} speculates (the message says why not).",
    "rewrites": "Write {spelled} as {engine} serves it, so that the claims and the evidence "
    "describe what runs.",
    "ignored": "Remove {spelled}: {engine} ignores it here.",
}
#: Keys of a comparison that modify it rather than test: the engine's default for an
#: unset option (or another key's value), a derived value, an offset, a default for
#: the compared key.
_MODIFIERS = frozenset(
    {"key", "derive", "plus", "times_key", "default", "default_key", "other_default"}
)
_KEY_OPS = frozenset({"eq_key", "ne_key", "lt_key", "le_key", "gt_key", "ge_key"})
#: The longest value quoted in a message (a repository controls every byte).
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
#: ``{name}`` is filled in; ``{{`` and ``}}`` are literal braces (as in str.format).
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([a-z_][a-z0-9_.:]*)\}")

Tri = bool | None


@dataclass(frozen=True)
class Check:
    """One engine behaviour: when it applies, what the engine does, where it is said."""

    id: str
    code: IssueCode
    effect: Effect
    severity: IssueSeverity
    when: Mapping[str, Any]
    at: tuple[str, ...]
    message: str
    since: Version | None
    until: Version | None
    seen_in: tuple[Version, ...]
    confirmed: bool
    source: str
    sites: tuple[str, ...]
    needs_facts: bool
    #: Reads ``resolved.NAME``: also judged once the model configs are read, when the
    #: reader's resolution changed with them (``fields["resolved_by_models"]``).
    reads_resolved: bool = False
    #: What the engine serves instead of the written draft length (a rewrite):
    #: ``{"key": K, "derive": …, "minus": n}``; None when the check changes no D.
    serves_draft_length: Mapping[str, Any] | None = None
    #: The evidence beside the message (the engine's internals it rests on), filled in
    #: as the message is; ``""``: none.
    details: str = ""
    #: The versions the behaviour holds in, from the engine's history (None: only
    #: ``since``/``until`` and ``seen_in`` are known).
    lifetime: Lifetime | None = None
    #: SG310: what replaces the setting, as the engine's source says (``"none: why"``).
    replacement: str | None = None
    #: The next step, filled in as the message is (``""``: the rule's own).
    action: str = ""

    @classmethod
    def from_data(cls, raw: Mapping[str, Any], source: str) -> Check:
        """A check from its data entry (already validated by the schema)."""
        effect: Effect = raw["effect"]
        seen = tuple(v for v in (parse_version(t) for t in raw.get("seen_in", ())) if v)
        return cls(
            id=raw["id"],
            code=raw.get("code", "SG307"),
            effect=effect,
            severity=raw.get("severity", EFFECT_SEVERITY[effect]),
            when=raw["when"],
            at=tuple(raw.get("at", ())),
            message=raw["message"],
            since=parse_version(raw["since"]) if "since" in raw else None,
            until=parse_version(raw["until"]) if "until" in raw else None,
            seen_in=seen,
            confirmed=bool(raw["source"].get("confirmed", False)),
            source=source,
            sites=tuple(raw.get("sites", ())),
            needs_facts="fact." in repr(raw["when"]),
            reads_resolved="'resolved." in repr(raw["when"]),
            serves_draft_length=raw.get("serves_draft_length"),
            details=raw.get("details", ""),
            lifetime=Lifetime.from_data(raw["lifetime"], source_text(raw["lifetime"]["source"]))
            if "lifetime" in raw
            else None,
            replacement=raw.get("replacement"),
            action=raw.get("action", ""),
        )


def view(opts: Options, block: str | None, env: Mapping[str, Opt]) -> dict[str, Opt]:
    """The options a check reads: top-level keys as they are (a nested mapping's keys
    as ``KEY.SUB``), the speculative block's keys as ``spec.KEY`` (a bare block is
    both), variables as ``env.NAME``."""
    out: dict[str, Opt] = dict(opts)
    for key, opt in opts.items():  # one level of a nested mapping: KEY.SUB
        if opt.sub is not None and key != block:
            out.update((f"{key}.{sub}", inner_opt) for sub, inner_opt in opt.sub.items())
    inner = opts.get(block) if block is not None else None
    keys: Mapping[str, Opt] = inner.sub if inner is not None and inner.sub is not None else opts
    if block is not None:
        out.update((f"spec.{key}", opt) for key, opt in keys.items())
    out.update((f"env.{name}", opt) for name, opt in env.items())
    return out


@dataclass(frozen=True)
class Fired:
    """A check whose condition holds: its issue, the span of the option it sits at
    (None: the check names no option present) and, for a rewrite of D, the draft
    length the engine serves."""

    issue: EngineIssue
    span: Span | None
    served_draft_length: int | None
    check: Check


def evaluate(
    data: EngineKnowledge,
    options: Mapping[str, Opt],
    fields: Mapping[str, object],
    at_version: VersionInForce,
    facts: Mapping[str, object] | None = None,
) -> list[Fired]:
    """The issues of every check of ``data`` whose condition holds.

    Args:
        data: the engine's knowledge.
        options: :func:`view` of the configuration.
        fields: what the reader resolved (``mechanism``, ``draft_length`` …).
        at_version: the version in force.
        facts: model-config and workload facts; ``None`` at the engine stage (checks
            that need facts then wait for :func:`evaluate` with them, and only those
            run when facts are given).

    Returns:
        one :class:`Fired` per check whose condition holds at the version in force.
    """
    out: list[Fired] = []
    reader = _Reader(options, fields, facts or {})
    for check in checks_of(data):
        if not _stage(check, facts is not None, bool(fields.get("resolved_by_models"))):
            continue
        judged = _severity(check, at_version, data)
        if judged is None or _cond(check.when, reader) is not True:
            continue
        severity, why = judged
        at_opt = next((options[k] for k in check.at if _present(options.get(k))), None)
        message, details, action = _render(check, reader, at_opt, at_version, data, why=why)
        out.append(
            Fired(
                EngineIssue(
                    check.code,
                    message,
                    f"check:{check.id}",
                    severity=severity,
                    details=details,
                    action=action,
                ),
                at_opt.span if at_opt is not None else None,
                _served(check.serves_draft_length, reader),
                check,
            )
        )
    return out


def _stage(check: Check, with_facts: bool, resolved_by_models: bool) -> bool:
    """Whether ``check`` is judged at this stage: one needing facts with the facts, any
    other without them, and again with them when it reads ``resolved.NAME`` and the
    models changed the resolution (it was unknown before: it cannot fire twice)."""
    if check.needs_facts:
        return with_facts
    return not with_facts or (check.reads_resolved and resolved_by_models)


def _served(rule: Mapping[str, Any] | None, r: _Reader) -> int | None:
    if rule is None:
        return None
    value = r.raw(rule["key"])
    if "derive" in rule:
        value = DERIVED[rule["derive"]](value)
    number = _number(value)
    if number is None:
        return None
    served = int(number) - int(rule.get("minus", 0))
    return served if served >= 0 else None


_CHECKS: dict[str, tuple[Check, ...]] = {}


def checks_of(data: EngineKnowledge) -> tuple[Check, ...]:
    """The engine's checks, parsed once."""
    if data.engine not in _CHECKS:
        _CHECKS[data.engine] = tuple(
            Check.from_data(raw, source_text(raw["source"])) for raw in data.raw_checks
        )
    return _CHECKS[data.engine]


def _severity(
    check: Check, at: VersionInForce, data: EngineKnowledge
) -> tuple[IssueSeverity, str] | None:
    """The check's severity at the version in force and why it is lowered (``""``: it
    is not), or None where it does not apply.

    A fail rests on the engine at its version (BRIEF): a check fails only at a version
    its source was read at or after (``seen_in``; none recorded: the newest version
    specgate knows). Pinned below that, or with the version unknown and the settings
    used not bounding it to that range, it warns and says so; a check whose source is
    not confirmed always warns.
    """
    version = at.judged
    if check.lifetime is not None:
        return _by_lifetime(check, check.lifetime, at, data)
    if check.since is not None and version < check.since:
        return None
    if check.until is not None and version >= check.until:
        return None
    severity = check.severity
    if severity not in ("fail", "if-claimed"):
        return severity, ""
    if not check.confirmed:
        return "warn", ""
    oldest = min(check.seen_in) if check.seen_in else at.newest
    read = _read_at(check, data)
    if at.version is not None:
        if at.version < oldest:
            return "warn", f"{read}, not confirmed at {at.shown}: a warning, not a fail"
        return severity, ""
    if at.low is not None and at.low >= oldest:
        return severity, ""  # every version the settings allow is in the confirmed range
    return "warn", (
        f"{read}, and the version run is not known (another release may behave "
        "otherwise): a warning, not a fail; state speculation.engine_version to pin it"
    )


def _by_lifetime(
    check: Check, life: Lifetime, at: VersionInForce, data: EngineKnowledge
) -> tuple[IssueSeverity, str] | None:
    """:func:`_severity` of a check with a lifetime: pinned, its severity where the
    lifetime holds, a warning where it is not known, nothing where it is absent;
    unpinned, its severity only when it holds at every version the settings allow
    (from their oldest, ``at.low``, to the newest, ``at.judged``)."""
    held = life.at(at.judged)
    if held == "absent":
        return None
    severity = check.severity
    if severity not in ("fail", "if-claimed"):
        return severity, ""
    if not check.confirmed:
        return "warn", ""
    read = _read_at(check, data)
    if at.version is not None:
        if held == "holds":
            return severity, ""
        return "warn", f"{read}, not confirmed at {at.shown}: a warning, not a fail"
    if life.throughout(at.low, at.judged):
        return severity, ""  # every version the settings allow is inside the lifetime
    return "warn", (
        f"{read}, and the version run is not known (another release may behave "
        "otherwise): a warning, not a fail; state speculation.engine_version to pin it"
    )


def _read_at(check: Check, data: EngineKnowledge) -> str:
    """Where the check's behaviour was read, for messages: ``seen in 0.27.1, 0.32.0``;
    with a lifetime, ``held from b2995 to b4094 by its history (SOURCE)``."""
    life = check.lifetime
    if life is not None:
        first = shown_version(data.engine, life.first)
        if life.last == life.first:
            return f"held in {data.display_name} {first} only by its history ({life.source})"
        to = shown_version(data.engine, life.last) if life.last else data.newest_text
        return f"held in {data.display_name} {first} to {to} by its history ({life.source})"
    if not check.seen_in:
        return f"read as {data.display_name} {data.newest_text}, the newest specgate knows"
    seen = ", ".join(shown_version(data.engine, v) for v in sorted(check.seen_in))
    return f"seen in {data.display_name} {seen} only"


def _render(
    check: Check,
    reader: _Reader,
    at_opt: Opt | None,
    at: VersionInForce,
    data: EngineKnowledge,
    *,
    why: str = "",
) -> tuple[str, str, str]:
    """The issue's message (the engine's effect and the check's words), its details
    (the source read, the version judged at, why a fail is lowered), each said once,
    and its next action (an SG310 check's: the replacement the engine names, or none)."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return match.group(0)[0]  # an escaped brace
        if name == "value":
            return _shown(at_opt.value) if at_opt is not None else "?"
        if name == "spelled":
            return (at_opt.spelled or "") if at_opt is not None else ""
        if name == "problem":
            return reader.problem or ""
        if name.startswith("key:"):
            return _shown(reader.raw(name[4:]))
        return match.group(0)

    engine = data.display_name
    text = _PLACEHOLDER.sub(fill, check.message)
    evidence = _PLACEHOLDER.sub(fill, check.details)
    lead = f"{engine} {_EFFECT_WORDS[check.effect]}"
    read_elsewhere = check.lifetime is not None or (
        at.judged not in check.seen_in and (check.seen_in or at.judged != at.newest)
    )  # no versions recorded: read at the newest specgate knows, which at.shown may name
    if not why and read_elsewhere:
        why = _read_at(check, data)  # the source was read at another version
    judged = f"judged at {engine} {at.shown}"
    if (
        not check.seen_in
        and at.version is None
        and at.judged == at.newest
        and why.startswith(_read_at(check, data))
    ):
        judged = ""  # "read as X, the newest specgate knows" says it once
    details = "; ".join(
        part
        for part in (
            evidence,
            f"source {check.source}",
            judged,
            "" if check.confirmed else "not confirmed in the engine's source",
            why,
        )
        if part
    )
    if check.code == "SG310":
        spelled = (at_opt.spelled if at_opt is not None else None) or check.at[0].split(".")[-1]
        verb = "deprecates" if check.effect == "deprecated" else "removed"
        action = replacing(spelled, check.replacement, engine, verb=verb)
    else:
        spelled = (at_opt.spelled or "") if at_opt is not None else ""
        template = check.action or (_EFFECT_ACTION.get(check.effect, "") if spelled else "")
        action = _PLACEHOLDER.sub(fill, template.replace("{engine}", engine))
    return f"{lead}: {text}", details, action


def _present(opt: Opt | None) -> bool:
    return opt is not None and opt.value is not None


class _Reader:
    """Reads keys of the view, the reader's fields and the facts for a condition."""

    def __init__(
        self, options: Mapping[str, Opt], fields: Mapping[str, object], facts: Mapping[str, object]
    ) -> None:
        self.options = options
        self.fields = fields
        self.facts = facts
        self.problem: str | None = None

    def raw(self, key: str) -> object:
        if key.startswith("field."):
            return self.fields.get(key[6:])
        if key.startswith("fact."):
            return self.facts.get(key[5:])
        if key.startswith("resolved."):
            resolved = self.fields.get("resolved")
            return resolved.get(key[9:]) if isinstance(resolved, Mapping) else None
        opt = self.options.get(key)
        return None if opt is None else opt.value


def _cond(node: Mapping[str, Any], r: _Reader) -> Tri:
    if "all" in node:
        parts = [_cond(c, r) for c in node["all"]]
        return False if False in parts else (None if None in parts else True)
    if "any" in node:
        parts = [_cond(c, r) for c in node["any"]]
        return True if True in parts else (None if None in parts else False)
    if "not" in node:
        inner = _cond(node["not"], r)
        return None if inner is None else not inner
    if "set" in node:
        return r.raw(node["set"]) is not None
    if "unset" in node:
        return r.raw(node["unset"]) is None
    key = node["key"]
    value = r.raw(key)
    if value is UNSETTLED:  # set, its value not known (keywise): no comparison holds
        return None
    if value is None and "default_key" in node:
        value = r.raw(node["default_key"])
    if value is None and "default" in node:
        value = node["default"]  # the engine's own default for an unset option
    if "derive" in node:
        value = DERIVED[node["derive"]](value)
    results: list[Tri] = []
    plus = node.get("plus", 0)
    for op, operand in node.items():
        if op in _MODIFIERS:
            continue
        if op in _KEY_OPS:
            other = r.raw(operand)
            if other is UNSETTLED:
                results.append(None)
                continue
            if other is None and "other_default" in node:
                other = node["other_default"]
            if other is None:
                results.append(None)  # the other side is not known
                continue
            number = _number(other)
            if plus and number is not None:
                other = number + float(plus)
            if "times_key" in node:  # (other + plus) × another key's value: both known
                factor, base = _number(r.raw(node["times_key"])), _number(other)
                other = None if factor is None or base is None else base * factor
            results.append(None if other is None else _compare(op[:-4], value, other))
        elif op == "shape":
            results.append(_shape(operand, value, r))
        else:
            results.append(_compare(op, value, operand))
    return False if False in results else (None if None in results else True)


def _truth(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def _compare(op: str, value: object, operand: object) -> Tri:
    if op == "not_list":
        if value is None:
            return None
        return not isinstance(value, list)
    if op == "not_number":
        if value is None:
            return None
        return _number(value) is None
    if op == "matches":
        if value is None:
            return None
        return re.search(str(operand), str(value)[:1024]) is not None
    if value is None:
        return None
    if op in ("true", "false"):
        truth = _truth(value)
        return None if truth is None else (truth is (op == "true")) == bool(operand)
    if op in ("has_item", "lacks_item"):
        items = _items(value)
        if items is None:
            return None
        wanted = {str(o).lower() for o in (operand if isinstance(operand, list) else [operand])}
        found = bool(wanted & set(items))
        return found if op == "has_item" else not found
    if op in ("eq", "ne", "in", "not_in"):
        choices = operand if op in ("in", "not_in") else [operand]
        assert isinstance(choices, list)
        hit = any(_equal(value, c) for c in choices)
        return hit if op in ("eq", "in") else not hit
    number = _number(value)
    if op == "outside":
        assert isinstance(operand, list)
        if number is None:
            return None
        return number < float(operand[0]) or number > float(operand[1])
    other = _number(operand)
    if number is None or other is None:
        return None
    return {
        "lt": number < other,
        "le": number <= other,
        "gt": number > other,
        "ge": number >= other,
    }[op]


def _equal(value: object, other: object) -> bool:
    if isinstance(other, bool) or isinstance(value, bool):
        return _truth(value) is _truth(other) if isinstance(other, bool) else value == other
    if isinstance(other, (int, float)):
        number = _number(value)
        return number is not None and number == float(other)
    if isinstance(other, str):
        return isinstance(value, str) and value.strip().lower() == other.lower()
    return value == other


# --- shapes: structural validators named by the data ------------------------------


def _shape(name: str, value: object, r: _Reader) -> Tri:
    """Whether ``value`` breaks the named structural rule (True: it does, and
    ``r.problem`` says how)."""
    if value is None:
        return None
    problem = SHAPES[name](value)
    if problem is None:
        return False
    r.problem = problem
    return True
