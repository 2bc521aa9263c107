"""The served (target) model of a ``vllm serve`` command, wherever the positional
model tag stands among the options, and in the containers that run it.

Engine sources (recorded in specgate/data/engines/vllm.json):
- ``vllm/entrypoints/openai/cli_args.py`` @789340fb ``make_arg_parser``: ``model_tag``
  is an argparse positional with ``nargs="?"``, so argparse takes the first word that
  no option consumes, before or after the options, and the word after ``--``;
- ``vllm/engine/arg_utils.py`` @99d7eb5d ``_compute_kwargs``: bool fields become
  ``argparse.BooleanOptionalAction`` (``--enforce-eager``, ``--no-enable-prefix-caching``
  take no value), list fields ``nargs="+"`` (``--served-model-name a b`` takes every
  following word); every other option takes one value;
- ``docker/Dockerfile`` @dead20ba: the ``vllm-openai`` image's ENTRYPOINT is
  ``["vllm", "serve"]``; Compose ``command``/Kubernetes ``args`` are appended to the
  entrypoint/``command``.

Each expected model and span is read off the input by hand (the model word's line and
1-based column).
"""

from __future__ import annotations

import argparse

import pytest

from specgate.inputs.engines import read_engine_config
from specgate.inputs.engines.target import arity, interspersed_model
from specgate.load.document import Document, Span
from specgate.load.yaml_loader import load_yaml_documents

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
SC = (
    '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", '
    '"num_speculative_tokens": 3}'
)


def _command(text: str) -> tuple[str | None, Span | None]:
    doc = Document(file="serve.sh", data=text)
    config = read_engine_config(doc, shown="serve.sh", pointer=None, engine=None, text=text)
    assert config.engine == "vllm"
    assert config.draft_length == 3  # the speculative block is read either way
    return config.target_model, config.spans.get("target_model")


def _yaml(text: str) -> tuple[str | None, Span | None]:
    doc = load_yaml_documents(text, "serve.yaml")
    config = read_engine_config(doc, shown="serve.yaml", pointer=None, engine=None, text=text)
    assert config.engine == "vllm"
    return config.target_model, config.spans.get("target_model")


@pytest.mark.parametrize(
    "options",
    [
        # the model after every option (the form of issue 8's closing note)
        f"--port 8000 --speculative-config '{SC}'",
        # after a switch: BooleanOptionalAction takes no value
        f"--enforce-eager --speculative-config '{SC}'",
        # the --no- form of a BooleanOptionalAction switch
        f"--speculative-config '{SC}' --no-enable-prefix-caching",
        # --flag=value takes no following word
        f"--port=8000 --speculative-config='{SC}'",
        # a short alias with its value
        f"-tp 2 --speculative-config '{SC}'",
        # a negative number is a value, not an option (argparse)
        f"--seed -1 --speculative-config '{SC}'",
        # dotted keys of the JSON option each take one value
        "--speculative-config.method eagle3 "
        "--speculative-config.model yuhuili/EAGLE3-LLaMA3.1-Instruct-8B "
        "--speculative-config.num_speculative_tokens 3",
        # an nargs="+" option ends at the next option; `--` ends all options
        f"--served-model-name a b --speculative-config '{SC}' --",
    ],
)
def test_model_tag_on_its_own_line_after_options(options: str) -> None:
    text = f"vllm serve {options} \\\n  {LLAMA}\n"
    assert _command(text) == (LLAMA, Span(2, 3))


def test_model_tag_between_options() -> None:
    text = f"vllm serve --port 8000 {LLAMA} --speculative-config '{SC}'\n"
    # "vllm serve --port 8000 " is 23 characters: the model starts at column 24
    assert _command(text) == (LLAMA, Span(1, 24))


@pytest.mark.parametrize(
    "text",
    [
        # nargs="+": --served-model-name takes the model word too; vLLM then serves
        # its default model, not this one
        f"vllm serve --served-model-name x {LLAMA} --speculative-config '{SC}'\n",
        # a flag the data does not know is read as taking a value: no guess
        f"vllm serve --some-future-switch {LLAMA} --speculative-config '{SC}'\n",
        # every word is an option or a value
        f"vllm serve --port 8000 --speculative-config '{SC}'\n",
    ],
)
def test_no_model_is_taken_from_a_value(text: str) -> None:
    assert _command(text) == (None, None)


def test_model_option_after_options() -> None:
    text = f"vllm serve --port 8000 \\\n  --model {LLAMA} \\\n  --speculative-config '{SC}'\n"
    assert _command(text) == (LLAMA, Span(2, 11))


def test_positional_wins_over_model_option() -> None:
    # ServeSubcommand.cmd: a model_tag, when given, replaces --model
    text = f"vllm serve --model other/model --speculative-config '{SC}' \\\n  {LLAMA}\n"
    assert _command(text) == (LLAMA, Span(2, 3))


def test_walker_agrees_with_argparse() -> None:
    # The same argv through a real argparse parser declared as vLLM declares these
    # options (nargs="?" positional, BooleanOptionalAction, nargs="+", one value).
    parser = argparse.ArgumentParser()
    parser.add_argument("model_tag", nargs="?")
    parser.add_argument("--enforce-eager", action=argparse.BooleanOptionalAction)
    parser.add_argument("--served-model-name", nargs="+")
    parser.add_argument("--port")
    parser.add_argument("--seed")
    flags = arity("vllm")
    for argv in (
        ["--port", "8000", "M"],
        ["--enforce-eager", "M", "--port", "1"],
        ["--no-enforce-eager", "M"],
        ["--served-model-name", "a", "b", "--port", "1", "M"],
        ["--served-model-name", "a", "--", "M"],
        ["--seed", "-1", "M"],
        ["--port=1", "M"],
    ):
        index = interspersed_model(argv, 0, flags)
        assert index is not None
        assert argv[index] == parser.parse_args(argv).model_tag == "M", argv


KUBERNETES = f"""\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          command: ["vllm", "serve"]
          args:
            - --port
            - "8000"
            - --speculative-config
            - '{SC}'
            - {LLAMA}
"""


def test_kubernetes_args_after_command() -> None:
    # args are appended to command: vllm serve --port 8000 --speculative-config … MODEL
    assert _yaml(KUBERNETES) == (LLAMA, Span(15, 15))


def test_kubernetes_model_in_command() -> None:
    text = KUBERNETES.replace(
        'command: ["vllm", "serve"]', f'command: ["vllm", "serve", "{LLAMA}"]'
    ).replace(f"            - {LLAMA}\n", "")
    # line 9 is `          command: ["vllm", "serve", "meta-llama/…"]`: the third item
    # starts at column 38
    assert _yaml(text) == (LLAMA, Span(9, 38))


COMPOSE = f"""\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: >
      --port 8000 --speculative-config '{SC}'
      {LLAMA}
"""


def test_compose_command_after_image_entrypoint() -> None:
    # the image's ENTRYPOINT is ["vllm", "serve"]; the command is appended to it
    assert _yaml(COMPOSE) == (LLAMA, Span(6, 7))


def test_compose_entrypoint_replaces_the_image_entrypoint() -> None:
    own = '    entrypoint: ["python3", "launch.py"]\n    command: >'
    assert _yaml(COMPOSE.replace("    command: >", own)) == (None, None)
    text = COMPOSE.replace("    command: >", '    entrypoint: ["vllm", "serve"]\n    command: >')
    assert _yaml(text) == (LLAMA, Span(7, 7))


def test_an_image_without_known_entrypoint_names_no_model() -> None:
    text = COMPOSE.replace("vllm/vllm-openai:v0.11.0", "example.com/my-vllm:1")
    assert _yaml(text) == (None, None)


def test_docker_run_appends_to_the_image_entrypoint() -> None:
    text = (
        "docker run --gpus all -p 8000:8000 --ipc=host \\\n"
        "  vllm/vllm-openai:v0.11.0 \\\n"
        f"  --port 8000 --speculative-config '{SC}' \\\n"
        f"  {LLAMA}\n"
    )
    assert _command(text) == (LLAMA, Span(4, 3))
    replaced = text.replace("--ipc=host", "--ipc=host --entrypoint python3")
    assert _command(replaced) == (None, None)


def test_a_long_command_is_walked_once() -> None:
    # 60,000 switches before the model: the walk is linear in the words (no rescans)
    argv = ["--enforce-eager"] * 60_000 + ["M"]
    assert interspersed_model(argv, 0, arity("vllm")) == 60_000
    assert interspersed_model(["--served-model-name", *["x"] * 60_000], 0, arity("vllm")) is None


# `--model X` where no positional model is given: vLLM serves X (vllm 0.32.0
# vllm/entrypoints/cli/serve.py:56-57 sets args.model from model_tag only when one is
# given; vllm/utils/argparse_utils.py:287-316 moves `--model X` to the positional's
# place). The ENTRYPOINT runs once before the command (trial3/01: it was placed twice,
# and its second `vllm` read as the model).
MODEL_FLAG = f"""\
services:
  vllm:
    image: vllm/vllm-openai:v0.30.0
    command: ["--model", "{LLAMA}", "--speculative-config", '{SC}']
"""


@pytest.mark.parametrize(
    ("text", "span"),
    [
        # the list form under the image's ENTRYPOINT: line 4, the second item at column 26
        (MODEL_FLAG, Span(4, 26)),
        # the string form (folded: the JSON holds ": ")
        (MODEL_FLAG.replace(
            f'command: ["--model", "{LLAMA}", "--speculative-config", \'{SC}\']',
            f"command: >\n      --model {LLAMA} --speculative-config '{SC}'",
        ), Span(5, 15)),
        # --model last
        (MODEL_FLAG.replace(
            f'command: ["--model", "{LLAMA}", "--speculative-config", \'{SC}\']',
            f'command: ["--speculative-config", \'{SC}\', "--model", "{LLAMA}"]',
        ), None),
        # the Compose entrypoint written out: `vllm serve` then the command
        (MODEL_FLAG.replace("    command:", '    entrypoint: ["vllm", "serve"]\n    command:'),
         Span(5, 26)),
    ],
)
def test_compose_model_option_after_entrypoint(text: str, span: Span | None) -> None:
    model, where = _yaml(text)
    assert model == LLAMA
    if span is not None:
        assert where == span


def test_kubernetes_model_option_after_command() -> None:
    text = KUBERNETES.replace(
        f"            - {LLAMA}\n", f"            - --model\n            - {LLAMA}\n"
    )
    # `command: [vllm, serve]` + args `… --model MODEL`: the model item is line 16, column 15
    assert _yaml(text) == (LLAMA, Span(16, 15))
    without = text.replace('          command: ["vllm", "serve"]\n', "")
    assert _yaml(without) == (LLAMA, Span(15, 15))  # the image's ENTRYPOINT, once
