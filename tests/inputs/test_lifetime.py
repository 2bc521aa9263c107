"""Lifetimes of engine behaviours (specgate/inputs/engines/lifetime.py): the versions a
refusal holds in, read from the engine's history, with hand-worked boundaries."""

from __future__ import annotations

import pytest

from specgate.core.vocabulary import ENGINE_NAMES
from specgate.inputs.engines.checks import checks_of
from specgate.inputs.engines.lifetime import Lifetime, behaviour_at, behaviour_lifetime
from specgate.inputs.knowledge import EngineKnowledge, knowledge, load_raw, parse_version


def _v(text: str) -> tuple[int, ...]:
    version = parse_version(text)
    assert version is not None
    return version


VOCAB_100 = Lifetime(_v("b2995"), _v("b1321"), _v("b4094"), _v("b4295"), "s")


@pytest.mark.parametrize(
    ("build", "held"),
    [
        ("b1000", "absent"),  # before PR #3812 (41aee4df, 2023-10-28)
        ("b1321", "absent"),  # tagged by 2023-10-04: before it
        ("b2000", "unknown"),  # between b1321 and b2995: the commit's build is not known
        ("b2995", "holds"),
        ("b3000", "holds"),  # issue 27: a build pinned at b3000 only warned
        ("b4094", "holds"),  # 74d73dc8: 100 read there
        ("b4200", "unknown"),  # 100 → 128 lies in b4095–b4294
        ("b4295", "absent"),  # 26a8406b: 128
        ("b11312", "absent"),
    ],
)
def test_a_lifetime_answers_per_build(build: str, held: str) -> None:
    assert VOCAB_100.at(_v(build)) == held


def test_holding_throughout_needs_both_ends_inside() -> None:
    assert VOCAB_100.throughout(_v("b3000"), _v("b4000"))
    assert not VOCAB_100.throughout(_v("b2000"), _v("b4000"))  # b2000 not known
    assert not VOCAB_100.throughout(None, _v("b4000"))  # no lower bound: b1000 allowed
    assert not VOCAB_100.throughout(_v("b3000"), _v("b4200"))


def test_an_open_lifetime_holds_to_the_newest() -> None:
    static = Lifetime(_v("4.45.0"), _v("4.44.2"), None, None, "s")
    assert static.at(_v("4.44.2")) == "absent"
    assert static.at(_v("4.44.3")) == "unknown"  # no such release read
    assert static.at(_v("4.45.0")) == "holds"
    assert static.at(_v("5.19.0")) == "holds"
    assert static.at(_v("9.0.0")) == "holds"


def test_bounds_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="out of order"):
        Lifetime.from_data({"first": "b10", "first_after": "b20"}, "s")
    with pytest.raises(ValueError, match="out of order"):
        Lifetime.from_data({"first": "b10", "last": "b20", "until": "b20"}, "s")


@pytest.mark.parametrize("engine", sorted(ENGINE_NAMES))
def test_every_lifetime_in_the_data_parses_and_replaces_since_until(engine: str) -> None:
    """A check with a lifetime carries no since/until of its own (the lifetime's
    bounds are its range), and its history is cited at a commit or a release tag."""
    for raw in load_raw(engine).get("checks", ()):
        if "lifetime" not in raw:
            continue
        assert "since" not in raw and "until" not in raw, raw["id"]
        source = raw["lifetime"]["source"]
        assert source.get("commit") or source.get("ref"), raw["id"]
    for check in checks_of(knowledge(engine)):
        if check.lifetime is not None:
            assert "@" in check.lifetime.source, check.id
    for raw in load_raw(engine).get("behaviours", ()):  # behaviours alike
        if "lifetime" not in raw:
            continue
        assert "since" not in raw and "until" not in raw, raw["name"]
        life = behaviour_lifetime(knowledge(engine), raw["name"])
        assert life is not None and "@" in life.source, raw["name"]


def test_the_recorded_lifetimes() -> None:
    """The lifetimes issue 27 names, as read: llama.cpp's vocabulary limit of 100 from
    41aee4df (PR #3812; examples/speculative/speculative.cpp), transformers' static
    cache refusal (read in the PyPI wheels of every release around each boundary).

    Contract change (issue 27): the static-cache refusal was 4.45.0 on. Its text is raised
    from 4.45.0 (absent from the 4.44.2 wheel), but generate() swaps an assistant's cache
    for a dynamic one from 4.44.0 to 4.56.2 (utils.py:1942 of the 4.56.2 wheel), and any
    assisted generation's, prompt lookup included, from 4.57.0 to 5.14.1 (utils.py:1962
    of the 5.14.1 wheel): transformers 4.46.0, 4.48.0 and 5.0.0 run an assistant with
    cache_implementation static (tests/data/engine_oracle/, record transformers-0040).
    With an assistant it holds from 5.15.0 to 5.23.0 (the 5.24.0 wheel has no such check;
    5.25.0 runs it); prompt lookup alone meets it from 4.45.0 to 4.56.2 as well."""
    (vocab,) = [c for c in checks_of(knowledge("llamacpp")) if c.id == "vocab-limit-100-refused"]
    assert vocab.lifetime == Lifetime(
        _v("b2995"),
        _v("b1321"),
        _v("b4094"),
        # Contract change: until b4295 → b4291, ce8784bd (llama-cpp-python 0.3.3's vendored
        # llama.cpp, numbered 4291 by ggml-ci's run of it) already has 128
        _v("b4291"),
        "ggml-org/llama.cpp:examples/speculative/speculative.cpp"
        "@41aee4df821854f37d90a45281f03b6db8d27de2",
    )
    checks = {c.id: c for c in checks_of(knowledge("transformers"))}
    assert checks["static-cache"].lifetime == Lifetime(
        (5, 15, 0),
        (5, 14, 1),
        (5, 23, 0),
        (5, 24, 0),
        "huggingface/transformers:src/transformers/generation/utils.py@v5.15.0",
    )
    assert checks["static-cache-prompt-lookup"].lifetime == Lifetime(
        (4, 45, 0),
        (4, 44, 2),
        (4, 56, 2),
        (4, 57, 0),
        "huggingface/transformers:src/transformers/generation/utils.py@v4.45.0",
    )


# A refusal that held at exactly one release: first == last. A hand-made entry (not an
# engine's): made at 0.5.6, known absent at 0.5.5 and again at 0.5.7.
ONE_RELEASE = {
    "id": "held-at-one-release",
    "effect": "refuses",
    "when": {"set": "spec.num_speculative_tokens"},
    "message": "refused",
    "source": {"repo": "o/r", "file": "f.py", "confirmed": True},
    "lifetime": {
        "first": "0.5.6",
        "first_after": "0.5.5",
        "last": "0.5.6",
        "until": "0.5.7",
        "source": {"repo": "o/r", "file": "f.py", "commit": "0123456"},
    },
}


def test_a_lifetime_of_one_release_is_read() -> None:
    # before: first == last was refused as "bounds out of order" (the bounds were
    # required to be distinct), so such an entry could not be loaded at all
    life = Lifetime.from_data(ONE_RELEASE["lifetime"], "s")  # type: ignore[arg-type]
    assert (life.first, life.last) == ((0, 5, 6), (0, 5, 6))
    assert life.at(_v("0.5.5")) == "absent"
    assert life.at(_v("0.5.6")) == "holds"
    assert life.at(_v("0.5.7")) == "absent"
    assert life.throughout(_v("0.5.6"), _v("0.5.6"))
    assert not life.throughout(_v("0.5.5"), _v("0.5.6"))
    # without its outer bounds: one release known, the neighbours not known
    bare = Lifetime.from_data({"first": "0.5.6", "last": "0.5.6"}, "s")
    assert [bare.at(_v(v)) for v in ("0.5.5", "0.5.6", "0.5.7")] == [
        "unknown", "holds", "unknown"
    ]


def test_a_check_of_one_release_is_judged_at_it() -> None:
    from specgate.inputs.engines.checks import Check, _severity
    from specgate.inputs.types import VersionInForce

    check = Check.from_data(ONE_RELEASE, "o/r:f.py")
    data = knowledge("sglang")

    def at(version: str | None, low: str | None = None) -> object:
        pinned = _v(version) if version is not None else None
        judged = VersionInForce(
            pinned, None if pinned else _v("0.5.6"), _v("0.5.23"), version or "?",
            low=_v(low) if low else None,
        )
        return _severity(check, judged, data)

    assert at("0.5.6") == ("fail", "")  # pinned inside: the engine's refusal
    assert at("0.5.5") is None and at("0.5.7") is None  # outside: nothing
    assert at(None, low="0.5.6") == ("fail", "")  # the settings allow only 0.5.6
    severity, why = at(None, low="0.5.5")  # type: ignore[misc]
    assert severity == "warn" and "held in SGLang 0.5.6 only" in why


@pytest.mark.parametrize(
    "bounds",
    [
        {"first": "0.5.6", "last": "0.5.5"},
        {"first": "0.5.6", "first_after": "0.5.6"},
        {"first": "0.5.6", "last": "0.5.6", "until": "0.5.6"},
        {"first": "0.5.6", "until": "0.5.6"},
    ],
)
def test_bounds_that_touch_the_held_range_are_refused(bounds: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="out of order"):
        Lifetime.from_data(bounds, "s")


def test_a_behaviour_with_a_lifetime_holds_by_it() -> None:
    """transformers reads num_assistant_tokens, its schedule and the confidence
    threshold from the assistant's generation_config from 4.35.0, where the settings came
    in (generation/utils.py assisted_decoding in the v4.35.0 wheel, sha256 45aa9370…),
    to 5.19.0; the v4.34.1 wheel has no such setting (issue 27)."""
    tf = knowledge("transformers")
    name = "assistant-settings-from-its-config"
    life = behaviour_lifetime(tf, name)
    assert life is not None
    assert (life.first, life.first_after, life.last, life.until) == (
        (4, 35, 0),
        (4, 34, 1),
        None,
        None,
    )
    assert life.source == "huggingface/transformers:src/transformers/generation/utils.py@v4.35.0"
    for version, held in [
        ("4.34.1", "absent"),
        ("4.35.0", "holds"),
        ("4.40.0", "holds"),
        ("4.56.1", "holds"),
        ("5.19.0", "holds"),
    ]:
        assert behaviour_at(tf, name, _v(version)) == held, version
    assert behaviour_at(tf, name, None) == "holds"  # unpinned: the newest known, 5.19.0


def test_a_behaviour_in_the_gap_of_its_lifetime_is_not_known() -> None:
    # a hand-made behaviour: known absent at 1.2.0, known to hold from 1.4.0
    data = {
        **load_raw("transformers"),
        "behaviours": [
            {
                "name": "made-up",
                "lifetime": {
                    "first": "1.4.0",
                    "first_after": "1.2.0",
                    "source": {"repo": "o/r", "file": "f.py", "ref": "v1.4.0"},
                },
                "source": {"repo": "o/r", "file": "f.py"},
            }
        ],
    }
    made = EngineKnowledge(data)
    assert behaviour_at(made, "made-up", _v("1.2.0")) == "absent"
    assert behaviour_at(made, "made-up", _v("1.3.0")) == "unknown"
    assert behaviour_at(made, "made-up", _v("1.4.0")) == "holds"
    with pytest.raises(ValueError, match="has a lifetime"):
        made.behaves("made-up", _v("1.4.0"))  # since/until only: never a silent answer
