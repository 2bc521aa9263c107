"""What every engine reader shares: value conversion and the record builder."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from specgate.core.errors import InputError, LimitReached, OutOfBounds, RefusedValue
from specgate.core.limits import MAX_DRAFT_LENGTH, MAX_INTEGER_DIGITS, bounded_int
from specgate.core.vocabulary import DraftPasses, Engine, Mechanism
from specgate.inputs.engines._source import Opt
from specgate.inputs.engines.code_refusals import Unconfirmed
from specgate.inputs.knowledge import Version
from specgate.inputs.types import EngineConfig, EngineIssue, IssueCode
from specgate.load.document import Span

Kind = Literal["config", "fragment"]
T = TypeVar("T")

#: What Python's int() reads from a command-line value (argparse ``type=int``).
_INT_TEXT = re.compile(r"^[-+]?\d+(?:_\d+)*$")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


@dataclass(frozen=True)
class Context:
    """What a reader knows besides the options.

    Attributes:
        file: the file as shown; ``pointer``: RFC 6901 pointer of the block.
        env: environment variables set for the command (``NAME=1 cmd``, ``export``,
            or an ``env``/``env_vars`` mapping beside the configuration).
        version: the engine version applied (None: unknown, read as the newest
            behaviour specgate knows); with the version unknown, the newest version
            the settings used allow (docs/engines.md#versions), ``version_shown`` then saying so
            and ``version_low`` the lowest they allow.
    """

    file: str
    pointer: str
    env: Mapping[str, Opt] = field(default_factory=dict)
    version: Version | None = None
    version_shown: str | None = None
    program: str | None = None
    #: with the version unknown, the lowest version the settings used allow (None:
    #: unbounded or the version is known), docs/engines.md#versions
    version_low: Version | None = None
    #: keys of the speculative block whose values the launcher leaves unsettled and
    #: the loader left out (a Python dict's ``"model": DRAFT`` from the environment):
    #: absent from the options, yet not unset (docs/engines.md#unsettled-values)
    deferred: frozenset[str] = frozenset()
    #: the options are a command line (or a file the engine reads as one), whose
    #: values meet the engine's argument parser
    command_line: bool = False


def first(opts: Mapping[str, Opt], *names: str) -> tuple[str, Opt] | None:
    """The first of ``names`` present with a non-null value."""
    for name in names:
        opt = opts.get(name)
        if opt is not None and opt.value is not None:
            return name, opt
    return None


def as_int(opt: Opt, name: str, file: str) -> int:
    """An integer option (``3``, ``"3"``).

    Raises:
        RefusedValue: not an integer, at the value's line (SG307 on the deployment).
        InputError: one past Python's digit limit (``int()``, and so the engine's
            argument parser, refuses it), at the value's line.
    """
    value = opt.value
    if isinstance(value, bool):
        raise _refused(opt, name, file, f"{name} must be an integer, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_TEXT.match(value.strip()):
        text = value.strip()
        number = bounded_int(text.lstrip("+-").replace("_", ""))
        if number is None:  # Python's int() refuses it too: the engine cannot read it
            raise InputError(
                f"{name}: integer of {len(text):,} characters is too long "
                f"(specgate's limit is {MAX_INTEGER_DIGITS:,} decimal digits)",
                file,
                opt.span.line,
            )
        return -number if text.startswith("-") else number
    raise _refused(opt, name, file, f"{name} must be an integer, not {_repr(value)}")


def as_float(opt: Opt, name: str, file: str) -> float:
    """A real option (``0.4``, ``"0.4"``).

    Raises:
        RefusedValue: not a number, at the value's line (SG307 on the deployment).
    """
    value = opt.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise _refused(opt, name, file, f"{name} must be a number, not {_repr(value)}")


def as_bool(opt: Opt, name: str, file: str) -> bool:
    """A boolean option: YAML booleans, a bare switch, ``"1"``/``"true"``/``"0"``….

    Raises:
        RefusedValue: any other value, at its line (SG307 on the deployment).
    """
    value = opt.value
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _refused(opt, name, file, f"{name} must be true or false, not {_repr(value)}")


def json_block(opt: Opt, name: str, file: str) -> Mapping[str, Opt]:
    """The keys of an option whose value must be a JSON object (or a mapping).

    ``name`` is the option's canonical name, used when the user's spelling is
    unknown; messages name the option as spelled (``speculative-config``).

    Raises:
        RefusedValue: at the value's line (SG307 on the deployment): "NAME is not valid
            JSON: <json's message>", or "NAME must be a JSON object" for valid JSON of
            another shape.
    """
    if opt.sub is not None:
        return opt.sub
    shown = (opt.spelled or name).lstrip("-")
    from specgate.load.json_loader import TOO_DEEP, loads

    try:
        loads(as_str(opt))
    except ValueError as exc:
        if str(exc) == TOO_DEEP:  # a reader's bound, not the value's type: the file stops
            raise LimitReached(f"{shown} is not valid JSON: {exc}", file, opt.span.line) from None
        raise _refused(opt, name, file, f"{shown} is not valid JSON: {exc}") from None
    raise _refused(opt, name, file, f"{shown} must be a JSON object, not {_repr(opt.value)}")


def _repr(value: object) -> str:
    """``value`` for a message, at most 60 characters."""
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "…"


def _refused(opt: Opt, name: str, file: str, reason: str) -> RefusedValue:
    """A value not of its setting's type: SG307 on the deployment at the value's line,
    not the end of the run (docs/engines.md#refused-values); a warn until the reader of
    the form that holds it knows the engine's own refusal (:func:`.refused.judge`)."""
    return RefusedValue(
        reason, opt.span.file or file, opt.span.line, what=name, column=opt.span.column,
        value=opt.value,
    )


def judged_key(
    opt: Opt,
    name: str,
    b: Builder,
    convert: Callable[[Opt, str, str], T],
    check: Callable[[str, Opt], None] | None = None,
) -> T | None:
    """``convert(opt, name, file)`` for a key of a speculative block the engine's field
    data judges (``fields.check_block``; ``check`` judges a key that check skipped):
    None where that check made the value an SG307 issue (``speculative_config_key:NAME``,
    the engine's own refusal: one cause, one finding), so the value ends the reading
    of nothing else."""
    try:
        return convert(opt, name, b.ctx.file)
    except RefusedValue:
        judged = f"speculative_config_key:{name}"
        if check is not None and not any(i.field == judged for i in b.issues):
            check(name, opt)
        if any(i.field == judged for i in b.issues):
            return None
        raise


def must_be_json(value: object) -> bool:
    """A string that should hold a JSON object for a JSON-valued option but does not
    parse to one (empty, ``none`` and ``null`` mean "not set" and are excluded)."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if text.lower() in ("", "none", "null"):
        return False
    from specgate.load.json_loader import loads

    try:
        return not isinstance(loads(text), dict)
    except ValueError:
        return True


def as_str(opt: Opt) -> str:
    """The option's value as text."""
    return str(opt.value)


@dataclass
class Builder:
    """Collects spans, issues and notes while a reader works, then builds the record."""

    engine: Engine
    ctx: Context
    spans: dict[str, Span] = field(default_factory=dict)
    issues: list[EngineIssue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: (data default key, the setting that states D, the lowest version the config's
    #: own spelling allows) when D is the engine's default
    draft_default: tuple[str, str, Version | None] | None = None

    def default_draft_length(self, key: str, setting: str, since: Version | None = None) -> None:
        """Record that D is the engine's default ``key`` of the data file, which
        ``setting`` (a flag or key) would state; ``since``: the config's spelling exists
        only from that version (docs/engines.md#versions: a default that differs by version, read at
        a version that is not pinned, is an assumption)."""
        self.draft_default = (key, setting, since)

    def at(self, field_name: str, opt: Opt | None) -> None:
        """Record that ``field_name`` was read from ``opt`` (first reading wins)."""
        if opt is not None:
            self.spans.setdefault(field_name, opt.span)

    def issue(
        self,
        code: IssueCode,
        message: str,
        field_name: str,
        severity: Literal["fail", "warn"] | None = None,
        *,
        details: str = "",
        action: str = "",
    ) -> None:
        """Record an engine-level problem about ``field_name`` (``severity``,
        ``details``, ``action``: see :class:`~specgate.inputs.types.EngineIssue`). A
        refusal resting on data not confirmed in the engine's source
        (:class:`~.code_refusals.Unconfirmed`) is a warning, whatever ``severity``."""
        if isinstance(message, Unconfirmed) and severity in (None, "fail"):
            severity = "warn"
        self.issues.append(
            EngineIssue(code, message, field_name, severity, details=details, action=action)
        )

    def note(self, text: str) -> None:
        """Record a sentence for the report (defaults used, aliases resolved)."""
        self.notes.append(text)

    def build(
        self,
        *,
        mechanism: Mechanism | None,
        draft_length: int | None,
        verify_tokens: int | None,
        draft_length_is_max: bool = False,
        lossy_acceptance: bool = False,
        tensor_parallel_size: int | None = None,
        attention_data_parallel: bool = False,
        draft_model: str | None = None,
        max_model_len: int | None = None,
        target_model: str | None = None,
        draft_passes: DraftPasses | None = None,
        draft_tensor_parallel_size: int | None = None,
        draft_length_moves: str | None = None,
    ) -> EngineConfig:
        """The finished :class:`EngineConfig`."""
        return EngineConfig(
            engine=self.engine,
            path=self.ctx.file,
            pointer=self.ctx.pointer,
            mechanism=mechanism,
            draft_length=draft_length,
            verify_tokens=verify_tokens,
            draft_length_is_max=draft_length_is_max,
            lossy_acceptance=lossy_acceptance,
            tensor_parallel_size=tensor_parallel_size,
            attention_data_parallel=attention_data_parallel,
            draft_model=draft_model,
            max_model_len=max_model_len,
            target_model=target_model,
            issues=tuple(self.issues),
            spans=dict(self.spans),
            notes=tuple(self.notes),
            draft_passes=draft_passes,
            draft_tensor_parallel_size=draft_tensor_parallel_size,
            draft_length_default=self.draft_default if draft_length is not None else None,
            draft_length_moves=draft_length_moves if draft_length is not None else None,
        )


#: The largest draft length, tree size or verify width specgate reads from an engine
#: config (limits.py's bound on D); above it the deployment is not judged on the file
#: (SG315 at the value's line, docs/engines.md#out-of-bounds), so no loop or allocation
#: grows with a number a repository holds (docs/trust.md#hostile-repositories).
MAX_DRAFT_TOKENS = MAX_DRAFT_LENGTH


def positive(
    builder: Builder,
    value: int | None,
    name: str,
    field_name: str,
    *,
    tokens: bool = True,
) -> int | None:
    """``value`` when ≥ 1; else an SG307 issue (the engines refuse 0 or negative) and None.

    0 goes as −2 does: a value the engine refuses never runs, so no other rule reads it
    as the served value (docs/trust.md#one-cause-one-finding: a refused
    ``num_speculative_tokens: 0`` is SG307 alone, not also SG103 "AL exceeds 1 + D = 1").

    Raises:
        OutOfBounds: a draft-token count (``tokens``) above :data:`MAX_DRAFT_TOKENS`,
            at its line.
    """
    if tokens:
        bounded(builder, value, name, field_name)
    if value is not None and value < 1:
        builder.issue("SG307", f"{name} is {value}; the engine needs at least 1", field_name)
        return None
    return value


def opts_get(opts: Mapping[str, Opt], name: str) -> Opt | None:
    """``opts[name]`` when present with a non-null value."""
    opt = opts.get(name)
    return opt if opt is not None and opt.value is not None else None


def _shown(value: int) -> str:
    """``value`` for a message: a number of more than 20 digits by its size alone."""
    digits = len(str(abs(value)))
    if digits <= 20:
        return str(value)
    return f"{'-' if value < 0 else ''}(a {digits:,}-digit number)"


def bounded(
    builder: Builder, value: int | None, name: str, field_name: str, *, minimum: int | None = None
) -> int | None:
    """``value`` unchanged when at most :data:`MAX_DRAFT_TOKENS` (and, with ``minimum``,
    at least that: for an engine that does not refuse a negative count itself, such a
    value is no draft length to judge).

    Raises:
        OutOfBounds: a value out of those bounds, at the line recorded for
            ``field_name``: a finding on the deployment (SG315), not the end of the run.
    """
    reason = None
    if value is not None and minimum is not None and value < minimum:
        reason = f"{name} {_shown(value)} is below {minimum}: it counts draft tokens"
    elif value is not None and value > MAX_DRAFT_TOKENS:
        reason = (
            f"{name} {_shown(value)} is above specgate's limit of {MAX_DRAFT_TOKENS} "
            "draft tokens"
        )
    if reason is not None:
        span = builder.spans.get(field_name)
        raise OutOfBounds(
            reason,
            # the span's own file when another file set the value (a transformers
            # assistant folder's generation_config.json), else the config's
            (span.file if span is not None else None) or builder.ctx.file,
            span.line if span else None,
            what=name,
            column=span.column if span else None,
        )
    return value
