"""Fails that rest on an uncertain input: an estimated AL, an assumed D
(docs/trust.md#what-a-fail-may-rest-on, docs/trust.md#names-say-how-a-number-is-known).

One test for both: a fail stays a fail when it holds at every value the uncertain
input can take, so at its most favourable one, because it then rests on what is
stated or known; it softens to a warning that names the uncertainty only when the
verdict would change somewhere in that range.

The ranges:

* an AL that is only an estimate (``inputs.acceptance.estimate``): [1, 1 + D], every
  AL a step can yield (Leviathan et al. 2023, arXiv:2211.17192: each step emits its
  accepted drafts plus one token). No reader gives a one-sided estimate today (the
  i.i.d. model, llama.cpp's timings and n_predict/n_accept, SGLang's rank mean, vLLM's
  printed means pooled are each off in either direction), so none narrows the range;
* a D that is an engine default at a version not pinned: the defaults the engine's
  data records over the versions the config may run (llama.cpp 5, 16, 3 …); unbounded
  when some of those versions have none recorded;
* a D that moves during the run (``speculation.draft_length_moves``: transformers'
  ``heuristic`` schedule starts at ``num_assistant_tokens`` and moves it by +2 / −1,
  docs/theory.md#d-is-a-maximum): unbounded above, so a fail that reads D stands only
  when it holds at the cheapest reading, D = max(1, ⌈AL − 1⌉) drafting at most that
  (SG309, which compares D values, always warns).

Example: SG104 at D 4, ρ 0.05, β 1 with AL estimated from ``iid-rate``: the most any
AL allows is 5 / (1 + 0.05·4) = 4.1667x, so a claimed 100x fails whatever the AL's
provenance, while a claimed 3.5x over the estimate's 2.9 / 1.2 = 2.4167x warns.

Under ``--baseline`` a head whose AL is an estimate while the base's was measured
does not soften SG401: the fail stays, and says that the measured AL was replaced by
an estimate (a pull request cannot weaken its own gate by bringing weaker evidence).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from specgate.analysis import derived
from specgate.core.concise import join_details
from specgate.model.deployment import Deployment
from specgate.rules.registry import REGISTRY, Hit, RuleContext

#: Fail rules whose verdict reads the AL's value.
_READS_AL = frozenset({"SG102", "SG103", "SG104", "SG106", "SG401"})
#: Fail rules whose verdict reads D (SG301 is softened where the conflict is built: a
#: stated D wins over an assumed default).
_READS_D = frozenset({"SG102", "SG103", "SG104", "SG106", "SG309"})

_DOWNGRADE = (
    "the base's measured AL was replaced by an estimate, which cannot soften the change gate"
)


def settle(
    ctx: RuleContext, hits: Sequence[tuple[str, Hit]], floor_override: float | None
) -> list[tuple[str, Hit]]:
    """``hits`` with each fail that rests on an uncertain input judged over that
    input's range: kept when it fails at every value, else a warning that names the
    uncertainty. ``floor_override`` is the run's ``--min-accept-length`` (the metrics
    of each value are computed as the check's are)."""
    dep = ctx.deployment
    estimate = dep.accept_length_estimate is not None
    assumed = dep.speculation.draft_length_assumed
    moves = dep.speculation.draft_length_moves
    if not estimate and assumed is None and moves is None:
        return list(hits)
    on_d = assumed is not None or moves is not None
    codes = (_READS_AL if estimate else frozenset()) | (_READS_D if on_d else frozenset())
    base = ctx.baseline
    downgrade = (
        estimate
        and base is not None
        and base.accept_length is not None
        and not base.accept_length_estimate
    )
    cases: list[Deployment] | None = None
    out: list[tuple[str, Hit]] = []
    for code, hit in hits:
        if code not in codes or (hit.severity or REGISTRY[code].severity) != "fail":
            out.append((code, hit))
            continue
        if code == "SG401" and downgrade:
            out.append((code, hit._replace(details=join_details(_DOWNGRADE, hit.details))))
            continue
        if moves is not None and code in _READS_D:
            # D moves during the run: the fail stands only at its cheapest reading
            case = _moving_case(dep) if code != "SG309" else None
            if case is not None and _fails(ctx, case, code, hit, floor_override):
                held = (
                    "this fails at the cheapest reading of a D that moves, D = max(1, ⌈AL − 1⌉) "
                    f"= {case.speculation.draft_length} drafting at most that "
                    "(docs/theory.md#d-is-a-maximum), so it does not rest on D"
                )
                out.append((code, hit._replace(details=join_details(held, hit.details))))
            else:
                out.append((code, _softened(dep, hit, True)))
            continue
        if cases is None:
            cases = _cases(dep)
        if cases and all(_fails(ctx, case, code, hit, floor_override) for case in cases):
            out.append((code, hit._replace(details=join_details(_held(dep, code), hit.details))))
            continue
        out.append((code, _softened(dep, hit, code in _READS_D and on_d)))
    return out


def _cases(dep: Deployment) -> list[Deployment]:
    """The deployment at each end of its uncertain inputs' ranges; ``[]`` when a range
    is unbounded (D assumed with versions of unknown default, or D unknown for an
    estimated AL)."""
    spec = dep.speculation
    if spec.draft_length_assumed is not None:
        if not spec.draft_length_range:
            return []
        lengths: Iterable[int | None] = spec.draft_length_range
    else:
        lengths = (spec.draft_length,)
    estimate = dep.accept_length_estimate is not None
    cases: list[Deployment] = []
    for d in lengths:
        fixed = dep._replace(
            speculation=spec._replace(
                draft_length=d, draft_length_assumed=None, draft_length_range=()
            )
        )
        if not estimate:
            cases.append(fixed)
            continue
        if d is None:
            return []
        # Any AL at D: the estimate says nothing about where in [1, 1 + D] it lies, and
        # it is an AL at the served D (no stale-evidence bound on top).
        inputs = fixed.inputs._replace(acceptance=None) if fixed.inputs is not None else None
        # With D only a maximum the passes a fail prices, max(1, AL − 1), grow with AL, so
        # S = AL / (β + ρ·passes) peaks at AL = 2 or 1 + D (docs/theory.md#d-is-a-maximum)
        knees = (2.0,) if derived.may_draft_fewer(spec) and d > 1 else ()
        for al in (1.0, *knees, float(1 + d)):
            cases.append(
                fixed._replace(evidence=fixed.evidence._replace(accept_length=al), inputs=inputs)
            )
    return cases


def _moving_case(dep: Deployment) -> Deployment | None:
    """The cheapest reading of a D that moves during the run: the fewest D a run can
    average while accepting AL − 1 drafts a step, max(1, ⌈AL − 1⌉), drafting at most
    that, a chain (docs/theory.md#d-is-a-maximum). Every bound a fail uses is at its
    loosest there: the passes max(1, AL − 1) do not grow with D, β and the default floor
    do not fall. ``None`` when the AL is not known or only an estimate (no D then
    settles the verdict)."""
    al = dep.evidence.accept_length
    if al is None or dep.accept_length_estimate is not None or not al >= 1:
        return None
    least = max(1, math.ceil(al - 1.0 - 1e-9))
    spec = dep.speculation._replace(
        draft_length=least, verify_tokens=None, draft_length_assumed=None, draft_length_range=()
    )
    inputs = dep.inputs._replace(acceptance=None) if dep.inputs is not None else None
    return dep._replace(speculation=spec, inputs=inputs)


def _fails(
    ctx: RuleContext, case: Deployment, code: str, hit: Hit, floor_override: float | None
) -> bool:
    """Whether rule ``code`` fails at ``hit``'s place for ``case``."""
    check = REGISTRY[code].check
    if check is None:
        return False
    metrics = derived.compute(case, floor_override)
    view = ctx._replace(deployment=case, metrics=metrics)
    default = REGISTRY[code].severity
    return any(
        again.path == hit.path and (again.severity or default) == "fail" for again in check(view)
    )


def _held(dep: Deployment, code: str) -> str:
    """Why a fail on an uncertain input stands: the range it was judged over."""
    spec = dep.speculation
    words = []
    if spec.draft_length_assumed is not None and code in _READS_D:
        shown = ", ".join(str(d) for d in spec.draft_length_range)
        words.append(f"at every default D may be ({shown})")
    if dep.accept_length_estimate is not None and code in _READS_AL:
        if spec.draft_length_assumed is not None:
            words.append("at every AL from 1 to 1 + D")
        else:
            words.append(f"at every AL from 1 to 1 + D = {(spec.draft_length or 0) + 1}")
    return f"this fails {' and '.join(words)}, so it does not rest on the " + (
        "estimate" if dep.accept_length_estimate is not None and code in _READS_AL else "default"
    )


def _softened(dep: Deployment, hit: Hit, on_d: bool) -> Hit:
    """``hit`` as a warning naming what settles it."""
    spec = dep.speculation
    assumed = spec.draft_length_moves or spec.draft_length_assumed
    if on_d and assumed is not None:
        return hit._replace(
            details=join_details(assumed, hit.details),
            action=f"Settle D first: {assumed}. Then: {hit.action}",
            severity="warn",
        )
    return hit._replace(severity="warn")
