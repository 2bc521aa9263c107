"""``check --baseline``: symbolic links at the base revision are followed inside its tree,
with the head's confinement (review hostile-r4 defect 8). The base once read a link's
own text ("real.prom") as the scrape, so the comparison fell to SG410 for good with a
wrong reason ("speculative decoding was off").

A vLLM scrape with 100 drafts of 3 tokens and A accepted tokens has AL = 1 + A/100
(vLLM's mean acceptance length: 1 + accepted / drafts).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.change.test_baseline_hostile import PROM, _codes, claims
from tests.support.git_repo import Repo, Run, git

from specgate.change import git as sg_git


def _link(repo: Repo, name: str, target: str) -> None:
    path = repo.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    path.symlink_to(target)


@pytest.mark.parametrize("how", ["file-link", "folder-link", "chain", "absolute-inside"])
def test_a_link_at_ref_is_read_where_it_leads(repo: Repo, run_json: Run, how: str) -> None:
    # Base AL 1 + 300/100 = 4.0 behind a link; the head drops it to 1 + 120/100 = 2.2
    # (-45 %, past the 5 % default): SG401 against 4.0, not SG410.
    metrics = "bench/real.prom" if how == "folder-link" else "m.prom"
    repo.write({"c.specgate.yaml": claims(metrics=metrics), "data/real.prom": PROM.format(
        accepted=300)})  # fmt: skip
    if how == "file-link":
        _link(repo, "m.prom", "data/real.prom")
    elif how == "folder-link":
        _link(repo, "bench", "data")
    elif how == "chain":  # m.prom -> l1 -> l2 -> data/../data/real.prom
        _link(repo, "m.prom", "l1")
        _link(repo, "l1", "l2")
        _link(repo, "l2", "data/../data/real.prom")
    else:
        _link(repo, "m.prom", str(Path(os.path.realpath(repo.root)) / "data" / "real.prom"))
    repo.commit()
    repo.write({"data/real.prom": PROM.format(accepted=120)})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    block = report["files"][0]["deployments"][0]["baseline"]
    assert block["error"] is None and block["new"] is False
    assert block["accept_length"] == pytest.approx(4.0)
    assert code == 1 and "SG401" in _codes(report)


def test_a_link_at_ref_with_the_same_content_is_the_same_evidence(
    repo: Repo, run_json: Run
) -> None:
    # At REF m.prom links to real.prom; the head makes m.prom a regular file with the
    # same bytes and raises the claim 1.5 -> 1.9: no new evidence, SG402 (the link's
    # own blob once differed from the file's, so the claim passed as "new evidence").
    repo.write({"c.specgate.yaml": claims(), "real.prom": PROM.format(accepted=300)})
    _link(repo, "m.prom", "real.prom")
    repo.commit()
    (repo.root / "m.prom").unlink()
    repo.write({"m.prom": PROM.format(accepted=300), "c.specgate.yaml": claims(claim=1.9)})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert code == 1 and "SG402" in _codes(report)


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("../outside.prom", "leading out of the repository ('../outside.prom')"),
        ("/etc/hostname", "leading out of the repository ('/etc/hostname')"),
        ("nowhere.prom", "a symbolic link to a file that does not exist"),
        ("loop.prom", "loops or needs more than 40 links"),
    ],
    ids=["relative-out", "absolute-out", "dangling", "loop"],
)
def test_a_link_at_ref_that_the_head_would_refuse_says_so(
    repo: Repo, run_json: Run, target: str, said: str
) -> None:
    repo.write({"c.specgate.yaml": claims()})
    _link(repo, "m.prom", target)
    if target == "loop.prom":
        _link(repo, "loop.prom", "m.prom")
    repo.commit()
    (repo.root / "m.prom").unlink()
    repo.write({"m.prom": PROM.format(accepted=120)})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    block = report["files"][0]["deployments"][0]["baseline"]
    assert code == 0 and "SG410" in _codes(report)  # a warning, said, never a silent pass
    assert block["error"].startswith("at HEAD: m.prom is ") and said in block["error"]


def test_git_follows_at_most_40_links(repo: Repo) -> None:
    # git's tree-walk.c: GET_TREE_ENTRY_FOLLOW_SYMLINKS_MAX_LINKS = 40. c1 -> … -> c41 is
    # 40 links and is read; c0 -> … -> c41 is 41 and is a loop.
    repo.write({"c41": "end\n"})
    for i in range(41):
        _link(repo, f"c{i}", f"c{i + 1}")
    commit = repo.commit()
    refused: dict[str, str] = {}
    found = sg_git.read_blobs(repo.root, commit, ["c0", "c1"], refused=refused)
    assert found["c1"][1] == b"end\n" and "c0" not in found
    assert "loops or needs more than 40 links" in refused["c0"]


def test_a_claims_file_that_was_a_link_at_ref_is_read_where_it_led(
    repo: Repo, run_json: Run
) -> None:
    # At REF c.specgate.yaml linked to deploy/c.specgate.yaml (whose metrics path is
    # written from the link's folder); the head makes it a regular file.
    repo.write({"deploy/c.specgate.yaml": claims(), "m.prom": PROM.format(accepted=300)})
    _link(repo, "c.specgate.yaml", "deploy/c.specgate.yaml")
    repo.commit()
    (repo.root / "c.specgate.yaml").unlink()
    git(repo.root, "rm", "-q", "deploy/c.specgate.yaml")
    repo.write({"c.specgate.yaml": claims(), "m.prom": PROM.format(accepted=120)})
    code, report, _ = run_json("check", "--baseline", "HEAD", "c.specgate.yaml")
    assert code == 1 and "SG401" in _codes(report)
