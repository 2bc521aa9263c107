"""The typed model of one deployment, as rules see it.

Each block mirrors the claims file (docs/claims-file.md#format-rules); ``None`` means "not given".
Values are already checked for type and range by the schema; a value that broke
the schema is ``None`` here, so metrics are computed from the valid values only.

The records here, and the others every command builds before it does its work
(metrics, findings, reports, rules), are :class:`typing.NamedTuple` classes rather
than dataclasses: immutable like frozen dataclasses, ``_replace`` for a changed
copy, but a class costs one ``eval`` instead of an ``exec`` per generated method,
and the ``dataclasses`` import (with ``inspect``) is not paid. Together that was
half of ``specgate doctor``'s start-up (``benchmarks/bench.py``). Records built
only on the way to other work (readers, configuration) stay dataclasses.
"""

# No ``from __future__ import annotations`` here: typing.NamedTuple compiles every
# annotation given as a string (a ForwardRef each, ~30 µs), so annotations are objects
# and the readers' records, which this module must not import, have stand-ins below.
from fractions import Fraction
from typing import TYPE_CHECKING, Literal, NamedTuple

from specgate.core.vocabulary import DraftPasses
from specgate.load.document import NodePath, Span

if TYPE_CHECKING:
    from specgate.inputs.types import Acceptance, EngineConfig, EngineIssue, ModelShape
    from specgate.model.provenance import Provenance
else:  # stand-ins for the readers' records, which this module must not import: a quoted
    # field type costs a compile() when the class is made (the process's first ~1 ms)
    Acceptance = EngineConfig = EngineIssue = ModelShape = Provenance = object

SizeClass = Literal["tiny", "small", "medium", "large"]
LatencyRegion = Literal["low", "throughput"]


class ModelBlock(NamedTuple):
    """``model``: the target model's shape and size.

    The step-time inputs of docs/theory.md#step-time-inputs (``layers`` L, ``head_dim`` d_h,
    ``hidden_size`` h, ``kv_bytes_per_token`` K_tok in bytes, ``active_parameters_b``
    in billions, ``experts`` E, ``experts_per_token`` k; ``kv_lora_rank`` d_c and
    ``rope_head_dim`` d_r of MLA) are as written, or read from ``model.hf_config``
    when the claims file leaves them out (``parameters_b`` then counted from the
    config's shapes).
    """

    name: str | None = None
    query_heads: int | None = None
    kv_heads: int | None = None
    query_heads_per_kv: Fraction | None = None
    size: SizeClass | None = None
    parameters_b: float | None = None
    moe: bool | None = None
    mla: bool = False
    mtp_modules: bool | None = None
    revision: str | None = None
    layers: int | None = None
    head_dim: int | None = None
    hidden_size: int | None = None
    kv_bytes_per_token: float | None = None
    active_parameters_b: float | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    kv_lora_rank: int | None = None
    rope_head_dim: int | None = None


class SpeculationBlock(NamedTuple):
    """``speculation``: the draft mechanism and draft length D.

    ``verify_tokens`` is N_verify (tokens the target scores per step) when it
    differs from D + 1 (tree drafting); ``None`` means a chain (N = 1 + D).
    ``draft_passes`` is ``per_token`` or ``single`` as written (``None``: the
    mechanism's default, see :func:`specgate.analysis.derived.draft_passes`); ``engine``
    is ``speculation.engine`` as written; ``tree_level_nodes`` the draft nodes on each
    tree level (their sum is N_verify − 1; ``()`` when not given,
    docs/theory.md#proven-verify-cost). ``draft_length_assumed``: when D is an engine default read
    at a version not pinned, and that default differs between versions, the sentence saying so and
    what settles it (a rule that would fail on that D warns unless it fails at every
    default, docs/engines.md#versions); else None. ``draft_length_range``: those defaults (the D
    values the engine's data records over the versions the config may run), ``()``
    when some of those versions have none recorded or D is not assumed.
    ``draft_length_moves``: when the served D is only the starting value of a schedule
    that moves it during the run (transformers' ``heuristic``), the sentence saying so
    and what fixes it: every fail that reads D warns (docs/theory.md#d-is-a-maximum); else
    None.
    """

    present: bool = False
    enabled: bool | None = None
    mechanism: str | None = None
    draft_length: int | None = None
    draft_depth_ratio: float | None = None
    verify_tokens: int | None = None
    draft_length_is_max: bool = False
    draft_passes: DraftPasses | None = None
    engine: str | None = None
    draft_revision: str | None = None
    tree_level_nodes: tuple[int, ...] = ()
    draft_length_assumed: str | None = None
    draft_length_range: tuple[int, ...] = ()
    draft_length_moves: str | None = None


class WorkloadBlock(NamedTuple):
    """``workload``: what the deployment serves. ``context_length`` is c̄, the mean
    tokens in each decoding sequence's KV cache; ``prefill_tokens_per_step`` C, the
    prefill tokens sharing each decode step (docs/theory.md#step-time-inputs)."""

    name: str | None = None
    latency_region: LatencyRegion = "low"
    attention_dominated: bool = False
    repetitive: bool = False
    temperature: float | None = None
    concurrency: int | None = None
    dataset: str | None = None
    chat_template: str | None = None
    context_length: float | None = None
    prefill_tokens_per_step: int | None = None


class HardwareBlock(NamedTuple):
    """``hardware``: the GPU the target runs on (docs/theory.md#cost-model,
    docs/theory.md#attention-tiles).

    ``gpu`` names a row of the shipped table (``specgate/data/gpus.json``);
    ``peak_tflops`` (dense TFLOP/s at the compute dtype) and ``memory_bandwidth_tbps``
    (TB/s) override its figures; ``weight_bytes`` defaults to 2; ``attention_tile_rows``
    is M of the tile rule. docs/theory.md#step-time-inputs: ``compute_dtype`` (bf16 | fp16 | fp8 |
    int8 | fp4), ``kv_cache_bytes`` b_kv (default 2), ``tensor_parallel`` t (default:
    the engine config's, else 1), ``allreduce_gbps`` bw_ar (GB/s per GPU and
    direction; default: the table's) and ``allreduce_latency_us`` t_ar, the latency
    of one all-reduce (µs).
    """

    present: bool = False
    gpu: str | None = None
    peak_tflops: float | None = None
    memory_bandwidth_tbps: float | None = None
    weight_bytes: float | None = None
    attention_tile_rows: int | None = None
    compute_dtype: str | None = None
    kv_cache_bytes: float | None = None
    tensor_parallel: int | None = None
    allreduce_gbps: float | None = None
    allreduce_latency_us: float | None = None

    @property
    def names_roofline(self) -> bool:
        """Whether the block says anything about compute or bandwidth."""
        return (
            self.gpu is not None
            or self.peak_tflops is not None
            or self.memory_bandwidth_tbps is not None
        )


class EvidenceBlock(NamedTuple):
    """``evidence``: measured accept length AL and supporting evidence.
    ``verify_cost_ratio_at`` holds measured (verify tokens, β) points, sorted by
    verify tokens (docs/theory.md#proven-verify-cost)."""

    present: bool = False
    accept_length: float | None = None
    cache_coherence_eval: bool | None = None
    next_draft_length: int | None = None
    next_accept_length: float | None = None
    next_verify_tokens: int | None = None
    measured_speedup: float | None = None
    baseline_tokens_per_s: float | None = None
    speculative_tokens_per_s: float | None = None
    verify_cost_ratio: float | None = None
    provenance: Provenance | None = None
    measured_speedup_se: float | None = None
    verify_cost_ratio_at: tuple[tuple[int, float], ...] = ()
    #: Half a unit of the last digit written of ``measured_speedup``,
    #: ``baseline_tokens_per_s`` and ``speculative_tokens_per_s`` (``None``: unknown,
    #: the number is taken as exact), from the claims file's text.
    printed_half_units: tuple[float | None, float | None, float | None] = (None, None, None)

    @property
    def has_next(self) -> bool:
        """Whether ``evidence.next`` gives both D and AL."""
        return self.next_draft_length is not None and self.next_accept_length is not None


class Conflict(NamedTuple):
    """A number stated in the claims file that a referenced file contradicts (SG301).

    ``path`` is the stated value's node path in the claims file (``stated_at`` its span
    there, when known); ``source`` and ``span`` locate the referenced value.
    ``served``: the referenced value is what the engine runs and every other rule
    judges (docs/trust.md#one-cause-one-finding: one cause, one finding). ``assumed``: the
    referenced value is an engine default at a version not pinned (the sentence why): the stated
    value is judged and the conflict only warns (docs/engines.md#refusals-and-rewrites). ``note``:
    words the finding's message ends with (what follows from the disagreement); ``warn``: the
    disagreement rests on a reading of names, not on two stated numbers, so it warns.
    ``action``: the next action when the generic one (make them agree or drop the
    stated number) does not fit, else ``""``. ``default``: the referenced file sets no
    value and the referenced one is the engine's default (a D no flag or key states), so
    the message says the file leaves it at the default rather than that it says it.
    """

    what: str
    stated: str
    referenced: str
    path: NodePath
    source: str
    span: Span | None
    stated_at: Span | None = None
    served: bool = False
    assumed: str | None = None
    note: str = ""
    warn: bool = False
    action: str = ""
    default: bool = False


class EngineUnread(NamedTuple):
    """A serving config specgate parsed but could not read a speculative configuration
    from (a form or engine it does not read, a value it cannot settle): the reader's
    reason, where it points (file as shown, 1-based line and column, None when the
    whole file), and whether the launch sets a speculative flag of an engine specgate
    does not read. The deployment is still judged, on what the claims file states."""

    reason: str
    file: str
    line: int | None
    column: int | None
    speculates: bool
    #: ``"form"`` (a form or engine not read: SG312), or where a value not settled is
    #: set: ``"outside"`` the repository (SG313) or by the ``"repository"`` (SG314);
    #: ``"bound"``: a number read past specgate's bound on it (SG315); ``"refused"``:
    #: a value not of its setting's type (SG307, docs/engines.md#refused-values).
    origin: str = "form"
    #: the unsettled expression as written (``$DRAFT``), for ``outside``/``repository``;
    #: the setting, for ``bound``.
    what: str = ""
    #: where ``what``, a variable, gets its value when that is elsewhere
    #: (``os.environ['DRAFT'], serve.py:4``); ``""`` when ``what`` says it. For
    #: ``refused``: the evidence beside the message (the engine's parser asked, the
    #: version reasoning).
    source: str = ""
    #: when ``what`` names variables any of which may be set, what applies if none is
    #: (the engine's default D); ``""`` otherwise.
    otherwise: str = ""
    #: for ``refused``: ``"fail"`` where the engine's refusal is known at the version in
    #: force, else ``"warn"``; ``""`` otherwise.
    severity: str = ""


class Inputs(NamedTuple):
    """What was read from referenced files (docs/claims-file.md#referenced-files).

    Attributes:
        engine: the serving config's speculative configuration.
        model / draft_model: the target's and the draft's model configs.
        acceptance: the measured AL from ``evidence.metrics``.
        effective_query_heads_per_kv: G as one GPU rank sees it (TP and MLA aware).
        conflicts: stated numbers the referenced files contradict.
        engine_issues: the engine's own refusals and rewrites (SG304/SG307 material),
            including those that need the model config (vLLM MTP layers).
        claims_file: the claims file, for findings about inline metrics.
        engine_unread: the serving config that could not be read (SG312), else None.
        model_unread: a model config not read (``source`` names the claims file's key,
            ``model.hf_config`` or ``speculation.draft_hf_config``): origin ``"bound"``,
            a number past specgate's bound on it (SG315); ``"form"``, it parses but holds
            no model specgate reads (SG312, docs/engines.md#model-config-not-read); else None.
        acceptance_unread: why ``evidence.metrics`` gave no AL although given (a
            format that derives AL from D, where D is not settled: SG101 warns), else None.
    """

    engine: EngineConfig | None = None
    model: ModelShape | None = None
    draft_model: ModelShape | None = None
    acceptance: Acceptance | None = None
    effective_query_heads_per_kv: Fraction | None = None
    conflicts: tuple[Conflict, ...] = ()
    engine_issues: tuple[EngineIssue, ...] = ()
    claims_file: str | None = None
    engine_unread: EngineUnread | None = None
    model_unread: EngineUnread | None = None
    acceptance_unread: str | None = None


class Deployment(NamedTuple):
    """One deployment of a claims file (or of ``specgate doctor``'s flags).

    Attributes:
        position: index in ``deployments`` (0 for doctor).
        name: the deployment's name.
        claimed_speedup: ``claims.speedup`` (ratio, not percent).
        claimed_half_unit: half a unit of the last digit ``claims.speedup`` is
            written with, from the claims file's text (``None``: unknown).
        min_accept_length: ``policy.min_accept_length`` as written.
        min_gain / retune_gain: ``policy.min_gain`` / ``policy.retune_gain`` as
            written (``None``: the defaults of docs/theory.md#al-floor-and-guideline and
            docs/rules.md).
        max_accept_length_drop / max_evidence_age_days / max_speedup_drop: the docs/change-gate.md
        and
            docs/trust.md#what-a-fail-may-rest-on policy keys as written.
        base: node path of this deployment in its file, e.g. ``("deployments", 0)``.
    """

    position: int
    name: str
    model: ModelBlock = ModelBlock()
    speculation: SpeculationBlock = SpeculationBlock()
    workload: WorkloadBlock = WorkloadBlock()
    evidence: EvidenceBlock = EvidenceBlock()
    claimed_speedup: float | None = None
    min_accept_length: float | None = None
    max_accept_length_drop: float | None = None
    max_evidence_age_days: int | None = None
    base: NodePath = ()
    hardware: HardwareBlock = HardwareBlock()
    min_gain: float | None = None
    retune_gain: float | None = None
    inputs: Inputs | None = None
    max_speedup_drop: float | None = None
    #: Half a unit of the last digit ``claims.speedup`` is written with (``"1.84"`` →
    #: 0.005), ``None`` when unknown (the claim is then taken as exact).
    claimed_half_unit: float | None = None

    def path(self, *elements: str | int) -> NodePath:
        """A node path inside this deployment, e.g. ``path("claims", "speedup")``."""
        return (*self.base, *elements)

    @property
    def speculation_enabled(self) -> bool:
        """``speculation.enabled`` is exactly true."""
        return self.speculation.enabled is True

    @property
    def accept_length_estimate(self) -> Acceptance | None:
        """The metrics behind AL when the AL judged is a labelled estimate (the JSON
        report's ``inputs.acceptance.estimate``: llama.cpp timings, a D that is only a
        maximum, an i.i.d. model …), else ``None``. Every surface that shows this AL
        says it is an estimate (docs/trust.md#names-say-how-a-number-is-known)."""
        acceptance = self.inputs.acceptance if self.inputs is not None else None
        if acceptance is None or not acceptance.estimate:
            return None
        if self.evidence.accept_length != acceptance.accept_length:
            return None  # a stated AL wins over the metrics (a measurement of its own)
        return acceptance
