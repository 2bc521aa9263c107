"""``check --baseline REF`` on real git histories (docs/change-gate.md#baseline).

Standard errors and z are worked by hand in ``test_worked_standard_errors``;
the other expectations follow from the rule definitions with numbers chosen so
the arithmetic is obvious (stated in each test)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from tests.support.git_repo import Repo, Run, git

from specgate.theory.stats import standard_error, z_score

HIST_BASE = "{0: 400, 1: 300, 2: 200, 3: 100}"
HIST_HEAD = "{0: 500, 1: 300, 2: 150, 3: 50}"


def claims(
    *,
    histogram: str | None = None,
    al: float | None = None,
    claim: float | None = None,
    policy: str = "",
    name: str = "chat-8b",
    engine_config: str | None = None,
    metrics_file: str | None = None,
    provenance: str = "",
) -> str:
    lines = [
        "version: 1",
        "deployments:",
        f"  - name: {name}",
        "    speculation:",
        "      enabled: true",
        "      draft_depth_ratio: 0.05",
    ]
    if engine_config is not None:
        lines += ["      engine: vllm", f"      engine_config: {engine_config}"]
    else:
        lines += ["      mechanism: eagle3", "      draft_length: 3"]
    lines += ["    evidence:", "      cache_coherence_eval: true"]
    if al is not None:
        lines.append(f"      accept_length: {al}")
    if histogram is not None:
        lines += ["      metrics:", "        format: histogram", f"        histogram: {histogram}"]
    if metrics_file is not None:
        lines += [
            "      metrics:",
            "        format: vllm-prometheus",
            f"        path: {metrics_file}",
        ]
    if provenance:
        lines += ["      provenance:", *(f"        {p}" for p in provenance.split(";"))]
    if claim is not None:
        lines += ["    claims:", f"      speedup: {claim}"]
    if policy:
        lines += ["    policy:", *(f"      {p}" for p in policy.split(";"))]
    return "\n".join(lines) + "\n"


def codes(report: Any) -> list[str]:
    return sorted(f["code"] for f in report["files"][0]["deployments"][0]["findings"])


def block(report: Any, index: int = 0) -> Any:
    return report["files"][0]["deployments"][index]["baseline"]


def test_worked_standard_errors() -> None:
    # docs/change-gate.md#standard-error, by hand. Base: mean accepted 1.0, Σh(j−1)² = 400 + 200 +
    # 400 = 1000, sd = √(1000/999) = 1.0005, SE = 1.0005/√1000 = 0.031639. Head: mean 0.75,
    # Σh(j−0.75)² = 281.25 + 18.75 + 234.375 + 253.125 = 787.5, sd = √(787.5/999) =
    # 0.88786, SE = 0.028077. z = −0.25/√(0.031639² + 0.028077²) = −5.91.
    base = standard_error([(0, 400), (1, 300), (2, 200), (3, 100)])
    head = standard_error([(0, 500), (1, 300), (2, 150), (3, 50)])
    assert base == pytest.approx(0.031639, abs=1e-6)
    assert head == pytest.approx(0.028077, abs=1e-6)
    assert base is not None and head is not None
    assert z_score(1.75, 2.0, head, base) == pytest.approx(-5.91, abs=0.005)
    assert z_score(1.9, 2.0, 0.0, 0.0) == -math.inf  # both SE 0 and AL lower: fires
    assert z_score(2.0, 2.0, 0.0, 0.0) is None


def test_regression_with_histograms_fires_with_z(repo: Repo, run_json: Run) -> None:
    repo.write({"specgate.yaml": claims(histogram=HIST_BASE)})
    base = repo.commit()
    repo.write({"specgate.yaml": claims(histogram=HIST_HEAD)})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    assert code == 1
    assert "SG401" in codes(report)
    got = block(report)
    assert got["ref"] == "HEAD" and got["commit"] == base and got["new"] is False
    assert got["accept_length"] == 2
    assert got["delta_accept_length"] == -0.25
    assert got["z"] == pytest.approx(-5.91, abs=0.005)
    finding = next(
        f for f in report["files"][0]["deployments"][0]["findings"] if f["code"] == "SG401"
    )
    assert "2 at HEAD to 1.75" in finding["message"]


def test_drop_that_is_noise_does_not_fire(repo: Repo, run_json: Run) -> None:
    # The base from 50 steps (AL 2.0, sd 1.0102, SE 0.1429), the head from 400 (AL 1.75,
    # sd 0.8885, SE 0.0444; 400 ≥ (0.8885 / 0.05)² = 315.8 steps, SG408's size):
    # z = −0.25 / √(0.1429² + 0.0444²) = −1.67 > −2, although the drop (12.5 %) exceeds 5 %.
    repo.write({"specgate.yaml": claims(histogram="{0: 20, 1: 15, 2: 10, 3: 5}")})
    repo.commit()
    repo.write({"specgate.yaml": claims(histogram="{0: 200, 1: 120, 2: 60, 3: 20}")})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG401" not in codes(report)
    assert block(report)["z"] == pytest.approx(-1.67, abs=0.01)


def test_a_head_sample_below_sg408_size_gets_no_z_test(repo: Repo, run_json: Run) -> None:
    # The same ALs from a tenth of the steps on both sides (z = −5.91/√10 = −1.87 > −2)
    # used to pass as noise; the head's 100 steps are below the (0.8919 / 0.05)² = 318.2
    # SG408 asks for, so the pull request cannot claim the noise: the 12.5 % drop fails
    # on the percentage (hostile review defect 5: the head chose its own sample size).
    repo.write({"specgate.yaml": claims(histogram="{0: 40, 1: 30, 2: 20, 3: 10}")})
    repo.commit()
    repo.write({"specgate.yaml": claims(histogram="{0: 50, 1: 30, 2: 15, 3: 5}")})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG401" in codes(report) and "SG408" in codes(report)
    assert block(report)["z"] == pytest.approx(-1.87, abs=0.01)  # reported, not used


def test_stated_al_drop_decides_alone(repo: Repo, run_json: Run) -> None:
    # 2.9 → 2.7 is a 6.9 % drop (> 5 %): fires without z. 2.9 → 2.8 is 3.4 %: passes.
    repo.write({"specgate.yaml": claims(al=2.9)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.7)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG401" in codes(report)
    assert block(report)["z"] is None
    repo.write({"specgate.yaml": claims(al=2.8)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG401" not in codes(report)


def test_policy_comes_from_the_base(repo: Repo, run_json: Run) -> None:
    # The pull request loosens the drop to 50 %: the base's default 5 % still applies.
    repo.write({"specgate.yaml": claims(al=2.9)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.6, policy="max_accept_length_drop: 0.5")})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG401" in codes(report)
    # A base that allowed 20 % lets 2.9 → 2.6 (10.3 %) pass.
    repo.write({"specgate.yaml": claims(al=2.9, policy="max_accept_length_drop: 0.2")})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.6, policy="max_accept_length_drop: 0.2")})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG401" not in codes(report)


def test_claim_raised_without_evidence(repo: Repo, run_json: Run) -> None:
    repo.write({"specgate.yaml": claims(al=2.6, claim=2.0)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.6, claim=2.2)})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    assert code == 1 and "SG402" in codes(report)
    # New evidence (a higher AL) backs the higher claim.
    repo.write({"specgate.yaml": claims(al=2.8, claim=2.2)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG402" not in codes(report)


def test_a_new_claim_has_not_gone_up(repo: Repo, run_json: Run) -> None:
    repo.write({"specgate.yaml": claims(al=2.6)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.6, claim=2.0)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG402" not in codes(report)


SERVE = (
    "model: meta-llama/Llama-3.1-8B-Instruct\nspeculative-config:\n  method: eagle3\n"
    "  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n  num_speculative_tokens: {d}\n"
)
PROM = """\
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{{engine="0",model_name="m"}} {drafts}
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="m"}} {accepted}
"""


def test_config_changed_with_identical_evidence(repo: Repo, run_json: Run) -> None:
    files = {
        "deploy/specgate.yaml": claims(engine_config="serve.yaml", metrics_file="bench/after.prom"),
        "deploy/serve.yaml": SERVE.format(d=4),
        "deploy/bench/after.prom": PROM.format(drafts=1000, accepted=1700),
    }
    repo.write(files)
    repo.commit()
    repo.write({"deploy/serve.yaml": SERVE.format(d=5)})
    code, report, _ = run_json("check", "--baseline", "HEAD")
    assert code == 1 and "SG403" in codes(report)
    assert (
        block(report)["config_digest"]
        != (report["files"][0]["deployments"][0]["inputs"]["config_digest"])
    )
    # The evidence file changed too: the measurement is new, no SG403.
    repo.write({"deploy/bench/after.prom": PROM.format(drafts=1000, accepted=1800)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG403" not in codes(report)


def test_sg403_is_not_repeated_when_sg407_says_so(repo: Repo, run_json: Run) -> None:
    stale = "config_digest: sha256:0000000000000000"
    repo.write({"specgate.yaml": claims(al=2.6, provenance=stale)})
    repo.commit()
    head = claims(al=2.6, provenance=stale).replace("draft_length: 3", "draft_length: 4")
    repo.write({"specgate.yaml": head})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG407" in codes(report)
    assert "SG403" not in codes(report)


def test_line_endings_do_not_make_equal_evidence_differ(repo: Repo, run_json: Run) -> None:
    prom = PROM.format(drafts=1000, accepted=1700)
    repo.write(
        {
            ".gitattributes": "*.prom text\n",
            "specgate.yaml": claims(engine_config="serve.yaml", metrics_file="after.prom"),
            "serve.yaml": SERVE.format(d=4),
            "after.prom": prom,
        }
    )
    repo.commit()
    repo.write({"after.prom": prom.replace("\n", "\r\n"), "serve.yaml": SERVE.format(d=5)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG403" in codes(report)  # CRLF in the work tree is the same blob


def test_new_deployment_and_new_file_are_new(repo: Repo, run_json: Run) -> None:
    repo.write({"a.specgate.yaml": claims(al=2.6)})
    repo.commit()
    two = claims(al=2.6) + claims(al=1.5, name="added").split("deployments:\n", 1)[1]
    # a new file's deployment of a name no claims file held at REF is new (one of a
    # name held elsewhere at REF is compared with it: issue 18, tested below)
    repo.write({"a.specgate.yaml": two, "b.specgate.yaml": claims(al=1.2, name="b-only")})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    first, second = report["files"]
    assert first["deployments"][0]["baseline"]["new"] is False
    added = first["deployments"][1]["baseline"]
    assert added["new"] is True and added["accept_length"] is None and added["z"] is None
    assert second["deployments"][0]["baseline"]["new"] is True
    assert all(
        f["code"] not in ("SG401", "SG402", "SG403")
        for file in report["files"]
        for d in file["deployments"]
        for f in d["findings"]
    )


def test_renamed_claims_file_is_compared_with_its_old_name(repo: Repo, run_json: Run) -> None:
    repo.write({"old.specgate.yaml": claims(al=2.9)})
    repo.commit()
    git(repo.root, "mv", "old.specgate.yaml", "new.specgate.yaml")
    repo.write({"new.specgate.yaml": claims(al=2.6)})
    git(repo.root, "add", "-A")
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert block(report)["new"] is False
    assert block(report)["accept_length"] == 2.9
    assert "SG401" in codes(report)


def test_evidence_unreadable_at_ref_makes_the_deployment_new(repo: Repo, run_json: Run) -> None:
    # At REF the claims file points at a metrics file that was never committed.
    repo.write({"specgate.yaml": claims(engine_config="serve.yaml", metrics_file="m.prom")})
    repo.write({"serve.yaml": SERVE.format(d=4)})
    repo.commit()
    repo.write({"m.prom": PROM.format(drafts=1000, accepted=1700)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    got = block(report)
    assert got["new"] is True
    assert "m.prom" in got["error"]


def test_baseline_absent_without_the_flag(repo: Repo, run_json: Run) -> None:
    repo.write({"specgate.yaml": claims(al=2.6)})
    repo.commit()
    _, report, _ = run_json("check")
    assert "baseline" not in report["files"][0]["deployments"][0]


@pytest.mark.parametrize("ref", ["no-such-ref", "HEAD~5", "--all"])
def test_bad_ref_is_a_usage_error(repo: Repo, run_json: Run, ref: str) -> None:
    repo.write({"specgate.yaml": claims(al=2.6)})
    repo.commit()
    code, report, err = run_json("check", f"--baseline={ref}")
    assert code == 2 and report is None
    assert "--baseline" in err and "not a commit" in err


def test_no_repository_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: Run
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "specgate.yaml").write_text(claims(al=2.6), encoding="utf-8")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    code, _, err = run_json("check", "--baseline", "HEAD")
    assert code == 2 and "--baseline" in err


def test_work_tree_is_untouched(repo: Repo, run_json: Run) -> None:
    repo.write({"specgate.yaml": claims(al=2.9)})
    repo.commit()
    repo.write({"specgate.yaml": claims(al=2.6)})
    before = git(repo.root, "status", "--porcelain")
    run_json("check", "--baseline", "HEAD")
    assert git(repo.root, "status", "--porcelain") == before
    assert (repo.root / "specgate.yaml").read_text(encoding="utf-8") == claims(al=2.6)


def test_summary_shows_before_and_after(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    from specgate.cli.main import main

    repo.write({"a.specgate.yaml": claims(al=2.9, claim=2.0), "b.specgate.yaml": claims(al=2)})
    repo.commit()
    repo.write({"a.specgate.yaml": claims(al=2.6, claim=2.0)})
    summary = repo.root.parent / "summary.md"
    main(["check", "--baseline", "HEAD", "--summary", str(summary)])
    capsys.readouterr()
    text = summary.read_text(encoding="utf-8")
    assert "### Changes since HEAD" in text
    # AL 2.9 → 2.6; theory AL/(1 + 0.05·3) = 2.5217 → 2.2609; no measured speedup on
    # either side (—, a column since SG404); claim and config unchanged.
    assert "| a.specgate.yaml | chat-8b | 2.9 → 2.6 | 2.5217 → 2.2609 | — | 2 | same |" in text
    assert "| b.specgate.yaml | chat-8b" not in text  # unchanged: no row


def test_a_base_naming_too_many_files_is_not_read(repo: Repo) -> None:
    from specgate.change.baseline import MAX_REFERENCED_FILES, open_baseline, read_base

    many = "version: 1\ndeployments:\n" + "".join(
        f"  - name: d{i}\n    model:\n      hf_config: models/m{i}.json\n"
        for i in range(MAX_REFERENCED_FILES + 1)
    )
    repo.write({"specgate.yaml": many})
    repo.commit()
    found = read_base(open_baseline("HEAD", repo.root), repo.root / "specgate.yaml")
    assert found is not None and found.deployments == {}
    assert found.error is not None and f"more than {MAX_REFERENCED_FILES}" in found.error


def test_read_blobs_in_two_calls(repo: Repo) -> None:
    from specgate.change import git as gitcalls

    repo.write({"a.txt": "alpha\n", "big.bin": "x" * 5000, "dir/b.txt": "beta\n"})
    commit = repo.commit()
    found = gitcalls.read_blobs(
        repo.root, commit, ["a.txt", "big.bin", "dir", "dir/b.txt", "nope", "new\nline"], limit=100
    )
    assert set(found) == {"a.txt", "big.bin", "dir/b.txt"}
    assert found["a.txt"][1] == b"alpha\n" and found["dir/b.txt"][1] == b"beta\n"
    assert found["big.bin"][1] is None  # over the limit: id only
    # the ids are git's own blob ids
    assert found["a.txt"][0] == git(repo.root, "rev-parse", f"{commit}:a.txt").strip()


LAUNCHER = "trtllm-serve Qwen/Qwen3-8B --extra_llm_api_options configs/mtp.yaml\n"
OPTIONS = "speculative_config:\n  decoding_type: MTP\n  max_draft_len: {d}\n"
VIA_LAUNCHER = """\
version: 1
deployments:
  - name: chat
    speculation:
      enabled: true
      engine: trtllm
      engine_config: serve.sh
      draft_depth_ratio: 0.02
    evidence:
      cache_coherence_eval: true
      metrics:
        format: vllm-prometheus
        path: after.prom
"""


def test_an_options_file_a_launcher_names_is_read_at_ref(repo: Repo, run_json: Run) -> None:
    # serve.sh names configs/mtp.yaml (trtllm-serve --extra_llm_api_options); D lives
    # there. At REF that file must be read too: D 3 → 4 with the same evidence is SG403,
    # and the deployment is compared (AL 1 + 1700/1000 = 2.7 on both sides), not new.
    repo.write(
        {
            "specgate.yaml": VIA_LAUNCHER,
            "serve.sh": LAUNCHER,
            "configs/mtp.yaml": OPTIONS.format(d=3),
            "after.prom": PROM.format(drafts=1000, accepted=1700),
        }
    )
    repo.commit()
    repo.write({"configs/mtp.yaml": OPTIONS.format(d=4)})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert block(report)["new"] is False
    assert block(report).get("error") is None
    assert block(report)["accept_length"] == 2.7
    assert "SG403" in codes(report)


RUN = (
    "docker run --gpus all vllm/vllm-openai:{tag} --model meta-llama/Llama-3.1-8B-Instruct "
    "--speculative-config '{{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
    "\"prompt_lookup_max\": 4}}'\n"
)
VIA_RUN = """\
version: 1
deployments:
  - name: chat
    speculation:
      enabled: true
      engine: vllm
      engine_config: serve.sh
      draft_depth_ratio: 0.01
    evidence:
      accept_length: 2.1
      cache_coherence_eval: true
"""


def test_an_engine_version_change_alone_is_sg403(repo: Repo, run_json: Run) -> None:
    # new-user trial 2026-12-02, defect 10: the image v0.26.0 → latest with the same AL
    # changes the engine the AL was measured on (pinned 0.26.0 → not pinned); the ten
    # stored digest fields are unchanged, so the digest is too, and SG403 names the version
    repo.write({"specgate.yaml": VIA_RUN, "serve.sh": RUN.format(tag="v0.26.0")})
    repo.commit()
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert "SG403" not in codes(report)
    digest = report["files"][0]["deployments"][0]["inputs"]["config_digest"]
    repo.write({"serve.sh": RUN.format(tag="latest")})
    _, report, _ = run_json("check", "--baseline", "HEAD")
    assert report["files"][0]["deployments"][0]["inputs"]["config_digest"] == digest
    (message,) = [
        f["message"] for f in report["files"][0]["deployments"][0]["findings"]
        if f["code"] == "SG403"
    ]
    assert message == (
        "the speculative config changed since HEAD: engine vLLM 0.26.0 → vLLM not pinned, "
        "but the evidence is identical: AL was measured for the old config"
    )
