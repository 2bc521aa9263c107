"""A llama.cpp command whose only speculative flag is written ``--flag=value`` is still the
deployment's configuration, refused at the word (docs/engines.md#flag-spellings).

llama.cpp has no ``--flag=value`` form: common_params_parse_ex looks the whole word up in
``arg_to_options`` and throws "error: invalid argument: %s" for one it lacks
(ggml-org/llama.cpp common/arg.cpp@145b6280d6aa1890e22457143dad0badb3fd6820), so
``--model-draft=d.gguf`` stops the server. specgate said "no speculative decoding configured"
(SG312 warn): the word named no flag, so the command configured nothing it could see. It now
names the configuration meant and fails SG310 at the word, as ``--draft-max=8`` beside a
two-word ``-md d.gguf`` does (tests/inputs/test_engine_spellings.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.test_exit2_degrade import _check

FIRST = (
    "    model: {name: org/m}\n"
    "    speculation: {enabled: true, mechanism: draft_model, draft_length: 4,"
    " engine_config: llama.sh}\n"
)


@pytest.mark.parametrize(
    ("command", "column"),
    [
        # "llama-server -m t.gguf " is 23 characters: the word starts at column 24
        ("llama-server -m t.gguf --model-draft=d.gguf\n", 24),
        ("llama-server -m t.gguf -md=d.gguf\n", 24),
        ("llama-server -m t.gguf --spec-type=ngram-mod\n", 24),
        # '_' is read as '-' before the lookup, the word is still refused whole
        ("llama-server -m t.gguf --spec_type=ngram-mod\n", 24),
    ],
)
def test_an_equals_flag_alone_is_refused_at_its_word(
    tmp_path: Path, command: str, column: int
) -> None:
    report = _check(tmp_path, FIRST, {"llama.sh": command})
    findings = report.deployments[0].findings
    assert not [f for f in findings if f.code == "SG312"]
    (refused,) = [f for f in findings if f.code == "SG310"]
    word = command.split()[3]
    assert (refused.severity, refused.file, refused.line, refused.column) == (
        "fail", "llama.sh", 1, column
    )
    assert word in refused.message


def test_two_words_are_read_as_before(tmp_path: Path) -> None:
    report = _check(tmp_path, FIRST, {"llama.sh": "llama-server -m t.gguf -md d.gguf\n"})
    codes = {f.code for f in report.deployments[0].findings}
    assert not codes & {"SG310", "SG312"}
