"""A speculative dict read key by key (new-user trial: a MISSED FAIL). ``"model": DRAFT``
from the environment beside literal ``"method": "eagle3"`` and ``"num_speculative_tokens":
5``: vLLM reads each key as its own ``SpeculativeConfig`` field, and ``__post_init__``
keeps ``eagle``/``eagle3``/``dflash``/``dspark`` whatever the draft is named
(vllm/config/speculative.py at v0.32.0: ``if self.method in ("eagle", "eagle3", "dflash",
"dspark"): pass``), so DRAFT changes neither D nor the method: D 5 is judged against the
claims file's (SG301), and SG313 names DRAFT. Where the unsettled key can change them (the
method auto-detected from the draft's name, D from its ``n_predict``, D or the method
itself), the whole dict stays unsettled and the claims file's values are used, as before.
Expected values worked out by hand from those rules (docs/engines.md#unsettled-values).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.rules.test_value_origin import check, findings

HEAD = "import os\nfrom vllm import LLM\nDRAFT = os.environ['DRAFT_MODEL']\n"
CALL = "llm = LLM(model='meta-llama/Llama-3.1-8B-Instruct',\n          speculative_config={})\n"
TRIAL = "{'method': 'eagle3', 'model': DRAFT, 'num_speculative_tokens': 5}"


def test_the_trials_literal_d_is_judged_and_draft_named(tmp_path: Path) -> None:
    script = HEAD + CALL.format(TRIAL)
    code, report = check(tmp_path, {"offline/run.py": script}, mechanism="eagle3", d=4)
    assert code == 1
    (mismatch,) = findings(report, "SG301")
    assert mismatch["severity"] == "fail"
    assert "the claims file says 4 but offline/run.py says 5" in mismatch["message"]
    # at run.py's line 5, the column of the 5 of num_speculative_tokens (1-based)
    column = (CALL.format(TRIAL).splitlines()[1]).index(": 5}") + 3
    assert mismatch["related"] == [{"file": "offline/run.py", "line": 5, "column": column}]
    (warn,) = findings(report, "SG313")
    assert (warn["severity"], warn["file"], warn["line"]) == ("warn", "offline/run.py", 5)
    assert warn["message"].startswith(
        "`DRAFT` (os.environ['DRAFT_MODEL'], offline/run.py:3) is set outside the repository"
    )
    assert "claims file's" not in warn["message"]


def test_a_claims_file_in_step_passes_with_the_warn(tmp_path: Path) -> None:
    script = HEAD + CALL.format(TRIAL)
    code, report = check(tmp_path, {"offline/run.py": script}, mechanism="eagle3", d=5)
    assert code == 0
    assert not findings(report, "SG301")
    assert len(findings(report, "SG313")) == 1


def test_the_mechanism_is_read_too(tmp_path: Path) -> None:
    # the claims file says ngram: the file's literal eagle3 disagrees (SG301 on mechanism)
    script = HEAD + CALL.format(TRIAL)
    code, report = check(tmp_path, {"offline/run.py": script}, mechanism="ngram", d=5)
    assert code == 1
    assert any("mechanism" in hit["message"] for hit in findings(report, "SG301"))


@pytest.mark.parametrize(
    "spec",
    [
        # the method detected from the draft's name (draft_model is not kept)
        "{'method': 'draft_model', 'model': DRAFT, 'num_speculative_tokens': 5}",
        # no method: vLLM picks it from the model
        "{'model': DRAFT, 'num_speculative_tokens': 5}",
        # no D: vLLM takes the draft's n_predict
        "{'method': 'eagle3', 'model': DRAFT}",
        # D itself, the method itself from the environment
        "{'method': 'eagle3', 'model': 'org/eagle3', 'num_speculative_tokens': int(DRAFT)}",
        "{'method': DRAFT, 'model': 'org/eagle3', 'num_speculative_tokens': 5}",
    ],
)
def test_a_key_that_may_change_d_or_the_method_leaves_the_dict_unsettled(
    tmp_path: Path, spec: str
) -> None:
    # the claims file's D 4 is used: no SG301 on the file's 5, exit 0 with SG313
    code, report = check(
        tmp_path, {"offline/run.py": HEAD + CALL.format(spec)}, mechanism="eagle3", d=4
    )
    assert code == 0
    assert not findings(report, "SG301")
    (warn,) = findings(report, "SG313")
    assert "specgate used the claims file's mechanism eagle3 and D 4" in warn["message"]


SH_SPEC = (
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
    "'{\"method\": \"eagle3\", \"model\": \"'\"$DRAFT\"'\", \"num_speculative_tokens\": 5}'\n"
)


def test_bash_splices_outside_text_into_json_keys() -> None:
    # why a `$VAR` inside a JSON flag value is never read key by key: bash splices the
    # environment's text in raw, so it may close the string and add a later key, which
    # json.loads keeps (the engine then runs method ngram, not the literal eagle3)
    import json
    import shutil
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    printed = subprocess.run(
        [bash, "-c", SH_SPEC.replace("vllm serve meta-llama/Llama-3.1-8B-Instruct "
                                     "--speculative-config", "printf %s")],
        env={"DRAFT": 'x", "method": "ngram", "y": "'}, capture_output=True, text=True,
        check=True,
    ).stdout
    assert json.loads(printed)["method"] == "ngram"


def test_a_shell_variable_inside_json_leaves_the_whole_flag_unsettled(tmp_path: Path) -> None:
    # before: `$DRAFT` in the flag's value place was a note and the JSON text around it was
    # read (a settled eagle3 and D 5, SG301 fail); now SG313 names $DRAFT at its column and
    # the claims file's values are used (exit 0)
    code, report = check(tmp_path, {"run.sh": SH_SPEC}, mechanism="eagle3", d=4)
    assert code == 0
    assert not findings(report, "SG301")
    (warn,) = findings(report, "SG313")
    column = SH_SPEC.index("$DRAFT") + 1
    assert (warn["file"], warn["line"], warn["column"]) == ("run.sh", 1, column)
    assert warn["message"].startswith("`$DRAFT` at run.sh:1 is set outside the repository")


def test_a_quoted_variable_as_a_scalar_flags_value_stays_a_note(tmp_path: Path) -> None:
    # one word is the flag's whole value (argparse never reads it as flags): unchanged
    script = ("vllm serve m --speculative-config "
              "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4}'"
              ' --port "$PORT"\n')
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 0
    assert not findings(report, "SG313")
