"""Rules on values read from referenced files (SG301–SG303, SG305, SG306, SG308, SG309;
docs/claims-file.md#referenced-files); the engine's own verdicts are rules/engine_issues.py.

Findings about a value read from a serving, model or metrics file point at that
file's line (``Hit.where``), so annotations land on the file a pull request
changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from specgate.core.concise import join_details
from specgate.core.findings import MESSAGE_LIMIT
from specgate.core.numbers import fmt
from specgate.load.document import Span
from specgate.rules.crosscheck import accepted_past_emitted
from specgate.rules.engine_issues import _engine_issue_hits
from specgate.rules.registry import Hit, RuleContext, rule

if TYPE_CHECKING:
    from specgate.model.referenced import Conflict

_VLLM_EAGLE3 = """
    version: 1
    deployments:
      - name: gpt-oss-eagle3
        speculation:
          enabled: true
          engine_config: serving/vllm.yaml
          draft_depth_ratio: 0.05
        evidence:
          accept_length: 3.1
          cache_coherence_eval: true
    # === serving/vllm.yaml ===
    model: openai/gpt-oss-120b
    speculative-config:
      method: eagle3
      model: nvidia/gpt-oss-120b-Eagle3-v3
      num_speculative_tokens: 7
"""


def _where(file: str | None, span: Span | None) -> tuple[str, Span | None] | None:
    return None if file is None else (file, span)


@rule(
    "SG301",
    "engine-config-mismatch",
    "fail",
    "A number stated in the claims file differs from the referenced engine, model or metrics file.",
    fail_example=_VLLM_EAGLE3.replace(
        "          draft_depth_ratio: 0.05\n",
        "          draft_length: 5\n          draft_depth_ratio: 0.05\n",
    ),
    pass_example=_VLLM_EAGLE3,
)
def engine_config_mismatch(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** A value stated in the claims file (D, mechanism, H, KV,
    G, AL) agrees with the file it references (`speculation.engine_config`,
    `model.hf_config`, `evidence.metrics`). AL agrees when it is within 0.005 of
    the measurement (engines print AL to two decimals); inline per-position rates
    are not a referenced file, so their 1 + Σ mᵢ against the stated AL is SG305's
    alone. The finding sits on the claims file's line and names the referenced
    file's line (SARIF `relatedLocations`, JSON `related`).

    **The served model.** The model the engine config serves (`vllm serve MODEL`
    / `--model`, SGLang `--model-path`, TensorRT-LLM's `model`, llama.cpp `-m` /
    `-hf`, a Python launcher's `model=`) is compared with `model.name` and with
    `model.hf_config`: G, β and the parameter count κ come from the hf_config, so
    a config of another model prices the deployment for a model the engine does
    not run. Names compare case-insensitively; a local path matches by its last
    component (`/models/Llama-3.1-8B-Instruct`). A `model.name` written as a
    Hugging Face id (`owner/name`) that the served id contradicts for certain
    fails: another size (`Qwen3-8B` / `Qwen3-14B`), family, or a number each names
    and the other lacks (`Llama-3.1` / `Llama-3.3`, `DeepSeek-V3` / `DeepSeek-R1`).
    Ids that differ in words only warn: a renamed repository
    (`meta-llama/Meta-Llama-3.1-8B-Instruct` is Meta's former name of
    `meta-llama/Llama-3.1-8B-Instruct`), an owner's prefix, `-Base`, a dated
    revision added. A free-form `model.name` is a label and is not compared. A served
    id naming weights of another width than the hf_config declares
    (`…-FP8-dynamic`, `-AWQ`, `-GPTQ-Int4`, `-NVFP4` beside a `torch_dtype: bfloat16`
    config: the base model's) warns, and the config's precision counts as not stated
    (the proven β is the lowest over the precisions, SG112). An hf_config whose
    `_name_or_path` names another model, whose `model_type` is of another family
    than a family word in the served id (`deepseek-ai/DeepSeek-V3` beside
    `model_type: llama`; the words are `specgate/data/models/families.json`), or
    whose counted parameters are more than twice or under half the size in the
    served id (`-8B` beside 70.55B counted) warns: each rests on reading a name.
    A served model that is a shell variable left unexpanded is never judged.

    **Speculation off over a config that speculates.** `speculation.enabled: false`
    while the serving config configures speculative decoding (`eagle3`, D 4) fails
    on the `enabled` line, naming the serving config's line: the engine runs a
    deployment nothing checks. Off over a config that speculates nothing agrees.

    **One cause, one finding.** Where the serving config says another D or
    mechanism than the claims file, the served value is what runs: every other rule
    judges it, so evidence measured at the served D is current (no SG309 repeats
    the disagreement). When the served D is only the engine's default at a version
    that is not pinned, and that default differs between versions, the stated D is
    judged and the finding warns (an assumed D never fails: `specgate rules SG103`, "An
    assumed D").

    **Why.** A claims file that repeats numbers drifts from the serving config
    it describes: a pull request raises `num_speculative_tokens` and the claims
    keep the old D. specgate never silently prefers one of the two.
    """
    inputs = ctx.deployment.inputs
    if inputs is None:
        return
    for conflict in inputs.conflicts:
        # a value the file does not set is the engine's default: the file "says" nothing
        says = "leaves it at the engine's default," if conflict.default else "says"
        # the file that sets the value (a Compose override file merged over the config)
        source = conflict.span.file if conflict.span and conflict.span.file else conflict.source
        if conflict.span is not None and conflict.span.via is not None:
            # a ${VAR} the .env sets: the .env line is what sets the value
            source = f"{conflict.span.via}, read by {source},"
        message = (
            f"{conflict.what}: the claims file says {conflict.stated} but {source} "
            f"{says} {conflict.referenced}"
        )
        served = f"; the served {conflict.referenced} is what every other rule judges"
        if conflict.served and len(message + served) <= MESSAGE_LIMIT:
            message, served = message + served, ""
        why = ""
        if conflict.what == "accept length AL" and inputs.acceptance is not None:
            why = _aggregation_hint(inputs.acceptance.format)
        if conflict.served:
            why += served
        if conflict.assumed is not None:
            why += f"; {conflict.assumed}; the stated {conflict.stated} is judged"
        why += conflict.note
        related = ((conflict.source, conflict.span),) if conflict.span else ()
        # on the claims file's line, naming the referenced one (docs/trust.md#one-cause-one-finding:
        # SARIF relatedLocations); without the stated value's place, the referenced line
        if conflict.stated_at is not None and inputs.claims_file is not None:
            where: tuple[str, Span | None] | None = (inputs.claims_file, conflict.stated_at)
        else:
            where, related = ((conflict.source, conflict.span) if conflict.span else None), ()
        yield Hit(
            message,
            conflict.path,
            conflict.action
            or "Make the claims file and the referenced file agree, or drop the number from "
            "the claims file and let specgate read it.",
            where=where,
            related=related,
            severity="warn" if conflict.assumed is not None or conflict.warn else None,
            details=join_details(why.removeprefix("; ").strip(), _read_at(conflict)),
        )


def _read_at(conflict: Conflict) -> str:
    """Where the referenced value was read (line and column) and the reading contract."""
    at = "" if conflict.span is None else f" at line {conflict.span.line}"
    of = "the referenced file"
    if conflict.span is not None and conflict.span.file is not None:
        of = f"{conflict.span.file}, merged over {conflict.source}"
    return (
        f"read{at} of {of} (how a value is settled: "
        "docs/engines.md#three-outcomes-for-every-value)"
    )


#: Formats whose AL is pooled over every speculative step (1 + Σaccepted / Σsteps).
_POOLED_FORMATS = frozenset(
    {"vllm-prometheus", "vllm-log", "vllm-per-request", "llamacpp-log", "trtllm-iteration-stats"}
)


def _aggregation_hint(fmt_name: str) -> str:
    """Why a stated AL may differ from a pooled measurement (vLLM issue #42508: a
    benchmark suite's unweighted mean of per-request ALs against vLLM's pooled AL)."""
    if fmt_name not in _POOLED_FORMATS:
        return ""
    return (
        f" ({fmt_name} pools AL over every step; a mean of per-request ALs, as benchmark "
        "suites report, weights short requests more and is not comparable)"
    )


@rule(
    "SG302",
    "draft-vocab-mismatch",
    "warn",
    "The draft model's vocab_size differs from the target's.",
    fail_example="""
        version: 1
        deployments:
          - name: qwen-draft
            model:
              hf_config: models/target.json
            speculation:
              enabled: false
              mechanism: draft_model
              draft_hf_config: models/draft.json
        # === models/target.json ===
        {"num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 152064}
        # === models/draft.json ===
        {"num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936}
    """,
    pass_example="""
        version: 1
        deployments:
          - name: qwen-draft
            model:
              hf_config: models/target.json
            speculation:
              enabled: false
              mechanism: draft_model
              draft_hf_config: models/draft.json
        # === models/target.json ===
        {"num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 152064}
        # === models/draft.json ===
        {"num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 152064}
    """,
)
def draft_vocab_mismatch(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** `vocab_size` of `speculation.draft_hf_config` equals
    `vocab_size` of `model.hf_config`.

    **At the engine's version.** Where the engine's own behaviour is known (its
    knowledge data in `specgate/data/engines/`) the finding follows it: **fail** where the engine
    refuses the pair — vLLM `draft_model` unless `use_heterogeneous_vocab`
    (`verify_equal_vocab_size_if_draft_model`, vLLM 0.27.1 and 0.32.0; at the draft's
    line of the serving config), SGLang `STANDALONE`, llama.cpp's
    `llama-speculative` up to b4094 above a difference of 100; **fail when a claim
    or the evidence rests on speculation, else warn** where the engine starts
    without speculation (llama-server from b9113 catches the refusal: the limit is
    128, `common/speculative.cpp`); **warn** where it degrades (llama.cpp up to b9105
    translates tokens between the two vocabularies) and for every other engine.

    **Why.** Draft tokens are verified by id: engines refuse a draft whose
    vocabulary differs or degrade silently. Qwen2.5 0.5B/1.5B drafts (151936)
    against 32B/72B targets (152064) are the classic case (vLLM issue #10913,
    QwenLM/Qwen3 #326).
    """
    inputs = ctx.deployment.inputs
    if inputs is None or inputs.model is None or inputs.draft_model is None:
        return
    target, draft = inputs.model.vocab_size, inputs.draft_model.vocab_size
    if target is None or draft is None or target == draft:
        return
    engine_says = list(
        _engine_issue_hits(
            ctx,
            "SG302",
            "Use a draft trained on the target's tokenizer and vocabulary size, or a "
            "mechanism the engine runs with another vocabulary.",
        )
    )
    if engine_says:
        # the engine's own verdict at its version (refuses, serves without
        # speculation, or degrades): one finding, no generic one beside it
        yield from engine_says
        return
    yield Hit(
        f"draft vocab_size {draft} differs from the target's {target} "
        f"(by {abs(target - draft)}): engines refuse the pair or degrade acceptance",
        ctx.deployment.path("speculation", "draft_hf_config"),
        "Use a draft trained on the target's tokenizer and vocabulary size.",
        where=_where(inputs.draft_model.path, inputs.draft_model.spans.get("vocab_size")),
        details=join_details(
            f"vocab_size read from {inputs.draft_model.path} and {inputs.model.path}",
            "drafts are verified by token id, so the two vocabularies must match "
            "(vLLM#10913; no engine data for this engine and version says more)",
        ),
    )


@rule(
    "SG303",
    "draft-context-too-short",
    "warn",
    "The draft's max_position_embeddings is below the context the target is served with.",
    fail_example="""
        version: 1
        deployments:
          - name: llama-eagle3
            model:
              hf_config: models/target.json
            speculation:
              enabled: false
              mechanism: eagle3
              draft_hf_config: models/eagle3.json
        # === models/target.json ===
        {"num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072}
        # === models/eagle3.json ===
        {"num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 2048}
    """,
    pass_example="""
        version: 1
        deployments:
          - name: llama-eagle3
            model:
              hf_config: models/target.json
            speculation:
              enabled: false
              engine_config: serving/vllm.yaml
              draft_hf_config: models/eagle3.json
        # === serving/vllm.yaml ===
        model: meta-llama/Llama-3.1-8B-Instruct
        max-model-len: 2048
        speculative-config:
          method: eagle3
          model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
          num_speculative_tokens: 3
        # === models/target.json ===
        {"num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072}
        # === models/eagle3.json ===
        {"num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 2048}
    """,
)
def draft_context_too_short(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The draft's `max_position_embeddings` is at least the
    context the target is served with: the smaller of the target's
    `max_position_embeddings` and the engine config's cap when it states one
    (vLLM `max-model-len`, SGLang `--context-length`, TensorRT-LLM
    `max_seq_len`, llama.cpp `--ctx-size`/`-c`, which its server's slots share; 0
    takes the model's own). The message names the limit it used.

    **Why.** A draft head trained for 2,048 positions drafts garbage past them:
    SGLang issue #6783 shows EAGLE-3 slower than no speculation for inputs over
    2k tokens with such a head on Llama-3.3-70B (SpecForge's Llama-3 EAGLE-3
    config ships `max_position_embeddings: 2048`). A served context capped at
    the draft's length (`max-model-len: 2048`) never goes past it.

    **vLLM EAGLE / EAGLE-3 still warn.** vLLM now raises an EAGLE draft's
    `max_position_embeddings` to the target's `max_model_len`
    (`SpeculativeConfig._maybe_override_draft_max_position_embeddings` in
    `vllm/config/speculative.py`, PR #49343 for issue #48894). That only
    sizes the draft's rotary cache so long prompts no longer crash (a
    device-side assert under torch.compile) or read garbage; it does not
    train the head for longer positions. Acceptance still falls with context:
    vllm-project/speculators PR #684 measures an EAGLE-3 head's AL dropping
    from 2.3 at 2k tokens to 1.08 at 20k. So the warning stays, and for vLLM
    EAGLE heads it says the override avoids the crash, not the loss.
    """
    inputs = ctx.deployment.inputs
    if inputs is None or inputs.draft_model is None:
        return
    engine = inputs.engine
    limits: list[tuple[int, str]] = []
    if engine is not None and engine.max_model_len is not None:
        limits.append(
            (
                engine.max_model_len,
                f"the served context {engine.max_model_len} (max_model_len in {engine.path})",
            )
        )
    if inputs.model is not None and inputs.model.max_position_embeddings is not None:
        target = inputs.model.max_position_embeddings
        limits.append(
            (target, f"the target's max_position_embeddings {target} ({inputs.model.path})")
        )
    draft = inputs.draft_model.max_position_embeddings
    if not limits or draft is None:
        return
    limit, what = min(limits, key=lambda item: item[0])
    if draft >= limit:
        return
    message = f"draft max_position_embeddings {draft} is below {what}"
    details = "drafts past that position are poor and long prompts lose the speedup"
    mechanism = ctx.deployment.speculation.mechanism
    if engine is not None and engine.engine == "vllm" and mechanism in ("eagle", "eagle3"):
        details += (
            "; vLLM raises an EAGLE draft's max_position_embeddings to the served context "
            "(vllm#48894), which prevents the crash but not the acceptance loss"
        )
    yield Hit(
        message,
        ctx.deployment.path("speculation", "draft_hf_config"),
        f"Use a draft trained for {limit} positions, or cap the served context at {draft}.",
        where=_where(
            inputs.draft_model.path, inputs.draft_model.spans.get("max_position_embeddings")
        ),
        details=details,
    )


@rule(
    "SG305",
    "acceptance-profile-inconsistent",
    "fail",
    "Per-position acceptance rates rise with position, lie outside [0, 1], or do not "
    "add up to the stated AL; or more drafts were accepted than tokens emitted.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: false
              draft_length: 3
            evidence:
              accept_length: 2.5
              metrics:
                format: per-position
                marginal: [0.6, 0.7, 0.2]
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: false
              draft_length: 3
            evidence:
              accept_length: 2.5
              metrics:
                format: per-position
                marginal: [0.7, 0.5, 0.3]
    """,
)
def acceptance_profile_inconsistent(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** Marginal acceptance rates m₁ ≥ m₂ ≥ … (position i is
    accepted only if all earlier ones were), each in [0, 1], and
    |1 + Σ mᵢ − AL| ≤ 0.02 when AL is known: the stated AL for inline rates, the
    metrics file's own AL for rates read from a file (a stated AL that differs from
    the file is SG301's finding, not a second one here).

    Counts too: accepted drafts A over N steps need A + N ≤ E tokens emitted
    (`vllm:generation_tokens_total`; rules/crosscheck.py): 184 over 160 needs 344.

    **Why.** AL = 1 + Σ mᵢ for a chain (vLLM's acceptance metrics; NVIDIA
    specdec_bench's `speculation_profile` validates the same bounds). A profile
    that breaks these identities was mixed up (conditional read as marginal,
    positions from different runs) and cannot support the claim (nor can drafts
    counted past an EOS).
    """
    yield from accepted_past_emitted(ctx)
    inputs = ctx.deployment.inputs
    if inputs is None or inputs.acceptance is None or not inputs.acceptance.marginal:
        return
    from specgate.inputs.metrics.consistency import profile_message
    from specgate.inputs.metrics.read import first_profile_offence

    acceptance = inputs.acceptance
    # Rates read from a file are checked against that file's AL: a claims AL that
    # differs from the file is SG301's finding (one cause, one finding).
    stated = (
        acceptance.accept_length
        if acceptance.path is not None
        else ctx.deployment.evidence.accept_length
    )
    message = profile_message(acceptance, stated)
    if message is None:
        return
    # The most specific value: the first rate out of range or rising, else (a sum that
    # misses the AL) the list of rates itself.
    offence = first_profile_offence(acceptance.marginal)
    path = ctx.deployment.path("evidence", "metrics")
    inline_key = next(
        (k for k in ("marginal", "conditional", "histogram", "alpha") if ctx.has_path((*path, k))),
        None,
    )
    if acceptance.path is None and inline_key is not None:
        path = (*path, inline_key)
        if offence is not None and inline_key in ("marginal", "conditional"):
            path = (*path, offence)
    spans = acceptance.spans
    span = (
        (spans.get(f"marginal[{offence}]") if offence is not None else None)
        or spans.get("marginal")
        or spans.get("accept_length")
    )
    yield Hit(
        message,
        path,
        "Re-export the per-position marginal rates from one measurement run, at the deployed D.",
        where=(acceptance.path, span) if acceptance.path is not None and span else None,
        details=join_details(
            f"rates read from {acceptance.path}" if acceptance.path else "",
            "m_i, the share of steps that accept position i, cannot rise with i (position i "
            "is accepted only after i − 1 is) and AL = 1 + Σ m_i "
            "(docs/theory.md#acceptance-rate-kinds)",
        ),
    )


@rule(
    "SG306",
    "mla-attention-advisory",
    "info",
    "The target uses multi-latent attention: G is the query heads per rank and the "
    "tile rule is advisory.",
    fail_example="""
        version: 1
        deployments:
          - name: deepseek-v3
            model:
              hf_config: models/deepseek-v3.json
            speculation:
              enabled: false
        # === models/deepseek-v3.json ===
        {"num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512}
    """,
    pass_example="""
        version: 1
        deployments:
          - name: llama-8b
            model:
              hf_config: models/llama.json
            speculation:
              enabled: false
        # === models/llama.json ===
        {"num_attention_heads": 32, "num_key_value_heads": 8}
    """,
)
def mla_attention_advisory(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** Whether `model.hf_config` describes multi-latent
    attention (`kv_lora_rank` present). Then G is the query heads one rank
    holds (H/TP, or H with attention data parallelism), not
    `num_attention_heads / num_key_value_heads`.

    **Why.** MLA decodes against one shared latent KV head, so every query
    head of a rank reads the same cache. MLA kernels tile by M = 64 rows
    (FlashMLA): DeepSeek-V3 at TP 8 has G = 16 and D* = floor(64/16) − 1 = 3; at
    TP 1 (or with attention data parallelism) G = 128 > M, so even D = 0 needs
    ceil(128/64) = 2 tiles. The naive H/KV = 1 would suggest D* = 63. MLA
    kernels tile differently from GQA, so the M-row rule is a guide here.
    """
    inputs = ctx.deployment.inputs
    if inputs is None or inputs.model is None or not inputs.model.mla:
        return
    g = inputs.effective_query_heads_per_kv
    shown = f"G = {fmt(g)}" if g is not None else "G unknown"
    yield Hit(
        f"the target model uses multi-latent attention (kv_lora_rank): {shown} query "
        f"heads per rank; the {ctx.metrics.attention_tile_rows}-row tile rule is advisory "
        "for MLA kernels",
        ctx.deployment.path("model", "hf_config"),
        "Read D* as a guide for MLA and confirm the draft length by measuring the speedup "
        "AL / (β + ρ·passes).",
        where=_where(inputs.model.path, inputs.model.spans.get("mla")),
        details=f"model config {inputs.model.path}",
    )


@rule(
    "SG308",
    "adaptive-draft-length",
    "info",
    "D in the engine config is a maximum (fails price the fewest draft passes) or only "
    "the starting value of a schedule that moves it (fails hold at the fewest D the AL "
    "allows).",
    fail_example="""
        version: 1
        deployments:
          - name: agent-ngram
            speculation:
              enabled: true
              engine_config: serving/vllm.yaml
              draft_depth_ratio: 0
            evidence:
              accept_length: 2.1
              cache_coherence_eval: true
        # === serving/vllm.yaml ===
        speculative_config:
          method: ngram
          num_speculative_tokens: 5
          prompt_lookup_max: 4
    """,
    pass_example=_VLLM_EAGLE3,
)
def adaptive_draft_length(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** Whether the engine drafts a variable number of tokens
    per step with D as its cap: n-gram and suffix lookup, llama.cpp with a
    `--draft-p-min` cut-off, transformers with a confidence threshold; or moves D
    during the run (transformers' `heuristic` schedules, where D is only the
    starting value).

    **Why.** With adaptive drafting some steps draft fewer tokens (or none), so
    1 + D bounds AL and ρ·D over-states the draft cost: the fails price the fewest
    passes a step can take, max(1, AL − 1) (docs/theory.md#d-is-a-maximum). vLLM also
    counts only steps that drafted, which over-states AL for n-gram methods. A D that
    moves is neither a cap nor fixed: a fail that reads D holds only at the cheapest
    reading, D = max(1, ⌈AL − 1⌉) drafting at most that. Nothing is said with
    `speculation.enabled: false` (SG301 fails a serving config that speculates
    while the claims file says it is off).
    """
    dep = ctx.deployment
    d = ctx.metrics.draft_length
    spec = dep.speculation
    if d is None or spec.enabled is False:
        return  # nothing drafts while speculation is off (SG301 names a config that does)
    engine = dep.inputs.engine if dep.inputs else None
    if spec.draft_length_moves is not None and not spec.draft_length_is_max:
        yield Hit(
            f"D = {d} is only the starting value where the engine moves it during the run "
            "(details say whether it does or may), so a fail holds only at the fewest D the "
            "AL allows",
            dep.path("speculation", "draft_length"),
            "Fix D (a constant schedule) before comparing with a fixed-D deployment, or "
            "measure AL and the speedup over the whole run.",
            details=join_details(
                spec.draft_length_moves,  # why it moves, or may (a default assumed)
                f"{engine.engine} config {engine.path}" if engine else "",
                "docs/theory.md#d-is-a-maximum",
            ),
        )
        return
    if not spec.draft_length_is_max:
        return
    # the file is the finding's location or its details, not repeated in the message
    yield Hit(
        f"D = {d} is a maximum: the engine drafts fewer tokens on some steps, so the "
        "theory uses D as an upper bound",
        dep.path("speculation", "draft_length"),
        "Measure AL over all steps (including steps that drafted nothing) before comparing "
        "with a fixed-D deployment.",
        details=f"{engine.engine} config {engine.path}" if engine else "",
    )


#: SG309's details: why an AL at another D says nothing of the served one.
_STALE = (
    "AL depends on D: a longer chain accepts at most AL + ΔD·(AL − 1)/D, a shorter one at "
    "most AL, so the fails use that bound (docs/trust.md#nothing-stale-drives-advice)"
)


@rule(
    "SG309",
    "evidence-draft-length-mismatch",
    "fail",
    "The accept length was measured at another D than the config now uses.",
    fail_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: false
              draft_length: 4
            evidence:
              metrics:
                format: per-position
                marginal: [0.7, 0.5, 0.3]
    """,
    pass_example="""
        version: 1
        deployments:
          - name: chat-8b
            speculation:
              enabled: false
              draft_length: 3
            evidence:
              metrics:
                format: per-position
                marginal: [0.7, 0.5, 0.3]
    """,
)
def evidence_draft_length_mismatch(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** When the measurement states the D it was taken at
    (vLLM per-position counters cover positions 0 … k−1; a per-position profile
    has one rate per position; specdec_bench's `speculation_profile` states
    `num_speculative_tokens`), that D equals the D the config now uses. When it
    states no D but an acceptance histogram (inline, or vLLM per-request
    records) has steps that accepted more drafts than the config's D, the data
    was measured at a larger D: a step that accepted 3 drafts drafted at least 3.

    **Why.** AL depends on D. A pull request that lowers or raises
    `num_speculative_tokens` without re-measuring keeps an AL that describes
    another configuration; the gate must turn red until the evidence is new.
    """
    dep = ctx.deployment
    acceptance = dep.inputs.acceptance if dep.inputs else None
    d = ctx.metrics.draft_length
    if acceptance is None or d is None:
        return
    source = acceptance.path or "evidence.metrics"
    if acceptance.draft_length is None:
        least = acceptance.min_draft_length
        if least is not None and least > d:
            yield Hit(
                f"AL {fmt(acceptance.accept_length)} was measured at D ≥ {least} (a step "
                f"accepted {least} drafts, {source}) but the config uses D = {d}: the "
                "evidence is stale for this config",
                dep.path("speculation", "draft_length"),
                f"Re-measure AL at D = {d} and update the metrics.",
                details=_STALE,
            )
        return
    if acceptance.draft_length == d:
        return
    yield Hit(
        f"AL {fmt(acceptance.accept_length)} was measured at D = {acceptance.draft_length} "
        f"({source}) but the config uses D = {d}: the evidence is stale for this config",
        dep.path("speculation", "draft_length"),
        f"Re-measure AL at D = {d} and update the metrics file.",
        details=_STALE,
    )
