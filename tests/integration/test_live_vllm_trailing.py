"""vLLM's own parser as the oracle of the refusal of words after a command's options
(trial3/15; docs/engines.md#containers): a Compose folded ``command: >`` whose ``# note``
reaches vLLM as words.

Marker ``live_vllm`` (deselected by default; ``.ci/run`` runs it in the vLLM CPU
environment it builds, ``SPECGATE_VLLM_PYTHON``). Every argv below is parsed by the
parser ``scripts/record_engine_parsers.py`` builds (``FlexibleArgumentParser`` with the
``serve`` subcommand) at vLLM 0.32.0: where specgate names words vLLM refuses, vLLM
exits with "unrecognized arguments:" and exactly those words; where it judges a command
fine, vLLM parses it; the forms it leaves unjudged are marked so.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from tests.integration.test_live_vllm_positionals import ASK, VLLM_PYTHON

from specgate.inputs.engines.positionals import trailing_positionals

pytestmark = pytest.mark.live_vllm

SPEC = '{"method": "ngram", "num_speculative_tokens": 3}'
#: (the container's argv, whether specgate judges it)
ARGVS: list[tuple[list[str], bool]] = [
    (["vllm", "serve", "m", "--speculative-config", SPEC, "#", "D", "tuned"], True),
    (["vllm", "serve", "m", "--speculative-config", SPEC], True),
    (["vllm", "serve", "m", "--port", "8000", "extra", "--seed", "1"], True),
    (["vllm", "serve", "m", "--enforce-eager", "word"], True),
    (["vllm", "serve", "m", "--served-model-name", "a", "b", "c"], False),  # nargs "+"
    (["vllm", "serve", "m", "--hf-token", "t", "word"], True),  # "?" takes t
    (["vllm", "serve", "m", "--max-model-len=4096", "#"], True),
    (["vllm", "serve", "--port", "8000", "m"], False),  # no leading model: not judged
    (["vllm", "serve", "m", "--speculative_config", SPEC, "x"], True),  # _ read as -
]


def test_vllm_refuses_exactly_the_words_after_the_options() -> None:
    if not VLLM_PYTHON.is_file():
        pytest.skip(f"no vLLM environment ({VLLM_PYTHON})")
    run = subprocess.run(
        [str(VLLM_PYTHON), "-c", ASK], input=json.dumps([a[1:] for a, _ in ARGVS]),
        capture_output=True, text=True, timeout=600, check=False,
    )
    marked = [line for line in run.stdout.splitlines() if line.startswith("@@answers@@")]
    assert marked, run.stderr[-2000:]
    answers = json.loads(marked[0][len("@@answers@@"):])
    for (argv, judged), answer in zip(ARGVS, answers, strict=True):
        found = trailing_positionals("vllm", argv, "0.32.0")
        if found is not None:
            words = " ".join(argv[i] for i in found[1])
            assert answer["exit"] == 2, (argv, answer)
            assert answer["error"].endswith(f"unrecognized arguments: {words}"), answer
        elif judged:
            assert answer["exit"] == 0, (argv, answer)
