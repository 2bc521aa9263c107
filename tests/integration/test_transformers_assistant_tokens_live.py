"""transformers itself as the oracle of where the assistant's num_assistant_tokens is read
(issue 27; behaviour ``assistant-settings-from-its-config`` of the engine data): given to
``generate()`` beside ``assistant_model`` it is ignored, and the assistant's own
generation_config (its default, 20 from 4.45.0) is what drafts.

The draft is the target itself (the tiny model of test_transformers_scripts_live.py), so
greedy drafts are always accepted and each target call emits D + 1 tokens: worked by hand,
40 new tokens at D 20 take ⌈40 / 21⌉ = 2 target calls (the second step drafts the 18 that
max_length leaves), at D 5 ⌈40 / 6⌉ = 7. The constant schedule and the confidence
threshold 0 are set on the assistant, where they are read. specgate reads the same script
(never runs it) and serves the D transformers drafts.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.integration.test_transformers_scripts_live import MAKE, PYTHON, VERSION

from specgate.inputs.engines import read_engine_config, read_engine_file
from specgate.load.python_generate import load_transformers_script

pytestmark = pytest.mark.skipif(PYTHON is None, reason="no interpreter with transformers")

SCRIPT = """\
from transformers import AutoModelForCausalLM, AutoTokenizer

tok = AutoTokenizer.from_pretrained("{root}/target")
model = AutoModelForCausalLM.from_pretrained("{root}/target")
draft = AutoModelForCausalLM.from_pretrained("{root}/target")
draft.generation_config.num_assistant_tokens_schedule = "constant"
draft.generation_config.assistant_confidence_threshold = 0
{own}calls = []
model.register_forward_hook(lambda *args: calls.append(1))
ids = tok("w1 w2 w3", return_tensors="pt").input_ids
out = model.generate(ids, assistant_model=draft, max_new_tokens=40, min_new_tokens=40,
                     do_sample=False{kwarg})
print("RESULT", out.shape[1] - ids.shape[1], len(calls))
"""

#: case → (the assistant's own setting, generate()'s keyword, target calls by hand, D)
CASES = {
    "keyword": ("", ", num_assistant_tokens=5", 2, 20),  # ignored: the default 20 drafts
    "assistant": ("draft.generation_config.num_assistant_tokens = 5\n", "", 7, 5),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("assistant-tokens")
    assert PYTHON is not None
    subprocess.run([PYTHON, "-c", MAKE, str(where / "models")], check=True, capture_output=True)
    return where


@pytest.mark.parametrize("case", sorted(CASES))
def test_specgate_serves_the_d_transformers_drafts(root: Path, case: str) -> None:
    own, kwarg, calls, d = CASES[case]
    text = SCRIPT.format(root=root / "models", own=own, kwarg=kwarg)
    script = root / f"serve-{case}.py"
    script.write_text(text, encoding="utf-8")
    assert PYTHON is not None
    ran = subprocess.run(
        [PYTHON, str(script)], capture_output=True, text=True, check=True, timeout=600
    )
    (line,) = [x for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    assert tuple(int(v) for v in line.split()[1:]) == (40, calls)
    doc = load_transformers_script(text, script.name)
    assert doc is not None
    config = read_engine_config(
        doc, shown=script.name, pointer=None, engine="transformers", engine_version=VERSION
    )
    assert config.draft_length == d
    ignored = [i.field for i in config.issues if i.code == "SG307"]
    assert ignored == (["ignored:num_assistant_tokens"] if kwarg else [])


FOLDER_SCRIPT = """\
from transformers import AutoModelForCausalLM, AutoTokenizer

tok = AutoTokenizer.from_pretrained("{root}/target")
model = AutoModelForCausalLM.from_pretrained("{root}/target")
draft = AutoModelForCausalLM.from_pretrained("./draft")
calls = []
model.register_forward_hook(lambda *args: calls.append(1))
ids = tok("w1 w2 w3", return_tensors="pt").input_ids
out = model.generate(ids, assistant_model=draft, max_new_tokens=40, min_new_tokens=40,
                     do_sample=False)
print("RESULT", out.shape[1] - ids.shape[1], len(calls))
"""

#: the assistant's settings, in its generation_config.json or (none there) its config.json
OWN = {"num_assistant_tokens": 5, "num_assistant_tokens_schedule": "constant",
       "assistant_confidence_threshold": 0}


def _run_in_folder(root: Path, name: str, file: str, text: str) -> tuple[Path, list[int]]:
    """A repository ``root/name`` with ``draft/`` a copy of the tiny target whose ``file``
    holds :data:`OWN` (``config.json``: no generation_config.json beside it), and
    ``serve.py`` holding ``text``, run from that folder: the script and its RESULT."""
    import json
    import shutil

    where = root / name
    shutil.copytree(root / "models" / "target", where / "draft")
    (where / ".git").mkdir()
    own = where / "draft" / file
    data = json.loads(own.read_text("utf-8")) if own.exists() else {}
    if file == "config.json":
        (where / "draft" / "generation_config.json").unlink()
    own.write_text(json.dumps({**data, **OWN}, indent=1), encoding="utf-8")
    script = where / "serve.py"
    script.write_text(text.format(root=root / "models"), encoding="utf-8")
    assert PYTHON is not None
    ran = subprocess.run(
        [PYTHON, str(script)], capture_output=True, text=True, check=True, timeout=600,
        cwd=where,
    )
    (line,) = [x for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    return script, [int(v) for v in line.split()[1:]]


@pytest.mark.parametrize("file", ["generation_config.json", "config.json"])
def test_a_local_assistant_folder_drafts_what_specgate_reads(root: Path, file: str) -> None:
    """``from_pretrained("./draft")`` from the script's folder: the folder's own
    num_assistant_tokens 5 drafts (7 target calls for 40 tokens, by hand as above), and
    specgate reads D 5 from it, settled (specgate.load.assistant_folder)."""
    name = f"folder-{file.split('.', maxsplit=1)[0]}"
    script, result = _run_in_folder(root, name, file, FOLDER_SCRIPT)
    assert result == [40, 7]
    config = read_engine_file(script, "serve.py", engine="transformers", engine_version=VERSION)
    assert (config.draft_length, config.draft_length_is_max) == (5, False)
    assert config.draft_length_assumed is None and config.draft_length_moves is None
    assert config.spans["draft_length"].file == f"draft/{file}"


PIPELINE_SCRIPT = """\
from transformers import pipeline

pipe = pipeline("text-generation", model="{root}/target", assistant_model="./draft")
calls = []
pipe.model.register_forward_hook(lambda *args: calls.append(1))
pipe("w1 w2 w3", max_new_tokens=40, min_new_tokens=40, do_sample=False)
print("RESULT", len(calls))
"""


def test_a_pipeline_assistant_named_by_its_folder_drafts_what_specgate_reads(root: Path) -> None:
    """``pipeline(..., assistant_model="./draft")``: the pipeline loads the folder by its
    name (pipelines/base.py ``load_assistant_model``), and its own generation_config.json
    drafts: num_assistant_tokens 5, constant, threshold 0 gives 7 target calls for 40
    tokens (by hand as above); specgate reads D 5 from the folder, settled."""
    script, result = _run_in_folder(root, "pipeline-folder", "generation_config.json",
                                    PIPELINE_SCRIPT)
    assert result == [7]
    config = read_engine_file(script, "serve.py", engine="transformers", engine_version=VERSION)
    assert (config.draft_length, config.draft_length_is_max) == (5, False)
    assert config.draft_length_assumed is None and config.draft_length_moves is None
    assert config.spans["draft_length"].file == "draft/generation_config.json"
