"""vLLM: ``vllm serve`` YAML, ``--speculative-config '<json>'`` and V0 flat flags.

Sources: ``vllm-project/vllm:vllm/config/speculative.py`` (``SpeculativeConfig``:
method names and aliases, defaults, validation), ``docs/features/speculative_decoding``,
``docs/configuration/serve_args.md`` (YAML keys are the long option names, ``-``
or ``_``), and for V0 (≤ 0.8.2) ``docs.vllm.ai/en/v0.7.1/features/spec_decode.html``.
See docs/engines.md docs/theory.md#vocabulary.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Literal

from specgate.core.vocabulary import DraftPasses, Mechanism
from specgate.inputs.cmdline import Flag, FlagSpec
from specgate.inputs.engines import vllm_rules, vllm_sizes
from specgate.inputs.engines._base import (
    Builder,
    Context,
    Kind,
    as_bool,
    as_int,
    as_str,
    json_block,
    judged_key,
    must_be_json,
    opts_get,
    positive,
)
from specgate.inputs.engines._source import UNSETTLED, CommandSource, Opt, Options, norm_key
from specgate.inputs.engines.code_refusals import Refusal
from specgate.inputs.engines.fields import check_block, did_you_mean
from specgate.inputs.engines.vllm_dotted import dotted_options
from specgate.inputs.engines.vllm_rules import method_mechanism
from specgate.inputs.knowledge import (
    Version,
    absent_throughout,
    format_version,
    gone_after,
    knowledge,
)
from specgate.inputs.pointer import parse_json_scalar
from specgate.inputs.types import EngineConfig, EngineIssue

PROGRAMS = ("vllm", "vllm.entrypoints")

_DATA = knowledge("vllm")

# How vLLM's parser spells a word ('_' read as '-' in a '--' word's name up to its first
# '.', FlexibleArgumentParser.parse_args; argparse abbreviations, read by the recorded
# parser: an abbreviation it refuses is read as no flag) is the data's flag_spelling
# (data/engines/vllm.json, docs/engines.md#flag-spellings), as are the flags, their
# aliases (-sc, -tp) and the --spec-* shorthands.
FLAGS = _DATA.flags()
#: ``--spec-method`` → ``method``: shorthand flags that set one key of the block.
SHORTHANDS = _DATA.shorthands()
#: Prefix of the option :func:`merge_shorthands` leaves for a shorthand given beside the
#: same key of the block (no flag's name starts with it).
CONFLICT = "\x00shorthand:"

SPEC_KEYS = frozenset(
    {
        "method",
        "model",
        "num_speculative_tokens",
        "draft_tensor_parallel_size",
        "prompt_lookup_min",
        "prompt_lookup_max",
        "quantization",
        "max_model_len",
        "revision",
        "code_revision",
        "enforce_eager",
        "disable_by_batch_size",
        "rejection_sample_method",
        "draft_sample_method",
        "parallel_drafting",
        "suffix_decoding_max_tree_depth",
        "suffix_decoding_max_cached_requests",
        "suffix_decoding_max_spec_factor",
        "suffix_decoding_min_token_prob",
        "speculative_token_tree",
        "num_speculative_tokens_per_batch_size",
        "synthetic_acceptance_rates",
        "synthetic_acceptance_length",
        "use_heterogeneous_vocab",
        "disable_padded_drafter_batch",
        "draft_load_config",
        "kv_cache_dtype",
        "attention_backend",
        "disable_logprobs",
        "disable_log_stats",
        "acceptance_method",
    }
)

_METHODS: Mapping[str, str] = _DATA.table("methods")
# Methods vLLM refuses without a draft `model` (SpeculativeConfig.__post_init__: with no
# model only mtp and dspark (the target's own weights), ngram, ngram_gpu, suffix and
# extract_hidden_states are filled in; custom_class needs a module path; everything
# else raises "num_speculative_tokens was provided but without speculative model", or,
# without num_speculative_tokens, "num_speculative_tokens must be provided").
_NEEDS_MODEL = frozenset(_DATA.table("needs_model"))
_ONE_PASS = frozenset(_DATA.table("one_pass_methods"))
#: Methods whose proposer drafts every position from one forward (Medusa heads).
_ONE_FORWARD = frozenset(_DATA.table("one_forward_methods"))
#: Names vLLM does not read but that suggest a drafter when its config is not given
#: (``speculation.draft_hf_config``): a guess the draft's config replaces.
_NAME_HINTS: Mapping[str, str] = _DATA.table("draft_name_hints")
_ADAPTIVE_KEYS: Mapping[str, str] = _DATA.table("adaptive_keys")
#: Method names vLLM accepts (exact, case-sensitive: a pydantic Literal); some exist
#: at some versions only (the data's ``versions`` section).
_ACCEPTED_METHODS = tuple(_DATA.table("accepted_methods"))
#: Keys whose values the reader judges itself (one cause, one finding).
_JUDGED_KEYS = frozenset(
    {"method", "model", "num_speculative_tokens", "draft_tensor_parallel_size",
     "tensor_parallel_size", "speculative_token_tree"}
)
SUFFIX_MAX_TREE_DEPTH = int(_DATA.default("suffix_decoding_max_tree_depth", None))  # type: ignore[call-overload]


def _is_method(value: object) -> bool:
    if not isinstance(value, str):
        return False
    key = value.strip().lower()
    return key in _METHODS or key.endswith("_mtp")


def _spec_block(value: object) -> bool:
    """A ``speculative_config`` value naming vLLM speculation (not TRT-LLM's).

    A string that is not a JSON object counts too (unless it names TRT-LLM's
    ``decoding_type``): the reader then reports it as invalid JSON at its line,
    rather than the search finding "no speculative decoding"."""
    if must_be_json(value):
        return "decoding_type" not in str(value)
    inner = parse_json_scalar(value) if isinstance(value, str) else value
    return isinstance(inner, Mapping) and "decoding_type" not in inner and bool(inner)


def detect_mapping(data: Mapping[object, object]) -> Kind | None:
    """``config`` for a serve mapping with a speculative block or V0 ``speculative_model``,
    or a bare block; ``fragment`` for V0 ``num_speculative_tokens`` without a model."""
    keys = {norm_key(k): v for k, v in data.items()}
    if _spec_block(keys.get("speculative_config")):
        return "config"
    if keys.get("speculative_model") is not None:
        return "config"
    if any(keys.get(short) is not None for short in SHORTHANDS):
        return "config"
    bare = set(keys) <= SPEC_KEYS
    if bare and (_is_method(keys.get("method")) or "num_speculative_tokens" in keys):
        return "config"
    if keys.get("num_speculative_tokens") is not None:
        return "fragment"
    return None


def detect_flags(flags: Mapping[str, Flag], dotted: Mapping[str, object]) -> Kind | None:
    """Same verdicts for a ``vllm serve`` command line."""
    shorthand = any(f"--{name.replace('_', '-')}" in flags for name in SHORTHANDS)
    if "--speculative-config" in flags or dotted or shorthand or "--speculative-model" in flags:
        return "config"
    if "--num-speculative-tokens" in flags:
        return "fragment"
    return None


def _v0_block(opts: Options, b: Builder) -> dict[str, Opt]:
    """V0 flat keys translated to V1 block keys."""
    block: dict[str, Opt] = {}
    renames = {
        "speculative_model": "model",
        "num_speculative_tokens": "num_speculative_tokens",
        "ngram_prompt_lookup_max": "prompt_lookup_max",
        "ngram_prompt_lookup_min": "prompt_lookup_min",
        "speculative_draft_tensor_parallel_size": "draft_tensor_parallel_size",
        "spec_decoding_acceptance_method": "acceptance_method",
    }
    for old, new in renames.items():
        opt = opts_get(opts, old)
        if opt is not None:
            block[new] = opt
    if block:
        b.note("read vLLM V0 flat speculative flags (vLLM ≤ 0.8.2)")
    return block


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise a vLLM configuration.

    ``opts`` is a serve mapping / command line (``speculative_config`` holds the
    block as a mapping or JSON text), a bare ``speculative_config`` block, or V0
    flat keys. D = ``num_speculative_tokens``; N_verify = D + 1 (chain); n-gram and
    suffix D are maxima; suffix without ``num_speculative_tokens`` uses
    ``suffix_decoding_max_tree_depth`` (24).

    Raises:
        InputError: a value of the wrong type, or a ``speculative-config`` that is
            not a JSON object ("speculative-config is not valid JSON: …").
    """
    b = Builder("vllm", ctx)
    opts = vllm_rules.shorthand_conflicts(merge_shorthands(opts), CONFLICT, b)
    spec = opts_get(opts, "speculative_config")
    if spec is not None and vllm_sizes.none_word(spec, ctx):
        vllm_sizes.configures_none(spec, ctx)
    v0 = False
    if spec is not None:
        block: Mapping[str, Opt] = json_block(spec, "speculative_config", ctx.file)
    elif opts_get(opts, "speculative_model") is not None or (
        opts_get(opts, "num_speculative_tokens") is not None and not set(opts) <= SPEC_KEYS
    ):
        block = _v0_block(opts, b)
        v0 = True
    else:
        block = opts
    target_tp = vllm_sizes.target_tp(opts, block, b, ctx)
    max_len = vllm_sizes.max_model_len(opts, block, b, ctx)
    mechanism, model, method, how = _mechanism(block, b, ctx)
    if not v0:
        check_block(
            block,
            _DATA,
            "speculative_config",
            ctx.version,
            b,
            method=method,
            draft_model=method not in vllm_rules.MODEL_FREE,
            skip=_JUDGED_KEYS,
            shown=ctx.version_shown,
            low=ctx.version_low,
        )
    if v0 and mechanism == "eagle3":
        _v0_eagle3(opts, b)
    check = None if v0 else _type_check(method, b, ctx)
    d = _draft_length(block, mechanism, method, b, ctx, check=check)
    n = None if d is None else d + 1
    tree = vllm_sizes.token_tree(block, b, ctx)
    if tree is not None:
        d, n = tree
    is_max = mechanism in ("ngram", "suffix") or _adaptive(block, b)
    lossy = _lossy(block, b)
    draft_tp = _check_draft_tp(block, target_tp, None if v0 else method, b, ctx, check=check)
    if mechanism == "ngram":
        _check_lookup(block, b, ctx)
    if not v0:
        vllm_rules.check_combinations(block, method, d, b, ctx)
    hetero = opts_get(block, "use_heterogeneous_vocab")
    cap = opts_get(block, "max_model_len")
    method_opt = opts_get(block, "method")
    resolution: dict[str, object] = {
        "method": method,
        # the method as the file spells it (deepseek_mtp), for messages: vLLM's own
        # name for it (mtp) is not one the user wrote
        "method_written": as_str(method_opt).strip() if method_opt is not None else None,
        "how": how,
        "model": model,
        "heterogeneous_vocab": hetero is not None and hetero.value is True,
        "draft_max_model_len": (
            cap.value if cap is not None and isinstance(cap.value, int) else None
        ),
        "draft_tp_stated": opts_get(block, "draft_tensor_parallel_size") is not None,
    }
    config = b.build(
        mechanism=mechanism,
        draft_length=d,
        verify_tokens=n,
        draft_length_is_max=is_max,
        lossy_acceptance=lossy,
        tensor_parallel_size=target_tp,
        draft_model=model,
        max_model_len=max_len,
        draft_passes=_draft_passes(block, mechanism, b, ctx),
        draft_tensor_parallel_size=draft_tp,
    )
    # refusals read in vLLM's source: a warning where they were not read (judged)
    pinned = ctx.version if ctx.version_shown is None else None
    issues = vllm_rules.judged(config.issues, pinned, ctx.version_low)
    return replace(config, resolution=resolution, issues=issues)


def engine_settings(opts: Options) -> Options:
    """The serve-level flags and keys of ``opts``: none when ``opts`` is a bare
    ``speculative_config`` block (whose ``num_speculative_tokens`` is a block key, not
    the removed V0 flag of that name)."""
    if opts_get(opts, "speculative_config") is None and set(opts) <= SPEC_KEYS:
        return {}
    return opts


def _v0_eagle3(opts: Options, b: Builder) -> None:
    """V0 flat flags naming an EAGLE-3 head: EAGLE-3 exists only in the V1 engine
    (vLLM ≥ 0.8), whose command line no longer has these flags, so no vLLM release
    runs this config as written (report: model cards still show it)."""
    for name in ("speculative_model", "num_speculative_tokens"):
        opt = opts_get(opts, name)
        if opt is None:
            continue
        # One cause, one finding: the flag naming the head carries it.
        setting = _DATA.setting(name)
        field_name = f"setting:{setting.name}" if setting is not None else name
        b.at(field_name, opt)
        b.issue(
            "SG310",
            f"{opt.spelled or name} is a vLLM V0 flag (removed in "
            f"{setting.removed_text if setting else '0.8'}) but EAGLE-3 runs only on the V1 "
            "engine: no vLLM release serves this as written; use --speculative-config "
            "with method eagle3",
            field_name,
            action="Replace the V0 flags --speculative-model and --num-speculative-tokens "
            'with --speculative-config \'{"method": "eagle3", "model": …, '
            '"num_speculative_tokens": …}\'.',
        )
        return


def _check_method(name: str, b: Builder, ctx: Context) -> None:
    """SG307 for a ``method`` vLLM at the version in force refuses (data
    ``accepted_methods``: the ``SpeculativeMethod`` Literal, matched exactly; some names
    exist at some versions only), with the closest accepted name; a warn when the
    version's list is not recorded, or when the version is not pinned and a release the
    settings allow accepts it (docs/engines.md#versions: medusa, accepted through 0.32.0,
    refused by 0.33.0)."""
    version = ctx.version
    at = "the newest known" if version is None else format_version(version)
    if name in _ACCEPTED_METHODS:
        presence = _DATA.presence("accepted_methods", name, version)
        source = _DATA.versions_note("accepted_methods", name)
        if presence == "present":
            _gone_later(name, b, ctx, source)
            return
        if presence == "unknown":
            b.issue(
                "SG307",
                f"vLLM {at} may not accept speculative method {name!r}: it was not "
                f"recorded at this version ({source})",
                "mechanism",
                "warn",
            )
            return
        when = (
            "added in a later release"
            if _DATA.present_above("accepted_methods", name, version)
            else "removed by this release"
        )
        pinned = version is not None and ctx.version_shown is None
        if not pinned and not absent_throughout(
            _DATA.recorded("accepted_methods", name), ctx.version_low, version or _DATA.newest
        ):
            kept = ", ".join(
                format_version(v) for v, present in _DATA.recorded("accepted_methods", name)
                if present
            )
            b.issue(
                "SG307",
                f"vLLM {at if version else _DATA.newest_text} refuses speculative method "
                f"{name!r} ({when}; {source}), but the version is not pinned and releases "
                f"the settings allow accept it (recorded in {kept}): a warning, not a fail; "
                "state speculation.engine_version to pin it",
                "mechanism",
                "warn",
            )
            return
        b.issue(
            "SG307",
            # absent at this version by the recorded method lists: not judged by
            # vllm_rules.judged (str() drops the Refusal mark)
            str(vllm_rules.refuses(
                version, f"speculative method {name!r} is not one of its methods ({when})", source
            )),
            "mechanism",
        )
        return
    hint = did_you_mean(name.strip(), _ACCEPTED_METHODS)
    suggestion = f" (did you mean {hint!r}?)" if hint else ""
    b.issue(
        "SG307",
        Refusal(
            f"vLLM refuses speculative method {name!r}{suggestion}: SpeculativeConfig.method "
            f"is one of {len(_ACCEPTED_METHODS)} exact, case-sensitive names"
        ),
        "mechanism",
        action=f"Replace method {name!r} with {hint!r}." if hint
        else "Write a method vLLM accepts (its exact, case-sensitive name).",
    )


def _gone_later(name: str, b: Builder, ctx: Context, source: str) -> None:
    """SG307 warn for a method the release it is read at accepts when the version is not
    pinned and a later recorded release refuses it: the method narrowed the release
    (settings.used_block_keys; docs/engines.md#versions), which may still be that one.
    Unpinned medusa is read at 0.32.0, the newest that accepts it; 0.33.0 refuses it
    (tests/data/engine_oracle/vllm-0.33.0.json, vllm-0004-method)."""
    if ctx.version is None or ctx.version_shown is None:
        return
    later = gone_after(_DATA.recorded("accepted_methods", name), ctx.version)
    if later is None:
        return
    b.issue(
        "SG307",
        f"vLLM {format_version(later)} refuses speculative method {name!r} (removed by "
        f"that release; {source}); the version is not pinned and may be that release or "
        f"a later one: read as vLLM {ctx.version_shown.split(' (')[0]}, the newest the settings "
        "allow (a warning, not a fail); state speculation.engine_version to pin it",
        "mechanism",
        "warn",
    )


def _adaptive(block: Mapping[str, Opt], b: Builder) -> bool:
    """Keys that make the per-step draft length vary (data table ``adaptive_keys``)."""
    adaptive = False
    for key, why in _ADAPTIVE_KEYS.items():
        opt = opts_get(block, key)
        if opt is None or opt.value is False:
            continue
        b.at("draft_length_is_max", opt)
        b.note(f"{key}: {why}")
        adaptive = True
    return adaptive


def _draft_passes(
    block: Mapping[str, Opt], mechanism: Mechanism | None, b: Builder, ctx: Context
) -> DraftPasses | None:
    """``single`` for one-pass drafters: ``parallel_drafting: true`` or a method vLLM
    forces it on for (dflash, dspark, pard; data table ``one_pass_methods``)."""
    method = opts_get(block, "method")
    model = opts_get(block, "model")
    if method is not None:
        name = as_str(method).strip().lower()
    else:  # detected from the draft's name, as vLLM does (dflash, dspark, pard)
        found = vllm_rules.detected_method(as_str(model)) if model is not None else None
        name = found[0] if found is not None else (mechanism or "")
    parallel = opts_get(block, "parallel_drafting")
    if parallel is not None and judged_key(parallel, "parallel_drafting", b, as_bool):
        b.at("draft_passes", parallel)
        b.note("parallel_drafting: one draft pass yields every draft token (draft_passes single)")
        return "single"
    if name in _ONE_PASS or mechanism in _ONE_PASS:
        return "single"
    if name in _ONE_FORWARD or mechanism in _ONE_FORWARD:
        b.note(
            f"vLLM {name or mechanism}: the proposer drafts every position from one forward "
            "(vllm/v1/spec_decode/medusa.py propose): draft passes single"
        )
        return "single"
    return None


def mtp_layer_issue(config: EngineConfig, mtp_layers: int | None) -> EngineIssue | None:
    """vLLM's MTP check, once the target's MTP layer count (``n_predict``) is known.

    vLLM refuses ``num_speculative_tokens > n_predict`` unless it is a whole multiple
    of ``n_predict`` (the layers are then run repeatedly).

    Returns:
        an SG307 issue about ``draft_length``, or None when valid or unknown.
    """
    d = config.draft_length
    if config.engine != "vllm" or config.mechanism != "mtp" or d is None or not mtp_layers:
        return None
    if d > mtp_layers and d % mtp_layers:
        return EngineIssue(
            "SG307",
            Refusal(
                f"num_speculative_tokens {d} exceeds the model's {mtp_layers} MTP layers and "
                "is not a multiple of them; vLLM refuses"
            ),
            "draft_length",
        )
    return None


def command_options(source: CommandSource, flags: FlagSpec = FLAGS) -> Options:
    """Options of a ``vllm serve`` command (read with ``flags``: :data:`FLAGS` with the
    recorded parser of the version in force), ``--speculative-config.KEY VALUE`` (and
    ``-sc.KEY``) and the ``--spec-method``/``--spec-model``/``--spec-tokens`` shorthands
    merged into the speculative block (they win over keys of the JSON value)."""
    opts = source.options(flags)
    for index, word in enumerate(source.command.argv[:4096]):
        # --limit-mm-per-prompt.MODALITY: merged into the JSON value by vLLM's parser;
        # not read here, so the limits are not settled (vllm_facts.mm_inputs)
        if word.replace("_", "-").startswith("--limit-mm-per-prompt."):
            opts["limit_mm_per_prompt"] = Opt(UNSETTLED, source.spans[index])
    dotted = {
        key: Opt(_scalar(value), source.spans[index])
        for key, (value, index) in dotted_options(source.command.argv).items()
    }
    if dotted and "speculative_config" in opts:
        # FlexibleArgumentParser.parse_args appends the dotted keys as a last
        # `--speculative-config JSON` ("Add the dict args back as if they were originally
        # passed as JSON"), so argparse's last value wins: the JSON written is dropped,
        # not merged (dotted_groups; docs/engines.md#dotted-options)
        written = opts["speculative_config"]
        opts["speculative_config"] = Opt(
            json.dumps({k: o.value for k, o in dotted.items()}), written.span, dict(dotted)
        )
        return merge_shorthands(opts)
    return merge_shorthands(opts, dotted)


def merge_shorthands(opts: Options, dotted: Mapping[str, Opt] | None = None) -> Options:
    """``opts`` with the ``spec-method``/``spec-model``/``spec-tokens`` shorthands (flags,
    or keys of a ``vllm serve --config`` YAML) and dotted ``speculative-config.KEY``
    values merged into the speculative block; they win over its JSON keys. A shorthand
    beside the same key (which vLLM refuses) also leaves an option named ``CONFLICT`` +
    the key, which :func:`~.vllm_rules.shorthand_conflicts` turns into the refusal."""
    opts = dict(opts)
    extra: dict[str, Opt] = {}
    spec = opts.get("speculative_config")
    sub: dict[str, Opt] = dict(spec.sub) if spec is not None and spec.sub is not None else {}
    stated = {**sub, **(dotted or {})}
    for flag_key, block_key in SHORTHANDS.items():
        short = opts.pop(flag_key, None)
        if short is not None and short.value is not None:
            value = _scalar(short.value) if isinstance(short.value, str) else short.value
            extra[block_key] = Opt(value, short.span, spelled=short.spelled)
            if block_key in stated:  # refused by vLLM (vllm_rules.shorthand_conflicts)
                opts[f"{CONFLICT}{block_key}"] = extra[block_key]
    extra.update(dotted or {})
    if not extra:
        return opts
    sub.update(extra)
    span = spec.span if spec is not None else next(iter(extra.values())).span
    opts["speculative_config"] = Opt(json.dumps({k: o.value for k, o in sub.items()}), span, sub)
    return opts


def _scalar(text: str) -> object:
    from specgate.load.json_loader import loads

    try:
        return loads(text)
    except ValueError:
        return text


def _mechanism(
    block: Mapping[str, Opt], b: Builder, ctx: Context
) -> tuple[Mechanism | None, str | None, str | None, str]:
    """(mechanism, draft model, vLLM's method name, how it was found) as
    ``SpeculativeConfig.__post_init__`` resolves them: no method ⇒ ``custom_class`` for
    a dotted import path, ``ngram`` for the model ``ngram``, else ``draft_model``; then,
    for any method but eagle, eagle3, dflash and dspark, the draft's path may name the
    method (``eagle-``, ``eagle3``, ``dflash``, ``dspark``: data ``draft_names``),
    whatever ``method`` says. ``how``: ``stated`` | ``name`` | ``default`` | ``hint``
    (a name vLLM does not read, until the draft's config says)."""
    method_opt = opts_get(block, "method")
    model_opt = opts_get(block, "model")
    model = as_str(model_opt) if model_opt is not None else None
    b.at("draft_model", model_opt)
    if method_opt is None and model is None:
        b.at("mechanism", opts_get(block, "num_speculative_tokens"))
        b.issue(
            "SG307",
            Refusal(
                "speculative_config has neither method nor model: vLLM refuses it "
                "('num_speculative_tokens was provided but without speculative model')"
            ),
            "mechanism",
        )
        return None, None, None, "default"
    how = "stated"
    if method_opt is not None:
        b.at("mechanism", method_opt)
        name = as_str(method_opt)
        _check_method(name, b, ctx)
        method = name.strip()
        if method_mechanism(name) == "mtp" and method.lower() != "mtp":
            b.note(f"vLLM method {name!r} is a deprecated alias of 'mtp'")
            method = "mtp"
        if method.lower() == "ngram_gpu":
            b.note("vLLM method 'ngram_gpu' is n-gram lookup on the GPU")
        if model is None and method.lower() in _NEEDS_MODEL and "model" not in ctx.deferred:
            b.issue(
                "SG307",
                Refusal(
                    f"vLLM method {method!r} needs a draft model (speculative_config "
                    "`model`); vLLM refuses it without one"
                ),
                "mechanism",
            )
    else:
        b.at("mechanism", model_opt)
        assert model is not None
        how = "default"
        if vllm_rules.custom_class_path(model):
            method = "custom_class"
            b.note(f"model {model!r} is a dotted import path: vLLM's custom_class proposer")
        elif model.lower() in ("ngram", "[ngram]"):
            b.note(f"model {model!r} is vLLM V0's way to name n-gram lookup")
            return "ngram", None, "ngram", how
        else:
            method = "draft_model"
    if model is not None and method not in vllm_rules.KEPT_METHODS | vllm_rules.MODEL_FREE:
        found = vllm_rules.detected_method(model)
        if found is not None and found[0] != method:
            b.note(
                f"the draft's path names {found[0]!r} ({found[1]!r}): vLLM runs it as "
                f"{found[0]!r}" + (f" whatever method {method!r} says" if how == "stated" else "")
            )
            method, how = found[0], "name"
        elif how == "default":
            hint = next((m for needle, m in _NAME_HINTS.items() if needle in model.lower()), None)
            if hint is not None:
                b.note(
                    f"method not given: {hint!r} guessed from the draft's name; vLLM reads "
                    "the drafter from the draft's config (give speculation.draft_hf_config)"
                )
                method, how = hint, "hint"
            else:
                b.note(
                    "method not given: vLLM treats the draft as a separate draft model unless "
                    "its config says otherwise"
                )
    mechanism = method_mechanism(method)
    return mechanism, None if mechanism in ("ngram", "suffix") else model, method, how


def _draft_length(
    block: Mapping[str, Opt],
    mechanism: Mechanism | None,
    method: str | None,
    b: Builder,
    ctx: Context,
    *,
    check: Callable[[str, Opt], None] | None = None,
) -> int | None:
    """D = ``num_speculative_tokens`` (``true`` is 1, as pydantic reads it). Unset: suffix
    decoding drafts up to its tree depth; a draft whose config has ``n_predict`` gives D
    (known once the draft's config is read); otherwise vLLM refuses to start (a warn
    until the draft's config shows it has no ``n_predict``)."""
    k = opts_get(block, "num_speculative_tokens")
    if k is not None:
        b.at("draft_length", k)
        value = int(k.value) if isinstance(k.value, bool) else judged_key(
            k, "num_speculative_tokens", b, as_int, check
        )
        return positive(b, value, "num_speculative_tokens", "draft_length")
    if mechanism == "suffix":
        depth = opts_get(block, "suffix_decoding_max_tree_depth")
        b.at("draft_length", depth)
        value = (
            SUFFIX_MAX_TREE_DEPTH
            if depth is None
            else judged_key(depth, "suffix_decoding_max_tree_depth", b, as_int)
        )
        if value is None:
            return None
        cap = _DATA.default("suffix_num_speculative_tokens_cap", ctx.version)
        if isinstance(cap, int) and cap < value:
            b.note(
                f"num_speculative_tokens not set: suffix decoding drafts {cap}, the smaller of "
                f"{cap} and its tree depth ({value}), as vLLM does from 0.34.0"
            )
            return cap
        b.note(
            f"num_speculative_tokens not set: suffix decoding drafts up to its tree depth ({value})"
        )
        return value
    if method is None or any(i.field.startswith("speculative_config_key:") for i in b.issues):
        # pydantic refuses the unknown key first: the checks after validation never run
        return None
    b.at("d_missing", opts_get(block, "method") or opts_get(block, "model"))
    confirmed = method in vllm_rules.MODEL_FREE or method in ("mtp", "dspark")
    b.issue(
        "SG307",
        vllm_rules.refuses(
            ctx.version,
            "num_speculative_tokens is not set"
            + ("" if confirmed else " and the draft's config gives no n_predict (not known "
               "without speculation.draft_hf_config)"),
            "vllm-project/vllm:vllm/config/speculative.py@v0.32.0 _verify_args",
        ),
        "d_missing",
        None if confirmed else "warn",
    )
    return None


def _lossy(block: Mapping[str, Opt], b: Builder) -> bool:
    lossy = False
    sample = opts_get(block, "rejection_sample_method")
    if sample is not None and as_str(sample).strip().lower() == "synthetic":
        b.at("lossy_acceptance", sample)
        b.issue(
            "SG304",
            "rejection_sample_method: synthetic fakes acceptance (benchmarking only)",
            "lossy_acceptance",
        )
        lossy = True
    method = opts_get(block, "acceptance_method")
    if method is not None and as_str(method).strip().lower() == "typical_acceptance_sampler":
        b.at("lossy_acceptance", method)
        b.issue(
            "SG304",
            "typical_acceptance_sampler accepts drafts the target would reject (lossy)",
            "lossy_acceptance",
        )
        lossy = True
    return lossy


def _type_check(method: str | None, b: Builder, ctx: Context) -> Callable[[str, Opt], None]:
    """For a key :func:`check_block` leaves to this reader (``_JUDGED_KEYS``): its value
    judged by vLLM's SpeculativeConfig field (type, bounds) when that value is not of
    its type, so the refusal is the engine's recorded one (not for a V0 block: its
    flags are no SpeculativeConfig keys)."""

    def check(key: str, opt: Opt) -> None:
        check_block(
            {key: opt}, _DATA, "speculative_config", ctx.version, b, method=method,
            draft_model=method not in vllm_rules.MODEL_FREE, shown=ctx.version_shown,
        )

    return check


def _check_draft_tp(
    block: Mapping[str, Opt],
    target_tp: int | None,
    method: str | None,
    b: Builder,
    ctx: Context,
    *,
    check: Callable[[str, Opt], None] | None = None,
) -> int | None:
    """The draft TP that runs (:func:`vllm_rules.draft_tp`), with SG307 when vLLM
    refuses or ignores the one stated at ``target_tp``."""
    opt = opts_get(block, "draft_tensor_parallel_size")
    stated = None
    if opt is not None:
        b.at("draft_tensor_parallel_size", opt)
        stated = judged_key(opt, "draft_tensor_parallel_size", b, as_int, check)
        if stated is not None and stated < 1:
            b.issue(
                "SG307",
                vllm_rules.refuses(
                    ctx.version,
                    f"draft_tensor_parallel_size is {stated}; it must be at least 1",
                    "vllm-project/vllm:vllm/config/speculative.py@v0.32.0",
                ),
                "draft_tensor_parallel_size",
            )
            return None
    written = opts_get(block, "method")
    served, problem = vllm_rules.draft_tp(
        stated, target_tp, method, ctx.version, as_str(written) if written is not None else None
    )
    if problem is not None:
        b.issue("SG307", problem[0], "draft_tensor_parallel_size", problem[1])
    return served


def draft_tp_problem(
    draft_tp: int, target_tp: int | None, method: str | None, version: Version | None
) -> tuple[int | None, tuple[str, Literal["fail", "warn"] | None] | None]:
    """(the draft TP that runs, why vLLM refuses or ignores a stated ``draft_tp``
    beside a target TP of ``target_tp``); see :func:`vllm_rules.draft_tp`."""
    return vllm_rules.draft_tp(draft_tp, target_tp, method, version)


def _check_lookup(block: Mapping[str, Opt], b: Builder, ctx: Context) -> None:
    low = opts_get(block, "prompt_lookup_min")
    high = opts_get(block, "prompt_lookup_max")
    if low is None or high is None:
        return
    lo = judged_key(low, "prompt_lookup_min", b, as_int)
    hi = judged_key(high, "prompt_lookup_max", b, as_int)
    if lo is None or hi is None:
        return
    b.at("prompt_lookup_min", low)
    b.at("prompt_lookup_max", high)
    if lo > hi:
        b.issue(
            "SG307",
            Refusal(
                f"prompt_lookup_min {lo} is above prompt_lookup_max {hi}; vLLM refuses"
            ),
            "prompt_lookup_min",
        )
