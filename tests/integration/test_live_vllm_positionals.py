"""vLLM's own parser as the oracle of the positional-word refusal (D6;
docs/engines.md#containers): what ``vllm serve`` does with the words a container runs when
its command repeats the image's ENTRYPOINT.

Marker ``live_vllm`` (deselected by default; ``.ci/run`` runs it in the vLLM CPU
environment it builds, ``SPECGATE_VLLM_PYTHON``). The parser is built as
``scripts/record_engine_parsers.py`` builds it (``FlexibleArgumentParser`` with the ``serve``
subcommand) inside that environment, and every argv below is parsed there: specgate must
call a command refused exactly when vLLM's parser exits, naming the words vLLM names.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from specgate.inputs.engines.positionals import extra_positionals

pytestmark = pytest.mark.live_vllm

_ORACLE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "specgate-oracle"
VLLM_PYTHON = Path(
    os.environ.get("SPECGATE_VLLM_PYTHON") or _ORACLE / "vllm-0.32.0" / "bin" / "python"
)
SPEC = '{"method":"ngram","num_speculative_tokens":4}'

ASK = r'''
import io, json, os, sys
from contextlib import redirect_stderr
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from vllm.entrypoints.cli.serve import ServeSubcommand
from vllm.utils.argparse_utils import FlexibleArgumentParser
top = FlexibleArgumentParser(description="vLLM CLI")
sub = top.add_subparsers(required=False, dest="subparser")
ServeSubcommand().subparser_init(sub)
out = []
for argv in json.load(sys.stdin):
    err = io.StringIO()
    try:
        with redirect_stderr(err):
            top.parse_args(argv)
        out.append({"exit": 0, "error": ""})
    except SystemExit as stop:
        lines = [l for l in err.getvalue().splitlines() if "error:" in l]
        out.append({"exit": stop.code, "error": lines[-1] if lines else ""})
print("@@answers@@" + json.dumps(out))
'''

#: the container's argv (the image's ENTRYPOINT `vllm serve`, then the command)
ARGVS = [
    ["vllm", "serve", "vllm", "serve", "m", "--speculative-config", SPEC],
    ["vllm", "serve", "serve", "m", "--speculative-config", SPEC],
    ["vllm", "serve", "vllm", "m", "--port", "8000"],
    ["vllm", "serve", "m", "--speculative-config", SPEC],
    ["vllm", "serve", "--speculative-config", SPEC],
    ["vllm", "serve", "/models/llama", "--port", "8000", "--speculative-config", SPEC],
    ["vllm", "serve", "a", "b", "c"],
]


def test_vllm_refuses_exactly_the_extra_positional_words() -> None:
    if not VLLM_PYTHON.is_file():
        missing = f"no vLLM environment ({VLLM_PYTHON}): scripts/build_oracle_env.sh"
        if os.environ.get("SPECGATE_VLLM_REQUIRED") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    run = subprocess.run(
        [str(VLLM_PYTHON), "-c", ASK], input=json.dumps([a[1:] for a in ARGVS]),
        capture_output=True, text=True, timeout=600, check=False,
    )
    marked = [line for line in run.stdout.splitlines() if line.startswith("@@answers@@")]
    assert marked, run.stderr[-2000:]
    answers = json.loads(marked[0][len("@@answers@@"):])
    for argv, answer in zip(ARGVS, answers, strict=True):
        found = extra_positionals("vllm", argv)
        assert (found is not None) == (answer["exit"] == 2), (argv, answer)
        if found is not None:
            extra = argv[found[1]:]
            extra = extra[: next((i for i, w in enumerate(extra) if w.startswith("-")),
                                 len(extra))]
            assert answer["error"].endswith("unrecognized arguments: " + " ".join(extra))
