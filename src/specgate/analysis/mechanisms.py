"""Which draft mechanism class fits a deployment (DESIGN.md §3, "Mechanism
recommendation"). Reported for every deployment; never a finding by itself.

The ρ hints are typical draft depth ratios of each class, from published
figures collected in the project notes: n-gram/suffix lookup costs no model
step (ρ ≈ 0); heads attached to the target's hidden states cost a few percent
of a target step (EAGLE-3 on MiniCPM3 implies ρ ≈ 0.07, vLLM PR #24243); MTP
modules inside the target about 2 % (DeepSeek-V3 MTP, arXiv:2412.19437);
a separate small draft LM about its parameter ratio (≈ 0.15).
"""

import re
from typing import NamedTuple

from specgate.model.deployment import Deployment


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
    0.05,
    "A small head that reads the target's hidden states drafts cheaply and keeps "
    "latency low on a model too small to carry MTP modules of its own.",
    "Interactive chat on models up to about 10 B parameters (EAGLE-3, Medusa).",
)
TARGET_ATTACHED_MTP = MechanismClass(
    "target-attached-mtp",
    0.02,
    "Large and MoE models amortise multi-token-prediction modules trained with the "
    "target, which draft at a few percent of a target step.",
    "Models of 60 B parameters and more, and mixture-of-experts models.",
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

_REPETITIVE_NAME = re.compile(r"repeti|tool[-_ ]?loop|code[-_ ]?complet|suffix|n-?gram", re.I)
SMALL_MODEL_MAX_B = 10.0
LARGE_MODEL_MIN_B = 60.0


def size_class(deployment: Deployment) -> str:
    """``tiny``/``small``/``medium``/``large``; ``parameters_b`` wins over ``size``.

    ≤ 10 B parameters is small, ≥ 60 B large, between medium; unknown is medium.
    """
    billions = deployment.model.parameters_b
    if billions is not None:
        if billions <= SMALL_MODEL_MAX_B:
            return "small"
        if billions >= LARGE_MODEL_MIN_B:
            return "large"
        return "medium"
    return deployment.model.size or "medium"


def can_carry_mtp(deployment: Deployment) -> bool | None:
    """Whether the target has MTP modules: ``model.mtp_modules`` as written, else the
    model config's MTP layer count (``num_nextn_predict_layers``,
    ``mtp_num_hidden_layers``) when a config was read, else ``None`` (unknown)."""
    stated = deployment.model.mtp_modules
    if stated is not None:
        return stated
    shape = deployment.inputs.model if deployment.inputs else None
    if shape is None:
        return None
    return (shape.mtp_layers or 0) > 0


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
    """The first matching row of DESIGN.md §3's recommendation table.

    ``target-attached-mtp`` only for a model that can carry it (DESIGN.md §8.7): a
    large or MoE model known to have no MTP modules gets ``parallel-draft-head``.
    What a read model config says fills what the claims file leaves unstated: its
    routed experts make the model MoE, and with no size stated its MTP modules
    (``num_nextn_predict_layers`` > 0) make ``target-attached-mtp`` the fit. With
    nothing known the table's defaults hold (the same for ``doctor``).
    """
    workload = deployment.workload
    if workload.repetitive or (workload.name and _REPETITIVE_NAME.search(workload.name)):
        return SUFFIX_NGRAM
    size = size_class(deployment)
    if workload.latency_region == "low" and size in ("tiny", "small"):
        return PARALLEL_DRAFT_HEAD
    if size == "large" or is_moe(deployment):
        return PARALLEL_DRAFT_HEAD if can_carry_mtp(deployment) is False else TARGET_ATTACHED_MTP
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
    return EXTERNAL_SMALL_DRAFT


def declared(deployment: Deployment) -> MechanismClass | None:
    """The class of ``speculation.mechanism``, ``None`` when absent or ``other``."""
    mechanism = deployment.speculation.mechanism
    return DECLARED_CLASS.get(mechanism) if mechanism else None
