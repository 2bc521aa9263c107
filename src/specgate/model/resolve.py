"""Resolve a deployment's referenced files into its typed model
(docs/claims-file.md#referenced-files).

``model.hf_config``, ``speculation.engine_config``, ``speculation.draft_hf_config``
and ``evidence.metrics`` point at files users already commit. Their values fill
what the claims file leaves out, each keeping its own file and line (so findings
land on the serving config's line); a number the claims file states that a
referenced file contradicts becomes a :class:`~specgate.model.referenced.Conflict` (SG301),
never a silent preference. Reading errors are :class:`InputError` (exit 2).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specgate.core.errors import (
    InputError,
    LimitReached,
    OutOfBounds,
    RefusedValue,
    UnreadForm,
    UnsettledValue,
)
from specgate.core.numbers import fmt
from specgate.load.document import Document, NodePath, Span
from specgate.model.deployment import Deployment, ModelBlock
from specgate.model.reads import block as _block
from specgate.model.reads import once as _once
from specgate.model.reads import references_files
from specgate.model.referenced import Conflict, EngineUnread, Inputs

if TYPE_CHECKING:
    # Built by the readers; a claims file without references never loads them.
    from specgate.inputs.types import Acceptance, EngineConfig, EngineIssue, ModelShape

#: Engines print AL to 2 decimals ("Mean acceptance length: 2.46"): a stated AL
#: within half a unit of the last printed place agrees with the measurement.
ACCEPT_LENGTH_TOLERANCE = 0.005

Location = tuple[str, Span]


class _Resolver:
    def __init__(self, document: Document, claims_path: Path, deployment: Deployment) -> None:
        self.document = document
        self.base_dir = claims_path.resolve().parent
        self.shown_base = posixpath.dirname(document.file)
        self.deployment = deployment
        self.overrides: dict[NodePath, Location] = {}
        self.conflicts: list[Conflict] = []
        #: The serving config that was parsed but could not be read (SG312).
        self.engine_unread: EngineUnread | None = None
        #: A model config holding a number past specgate's bound (SG315), not read.
        self.model_unread: EngineUnread | None = None

    def fail_at(self, path: NodePath) -> Callable[[str], InputError]:
        """An error builder pointing at ``path`` in the claims file."""
        span = self.document.locate(path)

        def fail(reason: str) -> InputError:
            return InputError(reason, self.document.file, span.line, span.column)

        return fail

    def file(self, block: str, key: str, raw: object) -> tuple[Path, str, str | None]:
        """(file on disk, shown path, pointer) of a ``path`` or ``{path, pointer}`` value."""
        from specgate.inputs.paths import resolve_reference

        node = self.deployment.path(block, key)
        pointer = None
        relative = raw
        if isinstance(raw, dict):
            relative = raw.get("path")
            pointer = raw.get("pointer") if isinstance(raw.get("pointer"), str) else None
            node = (*node, "path")
        if not isinstance(relative, str):
            raise self.fail_at(node)(f"{block}.{key} must be a path or {{path, pointer}}")
        target, shown = resolve_reference(
            relative,
            what=f"{block}.{key}",
            base_dir=self.base_dir,
            shown_base=self.shown_base,
            root=None,
            fail=self.fail_at(node),
        )
        return target, shown, pointer

    def conflict(self, conflict: Conflict) -> None:
        """Record a stated number a referenced file contradicts."""
        self.conflicts.append(conflict)

    def take(self, path: NodePath, source: str, span: Span | None) -> None:
        """Record that the value at ``path`` came from ``source`` (at ``span``)."""
        if span is not None:
            self.overrides[path] = (source, span)


def _engine(
    r: _Resolver, spec_raw: dict[str, Any], model_raw: dict[str, Any]
) -> EngineConfig | None:
    if "engine_config" not in spec_raw:
        return None
    from specgate.inputs.engines import OtherEngine, read_engine_file

    target, shown, pointer = r.file("speculation", "engine_config", spec_raw["engine_config"])
    engine = spec_raw.get("engine") if isinstance(spec_raw.get("engine"), str) else None
    stated = spec_raw.get("engine_version")
    version = stated if isinstance(stated, str) else None

    def read_as(name: str | None, at: str | None, launches: frozenset[str]) -> EngineConfig:
        return _once(
            ("engine", target, shown, pointer, name, at, launches),
            lambda: read_engine_file(
                target, shown, pointer=pointer, engine=name, engine_version=at,
                launches=launches,
            ),
        )

    def read(launches: frozenset[str] = frozenset()) -> EngineConfig:
        try:
            return read_as(engine, version, launches)
        except OtherEngine as exc:
            if len(exc.engines) != 1:
                raise
            # Degrade, never stop (issue 24): the file configures another engine than
            # speculation.engine names; what runs is that engine's configuration (read
            # without the stated version, which is the other engine's), and the two
            # stated engines disagree (SG301)
            served = read_as(exc.engines[0], None, launches)
            _engine_named_otherwise(r, str(engine), served)
            return served

    try:
        config = read()
        if config.deferred is not None:
            # one key set outside (or not followed), the rest read: both are judged
            exc = config.deferred
            r.engine_unread = EngineUnread(
                exc.reason, exc.file or shown, exc.line, exc.column, True, exc.origin,
                exc.what, exc.source,
            )
        return config
    except UnsettledValue as exc:
        # Degrade, never stop: a value the launcher cannot settle is the deployment's
        # (outside the repository: SG313) or the repository's (SG314); the deployment
        # is judged on what the claims file states (docs/engines.md#unsettled-values)
        r.engine_unread = EngineUnread(
            exc.reason, exc.file or shown, exc.line, exc.column, True, exc.origin, exc.what,
            exc.source, exc.otherwise,
        )
        return None
    except RefusedValue as exc:
        # Degrade, never stop: a value not of its setting's type is SG307 at its line
        # (a fail where the engine's refusal is known at the version in force); the
        # deployment is judged on what the claims file states (docs/engines.md#refused-values)
        r.engine_unread = EngineUnread(
            exc.reason, exc.file or shown, exc.line, exc.column, True, "refused", exc.what,
            exc.details, severity=exc.severity,
        )
        return None
    except OutOfBounds as exc:
        # Degrade, never stop: a number the serving config holds past specgate's bound
        # is a finding at its line (SG315); the deployment is judged on what the claims
        # file states, and every other one is still checked (docs/engines.md#out-of-bounds)
        r.engine_unread = EngineUnread(
            exc.reason, exc.file or shown, exc.line, exc.column, True, "bound", exc.what
        )
        return None
    except InputError as exc:
        from specgate.inputs.engines import configures_nothing

        nothing = configures_nothing(exc)
        launches = _model_launches(r, model_raw) if nothing else frozenset()
        if launches:
            # the engine speculates through the model it serves (TGI with a Medusa
            # model and no --speculate): its bare launch is the configuration
            try:
                return read(launches)
            except InputError as again:
                if not configures_nothing(again):
                    raise
        if spec_raw.get("enabled") is False and nothing:
            # speculation is off and the serving config speculates nothing: they agree
            return None
        if not _unread(exc):
            raise  # a file that cannot be parsed, a bound, a path out: exit 2
        # Degrade, never stop: a form or engine specgate does not read, or a value it
        # cannot settle, is a finding on this deployment (SG312); the deployment is
        # judged on what the claims file states, and every other one is still checked.
        r.engine_unread = EngineUnread(
            exc.reason, exc.file or shown, exc.line, exc.column,
            bool(getattr(exc, "speculates", True)), severity=getattr(exc, "severity", ""),
        )
        return None


def _engine_named_otherwise(r: _Resolver, stated: str, served: EngineConfig) -> None:
    """``speculation.engine`` names another engine than the serving config configures:
    SG301 at the claims file's line; the served engine is what every rule judges."""
    path = r.deployment.path("speculation", "engine")
    if any(c.path == path for c in r.conflicts):
        return
    r.conflict(
        Conflict(
            "engine", stated, served.engine, path, served.path,
            served.spans.get("mechanism") or served.spans.get("draft_length"),
            stated_at=r.document.locate(path), served=True,
            note=f"; {served.path} configures no {stated} speculative decoding",
        )
    )


def _unread(exc: InputError) -> bool:
    """Whether ``exc`` says the serving config, parsed, holds no speculative
    configuration specgate reads: a launcher of an engine it does not read, a command
    whose program is no engine's (:class:`~specgate.inputs.engines.unread.UnreadEngine`),
    or no speculative setting found, or a value in a form it does not follow
    (:class:`~specgate.core.errors.UnreadForm`: a chart value). Every other input
    error (a file that cannot be parsed, a reader's bound, a path out of the
    repository, several configurations without ``pointer:``) still stops the file
    (exit 2)."""
    from specgate.inputs.engines import configures_nothing
    from specgate.inputs.engines.unread import UnreadEngine

    return isinstance(exc, UnreadEngine | UnreadForm) or (
        configures_nothing(exc) and not isinstance(exc, LimitReached)
    )


def _model_launches(r: _Resolver, model_raw: dict[str, Any]) -> frozenset[str]:
    """The engines whose launch speculates with ``model.hf_config`` although it sets
    no speculative flag; none when that config is not given or cannot be read (its
    own error is reported where it is read)."""
    if "hf_config" not in model_raw:
        return frozenset()
    from specgate.inputs.engines.registry import launched_by_model

    try:
        shape = _shape(r, "model", "hf_config", model_raw["hf_config"])
    except InputError:
        return frozenset()
    return launched_by_model(shape)


def _shape(r: _Resolver, block: str, key: str, raw: object, draft: bool = False) -> ModelShape:
    from specgate.inputs.model_config import read_model_config
    from specgate.load.read import load_document

    target, shown, pointer = r.file(block, key, raw)

    def read() -> ModelShape:
        shape = read_model_config(
            load_document(target, shown), shown=shown, pointer=pointer, draft=draft
        )
        _bound_shape(shape)
        return shape

    return _once(("model", target, shown, pointer, draft), read)


def _bound_shape(shape: ModelShape) -> None:
    """Head counts and other whole numbers of a model config obey limits.py.

    Raises:
        OutOfBounds: a number over its maximum, at its line in the model config (a
            finding on the deployment, SG315, not the end of the run).
    """
    from specgate.core.limits import MAX_COUNT, MAX_HEADS

    fields = {
        "query_heads": (shape.query_heads, MAX_HEADS),
        "kv_heads": (shape.kv_heads, MAX_HEADS),
        "vocab_size": (shape.vocab_size, MAX_COUNT),
        "max_position_embeddings": (shape.max_position_embeddings, MAX_COUNT),
        "mtp_layers": (shape.mtp_layers, MAX_COUNT),
        "layers": (shape.layers, MAX_COUNT),
        "hidden_size": (shape.hidden_size, MAX_COUNT),
        "head_dim": (shape.head_dim, MAX_COUNT),
        "experts": (shape.routed_experts, MAX_COUNT),
        "experts_per_token": (shape.experts_per_token, MAX_COUNT),
        "kv_lora_rank": (shape.kv_lora_rank, MAX_COUNT),
        "rope_head_dim": (shape.rope_head_dim, MAX_COUNT),
    }
    for name, (value, limit) in fields.items():
        if value is not None and abs(value) > limit:
            span = shape.spans.get(name)
            raise OutOfBounds(
                f"{name} is over specgate's maximum of {limit:,}",
                shape.path,
                span.line if span else None,
                what=name,
                column=span.column if span else None,
            )


def _bounded_shape(
    r: _Resolver, raw: dict[str, Any], block: str, key: str
) -> ModelShape | None:
    """The model config at ``block.key``, or None when not given, when it holds a
    number past specgate's bound (SG315, docs/engines.md#out-of-bounds), or when it
    parses but its model is not read (no head count, a count not a positive integer,
    not a mapping: SG312, docs/engines.md#model-config-not-read). Then it is not read,
    the first such config is a finding on the deployment, and the rest of the
    deployment is judged on what the claims file states."""
    if key not in raw:
        return None
    try:
        return _shape(r, block, key, raw[key], draft=key == "draft_hf_config")
    except (OutOfBounds, UnreadForm) as exc:
        if r.model_unread is None:
            origin, what = ("bound", exc.what) if isinstance(exc, OutOfBounds) else ("form", key)
            r.model_unread = EngineUnread(
                exc.reason, exc.file or "", exc.line, exc.column, True, origin, what,
                f"{block}.{key}",
            )
        return None


def _disabled_but_speculating(
    r: _Resolver, spec_raw: dict[str, Any], engine: EngineConfig
) -> None:
    """``speculation.enabled: false`` over a serving config that speculates: two stated
    values that disagree, an SG301 fail naming the serving config's line (the engine
    runs speculative decoding; nothing else about it is checked while the claims file
    says it is off). The converse, off over a config that configures nothing, agrees."""
    if spec_raw.get("enabled") is not False:
        return
    d = engine.draft_length
    if engine.mechanism is None and not d:
        return
    if d == 0:
        return  # a draft length of 0 speculates nothing
    path = r.deployment.path("speculation", "enabled")
    what = ", ".join(
        part
        for part in (
            engine.mechanism,
            None if d is None else f"D {d}",
        )
        if part
    )
    span = engine.spans.get("mechanism") or engine.spans.get("draft_length")
    r.conflict(
        Conflict(
            "speculation",
            "enabled: false",
            f"speculative decoding on ({what})",
            path,
            engine.path,
            span,
            stated_at=r.document.locate(path),
            note=f"; the engine runs {what} and nothing of it is checked while speculation "
            "is stated off",
            action="Set speculation.enabled: true (with the evidence of the deployment the "
            f"engine runs) so that it is checked, or remove the speculative config from "
            f"{engine.path}.",
        )
    )


def _merge_engine(r: _Resolver, engine: EngineConfig) -> None:
    """Fill D and the mechanism from the engine config. A stated value the engine
    config contradicts is an SG301 conflict at the claims file's line, and the served
    value (what the engine runs) replaces it for every other rule
    (docs/trust.md#one-cause-one-finding: one cause, one finding)."""
    dep = r.deployment
    spec = dep.speculation
    d_path = dep.path("speculation", "draft_length")
    draft_length = spec.draft_length
    # D from an engine default that differs by version, at a version not pinned: a
    # stated D wins (the default is a guess), and every rule that would fail on the
    # served one warns (docs/engines.md#refusals-and-rewrites)
    assumed = engine.draft_length_assumed
    taken_assumed: str | None = None
    taken_range: tuple[int, ...] = ()
    # a draft length below 1 that SG307 calls invalid (SGLang's resolution keeps
    # speculative_num_steps 0 or -2, its workers need at least 1): no step drafts it, so no
    # other rule prices it as the served D (docs/trust.md#one-cause-one-finding)
    invalid = engine.draft_length is not None and engine.draft_length < 1 and any(
        issue.code == "SG307" and issue.field == "draft_length" for issue in engine.issues
    )
    if engine.draft_length is not None and not invalid:
        if draft_length is not None and draft_length != engine.draft_length:
            r.conflict(
                Conflict(
                    "draft length D",
                    fmt(draft_length),
                    fmt(engine.draft_length),
                    d_path,
                    engine.path,
                    engine.spans.get("draft_length"),
                    stated_at=r.document.locate(d_path),
                    served=assumed is None,
                    assumed=assumed,
                    default=engine.draft_length_default is not None,
                )
            )
        if draft_length is None and assumed is not None:
            taken_assumed = assumed
            taken_range = engine.draft_length_range
        if draft_length != engine.draft_length and (assumed is None or draft_length is None):
            draft_length = engine.draft_length
            r.take(d_path, engine.path, engine.spans.get("draft_length"))
        elif draft_length == engine.draft_length and assumed is None:
            # the claims file restates the D the engine serves: a finding about D sits
            # where the engine reads it, as when the claims file states none (README,
            # "Values read from a referenced file keep that file's location")
            r.take(d_path, engine.path, engine.spans.get("draft_length"))
    mechanism = spec.mechanism
    if engine.mechanism is not None:
        m_path = dep.path("speculation", "mechanism")
        if mechanism is not None and mechanism != engine.mechanism:
            r.conflict(
                Conflict(
                    "mechanism",
                    mechanism,
                    engine.mechanism,
                    m_path,
                    engine.path,
                    engine.spans.get("mechanism"),
                    stated_at=r.document.locate(m_path),
                    served=True,
                )
            )
        if mechanism != engine.mechanism:
            mechanism = engine.mechanism
            r.take(m_path, engine.path, engine.spans.get("mechanism"))
    verify_tokens = spec.verify_tokens
    # The engine's N_verify belongs to the engine's D: when the claims file states
    # another D (an SG301 conflict), that D is judged as a chain of its own.
    if (
        verify_tokens is None
        and draft_length is not None
        and engine.draft_length in (None, draft_length)
        and engine.verify_tokens not in (None, draft_length + 1)
    ):
        verify_tokens = engine.verify_tokens
    r.deployment = dep._replace(
        speculation=spec._replace(
            draft_length=draft_length,
            mechanism=mechanism,
            verify_tokens=verify_tokens,
            draft_length_is_max=spec.draft_length_is_max or engine.draft_length_is_max,
            draft_length_assumed=taken_assumed,
            draft_length_range=taken_range,
            # a schedule that moves D moves the stated D too: nothing settles it here
            draft_length_moves=engine.draft_length_moves,
        ),
    )


def _merge_model(
    r: _Resolver, shape: ModelShape, engine: EngineConfig | None, g_stated: bool
) -> Fraction | None:
    from specgate.inputs.model_config import effective_query_heads_per_kv

    dep = r.deployment
    model = dep.model
    for what, key, stated, found in (
        ("query heads H", "query_heads", model.query_heads, shape.query_heads),
        ("KV heads", "kv_heads", model.kv_heads, shape.kv_heads),
    ):
        if stated is not None and found is not None and stated != found:
            r.conflict(
                Conflict(
                    what,
                    fmt(stated),
                    fmt(found),
                    dep.path("model", key),
                    shape.path,
                    shape.spans.get(key),
                    stated_at=r.document.locate(dep.path("model", key)),
                )
            )
    g_path = dep.path("model", "query_heads_per_kv")
    if (
        g_stated
        and model.query_heads_per_kv is not None
        and shape.query_heads_per_kv is not None
        and model.query_heads_per_kv != shape.query_heads_per_kv
    ):
        r.conflict(
            Conflict(
                "query heads per KV head G",
                fmt(model.query_heads_per_kv),
                fmt(shape.query_heads_per_kv),
                g_path,
                shape.path,
                shape.spans.get("query_heads"),
                stated_at=r.document.locate(g_path),
            )
        )
    tp = engine.tensor_parallel_size if engine else None
    dp = engine.attention_data_parallel if engine else False
    if engine is not None and _head_split_issue(shape, engine) is not None:
        tp = None  # the engine refuses this split (SG307): no per-rank G to speak of
    stated_tp = dep.hardware.tensor_parallel
    if stated_tp is not None and (
        stated_tp <= 1 or shape.query_heads is None or (shape.query_heads % stated_tp == 0)
    ):
        tp = stated_tp  # the claims file's TP (a TP that does not divide the heads is SG001)
    effective = effective_query_heads_per_kv(shape, tp, dp)
    if effective is not None:
        r.take(g_path, shape.path, shape.spans.get("query_heads"))
        model = model._replace(query_heads_per_kv=effective)
    model = _merge_step_shape(r, model, shape)
    r.deployment = dep._replace(model=model._replace(mla=shape.mla))
    return effective


#: The step-time numbers a model config gives (docs/theory.md#step-time-inputs): ModelBlock field,
#: ModelShape field, and how a disagreement is named.
_STEP_FIELDS = (
    ("layers", "layers", "layers L"),
    ("head_dim", "head_dim", "head dim d_h"),
    ("hidden_size", "hidden_size", "hidden size h"),
    ("experts", "routed_experts", "routed experts E"),
    ("experts_per_token", "experts_per_token", "experts per token k"),
)


def _merge_step_shape(r: _Resolver, model: ModelBlock, shape: ModelShape) -> ModelBlock:
    """Fill the step-time inputs the claims file leaves out from the model config; a
    stated number the config contradicts is SG301 (the stated one is judged)."""
    values: dict[str, object] = {}
    for key, field_name, what in _STEP_FIELDS:
        stated = getattr(model, key)
        found = getattr(shape, field_name)
        if found is None or (key == "experts" and found == 0):
            continue
        span_key = "experts" if key == "experts" else key
        if stated is None:
            values[key] = found
            r.take(r.deployment.path("model", key), shape.path, shape.spans.get(span_key))
        elif stated != found:
            r.conflict(
                Conflict(
                    what,
                    fmt(stated),
                    fmt(found),
                    r.deployment.path("model", key),
                    shape.path,
                    shape.spans.get(span_key),
                )
            )
    if shape.mla:
        values["kv_lora_rank"] = shape.kv_lora_rank
        values["rope_head_dim"] = shape.rope_head_dim
    return model._replace(**values)  # type: ignore[arg-type]


def _merge_tensor_parallel(r: _Resolver, engine: EngineConfig) -> None:
    """``hardware.tensor_parallel`` and the engine config's TP must agree (SG301)."""
    stated = r.deployment.hardware.tensor_parallel
    found = engine.tensor_parallel_size
    if stated is not None and found is not None and stated != found:
        r.conflict(
            Conflict(
                "tensor parallel size",
                fmt(stated),
                fmt(found),
                r.deployment.path("hardware", "tensor_parallel"),
                engine.path,
                engine.spans.get("tensor_parallel_size"),
            )
        )


def _head_split_issue(shape: ModelShape, engine: EngineConfig) -> EngineIssue | None:
    """Tensor parallelism must split the attention heads evenly: vLLM, SGLang and
    TensorRT-LLM refuse ``num_attention_heads`` not divisible by the TP size
    (e.g. vLLM's ``ModelConfig.verify_with_parallel_config``)."""
    tp = engine.tensor_parallel_size
    heads = shape.query_heads
    if tp is None or tp <= 1 or heads is None or engine.attention_data_parallel:
        return None
    if heads % tp == 0:
        return None
    from specgate.inputs.types import EngineIssue

    return EngineIssue(
        "SG307",
        f"{shape.path} has {heads} attention heads, not divisible by tensor_parallel_size "
        f"{tp}: the engine refuses to shard attention this way",
        "tensor_parallel_size",
    )


def _merge_acceptance(r: _Resolver, acceptance: Acceptance) -> None:
    dep = r.deployment
    evidence = dep.evidence
    al_path = dep.path("evidence", "accept_length")
    stated = evidence.accept_length
    if stated is not None:
        # Inline rates beside a stated AL are one source: a sum that misses the AL is
        # SG305's finding alone (one cause, one finding), not a second file to disagree.
        inline_profile = acceptance.path is None and bool(acceptance.marginal)
        if not inline_profile and abs(stated - acceptance.accept_length) > ACCEPT_LENGTH_TOLERANCE:
            r.conflict(
                Conflict(
                    "accept length AL",
                    fmt(stated),
                    fmt(acceptance.accept_length),
                    al_path,
                    acceptance.path or r.document.file,
                    acceptance.spans.get("accept_length"),
                    stated_at=r.document.locate(al_path),
                )
            )
        return
    if acceptance.path is not None:
        r.take(al_path, acceptance.path, acceptance.spans.get("accept_length"))
    r.overrides.setdefault(
        al_path, (r.document.file, r.document.locate(dep.path("evidence", "metrics")))
    )
    r.deployment = dep._replace(evidence=evidence._replace(accept_length=acceptance.accept_length))


#: Temperatures this close are one (evidence.provenance.temperature against
#: workload.temperature, as SG406 compares them).
_SAME_TEMPERATURE = 1e-9


def measured_as_served(deployment: Deployment, evidence_raw: dict[str, Any]) -> bool | None:
    """``True`` when the evidence's AL was measured as the deployment serves: an AL is
    given (``evidence.accept_length`` or ``evidence.metrics``), measured at the served
    temperature (``evidence.provenance.temperature`` within 1e-9 of
    ``workload.temperature``) on the served traffic (the provenance names no other
    dataset than ``workload.dataset``); ``None`` otherwise (not known to be).

    Such an AL already holds what the engine's own drafting does at that temperature
    (greedy drafts included), so a warning that a greedily measured AL overstates the
    served one does not apply to it.
    """
    evidence = deployment.evidence
    provenance = evidence.provenance
    served = deployment.workload.temperature
    if evidence.accept_length is None and "metrics" not in evidence_raw:
        return None
    if provenance is None or provenance.temperature is None or served is None:
        return None
    if abs(provenance.temperature - served) > _SAME_TEMPERATURE:
        return None
    measured, dataset = provenance.dataset, deployment.workload.dataset
    if (
        measured is not None
        and dataset is not None
        and measured.strip().casefold() != dataset.strip().casefold()
    ):
        return None
    return True


def resolve(
    deployment: Deployment, raw: dict[str, Any], document: Document, claims_path: Path
) -> tuple[Deployment, dict[NodePath, Location]]:
    """Fill ``deployment`` from its referenced files.

    Args:
        deployment: built from the claims file alone.
        raw: the deployment's mapping as parsed.
        document: the claims file; ``claims_path``: it on disk.

    Returns:
        the deployment with values and ``inputs`` filled in, and the locations of
        values taken from referenced files (node path → file, span).

    Raises:
        InputError: a reference that is absolute, leaves the repository, does not
            exist, or whose file cannot be read or holds no usable configuration.
    """
    if not references_files(raw):
        return deployment, {}
    spec_raw = _block(raw, "speculation")
    model_raw = _block(raw, "model")
    evidence_raw = _block(raw, "evidence")

    r = _Resolver(document, claims_path, deployment)
    engine = _engine(r, spec_raw, model_raw)
    shape = _bounded_shape(r, model_raw, "model", "hf_config")
    draft_shape = _bounded_shape(r, spec_raw, "speculation", "draft_hf_config")
    if engine is not None and (shape is not None or draft_shape is not None):
        from specgate.inputs.engines import with_models

        # what the engine makes of the models it loads: a method detected from the
        # draft's config, D from its n_predict, a vocabulary it refuses
        # (docs/engines.md#refusals-and-rewrites)
        engine = with_models(engine, shape, draft_shape)
    issues = list(engine.issues) if engine else []
    if engine is not None:
        from specgate.inputs.engines.settings import model_checks

        # the engine's checks on the model configs and the workload; a rewrite of D
        # is what every rule then sees (docs/engines.md#refusals-and-rewrites)
        workload = r.deployment.workload
        facts = {
            "temperature": workload.temperature,
            "concurrency": workload.concurrency,
            "measured_as_served": measured_as_served(r.deployment, evidence_raw),
        }
        engine, more = model_checks(engine, shape, draft_shape, facts)
        issues.extend(more)
        _disabled_but_speculating(r, spec_raw, engine)
        _merge_engine(r, engine)
        _merge_tensor_parallel(r, engine)
    effective = None
    if shape is not None:
        effective = _merge_model(r, shape, engine, "query_heads_per_kv" in model_raw)
        if engine is not None:
            from dataclasses import replace

            from specgate.inputs.engines import mtp_layer_issue

            resolved = replace(engine, draft_length=r.deployment.speculation.draft_length)
            extra = mtp_layer_issue(resolved, shape.mtp_layers)
            if extra is not None:
                issues.append(extra)
            split = _head_split_issue(shape, engine)
            if split is not None:
                issues.append(split)
    if engine is not None and engine.target_model is not None:
        from specgate.model import served_model

        # the model the engine runs against the one the claims file prices (SG301)
        for found in served_model.conflicts(
            r.deployment, engine, shape, document, r.deployment.path("model", "hf_config")
        ):
            r.conflict(found)
    from specgate.model.measured import measure

    measured = measure(
        r.deployment, evidence_raw, document, base_dir=r.base_dir, shown_base=r.shown_base,
        engine_unread=r.engine_unread,
    )
    acceptance = measured.acceptance
    if acceptance is not None:
        _merge_acceptance(r, acceptance)
    inputs = Inputs(
        engine=engine,
        model=shape,
        draft_model=draft_shape,
        acceptance=acceptance,
        effective_query_heads_per_kv=effective,
        conflicts=tuple(r.conflicts),
        engine_issues=tuple(issues),
        claims_file=document.file,
        engine_unread=r.engine_unread,
        model_unread=r.model_unread,
        acceptance_unread=measured.unread,
        metrics_unread=measured.unusable,
    )
    return r.deployment._replace(inputs=inputs), r.overrides
