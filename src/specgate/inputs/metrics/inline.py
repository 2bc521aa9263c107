"""Inline acceptance data written in the claims file, and the SG305 profile check.

Formulas (docs/engines.md docs/claims-file.md#format-rules and docs/reports.md; Leviathan et al.
2023, arXiv:2211.17192):

- per-position: AL = 1 + Σ m_i over marginal rates m_i = P(first i drafts all
  accepted); conditional rates c_i turn into marginals by m_i = Π_{j≤i} c_j.
- histogram h[j] = steps that accepted exactly j drafts: AL = 1 + Σ j·h[j] / Σ h[j].
- i.i.d. rate α at depth D: AL = (1 − α^(D+1)) / (1 − α) (D + 1 when α = 1).
- draft acceptance rate r = accepted / proposed draft tokens at D: AL = 1 + r·D
  (vLLM's "Draft acceptance rate", llama.cpp's acceptance; docs/theory.md#acceptance-rate-kinds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from specgate.inputs.metrics._common import (
    fmt,
    json_repr,
    largest_accepted,
    split_padding,
    survival,
)
from specgate.inputs.metrics.spec import MetricsSpec
from specgate.inputs.types import Acceptance

IID_PROFILE_MAX = 1024
"""``iid-rate`` lists its per-position model rates only up to this D (bounded work)."""

PROFILE_TOLERANCE = 0.02
"""|1 + Σ marginal − AL| allowed by SG305 (specdec_bench's own consistency check)."""


def read_per_position(spec: MetricsSpec) -> Acceptance:
    """AL = 1 + Σ marginal from inline ``marginal: [...]`` or ``conditional: [...]``.

    ``draft_length`` is the vector's length (positions 1 … D), save for zero padding
    past the deployment's D (:func:`per_position_acceptance`).

    Raises:
        InputError (at the claims file's line): neither or both keys, an empty
            list, or a value that is not a finite number.
    """
    has = [key for key in ("marginal", "conditional") if spec.values.get(key) is not None]
    if len(has) != 1:
        raise spec.fail("per-position needs exactly one of marginal: [...] or conditional: [...]")
    key = has[0]
    rates = _numbers(spec, key)
    if key == "marginal":
        return per_position_acceptance(rates, draft_length=spec.draft_length)
    marginal = tuple(math.prod(rates[: i + 1]) for i in range(len(rates)))
    return per_position_acceptance(
        marginal,
        note="marginal rates = cumulative products of the conditional rates",
        draft_length=spec.draft_length,
    )


def per_position_acceptance(
    marginal: tuple[float, ...], note: str | None = None, draft_length: int | None = None
) -> Acceptance:
    """The measurement a per-position profile states: AL = 1 + Σ m_i, at D = its length.

    ``marginal`` is m_1 … m_L, m_i = P(the first i drafts accepted); the values are
    taken as given (SG305 judges them). Shared by the claims file's inline
    ``per-position`` metrics and ``specgate doctor --per-position``.

    ``draft_length`` is the deployment's D, when known. A list longer than D whose
    positions past D are all 0 is a list zero-padded past D (vLLM's offline
    ``examples/offline_inference/spec_decode.py`` prints ``0.85, 0.85, 0.85, 0, 0, 0``
    at k = 3): it is read as measured at D, the padding dropped and named in ``note``
    (it adds nothing to AL). A zero-padded list with a non-zero rate past D was
    measured at some D at least as long as its non-zero part (``min_draft_length``;
    SG309 says so); any other list was measured at D = its length.
    """
    least = None
    dropped = 0
    if marginal and marginal[-1] == 0:
        marginal, dropped, least = split_padding(marginal, draft_length)
    if dropped:
        assert draft_length is not None
        padding = (
            f"positions {draft_length + 1}–{draft_length + dropped} are 0: read as padding "
            f"past D = {draft_length}"
            if dropped > 1
            else f"position {draft_length + 1} is 0: read as padding past D = {draft_length}"
        )
        note = padding if note is None else f"{note}; {padding}"
    return Acceptance(
        format="per-position",
        path=None,
        accept_length=1 + sum(marginal),
        formula=f"1 + ({' + '.join(fmt(m) for m in marginal)})",
        draft_length=len(marginal) if least is None else None,
        marginal=marginal,
        note=note,
        min_draft_length=least,
    )


def read_histogram(spec: MetricsSpec) -> Acceptance:
    """AL = 1 + Σ j·h[j] / Σ h[j] from inline ``histogram: {accepted_count: steps}``.

    A list is read as dense (index = accepted drafts).

    ``min_draft_length`` is the largest accepted count with steps: a step that
    accepted more drafts than the deployment's D means the data was measured at a
    larger D (rule SG309), not that the file is malformed.

    Raises:
        InputError: missing or malformed histogram, or zero steps.
    """
    raw = spec.values.get("histogram")
    histogram: dict[int, float] = {}
    if isinstance(raw, list):
        items: list[tuple[object, object]] = list(enumerate(raw))
    elif isinstance(raw, dict):
        items = list(raw.items())
    else:
        raise spec.fail("histogram needs histogram: {accepted_count: steps}", "histogram")
    for key, value in items:
        text = str(key).strip()
        where = ("histogram", key if isinstance(key, int) else str(key))
        if not text.isdigit():
            raise spec.fail(f"histogram key {key!r} is not an accepted-draft count", *where)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value < 0
            or value != int(value)
        ):
            raise spec.fail(f"histogram[{text}] must be a whole count ≥ 0, not {value!r}", *where)
        histogram[int(text)] = histogram.get(int(text), 0.0) + float(value)
    steps = sum(histogram.values())
    accepted = sum(j * h for j, h in histogram.items())
    if not (math.isfinite(steps) and math.isfinite(accepted)):
        raise spec.fail(
            "histogram counts add up past a float's range (beyond 1e308): not a finite number",
            "histogram",
        )
    if steps <= 0:
        raise spec.fail("histogram holds zero steps", "histogram")
    depth = len(raw) - 1 if isinstance(raw, list) else None
    return Acceptance(
        format="histogram",
        path=None,
        accept_length=1 + accepted / steps,
        formula=f"1 + {fmt(accepted)}/{fmt(steps)}",
        draft_length=depth,
        marginal=survival(histogram, depth),
        min_draft_length=largest_accepted(histogram),
        histogram=tuple(sorted((j, int(h)) for j, h in histogram.items() if h > 0)),
        steps=int(steps) if math.isfinite(steps) else None,
    )


def read_iid_rate(spec: MetricsSpec) -> Acceptance:
    """Expected AL under i.i.d. acceptance: (1 − α^(D+1)) / (1 − α).

    A model, not a measurement: ``estimate`` is set. D from the block's or the
    caller's ``draft_length``.

    Raises:
        InputError: α missing or outside [0, 1], or D unknown.
    """
    alpha = spec.values.get("alpha")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise spec.fail(f"iid-rate needs alpha in [0, 1], not {alpha!r}", "alpha")
    depth = spec.draft_length
    if depth is None:
        raise spec.fail("iid-rate needs draft_length (D), in the block or the deployment")
    a = float(alpha)
    if a == 1:
        value, formula = float(depth + 1), f"{depth} + 1"
    else:
        value = (1 - a ** (depth + 1)) / (1 - a)
        formula = f"(1 - {fmt(a)}^{depth + 1})/(1 - {fmt(a)})"
    return Acceptance(
        format="iid-rate",
        path=None,
        accept_length=value,
        formula=formula,
        estimate=True,
        draft_length=depth,
        # the model's profile α^i, only for a D of sane size: a D read from a file must not
        # size a list (hostile D = 3·10^8); theory never uses it as a measurement
        # (docs/theory.md#edge-cases)
        marginal=tuple(a**i for i in range(1, depth + 1)) if depth <= IID_PROFILE_MAX else (),
        note="expected AL under i.i.d. acceptance (Leviathan et al. 2023), not a measurement",
    )


def read_draft_acceptance_rate(spec: MetricsSpec) -> Acceptance:
    """AL = 1 + r·D from inline ``rate`` r (accepted / proposed draft tokens) and D;
    for a tree, AL = 1 + r·(N_verify − 1).

    This r is what vLLM logs as "Draft acceptance rate" and llama.cpp as its
    acceptance; it is not the i.i.d. α of ``iid-rate``: r = 0.607 at D = 4 gives
    AL 3.428, while α = 0.607 would give 2.335. It assumes every step drafts D
    tokens (with a D that is a maximum the AL is an estimate; the caller labels it).
    Over a tree the rate counts every node proposed (vLLM's draft-token counter adds
    ``len(scheduled_spec_token_ids)``, every node of the tree; docs/theory.md#proven-verify-cost),
    so the drafts proposed per step are N_verify − 1: depth 4, 10 nodes, r 0.1 → AL 2.0
    (not 1 + 0.1·4 = 1.4).

    Raises:
        InputError: r missing or outside [0, 1], or D unknown.
    """
    rate = spec.values.get("rate")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise spec.fail(f"draft-acceptance-rate needs rate in [0, 1], not {rate!r}", "rate")
    depth = spec.draft_length
    if depth is None:
        raise spec.fail(
            "draft-acceptance-rate needs draft_length (D), in the block or the deployment"
        )
    r = float(rate)
    verify = spec.verify_tokens
    if verify is not None and verify > depth + 1:
        nodes = verify - 1
        return Acceptance(
            format="draft-acceptance-rate",
            path=None,
            accept_length=1 + r * nodes,
            formula=f"1 + {fmt(r)}·({verify} − 1)",
            draft_length=depth,
            acceptance_rate=r,
            note="a tree: the rate counts every draft node, N_verify − 1 proposed per step",
        )
    return Acceptance(
        format="draft-acceptance-rate",
        path=None,
        accept_length=1 + r * depth,
        formula=f"1 + {fmt(r)}·{depth}",
        draft_length=depth,
        acceptance_rate=r,
        note="assumes every step drafts D tokens (accepted / proposed draft tokens)",
    )


def acceptance_profile_problems(marginal: Sequence[float], stated_al: float | None) -> list[str]:
    """What is wrong with a marginal acceptance profile (rule SG305); empty when fine.

    Args:
        marginal: m_1 … m_D, P(first i drafts all accepted); positions are named
            1-based in messages.
        stated_al: the AL the profile should reproduce as 1 + Σ m_i, or ``None``.

    Returns:
        one message per problem: a value outside [0, 1] (or not finite), a rate
        that rises with position (a survival function cannot: vLLM's synthetic
        sampler and specdec_bench reject it), |1 + Σ m − AL| > 0.02.
    """
    problems: list[str] = []
    for index, value in enumerate(marginal, 1):
        if not math.isfinite(value) or not 0 <= value <= 1:
            problems.append(f"marginal rate at position {index} is {fmt(value)}, outside [0, 1]")
    for index in range(1, len(marginal)):
        before, now = marginal[index - 1], marginal[index]
        if now > before + 1e-9:
            problems.append(
                f"marginal rate rises from {fmt(before)} at position {index} to "
                f"{fmt(now)} at position {index + 1}"
            )
    if stated_al is not None and all(math.isfinite(m) for m in marginal):
        implied = 1 + sum(marginal)
        gap = abs(implied - stated_al)
        if gap > PROFILE_TOLERANCE + 1e-9:
            problems.append(
                f"1 + Σ marginal = {implied:.4g} differs from the accept length "
                f"{fmt(stated_al)} by {gap:.3g} (more than {PROFILE_TOLERANCE})"
            )
    return problems


def first_profile_offence(marginal: Sequence[float]) -> int | None:
    """The 0-based position of the first marginal rate that is outside [0, 1] (or not
    finite) or rises above the rate before it; None when every rate is in order (a
    profile can then still fail SG305 by its sum, which no single rate causes)."""
    for index, value in enumerate(marginal):
        if not math.isfinite(value) or not 0 <= value <= 1:
            return index
        if index and value > marginal[index - 1] + 1e-9:
            return index
    return None


def _numbers(spec: MetricsSpec, key: str) -> tuple[float, ...]:
    raw = spec.values.get(key)
    if not isinstance(raw, list) or not raw:
        raise spec.fail(f"{key} must be a non-empty list of rates", key)
    out: list[float] = []
    for index, value in enumerate(raw):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise spec.fail(
                f"{key}[{index}] must be a finite number, not {json_repr(value)}", key, index
            )
        out.append(float(value))
    return tuple(out)
