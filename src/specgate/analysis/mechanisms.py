"""Which draft mechanism class fits a deployment (docs/theory.md#mechanism-recommendation,
"Mechanism recommendation"). Reported for every deployment; never a finding by itself.

The ρ hints are typical draft depth ratios of each class per draft pass. Heads
attached to the target's hidden states: 0.14, the ρ back-solved, (AL / S − β) /
passes, from the measured speedups of docs/validation.md (Spec-Bench
hemingkx/Spec-Bench@fd2c1cd, arXiv:2401.07851: EAGLE median 0.140 over 10 points,
EAGLE-3 0.142 over 4; SGLang PR #4716 Llama-3.3-70B TP8 and TensorRT-LLM PR #5146
Llama-3.1-70B about 0.14); the earlier 0.05 (EAGLE-3 on MiniCPM3 implies ρ ≈ 0.07,
vLLM PR #24243) was a third of what every engine measured. n-gram/suffix lookup
runs no model: 0 (the same data back-solve 0.006 for n-gram and 0.016 for suffix
drafts, fixed per-step costs within the spread). MTP modules inside the target
about 2 % (DeepSeek-V3 MTP, arXiv:2412.19437: AL / S = 1.03–1.06 at D = 1 bounds β + ρ;
no measured point in the validation data). A separate small draft LM about its
parameter ratio (≈ 0.15): the validation data's draft-model median (0.47) is
MagicDec's self-speculation, the target itself with a sparse KV cache, not a small
model, so it does not move this hint.
"""

import json
import re
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from specgate.core.data import read_data
from specgate.model.deployment import Deployment
from specgate.model.step_inputs import total_parameters


class MechanismClass(NamedTuple):
    """A class of draft mechanisms with its typical ρ and what it suits."""

    name: str
    draft_depth_ratio_hint: float
    reason: str
    best_for: str


SUFFIX_NGRAM = MechanismClass(
    "suffix-ngram",
    0.0,
    "The workload repeats its own text, so drafts can be looked up in the prompt and "
    "earlier output at almost no cost.",
    "Agent tool loops, code completion and edits, retrieval answers that quote their sources.",
)
PARALLEL_DRAFT_HEAD = MechanismClass(
    "parallel-draft-head",
    0.14,
    "A small head that reads the target's hidden states drafts cheaply and keeps "
    "latency low on a model too small to carry MTP modules of its own.",
    "Interactive chat on models up to about 10 B parameters (EAGLE-3, Medusa).",
)
#: The same class for a large or MoE model known to ship no MTP modules: the reason
#: says so rather than "too small".
PARALLEL_DRAFT_HEAD_NO_MTP = PARALLEL_DRAFT_HEAD._replace(
    reason="The model ships no multi-token-prediction modules of its own "
    "(Llama-3.3-70B and Llama 4 Maverick ship none), so a small head that reads the "
    "target's hidden states is the cheap drafter to train or download.",
    best_for="Large and mixture-of-experts models without MTP modules of their own "
    "(EAGLE-3 heads for Llama-3.3-70B, Llama 4 Maverick).",
)
TARGET_ATTACHED_MTP = MechanismClass(
    "target-attached-mtp",
    0.02,
    "Large and MoE models amortise multi-token-prediction modules trained with the "
    "target, which draft at a few percent of a target step.",
    "Models of 60 B parameters and more, and mixture-of-experts models.",
)
#: The same class for a large or MoE model of which it is not known whether it ships
#: MTP modules (the seed's inputs, a size and nothing more): the class holds only if it
#: does, and the reason says so and names the class to take if it does not.
TARGET_ATTACHED_MTP_IF_SHIPPED = TARGET_ATTACHED_MTP._replace(
    reason="Large and MoE models amortise multi-token-prediction modules trained with the "
    "target, if the model ships them (not known here: num_nextn_predict_layers or "
    "mtp_num_hidden_layers above 0 in its config.json); a model that ships none "
    "(Llama-3.3-70B, Llama 4 Maverick) takes parallel-draft-head instead.",
)
EXTERNAL_SMALL_DRAFT = MechanismClass(
    "external-small-draft",
    0.15,
    "A separate small model of the same family needs no training of new heads, at the "
    "price of a larger draft cost.",
    "Mid-size models served at throughput, or when no trained head exists.",
)

CLASSES = (SUFFIX_NGRAM, PARALLEL_DRAFT_HEAD, TARGET_ATTACHED_MTP, EXTERNAL_SMALL_DRAFT)

DECLARED_CLASS: dict[str, MechanismClass] = {
    "ngram": SUFFIX_NGRAM,
    "suffix": SUFFIX_NGRAM,
    "eagle": PARALLEL_DRAFT_HEAD,
    "eagle3": PARALLEL_DRAFT_HEAD,
    "medusa": PARALLEL_DRAFT_HEAD,
    "mlp_speculator": PARALLEL_DRAFT_HEAD,
    "mtp": TARGET_ATTACHED_MTP,
    "draft_model": EXTERNAL_SMALL_DRAFT,
    "dflash": PARALLEL_DRAFT_HEAD,
    "pard": EXTERNAL_SMALL_DRAFT,
}

#: A workload name that says it repeats its own text: the seed's words (``repetit``,
#: ``tool.?loop``, ``code.?complete``, ``suffix``, ``ngram``), with ``code completion``
#: and ``n-gram`` too (the seed's ``complete`` misses "completion").
#: Compiled on first use (``re``'s cache): not every workload has a name.
_REPETITIVE_NAME = r"repeti|tool.?loop|code.?complet|suffix|n.?gram"
SMALL_MODEL_MAX_B = 10.0
LARGE_MODEL_MIN_B = 60.0


def size_class(deployment: Deployment) -> str:
    """``tiny``/``small``/``medium``/``large``; the parameter count wins over ``size``:
    ``model.parameters_b``, else the count from ``model.hf_config``'s shapes (the JSON
    report's ``inputs.model.parameters``).

    ≤ 10 B parameters is small, ≥ 60 B large, between medium; unknown is medium.
    """
    counted, _ = total_parameters(deployment)
    billions = None if counted is None else counted / 1e9
    if billions is not None:
        if billions <= SMALL_MODEL_MAX_B:
            return "small"
        if billions >= LARGE_MODEL_MIN_B:
            return "large"
        return "medium"
    return deployment.model.size or "medium"


@cache
def _mtp_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(names known to ship MTP modules, names known to ship none): lower-case prefixes
    from ``specgate/data/models/mtp.json``."""
    data = json.loads(read_data("models/mtp.json"))
    return (
        tuple(n.lower() for n in data["names_with_mtp"]["entries"]),
        tuple(n.lower() for n in data["names_without_mtp"]["entries"]),
    )


def can_carry_mtp(deployment: Deployment) -> bool | None:
    """Whether the target ships MTP modules (docs/theory.md#mechanism-recommendation):
    ``model.mtp_modules`` as written; else the read model config's MTP layers (a stated count, 0
    included, or none for a model type and architectures known to ship none: ``mtp_known``); else
    the model's name among those known to ship them or not (data/models/mtp.json);
    else ``None`` (unknown)."""
    stated = deployment.model.mtp_modules
    if stated is not None:
        return stated
    shape = deployment.inputs.model if deployment.inputs else None
    if shape is not None and shape.mtp_known is not None:
        return shape.mtp_known > 0
    name = (deployment.model.name or "").lower()
    if name:
        with_mtp, without = _mtp_names()
        if name.startswith(with_mtp):
            return True
        if name.startswith(without):
            return False
    return None


def is_moe(deployment: Deployment) -> bool:
    """Mixture of experts: ``model.moe`` as written, else the read model config's
    routed experts (``n_routed_experts``, ``num_local_experts``, ``num_experts`` > 0),
    else ``False``."""
    stated = deployment.model.moe
    if stated is not None:
        return stated
    shape = deployment.inputs.model if deployment.inputs else None
    return shape is not None and (shape.routed_experts or 0) > 0


def recommend(deployment: Deployment) -> MechanismClass:
    """The first matching row of docs/theory.md#mechanism-recommendation's recommendation table.

    A large or MoE model gets ``target-attached-mtp`` when it ships MTP modules,
    ``parallel-draft-head`` when it is known to ship none (docs/theory.md#mechanism-recommendation:
    Llama-3.3-70B and Llama 4 Maverick ship none, so MTP cannot be switched on for them), and
    ``target-attached-mtp`` labelled "if the model ships them" when that is not known (the seed's
    class for a size alone, issue 26). What a read model config
    says fills what the claims file leaves unstated: its routed experts make the model
    MoE, and with no size stated its MTP modules (``num_nextn_predict_layers`` > 0)
    make ``target-attached-mtp`` the fit. With nothing known the table's defaults hold
    (the same for ``doctor``).
    """
    workload = deployment.workload
    if workload.repetitive or (workload.name and re.search(_REPETITIVE_NAME, workload.name, re.I)):
        return SUFFIX_NGRAM
    model = deployment.model
    shape = deployment.inputs.model if deployment.inputs else None
    if (
        model.parameters_b is None
        and model.size is None
        and model.moe is None
        and model.mtp_modules is None
        and shape is not None
        and (shape.mtp_layers or 0) > 0
    ):
        return TARGET_ATTACHED_MTP
    size = size_class(deployment)
    if workload.latency_region == "low" and size in ("tiny", "small"):
        return PARALLEL_DRAFT_HEAD
    if size == "large" or is_moe(deployment):
        ships = can_carry_mtp(deployment)
        if ships is None:
            return TARGET_ATTACHED_MTP_IF_SHIPPED
        return TARGET_ATTACHED_MTP if ships else PARALLEL_DRAFT_HEAD_NO_MTP
    return EXTERNAL_SMALL_DRAFT


def declared(deployment: Deployment) -> MechanismClass | None:
    """The class of ``speculation.mechanism``, ``None`` when absent or ``other``."""
    mechanism = deployment.speculation.mechanism
    return DECLARED_CLASS.get(mechanism) if mechanism else None


def _supported(deployment: Deployment, cls: MechanismClass) -> bool:
    """Whether the inputs support ``cls`` by the class's own words: a separate small
    draft model is for mid-size models (a size known to be 10–60 B, never the unknown
    size the table counts as medium, nor a small model at throughput, where a draft
    three times dearer than a head costs more), and never for a model that carries MTP
    modules of its own; the other rows rest on what they read."""
    if cls is not EXTERNAL_SMALL_DRAFT:
        return True
    counted, _ = total_parameters(deployment)
    known_size = counted is not None or deployment.model.size is not None
    return known_size and size_class(deployment) == "medium" and not can_carry_mtp(deployment)


def advice(
    deployment: Deployment,
    *,
    measured_speedup: float | None,
    min_gain: float,
    accept_length: float | None,
    floor: float | None,
    planning: bool = False,
) -> MechanismClass | None:
    """The class the report recommends, or ``None`` when it says nothing (newuser-r4
    #7, real-r4 #6): not for a deployment that does not speculate (unless
    ``planning``: ``specgate doctor`` asked which class to start with, as the seed's
    doctor answers without ``--speculative-decoding``; a deployment stated off,
    ``enabled: false``, still gets none); not a class the
    inputs do not support (:func:`_supported`: an unknown size is no mid-size model);
    and not another class than a declared mechanism that works, that is, one with no
    measurement against it (a measured speedup below 1 + min_gain, or an AL below its
    floor). A declared mechanism of the recommended class is confirmed."""
    enabled = deployment.speculation.enabled
    if enabled is False or (enabled is None and not planning):
        return None
    cls = recommend(deployment)
    if not _supported(deployment, cls):
        return None
    mine = declared(deployment)
    if mine is None or mine.name == cls.name:
        return cls
    failing = (measured_speedup is not None and measured_speedup < 1 + min_gain) or (
        accept_length is not None and floor is not None and accept_length < floor
    )
    return cls if failing else None


if TYPE_CHECKING:  # only mypy reads the protocols; a Protocol class costs every start-up
    from typing import Protocol

    class _Floor(Protocol):
        @property
        def value(self) -> float | None: ...

    class _Judged(Protocol):
        """What :func:`advice_for` reads of a deployment's metrics (``derived.Metrics``)."""

        @property
        def measured_speedup(self) -> float | None: ...
        @property
        def min_gain(self) -> float: ...
        @property
        def accept_length(self) -> float | None: ...
        @property
        def accept_length_floor(self) -> _Floor: ...


def advice_for(deployment: Deployment, metrics: "_Judged") -> MechanismClass | None:
    """:func:`advice` with the numbers read from ``metrics``."""
    return advice(
        deployment,
        measured_speedup=metrics.measured_speedup,
        min_gain=metrics.min_gain,
        accept_length=metrics.accept_length,
        floor=metrics.accept_length_floor.value,
    )
