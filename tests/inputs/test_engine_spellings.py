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

import pytest

from specgate.inputs.cmdline import canonical_flag
from specgate.inputs.engines import llamacpp, read_engine_config, vllm
from specgate.inputs.parsers import engine_spelling
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
    # vLLM 0.6.1 had --speculative-model and --num-speculative-tokens (removed in 0.8.0:
    # PR #15466); its parser read the '_' spellings as them. Before: the newest recorded
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
    assert len(new) == 2 and all(s is None and "removed in vLLM 0.8.0" in m for s, m in new)


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
    config = _read(
        "llamacpp", "llama-server -m t.gguf -md d.gguf --draft_max 8 --draft-min 1", "b4000"
    )
    assert config.draft_length == 8  # type: ignore[attr-defined]
    assert _sg310(config) == []
