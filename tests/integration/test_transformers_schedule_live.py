"""transformers itself as the oracle of what the schedule does to D
(docs/theory.md#d-is-a-maximum): a ``heuristic`` schedule moves D during the run, any other
value keeps it.

The draft is the target itself (the tiny model of test_transformers_scripts_live.py), so
greedy drafts are always accepted. Worked by hand from ``update_candidate_strategy`` (+2
after a step that accepted every draft): 40 new tokens from num_assistant_tokens 2 take
D = 2, 4, 6, 8, 10, 12 → 3 + 5 + 7 + 9 + 11 + 13 tokens, 6 target calls, D 14 after the
call (written back to the assistant's generation_config under ``heuristic``, reset to 2
under ``heuristic_transient``); a fixed D 2 takes ⌈40 / 3⌉ = 14 calls. specgate reads the
same script (never runs it) and says D moves exactly for the schedules that move it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.integration.test_transformers_scripts_live import MAKE, PYTHON, VERSION

from specgate.inputs.engines import read_engine_config
from specgate.load.python_generate import load_transformers_script

pytestmark = pytest.mark.skipif(PYTHON is None, reason="no interpreter with transformers")

SCRIPT = """\
from transformers import AutoModelForCausalLM, AutoTokenizer

tok = AutoTokenizer.from_pretrained("{root}/target")
model = AutoModelForCausalLM.from_pretrained("{root}/target")
draft = AutoModelForCausalLM.from_pretrained("{root}/target")
draft.generation_config.num_assistant_tokens = 2
draft.generation_config.num_assistant_tokens_schedule = "{schedule}"
draft.generation_config.assistant_confidence_threshold = 0
calls = []
model.register_forward_hook(lambda *args: calls.append(1))
ids = tok("w1 w2 w3", return_tensors="pt").input_ids
out = model.generate(ids, assistant_model=draft, max_new_tokens=40, min_new_tokens=40,
                     do_sample=False)
print("RESULT", out.shape[1] - ids.shape[1], len(calls),
      int(draft.generation_config.num_assistant_tokens))
"""

#: schedule → (new tokens, target calls, num_assistant_tokens after the call), by hand
CASES = {
    "heuristic": (40, 6, 14),
    "heuristic_transient": (40, 6, 2),
    "constant": (40, 14, 2),
    "dynamic": (40, 14, 2),  # no schedule transformers knows: D stays
    "Heuristic": (40, 14, 2),  # compared exactly
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("schedule")
    assert PYTHON is not None
    subprocess.run([PYTHON, "-c", MAKE, str(where / "models")], check=True, capture_output=True)
    return where


@pytest.mark.parametrize("schedule", sorted(CASES))
def test_specgate_says_d_moves_where_transformers_moves_it(root: Path, schedule: str) -> None:
    text = SCRIPT.format(root=root / "models", schedule=schedule)
    script = root / f"serve-{schedule}.py"
    script.write_text(text, encoding="utf-8")
    assert PYTHON is not None
    ran = subprocess.run(
        [PYTHON, str(script)], capture_output=True, text=True, check=True, timeout=600
    )
    (line,) = [x for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    tokens, calls, after = (int(v) for v in line.split()[1:])
    assert (tokens, calls, after) == CASES[schedule]
    doc = load_transformers_script(text, script.name)
    assert doc is not None
    config = read_engine_config(
        doc, shown=script.name, pointer=None, engine="transformers", engine_version=VERSION
    )
    assert config.draft_length == 2
    moved = calls != CASES["constant"][1]
    assert (config.draft_length_moves is not None) == moved
