"""An engine's refusal quoting a value shown cut (SG307) stays readable in text output:
the value's ``{`` that the cut leaves open (``{"method": …, "prompt_…``) holds no clause
after it, so the message ends where the engine's message ends and the rest goes to the
details; before, the whole message after the ``{`` was one bracket to core/concise.py and
it was cut at a space: "… <function loads>; this deployment is judged on the…".

Hand-worked: the value's first 57 characters are ``{"method": "ngram",
"num_speculative_tokens": 4, "prompt_`` (1 + 8 + 2 + 7 + 2 + 24 + 2 + 1 + 2 + 8); vLLM's
parser message is "argument --speculative-config/-sc: Value VALUE cannot be converted to
<function loads>" (src/specgate/inputs/engines/refused.py, the engine oracle's records
from 0.19.1). The value's quote is at column 91 of line 1: ``docker run `` (11), the image
(24) and a space end at 36, the model (32) and a space at 69, the flag (20) and a space
at 90.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from specgate.cli.main import main
from specgate.core.concise import concise

LINE = (
    "docker run vllm/vllm-openai:v0.20.0 meta-llama/Llama-3.1-8B-Instruct "
    "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 4, "
    "\"prompt_lookup_max\": 4, prompt_lookup_min: 2}'\n"
)
CLAIMS = """version: 1
deployments:
  - name: spec
    speculation:
      enabled: true
      engine_config: serve.sh
      draft_depth_ratio: 0.1
    evidence:
      accept_length: 3.0
    claims:
      speedup: 2.0
"""
REFUSAL = (
    "vLLM refuses to start: argument --speculative-config/-sc: Value {\"method\": "
    "\"ngram\", \"num_speculative_tokens\": 4, \"prompt_… cannot be converted to "
    "<function loads>"
)


def test_sg307_text_line_holds_the_engines_whole_message(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serve.sh").write_text(LINE)
    (tmp_path / "c.specgate.yaml").write_text(CLAIMS)
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(["check", "--verbose", "c.specgate.yaml"])
    finally:
        os.chdir(here)
    lines = out.getvalue().splitlines()
    (at,) = [i for i, line in enumerate(lines) if " SG307 " in line]
    assert lines[at].startswith("serve.sh:1:91: fail SG307 engine-config-invalid: ")
    assert lines[at].endswith(f"{REFUSAL} (deployment spec in c.specgate.yaml)")
    # nothing is dropped: what follows the engine's message opens the details
    assert lines[at + 1].startswith("    details: this deployment is judged on the claims")


def test_a_bracket_never_closed_holds_no_clause() -> None:
    # the boundary is past the shortest message cut (60 characters): at 75
    head = "vLLM refuses to start: argument --x: Value {\"a\": 1, \"b… cannot be converted"
    message = head + "; " + "y" * 200
    assert concise(message) == (head, "y" * 200)
    # a bracket that closes still holds its clauses: "(a; b)" is not cut inside
    closed = "Z " * 40 + "(a; b) c; " + "w" * 150
    assert concise(closed) == ("Z " * 40 + "(a; b) c", "w" * 150)
