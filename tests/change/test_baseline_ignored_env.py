"""A file git ignores is no commit's: the change gate does not read it as the head's
(new-user trial 1, V5; docs/change-gate.md#baseline).

A Compose ``image: vllm/vllm-openai:${VLLM_TAG:-v0.10.2}`` with an ignored ``.env``
setting ``VLLM_TAG=v0.11.0`` runs v0.10.2 in every clone of the commit (Compose
interpolation, compose-spec 12-interpolation.md: ``:-`` gives the default when the
variable is unset), so nothing committed changed the engine version: no SG403.
"""

from __future__ import annotations

from typing import Any

from tests.change.test_baseline import claims, codes
from tests.support.git_repo import Repo, Run

COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG:-v0.10.2}
    command: >
      --model meta-llama/Llama-3.1-8B-Instruct
      --speculative-config '{"method":"eagle3","model":"d","num_speculative_tokens":3}'
"""


def _engine(report: Any) -> Any:
    return report["files"][0]["deployments"][0]["inputs"]["engine"]


def _base(repo: Repo) -> None:
    repo.write(
        {
            "deploy/specgate.yaml": claims(engine_config="compose.yaml", al=2.5, claim=1.5),
            "deploy/compose.yaml": COMPOSE,
        }
    )
    repo.commit("base")


def test_an_ignored_env_sets_no_head_value(repo: Repo, run_json: Run) -> None:
    _base(repo)
    repo.write({".gitignore": ".env\n"})
    repo.commit("ignore .env")
    repo.write({"deploy/.env": "VLLM_TAG=v0.11.0\n"})
    code, report, _ = run_json("check", "--baseline", "HEAD~1")
    assert code == 0 and "SG403" not in codes(report)
    engine = _engine(report)
    assert engine["version"] == "0.10.2"
    assert any("git ignores it" in note for note in engine["notes"])
    # outside the gate Compose here reads the .env: v0.11.0, saying where it came from
    _, report, _ = run_json("check")
    engine = _engine(report)
    assert engine["version"] == "0.11.0"
    assert "image tag through deploy/.env:1 (VLLM_TAG)" in engine["notes"]


def test_a_tracked_env_is_the_heads(repo: Repo, run_json: Run) -> None:
    # committed (or about to be): the gate compares it, and the version change is SG403's
    _base(repo)
    repo.write({"deploy/.env": "VLLM_TAG=v0.11.0\n"})
    repo.commit("pin 0.11.0")
    _, report, _ = run_json("check", "--baseline", "HEAD~1")
    assert "SG403" in codes(report)
    assert _engine(report)["version"] == "0.11.0"
