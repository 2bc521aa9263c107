"""transformers scripts read with ast, never run (docs/engines.md#transformers-scripts).

Values are worked out by hand from transformers' source at v5.19.0: ``generate()`` merges
``generation_config`` with its keyword arguments, the keywords winning
(``_prepare_generation_config``: ``generation_config.update(**kwargs)``);
``_assisted_decoding`` takes the batch size from ``input_ids.shape[0]`` (the rows a
tokenizer makes: one per string); ``Pipeline.__call__`` runs a single input alone and
batches a list by ``batch_size`` (its own keyword, else the pipeline's, else 1). The live
differential test (tests/integration/test_transformers_scripts_live.py) runs such scripts.
"""

from __future__ import annotations

import pytest

from specgate.core.errors import InputError, UnreadForm
from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document, Span
from specgate.load.python_generate import load_transformers_script
from specgate.load.python_launcher import load_python_launcher

HEAD = (
    "from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig\n"
    'tok = AutoTokenizer.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")\n'
    'model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")\n'
    'draft = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")\n'
)


def load_script(text: str, shown: str) -> Document:
    """A ``.py`` engine config as specgate loads it (inputs/engines/read.py)."""
    return load_transformers_script(text, shown) or load_python_launcher(text, shown)


def read(body: str, version: str | None = "5.19.0") -> EngineConfig:
    doc = load_script(HEAD + body, "serve.py")
    return read_engine_config(
        doc, shown="serve.py", pointer=None, engine="transformers", engine_version=version
    )


def test_an_assistant_and_four_prompts() -> None:
    body = (
        'prompts = ["a", "b", "c", "d"]\n'  # line 5
        'inputs = tok(prompts, return_tensors="pt", padding=True).to("cpu")\n'
        "out = model.generate(**inputs, assistant_model=draft, do_sample=False)\n"
    )
    doc = load_script(HEAD + body, "serve.py")
    assert doc.data == {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "assistant_model": "meta-llama/Llama-3.2-1B-Instruct",
        "do_sample": False,
        "batch_size": 4,
    }
    # the batch: `prompts` in tok(prompts, …) on line 6, column 14
    assert doc.locate(("batch_size",)) == (6, 14)
    # the assistant: `draft` in assistant_model=draft, line 7 column 48
    assert doc.locate(("assistant_model",)) == (7, 48)
    assert doc.locate(("model",)) == (3, 46)  # the target's id in from_pretrained(…)
    assert doc.notes == ()
    config = read(body)
    assert (config.mechanism, config.draft_model) == (
        "draft_model",
        "meta-llama/Llama-3.2-1B-Instruct",
    )
    refusal = [i for i in config.issues if "batch_size = 1" in i.message]
    assert [(i.code, i.severity, i.message.endswith("(batch 4)")) for i in refusal] == [
        ("SG307", "fail", True)
    ]


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ('ids = tok("one prompt", return_tensors="pt").input_ids\n', 1),
        ('ids = tok(["x", "y"], return_tensors="pt")["input_ids"]\n', 2),
        ('ids = tok(("x", "y", "z"), return_tensors="pt").input_ids.to("cuda")\n', 3),
        # printed, counted and sent to the tokenizer: its length is as written
        (
            'p = ["x", "y"]\nprint(p, len(p))\nids = tok(p, padding=True)\n'
            "print(ids.input_ids.shape)\n",
            2,
        ),
    ],
)
def test_the_rows_of_a_tokenizer_call_on_literals(inputs: str, expected: int) -> None:
    body = inputs + "model.generate(ids, assistant_model=draft)\n"
    assert load_script(HEAD + body, "s.py").data["batch_size"] == expected  # type: ignore[index]


@pytest.mark.parametrize(
    "inputs",
    [
        # a list something may append to: its length is not what the literal shows
        'prompts = ["a"]\nprompts.append("b")\nids = tok(prompts).input_ids\n',
        # a list bound twice
        'prompts = ["a"]\nprompts = ["a", "b"]\nids = tok(prompts).input_ids\n',
        # a slice assignment shortens it; any other callee may change it
        'prompts = ["a", "b"]\nprompts[1:] = []\nids = tok(prompts).input_ids\n',
        'prompts = ["a", "b"]\nshorten(prompts)\nids = tok(prompts).input_ids\n',
        # the tokenizer's output replaced in part after it was made
        'ids = tok(["a", "b"])\nids["input_ids"] = ids["input_ids"][:1]\n',
        # prompts read from a file
        'ids = tok(open("p.txt").read().split()).input_ids\n',
        # no tokenizer bound by from_pretrained
        'ids = encode(["a", "b"])\n',
    ],
)
def test_a_batch_not_stated_literally_is_left_unsettled(inputs: str) -> None:
    body = inputs + "model.generate(ids, assistant_model=draft)\n"
    doc = load_script(HEAD + body, "s.py")
    assert isinstance(doc.data, dict) and "batch_size" not in doc.data
    assert [n for n in doc.notes if n.startswith("batch size not read")]
    config = read(body)
    assert not [i for i in config.issues if "batch_size = 1" in i.message]


def test_generation_config_and_keywords_merge_as_generate_merges_them() -> None:
    body = (
        "cfg = GenerationConfig(prompt_lookup_num_tokens=3, max_new_tokens=64)\n"  # line 5
        'ids = tok("x").input_ids\n'
        "model.generate(ids, generation_config=cfg, prompt_lookup_num_tokens=10)\n"
    )
    doc = load_script(HEAD + body, "s.py")
    assert doc.data == {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "prompt_lookup_num_tokens": 10,  # the keyword wins over the config's 3
        "max_new_tokens": 64,
        "batch_size": 1,
    }
    assert doc.locate(("prompt_lookup_num_tokens",)) == (7, 69)
    config = read(body)
    assert (config.mechanism, config.draft_length, config.verify_tokens) == ("ngram", 10, 11)


def test_static_cache_with_prompt_lookup_at_its_line() -> None:
    body = (
        'cfg = GenerationConfig(prompt_lookup_num_tokens=4, cache_implementation="static")\n'
        'model.generate(tok("x", return_tensors="pt").input_ids, generation_config=cfg)\n'
    )
    config = read(body, version="4.45.0")  # the refusal's first release (lifetime)
    static = [i for i in config.issues if "Static cache" in i.message]
    assert [i.severity for i in static] == ["fail"]
    assert config.spans[static[0].field] == Span(5, 73)  # "static" on line 5
    # 4.44.2 does not raise it (its wheel): nothing to fail on
    assert not [i for i in read(body, version="4.44.2").issues if "Static cache" in i.message]


def test_the_assistants_own_generation_config() -> None:
    # the candidate generator reads the assistant's generation_config (5.19.0)
    body = (
        "draft.generation_config.num_assistant_tokens = 7\n"  # line 5
        'model.generate(tok("x", return_tensors="pt").input_ids, assistant_model=draft)\n'
    )
    doc = load_script(HEAD + body, "s.py")
    assert doc.data["assistant_generation_config"] == {"num_assistant_tokens": 7}  # type: ignore[index]
    assert doc.locate(("assistant_generation_config", "num_assistant_tokens")) == (5, 48)
    config = read(body)
    assert (config.draft_length, config.verify_tokens) == (7, 8)


def test_a_generation_config_assignment_in_a_branch_is_not_followed() -> None:
    body = (
        "import sys\n"
        "if len(sys.argv) > 1:\n"
        "    draft.generation_config.num_assistant_tokens = 7\n"  # line 7
        'model.generate(tok("x").input_ids, assistant_model=draft)\n'
    )
    with pytest.raises(InputError) as caught:
        load_script(HEAD + body, "s.py")
    assert caught.value.line == 7
    assert "cannot follow" in caught.value.reason


def test_an_assistant_whose_name_is_not_read() -> None:
    body = (
        "import sys\n"
        "helper = AutoModelForCausalLM.from_pretrained(sys.argv[1])\n"
        'model.generate(tok("x").input_ids, assistant_model=helper)\n'
    )
    doc = load_script(HEAD + body, "s.py")
    assert doc.data["assistant_model"] == {"not_read": "helper"}  # type: ignore[index]
    config = read(body)
    # the mechanism is settled (an assistant runs), its name is not
    assert (config.mechanism, config.draft_model) == ("draft_model", None)


def test_a_speculative_keyword_that_is_no_literal_is_an_error_at_its_line() -> None:
    body = (
        "import sys\n"
        'model.generate(tok("x").input_ids, prompt_lookup_num_tokens=int(sys.argv[1]))\n'
    )
    with pytest.raises(InputError) as caught:
        load_script(HEAD + body, "s.py")
    assert (caught.value.line, caught.value.column) == (6, 61)
    assert caught.value.reason.startswith("prompt_lookup_num_tokens not read")


def test_early_exit_self_speculation() -> None:
    body = 'model.generate(tok("x").input_ids, assistant_early_exit=4)\n'
    config = read(body)
    assert config.mechanism == "other"


def test_generate_without_assisted_decoding_configures_nothing() -> None:
    with pytest.raises(InputError, match="no speculative decoding configured"):
        read('model.generate(tok("x").input_ids, max_new_tokens=8)\n')


def test_dead_code_is_skipped_and_a_called_function_is_read() -> None:
    body = (
        "if False:\n"
        '    model.generate(tok(["a", "b"]).input_ids, assistant_model=draft)\n'
        "def unused():\n"
        "    model.generate(tok(['a', 'b']).input_ids, prompt_lookup_num_tokens=3)\n"
        "def main():\n"
        '    return model.generate(tok("x").input_ids, assistant_model=draft)\n'
        'if __name__ == "__main__":\n'
        "    main()\n"
    )
    doc = load_script(HEAD + body, "s.py")
    assert isinstance(doc.data, dict)
    assert doc.data["batch_size"] == 1 and "prompt_lookup_num_tokens" not in doc.data


def test_exec_makes_the_reading_unsettled() -> None:
    with pytest.raises(InputError) as caught:
        load_script(HEAD + 'exec(open("more.py").read())\n', "s.py")
    assert caught.value.line == 5


def test_a_vllm_launcher_that_uses_a_transformers_tokenizer_stays_a_launcher() -> None:
    text = (
        "from transformers import AutoTokenizer\nfrom vllm import LLM\n"
        'LLM(model="m", speculative_config={"method": "ngram", "num_speculative_tokens": 3})\n'
    )
    assert load_script(text, "s.py").data == {
        "model": "m",
        "speculative_config": {"method": "ngram", "num_speculative_tokens": 3},
    }


PIPE = (
    "from transformers import pipeline\n"
    'pipe = pipeline("text-generation", model="meta-llama/Llama-3.1-8B-Instruct",\n'
    '                assistant_model="meta-llama/Llama-3.2-1B-Instruct", batch_size=4)\n'
)


@pytest.mark.parametrize(
    ("call", "batch", "at"),
    [
        # a list of 3 batched by 4: one batch of 3, at the pipeline's batch_size
        ('pipe(["a", "b", "c"])\n', 3, (3, 80)),
        # 6 prompts by 4: the first batch is 4
        ('pipe(["a", "b", "c", "d", "e", "f"])\n', 4, (3, 80)),
        # a single string runs alone: at the input
        ('pipe("a")\n', 1, (4, 6)),
        # the call's own batch_size wins
        ('pipe(["a", "b"], batch_size=1)\n', 1, (4, 29)),
    ],
)
def test_a_pipelines_batch(call: str, batch: int, at: tuple[int, int]) -> None:
    doc = load_script(PIPE + call, "p.py")
    assert isinstance(doc.data, dict)
    assert doc.data["batch_size"] == batch
    assert doc.data["assistant_model"] == "meta-llama/Llama-3.2-1B-Instruct"
    assert doc.data["pipeline"] == "text-generation"
    assert doc.locate(("batch_size",)) == at


def test_a_pipeline_over_inputs_not_read_leaves_the_batch_unsettled() -> None:
    doc = load_script(PIPE + "import sys\npipe(sys.argv[1:])\n", "p.py")
    assert isinstance(doc.data, dict) and "batch_size" not in doc.data
    assert doc.notes == (
        "batch size not read: the pipeline's batch_size or inputs are no literal (p.py:5)",
    )


def test_a_pipeline_made_and_never_called_is_read_alone() -> None:
    doc = load_script(PIPE.replace("batch_size=4", "batch_size=1"), "p.py")
    assert isinstance(doc.data, dict) and doc.data["batch_size"] == 1


@pytest.mark.parametrize(("version", "severity"), [("4.48.0", "fail"), ("4.47.0", None)])
def test_a_pipelines_batch_refusal_holds_from_the_release_its_assistant_came_in(
    version: str, severity: str | None
) -> None:
    # pipeline(assistant_model=…) from 4.48.0 (pipelines/base.py load_assistant_model; the
    # 4.47.0 wheel has no such keyword): before it, what the pipeline does is not known
    doc = load_script(PIPE + 'pipe(["a", "b", "c"])\n', "p.py")
    config = read_engine_config(
        doc, shown="p.py", pointer=None, engine="transformers", engine_version=version
    )
    found = [i.severity for i in config.issues if "batch_size = 1" in i.message]
    assert found == ([severity] if severity else [])


def test_an_assignment_before_generate_in_a_function_is_followed() -> None:
    body = (
        "def main():\n"
        "    draft.generation_config.num_assistant_tokens = 3\n"
        '    model.generate(tok("x").input_ids, assistant_model=draft)\n'
        "main()\n"
    )
    doc = load_script(HEAD + body, "s.py")
    assert doc.data["assistant_generation_config"] == {"num_assistant_tokens": 3}  # type: ignore[index]
    assert doc.locate(("assistant_generation_config", "num_assistant_tokens")) == (6, 52)


def test_the_models_own_config_under_an_explicit_generation_config_is_unsettled() -> None:
    # _prepare_generation_config@v5.19.0 fills each field cfg leaves at its default
    # (prompt_lookup_num_tokens None) from the model's own config when the model was saved
    # by 4.50.0 or later (use_model_defaults): prompt lookup 3 may run or not
    body = (
        "model.generation_config.prompt_lookup_num_tokens = 3\n"  # line 5
        "cfg = GenerationConfig(max_new_tokens=8)\n"
        'model.generate(tok("x").input_ids, generation_config=cfg, assistant_model=draft)\n'
    )
    with pytest.raises(InputError) as caught:
        load_script(HEAD + body, "s.py")
    assert caught.value.line == 5
    # a form not read (SG312 on the deployment), not the end of the run (issue 24); the
    # assignment starts the line
    assert isinstance(caught.value, UnreadForm) and caught.value.column == 1
    # the explicit config's own value wins whatever the model's: settled
    doc = load_script(HEAD + body.replace("max_new_tokens=8", "prompt_lookup_num_tokens=4"),
                      "s.py")
    assert isinstance(doc.data, dict) and doc.data["prompt_lookup_num_tokens"] == 4


def test_a_transformers_script_that_generates_nothing_configures_nothing() -> None:
    # no generate() or pipeline call: the empty mapping, so the deployment degrades to
    # SG312 "no speculative decoding configured" instead of stopping the run
    doc = load_script(HEAD + "logits = model(input_ids=None)\n", "s.py")
    assert doc.data == {}
    with pytest.raises(InputError, match="no speculative decoding configured"):
        read("logits = model(input_ids=None)\n")


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ("draft.generation_config.update(num_assistant_tokens=9)\n", 6),
        ('setattr(draft.generation_config, "num_assistant_tokens", 9)\n', 6),
        ("draft.generation_config.num_assistant_tokens += 4\n", 6),
        ("gc = draft.generation_config\ngc.num_assistant_tokens = 9\n", 6),
        ("draft.generation_config = GenerationConfig(num_assistant_tokens=9)\n", 6),
        # another name that may hold the same model (not bound to its own from_pretrained)
        ("def tune(m):\n    m.generation_config.num_assistant_tokens = 9\ntune(draft)\n", 7),
    ],
)
def test_an_assistant_config_changed_another_way_is_not_settled(change: str, line: int) -> None:
    # D would be 5 from line 5 alone; each change may make it 9 (or 9 + 4)
    body = (
        "draft.generation_config.num_assistant_tokens = 5\n"
        + change
        + 'model.generate(tok("x").input_ids, assistant_model=draft)\n'
    )
    with pytest.raises(InputError) as caught:
        load_script(HEAD + body, "s.py")
    assert caught.value.line == line
    assert "may be changed" in caught.value.reason


def test_reading_a_field_of_the_config_changes_nothing() -> None:
    body = (
        "draft.generation_config.num_assistant_tokens = 5\n"
        "print(draft.generation_config.num_assistant_tokens)\n"
        "model.generation_config.max_new_tokens = 64\n"  # another model: its own object
        'model.generate(tok("x").input_ids, assistant_model=draft)\n'
    )
    doc = load_script(HEAD + body, "s.py")
    assert doc.data["assistant_generation_config"] == {"num_assistant_tokens": 5}  # type: ignore[index]


def test_keywords_unpacked_from_a_dict_bound_once() -> None:
    body = (
        'kw = {"prompt_lookup_num_tokens": 6, "max_new_tokens": 32}\n'
        'model.generate(tok("x").input_ids, **kw)\n'
    )
    doc = load_script(HEAD + body, "s.py")
    assert isinstance(doc.data, dict) and doc.data["prompt_lookup_num_tokens"] == 6
    assert doc.locate(("prompt_lookup_num_tokens",)) == (5, 35)


def test_a_dict_changed_after_it_was_written_is_not_followed() -> None:
    body = (
        'kw = {"prompt_lookup_num_tokens": 6}\n'
        'kw["prompt_lookup_num_tokens"] = 12\n'
        'model.generate(tok("x").input_ids, **kw)\n'
    )
    doc = load_script(HEAD + body, "s.py")
    assert doc.data.get("prompt_lookup_num_tokens") is None  # type: ignore[union-attr]
    assert doc.notes == ("**kw not read: not a literal (s.py:7)",)


def test_a_branch_that_never_runs_is_skipped_inside_a_function_too() -> None:
    body = (
        "def main():\n"
        "    if False:\n"
        '        model.generate(tok(["a", "b"]).input_ids, assistant_model=draft)\n'
        "    if True:\n"
        '        model.generate(tok("a").input_ids, assistant_model=draft)\n'
        "    else:\n"
        "        model.generate(tok('a').input_ids, prompt_lookup_num_tokens=3)\n"
        "    for _ in range(2):\n"
        "        with open('x') as f:\n"
        "            model.generate(tok(f.read()).input_ids, assistant_model=draft)\n"
        "main()\n"
    )
    doc = load_script(HEAD + body, "s.py")
    # the calls that may run: line 9 (batch 1) and line 14 (the file's text: not read)
    assert isinstance(doc.data, list) and len(doc.data) == 2
    assert [d.get("batch_size") for d in doc.data] == [1, None]
    assert doc.locate((0,)).line == 9 and doc.locate((1,)).line == 14


def test_a_tokenizers_output_given_a_generation_key_is_not_read() -> None:
    body = (
        'inputs = tok("x", return_tensors="pt")\n'
        'inputs["prompt_lookup_num_tokens"] = 10\n'
        "model.generate(**inputs, assistant_model=draft)\n"
    )
    doc = load_script(HEAD + body, "s.py")
    assert isinstance(doc.data, dict) and "batch_size" not in doc.data
    assert "**inputs not read: not a literal (s.py:7)" in doc.notes


def test_a_launcher_snippet_beside_a_transformers_import_is_read_as_a_launcher() -> None:
    text = (
        "from transformers import AutoTokenizer\n"
        'LLM(model="m", speculative_config={"method": "ngram", "num_speculative_tokens": 3})\n'
    )
    assert load_script(text, "s.py").data == {
        "model": "m",
        "speculative_config": {"method": "ngram", "num_speculative_tokens": 3},
    }
