"""bash as the oracle of launch lines whose speculative flags come from expansions, and of
``docker run --entrypoint SHELL IMAGE -c "…"`` (trial 3 findings 09 and 13;
docs/engines.md#unsettled-values, docs/engines.md#containers).

A launch line with no literal option (``vllm serve "$MODEL" "${SPEC_ARGS[@]}"``) is read
like any other: what bash passes the engine where the script settles it, unsettled where it
does not, never "no speculative decoding configured". A container whose entrypoint is a
shell given ``-c`` runs that script. Each expectation was worked by hand; bash runs each
launcher with a stub ``vllm`` (and a stub ``docker`` that runs, as Docker does, the
``--entrypoint`` program followed by the words after the image) and the D it receives is
compared: a settled value must be bash's.
"""

from __future__ import annotations

import shutil

import pytest
from tests.oracle import test_assigning_commands_oracle as assigning
from tests.oracle.test_assigning_commands_oracle import verdict

SPEC = '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'
SPEC_ESCAPED = SPEC.replace('"', '\\"')
TIGHT = SPEC.replace(" ", "")
IMAGE = "vllm/vllm-openai:v0.32.0"
#: docker run [--gpus G] [-p P] [--x=y] --entrypoint E IMAGE ARGS…: E ARGS…
DOCKER = """#!/usr/bin/python3 -S
import os, sys
a = sys.argv[2:]
entry = None
while a and a[0].startswith("-"):
    if a[0] == "--entrypoint":
        entry = a[1]; a = a[2:]
    elif "=" in a[0]:
        a = a[1:]
    else:
        a = a[2:]
os.execvp(entry, [entry, *a[1:]])
"""

#: name -> (the script after its shebang, the verdict: D settled or the unsettled origin,
#: the D bash's run passes, None when the case is not run)
CASES: dict[str, tuple[str, object, int | None]] = {
    "array-only": (f"MODEL=m\nSPEC_ARGS=(--speculative-config '{SPEC}')\n"
                   'vllm serve "$MODEL" "${SPEC_ARGS[@]}"\n', 3, 3),
    "array-appended": (f"A=()\nA+=(--speculative-config '{SPEC}')\nvllm serve m \"${{A[@]}}\"\n",
                       3, 3),
    "variable-split": (f"FLAGS='--speculative-config {TIGHT}'\nvllm serve m $FLAGS\n", 3, 3),
    "environment": ("vllm serve m $FLAGS\n", "outside", None),
    "substitution": ("vllm serve m $(cat flags.txt)\n", "repository", None),
    "entrypoint-bash": (f"docker run --gpus all -p 8000:8000 --entrypoint /bin/bash {IMAGE} "
                        f"-c \"vllm serve m --speculative-config '{SPEC_ESCAPED}'\"\n", 3, 3),
    "entrypoint-sh-list": (f"docker run --entrypoint sh {IMAGE} -c 'true && vllm serve m "
                           f"--speculative-config \"$1\"' _ '{SPEC}'\n", 3, 3),
    # $0 is the word after the script (sh -c), or the name a script file is run by
    "dollar-zero": (f"sh -c 'vllm serve m --speculative-config \"$0\"' '{SPEC}'\n",
                    "outside", 3),
    "entrypoint-environment": (f"docker run --entrypoint /bin/sh {IMAGE} -c 'vllm serve m $X'\n",
                               "outside", None),
    # the outer shell runs the substitution; the inner one would read it as literal text
    "outer-substitution": (f"docker run --entrypoint bash {IMAGE} -c \"vllm serve m "
                           "--speculative-config '$(cat spec.json)'\"\n", "repository", 3),
    "script-c-substitution": ("bash -c \"vllm serve m --speculative-config "
                              "'$(cat spec.json)'\"\n", "repository", 3),
}


def bash_d(script: str) -> int | None:
    return assigning.bash_d(script, files={"spec.json": SPEC}, programs={"docker": DOCKER})


@pytest.mark.parametrize("name", CASES)
def test_reader_verdict_worked_by_hand(name: str) -> None:
    script, expected, _ = CASES[name]
    assert verdict("#!/bin/bash\n" + script) == expected


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the oracle")
@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[2] is not None])
def test_bash_runs_the_case_as_worked(name: str) -> None:
    script, expected, ran = CASES[name]
    assert bash_d("#!/bin/bash\n" + script) == ran
    if isinstance(expected, int):
        assert expected == ran
