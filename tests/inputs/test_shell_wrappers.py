"""Engine commands wrapped in ``sh -c 'SCRIPT'`` (``bash -lc`` …), as Compose and
Kubernetes launchers write them to run a setup step first: the script's commands are
read like any other command line. Each word of the script is placed at the script's
own word (line and column read off the input by hand)."""

from __future__ import annotations

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_config
from specgate.load.document import Document, Span
from specgate.load.yaml_loader import load_yaml_documents

SC = '{\\"method\\": \\"ngram\\", \\"num_speculative_tokens\\": 4}'


def _yaml(text: str) -> tuple[str | None, int | None, str | None, Span | None]:
    doc = load_yaml_documents(text, "compose.yaml")
    c = read_engine_config(doc, shown="compose.yaml", pointer=None, engine=None, text=text)
    return c.mechanism, c.draft_length, c.target_model, c.spans.get("draft_length")


def test_bash_lc_in_a_literal_block() -> None:
    text = (
        "services:\n  v:\n    command: |\n"
        f'      bash -lc "pip install x && vllm serve --port 8000 '
        f"--speculative-config '{SC}' m/L\"\n"
    )
    # "      bash -lc " is 15 characters: the script's word starts at column 16
    assert _yaml(text) == ("ngram", 4, "m/L", Span(4, 16))


def test_sh_c_in_a_text_file_with_a_variable_inside() -> None:
    text = "set -e\nsh -c 'LLAMA_ARG_SPEC_TYPE=draft-mtp llama-server -hf org/model-GGUF'\n"
    doc = Document(file="run.sh", data=text)
    c = read_engine_config(doc, shown="run.sh", pointer=None, engine=None, text=text)
    assert (c.engine, c.mechanism, c.draft_length, c.target_model) == (
        "llamacpp",
        "mtp",
        3,  # the --spec-* builds' default draft length (data/engines/llamacpp.json)
        "org/model-GGUF",
    )
    assert c.spans["mechanism"] == Span(2, 7)  # "sh -c " is 6 characters


@pytest.mark.parametrize("script", ["echo 'unbalanced", "true"])
def test_a_script_with_no_engine_command_configures_nothing(script: str) -> None:
    text = f'services:\n  v:\n    command: bash -c "{script}"\n'
    with pytest.raises(InputError, match="no speculative decoding configured"):
        _yaml(text)
