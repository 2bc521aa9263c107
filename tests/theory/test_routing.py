"""Routing locality (docs/theory.md#routing-locality): the published figures as printed
(Jiang et al. 2024, "Mixtral of Experts", arXiv:2401.04088, §5, Table 5) and the expected
expert reads of the Markov-chain model, every value worked by hand in the comment beside it.
"""

from __future__ import annotations

import pytest

from specgate.theory import routing
from specgate.theory import step_time as steps

MIXTRAL = steps.Shape(46.7e9, 12.9e9, experts=8, experts_per_token=2)


def test_chance_overlap_is_the_papers_46_percent() -> None:
    # Table 5's caption: 1 − (6/8)(5/7) ≈ 46 %; C(6,2)/C(8,2) = 15/28 → 13/28 = 0.464286
    assert routing.overlap_by_chance(8, 2) == pytest.approx(13 / 28)
    # k = 8 of E = 128: 1 − C(120, 8)/C(128, 8); two draws of more than half always share
    assert routing.overlap_by_chance(4, 3) == 1.0


def test_two_tokens_by_hand() -> None:
    # E 8, k 2, one sequence of N 2. q = 3/4.
    # r = 0 (uniform): an expert is missed with probability q·q = 9/16 → 8·7/16 = 3.5 read.
    assert routing.missed_share(8, 2, 1, 2, 0.0) == pytest.approx(9 / 16)
    # r = 1: the second token repeats the first's set: missed with q = 3/4 → 2 read.
    assert routing.missed_share(8, 2, 1, 2, 1.0) == pytest.approx(3 / 4)
    # r = 0.384: s = 0.384 + 0.616·0.75 = 0.846, missed 0.75·0.846 = 0.6345 → 2.924 read.
    assert routing.missed_share(8, 2, 1, 2, 0.384) == pytest.approx(0.6345)
    # one token reads k experts whatever r: missed 3/4
    assert routing.missed_share(8, 2, 1, 1, 0.384) == pytest.approx(0.75)


def test_sequences_route_independently_and_prefill_is_one_more_sequence() -> None:
    # B 2 sequences of N 2 at r = 0: (q·q)² = q⁴ = 81/256, uniform routing over 4 tokens
    assert routing.missed_share(8, 2, 2, 2, 0.0) == pytest.approx(81 / 256)
    # r = 1: (3/4)² = 9/16 (one set per sequence); C 3 prefill tokens add q·s² = 3/4 at r = 1
    assert routing.missed_share(8, 2, 2, 2, 1.0) == pytest.approx(9 / 16)
    assert routing.missed_share(8, 2, 2, 2, 1.0, prefill=3) == pytest.approx(27 / 64)


def test_published_figures_as_printed() -> None:
    figures = routing.published_figures()
    assert len(figures) == 24  # 8 domains × layers 0, 15, 31
    by = {(f.dataset, f.layer): f for f in figures}
    assert by["ArXiv", 0][4:6] == pytest.approx((0.140, 0.465))
    assert by["DM Mathematics", 15][4:6] == pytest.approx((0.284, 0.670))
    assert by["Wikipedia (en)", 31][4:6] == pytest.approx((0.253, 0.518))
    assert {f.citation for f in figures} == {
        'Jiang et al. 2024, "Mixtral of Experts", arXiv:2401.04088v1, §5 "Routing analysis", '
        'Table 5 "Percentage of expert assignment repetitions"'
    }


def test_repeat_rate_fits() -> None:
    # shared expert: (0.670 − 13/28)/(1 − 13/28) = (18.76 − 13)/15 = 0.384;
    # first choice: (0.284 − 1/8)/(7/8) = 0.159/0.875 = 0.181714; the larger is taken
    assert routing.repeat_rate(0.284, 0.670, 8, 2) == pytest.approx(0.384)
    assert routing.repeat_rate(0.284, 0.0, 8, 2) == pytest.approx(0.159 / 0.875)
    # at chance: 0 (never below)
    assert routing.repeat_rate(0.125, 13 / 28, 8, 2) == pytest.approx(0.0, abs=1e-12)
    assert routing.repeat_rate(0.10, 0.40, 8, 2) == 0.0


def test_highest_published_repeat_rate() -> None:
    top = routing.highest_repeat()
    assert (top.dataset, top.layer) == ("DM Mathematics", 15)
    assert top.repeat_rate == pytest.approx(0.384)


def test_mixtral_expert_reads_range() -> None:
    # P_e = 33.8/0.75 = 45.0667 B, P_s = 1.6333 B. One sequence of N 4:
    # uniform: 1.6333 + 45.0667·(1 − 0.75⁴) = 1.6333 + 45.0667·0.68359 = 32.4406 B;
    # locality: missed 0.75·0.846³ = 0.75·0.605496 = 0.454122,
    # 1.6333 + 45.0667·0.545878 = 26.2342 B. β (memory reads only) 26.2342/12.9 = 2.0337.
    assert steps.read_parameters(MIXTRAL, 4) == pytest.approx(32.4406e9, rel=1e-5)
    assert steps.local_read_parameters(MIXTRAL, 1, 4) == pytest.approx(26.2342e9, rel=1e-5)
    assert steps.read_parameters(MIXTRAL, 4, "local") == pytest.approx(26.2342e9, rel=1e-5)
    # a plain step reads k of E whatever the routing: 1.6333 + 45.0667/4 = 12.9 B
    assert steps.local_read_parameters(MIXTRAL, 1, 1) == pytest.approx(12.9e9, rel=1e-9)
    # dense: P
    dense = steps.Shape(8e9, 8e9)
    assert steps.local_read_parameters(dense, 4, 5) == 8e9


def test_qwen3_30b_a3b_at_61_tokens() -> None:
    # issue 26: E 128, k 8, 61 tokens. Uniform: 1 − (120/128)^61 = 1 − e^(61·ln 0.9375)
    # = 1 − e^(−3.93689) = 0.98049. Locality: s = 0.384 + 0.616·0.9375 = 0.9615,
    # 1 − 0.9375·0.9615^60 = 1 − 0.9375·e^(60·(−0.039260)) = 1 − 0.9375·0.094844 = 0.91108.
    assert 1 - routing.missed_share(128, 8, 1, 61, 0.0) == pytest.approx(0.98049, abs=5e-5)
    assert 1 - routing.missed_share(128, 8, 1, 61, 0.384) == pytest.approx(0.91108, abs=5e-5)
