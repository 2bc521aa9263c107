"""The engines as oracle, replayed (docs/engines.md#the-engine-as-oracle): for every record an
engine answered (tests/data/engine_oracle/*.json, minus those with a ``caveat``), specgate's reading
equals the engine's resolution, and every engine refusal is a fail at the setting's
line, at the engine version of the record (stated as ``speculation.engine_version``).

The few records specgate still reads otherwise are listed, with the reason, in
tests/data/engine_oracle/disagreements.json; a listed record that starts agreeing fails
the test too, so the list only shrinks. The replay checks every claims file in-process
(one folder per engine file, the serving files read once): a few seconds in all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.oracle import replay

# Agreement measured when the list below was made (records agreeing / replayed):
# vLLM 0.32.0 838/893, vLLM 0.27.1 844/898, SGLang 0.5.23 589/644, transformers
# 5.19.0 77/119 (before this replay: 280/893, 275/898, 299/644, 77/119); vLLM 0.33.0
# 828/893 when recorded (2026-12-03: the 65 others listed with the reason of each kind).
# Recorded 2026-12-03 by scripts/refresh_engine_data.py, after the data each release's
# answers settled (tests/data/engine_oracle/README.md): vLLM 0.19.1 697/898, 0.22.1
# 859/898, 0.25.1 858/898, 0.29.0 860/898, 0.30.0 851/892, 0.31.0 851/891; SGLang 0.5.10
# 656/705, 0.5.13 632/702, 0.5.15 629/702, 0.5.18 609/687, 0.5.20 595/684, 0.5.21 595/684.
# The SGLang backfill (issue 27: every release PyPI serves from 0.5.5.post3, post-releases
# included): 0.5.5.post3 634/705, 0.5.6 634/705, 0.5.6.post1 610/705, 0.5.6.post2 643/705,
# 0.5.7 643/705, 0.5.8 652/705, 0.5.8.post1 652/705, 0.5.9 656/705, 0.5.10.post1 656/705,
# 0.5.11 647/705, 0.5.12 635/702, 0.5.12.post1 635/702, 0.5.13.post1 632/702, 0.5.14
# 625/687, 0.5.15.post1 625/687, 0.5.16 609/687, 0.5.17 609/687, 0.5.19 609/687, 0.5.22
# 595/684. Then 0.4.9.post1 to 0.5.5.post2 (25 releases, a corpus of 712): 639/712 each,
# 0.4.9.post1 to 0.5.2 642/712.
# transformers at the releases beside its lifetime boundaries: 4.45.0, 4.46.3, 4.47.0,
# 4.47.1, 4.49.0 119/119, 4.50.0 118/119, 4.56.2, 4.57.0, 5.1.0-5.3.0, 5.13.1, 5.14.0, 5.23.0,
# 5.24.0 117/119.

#: Every release recorded (tests/data/engine_oracle/ENGINE-VERSION.json), found in the
#: data: a release scripts/refresh_engine_data.py records is replayed with no list to edit.
FILES = tuple(replay.release_files())


def _known() -> dict[str, str]:
    """``FILE:record id`` → why specgate still disagrees with the engine there."""
    data = json.loads((replay.DATA / "disagreements.json").read_text(encoding="utf-8"))
    return {rid: kind["reason"] for kind in data["kinds"] for rid in kind["ids"]}


KNOWN = _known()


@pytest.fixture(scope="module", params=FILES)
def replayed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, list[str]]]:
    """(file, record id → disagreements) for one oracle file."""
    name = str(request.param)
    folder: Path = tmp_path_factory.mktemp(name)
    return name, replay.replay_file(name, folder)


def test_specgate_reads_what_the_engine_resolves(
    replayed: tuple[str, dict[str, list[str]]],
) -> None:
    name, found = replayed
    wrong = {rid: d for rid, d in found.items() if d and f"{name}:{rid}" not in KNOWN}
    assert not wrong, f"{name}: {len(wrong)} records disagree: " + json.dumps(
        dict(list(wrong.items())[:20]), indent=1, ensure_ascii=False
    )


def test_listed_disagreements_still_disagree(
    replayed: tuple[str, dict[str, list[str]]],
) -> None:
    name, found = replayed
    fixed = sorted(rid for rid, d in found.items() if not d and f"{name}:{rid}" in KNOWN)
    assert not fixed, f"{name}: now agree, remove from disagreements.json: {fixed}"


def test_the_corpus_is_the_recorded_one() -> None:
    # Sizes of the recorded corpora (tests/data/engine_oracle/README.md): 898 vLLM
    # configurations per version, 662 SGLang, 119 transformers; the records with a
    # caveat (5 vLLM 0.32.0, 18 SGLang: this host's or a stand-in model's answer) are
    # not replayed.
    reviewed = ("vllm-0.32.0", "vllm-0.27.1", "sglang-0.5.23", "transformers-5.19.0")
    sizes = {name: len(replay.load(name)[1]) for name in reviewed}
    assert sizes == {
        "vllm-0.32.0": 898,
        "vllm-0.27.1": 898,
        "sglang-0.5.23": 662,
        "transformers-5.19.0": 119,
    }
    replayed_sizes = {name: len(replay.cases(name)) for name in reviewed}
    assert replayed_sizes == {
        "vllm-0.32.0": 893,
        "vllm-0.27.1": 898,
        "sglang-0.5.23": 644,
        "transformers-5.19.0": 119,
    }


@pytest.mark.parametrize("name", FILES)
def test_every_release_file_is_whole(name: str) -> None:
    # each file holds as many records as its header counts, its header names the release
    # its file name does, and every record has an id of its engine and an answer
    header, records = replay.load(name)
    engine, version = name.split("-", 1)
    assert (header["engine"], header["engine_version"]) == (engine, version)
    assert header["cases"] == len(records) > 100
    assert all(str(r["id"]).startswith(f"{engine}-") and "answer" in r for r in records)


def test_the_release_files_are_found_in_the_data() -> None:
    # the four reviewed releases at least; parser-*, *-mtp-* and disagreements.json never
    assert {"vllm-0.32.0", "vllm-0.27.1", "sglang-0.5.23", "transformers-5.19.0"} <= set(FILES)
    assert not [n for n in FILES if n.startswith("parser-") or "-mtp-" in n]
