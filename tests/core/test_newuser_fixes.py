"""Defects a new user found after theory v2 and hardening were merged (F-numbers of the
new-user findings). Expected values are worked out by hand in the comments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specgate.cli import main


def doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["doctor", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


def messages(report: dict[str, Any], code: str) -> list[str]:
    return [f["message"] for f in report["findings"] if f["code"] == code]


BASE = ["--speculative-decoding", "--cache-coherence-eval"]


def test_f3_sg102_capped_floor_shows_the_break_even_al(capsys: pytest.CaptureFixture[str]) -> None:
    # β 1 (no roofline), ρ 1, D 3 per-token passes: break-even 1 + 1·3 = 4;
    # × 1.1 = 4.4 > 1 + D = 4, so the floor is capped at 4 and AL 2.8 is below it.
    _, report, _ = doctor([*BASE, "--accept-length=2.8", "--draft-length=3",
                           "--draft-depth-ratio=1"], capsys)
    (text,) = messages(report, "SG102")
    assert "break-even AL 4 (β 1 + ρ 1·3) × (1 + 0.1) = 4.4, capped at 1 + D = 4" in text
    assert report["metrics"]["break_even_accept_length"] == 4


def test_f3_roofline_break_even_in_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    # the reported case: β 26.0142 (metrics) + 0.05·3 = 26.1642; × 1.1 = 28.7806; cap 4
    _, report, _ = doctor([*BASE, "--accept-length=2.8", "--draft-length=3",
                           "--draft-depth-ratio=0.05", "--concurrency=128", "--gpu=h100-sxm",
                           "--verify-tokens=60"], capsys)
    (text,) = messages(report, "SG102")
    assert "break-even AL 26.1642 (β 26.0142 + ρ 0.05·3)" in text
    assert "= 28.7806, capped at 1 + D = 4" in text


def test_f3_uncapped_floor_has_no_cap_clause(capsys: pytest.CaptureFixture[str]) -> None:
    # ρ 0.5, D 3: break-even 2.5, floor 2.75 < 4; AL 2.6 fails without a cap clause
    _, report, _ = doctor([*BASE, "--accept-length=2.6", "--draft-length=3",
                           "--draft-depth-ratio=0.5"], capsys)
    (text,) = messages(report, "SG102")
    assert "break-even AL 2.5 (β 1 + ρ 0.5·3) × (1 + 0.1))" in text
    assert "capped" not in text
