"""What a deployment's referenced files said, as rules see it
(docs/claims-file.md#referenced-files): :class:`Inputs`, the numbers they contradict
(:class:`Conflict`) and the serving or model config not read (:class:`EngineUnread`).

Apart from :mod:`specgate.model.deployment` because only a deployment that references a
file (or ``specgate doctor``'s flags) builds them: a check of a file without references
does not make these classes (each record class costs a ``namedtuple`` at import).
Records as in :mod:`specgate.model.deployment` (``typing.NamedTuple``, annotations as
objects).
"""

# No ``from __future__ import annotations`` here (see specgate.model.deployment).
from fractions import Fraction
from typing import TYPE_CHECKING, NamedTuple

from specgate.load.document import NodePath, Span

if TYPE_CHECKING:
    from specgate.inputs.types import Acceptance, EngineConfig, EngineIssue, ModelShape
else:  # stand-ins for the readers' records, which this module must not import: a quoted
    # field type costs a compile() when the class is made
    Acceptance = EngineConfig = EngineIssue = ModelShape = object


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
    #: a value not of its setting's type (SG307, docs/engines.md#refused-values);
    #: ``"metrics"``: a metrics file's value not usable as a measurement (SG316).
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
    #: force, else ``"warn"``; for ``metrics``: ``"fail"`` for a value the file's format
    #: forbids, ``"warn"`` for a form not read; ``""`` otherwise.
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
        metrics_unread: the metrics file's value that cannot be used as a measurement
            (origin ``"metrics"``; ``severity`` ``"fail"`` for a value its format forbids,
            ``"warn"`` for a form not read: SG316, docs/engines.md#metrics-not-read): no
            AL is taken from the file; else None.
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
    metrics_unread: EngineUnread | None = None
