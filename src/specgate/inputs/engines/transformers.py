"""Hugging Face transformers assisted generation: ``generation_config.json`` (or a
mapping of ``generate`` keyword arguments).

Source: transformers ``GenerationConfig`` docstrings (``num_assistant_tokens``,
``num_assistant_tokens_schedule``, ``assistant_confidence_threshold``,
``prompt_lookup_num_tokens``, ``assistant_early_exit``). See docs/engines.md
docs/theory.md#vocabulary. Many hub ``generation_config.json`` files carry ``num_assistant_tokens``
defaults without any assistant: that configures no speculation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from specgate.inputs.engines._base import (
    Builder,
    Context,
    Kind,
    as_float,
    as_int,
    as_str,
    bounded,
    opts_get,
)
from specgate.inputs.engines._source import Opt, Options, norm_key
from specgate.inputs.engines.lifetime import behaviour_at, behaviour_lifetime
from specgate.inputs.knowledge import knowledge
from specgate.inputs.types import EngineConfig, EngineIssue
from specgate.load.assistant_folder import READ_FROM

_DATA = knowledge("transformers")
#: Settings the candidate generator reads from the assistant's own generation config.
_ASSISTANT_KEYS = frozenset(_DATA.table("assistant_config_keys"))

_ASSISTANT = ("assistant_model", "assistant_model_name_or_path")
#: The behaviour: settings given to generate() are ignored, the assistant's are read.
_IGNORED = "assistant-settings-from-its-config"
#: The schedules under which D moves during the run (docs/theory.md#d-is-a-maximum).
_MOVING_SCHEDULES = frozenset(_DATA.table("moving_schedules"))


def _assistant_settings(
    opts: Options, assisted: bool, b: Builder, ctx: Context
) -> Callable[[str], Opt | None]:
    """How an assistant's setting is read. The assistant's own generation config (the
    mapping ``assistant_generation_config``) is where the candidate generator reads
    ``num_assistant_tokens``, its schedule and the confidence threshold (data table
    ``assistant_config_keys``); given to ``generate()`` beside ``assistant_model`` they
    are ignored in the releases of behaviour ``assistant-settings-from-its-config``
    (its lifetime: transformers 4.35.0, where the settings came in, to the newest known,
    read in the wheels and asked of 4.40.0, 4.56.1 and 5.19.0): an SG307 warning (the
    setting has no effect), and the assistant's value (its default at the release) is
    what runs. At a release where that is not known the setting is read as given, with
    a warning that it may be ignored."""
    inner = opts_get(opts, "assistant_generation_config")
    own: Mapping[str, Opt] = inner.sub if inner is not None and inner.sub is not None else {}
    held = behaviour_at(_DATA, _IGNORED, ctx.version) if assisted else "absent"

    def setting(name: str) -> Opt | None:
        found = opts_get(own, name)
        if found is not None:
            return found
        given = opts_get(opts, name)
        if given is None or held == "absent" or name not in _ASSISTANT_KEYS:
            return given
        field_name = f"ignored:{name}"
        b.at(field_name, given)
        default = _DATA.default(name, ctx.version)
        # None: the release has no such setting (assistant_confidence_threshold before 4.45.0)
        served = (
            "where this release has no such setting"
            if default is None
            else f"so its value (default {default}) is served"
        )
        b.issues.append(
            EngineIssue(
                "SG307",
                f"transformers {'ignores' if held == 'holds' else 'may ignore'} {name} "
                "given to generate() beside assistant_model: the candidate generator reads "
                "the assistant's own generation_config (assistant_model.generation_config), "
                f"{served} "
                f"({_held_in()})",
                field_name,
                severity="warn",  # no effect: what runs is the assistant's value
            )
        )
        return None if held == "holds" else given

    return setting


def _held_in() -> str:
    """Where behaviour ``assistant-settings-from-its-config`` holds, for messages:
    ``held in transformers 4.35.0 to 5.19.0 by its history (SOURCE)``."""
    life = behaviour_lifetime(_DATA, _IGNORED)
    if life is None:  # since/until data: read at the newest release
        return f"read at transformers {_DATA.newest_text}"
    first = ".".join(map(str, life.first))
    last = ".".join(map(str, life.last)) if life.last is not None else _DATA.newest_text
    return f"held in transformers {first} to {last} by its history ({life.source})"


def detect_mapping(data: Mapping[object, object]) -> Kind | None:
    """``config`` with prompt lookup, an assistant model or early-exit self-speculation;
    ``fragment`` for assistant knobs alone."""
    keys = {norm_key(k): v for k, v in data.items()}
    if keys.get("prompt_lookup_num_tokens") is not None:
        return "config"
    if any(keys.get(k) is not None for k in (*_ASSISTANT, "assistant_early_exit")):
        return "config"
    return "fragment" if keys.get("num_assistant_tokens") is not None else None


#: The setting standing for pipeline()'s ``assistant_model`` keyword (data ``settings``):
#: from 4.48.0 only, so a script that gives it implies 4.48.0 or later.
PIPELINE_ASSISTANT = 'pipeline(assistant_model="id")'


def settings_of(opts: Options) -> Options:
    """The settings whose versions narrow the implied range (docs/engines.md#versions):
    a hub id string given to ``pipeline()`` as ``assistant_model`` (marked
    ``pipeline_assistant_id`` by :mod:`specgate.load.python_generate`) stands for
    :data:`PIPELINE_ASSISTANT`: the pipeline loads it from 4.48.0 (``pipelines/base.py``
    ``load_assistant_model``); the 4.47.1 wheel has no such loader and passes the string
    on to ``generate()``, which cannot use a string as a model. A model object given to
    ``pipeline()`` reaches ``generate()`` as a generate keyword in older releases too
    (``TextGenerationPipeline._sanitize_parameters``, 4.47.1), and ``assistant_model``
    given to ``generate()`` exists from 4.29.0: neither narrows the range."""
    marked = opts_get(opts, "pipeline_assistant_id")
    model = opts_get(opts, "assistant_model")
    if marked is None or model is None:
        return opts
    return {**opts, PIPELINE_ASSISTANT: replace(model, spelled=PIPELINE_ASSISTANT)}


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise assisted-generation settings.

    Prompt lookup: mechanism ngram, D = ``prompt_lookup_num_tokens`` (a maximum).
    Assistant: D = ``num_assistant_tokens``, a maximum with a confidence threshold > 0,
    only the starting value with the ``heuristic`` schedules (``draft_length_moves``);
    absent ⇒ the release's default (5 before 4.45.0, 20 from it). N_verify = D + 1.

    Raises:
        InputError: a value of the wrong type.
    """
    b = Builder("transformers", ctx)
    batch = opts_get(opts, "batch_size")
    if batch is not None:  # a script's inputs (specgate/load/python_generate.py)
        b.at("batch_size", batch)
        b.note(f"batch size {as_int(batch, 'batch_size', ctx.file)} (line {batch.span.line})")
    lookup = opts_get(opts, "prompt_lookup_num_tokens")
    if lookup is not None:
        b.at("mechanism", lookup)
        b.at("draft_length", lookup)
        k = as_int(lookup, "prompt_lookup_num_tokens", ctx.file)
        return b.build(
            mechanism="ngram", draft_length=k, verify_tokens=k + 1, draft_length_is_max=True
        )
    model_opt = next((o for k in _ASSISTANT if (o := opts_get(opts, k)) is not None), None)
    early = opts_get(opts, "assistant_early_exit")
    b.at("mechanism", model_opt or early)
    b.at("draft_model", model_opt)
    setting = _assistant_settings(opts, model_opt is not None, b, ctx)
    inner = opts_get(opts, "assistant_generation_config")
    own = opts_get(inner.sub, READ_FROM) if inner is not None and inner.sub else None
    if own is not None:
        b.note(f"the assistant's generation_config read from {as_str(own)}")
    # the assistant's own settings rest on its generation_config.json, not read
    unread = model_opt if own is None and model_opt is not None else None
    k_opt = setting("num_assistant_tokens")
    d: int | None = None
    if k_opt is not None:
        b.at("draft_length", k_opt)
        d = bounded(
            b,
            as_int(k_opt, "num_assistant_tokens", ctx.file),
            "num_assistant_tokens",
            "draft_length",
        )
    elif model_opt is not None or early is not None:
        default = _DATA.default("num_assistant_tokens", ctx.version)
        d = int(default) if isinstance(default, int) else None
        b.at("draft_length", model_opt or early)
        b.default_draft_length("num_assistant_tokens", "num_assistant_tokens")
        b.note(f"num_assistant_tokens not set: transformers' default is {d} {_where(ctx)}")
    is_max = False
    moves = _moves(setting("num_assistant_tokens_schedule"), d, b, ctx, unread)
    threshold_opt = setting("assistant_confidence_threshold")
    if threshold_opt is not None:
        threshold = as_float(threshold_opt, "assistant_confidence_threshold", ctx.file)
        b.at("draft_length_is_max", threshold_opt)
    else:
        default_threshold = _DATA.default("assistant_confidence_threshold", ctx.version)
        threshold = float(default_threshold) if isinstance(default_threshold, float) else 0.0
        if threshold > 0 and model_opt is not None:
            b.note(
                f"assistant_confidence_threshold not set: transformers' default {threshold} "
                "stops drafting early, so D is a maximum"
            )
    if threshold > 0 and model_opt is not None:
        is_max = True
    config = b.build(
        mechanism="draft_model" if model_opt is not None else "other",
        draft_length=d,
        verify_tokens=None if d is None else d + 1,
        draft_length_is_max=is_max,
        draft_model=_model_name(model_opt),
        draft_length_moves=moves,
    )
    if k_opt is None and unread is not None and d is not None:
        return replace(config, draft_length_assumed=_not_read_sentence(d, unread))
    return config


def _where(ctx: Context) -> str:
    """Where the default ``num_assistant_tokens`` read holds, for the note: the release
    pinned, every release the settings allow (``pipeline(assistant_model=…)``: 4.48.0 or
    later, where it is 20 throughout), else current releases with the older default
    (5 before 4.45.0). A default outside the versions the settings allow is not cited."""
    if ctx.version is not None and ctx.version_shown is None:
        return "in this release"
    values, gap = _DATA.default_values("num_assistant_tokens", ctx.version_low, None)
    if ctx.version_low is not None and len(values) == 1 and not gap:
        low = ".".join(map(str, ctx.version_low))
        return f"at every release the settings allow ({low} or later)"
    return "in current releases (5 before 4.45.0; version-sensitive)"


def _not_read_sentence(d: int, model_opt: Opt) -> str:
    """D is the release's default ``num_assistant_tokens`` and the assistant's own
    generation config is not read: ``from_pretrained`` loads it from the checkpoint's
    ``generation_config.json`` (transformers 5.19.0 generation/utils.py, the
    ``GenerationConfig.from_pretrained`` call of the model's loading), which may set
    ``num_assistant_tokens``, so the default is an assumption (docs/trust.md)."""
    return (
        f"D {d} is transformers' default num_assistant_tokens, assumed: the assistant's "
        f"generation_config is loaded by from_pretrained from {_config_file(model_opt)}, "
        "which specgate does not read and which may set num_assistant_tokens; set "
        "assistant_model.generation_config.num_assistant_tokens in the script to settle it"
    )


def _config_file(model_opt: Opt) -> str:
    """The assistant's generation_config.json, as messages name it."""
    name = _model_name(model_opt)
    return (
        f"{name}'s generation_config.json"
        if name
        else "the assistant checkpoint's generation_config.json"
    )


def _moves(
    schedule: Opt | None, d: int | None, b: Builder, ctx: Context, unread: Opt | None
) -> str | None:
    """The sentence saying that D moves (or may move) during the run, else None
    (docs/theory.md#d-is-a-maximum).

    The schedule as written, compared as transformers compares it (exactly: data table
    ``moving_schedules``); unset, its default at the version read, or with the version
    not pinned at any release the settings used allow (``heuristic`` before 4.45.0,
    ``constant`` from it: data defaults, read in the 4.44.2 and 4.45.0 wheels). Unset on
    an assistant whose own generation_config.json is not read (``unread``: a hub id),
    a default that keeps D is an assumption: that file may set ``heuristic``, so D may
    move (a fail that reads D then holds only at its cheapest reading)."""
    how = (
        f"it starts at num_assistant_tokens = {d}, adds 2 after a step that accepted every "
        "draft and subtracts 1 otherwise (never below 1), so D is neither fixed nor a "
        f"maximum ({_DATA.table_source('moving_schedules')}, update_candidate_strategy)"
    )
    fix = "set num_assistant_tokens_schedule: constant on the assistant to fix D"
    if schedule is not None:
        name = as_str(schedule)
        if name not in _MOVING_SCHEDULES:
            return None
        b.at("draft_length_moves", schedule)
        b.note(f"num_assistant_tokens_schedule {name!r} moves D during the run")
        return f"num_assistant_tokens_schedule {name!r} moves D during the run: {how}; {fix}"
    default = _DATA.default("num_assistant_tokens_schedule", ctx.version)
    if default in _MOVING_SCHEDULES:
        b.note(
            f"num_assistant_tokens_schedule not set: transformers' default {default!r} "
            "moves D during the run"
        )
        return (
            f"num_assistant_tokens_schedule is not set and transformers' default at this "
            f"release is {default!r}, which moves D during the run: {how}; {fix}"
        )
    pinned = ctx.version is not None and ctx.version_shown is None
    values, _gap = _DATA.default_values("num_assistant_tokens_schedule", ctx.version_low, None)
    moving = [] if pinned else [str(v) for v in values if v in _MOVING_SCHEDULES]
    if not moving:
        return _assumed_schedule(default, how, b, ctx, unread)
    b.note(
        f"num_assistant_tokens_schedule not set at a version not pinned: the default is "
        f"{moving[0]!r} in some releases, which moves D during the run"
    )
    return (
        "num_assistant_tokens_schedule is not set and the transformers version is not "
        f"pinned: its default is {moving[0]!r} in some releases the config may run, which "
        f"moves D during the run: {how}; state speculation.engine_version or {fix}"
    )


def _assumed_schedule(
    default: object, how: str, b: Builder, ctx: Context, unread: Opt | None
) -> str | None:
    """The sentence saying that a default schedule that keeps D is an assumption, the
    assistant's own generation_config.json not read (``unread``), else None."""
    if unread is None or behaviour_at(_DATA, _IGNORED, ctx.version) == "absent":
        return None
    b.note(
        f"num_assistant_tokens_schedule not set: transformers' default {default!r} is "
        "assumed (the assistant's generation_config.json is not read)"
    )
    return (
        f"num_assistant_tokens_schedule is transformers' default {default!r}, assumed: "
        f"the assistant's generation_config is loaded by from_pretrained from "
        f"{_config_file(unread)}, which specgate does not read and which may set "
        f"'heuristic' or 'heuristic_transient', moving D during the run: {how}; set "
        "assistant_model.generation_config.num_assistant_tokens_schedule in the script "
        "to settle it"
    )


def _model_name(opt: Opt | None) -> str | None:
    """The assistant's model name; None when a script passes a model whose name is not
    read (the mapping ``{"not_read": EXPR}`` of :mod:`specgate.load.python_generate`)."""
    if opt is None or (opt.sub is not None and "not_read" in opt.sub):
        return None
    return as_str(opt)
