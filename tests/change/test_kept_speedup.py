"""A change that moves AL and keeps the base's measured speedup (new-user defect 6), and
SG403 naming what changed in the config (new-user defect 7).

Defect 6: the head lowered AL 2.8 → 2.1 (−25 %) and kept ``measured_speedup: 1.95``.
ρ was re-fitted to the head's pair, (2.1 / 1.95 − 1) / 3 = 0.025641, so the theory
equalled the old measurement and the summary read "theoretical 1.95 → 1.95". The
speedup was measured with the base's AL, so ρ stays as fitted there:

    ρ_base = (AL / S − β) / passes = (2.8 / 1.95 − 1) / 3 = 0.435897 / 3 = 0.145299
    S_head = 2.1 / (1 + 3 · 0.145299) = 2.1 / 1.435897 = 1.4625

(with β and passes unchanged this is S_base · AL_head / AL_base = 1.95 · 0.75 = 1.4625).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.git_repo import Repo, Run

from specgate.cli.main import main


def claims(al: float, speedup: float, d: int = 3, rho: str = "") -> str:
    return (
        "version: 1\ndeployments:\n  - name: chat\n    speculation:\n      enabled: true\n"
        f"      mechanism: eagle3\n      draft_length: {d}\n{rho}"
        f"    evidence:\n      accept_length: {al}\n      cache_coherence_eval: true\n"
        f"      measured_speedup: {speedup}\n"
    )


def _deployment(report: dict) -> dict:  # type: ignore[type-arg]
    return report["files"][0]["deployments"][0]  # type: ignore[no-any-return]


def test_a_kept_speedup_keeps_the_base_rho_so_the_al_cut_shows(repo: Repo, run_json: Run) -> None:
    repo.write({"specgate.yaml": claims(2.8, 1.95)})
    repo.commit()
    repo.write({"specgate.yaml": claims(2.1, 1.95)})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    metrics = _deployment(report)["metrics"]
    assert metrics["draft_depth_ratio"] == pytest.approx(0.145299, abs=5e-5)  # JSON has 4 decimals
    assert metrics["theoretical_speedup"] == pytest.approx(1.4625, abs=5e-5)
    assert _deployment(report)["baseline"]["theoretical_speedup"] == pytest.approx(1.95)
    codes = {f["code"] for f in _deployment(report)["findings"]}
    assert "SG401" in codes and code == 1  # the AL drop itself still fails
    (note,) = [f for f in _deployment(report)["findings"] if f["code"] == "SG204"]
    assert "derived at HEAD" in note["message"]
    assert "unchanged since then while AL moved" in note["message"]


def test_the_summary_shows_the_cut(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write({"specgate.yaml": claims(2.8, 1.95)})
    repo.commit()
    repo.write({"specgate.yaml": claims(2.1, 1.95)})
    summary = repo.root.parent / "summary.md"
    main(["check", "--baseline", "HEAD", "--summary", str(summary)])
    capsys.readouterr()
    text = summary.read_text("utf-8")
    assert "| 2.8 → 2.1 | 1.95 → 1.4625 | 1.95 |" in text


def test_a_new_speedup_is_fitted_again(repo: Repo, run_json: Run) -> None:
    # AL 2.8 → 2.1 with a new measurement 1.5x: the head's own pair prices ρ,
    # (2.1 / 1.5 − 1) / 3 = 0.4 / 3 = 0.133333, and the theory is that measurement
    repo.write({"specgate.yaml": claims(2.8, 1.95)})
    repo.commit()
    repo.write({"specgate.yaml": claims(2.1, 1.5)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    metrics = _deployment(report)["metrics"]
    assert metrics["draft_depth_ratio"] == pytest.approx(0.133333, abs=5e-5)
    assert metrics["theoretical_speedup"] == pytest.approx(1.5)


def test_a_stated_rho_is_used_as_stated(repo: Repo, run_json: Run) -> None:
    # ρ 0.1 stated: 2.1 / (1 + 0.1 · 3) = 2.1 / 1.3 = 1.615385 (the "→ 1.6")
    stated = "      draft_depth_ratio: 0.1\n"
    repo.write({"specgate.yaml": claims(2.8, 1.95, rho=stated)})
    repo.commit()
    repo.write({"specgate.yaml": claims(2.1, 1.95, rho=stated)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert _deployment(report)["metrics"]["theoretical_speedup"] == pytest.approx(
        1.615385, abs=5e-5
    )


def test_without_baseline_rho_is_fitted_to_the_pair(tmp_path: Path, run_json: Run) -> None:
    # no base to know better from: (2.1 / 1.95 − 1) / 3 = 0.025641
    path = tmp_path / "c.specgate.yaml"
    path.write_text(claims(2.1, 1.95), encoding="utf-8")
    _, report, _ = run_json("check", str(path))
    assert _deployment(report)["metrics"]["draft_depth_ratio"] == pytest.approx(
        0.025641, abs=5e-5
    )


SGLANG_BASE = "services:\n  sglang:\n    image: lmsysorg/sglang:v0.5.6\n    command: >\n"


def _served(d: int) -> str:
    return (
        "version: 1\ndeployments:\n  - name: chat\n    speculation:\n      enabled: true\n"
        "      engine_config: serving/vllm.yaml\n      draft_depth_ratio: 0.05\n"
        "    evidence:\n      accept_length: 2.6\n      cache_coherence_eval: true\n"
    ), (
        "speculative_config:\n  method: eagle3\n  model: org/draft\n"
        f"  num_speculative_tokens: {d}\n"
    )


def test_sg403_names_the_changed_fields(repo: Repo, run_json: Run) -> None:
    # D 3 → 5 in the serving config, the same AL: the message says what changed (D and
    # N_verify = 1 + D), the digests go to the details; it names the served line
    claims_text, served = _served(3)
    repo.write({"specgate.yaml": claims_text, "serving/vllm.yaml": served})
    repo.commit()
    repo.write({"serving/vllm.yaml": _served(5)[1]})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    (sg403,) = [f for f in _deployment(report)["findings"] if f["code"] == "SG403"]
    assert sg403["message"] == (
        "the speculative config changed since HEAD: D 3 → 5, N_verify 4 → 6, but the "
        "evidence is identical: AL was measured for the old config"
    )
    assert "sha256:" not in sg403["message"]
    assert sg403["details"].startswith("config digest sha256:")
    # it sits at the served D's line (line 4 of the serving config above), in the
    # file the change touched (docs/change-gate.md#sg403-evidence-stale-after-config-change)
    assert (sg403["file"], sg403["line"]) == ("serving/vllm.yaml", 4)
    assert "related" not in sg403
