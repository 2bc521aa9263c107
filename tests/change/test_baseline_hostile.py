"""``check --baseline`` against a hostile change (issue 18; hostile case v3-03): the base
is read with the head's limits and says why when it cannot be read (SG410, in every
format); a deployment moved to another file is found by name; touching an evidence file
does not dodge SG402/SG403; evidence is hashed only inside the repository.

Numbers are chosen so the arithmetic is plain: a vLLM scrape with 100 drafts of 3
tokens and A accepted tokens has AL = 1 + A/100.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.git_repo import Repo, Run, git

from specgate.cli.main import main

PROM = (
    "# TYPE vllm:spec_decode_num_drafts_total counter\n"
    'vllm:spec_decode_num_drafts_total{{engine="0"}} 100\n'
    "# TYPE vllm:spec_decode_num_draft_tokens_total counter\n"
    'vllm:spec_decode_num_draft_tokens_total{{engine="0"}} 300\n'
    "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
    'vllm:spec_decode_num_accepted_tokens_total{{engine="0"}} {accepted}\n'
)


def claims(*, name: str = "chat", metrics: str = "m.prom", claim: float = 1.5, d: int = 3) -> str:
    return (
        "version: 1\ndeployments:\n"
        f"  - name: {name}\n"
        "    speculation:\n      enabled: true\n      mechanism: eagle3\n"
        f"      draft_length: {d}\n      draft_depth_ratio: 0.05\n"
        "    evidence:\n      cache_coherence_eval: true\n"
        f"      metrics: {{format: vllm-prometheus, path: {metrics}}}\n"
        f"    claims: {{speedup: {claim}}}\n"
    )


def _codes(report: dict[str, object]) -> list[str]:
    return sorted(
        f["code"]
        for file in report["files"]  # type: ignore[attr-defined]
        for dep in file["deployments"]
        for f in dep["findings"]
    )


def test_a_base_metrics_file_over_one_mib_is_compared(repo: Repo, run_json: Run) -> None:
    # v3-03: the base scrape was 2 MiB, read with the 1 MiB claims-file blob limit, so it
    # "did not exist" and an AL drop from 4.0 to 2.2 (-45 %) passed with exit 0.
    padding = "".join(f"# pad {i} {'x' * 100}\n" for i in range(20_000))  # 2.1 MB
    repo.write({"c.specgate.yaml": claims(), "m.prom": padding + PROM.format(accepted=300)})
    repo.commit()
    repo.write({"m.prom": padding + PROM.format(accepted=120)})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert code == 1 and "SG401" in _codes(report)
    assert report["files"][0]["deployments"][0]["baseline"]["accept_length"] == pytest.approx(4.0)


@pytest.fixture
def unreadable_base(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Repo:
    # A base metrics file over the readers' limit (made small here: 64 KiB for the
    # 256 MiB of metrics files), read as the head would read it: refused, and said.
    from specgate.inputs.metrics import stream

    monkeypatch.setattr(stream, "METRICS_MAX_BYTES", 64 * 1024)
    repo.write(
        {"c.specgate.yaml": claims(), "m.prom": "# x\n" * 20_000 + PROM.format(accepted=300)}
    )
    repo.commit()
    repo.write({"m.prom": PROM.format(accepted=120)})
    return repo


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_a_base_that_cannot_be_read_is_said_in_every_format(
    unreadable_base: Repo, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    summary = unreadable_base.root / "summary.md"
    code = main(
        ["check", "--baseline", "HEAD", "--format", fmt, "--summary", str(summary),
         "c.specgate.yaml"]
    )  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0  # a warning: nothing known fails, and nothing passes silently
    assert "SG410" in out and "larger than" in out
    assert "SG410" in summary.read_text("utf-8")
    if fmt == "json":
        block = json.loads(out)["files"][0]["deployments"][0]["baseline"]
        assert block["new"] is True and "larger than" in block["error"]


@pytest.mark.parametrize("how", ["padded", "symlink", "another-file"])
def test_a_deployment_moved_to_another_file_is_found_by_name(
    repo: Repo, run_json: Run, how: str
) -> None:
    # Moving the claims file made the deployment "new": padded past git's rename
    # detection, or the old path turned into a symlink to the new file.
    repo.write({"old.specgate.yaml": claims(), "m.prom": PROM.format(accepted=300)})
    if how == "another-file":  # a second file at REF holds the name, at AL 2.0: the
        # higher AL (4.0) is the base compared with, the strictest
        repo.write(
            {"x.specgate.yaml": claims(metrics="x.prom"), "x.prom": PROM.format(accepted=100)}
        )
    repo.commit()
    git(repo.root, "rm", "-q", "old.specgate.yaml")
    moved = claims()
    if how == "padded":
        moved = "".join(f"# padding line {i} so git pairs nothing\n" for i in range(200)) + moved
    repo.write({"deploy/new.specgate.yaml": moved.replace("m.prom", "../m.prom")})
    repo.write({"m.prom": PROM.format(accepted=120)})
    if how == "symlink":
        (repo.root / "old.specgate.yaml").symlink_to("deploy/new.specgate.yaml")
    git(repo.root, "add", "-A")
    code, report, _ = run_json("check", "--baseline", "HEAD", "deploy/new.specgate.yaml")
    assert code == 1 and "SG401" in _codes(report)
    block = report["files"][0]["deployments"][0]["baseline"]
    assert block["new"] is False and block["accept_length"] == pytest.approx(4.0)


def test_touching_the_evidence_does_not_dodge_sg402(repo: Repo, run_json: Run) -> None:
    # The claim went up from 1.5 to 1.9 with the same measurement; a comment added to
    # the scrape changed its blob, and the gate took that for new evidence.
    repo.write({"c.specgate.yaml": claims(), "m.prom": PROM.format(accepted=300)})
    repo.commit()
    repo.write(
        {"c.specgate.yaml": claims(claim=1.9), "m.prom": "# re-run\n" + PROM.format(accepted=300)}
    )
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert code == 1 and "SG402" in _codes(report)


def test_touching_the_evidence_does_not_dodge_sg403(repo: Repo, run_json: Run) -> None:
    # D changed from 3 to 4 (a new config digest), the scrape only got a comment line.
    repo.write({"c.specgate.yaml": claims(), "m.prom": PROM.format(accepted=300)})
    repo.commit()
    repo.write({"c.specgate.yaml": claims(d=4), "m.prom": PROM.format(accepted=300) + "# x\n"})
    _, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert "SG403" in _codes(report) or "SG309" in _codes(report)


def test_a_new_measurement_is_new_evidence(repo: Repo, run_json: Run) -> None:
    # The claim went up with a different measurement (AL 4.0 -> 4.1): no SG402.
    repo.write({"c.specgate.yaml": claims(), "m.prom": PROM.format(accepted=300)})
    repo.commit()
    repo.write({"c.specgate.yaml": claims(claim=1.9), "m.prom": PROM.format(accepted=310)})
    _, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert "SG402" not in _codes(report)


def test_evidence_linked_out_of_the_repository_is_not_hashed(
    repo: Repo, tmp_path: Path
) -> None:
    from specgate.change.baseline import head_blobs, open_baseline

    outside = tmp_path / "outside.prom"
    outside.write_text(PROM.format(accepted=300), "utf-8")
    repo.write({"c.specgate.yaml": claims(), "m.prom": PROM.format(accepted=300)})
    repo.commit()
    (repo.root / "m.prom").unlink()
    (repo.root / "m.prom").symlink_to(outside)
    source = open_baseline("HEAD", repo.root)
    raw = {"evidence": {"metrics": {"path": "m.prom"}}}
    assert head_blobs(source, raw, repo.root / "c.specgate.yaml") == {"path": None}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("m.json", '{"num_attention_heads": ' + "1" + "0" * 400 + ', "num_key_value_heads": 8}'),
        ("m.json", '{"a": ' * 150 + "1" + "}" * 150),
        ("m.json", "[" * 5000 + "]" * 5000),
    ],
    ids=["huge-number", "deep", "deeper-than-json"],
)
def test_a_base_revision_past_the_limits_is_an_error_not_a_crash(
    repo: Repo, run_json: Run, name: str, text: str
) -> None:
    # Deep nesting or a huge number in the *base* revision was an internal error.
    base = claims().replace("    speculation:", "    model: {hf_config: m.json}\n    speculation:")
    repo.write({"c.specgate.yaml": base, "m.prom": PROM.format(accepted=300), name: text})
    repo.commit()
    repo.write({name: '{"num_attention_heads": 32, "num_key_value_heads": 8}'})
    code, report, err = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert code in (0, 1), err
    assert "SG410" in _codes(report)
