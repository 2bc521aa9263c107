"""The served model named through a module constant (new-user defect D7;
docs/engines.md#unsettled-values).

``MODEL_ID = "meta-llama/Llama-3.1-70B-Instruct"`` bound once at module level and read by
``AutoModelForCausalLM.from_pretrained(MODEL_ID)`` or ``LLM(model=MODEL_ID)`` is what
Python passes (tests/oracle/test_python_constants_oracle.py runs such scripts), so a claims
file naming ``meta-llama/Llama-3.1-8B-Instruct`` differs from what is served: SG301 on the
claims file's ``model.name`` (line 5, column 13 of the claims file below). A name bound
twice, in a branch, by an import or after the call is not settled: no SG301, and the model
is said to be not read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main
from specgate.core.errors import InputError
from specgate.load.python_generate import load_transformers_script
from specgate.load.python_launcher import load_python_launcher

SERVED = "meta-llama/Llama-3.1-70B-Instruct"
CLAIMS = """version: 1
deployments:
  - name: d
    model:
      name: meta-llama/Llama-3.1-8B-Instruct
      parameters_b: 8
    speculation:
      enabled: true
      draft_length: 4
      engine_config: {file}
      draft_depth_ratio: 0.05
    workload:
      name: chat
"""
GENERATE = f"""from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_ID = "{SERVED}"
DRAFT_ID = "meta-llama/Llama-3.2-1B-Instruct"

tok = AutoTokenizer.from_pretrained(MODEL_ID)
model = AutoModelForCausalLM.from_pretrained(MODEL_ID)
draft = AutoModelForCausalLM.from_pretrained(DRAFT_ID)
draft.generation_config.num_assistant_tokens = 4
draft.generation_config.assistant_confidence_threshold = 0
out = model.generate(**tok("hello", return_tensors="pt"), assistant_model=draft)
"""
LAUNCH = f"""from vllm import LLM

MODEL_ID = "{SERVED}"
llm = LLM(model=MODEL_ID, speculative_config={{"method": "ngram", "num_speculative_tokens": 4,
                                              "prompt_lookup_max": 4}})
"""


def _check(tmp_path: Path, name: str, script: str) -> list[dict[str, Any]]:
    (tmp_path / name).write_text(script, encoding="utf-8")
    (tmp_path / "claims.specgate.yaml").write_text(CLAIMS.format(file=name), encoding="utf-8")
    out = tmp_path / "report.json"
    main(["check", str(tmp_path / "claims.specgate.yaml"), "--format", "json",
          "--output", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    findings: list[dict[str, Any]] = report["files"][0]["deployments"][0]["findings"]
    return findings


@pytest.mark.parametrize(("name", "script"), [("gen.py", GENERATE), ("launch.py", LAUNCH)])
def test_a_served_model_constant_differs_from_the_claims_file(
    tmp_path: Path, name: str, script: str
) -> None:
    found = [f for f in _check(tmp_path, name, script) if f["code"] == "SG301"]
    served = [f for f in found if SERVED in f["message"]]
    assert len(served) == 1
    assert (served[0]["path"], served[0]["line"], served[0]["column"]) == (
        "deployments[0].model.name", 5, 13)
    assert served[0]["severity"] == "fail"
    # the other location: where the script calls the constant's model in (line 7 / 4)
    (related,) = served[0]["related"]
    assert (Path(related["file"]).name, related["line"]) == (
        name, 7 if name == "gen.py" else 4)


def test_the_draft_constant_names_the_assistant() -> None:
    doc = load_transformers_script(GENERATE, "gen.py")
    assert doc is not None and isinstance(doc.data, dict)
    assert (doc.data["model"], doc.data["assistant_model"]) == (
        SERVED, "meta-llama/Llama-3.2-1B-Instruct")


@pytest.mark.parametrize(
    "binding",
    [
        f'MODEL_ID = "{SERVED}"\nMODEL_ID = "other"\n',  # twice: Python passes "other"
        f'MODEL_ID = "{SERVED}"\nif 1:\n    MODEL_ID = "other"\n',  # a branch
        f'MODEL_ID = "{SERVED}"\nfor MODEL_ID in ["other"]:\n    pass\n',  # a loop
        "from os import sep as MODEL_ID\n",  # an import: its module decides
        f'MODEL_ID = "{SERVED}"\nglobals()["MODEL_ID"] = "other"\n',  # no assignment shows
        f'MODEL_ID = "{SERVED}"\ndef f():\n    global MODEL_ID\n    MODEL_ID = "o"\nf()\n',
    ],
)
def test_a_constant_not_bound_once_is_not_read(binding: str) -> None:
    launch = "from vllm import LLM\n" + binding + (
        "LLM(model=MODEL_ID, speculative_config={'method': 'ngram', "
        "'num_speculative_tokens': 4})\n"
    )
    doc = load_python_launcher(launch, "launch.py")
    assert isinstance(doc.data, dict) and "model" not in doc.data
    assert any(note.startswith("model not read") for note in doc.notes)
    generate = (
        "from transformers import AutoModelForCausalLM\n" + binding
        + "model = AutoModelForCausalLM.from_pretrained(MODEL_ID)\n"
        "model.generate(prompt_lookup_num_tokens=3)\n"
    )
    try:
        gen = load_transformers_script(generate, "gen.py")
    except InputError:  # globals(): which call runs is not settled (SG314)
        assert "globals" in binding
        return
    assert gen is not None and isinstance(gen.data, dict) and "model" not in gen.data


def test_a_constant_bound_after_the_call_is_not_read() -> None:
    # Python stops with NameError at the call: nothing is served with the value
    launch = (
        "from vllm import LLM\nLLM(model=MODEL_ID, speculative_config={'method': 'ngram', "
        f"'num_speculative_tokens': 4}})\nMODEL_ID = \"{SERVED}\"\n"
    )
    doc = load_python_launcher(launch, "launch.py")
    assert isinstance(doc.data, dict) and "model" not in doc.data
    # read in main(), which runs after the binding: settled
    launch = (
        "from vllm import LLM\ndef main():\n    LLM(MODEL_ID, speculative_config={'method': "
        f"'ngram', 'num_speculative_tokens': 4}})\nMODEL_ID = \"{SERVED}\"\nmain()\n"
    )
    doc = load_python_launcher(launch, "launch.py")
    assert isinstance(doc.data, dict) and doc.data["model"] == SERVED


@pytest.mark.parametrize(
    ("script", "read"),
    [
        # main() runs after the binding: Python passes it
        (f'def main():\n    LLM(MODEL_ID)\nMODEL_ID = "{SERVED}"\nmain()\n', True),
        # main() runs before it: NameError, nothing served with it
        (f'def main():\n    LLM(MODEL_ID)\nmain()\nMODEL_ID = "{SERVED}"\n', False),
        # another function names main before the binding: it may run main first
        (f'def main():\n    LLM(MODEL_ID)\ndef go():\n    main()\ngo()\n'
         f'MODEL_ID = "{SERVED}"\n', False),
    ],
)
def test_a_read_in_a_function_counts_when_the_binding_runs_first(
    script: str, read: bool
) -> None:
    doc = load_python_launcher("from vllm import LLM\n" + script, "launch.py")
    assert isinstance(doc.data, dict)
    assert ("model" in doc.data) is read


def test_a_generate_keyword_read_before_its_constant_is_not_settled() -> None:
    # transformers reader, same resolver: Python stops with NameError at the call (line 3)
    script = (
        "from transformers import AutoModelForCausalLM\n"
        "model = AutoModelForCausalLM.from_pretrained('t')\n"
        "model.generate(prompt_lookup_num_tokens=K)\nK = 3\n"
    )
    with pytest.raises(InputError) as caught:
        load_transformers_script(script, "gen.py")
    assert caught.value.line == 3
    bound_first = script.replace("model.generate(prompt_lookup_num_tokens=K)\nK = 3\n",
                                 "K = 3\nmodel.generate(prompt_lookup_num_tokens=K)\n")
    doc = load_transformers_script(bound_first, "gen.py")
    assert doc is not None and isinstance(doc.data, dict)
    assert doc.data["prompt_lookup_num_tokens"] == 3
