"""Under ``--baseline`` a head that replaces a measured AL with an estimate cannot
weaken the change gate (hostile review r4, defect 1, attacks/11): SG401 keeps its fail
and says the measured AL was replaced. When the base's AL was an estimate too, the
fail softens only as any estimated AL does (it holds over [1, 1 + D] or warns)."""

from __future__ import annotations

from typing import Any

from tests.support.git_repo import Repo, Run


def claims(evidence: str, claim: float = 1.5) -> str:
    return (
        "version: 1\n"
        "deployments:\n"
        "  - name: d1\n"
        "    speculation: {enabled: true, mechanism: eagle3, draft_length: 4, "
        "draft_depth_ratio: 0.05}\n"
        "    evidence:\n"
        "      cache_coherence_eval: true\n"
        f"      {evidence}\n"
        f"    claims: {{speedup: {claim}}}\n"
    )


def findings(report: Any, code: str) -> list[Any]:
    found = report["files"][0]["deployments"][0]["findings"]
    return [f for f in found if f["code"] == code]


def test_measured_al_replaced_by_an_estimate_keeps_the_fail(repo: Repo, run_json: Run) -> None:
    """Base AL 2.9 measured; head iid-rate α 0.5 at D 4: AL = (1 − 0.5⁵) / 0.5 = 1.9375,
    a drop of (2.9 − 1.9375) / 2.9 = 33.19 % > 5 %: SG401 fails (the reviewer's run
    warned and exited 0)."""
    repo.write({"specgate.yaml": claims("accept_length: 2.9")})
    repo.commit()
    repo.write({"specgate.yaml": claims("metrics: {format: iid-rate, alpha: 0.5}")})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    (sg401,) = findings(report, "SG401")
    assert sg401["severity"] == "fail"
    assert "-33.1897 %" in sg401["message"]
    # Contract change: why the fail stands is reasoning, now in details
    assert "measured AL was replaced by an estimate" in sg401["details"]
    assert code == 1


def test_estimate_against_an_estimate_softens(repo: Repo, run_json: Run) -> None:
    """Base iid-rate α 0.9 (AL (1 − 0.9⁵) / 0.1 = 4.0951), head α 0.5 (1.9375): a
    52.69 % drop, but both are estimates and an AL of 1 + D = 5 at head would not have
    dropped: a warning."""
    repo.write({"specgate.yaml": claims("metrics: {format: iid-rate, alpha: 0.9}")})
    repo.commit()
    repo.write({"specgate.yaml": claims("metrics: {format: iid-rate, alpha: 0.5}")})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    (sg401,) = findings(report, "SG401")
    assert sg401["severity"] == "warn"
    assert "replaced" not in sg401["message"]
