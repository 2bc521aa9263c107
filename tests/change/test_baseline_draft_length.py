"""An AL kept over a change of D is the base's: the fails use its bound at the new D
(newuser-r4 #2).

The base revision tells specgate the D the AL was measured at when the head keeps
the base's AL and evidence (SG403's reading). For chain drafting the fails then use
AL(D') ≤ AL + (D' − D)·(AL − 1)/D (``theory.formulas.accept_length_upper_bound``,
the bound SG309 uses), a shorter chain at most AL; never the old AL against the new
D. Worked by hand in each test. ``check --staged`` (the pre-commit hook) compares
with HEAD the same way.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.change.test_baseline import SERVE, claims, codes
from tests.support.git_repo import Repo, Run, git


def _deployment(report: Any) -> Any:
    return report["files"][0]["deployments"][0]


def _repo(repo: Repo, *, al: float, claim: float, d: int) -> None:
    repo.write(
        {
            "deploy/specgate.yaml": claims(engine_config="serve.yaml", al=al, claim=claim),
            "deploy/serve.yaml": SERVE.format(d=d),
        }
    )
    repo.commit()


def test_a_longer_chain_is_judged_at_the_bound_not_the_old_al(repo: Repo, run_json: Run) -> None:
    # AL 2.2 measured at D 2, served at D 5 (ρ 0.05, β 1 at concurrency 1):
    # AL(5) ≤ 2.2 + 3·1.2/2 = 4.0, S ≤ 4.0 / (1 + 0.05·5) = 3.2 ≥ 2.0. Paired with the
    # new D the old AL gave 2.2 / 1.25 = 1.76 < 2.0: SG104 "lower the claim".
    _repo(repo, al=2.2, claim=2.0, d=2)
    repo.write({"deploy/serve.yaml": SERVE.format(d=5)})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    found = codes(report)
    assert code == 1 and "SG403" in found and "SG104" not in found
    metrics = _deployment(report)["metrics"]
    assert metrics["accept_length_upper"] == pytest.approx(4.0)
    # without the base nothing says the AL is another D's: the old pairing stands
    code, report, _ = run_json("check")
    assert "SG104" in codes(report)


def test_a_claim_above_the_bound_still_fails_and_says_where_d_came_from(
    repo: Repo, run_json: Run
) -> None:
    # AL 2.2 at D 2 → D 3: AL(3) ≤ 2.2 + 1.2/2 = 2.8, S ≤ 2.8 / 1.15 = 2.4348 < 2.5
    _repo(repo, al=2.2, claim=2.5, d=2)
    repo.write({"deploy/serve.yaml": SERVE.format(d=3)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    (sg104,) = [f for f in _deployment(report)["findings"] if f["code"] == "SG104"]
    assert "2.8 / (1 + 0.05·3) = 2.4348x" in sg104["message"]
    assert "measured at D = 2, the D at HEAD (SG403)" in sg104["message"]


def test_a_shorter_chain_is_not_an_impossible_al(repo: Repo, run_json: Run) -> None:
    # AL 3.5 at D 4 → D 2: 3.5 > 1 + 2 would be SG103 for an AL measured at D 2; it was
    # measured at D 4 (SG403 says so), and AL(2) ≤ min(3.5, 3) = 3
    _repo(repo, al=3.5, claim=2.0, d=4)
    repo.write({"deploy/serve.yaml": SERVE.format(d=2)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    found = codes(report)
    assert "SG403" in found and "SG103" not in found
    assert _deployment(report)["metrics"]["accept_length_upper"] == pytest.approx(3.0)


def test_the_hook_compares_with_head(
    repo: Repo, run_json: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
        monkeypatch.delenv(name, raising=False)
    _repo(repo, al=2.2, claim=2.0, d=2)
    repo.write({"deploy/serve.yaml": SERVE.format(d=5)})
    git(repo.root, "add", "deploy/serve.yaml")
    code, report, _ = run_json("check", "--staged")
    found = codes(report)
    assert code == 1 and "SG403" in found and "SG104" not in found
