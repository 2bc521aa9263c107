"""``specgate measure`` applies check's own test of impossible metrics before it prints
or writes (newuser-r4 #4): what ``check`` would fail as SG305 (accepted drafts the
engine never emitted, a profile that rises) or SG103 (AL above 1 + D) is refused with
exit 2, and nothing is written; with vLLM's generated-tokens counter it reports the
share of tokens outside drafted steps and the all-steps AL bound.

Counter semantics: vLLM 0.32.0 ``vllm:generation_tokens`` counts every new token of
every request at every step (``vllm/v1/metrics/stats.py``
``IterationStats.update_from_output``); ``vllm:spec_decode_num_drafts`` counts the
request-steps that carried draft tokens (``vllm/v1/core/sched/scheduler.py``
``make_spec_decoding_stats``). So E ≥ A + N, and U = E − A − N tokens came from steps
that drafted nothing (or were a request's first token).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from specgate.cli.main import main

DATA = Path(__file__).parent.parent / "data" / "measure" / "newuser-r4"
LABELS = '{engine="0",model_name="m"}'


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


def scrape(
    drafts: int,
    tokens: int,
    accepted: int,
    generated: int | None = None,
    per_pos: tuple[int, ...] = (),
) -> str:
    lines = [
        f"vllm:spec_decode_num_drafts_total{LABELS} {drafts}",
        f"vllm:spec_decode_num_draft_tokens_total{LABELS} {tokens}",
        f"vllm:spec_decode_num_accepted_tokens_total{LABELS} {accepted}",
    ]
    if generated is not None:
        lines.append(f"vllm:generation_tokens_total{LABELS} {generated}")
    lines += [
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="m",'
        f'position="{i}"}} {count}'
        for i, count in enumerate(per_pos)
    ]
    return "\n".join(lines) + "\n"


def claims(depth: int = 3) -> str:
    return (
        "version: 1\n"
        "deployments:\n"
        "  - name: chat\n"
        "    speculation:\n"
        "      enabled: true\n"
        f"      draft_length: {depth}\n"
        "      draft_depth_ratio: 0.05\n"
        "    evidence:\n"
        "      accept_length: 1.5\n"
        "      cache_coherence_eval: true\n"
    )


def measure(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["measure", *args, "--today", "2026-12-01"])
    out, err = capsys.readouterr()
    return code, out, err


def check_codes(capsys: pytest.CaptureFixture[str], path: str) -> set[str]:
    main(["check", path, "--format", "json", "--today", "2026-12-01"])
    report = json.loads(capsys.readouterr().out)
    return {
        f["code"]
        for f in report["files"][0]["deployments"][0]["findings"]
        if f["severity"] == "fail"
    }


def test_accepted_past_emitted_is_refused_and_nothing_written(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 250 accepted over 100 drafted steps need 250 + 100 = 350 emitted tokens; 300 were:
    # accepted per step 2.5 > 300/100 − 1 = 2, at most 300/100 = 3 tokens per step.
    (repo / "before.prom").write_text(scrape(0, 0, 0, 0), encoding="utf-8")
    (repo / "after.prom").write_text(scrape(100, 400, 250, 300), encoding="utf-8")
    (repo / "c.specgate.yaml").write_text(claims(4), encoding="utf-8")
    before = (repo / "c.specgate.yaml").read_bytes()
    code, out, err = measure(
        capsys, "--before", "before.prom", "--after", "after.prom",
        "--write", "c.specgate.yaml", "--deployment", "chat",
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert err == (
        "specgate: impossible counters: the metrics count 250 accepted draft tokens over 100 "
        "steps but only 300 tokens were emitted (after.prom): accepted tokens per step 2.5 "
        "exceed the tokens emitted per step less the bonus token, 2; AL 1 + 250/100 = 3.5 "
        "counts drafts that were never emitted (accepted past an EOS or a max_tokens cut); "
        "the emitted tokens allow at most 3 tokens per step\n"
    )
    assert (repo / "c.specgate.yaml").read_bytes() == before


def test_the_reviewers_short_scrape_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # newuser-r4 #4: Δgenerated 63000 − 3000 = 60000 < 46000 accepted + 20000 drafts
    for name in ("ngram-before.prom", "ngram-after-short.prom"):
        shutil.copy(DATA / name, repo / name)
    code, out, err = measure(
        capsys, "--before", "ngram-before.prom", "--after", "ngram-after-short.prom"
    )
    assert (code, out) == (2, "")
    assert "46000 accepted draft tokens over 20000 steps but only 60000 tokens" in err
    assert err.count("\n") == 1


def test_a_rising_profile_is_refused_as_check_fails_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # per-position counts 40, 60, 50 over 100 drafts: m = 0.4, 0.6, 0.5 rises at
    # position 2, which no chain can produce (SG305); 1 + 1.5 = 2.5 = 1 + 150/100
    (repo / "p.prom").write_text(scrape(100, 300, 150, per_pos=(40, 60, 50)), encoding="utf-8")
    code, out, err = measure(capsys, "--from", "p.prom", "--metrics-format", "vllm-prometheus")
    assert (code, out) == (2, "")
    assert err == (
        "specgate: p.prom: acceptance profile [0.4, 0.6, 0.5]: marginal rate rises from 0.4 "
        "at position 1 to 0.6 at position 2\n"
    )


def test_al_above_one_plus_the_served_d_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # SGLang's server info states AL 4.5 and no D; the deployment serves D = 3, so
    # AL ≤ 1 + 3 = 4 (SG103 in check): nothing is written.
    (repo / "info.json").write_text('{"avg_spec_accept_length": 4.5}', encoding="utf-8")
    (repo / "c.specgate.yaml").write_text(claims(3), encoding="utf-8")
    code, out, err = measure(
        capsys, "--from", "info.json", "--metrics-format", "sglang-server-info",
        "--write", "c.specgate.yaml", "--deployment", "chat",
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert err == (
        "specgate: info.json: impossible counters: AL 4.5000 exceeds 1 + D = 4 "
        "(D = 3, the D chat serves)\n"
    )


CASES = {
    # (drafts, draft tokens, accepted, generated, per-position): consistent or not
    "consistent": (scrape(100, 300, 150, 400, (70, 50, 30)), True),
    "accepted-past-emitted": (scrape(100, 300, 150, 240, (70, 50, 30)), False),
    "rising-profile": (scrape(100, 300, 150, 400, (40, 60, 50)), False),
    "exactly-emitted": (scrape(100, 300, 150, 250, (70, 50, 30)), True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_measure_refuses_exactly_what_check_fails(
    repo: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    # One test, two callers: measure writes the evidence iff check then has no SG305 or
    # SG103 fail on it. A + N = 150 + 100 = 250 needs E ≥ 250 (240 fails, 250 passes).
    text, consistent = CASES[case]
    (repo / "before.prom").write_text(scrape(0, 0, 0, 0, (0, 0, 0)), encoding="utf-8")
    (repo / "after.prom").write_text(text, encoding="utf-8")
    (repo / "c.specgate.yaml").write_text(claims(3), encoding="utf-8")
    code, _, _ = measure(
        capsys, "--before", "before.prom", "--after", "after.prom",
        "--write", "c.specgate.yaml", "--deployment", "chat",
    )  # fmt: skip
    assert code == (0 if consistent else 2)
    if not consistent:  # point the claims file at the same scrapes by hand
        (repo / "c.specgate.yaml").write_text(
            claims(3).replace(
                "      accept_length: 1.5\n",
                "      accept_length: 2.5\n      metrics:\n        format: vllm-prometheus\n"
                "        path: after.prom\n        baseline_path: before.prom\n",
            ),
            encoding="utf-8",
        )
    fails = check_codes(capsys, "c.specgate.yaml")
    assert ("SG305" in fails) == (not consistent)
    assert "SG103" not in fails


def test_the_undrafted_share_and_the_all_steps_bound(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # E = 1000 generated, A = 300 accepted over N = 200 drafted steps: U = 1000 − 300 −
    # 200 = 500 tokens (50 %) outside drafted steps; AL 1 + 300/200 = 2.5 over drafted
    # steps, at least 1000 / (200 + 500) = 1.4286 over all steps.
    (repo / "before.prom").write_text(scrape(0, 0, 0, 0), encoding="utf-8")
    (repo / "after.prom").write_text(scrape(200, 1000, 300, 1000), encoding="utf-8")
    code, out, err = measure(capsys, "--before", "before.prom", "--after", "after.prom")
    assert code == 0
    assert yaml.safe_load(out)["evidence"]["accept_length"] == 2.5
    assert err == (
        "specgate: AL 1 + 300/200 = 2.5 is over the 200 steps that drafted; 500 of "
        "the 1000 generated tokens (50 %) came outside them (steps that drafted nothing, "
        "each request's first token), so AL over all steps is at least 1000/700 = 1.4286\n"
    )


def test_the_reviewers_ngram_run_reports_its_undrafted_share(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # newuser-r4 #4: Δgenerated 83000 − 3000 = 80000, Δaccepted 47000 − 1000 = 46000,
    # Δdrafts 20500 − 500 = 20000: U = 14000 (17.5 %), all-steps AL ≥ 80000/34000 = 2.3529
    for name in ("ngram-before.prom", "ngram-after.prom"):
        shutil.copy(DATA / name, repo / name)
    code, _, err = measure(capsys, "--before", "ngram-before.prom", "--after", "ngram-after.prom")
    assert code == 0
    assert "14000 of the 80000 generated tokens (17.5 %)" in err
    assert "at least 80000/34000 = 2.3529" in err


def test_no_generated_tokens_counter_no_share(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "before.prom").write_text(scrape(0, 0, 0), encoding="utf-8")
    (repo / "after.prom").write_text(scrape(200, 1000, 300), encoding="utf-8")
    code, _, err = measure(capsys, "--before", "before.prom", "--after", "after.prom")
    assert (code, err) == (0, "")
