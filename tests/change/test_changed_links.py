"""``--changed`` / ``--staged`` find the claims files that reach a changed file through
symbolic links, whatever name the links have (fix-change review: the name prefilter
skipped a claims file naming ``m.prom`` when ``data/real.prom`` changed, so the
pre-commit hook never checked it).

Every expectation below is worked out by hand from the tree :func:`linked` builds:

    data/real.prom          regular file
    data/other.prom         regular file
    data2/real.prom         regular file
    bench -> data           folder link
    m.prom -> bench/real.prom
    c1.prom -> c2.prom -> c3.prom -> data/real.prom   (a chain of 3 links)

    via-link.specgate.yaml    reads m.prom          (m.prom, bench, data/real.prom)
    via-folder.specgate.yaml  reads bench/real.prom (bench, data/real.prom)
    direct.specgate.yaml      reads data/real.prom
    chain.specgate.yaml       reads c1.prom         (c1, c2, c3, data/real.prom)
    other.specgate.yaml       reads data/other.prom
    self.specgate.yaml        reads nothing

None of the first four names ``real.prom`` except direct and via-folder, so the old
prefilter (base names only) skipped via-link and chain.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.support.git_repo import Repo, Run, git

from specgate.change import changed as changed_module
from specgate.change.changed import affected
from specgate.change.git import MAX_LINK_HOPS

from .test_changed import PROM, SELF_CONTAINED

CLAIMS = (
    "version: 1\ndeployments:\n  - name: {name}\n    speculation:\n      enabled: false\n"
    "    evidence:\n      metrics:\n        format: vllm-prometheus\n        path: {path}\n"
)
READS = {
    "via-link": "m.prom",
    "via-folder": "bench/real.prom",
    "direct": "data/real.prom",
    "chain": "c1.prom",
    "other": "data/other.prom",
}
ALL_FOUR = [
    "chain.specgate.yaml",
    "direct.specgate.yaml",
    "via-folder.specgate.yaml",
    "via-link.specgate.yaml",
]


def _link(repo: Repo, name: str, target: str) -> None:
    path = repo.root / name
    if path.is_symlink():
        path.unlink()
    path.symlink_to(target)


@pytest.fixture
def linked(repo: Repo) -> Repo:
    files = {f"{n}.specgate.yaml": CLAIMS.format(name=n, path=p) for n, p in READS.items()}
    files["self.specgate.yaml"] = SELF_CONTAINED
    for name in ("data/real.prom", "data/other.prom", "data2/real.prom"):
        files[name] = PROM.format(drafts=1000, accepted=1600)
    repo.write(files)
    _link(repo, "bench", "data")
    _link(repo, "m.prom", "bench/real.prom")
    _link(repo, "c3.prom", "data/real.prom")
    _link(repo, "c2.prom", "c3.prom")
    _link(repo, "c1.prom", "c2.prom")
    repo.commit()
    return repo


def _checked(changed: list[str]) -> tuple[list[str], list[str]]:
    found = affected([Path(c) for c in changed])
    return [shown for _, shown in found.claims], found.ignored


def test_an_edited_file_selects_every_claims_file_that_reaches_it(linked: Repo) -> None:
    # data/real.prom is reached by m.prom (through bench), bench/real.prom, itself and
    # the 3-link chain c1 → c2 → c3; data/other.prom and self read something else.
    assert _checked(["data/real.prom"]) == (ALL_FOUR, [])


def test_a_hand_given_path_through_a_folder_link_is_where_it_leads(linked: Repo) -> None:
    # bench/real.prom is data/real.prom (bench → data)
    assert _checked(["bench/real.prom"]) == (ALL_FOUR, [])


def test_a_retargeted_file_link_rechecks_the_claims_that_name_it(linked: Repo) -> None:
    # m.prom now leads to data/new.prom, a file no other claims file reads: only the
    # claims file naming m.prom is affected.
    linked.write({"data/new.prom": PROM.format(drafts=10, accepted=10)})
    _link(linked, "m.prom", "data/new.prom")
    assert _checked(["m.prom"]) == (["via-link.specgate.yaml"], [])


def test_a_changed_file_link_stands_for_its_target_too(linked: Repo) -> None:
    # A hand-given `--changed m.prom` may mean "I edited the file behind m.prom":
    # m.prom leads to data/real.prom, so the claims reading that are checked too.
    assert _checked(["m.prom"]) == (ALL_FOUR, [])


def test_a_link_in_the_middle_of_a_chain(linked: Repo) -> None:
    # c2.prom retargeted to data/other.prom: c1 → c2 is chain's path; c2 now stands
    # for data/other.prom too, which other.specgate.yaml reads.
    _link(linked, "c2.prom", "data/other.prom")
    assert _checked(["c2.prom"]) == (["chain.specgate.yaml", "other.specgate.yaml"], [])


def test_a_retargeted_folder_link(linked: Repo) -> None:
    # bench → data2: bench/real.prom and m.prom (→ bench/real.prom) pass through the
    # changed link; the chain and direct reach data/real.prom without it. A folder
    # link does not stand for its folder's files (data2/* is not "changed").
    _link(linked, "bench", "data2")
    assert _checked(["bench"]) == (["via-folder.specgate.yaml", "via-link.specgate.yaml"], [])


def test_a_deleted_file_behind_links(linked: Repo) -> None:
    (linked.root / "data/real.prom").unlink()
    assert _checked(["data/real.prom"]) == (ALL_FOUR, [])


def test_an_unrelated_file_is_still_ignored(linked: Repo) -> None:
    linked.write({"data/unread.prom": "x\n"})
    assert _checked(["data/unread.prom"]) == ([], ["data/unread.prom"])


def test_a_loop_made_by_the_change_is_checked(linked: Repo) -> None:
    # c3 → c1 closes a loop: chain's reference now never resolves; the claims file
    # naming c1 must be checked (check reports the loop at its line).
    _link(linked, "c3.prom", "c1.prom")
    assert _checked(["c3.prom"]) == (["chain.specgate.yaml"], [])


def test_a_link_in_a_skipped_folder_is_found_through_the_index(linked: Repo) -> None:
    # node_modules is never walked, but the pull request's link there is tracked.
    (linked.root / "node_modules").mkdir()
    _link(linked, "node_modules/n.prom", "../data/real.prom")
    linked.write({"n.specgate.yaml": CLAIMS.format(name="n", path="node_modules/n.prom")})
    git(linked.root, "add", "-f", "node_modules/n.prom", "n.specgate.yaml")
    assert _checked(["data/real.prom"])[0] == sorted([*ALL_FOUR, "n.specgate.yaml"])


def test_a_chain_longer_than_the_bound_is_checked(linked: Repo) -> None:
    # A chain of MAX_LINK_HOPS + 1 = 41 links to data/real.prom is not followed to its
    # end (git's bound, tree-walk.c), so the lookup cannot tell where it leads: the
    # claims file naming it is checked rather than passed over.
    for i in range(MAX_LINK_HOPS + 1):
        _link(linked, f"l{i}.prom", f"l{i + 1}.prom" if i < MAX_LINK_HOPS else "data/real.prom")
    linked.write({"long.specgate.yaml": CLAIMS.format(name="long", path="l0.prom")})
    checked, ignored = _checked(["data/other.prom"])
    assert checked == ["long.specgate.yaml", "other.specgate.yaml"] and ignored == []


def test_a_link_out_of_the_repository_decides_nothing(linked: Repo, tmp_path: Path) -> None:
    # out.prom → a file outside whose own link leads back to data/real.prom: the walk
    # stops where it leaves the repository, so the outside link cannot choose.
    outside = tmp_path / "outside.prom"
    outside.symlink_to(linked.root / "data/real.prom")
    _link(linked, "out.prom", str(outside))
    linked.write({"out.specgate.yaml": CLAIMS.format(name="out", path="out.prom")})
    assert _checked(["data/real.prom"]) == (ALL_FOUR, [])


def test_past_the_link_bound_every_claims_file_is_parsed(
    linked: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More links than MAX_LINKS: the prefilter is off, the lookup stays exact.
    monkeypatch.setattr(changed_module, "MAX_LINKS", 2)
    assert _checked(["data/real.prom"]) == (ALL_FOUR, [])
    assert _checked(["data/unread.prom"]) == ([], ["data/unread.prom"])


def _paths(report: dict[str, Any]) -> list[str]:
    return [f["path"] for f in report["files"]]


@pytest.fixture
def _outside_pre_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("_outside_pre_commit")
def test_staged_edit_behind_links(linked: Repo, run_json: Run) -> None:
    linked.write({"data/real.prom": PROM.format(drafts=1000, accepted=1500)})
    git(linked.root, "add", "data/real.prom")
    _, report, _ = run_json("check", "--staged")
    assert _paths(report) == ALL_FOUR


@pytest.mark.usefixtures("_outside_pre_commit")
def test_staged_retargeted_link(linked: Repo, run_json: Run) -> None:
    linked.write({"data/new.prom": PROM.format(drafts=10, accepted=10)})
    _link(linked, "m.prom", "data/new.prom")
    git(linked.root, "add", "m.prom", "data/new.prom")
    _, report, _ = run_json("check", "--staged")
    assert _paths(report) == ["via-link.specgate.yaml"]
    assert os.readlink(linked.root / "m.prom") == "data/new.prom"


def test_a_claims_file_that_is_a_link_changes_with_its_target(linked: Repo) -> None:
    # deploy/specgate.yaml → ../shared/common.yaml: common.yaml has no claims name, so it
    # is an "other" changed file; the claims file that leads to it is what changed.
    linked.write({"shared/common.yaml": SELF_CONTAINED})
    (linked.root / "deploy").mkdir()
    _link(linked, "deploy/specgate.yaml", "../shared/common.yaml")
    assert _checked(["shared/common.yaml"]) == (["deploy/specgate.yaml"], [])
