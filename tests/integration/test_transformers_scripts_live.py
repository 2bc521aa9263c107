"""transformers itself as the oracle of the script reader (docs/engines.md#transformers-scripts).

Each case is a transformers script on tiny models made here from a config (no hub
download). specgate reads the script (never runs it) and predicts what transformers does
at start; then the script runs under real transformers, and its refusal (or its clean run)
must be the one predicted: the same refusal text at the line specgate names.

The interpreter: ``SPECGATE_TRANSFORMERS_PYTHON`` (then required: ``.ci/run`` names it),
else ``SPECGATE_VLLM_PYTHON`` (the vLLM
CPU environment ``.ci/run`` builds holds transformers 5.19.0), else this interpreter when it
imports transformers and torch; none ⇒ skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specgate.cli.main import main

VERSION = "5.19.0"


def _interpreter() -> str | None:
    named = os.environ.get("SPECGATE_TRANSFORMERS_PYTHON")
    if named:  # named: required (a missing interpreter fails the run, never skips it)
        return named
    found = os.environ.get("SPECGATE_VLLM_PYTHON")
    if found and Path(found).is_file():
        return found
    probe = subprocess.run(
        [sys.executable, "-c", "import transformers, torch"], capture_output=True, check=False
    )
    return sys.executable if probe.returncode == 0 else None


PYTHON = _interpreter()
pytestmark = pytest.mark.skipif(PYTHON is None, reason="no interpreter with transformers")

#: Tiny Llama models: target and a same-vocabulary draft (64 tokens), a draft of another
#: vocabulary (72), one word-level tokenizer each.
MAKE = """
import sys, torch
from pathlib import Path
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
root = Path(sys.argv[1])
def make(name, vocab):
    words = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3}
    words.update({f"w{i}": i + 4 for i in range(vocab - 4)})
    tok = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="<pad>")
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                      max_position_embeddings=128, bos_token_id=1, eos_token_id=2,
                      pad_token_id=3, tie_word_embeddings=False)
    LlamaForCausalLM(cfg).save_pretrained(root / name)
    fast.save_pretrained(root / name)
make("target", 64); make("draft", 64); make("other", 72)
"""

HEAD = """\
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, pipeline

tok = AutoTokenizer.from_pretrained("{root}/target")
model = AutoModelForCausalLM.from_pretrained("{root}/target")
draft = AutoModelForCausalLM.from_pretrained("{root}/{draft}")
"""

#: name → (script body after HEAD's 5 lines, draft directory, the refusal transformers
#: raises or None, the line the refused value stands on: the batch's prompts, the cache
#: setting, the assistant, the pipeline's batch_size)
CASES: dict[str, tuple[str, str, str | None, int]] = {
    "generate-batch-4": (
        'inputs = tok(["w1 w2", "w3 w4", "w5 w6", "w7 w8"], return_tensors="pt")\n'
        "model.generate(**inputs, assistant_model=draft, max_new_tokens=4)\n",
        "draft",
        "assisted generate is only supported for batch_size = 1",
        6,
    ),
    "generate-batch-1": (
        'inputs = tok("w1 w2 w3", return_tensors="pt")\n'
        "model.generate(inputs.input_ids, assistant_model=draft, max_new_tokens=4)\n",
        "draft",
        None,
        0,
    ),
    "prompt-lookup-static-cache": (
        'cfg = GenerationConfig(prompt_lookup_num_tokens=3, cache_implementation="static", '
        "max_new_tokens=4)\n"
        'ids = tok("w1 w2 w1 w2", return_tensors="pt").input_ids\n'
        "model.generate(ids, generation_config=cfg)\n",
        "draft",
        "assisted generate is not supported with Static cache classes",
        6,
    ),
    "vocabulary-mismatch": (
        'inputs = tok("w1 w2 w3", return_tensors="pt")\n'
        "model.generate(**inputs, assistant_model=draft, max_new_tokens=4)\n",
        "other",
        "The main and assistant models have different tokenizers",
        7,
    ),
    "universal-assisted-decoding": (
        'atok = AutoTokenizer.from_pretrained("{root}/other")\n'
        'inputs = tok("w1 w2 w3", return_tensors="pt")\n'
        "model.generate(**inputs, assistant_model=draft, tokenizer=tok, assistant_tokenizer=atok,\n"
        "               max_new_tokens=4)\n",
        "other",
        None,
        0,
    ),
    "assistant-tokenizer-not-needed": (
        'atok = AutoTokenizer.from_pretrained("{root}/draft")\n'
        'inputs = tok("w1 w2 w3", return_tensors="pt")\n'
        "model.generate(**inputs, assistant_model=draft, tokenizer=tok, assistant_tokenizer=atok,\n"
        "               max_new_tokens=4)\n",
        "draft",
        "`assistant_tokenizer` is not required",
        8,
    ),
    "prompt-lookup-batch-2": (
        'ids = tok(["w1 w2 w1", "w3 w4 w3"], return_tensors="pt").input_ids\n'
        "model.generate(ids, prompt_lookup_num_tokens=2, max_new_tokens=4)\n",
        "draft",
        "assisted generate is only supported for batch_size = 1",
        6,
    ),
    "pipeline-batch-3": (
        'pipe = pipeline("text-generation", model="{root}/target", '
        'assistant_model="{root}/draft", batch_size=4)\n'
        'pipe(["w1 w2", "w3 w4", "w5 w6"], max_new_tokens=4)\n',
        "draft",
        "assisted generate is only supported for batch_size = 1",
        6,
    ),
    "pipeline-one-prompt": (
        'pipe = pipeline("text-generation", model="{root}/target", '
        'assistant_model="{root}/draft", batch_size=4)\n'
        'pipe("w1 w2 w3", max_new_tokens=4)\n',
        "draft",
        None,
        0,
    ),
}


#: Runs each script as ``python serve.py`` would (``runpy``, as ``__main__``) in one
#: interpreter, so torch loads once; prints each one's refusal (or None) as JSON.
RUN = """
import json, runpy, sys
answers = {}
for path in sys.argv[1:]:
    try:
        runpy.run_path(path, run_name="__main__")
        answers[path] = None
    except Exception as exc:
        answers[path] = f"{type(exc).__name__}: {exc}"
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository: tiny models under ``models/``, each case's script beside them."""
    where = tmp_path_factory.mktemp("repo")
    assert PYTHON is not None
    subprocess.run(
        [PYTHON, "-c", MAKE, str(where / "models")], check=True, capture_output=True, timeout=300
    )
    for case, (body, draft, _, _) in CASES.items():
        script = (HEAD + body).replace("{root}", str(where / "models")).replace("{draft}", draft)
        (where / f"serve-{case}.py").write_text(script, encoding="utf-8")
    return where


@pytest.fixture(scope="module")
def answers(root: Path) -> dict[str, str | None]:
    """What transformers answered for each case's script."""
    assert PYTHON is not None
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    paths = [str(root / f"serve-{case}.py") for case in sorted(CASES)]
    run = subprocess.run(
        [PYTHON, "-c", RUN, *paths], capture_output=True, text=True, timeout=600, env=env,
        check=True,
    )
    found: dict[str, str | None] = json.loads(run.stdout.strip().splitlines()[-1])
    return {Path(k).stem.removeprefix("serve-"): v for k, v in found.items()}


def _predicted(repo: Path, case: str, draft: str) -> list[dict[str, object]]:
    claims = {
        "version": 1,
        "deployments": [
            {
                "name": "script",
                "model": {"name": "tiny", "hf_config": "models/target/config.json"},
                "speculation": {
                    "enabled": True,
                    "engine": "transformers",
                    "engine_version": VERSION,
                    "engine_config": f"serve-{case}.py",
                    "draft_hf_config": f"models/{draft}/config.json",
                },
            }
        ],
    }
    claims_file = repo / f"specgate-{case}.yaml"
    claims_file.write_text(json.dumps(claims), encoding="utf-8")
    out = repo / f"out-{case}.json"
    main(["check", str(claims_file), "--format", "json", "--output", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    findings = report["files"][0]["deployments"][0]["findings"]
    return [f for f in findings if f["code"] == "SG307" and f["severity"] == "fail"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_refusal_specgate_predicts_is_the_one_transformers_raises(
    case: str, root: Path, answers: dict[str, str | None]
) -> None:
    _, draft, refusal, line = CASES[case]
    predicted = _predicted(root, case, draft)
    answer = answers[case]
    if refusal is None:
        assert answer is None
        assert predicted == []
        return
    assert answer is not None and answer.startswith("ValueError: ") and refusal in answer
    assert [refusal in str(f["message"]) for f in predicted] == [True], predicted
    assert predicted[0]["line"] == line
