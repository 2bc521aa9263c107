"""With D only a maximum (vLLM's n-gram proposer drafts up to num_speculative_tokens, fewer
when no n-gram matches) a fail holds at the cheapest reading of the draft cost: a step
drafts at least what it accepts and one pass finds out it drafts nothing, so the passes
per step lie in [max(1, AL − 1), D]; the D-priced value only warns
(docs/theory.md#d-is-a-maximum; new-user trial, "never cry wolf").

Every number is worked by hand, β = 1 (no model, hardware or workload inputs):

* D 8, AL 2.0, ρ 0.05 stated: every step drafting D gives 2.0 / (1 + 0.05·8) = 2 / 1.4 =
  1.4286x; the fewest passes max(1, 2.0 − 1) = 1 give 2.0 / 1.05 = 1.9048x. A claimed
  1.6x lies between them: no fail, a warning; a claimed 2.0x fails at both.
* D 8, AL 1.5, ρ 0.05: the default floor at D passes is (1 + 0.4)·1.1 = 1.54 > 1.5; at the
  fewest passes max(1, 0.5) = 1 it is 1.05·1.1 = 1.155 ≤ 1.5: a warning, not a fail.
* D 8, AL 1.3, ρ 0.1: at D passes S = 1.3 / 1.8 = 0.7222x < 1; at one pass S = 1.3 / 1.1 =
  1.1818x ≥ 1: SG106 warns. ρ 1.2: one pass gives 1.3 / 2.2 = 0.5909x < 1, a fail.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rules.test_rules import claims, dep

from specgate.analysis.derived import fewest_draft_passes
from specgate.check.report import FileReport

Check = Callable[..., FileReport]

NGRAM = (
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
    '\'{"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_max": 4}\'\n'
)
FIXED = (
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
    '\'{"method": "draft_model", "model": "meta-llama/Llama-3.2-1B-Instruct", '
    '"num_speculative_tokens": 8}\'\n'
)


def _check(
    check_text: Check, tmp_path: Path, serve: str, *, rho: float, al: float, claim: float | None
) -> FileReport:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serve.sh").write_text(serve, encoding="utf-8")
    return check_text(
        claims(
            dep(
                rho=rho,
                al=al,
                claim=claim,
                speculation={
                    "engine": "vllm",
                    "engine_config": "serve.sh",
                    "engine_version": "0.32.0",
                },
            )
        )
    )


def _found(report: FileReport, code: str) -> list[tuple[str, str, str]]:
    return [
        (f.severity, f.message, f.details) for f in report.all_findings() if f.code == code
    ]


def test_the_cheapest_reading_by_hand() -> None:
    # a step drafts at least what it accepts: AL 2.0 ⇒ at least one pass, AL 4.5 ⇒ 3.5
    assert fewest_draft_passes(8, 2.0, at_most=True, kind="per_token") == 1.0
    assert fewest_draft_passes(8, 4.5, at_most=True, kind="per_token") == 3.5
    assert fewest_draft_passes(8, 1.2, at_most=True, kind="per_token") == 1.0
    assert fewest_draft_passes(3, 9.0, at_most=True, kind="per_token") == 3.0  # never above D
    assert fewest_draft_passes(8, None, at_most=True, kind="per_token") == 1.0
    assert fewest_draft_passes(8, 2.0, at_most=False, kind="per_token") == 8.0  # D fixed
    assert fewest_draft_passes(1, 2.0, at_most=True, kind="single") == 1.0


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (1.6, ["warn"]),  # above 1.4286x (every step drafting 8), below 1.9048x (one pass)
        (1.42, []),  # below both
        (2.0, ["fail"]),  # above 1.9048x: impossible at the cheapest reading too
    ],
)
def test_sg104_with_d_a_maximum_fails_only_above_the_cheapest_bound(
    check_text: Check, tmp_path: Path, claim: float, expected: list[str]
) -> None:
    report = _check(check_text, tmp_path, NGRAM, rho=0.05, al=2.0, claim=claim)
    found = _found(report, "SG104")
    assert [severity for severity, _m, _d in found] == expected
    if expected == ["warn"]:
        (_s, text, details) = found[0]
        assert "1.4286x" in text and "D = 8" in text
        assert "max(1, AL − 1) = 1" in details and "docs/theory.md#d-is-a-maximum" in details
    if expected == ["fail"]:
        (_s, text, details) = found[0]
        assert "2 / (1 + 0.05·1) = 1.9048x" in text
        assert "passes 1 = max(1, AL − 1)" in details


def test_sg104_with_d_fixed_still_fails_at_d_passes(check_text: Check, tmp_path: Path) -> None:
    # a draft model drafts all 8 every step: 1.6 > 1.4286 fails as before
    report = _check(check_text, tmp_path, FIXED, rho=0.05, al=2.0, claim=1.6)
    (found,) = _found(report, "SG104")
    assert found[0] == "fail"
    assert "2 / (1 + 0.05·8) = 1.4286x" in found[1]


def test_sg102_default_floor_with_d_a_maximum_warns(check_text: Check, tmp_path: Path) -> None:
    report = _check(check_text, tmp_path, NGRAM, rho=0.05, al=1.5, claim=None)
    (found,) = _found(report, "SG102")
    severity, text, details = found
    assert severity == "warn"
    assert "below the floor 1.54" in text and "(β 1 + ρ 0.05·8)" in text
    assert "max(1, AL − 1) = 1" in details
    # a draft model at the same numbers fails, as before
    fixed = _check(check_text, tmp_path, FIXED, rho=0.05, al=1.5, claim=None)
    assert [s for s, _m, _d in _found(fixed, "SG102")] == ["fail"]


def test_sg102_fails_below_the_cheapest_floor(check_text: Check, tmp_path: Path) -> None:
    # ρ 0.2, AL 1.2: one pass gives break-even 1.2, floor 1.32 > 1.2, so it fails at the
    # cheapest reading (D passes: 2.6·1.1 = 2.86, capped at 1 + D = 9 — not reached)
    report = _check(check_text, tmp_path, NGRAM, rho=0.2, al=1.2, claim=None)
    (found,) = _found(report, "SG102")
    assert found[0] == "fail"
    assert "below the floor 1.32" in found[1] and "(β 1 + ρ 0.2·1)" in found[1]


@pytest.mark.parametrize(("rho", "expected"), [(0.1, "warn"), (1.2, "fail")])
def test_sg106_with_d_a_maximum(
    check_text: Check, tmp_path: Path, rho: float, expected: str
) -> None:
    report = _check(check_text, tmp_path, NGRAM, rho=rho, al=1.3, claim=None)
    (found,) = _found(report, "SG106")
    assert found[0] == expected
    if expected == "warn":
        assert "S = 0.7222x < 1" in found[1] and "0.1·8" in found[1]
    else:
        assert "S = 0.5909x < 1" in found[1] and "1.2·1" in found[1]


def test_an_estimated_al_is_judged_at_the_knee_too(check_text: Check, tmp_path: Path) -> None:
    # n-gram D 4 (num_speculative_tokens 4), ρ 2 stated, β 1, AL only an estimate (iid-rate):
    # S(AL) = AL / (1 + 2·max(1, AL − 1)) is 1/3 at AL 1, 2/3 = 0.6667 at AL 2 and
    # 5/9 = 0.5556 at AL 5. α 0.2 estimates AL = (1 − 0.2⁵) / 0.8 = 1.2496, S = 0.4165, so a
    # claimed 0.6x is above it, and above S at both ends but not at AL 2: SG104 warns (the
    # claim below 1 is SG106's fail either way).
    (tmp_path / ".git").mkdir(exist_ok=True)
    serve = NGRAM.replace('"num_speculative_tokens": 8', '"num_speculative_tokens": 4')
    (tmp_path / "serve.sh").write_text(serve, encoding="utf-8")
    report = check_text(
        claims(
            dep(
                rho=2.0,
                claim=0.6,
                speculation={
                    "engine": "vllm",
                    "engine_config": "serve.sh",
                    "engine_version": "0.32.0",
                },
                evidence={"metrics": {"format": "iid-rate", "alpha": 0.2}},
            )
        )
    )
    assert [s for s, _m, _d in _found(report, "SG104")] == ["warn"]
    assert [s for s, _m, _d in _found(report, "SG106")] == ["fail"]
