"""transformers reader on hand-made generation configs (GenerationConfig fields,
docs/engines.md docs/theory.md#vocabulary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file
from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Span
from specgate.load.read import parse_text


def generation(data: dict[str, object], version: str | None = None) -> EngineConfig:
    text = json.dumps(data, indent=2)
    doc = parse_text(text, "generation_config.json", json_syntax=True)
    return read_engine_config(
        doc, shown="generation_config.json", pointer=None, engine=None, engine_version=version
    )


def test_prompt_lookup_is_ngram_with_max_d() -> None:
    c = generation({"max_new_tokens": 64, "prompt_lookup_num_tokens": 10})
    assert (c.engine, c.mechanism, c.draft_length, c.verify_tokens) == (
        "transformers",
        "ngram",
        10,
        11,
    )
    assert c.draft_length_is_max
    assert c.spans["draft_length"] == Span(3, 31)  # '  "prompt_lookup_num_tokens": ' is 30


def test_hub_defaults_without_an_assistant_configure_nothing() -> None:
    with pytest.raises(InputError, match="no speculative decoding configured"):
        generation(
            {
                "num_assistant_tokens": 20,
                "num_assistant_tokens_schedule": "constant",
                "assistant_confidence_threshold": 0.4,
            }
        )


def test_assistant_constant_schedule() -> None:
    # the assistant's own generation config (where the candidate generator reads them)
    c = generation(
        {
            "assistant_model": "Qwen/Qwen2.5-0.5B",
            "assistant_generation_config": {
                "num_assistant_tokens": 5,
                "num_assistant_tokens_schedule": "constant",
                "assistant_confidence_threshold": 0,
            },
        }
    )
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max) == (
        "draft_model",
        5,
        6,
        False,
    )
    assert c.draft_model == "Qwen/Qwen2.5-0.5B"
    assert not [i for i in c.issues if i.code == "SG307"]


def test_assistant_settings_given_to_generate_are_ignored() -> None:
    # transformers 5.19.0 itself (tests/data/engine_oracle, records transformers-0082 and
    # -0083): num_assistant_tokens 5 given to generate() runs with the assistant's 20, the
    # same 5 on the assistant's generation_config runs with 5. Contract change (issue 16):
    # the kwargs were read as D.
    kwargs = {
        "assistant_model": "Qwen/Qwen2.5-0.5B",
        "num_assistant_tokens": 5,
        "num_assistant_tokens_schedule": "constant",
        "assistant_confidence_threshold": 0,
    }
    c = generation(kwargs)
    assert (c.draft_length, c.verify_tokens) == (20, 21)
    ignored = sorted(i.field for i in c.issues if i.code == "SG307")
    assert ignored == [
        "ignored:assistant_confidence_threshold",
        "ignored:num_assistant_tokens",
        "ignored:num_assistant_tokens_schedule",
    ]
    assert all(i.severity == "warn" for i in c.issues if i.code == "SG307")
    # 4.48.0 reads the assistant's config too (candidate_generator.py:118 in its wheel:
    # self.num_assistant_tokens = assistant_model.generation_config.num_assistant_tokens;
    # default 20). Contract change (issue 27): the release before the one recorded read
    # the keyword arguments as served.
    at_448 = generation(kwargs, version="4.48.0")
    assert (at_448.draft_length, at_448.verify_tokens) == (20, 21)
    # 4.40.0: assistant_confidence_threshold is no setting yet (GenerationConfig takes it
    # from 4.45.0; absent from the 4.44.2 wheel): no default to serve is named
    (threshold,) = [
        i.message
        for i in generation(kwargs, version="4.40.0").issues
        if i.field == "ignored:assistant_confidence_threshold"
    ]
    assert "where this release has no such setting" in threshold
    # 4.34.1 has no num_assistant_tokens at all (not this rewrite): read as given
    old = generation(kwargs, version="4.34.1")
    assert (old.draft_length, old.verify_tokens) == (5, 6)
    assert not [i for i in old.issues if i.code == "SG307"]


@pytest.mark.parametrize(
    "extra",
    [
        {"num_assistant_tokens_schedule": "heuristic"},
        {"num_assistant_tokens_schedule": "dynamic"},
        {"assistant_confidence_threshold": 0.4},
    ],
)
def test_adaptive_assistant_d_is_a_maximum(extra: dict[str, object]) -> None:
    c = generation({"assistant_model": "d", "num_assistant_tokens": 20, **extra})
    assert c.draft_length_is_max


def test_assistant_without_num_tokens_reads_the_release_default() -> None:
    # GenerationConfig: num_assistant_tokens 20, constant schedule, confidence
    # threshold 0.4 (which cuts drafts short: D is a maximum).
    c = generation({"assistant_model": "d"})
    assert (c.draft_length, c.verify_tokens, c.draft_length_is_max) == (20, 21, True)
    assert any("default is 20" in n for n in c.notes)
    # Before 4.45.0: 5 with the heuristic schedule and no confidence threshold, so D is
    # the starting value of a schedule that moves it, not a maximum. Contract change: it
    # was read as a maximum (the schedule adds 2 after a fully accepted step, so D
    # grows past num_assistant_tokens; docs/theory.md#d-is-a-maximum).
    old = generation({"assistant_model": "d"}, version="4.40.2")
    assert (old.draft_length, old.draft_length_is_max) == (5, False)
    assert old.draft_length_moves is not None and "'heuristic'" in old.draft_length_moves


def test_unset_confidence_threshold_is_the_default_cut_off() -> None:
    # cases/engines/22: the threshold is unset, transformers applies 0.4.
    c = generation(
        {"assistant_model": "HuggingFaceTB/SmolLM2-135M-Instruct", "num_assistant_tokens": 20}
    )
    assert (c.draft_length, c.draft_length_is_max) == (20, True)
    assert any("assistant_confidence_threshold not set" in n for n in c.notes)


# --- the schedule: D fixed, a maximum, or moving (docs/theory.md#d-is-a-maximum) ------------
#
# Read in transformers' wheels (PyPI): GenerationConfig.__init__ pops
# num_assistant_tokens 5 and num_assistant_tokens_schedule "heuristic" in 4.44.2 (sha256
# 1c02c65e…, configuration_utils.py lines 411-412) and 20, "constant" and
# assistant_confidence_threshold 0.4 in 4.45.0 (sha256 f04a8292…, lines 457-459);
# AssistedCandidateGenerator.update_candidate_strategy (candidate_generator.py, the same in
# 4.44.2, 4.45.0, 4.46.0 and 5.19.0) moves D by +2 / −1 only when the schedule is in
# {"heuristic", "heuristic_transient"}, compared exactly.


def _assistant(
    schedule: object, version: str | None = "5.19.0", read_from: str | None = None
) -> EngineConfig:
    own: dict[str, object] = {"num_assistant_tokens": 5, "assistant_confidence_threshold": 0}
    if read_from is not None:
        own["generation_config_file"] = read_from
    if schedule is not None:
        own["num_assistant_tokens_schedule"] = schedule
    return generation(
        {"assistant_model": "d", "assistant_generation_config": own}, version=version
    )


@pytest.mark.parametrize("schedule", ["heuristic", "heuristic_transient"])
def test_a_heuristic_schedule_moves_d(schedule: str) -> None:
    c = _assistant(schedule)
    # the starting value; no threshold, so no cap either
    assert (c.draft_length, c.verify_tokens, c.draft_length_is_max) == (5, 6, False)
    assert c.draft_length_moves is not None
    assert f"{schedule!r} moves D during the run" in c.draft_length_moves
    assert "num_assistant_tokens = 5" in c.draft_length_moves
    assert "candidate_generator.py@v5.19.0" in c.draft_length_moves


@pytest.mark.parametrize("schedule", ["constant", "dynamic", "Heuristic"])
def test_other_schedules_keep_d(schedule: str) -> None:
    # "dynamic" is no schedule transformers knows and "Heuristic" is not "heuristic": the
    # membership test fails and D stays num_assistant_tokens (a fixed D, threshold 0)
    c = _assistant(schedule)
    assert (c.draft_length, c.draft_length_is_max, c.draft_length_moves) == (5, False, None)


@pytest.mark.parametrize(
    ("version", "moves", "is_max", "d"),
    [
        ("4.44.2", True, False, 5),  # default heuristic, no threshold
        ("4.45.0", False, True, 20),  # default constant, threshold 0.4 (a maximum)
        ("4.46.0", False, True, 20),
    ],
)
def test_the_default_schedule_by_release(
    version: str, moves: bool, is_max: bool, d: int
) -> None:
    # the assistant's own generation_config.json read (its folder in the repository,
    # specgate/load/assistant_folder.py) and setting none of the three: the defaults run
    read = {"assistant_generation_config": {"generation_config_file": "d/generation_config.json"}}
    c = generation({"assistant_model": "d", **read}, version=version)
    assert (c.draft_length, c.draft_length_is_max) == (d, is_max)
    assert (c.draft_length_moves is not None) == moves
    assert any("'heuristic' moves D during the run" in n for n in c.notes) == moves
    assert c.draft_length_assumed is None


@pytest.mark.parametrize("version", ["4.45.0", "4.46.0", "5.19.0"])
def test_a_default_schedule_of_an_assistant_not_read_is_an_assumption(version: str) -> None:
    # Contract change: a hub assistant's default constant schedule was read as keeping D.
    # from_pretrained loads the assistant's generation_config.json (transformers 5.19.0
    # generation/utils.py adjust_generation_fn), which may set "heuristic", and the
    # candidate generator moves D under it (candidate_generator.py lines 239-247): D may
    # move, so a fail that reads D holds only at its cheapest reading
    c = generation({"assistant_model": "d"}, version=version)
    assert c.draft_length_moves is not None
    assert "default 'constant', assumed" in c.draft_length_moves
    assert "d's generation_config.json" in c.draft_length_moves
    # the threshold's default 0.4 still makes D a maximum
    assert (c.draft_length, c.draft_length_is_max) == (20, True)


def test_unset_schedule_at_a_version_not_pinned_may_move() -> None:
    # no version: the releases before 4.45.0 default to the heuristic schedule
    c = _assistant(None, version=None)
    assert c.draft_length == 5 and not c.draft_length_is_max
    assert c.draft_length_moves is not None and "not pinned" in c.draft_length_moves
    # pinned at 5.19.0 the default is constant: D 5 is fixed once the assistant's own
    # generation_config.json is read; a hub assistant's may set a moving schedule
    # (contract change: it was None for the hub id "d")
    read = _assistant(None, read_from="d/generation_config.json")
    assert read.draft_length_moves is None
    unread = _assistant(None).draft_length_moves
    assert unread is not None and "assumed" in unread


SCRIPT = (
    "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
    'tok = AutoTokenizer.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")\n'
    'model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")\n'
    'draft = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")\n'
    "draft.generation_config.num_assistant_tokens = 5\n"
    'draft.generation_config.num_assistant_tokens_schedule = "{schedule}"\n'
    "draft.generation_config.assistant_confidence_threshold = 0\n"
    'inputs = tok("Summarise the report.", return_tensors="pt")\n'
    "out = model.generate(**inputs, assistant_model=draft, do_sample=False)\n"
)


def _check_script(
    tmp_path: Path, schedule: str | None, *, al: float, claim: float
) -> list[tuple[str, str]]:
    """A claims file over a transformers script at 5.19.0, ρ 0.05 stated: (code, severity)
    of SG102, SG103, SG104, SG106 and SG308. ``schedule`` None: not set on the assistant."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    script = SCRIPT.format(schedule=schedule)
    if schedule is None:
        script = "".join(x for x in script.splitlines(True) if "schedule" not in x)
    (tmp_path / "assisted.py").write_text(script, encoding="utf-8")
    text = (
        "version: 1\ndeployments:\n  - name: chat\n"
        "    speculation: {enabled: true, engine: transformers, engine_config: assisted.py,\n"
        '      engine_version: "5.19.0", draft_depth_ratio: 0.05}\n'
        f"    evidence: {{accept_length: {al}, cache_coherence_eval: true}}\n"
        f"    claims: {{speedup: {claim}}}\n"
    )
    claims = tmp_path / "c.specgate.yaml"
    claims.write_text(text, encoding="utf-8")
    report = check_file(claims, "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    wanted = {"SG102", "SG103", "SG104", "SG106", "SG308"}
    return sorted((f.code, f.severity) for f in report.all_findings() if f.code in wanted)


def test_a_script_with_a_constant_schedule_fails_at_d(tmp_path: Path) -> None:
    # D 5 fixed, β 1: AL 2.0 / (1 + 0.05·5) = 1.6x, so a claimed 1.7x fails
    assert _check_script(tmp_path, "constant", al=2.0, claim=1.7) == [("SG104", "fail")]


def test_a_script_with_a_heuristic_schedule_does_not_fail_on_d(tmp_path: Path) -> None:
    # D starts at 5 and moves: the cheapest reading is D = max(1, ⌈2.0 − 1⌉) = 1, one pass,
    # 2.0 / 1.05 = 1.9048x, so the claimed 1.7x is no fail; priced with every step
    # drafting the starting 5 it is above 1.6x, which warns
    found = _check_script(tmp_path, "heuristic", al=2.0, claim=1.7)
    assert ("SG104", "fail") not in found
    assert ("SG104", "warn") in found  # above 2.0 / (1 + 0.05·5) = 1.6x, every step at 5
    assert ("SG308", "info") in found


def test_a_hub_assistants_unread_schedule_does_not_fail_on_d(tmp_path: Path) -> None:
    # the constant case's numbers, the schedule left to the hub assistant's
    # generation_config.json, not read: it may set "heuristic" (candidate_generator.py
    # lines 239-247 at 5.19.0 then move D), so the fail at a fixed D 5 (1.6x) is a
    # warning; at the cheapest reading, D 1, the bound is 2.0 / 1.05 = 1.9048x
    found = _check_script(tmp_path, None, al=2.0, claim=1.7)
    assert ("SG104", "fail") not in found
    assert ("SG104", "warn") in found
    # a claim above 1.9048x fails at every D the schedule may reach
    assert ("SG104", "fail") in _check_script(tmp_path, None, al=2.0, claim=2.0)


def test_a_heuristic_schedule_keeps_a_fail_that_holds_at_any_d(tmp_path: Path) -> None:
    # a claimed 2.0x at AL 2.0 and ρ 0.05: above 2.0 / 1.05 = 1.9048x at every D ≥ 1
    found = _check_script(tmp_path, "heuristic", al=2.0, claim=2.0)
    assert ("SG104", "fail") in found


def test_a_heuristic_schedule_lets_al_pass_the_starting_d(tmp_path: Path) -> None:
    # AL 7.5 > 1 + 5: impossible at a fixed D 5 (SG103 fails), possible once the schedule
    # has grown D to 7 or more: a warning. Claim 1.0 keeps SG104 out of it.
    assert ("SG103", "fail") in _check_script(tmp_path, "constant", al=7.5, claim=1.0)
    moving = _check_script(tmp_path, "heuristic", al=7.5, claim=1.0)
    assert ("SG103", "warn") in moving and ("SG103", "fail") not in moving


def test_a_moving_d_gives_a_derived_rho_no_low_end(tmp_path: Path) -> None:
    # D starts at 5, AL 3.0, measured 2.0x, β 1: ρ = (3 / 2 − 1) / 5 = 0.1 if every step
    # drafted 5; at the fewest passes max(1, 3 − 1) = 2 it is 0.5 / 2 = 0.25; a D that grew
    # past 5 may average more passes, so the range starts at 0 (docs/theory.md#d-is-a-maximum)
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "assisted.py").write_text(SCRIPT.format(schedule="heuristic"), encoding="utf-8")
    claims = tmp_path / "c.specgate.yaml"
    claims.write_text(
        "version: 1\ndeployments:\n  - name: chat\n"
        "    speculation: {enabled: true, engine: transformers, engine_config: assisted.py,\n"
        '      engine_version: "5.19.0"}\n'
        "    evidence: {accept_length: 3.0, measured_speedup: 2.0, cache_coherence_eval: true}\n",
        encoding="utf-8",
    )
    report = check_file(claims, "c.specgate.yaml", CheckOptions())
    (dep,) = report.deployments
    assert dep.metrics.draft_depth_ratio == pytest.approx(0.1)
    assert dep.metrics.draft_depth_ratio_range == pytest.approx((0.0, 0.25))


GENERATE_KWARG = (
    "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
    'tok = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-7B-Instruct")\n'
    'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B-Instruct")\n'
    'draft = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")\n'
    'inputs = tok("Summarise the report.", return_tensors="pt")\n'
    "out = model.generate(**inputs, assistant_model=draft, num_assistant_tokens={k})\n"
)


def _kwarg_script(tmp_path: Path, k: int, version: str | None) -> dict[str, str]:
    """A claims file stating D = k over a script giving num_assistant_tokens=k to
    generate(): the severity of SG301 and SG307 (absent: no finding), and D served."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "gen.py").write_text(GENERATE_KWARG.format(k=k), encoding="utf-8")
    pin = f', engine_version: "{version}"' if version else ""
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: chat\n"
        "    speculation: {enabled: true, engine: transformers, engine_config: gen.py,\n"
        f"      draft_length: {k}{pin}}}\n",
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    found = {f.code: f.severity for f in report.all_findings() if f.code in ("SG301", "SG307")}
    (dep,) = report.deployments
    found["D"] = str(dep.metrics.draft_length)
    return found


@pytest.mark.parametrize(
    ("k", "version", "expected"),
    [
        # 4.56.1: candidate_generator.py:120 reads the assistant's generation_config, whose
        # default is 20 (configuration_utils.py kwargs.pop("num_assistant_tokens", 20));
        # asked of 4.56.1 on tiny Llama models: generate(num_assistant_tokens=5) drafted
        # 20 a step, 5 on the assistant's config drafted 5 (issue 27's trial)
        # The assistant is a hub id: its generation_config.json (loaded by from_pretrained,
        # transformers 5.19.0 generation/utils.py GenerationConfig.from_pretrained) is not
        # read and may set num_assistant_tokens, so the default is an assumption: SG301
        # warns and the claims file's D is judged (docs/trust.md)
        (5, "4.56.1", {"SG301": "warn", "SG307": "warn", "D": "5"}),
        # 4.40.0: the same read (candidate_generator.py:109), default 5 with the heuristic
        # schedule; asked of 4.40.0: generate(num_assistant_tokens=3) drafted 5 a step
        (3, "4.40.0", {"SG301": "warn", "SG307": "warn", "D": "3"}),
        # 4.35.0, the first release with num_assistant_tokens (utils.py assisted_decoding:
        # num_assistant_tokens = assistant_model.generation_config.num_assistant_tokens)
        (3, "4.35.0", {"SG301": "warn", "SG307": "warn", "D": "3"}),
        # 4.34.1: no such setting (outside the lifetime): read as given, nothing said
        (3, "4.34.1", {"D": "3"}),
        # not pinned: ignored at every release from 4.35.0, but the default served is 5 or
        # 20 by release, so the mismatch is a warning (the claims file's D is used)
        (5, None, {"SG301": "warn", "SG307": "warn", "D": "5"}),
    ],
)
def test_num_assistant_tokens_given_to_generate_by_release(
    tmp_path: Path, k: int, version: str | None, expected: dict[str, str]
) -> None:
    assert _kwarg_script(tmp_path, k, version) == expected


def test_default_draft_length_of_a_hub_assistant_warns_naming_its_generation_config(
    tmp_path: Path,
) -> None:
    """The served-default D of an assistant whose generation_config.json is not read
    (a hub id) rests on an assumption: from_pretrained loads that file (transformers
    5.19.0 generation/utils.py, GenerationConfig.from_pretrained), which may set
    num_assistant_tokens. SG301 warns and names the file (docs/trust.md)."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "gen.py").write_text(GENERATE_KWARG.format(k=5), encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: chat\n"
        "    speculation: {enabled: true, engine: transformers, engine_config: gen.py,\n"
        '      draft_length: 5, engine_version: "4.56.1"}\n',
        encoding="utf-8",
    )
    report = check_file(tmp_path / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (sg301,) = [f for f in report.all_findings() if f.code == "SG301"]
    assert sg301.severity == "warn"
    said = f"{sg301.message} {sg301.details}"
    assert "Qwen/Qwen2.5-0.5B-Instruct's generation_config.json" in said, said
    assert "may set num_assistant_tokens" in said
