"""TensorRT-LLM (PyTorch backend): LLM-API options YAML (``trtllm-serve --config``,
``--extra_llm_api_options``) with a ``speculative_config`` block.

Sources: ``NVIDIA/TensorRT-LLM:docs/source/features/speculative-decoding.md`` and
``tensorrt_llm/llmapi/llm_args.py`` (``decoding_type`` values, ``max_draft_len``,
``num_nextn_predict_layers``, dynamic tree bounds, relaxed MTP acceptance).
See docs/engines.md docs/theory.md#vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import cast

from specgate.core.vocabulary import Mechanism
from specgate.inputs.engines._base import (
    Builder,
    Context,
    Kind,
    as_bool,
    as_int,
    as_str,
    bounded,
    first,
    json_block,
    must_be_json,
    opts_get,
    positive,
)
from specgate.inputs.engines._source import Opt, Options, norm_key
from specgate.inputs.engines.code_refusals import Refusal, judged
from specgate.inputs.engines.parallel_floor import at_least_one
from specgate.inputs.knowledge import format_version, knowledge, parse_version
from specgate.inputs.types import EngineConfig

PROGRAMS = ("trtllm-serve", "trtllm-bench")

_DATA = knowledge("trtllm")
#: decoding_type discriminators, exactly as the engine spells them (pydantic Literal).
_DECODING: Mapping[str, str] = _DATA.table("decoding_types")
_BY_FOLDED: Mapping[str, str] = {name.lower().replace("_", ""): name for name in _DECODING}
_FORMER: Mapping[str, str] = _DATA.table("former_decoding_types")
#: Keys that held the draft weights in earlier releases → the last release read with it.
_FORMER_DRAFT_KEYS: Mapping[str, str] = _DATA.table("former_draft_keys")
_ADAPTIVE = frozenset(_DATA.table("adaptive_types"))
_ONE_PASS = frozenset(_DATA.table("one_pass_types"))
#: Sections of a disaggregated config (role ``decode`` or ``prefill``); every top-level
#: key is inherited by each section that does not set it.
_SECTIONS: Mapping[str, str] = _DATA.table("server_sections")
_DECODE = tuple(k for k, role in _SECTIONS.items() if role == "decode")
#: Keys holding options laid over the mapping that holds them (Baseten patch_kwargs).
_OVERLAYS = tuple(_DATA.table("option_overlays"))
#: decoding types whose target verifies several tokens per draft token (PARD: 2 × D).
_VERIFY_PER_DRAFT: Mapping[str, int] = {
    name: int(factor) for name, factor in _DATA.table("verify_per_draft_token").items()
}
#: ``--backend`` values (and the ``trt`` alias) → the backend that serves
#: (tensorrt_llm/commands/serve.py: ChoiceWithAlias, launch_server).
_BACKENDS: Mapping[str, str] = _DATA.table("backends")
_EAGLE_NOTE = "decoding_type Eagle is TensorRT-LLM's backward-compatible alias of Eagle3"


def eagle_note(backend: str | None) -> str:
    """The note on ``decoding_type: Eagle`` for the backend that serves it: ``None``
    the default PyTorch backend (read as EAGLE-3), else the ``--backend`` value of the
    TensorRT engine backend as written (``trt``; read as EAGLE-1/2)."""
    if backend is None:
        return (
            _EAGLE_NOTE + " on the PyTorch backend (read as EAGLE-3; an EAGLE-1/2 draft "
            "checkpoint is incompatible there); the TensorRT engine backend (trtllm-serve "
            "--backend trt) builds EAGLE-1/2 for LLaMA targets only"
        )
    return (
        f"decoding_type Eagle on the TensorRT engine backend (backend {backend[:20]!r}) "
        "builds EAGLE-1/2 (EagleForCausalLM, a LLaMA model): read as EAGLE, not EAGLE-3"
    )


def _eagle(opts: Options, b: Builder, ctx: Context) -> Mechanism:
    """``decoding_type: Eagle``'s mechanism by the options file's own ``backend`` key
    (merged over the command's ``--backend``): EAGLE-1/2 on the TensorRT engine
    backend, else EAGLE-3. A Python launcher's ``backend=`` is not read: the class
    imported as ``LLM`` decides the backend there."""
    backend = None if ctx.file.endswith(".py") else opts_get(opts, "backend")
    if backend is not None and _BACKENDS.get(str(backend.value)) == "tensorrt":
        b.note(eagle_note(str(backend.value)))
        return "eagle"
    b.note(eagle_note(None))
    return "eagle3"


def with_backend(config: EngineConfig, opt: Opt) -> EngineConfig:
    """``config`` (read from an options file) served with the backend ``opt`` that the
    launching command states (``trtllm-serve … --backend trt``): the options file's own
    ``backend`` key wins (update_llm_args_with_extra_dict merges the file over the
    command), else the command's value is what the engine's checks read as ``backend``,
    and ``decoding_type: Eagle`` on the TensorRT engine backend is EAGLE-1/2."""
    options = config.check_options
    if "backend" in options:
        return config
    config = replace(config, check_options={**options, "backend": opt})
    if str(opt.value) not in _BACKENDS:
        choices = ", ".join(sorted(_BACKENDS))
        note = (
            f"{opt.spelled or '--backend'} {str(opt.value)[:40]!r} is none of trtllm-serve's "
            f"choices ({choices}; matched case-sensitively): the command is refused; "
            "read as the default backend"
        )
        return replace(config, notes=(*config.notes, note))
    kind = options.get("spec.decoding_type")
    if _BACKENDS[str(opt.value)] != "tensorrt" or kind is None or kind.value != "Eagle":
        return config
    notes = tuple(n for n in config.notes if not n.startswith(_EAGLE_NOTE))
    return replace(config, mechanism="eagle", notes=(*notes, eagle_note(str(opt.value))))


def _block(data: Mapping[object, object]) -> Mapping[object, object] | None:
    keys = {norm_key(k): v for k, v in data.items()}
    inner = keys.get("speculative_config")
    return inner if isinstance(inner, Mapping) else None


def detect_mapping(data: Mapping[object, object]) -> Kind | None:
    """``config`` for a mapping whose ``speculative_config`` (or itself) has a
    ``decoding_type``; ``fragment`` for draft lengths without one. A disaggregated
    config (a ``generation_servers`` section) is one configuration when its
    generation servers speculate (their own ``speculative_config`` or the top-level
    one they inherit), and configures nothing when only its context servers do; a
    mapping whose overlay (``patch_kwargs``) speculates is one configuration."""
    keys = {norm_key(k): v for k, v in data.items()}
    sections = [v for k in _SECTIONS if isinstance(v := keys.get(k), Mapping)]
    if sections:
        own = _detect_own(data)
        decode = [v for k in _DECODE if isinstance(v := keys.get(k), Mapping)]
        if own == "config" or any(_detect_own(section) == "config" for section in decode):
            return "config"
        return "fragment" if any(_detect_own(s) is not None for s in sections) else None
    for key in _OVERLAYS:
        overlay = keys.get(key)
        if isinstance(overlay, Mapping) and _detect_own(overlay) == "config":
            return "config"
    return _detect_own(data)


def _detect_own(data: Mapping[object, object]) -> Kind | None:
    keys = {norm_key(k): v for k, v in data.items()}
    raw = keys.get("speculative_config")
    if must_be_json(raw) and "decoding_type" in str(raw):
        return "config"  # the reader reports the invalid JSON at its line
    inner = _block(data)
    for node in (inner, None if inner is not None else data):
        if node is None:
            continue
        keys = {norm_key(k): v for k, v in node.items()}
        if keys.get("decoding_type") not in (None, ""):
            return "config"
        if node is inner and ("max_draft_len" in keys or "num_nextn_predict_layers" in keys):
            return "fragment"
    return None


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise a TensorRT-LLM options mapping (or its bare ``speculative_config``).

    D = ``max_draft_len`` (older MTP files: ``num_nextn_predict_layers``); N_verify =
    D + 1, or ``max_total_draft_tokens`` + 1 with ``use_dynamic_tree``, or the
    ``eagle_choices`` count + 1 for a static tree. NGram and SA (suffix automaton)
    drafts are maxima.

    Raises:
        InputError: a value of the wrong type; a ``speculative_config`` string that
            is not a JSON object.
    """
    b = Builder("trtllm", ctx)
    opts = _served_options(opts, b)
    spec = opts_get(opts, "speculative_config")
    if spec is not None and must_be_json(spec.value):
        json_block(spec, "speculative_config", ctx.file)
    outer = spec is not None and spec.sub is not None
    block: Mapping[str, Opt] = spec.sub if spec is not None and spec.sub is not None else opts
    kind_opt = opts_get(block, "decoding_type")
    b.at("mechanism", kind_opt)
    kind = _discriminator(as_str(kind_opt).strip() if kind_opt is not None else "", b, kind_opt)
    mechanism = cast(Mechanism, _DECODING.get(kind, "other"))
    if kind == "Eagle":
        mechanism = _eagle(opts, b, ctx)
    model = first(block, "speculative_model", "speculative_model_dir")
    if model is None:
        model = _former_draft_key(block, b, ctx)
    b.at("draft_model", model[1] if model else None)
    d = _draft_length(block, kind, b, ctx)
    n = _verify_tokens(block, d, b, ctx)
    factor = _VERIFY_PER_DRAFT.get(kind)
    if factor is not None and d is not None and not _flag(block, "use_dynamic_tree", ctx):
        n = factor * d
        b.note(
            f"decoding_type {kind} verifies {factor} tokens per draft token "
            f"(tokens_per_gen_step): N_verify = {factor} × {d} = {n}"
        )
    schedule = opts_get(block, "draft_len_schedule")
    if schedule is not None:
        b.at("draft_length_is_max", schedule)
        b.note("draft_len_schedule lowers the draft length with the batch size: D is a maximum")
    lossy = _flag(block, "use_relaxed_acceptance_for_thinking", ctx)
    if lossy:
        b.at("lossy_acceptance", opts_get(block, "use_relaxed_acceptance_for_thinking"))
        b.issue(
            "SG304",
            "use_relaxed_acceptance_for_thinking accepts MTP drafts by relaxed "
            "top-k/delta during thinking (lossy)",
            "lossy_acceptance",
        )
    if _flag(block, "use_sa_spec", ctx):
        b.note("use_sa_spec: a suffix-automaton lookup can replace the draft when it matches")
    tp = None
    dp = False
    max_len = None
    if outer:
        len_opt = opts_get(opts, "max_seq_len")
        b.at("max_model_len", len_opt)
        max_len = as_int(len_opt, "max_seq_len", ctx.file) if len_opt is not None else None
        tp_opt = opts_get(opts, "tensor_parallel_size")
        b.at("tensor_parallel_size", tp_opt)
        tp = at_least_one(
            b,
            as_int(tp_opt, "tensor_parallel_size", ctx.file) if tp_opt is not None else None,
            ctx,
            "trtllm",
            "tensor_parallel_size",
        )
        dp = _flag(opts, "enable_attention_dp", ctx)
        if dp:
            b.at("attention_data_parallel", opts_get(opts, "enable_attention_dp"))
    config = b.build(
        mechanism=mechanism,
        draft_length=d,
        verify_tokens=n,
        draft_length_is_max=kind in _ADAPTIVE or schedule is not None,
        draft_passes="single" if kind in _ONE_PASS else None,
        lossy_acceptance=lossy,
        tensor_parallel_size=tp,
        attention_data_parallel=dp,
        draft_model=as_str(model[1]) if model else None,
        max_model_len=max_len,
    )
    # refusals read in the source of the newest release specgate knows: a warning at an
    # older pin or unpinned (code_refusals.judged)
    pinned = ctx.version if ctx.version_shown is None else None
    issues = judged(config.issues, pinned, ctx.version_low, _DATA.newest, "TensorRT-LLM")
    return replace(config, issues=issues)


def _served_options(opts: Options, b: Builder) -> Options:
    """The options the decoding servers run with: an overlay's (``patch_kwargs``) laid
    over those beside it; a disaggregated config's generation section with every
    top-level key it does not set (``extract_disagg_cfg``). A key a section sets to
    another value than the top level is the engine's refusal (SG307)."""
    for key in _OVERLAYS:
        overlay = opts_get(opts, key)
        if overlay is not None and overlay.sub is not None:
            beside = {k: v for k, v in opts.items() if k != key}
            b.note(f"{key}: its options laid over those beside it")
            opts = {**beside, **overlay.sub}
    present = [k for k in _SECTIONS if (o := opts_get(opts, k)) is not None and o.sub is not None]
    if not present:
        return opts
    top = {k: v for k, v in opts.items() if k not in _SECTIONS}
    for name in present:
        section = opts[name].sub
        assert section is not None
        for key, opt in section.items():
            above = top.get(key)
            plain = above is not None and above.sub is None and opt.sub is None
            if plain and above is not None and above.value != opt.value:
                field_name = f"setting:{name}.{key}"
                b.at(field_name, opt)
                b.issue(
                    "SG307",
                    Refusal(
                        f"TensorRT-LLM refuses to start: {key} is {above.value!r} at the top "
                        f"level and {opt.value!r} in {name} (extract_disagg_cfg: 'specified "
                        "both in the top-level and in the section, but with different "
                        "values')"
                    ),
                    field_name,
                )
    decode = next((k for k in _DECODE if k in present), None)
    if decode is None:
        return top
    section = opts[decode].sub
    assert section is not None
    b.note(
        f"a disaggregated config: the {decode} decode, so their options (with the "
        "top-level ones they inherit) are read; the context servers only prefill"
    )
    return {**top, **section}


def _discriminator(spelled: str, b: Builder, opt: Opt | None) -> str:
    """The engine's exact ``decoding_type`` for ``spelled``. TensorRT-LLM matches the
    discriminator exactly; another spelling of a known one (``eagle3``) is SG310 (the
    engine refuses it) and is still read as meant. A spelling earlier releases took
    (``DraftTarget``, data table ``former_decoding_types``) is read as meant with a note."""
    if not spelled or spelled in _DECODING:
        return spelled
    former = _FORMER.get(spelled)
    if former is not None:
        b.note(
            f"decoding_type {spelled!r} is the spelling of earlier TensorRT-LLM releases; "
            f"current ones accept exactly {former!r} (the release that changed it is not "
            "known, so neither is flagged); read as " + former
        )
        return former
    exact = _BY_FOLDED.get(spelled.lower().replace("_", "").replace("-", ""))
    if exact is None:
        return spelled
    b.at("decoding_type", opt)
    b.issue(
        "SG310",
        f"decoding_type {spelled!r} is not TensorRT-LLM's discriminator: the engine "
        f"accepts exactly {exact!r}; read as {exact}",
        "decoding_type",
        action=f"Replace decoding_type {spelled!r} with {exact!r} (TensorRT-LLM matches its "
        "discriminator exactly).",
    )
    return exact


def _former_draft_key(
    block: Mapping[str, Opt], b: Builder, ctx: Context
) -> tuple[str, Opt] | None:
    """The draft given by a key of earlier releases (``pytorch_weights_path``, data
    table ``former_draft_keys``): read as the draft. At or before the last release it
    was read in, a note; after it, or with the version unknown, SG310 warns (the
    release that dropped it was not read, so never a fail) at that key's line."""
    found = first(block, *_FORMER_DRAFT_KEYS)
    if found is None:
        return None
    key, opt = found
    last_text = _FORMER_DRAFT_KEYS[key]
    last = parse_version(last_text)
    if ctx.version is not None and ctx.version_shown is None and last and ctx.version <= last:
        b.note(f"{key}: the draft's weights, the key TensorRT-LLM {last_text} reads")
        return found
    field_name = f"setting:{key}"
    b.at(field_name, opt)
    version = (
        f"TensorRT-LLM {format_version(ctx.version)}"
        if ctx.version is not None and ctx.version_shown is None
        else "the version run (not known: state speculation.engine_version to pin it)"
    )
    b.issue(
        "SG310",
        f"{key} is the draft-weights key of TensorRT-LLM {last_text}: rename it to "
        "speculative_model_dir; read as the draft",
        field_name,
        "warn",
        details=f"{key} is read by EagleDecodingConfig and DraftTargetDecodingConfig of "
        f"{last_text}; later releases read the draft from speculative_model_dir (the "
        "newest, from speculative_model with speculative_model_dir as its alias). Whether "
        f"{version} still accepts {key} was not read "
        f"({_DATA.table_source('former_draft_keys')})",
        action=f"Replace {key} with speculative_model_dir.",
    )
    return found


def _flag(opts: Mapping[str, Opt], name: str, ctx: Context) -> bool:
    opt = opts_get(opts, name)
    return opt is not None and as_bool(opt, name, ctx.file)


def _draft_length(block: Mapping[str, Opt], kind: str, b: Builder, ctx: Context) -> int | None:
    opt = opts_get(block, "max_draft_len")
    if opt is None and kind == "MTP":
        opt = opts_get(block, "num_nextn_predict_layers")
        if opt is not None:
            b.note("max_draft_len not set: older MTP configs set D with num_nextn_predict_layers")
    if opt is None:
        b.note("max_draft_len not set: TensorRT-LLM's default for this decoding_type applies")
        return None
    b.at("draft_length", opt)
    return positive(
        b,
        as_int(opt, "max_draft_len", ctx.file),
        "max_draft_len",
        "draft_length",
    )


def _verify_tokens(block: Mapping[str, Opt], d: int | None, b: Builder, ctx: Context) -> int | None:
    if _flag(block, "use_dynamic_tree", ctx):
        total_opt = opts_get(block, "max_total_draft_tokens")
        topk_opt = opts_get(block, "dynamic_tree_max_topk")
        if topk_opt is None:
            topk_opt = opts_get(block, "dynamic_tree_max_topK")
        topk = as_int(topk_opt, "dynamic_tree_max_topK", ctx.file) if topk_opt else None
        if total_opt is None:
            if topk is None or d is None:
                b.note("use_dynamic_tree without max_total_draft_tokens: tree size unknown")
                return None
            b.at("verify_tokens", topk_opt)
            total = bounded(b, topk * d, "dynamic_tree_max_topK × max_draft_len", "verify_tokens")
            b.note(
                f"use_dynamic_tree without max_total_draft_tokens: TensorRT-LLM drafts "
                f"dynamic_tree_max_topK × max_draft_len = {topk} × {d} = {total} tokens, "
                f"N_verify {topk * d + 1}"
            )
            return topk * d + 1
        b.at("verify_tokens", total_opt)
        total = bounded(
            b,
            as_int(total_opt, "max_total_draft_tokens", ctx.file),
            "max_total_draft_tokens",
            "verify_tokens",
        )
        assert total is not None
        if d is not None and topk is not None and not d <= total <= topk * d:
            b.issue(
                "SG307",
                Refusal(
                    f"max_total_draft_tokens {total} must lie in [max_draft_len, "
                    f"dynamic_tree_max_topK·max_draft_len] = [{d}, {topk * d}]"
                ),
                "verify_tokens",
            )
        return total + 1
    choices = opts_get(block, "eagle_choices")
    if choices is not None and isinstance(choices.value, list):
        b.at("verify_tokens", choices)
        nodes = bounded(b, len(choices.value), "eagle_choices nodes", "verify_tokens")
        return None if nodes is None else nodes + 1
    return None if d is None else d + 1
