"""The theory (docs/theory.md#vocabulary): each expected value is worked by hand in the comment
beside it, or taken from a published source; none was copied from the code's output."""

from __future__ import annotations

from fractions import Fraction

import pytest

from specgate.theory import formulas as theory
from specgate.theory.draft_choice import draft_increase


def test_theoretical_speedup_blog_form() -> None:
    # AL / (1 + ρ·D) = 6 / (1 + 0.1·9) = 6 / 1.9 = 3.15789… → 3.1579
    assert theory.theoretical_speedup(6, 9, 0.1) == pytest.approx(3.1579, abs=5e-5)


def test_theoretical_speedup_doctor_acceptance_example() -> None:
    # 1.4 / (1 + 0.05·7) = 1.4 / 1.35 = 1.03704 → 1.037
    assert theory.theoretical_speedup(1.4, 7, 0.05) == pytest.approx(1.0370, abs=5e-5)


def test_theoretical_speedup_without_draft_cost_is_al() -> None:
    # ρ = 0: AL / 1 = AL
    assert theory.theoretical_speedup(2.9, 4, 0.0) == 2.9


def test_draft_overhead() -> None:
    # ρ·D = 0.05·11 = 0.55
    assert theory.draft_overhead(0.05, 11) == pytest.approx(0.55)
    # ρ absent counts as 0: 0·11 = 0
    assert theory.draft_overhead(None, 11) == 0


@pytest.mark.parametrize(
    ("g", "expected"),
    [
        (Fraction(8), 15),  # floor(128/8) − 1 = 16 − 1
        (Fraction(32), 3),  # floor(128/32) − 1 = 4 − 1
        (Fraction(5), 24),  # floor(25.6) − 1 = 25 − 1 (Llama-4-Maverick, SOURCES.md)
        (Fraction(4), 31),  # floor(32) − 1 (Llama-3.1-8B, SOURCES.md)
        (Fraction(128), 0),  # floor(1) − 1 = 0
        (Fraction(200), 0),  # floor(0.64) − 1 = −1 → never below 0
        (Fraction(32, 5), 19),  # G = 6.4: floor(20) − 1 = 19
    ],
)
def test_attention_optimal_draft_length(g: Fraction, expected: int) -> None:
    assert theory.attention_optimal_draft_length(g) == expected


@pytest.mark.parametrize(
    ("g", "verify", "aligned"),
    [
        (Fraction(8), 16, True),  # 8·16 = 128
        (Fraction(8), 8, False),  # 8·8 = 64 (gpt-oss at D = 7, SOURCES.md)
        (Fraction(4), 32, True),  # 4·32 = 128
        (Fraction(8), 32, True),  # 8·32 = 256 = 2·128
        (Fraction(32, 5), 20, True),  # 32/5·20 = 128
        (Fraction(32, 5), 5, False),  # 32/5·5 = 32
        (Fraction(1, 3), 128, False),  # 128/3 is not whole
    ],
)
def test_is_tile_aligned(g: Fraction, verify: int, aligned: bool) -> None:
    assert theory.is_tile_aligned(g, verify) is aligned


@pytest.mark.parametrize(
    ("g", "tiles", "expected"),
    [
        # docs/theory.md#attention-tiles replaces v1's "next D′ with G·(1 + D′) a multiple of 128"
        # (which said 127 for G = 5) by the largest D with the same tile count: floor(tiles·128 / G)
        # − 1
        (Fraction(8), 1, 15),  # floor(128/8) − 1
        (Fraction(8), 2, 31),  # floor(256/8) − 1
        (Fraction(5), 1, 24),  # floor(25.6) − 1
        # floor(51.2) − 1 (docs/theory.md#attention-tiles: "suggests 24 or 50", not 127)
        (Fraction(5), 2, 50),
        (Fraction(32, 5), 1, 19),  # floor(20) − 1
        (Fraction(1, 3), 1, 383),  # floor(384) − 1: exact for fractional G
        (Fraction(200), 1, 0),  # floor(0.64) − 1 = −1 → never below 0
    ],
)
def test_tile_aligned_draft_length(g: Fraction, tiles: int, expected: int) -> None:
    assert theory.tile_aligned_draft_length(g, tiles, 128) == expected


def test_as_fraction_is_exact() -> None:
    # 6.4 = 32/5 exactly (not the binary float 6.4000000000000003552…)
    assert theory.as_fraction(6.4) == Fraction(32, 5)
    assert theory.as_fraction(8) == Fraction(8)
    with pytest.raises(ValueError, match="positive"):
        theory.as_fraction(0.0)
    with pytest.raises(ValueError, match="finite"):
        theory.as_fraction(float("inf"))


def test_draft_increase_that_loses_speedup() -> None:
    # AL 5 at D 7, ρ 0.1: 5 / 1.7 = 2.94118 → 2.9412
    # AL 5.2 at D 14:    5.2 / 2.4 = 2.16667 → 2.1667
    result = draft_increase(5 / 1.7, 5.2 / 2.4)
    assert result.current_speedup == pytest.approx(2.9412, abs=5e-5)
    assert result.next_speedup == pytest.approx(2.1667, abs=5e-5)
    assert result.increase is False
    # 2.16667 − 2.94118 = −0.77451
    assert result.delta_speedup == pytest.approx(-0.7745, abs=5e-5)


def test_draft_increase_that_pays() -> None:
    # 2.4 / (1 + 0.05·3) = 2.4 / 1.15 = 2.0870; 3.0 / (1 + 0.05·5) = 3 / 1.25 = 2.4
    result = draft_increase(2.4 / 1.15, 3.0 / 1.25)
    assert result.increase is True
    assert result.next_speedup == pytest.approx(2.4)


def test_draft_increase_equal_on_four_decimals_is_no_increase() -> None:
    # ρ = 0: current 2.00001, next 2.00004; both round to 2.0000 → no increase
    result = draft_increase(2.00001, 2.00004)
    assert result.increase is False
    assert result.delta_speedup > 0


def test_iid_accept_length() -> None:
    # (1 − 0.8^5) / (1 − 0.8) = (1 − 0.32768) / 0.2 = 3.3616
    assert theory.iid_accept_length(0.8, 4) == pytest.approx(3.3616, abs=1e-9)
    # α = 0: only the bonus token, AL = 1
    assert theory.iid_accept_length(0.0, 4) == 1.0
    # α = 1: every draft accepted, AL = 1 + D = 5
    assert theory.iid_accept_length(1.0, 4) == 5.0


@pytest.mark.parametrize(
    ("draft_length", "floor"),
    [
        (1, 1.5),  # min(2, 1 + 1/2) = 1.5
        (2, 2.0),  # min(2, 1 + 2/2) = 2
        (7, 2.0),  # min(2, 4.5) = 2
    ],
)
def test_guideline_accept_length(draft_length: int, floor: float) -> None:
    # docs/theory.md#al-floor-and-guideline: the seed's default floor is now SG110's guideline
    assert theory.guideline_accept_length(draft_length) == floor


def test_break_even_draft_depth_ratio() -> None:
    # speedup > 1 ⇔ ρ < (AL − 1)/D = (2.4 − 1)/4 = 0.35
    assert theory.break_even_draft_depth_ratio(2.4, 4) == pytest.approx(0.35)
    assert theory.break_even_draft_depth_ratio(2.4, 0) is None
