"""Normalised records produced by the input readers.

Every record keeps ``path`` (the file as shown to the user, relative to the
current folder with ``/``) and ``spans``: field name → 1-based
:class:`~specgate.load.document.Span` inside that file, for each value read from it,
so a finding about that value can be annotated on the referenced file's line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from specgate.core.errors import UnsettledValue
from specgate.core.vocabulary import DraftPasses, Engine, Mechanism
from specgate.load.document import Span

#: An engine version as an integer tuple (``(0, 27, 1)``, llama.cpp ``(7000,)``).
Version = tuple[int, ...]

IssueCode = Literal["SG302", "SG304", "SG307", "SG310", "SG311"]
#: ``if-claimed``: fail when a claim or the evidence rests on the config as written
#: (a claimed speedup, a stated or measured AL or speedup), else warn
#: (docs/engines.md#refusals-and-rewrites).
IssueSeverity = Literal["fail", "warn", "info", "if-claimed"]


@dataclass(frozen=True)
class VersionInForce:
    """The engine version a check is judged at: ``version`` when stated or detected,
    else the newest version every setting used allows (``implied``, None: the newest
    specgate knows); ``shown`` names it for messages."""

    version: Version | None
    implied: Version | None
    newest: Version
    shown: str
    #: With the version unknown, the oldest version the settings used allow (None: no
    #: setting bounds it from below): a check confirmed only from a later version may
    #: not apply to the version run.
    low: Version | None = None

    @property
    def judged(self) -> Version:
        """The version the checks read."""
        return self.version or self.implied or self.newest


@dataclass(frozen=True)
class EngineIssue:
    """Something the engine itself would refuse, rewrite, or that makes AL lossy.

    ``code`` is the rule it feeds (``SG302`` a vocabulary the engine refuses,
    ``SG304`` lossy acceptance, ``SG307`` invalid config, ``SG310`` a setting the
    engine version removed, ``SG311`` forced acceptance); ``field`` names the key in
    ``spans`` it concerns. ``severity`` overrides the rule's own (None): ``warn`` for a
    rewrite no claim rests on, or a refusal not confirmed at the version in force
    (docs/trust.md#what-a-fail-may-rest-on: what is unconfirmed never fails); ``fail`` for a refusal
    a warn-level rule carries (SG302); ``if-claimed``: fail when a claim or the evidence rests on
    the config as written, else warn. ``where`` places it in another file than the engine
    config (a model config's line), as (file as shown, span). ``details``: the source
    and version reasoning beside the message (``""``: none). ``action``: the next step
    for this issue, naming the setting and what replaces it (docs/reports.md#next-actions;
    ``""``: the rule's own).
    """

    code: IssueCode
    message: str
    field: str
    severity: IssueSeverity | None = None
    where: tuple[str, Span | None] | None = None
    details: str = ""
    action: str = ""


@dataclass(frozen=True)
class EngineConfig:
    """A speculative configuration read from an engine's serving config.

    Attributes:
        engine: which engine's format was read.
        path: the file, as shown; ``pointer``: RFC 6901 pointer of the block used.
        mechanism: claims-file mechanism name (docs/claims-file.md#speculation) (engine aliases
        resolved). draft_length: D, the chain depth (tokens drafted per step; for trees the
            longest path). ``None`` when the file leaves it to the engine's default
            and that default is unknown.
        verify_tokens: N_verify, the tokens the target scores per step (D + 1 for
            a chain, the tree size for trees).
        draft_length_is_max: D is an upper bound (n-gram, suffix, p-min cut-off).
        lossy_acceptance: acceptance is lossy or synthetic.
        tensor_parallel_size: target TP when the file states it, else ``None``.
        draft_tensor_parallel_size: the draft's TP when the file states it (vLLM),
            for checks that need the final target TP (a launcher may state it).
        max_model_len: the served context cap when the file states it (vLLM
            ``max-model-len``, SGLang ``--context-length``, TRT-LLM ``max_seq_len``),
            else ``None`` (the target's ``max_position_embeddings`` applies).
        draft_model: the draft model / head reference when stated.
        target_model: the served (target) model when the file states it, else ``None``
            (feeds the config digest, docs/change-gate.md#config-digest).
        issues: engine-level problems (SG304/SG307 material).
        spans: field name → position in ``path`` (e.g. ``"draft_length"``).
        notes: sentences for the report: engine defaults assumed, aliases resolved,
            values taken from another string of the same launcher.
        draft_passes: ``single`` when one draft forward yields every draft (vLLM
            ``parallel_drafting``, DFlash, PARD), ``per_token`` when the engine
            drafts level by level, None when the file does not say (docs/theory.md#cost-model).
        version: the engine version applied (``"0.27.1"``), None when unknown;
            ``version_source``: ``claims`` | ``image`` | ``requirement`` |
            ``assumed-newest`` (docs/engines.md#versions).
        resolution: engine-specific facts of the resolution that a later step needs
            once the model configs are read (vLLM: ``method`` as the engine names it,
            whether the draft's name chose it, ``use_heterogeneous_vocab``, the draft's
            ``max_model_len``).
            ``assumed-newest`` (docs/engines.md#versions). ``version`` is the engine's own version
            string (``0.5.3``, llama.cpp ``b7000``); ``version_raw`` the text it was
            read from (``v0.5.3rc1-cu126``).
        implied_versions: with the version unknown, the versions every setting used
            exists in (``from``, ``before``, ``newest_confirmed``), docs/engines.md#versions; None
            when the version is known or nothing narrows it.
        check_options: the options the engine's checks read (model-config checks run
            once those are known); ``version_in_force``: the version they are read at.
        draft_length_default: (data default key, the setting that states D, the lowest
            version the config's own spelling allows) when D is the engine's default,
            else None (stated, or from a model config).
        draft_length_assumed: when D is an engine default that differs between the
            versions the config may run (its version not pinned), the sentence that
            says so and names what settles it, else None: a rule that would fail on
            that D warns instead, unless it fails at every such default (docs/engines.md#versions).
        draft_length_range: those defaults, when every version in range has one
            recorded, else ``()``.
        draft_length_moves: when D is only the starting value of a schedule that moves
            it during the run (transformers' ``heuristic`` schedule), or may be (the
            schedule is a default that differs between the versions the config may run),
            the sentence saying so and what fixes D; a rule that would fail on D warns
            instead (docs/theory.md#d-is-a-maximum). Else None.
    """

    engine: Engine
    path: str
    pointer: str
    mechanism: Mechanism | None
    draft_length: int | None
    verify_tokens: int | None
    draft_length_is_max: bool = False
    lossy_acceptance: bool = False
    tensor_parallel_size: int | None = None
    attention_data_parallel: bool = False
    draft_model: str | None = None
    max_model_len: int | None = None
    issues: tuple[EngineIssue, ...] = ()
    target_model: str | None = None
    spans: dict[str, Span] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    draft_passes: DraftPasses | None = None
    version: str | None = None
    draft_tensor_parallel_size: int | None = None
    version_source: str = "assumed-newest"
    resolution: Mapping[str, object] = field(default_factory=dict)
    version_raw: str | None = None
    implied_versions: Mapping[str, str | None] | None = None
    # the readers' options (engines._source.Opt), typed loosely here: this module is
    # below the readers
    check_options: Mapping[str, Any] = field(default_factory=dict)
    version_in_force: VersionInForce | None = None
    draft_length_default: tuple[str, str, Version | None] | None = None
    draft_length_assumed: str | None = None
    draft_length_range: tuple[int, ...] = ()
    draft_length_moves: str | None = None
    #: a value of the speculative block the launcher leaves unsettled that changes
    #: neither D nor the method as the engine resolves them (vLLM: ``model`` beside a
    #: stated ``method`` vLLM keeps and a stated D): SG313/SG314 on it, the rest read
    #: (docs/engines.md#unsettled-values). None when every value is settled.
    deferred: UnsettledValue | None = None


@dataclass(frozen=True)
class Precision:
    """The precision a checkpoint or a serving config declares (docs/theory.md#step-time-inputs).

    Attributes:
        weight_bytes: b_w, bytes per weight of the linear layers (scales included:
            NVFP4 0.5625, MXFP4 0.53125); ``None`` when the scheme mixes precisions or
            is not one specgate prices.
        compute_dtype: the dtype the GEMMs run at (``bf16`` | ``fp16`` | ``fp8`` |
            ``int8`` | ``fp4``): the activations' precision (W8A8 FP8 → ``fp8``;
            weight-only W4A16 → the model's 16-bit dtype); ``None`` when unknown.
        kv_cache_bytes: b_kv when declared (a ModelOpt ``kv_cache_quant_algo``, an
            engine's ``--kv-cache-dtype``, or the model dtype), else ``None``.
        method: what was read, as shown (``quantization_config.quant_method fp8``).
        key: the config key it was read at (for the span).
        note: why ``weight_bytes`` is ``None``, or what was assumed.
    """

    weight_bytes: float | None
    compute_dtype: str | None
    kv_cache_bytes: float | None
    method: str
    key: str = ""
    note: str | None = None


@dataclass(frozen=True)
class ModelShape:
    """Attention shape and limits read from a model config (HF ``config.json``).

    Attributes:
        query_heads: H (``num_attention_heads``), ``None`` when absent.
        kv_heads: KV heads; ``None`` when the config has none (then G = 1 unless MLA).
        query_heads_per_kv: G = H / KV as an exact fraction (before any TP split).
        mla: multi-latent attention (``kv_lora_rank`` present).
        vocab_size, max_position_embeddings, mtp_layers: as stated, else ``None``.
        routed_experts: the routed experts of a mixture-of-experts model
            (``n_routed_experts``, ``num_local_experts`` or ``num_experts``), 0 or
            ``None`` for a dense model.
        model_type, architectures: the config's ``model_type`` and
            ``architectures`` as stated (an engine detects a drafter by them: vLLM
            reads ``medusa``/``mlp_speculator`` from a draft's ``model_type``).
        n_predict: a draft config's ``n_predict`` (MLP speculators: the tokens it
            drafts; vLLM takes D from it when ``num_speculative_tokens`` is unset).
        experts_per_token: k, ``num_experts_per_tok``.
        layers: L, ``num_hidden_layers`` (``n_layer``, ``num_layers``).
        hidden_size: h, ``hidden_size`` (``n_embd``, ``d_model``).
        head_dim: d_h, ``head_dim`` when stated, else hidden_size / query heads.
        kv_lora_rank / rope_head_dim: MLA's d_c and d_r (``kv_lora_rank``,
            ``qk_rope_head_dim``).
        parameters / active_parameters: total and active parameters counted from
            the config's shapes (:mod:`specgate.inputs.model_params`), ``None`` when
            the family is not one that is counted; ``parameter_family`` the family.
        mtp_layers: the MTP layer count as stated (0 is read: no MTP layer);
            ``mtp_known``: that count, else 0 when the config's model type and
            architectures are none known to ship MTP modules (data/models/mtp.json),
            else ``None``.
        scalars: the config's numbers, strings, booleans and short number lists by
            dotted key (two levels, at most 256), for the engines' checks
            (``fact.draft.config.block_size``); ``keys``: its top-level keys (at most
            256: ``vision_config`` marks a multimodal target).
        precision: the weights', GEMMs' and KV cache's precision the checkpoint
            declares (``quantization_config``, ``dtype``/``torch_dtype``), ``None``
            when it declares none (:mod:`specgate.inputs.precision`).
    """

    path: str
    pointer: str
    query_heads: int | None
    kv_heads: int | None
    query_heads_per_kv: Fraction | None
    mla: bool = False
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    mtp_layers: int | None = None
    spans: dict[str, Span] = field(default_factory=dict)
    routed_experts: int | None = None
    model_type: str | None = None
    architectures: tuple[str, ...] = ()
    n_predict: int | None = None
    experts_per_token: int | None = None
    layers: int | None = None
    hidden_size: int | None = None
    head_dim: int | None = None
    kv_lora_rank: int | None = None
    rope_head_dim: int | None = None
    parameters: int | None = None
    active_parameters: int | None = None
    parameter_family: str | None = None
    mtp_known: int | None = None
    scalars: Mapping[str, object] = field(default_factory=dict)
    precision: Precision | None = None
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Acceptance:
    """A measured accept length AL and how it was obtained.

    Attributes:
        format: the ``evidence.metrics.format`` name.
        accept_length: AL, tokens per target step including the bonus token.
        formula: the arithmetic shown to users, e.g. ``"1 + 875/625"``.
        estimate: AL is a labelled estimate, not an exact measurement.
        draft_length: D the measurement was taken at, when the data states it
            (per-position counters, ``num_speculative_tokens``), else ``None``.
        marginal: per-position marginal acceptance rates, when known.
        note: extra words for the report (``"cumulative since start"`` …).
        acceptance_rate: r, accepted draft tokens / proposed draft tokens, when
            the data states both counts (llama.cpp timings give only this).
        min_draft_length: a lower bound on the D the measurement was taken at, from
            a histogram: the largest accepted-draft count with steps in it (a step
            that accepted 3 drafts was drafting at D ≥ 3), else ``None``.
        histogram: steps by accepted-draft count as sorted ``(j, steps)`` pairs
            (sparse: a key read from a file never sizes an allocation), when the
            data gives a per-step distribution (an inline histogram, or vLLM
            per-position counters with the drafts counter), else ``()``; feeds
            standard errors (docs/change-gate.md#standard-error).
        steps: verification steps counted, when the data states them (Δdrafts, Σ
            drafts, the histogram total, requests with drafts), else ``None``.
        emitted_tokens: output tokens the engine generated over the same window, when
            the data states them (vLLM's ``generation_tokens`` counter, the output
            tokens of per-request records), else ``None``: the accepted drafts cannot
            exceed them less one token per step (SG305's cross-check).
        accepted_tokens: accepted draft tokens (bonus tokens not included) over the
            window, when the data states them beside ``emitted_tokens``.
    """

    format: str
    path: str | None
    accept_length: float
    formula: str
    estimate: bool = False
    draft_length: int | None = None
    marginal: tuple[float, ...] = ()
    note: str | None = None
    spans: dict[str, Span] = field(default_factory=dict)
    acceptance_rate: float | None = None
    min_draft_length: int | None = None
    histogram: tuple[tuple[int, int], ...] = ()
    steps: int | None = None
    emitted_tokens: float | None = None
    accepted_tokens: float | None = None
