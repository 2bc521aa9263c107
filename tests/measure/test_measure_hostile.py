"""``specgate measure`` in a hostile repository (issue 18): every path it reads, writes or
saves into is confined to the repository holding it (one function,
``specgate.core.paths.confined``), concurrent ``--write`` runs never lose evidence, and
evidence shared through a YAML anchor is never written through."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from specgate.cli.main import main

PROM = """\
vllm:spec_decode_num_drafts_total{{model_name="m"}} {0}
vllm:spec_decode_num_draft_tokens_total{{model_name="m"}} {1}
vllm:spec_decode_num_accepted_tokens_total{{model_name="m"}} {2}
"""
SECRET = "root:SECRET-FIRST-LINE:0:0\n"
CLAIMS = """\
version: 1
deployments:
{}"""
DEPLOYMENT = """\
  - name: {name}
    speculation: {{enabled: true, mechanism: eagle3, draft_length: 3, draft_depth_ratio: 0.05}}
    evidence:
      accept_length: 2.0
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text(SECRET, "utf-8")
    (root / "b.prom").write_text(PROM.format(0, 0, 0), "utf-8")
    (root / "a.prom").write_text(PROM.format(100, 300, 150), "utf-8")
    monkeypatch.chdir(root)
    return root


def _measure(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["measure", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "args",
    [
        ["--before", "out.prom", "--after", "a.prom"],
        ["--before", "b.prom", "--after", "out.prom"],
        ["--from", "out.prom", "--metrics-format", "vllm-log"],
        ["--from", "out.prom", "--metrics-format", "sglang-log"],
    ],
)
def test_a_scrape_symlinked_out_is_neither_read_nor_quoted(
    repo: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    # The error quoted the outside file's first line ("not Prometheus text: root:…").
    (repo / "out.prom").symlink_to(repo.parent / "secret.txt")
    code, out, err = _measure(capsys, *args)
    assert code == 2 and out == ""
    assert "leads out of the repository" in err and "SECRET" not in err


def test_from_an_in_repository_symlink_is_read(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said "does not exist": the link's name was looked up in its target's folder.
    (repo / "logs").mkdir()
    (repo / "logs" / "run.log").write_text(
        "SpecDecoding metrics: Mean acceptance length: 2.50, Accepted: 150 tokens, "
        "Drafted: 300 tokens, Per-position acceptance rate: 0.700, 0.500, 0.300\n",
        "utf-8",
    )
    (repo / "latest.log").symlink_to("logs/run.log")
    code, out, err = _measure(capsys, "--from", "latest.log", "--metrics-format", "vllm-log")
    assert code == 0, err
    # Hand-worked: 1 + Accepted / (Drafted / k) = 1 + 150 / (300 / 3) = 2.5.
    assert yaml.safe_load(out)["evidence"]["accept_length"] == pytest.approx(2.5)


def test_write_through_a_claims_symlink_out_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = repo.parent / "victim.specgate.yaml"
    original = CLAIMS.format(DEPLOYMENT.format(name="d"))
    outside.write_text(original, "utf-8")
    (repo / "c.specgate.yaml").symlink_to(outside)
    code, _, err = _measure(
        capsys, "--before", "b.prom", "--after", "a.prom",
        "--write", "c.specgate.yaml", "--deployment", "d",
    )  # fmt: skip
    assert code == 2 and "leads out of the repository" in err
    assert outside.read_text("utf-8") == original


def test_save_dir_through_a_symlink_out_writes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It wrote both scrapes outside, then said "nothing written".
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    (repo / "scrapes").symlink_to(elsewhere, target_is_directory=True)
    (repo / "c.specgate.yaml").write_text(CLAIMS.format(DEPLOYMENT.format(name="d")), "utf-8")
    code, _, err = _measure(
        capsys, "--metrics-url", "http://127.0.0.1:9/metrics", "--save-dir", "scrapes/run",
        "--write", "c.specgate.yaml", "--deployment", "d", "--", sys.executable, "-c", "pass",
    )  # fmt: skip
    assert code == 2 and "--save-dir" in err and "leads out of the repository" in err
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    "claims",
    [
        # the written deployment defines the anchor another one aliases
        "  - name: d\n    speculation: {enabled: true, mechanism: eagle3, draft_length: 3}\n"
        "    evidence: &ev\n      accept_length: 2.0\n"
        "  - name: e\n    speculation: {enabled: true, mechanism: eagle3, draft_length: 3}\n"
        "    evidence: *ev\n",
        # the written deployment aliases another one's evidence
        "  - name: e\n    speculation: {enabled: true, mechanism: eagle3, draft_length: 3}\n"
        "    evidence: &ev\n      accept_length: 2.0\n"
        "  - name: d\n    speculation: {enabled: true, mechanism: eagle3, draft_length: 3}\n"
        "    evidence: *ev\n",
        # a merge key inside the evidence
        "  - name: e\n    speculation: {enabled: true, mechanism: eagle3, draft_length: 3}\n"
        "    evidence: &ev\n      accept_length: 2.0\n"
        "  - name: d\n    speculation: {enabled: true, mechanism: eagle3, draft_length: 3}\n"
        "    evidence:\n      <<: *ev\n      cache_coherence_eval: true\n",
        # the whole deployment is anchored and merged into another
        "  - &dep\n    name: d\n    speculation: {enabled: true, mechanism: eagle3, "
        "draft_length: 3}\n    evidence:\n      accept_length: 2.0\n"
        "  - <<: *dep\n    name: e\n",
    ],
    ids=["defines", "aliases", "merges", "deployment-anchor"],
)
def test_evidence_shared_through_an_anchor_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str], claims: str
) -> None:
    # --write into an anchored evidence block changed the deployment that aliased it.
    text = CLAIMS.format(claims)
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    code, _, err = _measure(
        capsys, "--before", "b.prom", "--after", "a.prom",
        "--write", "c.specgate.yaml", "--deployment", "d",
    )  # fmt: skip
    assert code == 2 and "shared through" in err and "nothing written" in err, err
    assert (repo / "c.specgate.yaml").read_text("utf-8") == text


def test_an_unused_anchor_does_not_block_the_write(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CLAIMS.format(DEPLOYMENT.format(name="d").replace("evidence:", "evidence: &mine"))
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    code, _, err = _measure(
        capsys, "--before", "b.prom", "--after", "a.prom",
        "--write", "c.specgate.yaml", "--deployment", "d",
    )  # fmt: skip
    assert code == 0, err
    # Hand-worked: AL = 1 + 150 / 100 = 2.5.
    written = yaml.safe_load((repo / "c.specgate.yaml").read_text("utf-8"))
    assert written["deployments"][0]["evidence"]["accept_length"] == pytest.approx(2.5)


def _write(repo: Path, name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "specgate", "measure", "--before", "b.prom", "--after",
         "a.prom", "--write", "c.specgate.yaml", "--deployment", name],
        cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def _wait_blocked_on_lock(child: subprocess.Popen[bytes], limit: float = 60.0) -> None:
    """Until ``child`` waits for a lock: Linux lists a blocked waiter in /proc/locks as
    ``-> FLOCK … <pid> …`` (proc(5)); elsewhere, a fixed pause. A fixed pause alone
    raced a slow start on a loaded machine (the child read the replaced file)."""
    locks = Path("/proc/locks")
    if not locks.exists():
        time.sleep(2.0)
        return
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and child.poll() is None:
        for line in locks.read_text("ascii", "replace").splitlines():
            fields = line.split()
            if "->" in fields and str(child.pid) in fields:
                return
        time.sleep(0.05)


def test_a_write_that_waited_for_the_lock_is_refused_when_the_file_changed(repo: Path) -> None:
    # Two concurrent --write runs both said "wrote" and one run's evidence was gone.
    claims = repo / "c.specgate.yaml"
    claims.write_text(CLAIMS.format(DEPLOYMENT.format(name="d") + DEPLOYMENT.format(name="e")))
    with open(claims, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another writer holds the file
        child = _write(repo, "d")
        _wait_blocked_on_lock(child)  # the child has measured and waits for the lock
        replacement = repo / "new.yaml"
        replacement.write_text(claims.read_text("utf-8").replace("2.0", "2.2", 1), "utf-8")
        os.replace(replacement, claims)  # ... and renames its own version into place
    out, err = child.communicate(timeout=60)
    assert child.returncode == 2, (out, err)
    assert b"another run replaced it" in err and b"nothing written" in err
    assert "accept_length: 2.2" in claims.read_text("utf-8")


def test_concurrent_writes_lose_no_evidence(repo: Path) -> None:
    names = [f"d{i}" for i in range(6)]
    claims = repo / "c.specgate.yaml"
    claims.write_text(CLAIMS.format("".join(DEPLOYMENT.format(name=n) for n in names)))
    children = {name: _write(repo, name) for name in names}
    wrote = set()
    for name, child in children.items():
        _out, err = child.communicate(timeout=120)
        assert child.returncode in (0, 2), err
        if child.returncode == 0:
            wrote.add(name)
        else:
            assert b"nothing written" in err
    assert wrote, "at least the first writer writes"
    final = yaml.safe_load(claims.read_text("utf-8"))["deployments"]
    for deployment in final:  # every run that said "wrote" is in the file: 1 + 150/100
        expected = 2.5 if deployment["name"] in wrote else 2.0
        assert deployment["evidence"]["accept_length"] == pytest.approx(expected)


@pytest.mark.parametrize(
    "second", ["d", "D", "d\u200b", " d "], ids=["same", "case", "zwsp", "padded"]
)
def test_two_deployments_of_one_name_are_refused(
    repo: Path, capsys: pytest.CaptureFixture[str], second: str
) -> None:
    # hostile-r4 defect 10: --write --deployment d rewrote the first of two 'd' silently;
    # which one is meant is not known (the name compared as --baseline compares it).
    text = CLAIMS.format(
        DEPLOYMENT.format(name="d") + DEPLOYMENT.format(name=f'"{second}"')
    )
    (repo / "c.specgate.yaml").write_text(text, "utf-8")
    code, _, err = _measure(
        capsys, "--before", "b.prom", "--after", "a.prom",
        "--write", "c.specgate.yaml", "--deployment", "d",
    )  # fmt: skip
    assert code == 2 and "2 deployments are named 'd'" in err and "nothing written" in err, err
    assert (repo / "c.specgate.yaml").read_text("utf-8") == text
