"""Expert reads under routing locality (docs/theory.md#routing-locality): how many distinct
experts a step reads when adjacent tokens of a sequence share experts, and the published
figures the locality is taken from (``data/routing_locality.json``).

The model (a Markov chain over the tokens of one sequence, per MoE layer): the first
token draws its k experts uniformly from E; each later token repeats the previous
token's expert set with probability r, else draws anew. A given expert is missed by
the first token with probability q = 1 − k/E, and by each later token, given the one
before missed it, with probability s = r + (1 − r)·q, so n tokens miss it with
probability q·s^(n − 1). Sequences route independently, so B sequences of n tokens
miss it with probability (q·s^(n − 1))^B. r = 0 is uniform independent routing,
q^(B·n); r = 1 reads one set per sequence.

No thresholds, no messages; no loop runs over a number read from a claims file (token
counts enter as exponents).
"""

import math
from functools import cache
from typing import NamedTuple


class RoutingFigure(NamedTuple):
    """One published repetition figure and the repeat rate r it implies.

    Attributes:
        source: the source's key in the data file; ``citation``: paper, section, table.
        dataset, layer: what the row and column measured.
        first_choice, first_or_second: the printed shares (0–1) of consecutive tokens
            whose first expert is the same, or that share an expert as first or second
            choice.
        experts, experts_per_token: E and k of the model measured.
        repeat_rate: r of the module docstring fitted to the figure (:func:`repeat_rate`).
    """

    source: str
    citation: str
    dataset: str
    layer: int
    first_choice: float
    first_or_second: float
    experts: int
    experts_per_token: int
    repeat_rate: float


def overlap_by_chance(experts: int, experts_per_token: int) -> float:
    """p₀: the probability that two independent, uniform draws of k experts of E share
    at least one, 1 − C(E − k, k) / C(E, k) (Mixtral, E 8, k 2: 1 − 15/28 = 13/28 ≈ 46 %,
    as Table 5 of arXiv:2401.04088 prints). 1 when 2k > E."""
    e, k = experts, experts_per_token
    if 2 * k > e:
        return 1.0
    return 1.0 - math.comb(e - k, k) / math.comb(e, k)


def repeat_rate(first_choice: float, first_or_second: float, experts: int, top_k: int) -> float:
    """r fitted to a published repetition figure, the larger of two fits (0–1):

    - shared experts: under the model consecutive tokens share an expert with
      probability r + (1 − r)·p₀, so r = (p − p₀) / (1 − p₀) (p = ``first_or_second``);
    - first choice: the first expert repeats with probability r + (1 − r)/E, so
      r = (p − 1/E) / (1 − 1/E).

    The larger fit reads the fewest experts (every shared expert taken as the whole set
    repeating). Mixtral, DM Mathematics, layer 15: (0.670 − 13/28) / (15/28) = 5.76/15
    = 0.384 and (0.284 − 0.125) / 0.875 = 0.1817, so 0.384.
    """
    chance = overlap_by_chance(experts, top_k)
    fits = [(first_choice - 1.0 / experts) / (1.0 - 1.0 / experts)]
    if chance < 1.0:
        fits.append((first_or_second - chance) / (1.0 - chance))
    return min(1.0, max(0.0, *fits))


@cache
def published_figures() -> tuple[RoutingFigure, ...]:
    """Every figure of ``data/routing_locality.json``, with its repeat rate."""
    import json

    from specgate.core.data import read_data

    rows: list[RoutingFigure] = []
    for source in json.loads(read_data("routing_locality.json"))["sources"]:
        citation = f"{source['paper']}, {source['where']}"
        e, k = int(source["experts"]), int(source["experts_per_token"])
        for figure in source["figures"]:
            first = float(figure["first_choice_pct"]) / 100.0
            shared = float(figure["first_or_second_choice_pct"]) / 100.0
            rows.append(RoutingFigure(
                source["key"], citation, str(figure["dataset"]), int(figure["layer"]),
                first, shared, e, k, repeat_rate(first, shared, e, k),
            ))
    return tuple(rows)


@cache
def highest_repeat() -> RoutingFigure:
    """The published figure with the highest repeat rate: the locality end of the
    expert-read range (Mixtral Table 5, DM Mathematics, layer 15: r = 0.384)."""
    return max(published_figures(), key=lambda figure: figure.repeat_rate)


def missed_share(
    experts: int,
    experts_per_token: int,
    sequences: float,
    tokens_per_sequence: float,
    repeat: float,
    *,
    prefill: float = 0.0,
) -> float:
    """The expected share of a layer's experts that no token of the step reads:
    (q·s^(n − 1))^B · (q·s^(C − 1) when C > 0), q = 1 − k/E, s = r + (1 − r)·q
    (module docstring; the C prefill tokens sharing the step taken as one sequence, the
    most sharing they can show). Token counts below 1 count as 1.

    Worked by hand, E 8, k 2, one sequence of N 2: r = 0 → (3/4)² = 9/16 (3.5 experts
    read); r = 1 → 3/4 (2 experts read).
    """
    q = 1.0 - experts_per_token / experts
    if q <= 0.0:
        return 0.0
    log_q = math.log(q)
    log_s = math.log(repeat + (1.0 - repeat) * q)  # s ≥ q > 0
    n = max(float(tokens_per_sequence), 1.0)
    exponent = max(float(sequences), 1.0) * (log_q + (n - 1.0) * log_s)
    if prefill > 0.0:
        exponent += log_q + (max(float(prefill), 1.0) - 1.0) * log_s
    return math.exp(exponent)
