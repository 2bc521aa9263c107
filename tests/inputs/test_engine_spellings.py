"""Spellings normalised as each engine's parser does before any lookup (issue 27).

vLLM's ``FlexibleArgumentParser.parse_args`` rewrites ``_`` to ``-`` in a ``--`` word's
name before argparse reads it (vllm-project/vllm:vllm/utils.py@v0.6.1,
vllm/utils/argparse_utils.py@v0.27.1 and @v0.32.0); llama.cpp's
``common_params_parse_ex`` does so too before its exact lookup
(ggml-org/llama.cpp:common/arg.cpp@0c1e57098). The version-aware lookup compares those
normalised names, so a pinned release is judged by its own flags, not by the newest
recorded parser.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.inputs.cmdline import canonical_flag, resolve_flag
from specgate.inputs.engines import llamacpp, mlxlm, read_engine_config, sglang, vllm
from specgate.inputs.knowledge import knowledge, parse_version
from specgate.inputs.parsers import engine_spelling, recorded_parser
from specgate.load.document import Document


def _read(engine: str, command: str, version: str | None) -> object:
    return read_engine_config(
        Document("cmd.txt", command), shown="cmd.txt", pointer=None, engine=engine,
        engine_version=version,
    )


def _sg310(config: object) -> list[tuple[str | None, str]]:
    issues = config.issues  # type: ignore[attr-defined]
    return [(i.severity, i.message) for i in issues if i.code == "SG310"]


@pytest.mark.parametrize(
    ("word", "spelled"),
    [
        ("--speculative_model", "--speculative-model"),
        ("--num_speculative_tokens=3", "--num-speculative-tokens=3"),
        # 0.27.1 / 0.32.0: only the name before the first '.' (dotted JSON keys keep '_')
        ("--speculative_config.prompt_lookup_max", "--speculative-config.prompt_lookup_max"),
        ("-tp_x", "-tp_x"),  # single-dash words are passed on as written
        ("--a=b_c", "--a=b_c"),  # the value is not rewritten
    ],
)
def test_vllm_spelling_rewrite(word: str, spelled: str) -> None:
    assert engine_spelling(word, underscores=True) == spelled
    assert engine_spelling(word, underscores=False) == word


def test_an_underscore_spelling_at_a_pinned_old_vllm_is_judged_by_its_own_flags() -> None:
    # vLLM 0.6.1 had --speculative-model and --num-speculative-tokens (removed in 0.8.3:
    # the 0.8.2 wheel has them, the 0.8.3 wheel not: test_vllm_old_releases.py); its
    # parser read the '_' spellings as them. Before: the newest recorded
    # parser (0.32.0) judged the raw words and warned "unrecognized arguments".
    underscores = "vllm serve m --speculative_model d --num_speculative_tokens 3"
    dashes = "vllm serve m --speculative-model d --num-speculative-tokens 3"
    old = _read("vllm", underscores, "0.6.1")
    assert _sg310(old) == []
    assert old.draft_length == 3  # type: ignore[attr-defined]
    for version in ("0.6.1", "0.32.0", None):
        # the same findings as the '-' spelling, word for word but the spelling
        assert [(s, m.replace("_", "-")) for s, m in _sg310(_read("vllm", underscores, version))] \
            == [(s, m.replace("_", "-")) for s, m in _sg310(_read("vllm", dashes, version))]
    # at 0.32.0 they are removed flags (fail), named once each, not also "unrecognized"
    new = _sg310(_read("vllm", underscores, "0.32.0"))
    # Contract change: "removed in vLLM 0.8.0" was wrong (0.8.0-0.8.2 have them)
    assert len(new) == 2 and all(s is None and "removed in vLLM 0.8.3" in m for s, m in new)


def test_an_ambiguous_vllm_prefix_is_the_engines_refusal() -> None:
    # vLLM 0.32.0's recorded parser: "--max-" could match --max-log-len, --max-model-len, …
    # (argparse refuses it: exit 2). Before: read as --max-model-len 5.
    command = "vllm serve m --max- 5 --speculative-config '{\"method\":\"ngram\"," \
        "\"num_speculative_tokens\":3}'"
    for version, severity in (("0.32.0", None), ("0.27.1", None), (None, "warn")):
        config = _read("vllm", command, version)
        assert config.max_model_len is None  # type: ignore[attr-defined]
        (refusal,) = _sg310(config)
        assert refusal[0] == severity
        assert "ambiguous option: --max- could match --max-log-len, --max-model-len" in refusal[1]
    # a docker word before the image is not the engine's: not judged by its parser
    docker = "docker run --max- 1 vllm/vllm-openai:v0.32.0 --model m " \
        "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'"
    assert _sg310(_read("vllm", docker, "0.32.0")) == []


def test_llamacpp_reads_underscores_as_dashes() -> None:
    # common/arg.cpp: '_' -> '-' in a '--' word, then an exact lookup; --draft_max is
    # --draft-max (a flag of builds before the --spec-* rename), not "invalid argument"
    assert canonical_flag("--draft_max", llamacpp.FLAGS) == "--draft-max"
    assert canonical_flag("--draft_max", vllm.FLAGS) == "--draft-max"
    # Contract change: b4295, not b4000, whose llama-server had neither -md nor
    # --draft-max (common/arg.cpp @74d73dc8, b4094; both at 26a8406b, b4295)
    config = _read(
        "llamacpp", "llama-server -m t.gguf -md d.gguf --draft_max 8 --draft-min 1", "b4295"
    )
    assert config.draft_length == 8  # type: ignore[attr-defined]
    assert _sg310(config) == []


def test_llamacpp_refuses_a_flag_written_with_its_value() -> None:
    # common/arg.cpp parse_cli_args: the whole word is looked up in arg_to_options, so
    # --draft-max=8 is "error: invalid argument: --draft-max=8" (no --flag=value form);
    # it was read as D 8. Now SG310 (a fail: the server does not start) at the word, and
    # --draft-max is not read from it (the build's default stands, as for any refused word)
    command = "llama-server -m t.gguf -md d.gguf --draft-max=8 --draft-min 1"
    config = _read("llamacpp", command, "b4295")  # Contract change: was b4000 (above)
    assert config.draft_length != 8  # type: ignore[attr-defined]
    ((severity, message),) = _sg310(config)
    assert severity is None and "--draft-max=8" in message
    # a flag outside the spec namespaces too (-m=t.gguf is no model path)
    config = _read("llamacpp", "llama-server -m=t.gguf -md d.gguf --draft-max 8", "b4295")
    assert config.draft_length == 8  # type: ignore[attr-defined]
    assert [m for _, m in _sg310(config) if "-m=t.gguf" in m]
    # vLLM (argparse) reads --flag=value
    spec_config = _read("vllm", "vllm serve m --speculative-config='{\"method\":\"ngram\","
                        "\"num_speculative_tokens\":3}'", "0.32.0")
    assert spec_config.draft_length == 3  # type: ignore[attr-defined]


# --- the rule is the engine's data (flag_spelling), checked against the parsers run ---

_RULES = ("vllm", "sglang", "llamacpp", "trtllm", "tgi", "mlxlm")


@pytest.mark.parametrize("engine", _RULES)
def test_every_engine_with_a_command_line_states_its_spelling_rule(engine: str) -> None:
    rule = knowledge(engine).flag_spelling
    assert rule["underscores"] in ("none", "name", "name-before-dot")
    assert rule["abbreviations"] in ("argparse", "none")
    assert rule["source"]["file"]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_spelling_rule_agrees_with_every_recorded_parser(engine: str) -> None:
    # scripts/record_engine_parsers.py ran each release's own parser: whether it took
    # '--num_speculative_tokens'-style words (underscores) and its allow_abbrev
    data = knowledge(engine)
    rule = data.flag_spelling
    for version in data.parser_versions:
        parser = recorded_parser(engine, version)
        assert parser.underscores == (rule["underscores"] != "none"), version
        assert parser.allow_abbrev == (rule["abbreviations"] == "argparse"), version


def test_the_readers_flags_follow_the_data_rule() -> None:
    # vLLM: '_' -> '-' up to the first '.', abbreviations by the recorded parser
    assert vllm.FLAGS.underscores and vllm.FLAGS.underscores_to_dot
    assert vllm.FLAGS.allow_abbrev and vllm.FLAGS.engine_parser is not None
    # SGLang: words as written (argparse, no rewrite), abbreviations by its parser
    assert not sglang.FLAGS.underscores and sglang.FLAGS.allow_abbrev
    # llama.cpp: the whole name rewritten, exact lookup
    assert llamacpp.FLAGS.underscores and not llamacpp.FLAGS.underscores_to_dot
    assert not llamacpp.FLAGS.allow_abbrev
    # mlx_lm.server's argparse allows abbreviations, but its whole parser was not
    # recorded: a prefix is not read as one of the few flags specgate lists
    assert not mlxlm.FLAGS.allow_abbrev
    for engine in ("trtllm", "tgi"):
        spec = knowledge(engine).flags()
        assert not spec.underscores and not spec.allow_abbrev


@pytest.mark.parametrize(
    "word",
    [
        "--speculative_model",
        "--speculative_config.num_speculative_tokens",  # the key after '.' keeps '_'
        "--speculative-config.prompt_lookup_max",
        "--a_b.c_d.e_f",
        "--max_model_len",
        "-tp_x",
    ],
)
def test_vllm_lookup_spelling_is_the_engines_rewrite(word: str) -> None:
    # canonical_flag (the data lookup) and engine_spelling (the recorded parser's
    # input) spell a name alike: vllm/utils/argparse_utils.py@v0.32.0,
    # re.compile(r"(?<=--)[^\.]*") with '_' -> '-'
    assert canonical_flag(word, vllm.FLAGS) == engine_spelling(word, underscores=True)


def test_llamacpp_rewrites_the_whole_name() -> None:
    # common_params_parse_ex: std::replace over the whole '--' word, '.' included
    assert canonical_flag("--a_b.c_d", llamacpp.FLAGS) == "--a-b.c-d"


def test_trtllm_serve_options_are_matched_exactly_as_click_does() -> None:
    # trtllm-serve is a click command without context_settings
    # (NVIDIA/TensorRT-LLM:tensorrt_llm/commands/serve.py@00209af1): click itself is the
    # oracle for '_' spellings and prefixes of its option names
    click = pytest.importorskip("click")
    from click.testing import CliRunner

    @click.command("serve")
    @click.argument("model", type=str)
    @click.option("--tensor_parallel_size", "--tp_size", type=int, default=1)
    @click.option("--config", "--extra_llm_api_options", "extra_llm_api_options", type=str)
    def serve(model: str, tensor_parallel_size: int, extra_llm_api_options: str | None) -> None:
        click.echo(f"{tensor_parallel_size} {extra_llm_api_options}")

    def run(*words: str) -> tuple[int, str]:
        result = CliRunner().invoke(serve, ["m", *words])
        return result.exit_code, result.output

    assert run("--tp_size", "4") == (0, "4 None\n")
    assert run("--extra_llm_api_options", "a.yaml") == (0, "1 a.yaml\n")
    spec = knowledge("trtllm").flags()
    for word in ("--tp-size", "--tp_s", "--extra-llm-api-options", "--extra_llm"):
        code, output = run(word, "4")
        assert code == 2 and "No such option" in output, word
        assert resolve_flag(word, spec) is None, word
    assert resolve_flag("--extra_llm_api_options", spec) == "--extra_llm_api_options"


# --- an abbreviation is read by the parser of the version in force ---

_ORACLE = Path(__file__).parent.parent / "data" / "engine_oracle"


def _recorded_answers(engine: str, version: str) -> list[dict[str, object]]:
    """The engine's own answers to command-line words, recorded by running its parser
    at that release (scripts/record_engine_parsers.py)."""
    raw = json.loads((_ORACLE / f"parser-{engine}-{version}.json").read_text())
    return list(raw["records"])


@pytest.mark.parametrize(
    ("engine", "version"),
    [("sglang", v) for v in knowledge("sglang").parser_versions]
    + [("vllm", v) for v in knowledge("vllm").parser_versions],
)
def test_flags_at_a_version_read_words_as_that_release_did(engine: str, version: str) -> None:
    # every recorded word: one the release read as a flag specgate reads is that flag
    # at that release (whatever the newest parser says); one it refused is no flag
    data = knowledge(engine)
    spec = data.flags_at(data.flags(), parse_version(version))
    known = set(spec.known) | set(spec.aliases)
    for record in _recorded_answers(engine, version):
        word = str(record["word"])
        answer = record["answer"]
        assert isinstance(answer, dict)
        got = resolve_flag(word, spec)
        if answer["status"] == "ok" and answer.get("read_as") in known:
            flag = str(answer["read_as"])
            assert got == spec.aliases.get(flag, flag), (version, word)
        elif answer["status"] == "refused":
            assert got is None, (version, word)


def test_sglang_pinned_at_0_5_10_reads_its_own_abbreviation() -> None:
    # parser-sglang-0.5.10.json: '--speculative-e' read_as --speculative-eagle-topk;
    # parser-sglang-0.5.23.json: 'ambiguous option: --speculative-e could match
    # --speculative-eagle-topk, --speculative-enable-w4a4-mxfp4-megamoe' (exit 2).
    # Before: the 0.5.23 parser read the word at every pinned version, so 0.5.10 lost
    # topk 4 and failed "refuses to start: speculative_num_steps without
    # speculative_eagle_topk", a refusal 0.5.10 never made for this command.
    command = (
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
        "--speculative-draft-model-path d --speculative-num-steps 3 "
        "--speculative-num-draft-tokens 8 --speculative-e 4"
    )
    old = _read("sglang", command, "0.5.10")
    assert [i for i in old.issues if i.severity != "warn"] == []  # type: ignore[attr-defined]
    values = old.resolution["engine_values"]  # type: ignore[attr-defined]
    assert values["speculative_eagle_topk"] == 4
    new = _read("sglang", command, "0.5.23")
    assert any(
        "ambiguous option: --speculative-e could match --speculative-eagle-topk" in m
        for _, m in _sg310(new)
    )


def test_vllm_pinned_at_0_19_1_reads_its_own_abbreviation() -> None:
    # the recorded parsers: 0.19.1 has --quantization and no --quantization-config
    # (--qu is --quantization there), 0.32.0 has both (--qu is ambiguous, exit 2)
    assert recorded_parser("vllm", "0.19.1").read("--qu") == ("flag", ("--quantization",))
    assert recorded_parser("vllm", "0.32.0").read("--qu")[0] == "ambiguous"
    data = knowledge("vllm")
    assert resolve_flag("--qu", data.flags_at(vllm.FLAGS, (0, 19, 1))) == "--quantization"
    assert resolve_flag("--qu", data.flags_at(vllm.FLAGS, (0, 32, 0))) is None
    assert resolve_flag("--qu", data.flags_at(vllm.FLAGS, None)) is None  # the newest


_EAGLE = (
    "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE "
    "--speculative-draft-model-path d --speculative-num-steps 3 "
    "--speculative-num-draft-tokens 8 --speculative-e 4"
)


def test_a_word_only_some_releases_read_narrows_an_unknown_version() -> None:
    # the recorded answers to '--speculative-e' (tests/data/engine_oracle/parser-sglang-*):
    # read_as --speculative-eagle-topk at 0.5.10, 0.5.13, 0.5.15, 0.5.18, 0.5.20 and
    # 0.5.21; 'ambiguous option' at 0.5.23. Unpinned, the command runs only where it
    # is read, so it is read as 0.5.21 reads it (the newest such release), as a removed
    # flag is. Before: read by 0.5.23's parser, topk was lost and specgate failed
    # "refuses to start: speculative_num_steps without speculative_eagle_topk" on a
    # guessed version.
    config = _read("sglang", _EAGLE, None)
    values = config.resolution["engine_values"]  # type: ignore[attr-defined]
    assert values["speculative_eagle_topk"] == 4
    at = config.version_in_force  # type: ignore[attr-defined]
    assert (at.version, at.implied) == (None, (0, 5, 21))
    assert [i.severity for i in config.issues] == ["warn"]  # type: ignore[attr-defined]
    (refusal,) = _sg310(config)
    assert "ambiguous option: --speculative-e could match" in refusal[1]
    assert any("imply 0.5.21 or earlier" in n for n in config.notes)  # type: ignore[attr-defined]


def test_parser_bounds_by_hand() -> None:
    from specgate.inputs.cmdline import Command
    from specgate.inputs.engines import settings
    from specgate.inputs.engines._source import CommandSource
    from specgate.load.document import Span

    argv = tuple(_EAGLE.split())
    source = CommandSource(Command(argv), tuple(Span(1, i + 1) for i in range(len(argv))), "f")
    (used,) = settings.parser_bounds(knowledge("sglang"), sglang.FLAGS, source)
    # present 0.5.10–0.5.21, absent 0.5.22 (0.5.22's recorded parser: ambiguous with
    # --speculative-enable-w4a4-mxfp4-megamoe): no lower bound; from 0.5.22 not read, and
    # 0.5.21 the newest known to read it
    assert used.spelled == "--speculative-e"
    assert (used.low, used.sure_low, used.high, used.sure_high) == (
        None, None, (0, 5, 22), (0, 5, 21)
    )
    # without such a word nothing narrows
    plain = CommandSource(Command(argv[:-2]), source.spans[:-2], "f")
    assert settings.parser_bounds(knowledge("sglang"), sglang.FLAGS, plain) == []


def test_a_pinned_release_between_two_readings_warns() -> None:
    # A pinned release no parser was recorded for (0.5.21.post1, a tag between two
    # recorded releases): 0.5.21 reads '--speculative-e' as --speculative-eagle-topk,
    # 0.5.22 refuses it as ambiguous (the recorded answers). Read as the nearest recorded
    # release before it reads it, with a warn; a recorded pinned release (0.5.21) says
    # nothing, and 0.5.22 refuses (fail).
    config = _read("sglang", _EAGLE, "0.5.21.post1")
    values = config.resolution["engine_values"]  # type: ignore[attr-defined]
    assert values["speculative_eagle_topk"] == 4
    ((severity, message),) = _sg310(config)
    assert severity == "warn"
    assert "--speculative-e is --speculative-eagle-topk to SGLang 0.5.21" in message
    assert "SGLang 0.5.22 refuses it ('error: ambiguous option: --speculative-e" in message
    ((severity, message),) = _sg310(_read("sglang", _EAGLE, "0.5.22"))
    assert severity is None and "SGLang 0.5.22 refuses to start" in message
    assert _sg310(_read("sglang", _EAGLE, "0.5.21")) == []
