"""Finding the one speculative configuration in a document
(docs/claims-file.md#referenced-files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import load_engine_document, read_engine_config, read_engine_file
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document
from specgate.load.read import parse_text

TWO = (
    "servers:\n"
    "  fast:\n"
    "    speculative_config: {method: eagle3, model: d, num_speculative_tokens: 3}\n"
    "  wide:\n"
    "    args: [--speculative-algorithm, EAGLE, --speculative-num-steps, '2',\n"
    "           --speculative-eagle-topk, '1', --speculative-num-draft-tokens, '3']\n"
)


def yaml(text: str, *, pointer: str | None = None, engine: str | None = None) -> EngineConfig:
    doc = parse_text(text, "f.yaml", json_syntax=False)
    return read_engine_config(doc, shown="f.yaml", pointer=pointer, engine=engine, text=text)


def test_several_configurations_list_their_pointers() -> None:
    with pytest.raises(InputError) as err:
        yaml(TWO)
    message = str(err.value)
    assert message.startswith("f.yaml: 2 speculative configurations in f.yaml:")
    assert "/servers/fast [vllm]" in message
    assert "/servers/wide/args [sglang]" in message


def test_pointer_selects_one() -> None:
    c = yaml(TWO, pointer="/servers/wide/args")
    # EAGLE with no --speculative-draft-model-path: SGLang drafts with the target's own
    # MTP layers (server_args.py _handle_eagle_family), so the mechanism is MTP
    assert (c.engine, c.mechanism, c.draft_length, c.verify_tokens) == ("sglang", "mtp", 2, 3)
    assert c.pointer == "/servers/wide/args"
    assert c.spans["draft_length"].line == 5


def test_engine_narrows_the_search() -> None:
    assert yaml(TWO, engine="vllm").pointer == "/servers/fast"


def test_unknown_engine() -> None:
    with pytest.raises(InputError, match="unknown engine 'lmdeploy'"):
        yaml(TWO, engine="lmdeploy")


def test_none_configured() -> None:
    with pytest.raises(
        InputError, match=r"^f\.yaml: no speculative decoding configured in f\.yaml$"
    ):
        yaml("model: m\ntensor_parallel_size: 2\nguide: |\n  vllm serve m --tp 2\n")


def test_bad_pointer() -> None:
    with pytest.raises(InputError, match="no key 'nope'"):
        yaml(TWO, pointer="/servers/nope")


def test_command_in_a_yaml_scalar_and_json_in_a_scalar() -> None:
    c = yaml(
        'job:\n  run: >-\n    vllm serve m\n    --speculative-config \'{"method": "mtp", '
        '"num_speculative_tokens": 1}\'\n'
    )
    assert (c.mechanism, c.draft_length, c.pointer) == ("mtp", 1, "/job/run")
    assert c.spans["draft_length"].line == 4  # the JSON word, found in the folded block
    c = yaml(
        'server_parameters: \'{"speculative_config": {"method": "eagle", "model": "e",'
        ' "num_speculative_tokens": 2}, "tensor_parallel_size": 2}\'\n'
    )
    assert (c.mechanism, c.draft_length, c.tensor_parallel_size) == ("eagle", 2, 2)
    assert c.spans["draft_length"].line == 1


def test_two_commands_in_one_string() -> None:
    text = (
        'vllm serve a --speculative-config \'{"method": "mtp", "num_speculative_tokens": 1}\'\n'
        'vllm serve b --speculative-config \'{"method": "mtp", "num_speculative_tokens": 2}\'\n'
    )
    with pytest.raises(InputError, match=r"/ \(command 1\) \[vllm\], / \(command 2\) \[vllm\]"):
        read_engine_config(Document("x.txt", text), shown="x.txt", pointer=None, engine=None)


def test_load_engine_document_reads_text_files_whole(tmp_path: Path) -> None:
    script = tmp_path / "launch.sh"
    script.write_text(
        "#!/bin/sh\n# launch\npython -m sglang.launch_server \\\n"
        "  --speculative-algorithm EAGLE3 --speculative-num-steps 1 \\\n"
        "  --speculative-eagle-topk 1 --speculative-num-draft-tokens 2\n"
    )
    doc = load_engine_document(script, "launch.sh")
    assert isinstance(doc.data, str)
    c = read_engine_file(script, "launch.sh")
    assert (c.draft_length, c.verify_tokens) == (1, 2)
    assert c.spans["draft_length"].line == 4
    with pytest.raises(InputError, match="no such file"):
        load_engine_document(tmp_path / "missing.txt", "missing.txt")


def test_unsplittable_text_file_is_an_input_error() -> None:
    with pytest.raises(InputError, match="cannot split command line"):
        read_engine_config(
            Document("x.txt", "vllm serve --speculative-config 'oops"),
            shown="x.txt",
            pointer=None,
            engine=None,
        )


def test_given_engine_that_finds_nothing_names_what_the_file_configures() -> None:
    text = "model: m\nspeculative-config:\n  method: eagle3\n  num_speculative_tokens: 7\n"
    doc = parse_text(text, "serve.yaml", json_syntax=False)
    with pytest.raises(InputError) as info:
        read_engine_config(doc, shown="serve.yaml", pointer=None, engine="sglang", text=text)
    assert info.value.reason == (
        "no sglang speculative configuration in serve.yaml "
        "(it configures vllm at /speculative-config)"
    )


def test_given_engine_names_a_command_line_of_another_engine() -> None:
    text = "args: [--speculative-algorithm, EAGLE, --speculative-num-steps, '3']\n"
    doc = parse_text(text, "s.yaml", json_syntax=False)
    with pytest.raises(InputError) as info:
        read_engine_config(doc, shown="s.yaml", pointer="/args", engine="vllm", text=text)
    assert info.value.reason == (
        "no vllm speculative configuration in s.yaml at /args (it configures sglang at /args)"
    )


def test_given_engine_in_a_file_without_any_configuration_keeps_the_plain_message() -> None:
    doc = parse_text("model: m\n", "serve.yaml", json_syntax=False)
    with pytest.raises(InputError) as info:
        read_engine_config(doc, shown="serve.yaml", pointer=None, engine="sglang")
    assert info.value.reason == "no speculative decoding configured in serve.yaml"
