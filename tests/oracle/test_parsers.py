"""The engines' parsers as they answered (tests/data/engine_oracle/parser-*.json, recorded
by scripts/record_engine_parsers.py in each engine's environment, every release found in
the data), replayed against specgate's model of them (specgate.inputs.parsers), and
the reading of a command line that uses an abbreviation."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_config
from specgate.inputs.knowledge import knowledge, parse_version
from specgate.inputs.parsers import recorded_parser
from specgate.load.document import Document

DATA = Path(__file__).resolve().parent.parent / "data" / "engine_oracle"
PARSERS = Path(__file__).resolve().parents[2] / "src" / "specgate" / "data" / "engines" / "parsers"


def _recorded() -> list[tuple[str, str]]:
    """(engine, release) of every recorded parser answer file (parser-ENGINE-VERSION.json),
    found in the data: a release scripts/refresh_engine_data.py records is replayed with
    no list to edit."""
    names = [p.name[len("parser-") : -len(".json")] for p in DATA.glob("parser-*.json")]
    found = [(engine, version) for engine, version in (n.split("-", 1) for n in names)]
    return sorted(found, key=lambda ev: (ev[0], parse_version(ev[1]) or ()))


RECORDED = _recorded()


def _records(engine: str, version: str) -> list[dict[str, object]]:
    data = json.loads((DATA / f"parser-{engine}-{version}.json").read_text())
    assert data["header"]["engine_version"] == version
    records: list[dict[str, object]] = data["records"]
    return records


@pytest.mark.parametrize(("engine", "version"), RECORDED)
def test_every_recorded_answer_is_modelled(engine: str, version: str) -> None:
    parser = recorded_parser(engine, version)
    records = _records(engine, version)
    # every probe the recorder asks (scripts/record_engine_parsers.py): each proper prefix
    # of each long option with "spec" in it, and its "_" spelling, that is not an option
    # itself, from the option strings recorded beside them: the whole set, however few
    # (vLLM 0.8.5 has three such flags, 0.32.0 ten)
    longs = {o[0] for o in json.loads((PARSERS / f"{engine}-{version}.json").read_text())[
        "options"] if o[0].startswith("--")}
    wanted = {f"--{f[2:][:n]}" for f in longs if "spec" in f for n in range(1, len(f) - 2)}
    wanted |= {"--" + f[2:].replace("-", "_") for f in longs if "spec" in f and "-" in f[2:]}
    assert [r["word"] for r in records] == sorted(wanted - longs)
    for record in records:
        word = str(record["word"])
        answer = record["answer"]
        assert isinstance(answer, dict)
        got, matches = parser.read(word)
        if answer["status"] == "ok":
            assert got == "flag", word
            if answer["read_as"] is not None:  # None: the flag changed no value it could show
                assert matches == (answer["read_as"],), word
        elif answer["kind"] == "ambiguous":
            # the engine's own message, its matches in its order
            assert answer["message"] == f"ambiguous option: {word} could match " + ", ".join(
                matches
            ), word
        else:
            assert answer["kind"] == "unrecognized" and got == "unrecognized", word


def test_the_engines_take_abbreviations() -> None:
    # the recorded facts: argparse's allow_abbrev on; vLLM reads '_' as '-', SGLang does not
    assert recorded_parser("sglang", "0.5.23").allow_abbrev
    assert not recorded_parser("sglang", "0.5.23").underscores
    for version in ("0.27.1", "0.32.0"):
        assert recorded_parser("vllm", version).allow_abbrev
        assert recorded_parser("vllm", version).underscores
    assert {"0.27.1", "0.32.0"} <= set(knowledge("vllm").parser_versions)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_data_lists_every_recorded_parser(engine: str) -> None:
    # the engine's data names a release in "parsers" exactly when its parser file and its
    # recorded answers are there (scripts/refresh_engine_data.py writes all three)
    files = sorted(p.name for p in PARSERS.glob(f"{engine}-*.json"))
    listed = knowledge(engine).parser_versions
    assert files == sorted(f"{engine}-{v}.json" for v in listed)
    assert [v for e, v in RECORDED if e == engine] == list(listed)


def _read(engine: str, command: str, version: str | None) -> object:
    return read_engine_config(
        Document("cmd.txt", command), shown="cmd.txt", pointer=None, engine=engine,
        engine_version=version,
    )


def test_a_unique_sglang_prefix_is_the_flag() -> None:
    # record sglang-0425-flag-abbrev: --speculative-num-step 2 is read as steps 2
    config = _read(
        "sglang",
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
        "--speculative-draft-model-path d --speculative-num-step 2 --speculative-eagle 1 "
        "--speculative-num-d 3",
        "0.5.23",
    )
    assert config.draft_length == 2  # type: ignore[attr-defined]
    assert config.verify_tokens == 3  # type: ignore[attr-defined]
    assert not [i for i in config.issues if i.code == "SG310"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("version", "severity"),
    [("0.5.23", None), ("0.5.22", None), ("0.5.22.post1", "warn"), (None, "warn")],
)
def test_an_ambiguous_sglang_prefix_is_the_engines_refusal(
    version: str | None, severity: str | None
) -> None:
    # a version with no recorded parser (0.5.22.post1; PyPI serves none, and 0.5.22 has
    # been recorded since issue 27) is read by the nearest recorded one before it (a
    # warn); a release with its own recorded parser (0.5.22, 0.5.23) refuses (a fail)
    # record sglang-0426-flag-abbrev: "ambiguous option: --speculative-draft could match
    # --speculative-draft-model-path, --speculative-draft-model, …", exit 2 at parse
    config = _read(
        "sglang",
        "python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM\n"
        "  --speculative-draft 2",
        version,
    )
    issues = [i for i in config.issues if i.code == "SG310"]  # type: ignore[attr-defined]
    assert len(issues) == 1
    assert issues[0].severity == severity
    assert "--speculative-draft-model-path, --speculative-draft-model," in issues[0].message
    assert config.spans[issues[0].field].line == 2  # type: ignore[attr-defined]


def test_vllm_abbreviations_at_both_versions() -> None:
    # vllm-0.32.0 / 0.27.1 parser records: --spec-to is --spec-tokens, --spec_me is
    # --spec-method ('_' read as '-'), --spec-m is ambiguous (--spec-method, --spec-model)
    for version in ("0.27.1", "0.32.0"):
        config = _read(
            "vllm",
            "vllm serve m --spec_me ngram --spec-to 3 --speculative-config.prompt_lookup_max 4",
            version,
        )
        assert config.draft_length == 3  # type: ignore[attr-defined]
        assert config.mechanism == "ngram"  # type: ignore[attr-defined]
        refused = _read("vllm", "vllm serve m --spec-m ngram --spec-tokens 3", version)
        issues = [i for i in refused.issues if i.code == "SG310"]  # type: ignore[attr-defined]
        assert len(issues) == 1 and issues[0].severity is None
        assert "could match --spec-method, --spec-model" in issues[0].message


def test_a_pinned_version_is_read_by_the_nearest_recorded_parser_at_or_before_it() -> None:
    # recorded 0.27.1, 0.31.0, 0.32.0 (a copy of the vLLM data with that list): a release
    # recorded is its own; one between two is read by the older (the parser it grew
    # from); one older than all by the oldest; an unknown version by the newest
    data = copy.copy(knowledge("vllm"))
    data.parser_versions = ("0.27.1", "0.31.0", "0.32.0")
    assert data.parser_version_at((0, 31, 0)) == "0.31.0"
    assert data.parser_version_at((0, 30, 0)) == "0.27.1"
    assert data.parser_version_at((0, 31, 5)) == "0.31.0"
    assert data.parser_version_at((0, 33, 0)) == "0.32.0"
    assert data.parser_version_at((0, 10, 2)) == "0.27.1"
    assert data.parser_version_at(None) == "0.32.0"
    data.parser_versions = ()
    assert data.parser_version_at((0, 31, 0)) is None


def test_recording_an_older_parser_does_not_move_where_the_data_was_read() -> None:
    # vllm.json states oldest_read (its checks were read from there on), whatever older
    # release's parser is recorded beside it (0.19.1). Contract change: 0.22.1, not 0.27.1:
    # vLLM 0.22.1 answered the whole corpus (tests/data/engine_oracle/vllm-0.22.1.json) and
    # every refusal specgate fails on there is the engine's own
    assert knowledge("vllm").oldest_read == (0, 22, 1)
    assert knowledge("sglang").oldest_read == (0, 5, 23)
