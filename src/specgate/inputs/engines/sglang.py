"""SGLang: ``sglang.launch_server`` flags (command lines, argv lists) and server args
as YAML/JSON (``snake_case`` or ``kebab-case``).

Sources: ``sgl-project/sglang:python/sglang/srt/server_args.py`` (flags, the
``topk == 1`` rewrite of ``num_draft_tokens``, the all-or-none rule for
steps/topk/draft tokens, spec-v2's ``topk == 1``), ``eagle_utils.organize_draft_results``
(tree pool ``topk + (steps − 1)·topk²``), ``docs/advanced_features/speculative_decoding.md``.
See docs/engines.md#engines-read and the correction in tests/data/real/SOURCES.md (pr2150 row).
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
    as_bool,
    as_float,
    as_int,
    as_str,
    bounded,
    first,
    opts_get,
)
from specgate.inputs.engines._source import (
    ANY_NAME,
    UNSETTLED,
    Options,
    norm_key,
    refused_could_be,
)
from specgate.inputs.engines.check_values import shown as _shown
from specgate.inputs.engines.lifetime import behaviour_at, behaviour_lifetime
from specgate.inputs.knowledge import format_version, knowledge, parse_version
from specgate.inputs.types import EngineConfig, ModelShape

PROGRAMS = ("sglang",)

_DATA = knowledge("sglang")

# argparse with abbreviations on, words as written (flag_spelling in the data,
# docs/engines.md#flag-spellings). The flags (data/engines/sglang.json) are SGLang's
# speculative flags of releases up to late 2024 (when `--speculative-draft` was still
# unambiguous, as in sglang PR #2150), the few others read here, and newer ones that
# do not share those prefixes (--speculative-dflash-block-size, --speculative-adaptive);
# a prefix is matched against them.
FLAGS = _DATA.flags()

_ALGORITHMS: Mapping[str, str] = _DATA.table("algorithms")
_ONE_PASS = frozenset(_DATA.table("one_pass_algorithms"))
_MTP_ARCHITECTURES = frozenset(_DATA.table("eagle_without_draft_means_mtp"))
#: Targets whose own checkpoint the draft worker loads as an MTP draft when no draft path
#: is given (``_config_draft_model``, the engine's answer: data ``draft_worker_mtp_architectures``).
_SELF_MTP = _MTP_ARCHITECTURES | frozenset(_DATA.table("draft_worker_mtp_architectures"))
_AUTO_PARAMS: Mapping[str, str] = _DATA.table("auto_params")
_HOOK = "sgl-project/sglang:python/sglang/srt/arg_groups/speculative_hook.py@v0.5.23"
_TREE_KEYS = ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")
SPEC_V2_ENV = "SGLANG_ENABLE_SPEC_V2"


def _off(value: object) -> bool:
    """No algorithm: unset, empty, or ``NONE`` in any case (``from_string`` upper-cases
    it to ``SpeculativeAlgorithm.NONE``: no speculative decoding)."""
    return value is None or (isinstance(value, str) and value.strip().upper() in ("", "NONE"))


def detect_mapping(data: Mapping[object, object]) -> Kind | None:
    """``config`` when ``speculative_algorithm`` is set; ``fragment`` for draft fields
    (steps, topk, draft tokens, draft path) without an algorithm."""
    keys = {norm_key(k): v for k, v in data.items()}
    if not _off(keys.get("speculative_algorithm")):
        return "config"
    fields = (*_TREE_KEYS, "speculative_draft_model_path")
    if any(keys.get(k) is not None for k in fields):
        return "fragment"
    return None


def detect_flags(flags: Mapping[str, Flag]) -> Kind | None:
    """Same verdicts for a launcher command line."""
    algo = flags.get("--speculative-algorithm")
    if algo is not None and not _off(algo.value):
        return "config"
    fields = (
        "--speculative-num-steps",
        "--speculative-eagle-topk",
        "--speculative-num-draft-tokens",
        "--speculative-draft-model-path",
    )
    return "fragment" if any(f in flags for f in fields) else None


def read(opts: Options, ctx: Context) -> EngineConfig:
    """Normalise SGLang server args.

    Chain (``topk == 1``): D = steps, N_verify = steps + 1 (SGLang rewrites
    ``num_draft_tokens`` to that). Tree (``topk > 1``): D = steps (the deepest path),
    N_verify = ``num_draft_tokens``. NGRAM: N_verify = ``num_draft_tokens``, D =
    N_verify − 1 as a maximum. None of the three set ⇒ SGLang picks them from the
    model architecture: D and N_verify are None.

    Raises:
        InputError: a value of the wrong type.
    """
    b = Builder("sglang", ctx)
    algo_opt = opts_get(opts, "speculative_algorithm")
    parts = unsettled_parts(opts)
    algorithm = (
        as_str(algo_opt).strip().upper()
        if algo_opt is not None and not _not_settled(algo_opt) else ""
    )
    b.at("mechanism", algo_opt)
    draft_opt = opts_get(opts, "speculative_draft_model_path")
    # set but not settled (keywise): a draft runs, its name not known
    unsettled = _not_settled(draft_opt)
    draft = as_str(draft_opt) if draft_opt is not None and not unsettled else None
    b.at("draft_model", draft_opt)
    mechanism: Mechanism | None = cast(Mechanism, _ALGORITHMS.get(algorithm, "other"))
    # an algorithm SGLang does not know, DFLASH or DSpark without a draft path: the data
    # checks unknown-algorithm, dflash-without-draft and dspark-without-draft (sglang.json),
    # judged at the releases they were read in
    if "the method" in parts:
        mechanism = None  # the claims file's (docs/engines.md#unsettled-values)
        b.note("the method is not settled (a keyword the launcher leaves unsettled): the "
               "claims file's mechanism is used")
    elif mechanism == "eagle" and draft is not None and _mtp_draft(draft):
        mechanism = "mtp"
        b.note("EAGLE with a NextN/MTP draft: SGLang runs the checkpoint's MTP module")
    elif algorithm == "EAGLE" and draft is None and refused_could_be(
        opts, "speculative_draft_model_path"
    ):
        # a word the engine refuses may be the draft path (--speculative-draft, unique
        # before SGLang added its other --speculative-draft-* flags): no draft is not known
        b.note(
            "no draft path read: a word SGLang refuses as ambiguous may be "
            "--speculative-draft-model-path, so whether a draft is given is not known"
        )
    elif algorithm == "EAGLE" and draft is None:
        # SGLang drafts with the target checkpoint itself (its MTP layers) for the
        # architectures of this table; for any other there is no draft to load
        mechanism = "mtp"
        b.note(
            "EAGLE without --speculative-draft-model-path: SGLang drafts with the target "
            "checkpoint's own MTP (NextN) layers, for the architectures that carry them "
            f"({', '.join(sorted(_MTP_ARCHITECTURES)[:3])}, …)"
        )
    if algorithm == "NEXTN":
        b.note("SGLang's NEXTN is EAGLE over the checkpoint's MTP (NextN) layers")
    tp = _int(opts, b, ctx, "tensor_parallel_size", "tp_size", "tensor_parallel_size", "tp")
    if tp is not None and tp < 1:
        # SGLang 0.5.23's resolution accepts it (the engine's answer, tests/data/
        # engine_oracle/sglang-0.5.23.json sglang-0406-flag-bad: status ok, tp_size 0);
        # where the workers refuse it was not read: a warning, not a fail
        b.issue(
            "SG307",
            f"tensor parallel size {tp}: a deployment needs at least 1 (SGLang's argument "
            "resolution accepts it; not confirmed where its workers refuse it)",
            "tensor_parallel_size",
            "warn",
        )
        tp = None
    context = _int(opts, b, ctx, "max_model_len", "context_length")
    dp_opt = opts_get(opts, "enable_dp_attention")
    dp_attention = dp_opt is not None and as_bool(dp_opt, "enable_dp_attention", ctx.file)
    b.at("attention_data_parallel", dp_opt)
    lossy = _lossy(opts, b, ctx)
    if "D" in parts:
        d, n = None, None
        b.note("D is not settled (a keyword the launcher leaves unsettled): the claims "
               "file's draft length is used")
    elif mechanism == "ngram":
        d, n = _ngram(opts, b, ctx)
    elif algorithm in _ONE_PASS:
        d, n = _block(opts, b, ctx)
    else:
        d, n = _tree(opts, b, ctx, algorithm)
    adaptive = _adaptive(opts, b, ctx)
    tree_unset = all(opts_get(opts, k) is None for k in _TREE_KEYS)
    config = b.build(
        mechanism=mechanism,
        draft_length=d,
        verify_tokens=n,
        draft_length_is_max=mechanism == "ngram" or adaptive,
        draft_passes="single" if algorithm in _ONE_PASS else None,
        lossy_acceptance=lossy,
        tensor_parallel_size=tp,
        attention_data_parallel=dp_attention,
        draft_model=draft,
        max_model_len=context,
    )
    values = _engine_values(opts, algorithm, mechanism or "", n, ctx)
    return replace(
        config,
        resolution={"algorithm": algorithm, "tree_unset": tree_unset, "engine_values": values,
                    "unsettled": parts},
    )


#: The keywords from which the reader resolves D and N_verify (besides the method).
_D_KEYS = (*_TREE_KEYS, "speculative_dflash_block_size", "speculative_adaptive")
#: The algorithms whose method a draft path does not change (``sglang_keywise``).
_DRAFT_KEEPS_METHOD = frozenset({"EAGLE3"})


def _not_settled(opt: object) -> bool:
    """Whether ``opt`` is set to a value the launcher leaves unsettled (keywise)."""
    return opt is not None and getattr(opt, "value", None) is UNSETTLED


def unsettled_parts(opts: Options) -> tuple[str, ...]:
    """What a keyword left unsettled (:mod:`.keywise`, ``sgl.Engine(...)`` read keyword
    by keyword) keeps from being settled: ``"the method"`` (the algorithm; or the draft
    path, beside an algorithm whose method the draft decides: EAGLE and NEXTN turn MTP or
    FROZEN_KV_MTP by the draft, speculative_hook.py ``_resolve_speculative_algorithm_alias``
    at 0.5.23, and DFLASH takes its draft tokens from the draft's config) and ``"D"`` (with
    the method, or a keyword D and N_verify are resolved from)."""
    algo = opts_get(opts, "speculative_algorithm")
    draft = opts_get(opts, "speculative_draft_model_path")
    literal = "" if algo is None or _not_settled(algo) else as_str(algo).strip().upper()
    if _not_settled(algo) or (_not_settled(draft) and literal not in _DRAFT_KEEPS_METHOD):
        return ("the method", "D")
    if any(_not_settled(opts_get(opts, k)) for k in _D_KEYS):
        return ("D",)
    return ()


#: The options SGLang takes the draft worker's multi-step decode backend from, first set
#: first, each with the behaviour that says from which release it does (None: always).
_DRAFT_BACKEND_KEYS = (
    ("speculative_draft_attention_backend", "draft-backend-from-draft-flag"),
    ("decode_attention_backend", "draft-backend-from-decode-flag"),
    ("attention_backend", None),
)


def draft_decode_backend(opts: Options, steps: int | None, ctx: Context) -> str | None:
    """The attention backend SGLang builds its multi-step draft (decode) backend with
    (``FlashInferMLAMultiStepDraftBackend``, ``FlashMLAMultiStepDraftBackend`` …, whose
    ``__init__`` refuses topk > 1), or None when it builds none or which is not known.

    ``DraftBackendFactory.create_decode_backend`` returns None at one step from 0.5.4
    (draft_utils.py:35 ``== 1``; 0.5.23 :86 ``<= 1``; behaviour
    ``draft-backend-skipped-at-one-step``), and takes ``speculative_draft_attention_backend
    or decode_attention_backend or attention_backend`` (0.5.7 draft_utils.py:21-33; 0.5.23
    :55-61 with model_runner.py:320); 0.5.2rc2-0.5.3 ``decode_attention_backend or
    attention_backend`` (eagle_worker.py ``_create_backend``, 0.5.3 :202-211); before, the
    draft worker reads ``attention_backend`` only (0.4.4.post4 eagle_worker.py:152, 0.5.1
    the same). Steps below 1 (refused elsewhere): not known."""
    if steps is None or steps < 1:
        return None
    if steps == 1 and _DATA.behaves("draft-backend-skipped-at-one-step", ctx.version):
        return None
    for key, behaviour in _DRAFT_BACKEND_KEYS:
        if behaviour is not None and not _DATA.behaves(behaviour, ctx.version):
            continue
        opt = opts_get(opts, key)
        if opt is None or opt.value is None:
            continue
        return None if _not_settled(opt) else as_str(opt)
    return None


def _engine_values(
    opts: Options, algorithm: str, mechanism: str, n: int | None, ctx: Context
) -> dict[str, int | str | None]:
    """steps/topk/draft tokens as SGLang runs them after its rewrites, in its order
    (checks read them as ``resolved.NAME``): ``_handle_eagle_family`` (0.5.23
    speculative_hook.py:1160-1275) picks all three from the architecture when none is
    given (filled by :func:`with_target`), then rewrites ``num_draft_tokens`` to
    steps + 1 at ``topk`` 1; ``_handle_dflash`` forces ``topk`` 1 and sets the draft
    tokens from the block; NGRAM keeps its draft tokens (default 12)."""

    def written(name: str) -> int | None:
        opt = opts_get(opts, name)
        return as_int(opt, name, ctx.file) if opt is not None and not _not_settled(opt) else None

    steps, topk = written("speculative_num_steps"), written("speculative_eagle_topk")
    if mechanism == "ngram" or algorithm in _ONE_PASS:
        topk = 1 if algorithm in _ONE_PASS else topk
        return {"speculative_num_steps": steps, "speculative_eagle_topk": topk,
                "speculative_num_draft_tokens": n}
    tokens = n if n is not None and topk == 1 else written("speculative_num_draft_tokens")
    return {"speculative_num_steps": steps, "speculative_eagle_topk": topk,
            "speculative_num_draft_tokens": tokens,
            "draft_decode_backend": draft_decode_backend(opts, _steps_run(steps, topk, tokens),
                                                         ctx)}


def _steps_run(steps: int | None, topk: int | None, tokens: int | None) -> int | None:
    """The steps SGLang runs, as far as the draft backend needs them: the written ones;
    none of the three given, more than one (the architecture's 3 or 5, ``auto_params``,
    or the 5 of the releases that default them, ``_release_defaults``); else not known
    (steps unset beside topk or draft tokens is refused: eagle-steps-unset-others-set)."""
    if steps is not None:
        return steps
    return 3 if topk is None and tokens is None else None


def _mtp_draft(draft: str) -> bool:
    lowered = draft.lower()
    return "nextn" in lowered or "mtp" in lowered


def _int(opts: Options, b: Builder, ctx: Context, field_name: str, *names: str) -> int | None:
    found = first(opts, *names)
    if found is None:
        return None
    b.at(field_name, found[1])
    return as_int(found[1], found[0], ctx.file)


def _lossy(opts: Options, b: Builder, ctx: Context) -> bool:
    lossy = False
    for name in ("speculative_accept_threshold_single", "speculative_accept_threshold_acc"):
        opt = opts_get(opts, name)
        if opt is not None and as_float(opt, name, ctx.file) < 1.0:
            b.at("lossy_acceptance", opt)
            b.issue(
                "SG304",
                f"{name} {as_str(opt)} < 1 accepts drafts the target would reject (lossy)",
                "lossy_acceptance",
            )
            lossy = True
    return lossy


def _ngram(opts: Options, b: Builder, ctx: Context) -> tuple[int | None, int | None]:
    n = bounded(
        b,
        _int(opts, b, ctx, "verify_tokens", "speculative_num_draft_tokens"),
        "speculative_num_draft_tokens",
        "verify_tokens",
    )
    window = None
    if n is None and _DATA.behaves("ngram-draft-tokens-from-match-window", ctx.version):
        # 0.5.3-0.5.9 ServerArgs: speculative_num_draft_tokens = the match window when
        # unset (sglang.json behaviour ngram-draft-tokens-from-match-window)
        window = _int(opts, b, ctx, "verify_tokens", "speculative_ngram_max_match_window_size")
    if window is not None:
        b.note(
            f"speculative_num_draft_tokens not set: SGLang's NGRAM takes the match window "
            f"(--speculative-ngram-max-match-window-size {window}) as its verify tokens"
        )
        n = bounded(b, window, "speculative_ngram_max_match_window_size", "verify_tokens")
        b.at("draft_length", opts_get(opts, "speculative_ngram_max_match_window_size"))
        return (None, None) if n is None else ((n - 1 if n >= 1 else None), n)
    if n is None:
        default = _DATA.default("ngram_num_draft_tokens", ctx.version)
        if not isinstance(default, int):
            b.note("speculative_num_draft_tokens not set: SGLang's NGRAM default applies")
            return None, None
        b.at("mechanism", opts_get(opts, "speculative_algorithm"))
        b.note(
            f"speculative_num_draft_tokens not set: SGLang's NGRAM default is {default} "
            f"verify tokens "
            f"({_DATA.default_source('ngram_num_draft_tokens', ctx.version or _DATA.newest)})"
        )
        n = default
    else:
        b.at("draft_length", opts_get(opts, "speculative_num_draft_tokens"))
    return (n - 1 if n >= 1 else None), n


def _block(opts: Options, b: Builder, ctx: Context) -> tuple[int | None, int | None]:
    """DFLASH drafts a block in one pass: ``--speculative-dflash-block-size`` and
    ``--speculative-num-draft-tokens`` set each other (N_verify = the block), D =
    N_verify − 1; ``eagle_topk`` is forced to 1 with a warning (no refusal); the
    steps/topk/draft-tokens all-or-none rule does not apply."""
    tokens = bounded(
        b,
        _int(opts, b, ctx, "verify_tokens", "speculative_num_draft_tokens"),
        "speculative_num_draft_tokens",
        "verify_tokens",
    )
    block = bounded(
        b,
        _int(opts, b, ctx, "dflash_block_size", "speculative_dflash_block_size"),
        "speculative_dflash_block_size",
        "dflash_block_size",
    )
    topk = _int(opts, b, ctx, "eagle_topk", "speculative_eagle_topk")
    if topk is not None and topk != 1 and _DATA.behaves("dflash-topk-forced-to-1", ctx.version):
        b.note(f"DFLASH supports only eagle_topk 1: SGLang overrides {topk} to 1 with a warning")
    # a block size below 1, and draft tokens that differ from the block, are the data
    # checks dflash-block-size-not-positive and dflash-draft-tokens-differ-from-block
    n = tokens if tokens is not None else block
    if n is None:
        b.note("DFLASH block size not set: SGLang infers it from the draft checkpoint")
        return None, None
    if tokens is None:
        b.at("verify_tokens", opts_get(opts, "speculative_dflash_block_size"))
    b.spans.setdefault("draft_length", b.spans["verify_tokens"])
    if block is None and n < 1:  # no block size: _handle_dflash (0.5.23) keeps the tokens
        b.issue(
            "SG307",
            f"speculative_num_draft_tokens is {n}: a DFLASH block needs at least 1 token "
            "(not confirmed where SGLang refuses it)",
            "verify_tokens",
            "warn",
        )
    return (n - 1 if n > 1 else None), n


def _adaptive(opts: Options, b: Builder, ctx: Context) -> bool:
    """``--speculative-adaptive`` moves num_steps with the acceptance rate: D is a maximum."""
    opt = opts_get(opts, "speculative_adaptive")
    if opt is None or _not_settled(opt) or not as_bool(opt, "speculative_adaptive", ctx.file):
        return False  # not settled: D is not read (unsettled_parts)
    b.at("draft_length_is_max", opt)
    b.note("--speculative-adaptive adjusts num_steps to the acceptance rate: D is a maximum")
    return True


_RELEASE_DEFAULTS = (
    ("eagle_num_steps", "speculative_num_steps"),
    ("eagle_topk", "speculative_eagle_topk"),
    ("eagle_num_draft_tokens", "speculative_num_draft_tokens"),
)


def _release_defaults(
    steps: int | None, topk: int | None, tokens: int | None, b: Builder, ctx: Context
) -> tuple[int | None, int | None, int | None]:
    """Steps, topk and draft tokens with the unset ones filled from the defaults of a
    pinned release whose ``ServerArgs`` gave them ints (0.4.1.post4 to 0.4.4.post3:
    5/8/64, from 0.4.3.post3 5/4/8; data defaults ``eagle_*``); from 0.4.4.post4 SGLang
    chooses them from the architecture, and with the version not pinned they stay
    unset (docs/engines.md#versions)."""
    if ctx.version is None or ctx.version_shown is not None:
        return steps, topk, tokens
    values = [_DATA.default(name, ctx.version) for name, _ in _RELEASE_DEFAULTS]
    if not all(isinstance(v, int) for v in values) or all(
        v is not None for v in (steps, topk, tokens)
    ):
        return steps, topk, tokens
    filled = [
        flag
        for (_, flag), v in zip(_RELEASE_DEFAULTS, (steps, topk, tokens), strict=True)
        if v is None
    ]
    if steps is None:
        b.default_draft_length("eagle_num_steps", "--speculative-num-steps")
    cited = dict.fromkeys(_DATA.default_source(name, ctx.version) for name, _ in _RELEASE_DEFAULTS)
    b.note(
        f"{', '.join(filled)} not set: SGLang {format_version(ctx.version)}'s ServerArgs "
        f"defaults are steps {values[0]}, topk {values[1]}, draft tokens {values[2]} "
        f"({'; '.join(cited)})"
    )
    return (
        steps if steps is not None else cast(int, values[0]),
        topk if topk is not None else cast(int, values[1]),
        tokens if tokens is not None else cast(int, values[2]),
    )


def _tree(
    opts: Options, b: Builder, ctx: Context, algorithm: str
) -> tuple[int | None, int | None]:
    """D and N_verify of the EAGLE family as ``_handle_eagle_family`` (0.5.23) resolves
    them: none of steps/topk/draft tokens ⇒ SGLang picks all three from the target's
    architecture (filled once the target's config is read: :func:`with_models`); steps
    unset while topk or draft tokens is set, and steps without topk, are refused (data
    checks, with the releases they hold in); topk 1 ⇒ draft tokens rewritten to
    steps + 1 (a warning). Values below 1 and trees beyond the candidate pool pass its
    resolution; whether the workers refuse them later is not known here (a warn)."""
    steps = _int(opts, b, ctx, "draft_length", "speculative_num_steps")
    topk = _int(opts, b, ctx, "eagle_topk", "speculative_eagle_topk")
    tokens = _int(opts, b, ctx, "verify_tokens", "speculative_num_draft_tokens")
    for value, name, field_name in (
        (steps, "speculative_num_steps", "draft_length"),
        (topk, "speculative_eagle_topk", "eagle_topk"),
        (tokens, "speculative_num_draft_tokens", "verify_tokens"),
    ):
        bounded(b, value, name, field_name)
        if value is not None and value < 1:
            b.issue(
                "SG307",
                f"{name} is {value}: SGLang's resolution keeps it, but a draft needs at "
                "least 1 (not confirmed where the workers refuse it)",
                field_name,
                "warn",
            )
    adaptive = _adaptive_set(opts, ctx)
    steps, topk, tokens = _release_defaults(steps, topk, tokens, b, ctx)
    if steps is None and topk is None and tokens is None:
        b.note(
            "speculative_num_steps / eagle_topk / num_draft_tokens not set: SGLang picks "
            "them from the model architecture (5/4/8 for Llama and Grok, else 3/1/4)"
        )
        return None, None
    # steps unset while topk or draft tokens is set (the assert of _handle_eagle_family),
    # and steps without topk (its comparison of None with 1), are the data checks
    # eagle-steps-unset-others-set and eagle-steps-without-topk (sglang.json), judged
    # at the releases they were read in
    if steps is None and not adaptive:
        b.at("draft_length", opts_get(opts, "speculative_eagle_topk") or opts_get(
            opts, "speculative_num_draft_tokens"))
        return None, tokens
    if topk is None:
        return steps, tokens
    _check_spec_v2(topk, algorithm, b, ctx)
    if topk == 1 and steps is not None and _rewrites_topk_1(tokens, steps, b, ctx):
        if tokens is not None and tokens != steps + 1:
            b.issue(
                "SG307",
                f"SGLang rewrites speculative_num_draft_tokens {tokens} to "
                f"{steps + 1} (num_steps + 1) because eagle_topk is 1",
                "verify_tokens",
                "warn",
            )
        return steps, steps + 1
    if topk is not None and steps is not None and tokens is not None and steps >= 1 and topk >= 1:
        pool = topk + (steps - 1) * topk * topk
        if tokens > pool + 1:
            b.issue(
                "SG307",
                f"speculative_num_draft_tokens {tokens} exceeds the draft tree: "
                f"{topk} + ({steps} − 1)·{topk}² = {pool} candidates + 1 root (SGLang's "
                "resolution accepts it; not confirmed what the workers do)",
                "verify_tokens",
                "warn",
            )
    return steps, tokens


def _rewrites_topk_1(tokens: int | None, steps: int, b: Builder, ctx: Context) -> bool:
    """Whether SGLang at the version read rewrites the draft tokens to steps + 1 with
    topk 1 (behaviour ``topk-1-draft-tokens-rewritten``: from 0.4.5.post3; the releases
    before verify the draft tokens as written). A release between the last read without
    it and the first read with it: the rewrite is assumed, and said to be."""
    held = behaviour_at(_DATA, "topk-1-draft-tokens-rewritten", ctx.version)
    if (
        held == "unknown"
        and ctx.version is not None
        and tokens is not None
        and tokens != steps + 1
    ):
        life = behaviour_lifetime(_DATA, "topk-1-draft-tokens-rewritten")
        first = format_version(life.first) if life is not None else "a later release"
        b.issue(
            "SG307",
            f"SGLang rewrites speculative_num_draft_tokens to num_steps + 1 with eagle_topk 1 "
            f"from {first}; whether {format_version(ctx.version)} does is not known "
            "(the rewrite is assumed)",
            "verify_tokens",
            "warn",
        )
    return held != "absent"


def _adaptive_set(opts: Options, ctx: Context) -> bool:
    opt = opts_get(opts, "speculative_adaptive")
    return opt is not None and as_bool(opt, "speculative_adaptive", ctx.file)


def auto_params(
    algorithm: str, architecture: str | None, table: Mapping[str, str] = _AUTO_PARAMS
) -> tuple[int, int, int]:
    """(steps, topk, draft tokens) SGLang picks when none is given (data ``auto_params``:
    ``_auto_choose_speculative_params``; ``table``: the release's, newest by default)."""
    key = "STANDALONE" if algorithm == "STANDALONE" and "STANDALONE" in table else (
        architecture or "*"
    )
    text = table.get(key, table.get("*", _AUTO_PARAMS["*"]))
    steps, topk, tokens = (int(part) for part in text.split("/"))
    return steps, topk, tokens


def _tables_at(
    config: EngineConfig,
) -> tuple[frozenset[str] | None, Mapping[str, str] | None]:
    """The architectures whose own checkpoint drafts as MTP, and the auto params table,
    at the config's version (the newest known when it is not known), each read in that
    release's wheel (data ``history``); None for a table not read there, whose
    consequences then warn (docs/engines.md#mtp-architectures)."""
    version = parse_version(config.version) if config.version else None
    if version is None:
        return _SELF_MTP, _AUTO_PARAMS
    targets = _DATA.table_at("eagle_without_draft_means_mtp", version)
    worker = _DATA.table_at("draft_worker_mtp_architectures", version)
    mtp = None if targets is None or worker is None else frozenset(targets) | frozenset(worker)
    return mtp, _DATA.table_at("auto_params", version)


def with_target(config: EngineConfig, target: ModelShape | None) -> EngineConfig:
    """SGLang once the target's config is known: EAGLE without a draft path drafts with
    the target's MTP layers for the architectures of ``eagle_without_draft_means_mtp``
    (the draft path set to the target) and ``draft_worker_mtp_architectures`` (the draft
    worker loads the target's checkpoint as its MTP class); any other target is loaded
    whole as its own draft (EAGLE over the target itself). Steps/topk/draft tokens left
    unset take the architecture's defaults."""
    if config.engine != "sglang" or target is None or not target.architectures:
        return config
    if config.resolution.get("unsettled"):  # the claims file's method and D stand
        return config
    arch = target.architectures[0]
    algorithm = str(config.resolution.get("algorithm", ""))
    mechanism = config.mechanism
    notes = list(config.notes)
    self_mtp, auto_table = _tables_at(config)
    oldest, newest = (format_version(v) for v in (_DATA.releases[0], _DATA.releases[-1]))
    unread = (f"SGLang {config.version}'s architecture tables were not read (read in the "
              f"wheels {oldest}–{newest})")
    if algorithm in ("EAGLE", "NEXTN") and config.draft_model is None:
        if self_mtp is None:  # not known whether MTP or EAGLE over the whole target
            mechanism = None
            notes.append(f"{unread}: whether {arch} drafts with its own MTP layers is not "
                         "known; the claims file's mechanism stands")
        elif arch not in self_mtp:
            mechanism = "eagle"
            notes.append(f"EAGLE without a draft path on {arch}: SGLang's draft worker loads "
                         "the target's own checkpoint whole as the draft (no MTP class for it)")
    d, n = config.draft_length, config.verify_tokens
    resolution = dict(config.resolution)
    assumed, span = config.draft_length_assumed, config.draft_length_range
    if config.resolution.get("tree_unset") and algorithm in _TREE_ALGORITHMS:
        if auto_table is None:  # the newest known table, a guess here: what reads D warns
            auto_table = _AUTO_PARAMS
            assumed, span = (f"{unread}: steps/topk/draft tokens are {newest}'s choice for "
                             f"{arch}; state --speculative-num-steps to settle D"), ()
        steps, topk, tokens = auto_params(algorithm, arch, auto_table)
        d, n = steps, (steps + 1 if topk == 1 else tokens)
        before = config.resolution.get("engine_values")
        resolution["engine_values"] = {
            "speculative_num_steps": steps,
            "speculative_eagle_topk": topk,
            "speculative_num_draft_tokens": n,
            "draft_decode_backend": before.get("draft_decode_backend")
            if isinstance(before, Mapping) else None,
        }
        resolution["resolved_by_models"] = True
        notes.append(f"steps/topk/draft tokens not set: SGLang picks {steps}/{topk}/{tokens} "
                     f"for {arch} ({_HOOK} _auto_choose_speculative_params)")
    return replace(config, mechanism=mechanism, draft_length=d, verify_tokens=n,
                   notes=tuple(notes), resolution=resolution, draft_length_assumed=assumed,
                   draft_length_range=span)


_TREE_ALGORITHMS = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "FROZEN_KV_MTP"})


#: The algorithms whose spec-v2 path refuses a topk above 1, each with its behaviour in
#: the data: EAGLE and EAGLE3 (NEXTN is EAGLE by then) from 0.5.7, STANDALONE from 0.5.8
#: (server_args.py of the 0.5.7 and 0.5.8 wheels: ``speculative_algorithm in ["EAGLE",
#: "EAGLE3"]``, then ``["EAGLE", "EAGLE3", "STANDALONE"]``).
_SPEC_V2_REFUSAL = {
    "EAGLE": "spec-v2-topk-refused",
    "EAGLE3": "spec-v2-topk-refused",
    "NEXTN": "spec-v2-topk-refused",
    "STANDALONE": "spec-v2-topk-refused-standalone",
}


#: SGLang's own truth words for ``SGLANG_ENABLE_SPEC_V2`` (``EnvBool.parse``: the value
#: lower-cased, not stripped; environ.py of every wheel that reads it, 0.5.4.post3 to
#: 0.5.10.post1: 0.5.7 :113-120); any other value (``on``, `` 1``, empty) makes
#: ``EnvField.get`` warn and return the default, False (0.5.7 environ.py:60-66, :362).
_ENV_TRUE = frozenset({"true", "1", "yes", "y"})
_ENV_FALSE = frozenset({"false", "0", "no", "n"})


def spec_v2_on(value: object) -> bool | None:
    """Whether SGLang reads ``value`` of ``SGLANG_ENABLE_SPEC_V2`` as on (None: a value
    the launcher leaves unsettled, so not known)."""
    if value is UNSETTLED:
        return None
    text = str(value).lower()
    return text in _ENV_TRUE  # False for the false words and for every invalid value


def _check_spec_v2(topk: int | None, algorithm: str, b: Builder, ctx: Context) -> None:
    # an environment file specgate does not read may set it (ANY_NAME: unsettled)
    env = ctx.env.get(SPEC_V2_ENV) or ctx.env.get(ANY_NAME)
    behaviour = _SPEC_V2_REFUSAL.get(algorithm)
    if env is None or topk is None or topk <= 1 or behaviour is None:
        return
    on = spec_v2_on(env.value)
    if on is False:
        if str(env.value).lower() not in _ENV_FALSE:
            b.note(
                f"{SPEC_V2_ENV}={_shown(env.value)} is not a value SGLang reads (true, 1, yes, "
                "y, false, 0, no, n in any case): it warns and keeps spec v2 off (spec v1)"
            )
        return
    if not _DATA.behaves(behaviour, ctx.version):
        b.note(
            f"{SPEC_V2_ENV} with eagle_topk {topk}: SGLang falls back to spec v1 (no overlap "
            "scheduler) with a warning"
        )
        return
    b.at("spec_v2", env)
    if on is None:
        how = ("is set to a value specgate cannot settle" if SPEC_V2_ENV in ctx.env
               else "may be set by an environment source specgate does not read")
        b.issue(
            "SG307",
            f"{SPEC_V2_ENV} {how}: if SGLang reads it as "
            f"on (true, 1, yes, y), spec v2 (overlap scheduler) supports only eagle_topk 1, "
            f"not {topk}, and refuses to start",
            "eagle_topk",
            "warn",
        )
        return
    b.issue(
        "SG307",
        f"{SPEC_V2_ENV} (overlap scheduler) supports only eagle_topk 1, not {topk}, in "
        "SGLang releases before the spec-v1 fallback",
        "eagle_topk",
    )
