"""SG313 and SG314: a serving config value specgate cannot settle, by where it is set
(issue 24, "degrade, never stop"; docs/engines.md#unsettled-values).

Each case is a small repository: the claims file and one serving file. The expected
codes, severities, lines and exit codes are worked out by hand from the rules in
docs/engines.md#unsettled-values and bash's and Python's own semantics (which value
the interpreter sees is held to bash, Python and Compose in
tests/oracle/test_value_origin.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

from specgate.cli.main import main

SPEC = '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'

CLAIMS = """version: 1
deployments:
  - name: chat
    speculation:
      enabled: true
      engine_config: {serving}
      mechanism: {mechanism}
      draft_length: {d}
    evidence:
      accept_length: 2.1
      cache_coherence_eval: true
{more}"""


def check(tmp: Path, serving: dict[str, str], *, mechanism: str = "ngram", d: int = 4,
          more: str = "") -> tuple[int, dict[str, Any]]:
    """(exit code, JSON report) of ``specgate check`` in a repository of ``serving``."""
    for name, text in serving.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    first = next(iter(serving))
    (tmp / "specgate.yaml").write_text(
        CLAIMS.format(serving=first, mechanism=mechanism, d=d, more=more)
    )
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(tmp)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", "--format", "json", "specgate.yaml"])
    finally:
        os.chdir(here)
    return code, json.loads(out.getvalue())


def findings(report: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [
        f for file in report["files"] for d in file["deployments"] for f in d["findings"]
        if f["code"] == code
    ]


def test_an_environment_variable_after_the_flags_warns_and_uses_the_claims(tmp_path: Path) -> None:
    # bash: EXTRA is never assigned in run.sh, so the environment that runs it decides
    # it; it stands after --speculative-config (word 4), where a repeated flag would win
    script = f"#!/bin/bash\nvllm serve m --speculative-config '{SPEC}' $EXTRA\n"
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 0
    (hit,) = findings(report, "SG313")
    assert hit["severity"] == "warn"
    assert (hit["file"], hit["line"]) == ("run.sh", 2)
    assert "`$EXTRA`" in hit["message"]
    assert "mechanism ngram and D 4" in hit["message"]
    assert findings(report, "SG314") == []


def test_the_scripts_arguments_are_the_deployments(tmp_path: Path) -> None:
    script = f'#!/bin/bash\nvllm serve m --speculative-config \'{SPEC}\' "$@"\n'
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 0
    (hit,) = findings(report, "SG313")
    assert "`$@`" in hit["message"]


def test_a_command_substitution_is_the_repositorys_and_fails(tmp_path: Path) -> None:
    script = "#!/bin/bash\nD=$(cat d.txt)\nvllm serve m --speculative-config \"$SPEC\" $D\n"
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 1
    (hit,) = findings(report, "SG314")
    assert hit["severity"] == "fail"
    assert (hit["file"], hit["line"]) == ("run.sh", 3)
    assert "the repository decides D at run.sh:3 in a way specgate cannot read" in hit["message"]


def test_the_issue_example_judges_the_measured_loss(tmp_path: Path) -> None:
    # issue 24: LLM(..., speculative_model=DRAFT, num_speculative_tokens=5) with DRAFT
    # read from the environment: exit 2 before; now the stated draft_model, D 5 and the
    # measured 0.7x are judged (SG106: a measured speedup below 1 fails)
    script = (
        "import os\nfrom vllm import LLM\nDRAFT = os.environ['DRAFT']\n"
        "llm = LLM(model='m', speculative_model=DRAFT, num_speculative_tokens=5)\n"
    )
    code, report = check(tmp_path, {"serve.py": script}, mechanism="draft_model", d=5,
                         more="      measured_speedup: 0.7\n")
    assert code == 1
    (hit,) = findings(report, "SG313")
    assert (hit["file"], hit["line"]) == ("serve.py", 4)
    assert hit["message"].startswith(
        "`DRAFT` (os.environ['DRAFT'], serve.py:3) is set outside the repository"
    )
    assert "mechanism draft_model and D 5" in hit["message"]
    assert findings(report, "SG106")


def test_a_computed_python_value_fails(tmp_path: Path) -> None:
    script = (
        "from vllm import LLM\ndef draft():\n    return 'd'\n"
        "llm = LLM(model='m', speculative_model=draft(), num_speculative_tokens=5)\n"
    )
    code, report = check(tmp_path, {"serve.py": script}, mechanism="draft_model", d=5)
    assert code == 1
    (hit,) = findings(report, "SG314")
    assert hit["line"] == 4


def test_a_python_default_is_the_scripts_value(tmp_path: Path) -> None:
    # os.getenv("D", "3") with no D in the environment is "3"; int("3") = 3: settled, so
    # the read D 3 is compared with the claims file's D 4 (SG301), no SG313/SG314
    script = (
        "import os\nfrom vllm import LLM\n"
        "llm = LLM(model='m', speculative_config={'method': 'ngram', 'prompt_lookup_max': 4,"
        " 'num_speculative_tokens': int(os.getenv('D', '3'))})\n"
    )
    code, report = check(tmp_path, {"serve.py": script})
    assert findings(report, "SG313") == findings(report, "SG314") == []
    assert code == 0 or findings(report, "SG301")


def test_a_compose_variable_no_env_file_sets_warns(tmp_path: Path) -> None:
    compose = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n    command:\n"
        f"      - --model\n      - m\n      - --speculative-config\n      - '{SPEC}'\n"
        "      - ${EXTRA_ARGS}\n"
    )
    code, report = check(tmp_path, {"compose.yaml": compose})
    (hit,) = findings(report, "SG313")
    assert (hit["file"], hit["line"]) == ("compose.yaml", 9)
    assert "${EXTRA_ARGS}" in hit["message"]
    assert code == 0


def test_accepted_in_the_serving_file_on_its_line(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\nD=$(cat d.txt)\n"
        "vllm serve m --speculative-config \"$SPEC\" $D  # specgate: ignore[SG314] -- pinned\n"
    )
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 0
    (hit,) = findings(report, "SG314")  # still reported, marked suppressed
    assert hit["suppressed"] is True and hit["justification"] == "inline: pinned"


def test_accepted_alone_on_the_line_before(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\nD=$(cat d.txt)\n# specgate: ignore[value-unfollowed] -- pinned\n"
        "vllm serve m --speculative-config \"$SPEC\" $D\n"
    )
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 0
    (hit,) = findings(report, "SG314")
    assert hit["suppressed"] is True


def test_accepted_before_a_continued_command_covers_its_last_line(tmp_path: Path) -> None:
    # D12.3: the directive alone on line 3 stands before a command bash reads as one (the
    # trailing backslashes of lines 4 and 5 join lines 4-6); the unfollowed $D is on
    # line 6, the command's third line: suppressed (docs/reports.md#suppressions).
    script = (
        "#!/bin/bash\nD=$(cat d.txt)\n# specgate: ignore[SG314] -- pinned\n"
        "vllm serve m \\\n"
        "  --speculative-config \"$SPEC\" \\\n"
        "  $D\n"
    )
    code, report = check(tmp_path, {"run.sh": script})
    (hit,) = findings(report, "SG314")
    assert (hit["file"], hit["line"]) == ("run.sh", 6)
    assert hit["suppressed"] is True and hit["justification"] == "inline: pinned"
    assert code == 0


def test_a_directive_covers_only_its_own_command(tmp_path: Path) -> None:
    # Line 4 ends the first command (no backslash); the unfollowed $D on line 6 belongs to
    # the next one, which no directive precedes: SG314 stands. An even run of backslashes
    # (line 4: an escaped backslash) continues nothing.
    script = (
        "#!/bin/bash\nD=$(cat d.txt)\n# specgate: ignore[SG314] -- pinned\n"
        "echo a \\\\\n"
        "vllm serve m --speculative-config \"$SPEC\" \\\n"
        "  $D\n"
    )
    code, report = check(tmp_path, {"run.sh": script})
    (hit,) = findings(report, "SG314")
    assert hit["line"] == 6 and not hit.get("suppressed")
    assert code == 1


def test_sg312_is_accepted_in_the_serving_file(tmp_path: Path) -> None:
    # ollama is an engine specgate does not read: SG312 at the launch, line 2
    code, report = check(tmp_path, {"run.sh": "#!/bin/bash\n"
                                    "ollama serve  # specgate: ignore[SG312] -- ollama\n"})
    (hit,) = findings(report, "SG312")
    assert hit["line"] == 2 and hit["suppressed"] is True
    assert code == 0


def test_unknown_codes_in_the_serving_file_are_sg004(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\nD=$(cat d.txt)\n"
        "vllm serve m --speculative-config \"$SPEC\" $D  # specgate: ignore[SG999, SG104]\n"
    )
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 1  # SG314 stands: nothing suppressed it
    bad = [f for file in report["files"] for f in file["findings"] if f["code"] == "SG004"]
    assert sorted((f["file"], f["line"]) for f in bad) == [("run.sh", 3), ("run.sh", 3)]
    assert any("SG999" in f["message"] for f in bad)
    assert any("SG104" in f["message"] and "serving file" in f["message"] for f in bad)


def test_another_deployment_is_still_checked(tmp_path: Path) -> None:
    second = (
        "  - name: other\n    speculation:\n      enabled: true\n"
        "      mechanism: ngram\n      draft_length: 4\n    evidence:\n"
        "      accept_length: 9\n"  # AL 9 > 1 + D = 5: SG103 fails
    )
    script = "#!/bin/bash\nD=$(cat d.txt)\nvllm serve m --speculative-config \"$SPEC\" $D\n"
    code, report = check(tmp_path, {"run.sh": script}, more=second)
    assert code == 1
    names = {d["name"]: {f["code"] for f in d["findings"]}
             for file in report["files"] for d in file["deployments"]}
    assert "SG314" in names["chat"]
    assert "SG103" in names["other"]


def test_the_run_suppresses_in_serving_files_exactly_the_documented_codes() -> None:
    from specgate.check.run import _SERVING_CODES
    from specgate.check.serving_ignores import SERVING_CODES

    # Contract change (new-user trial D10): SG315, a count past specgate's bounds, sits
    # in the serving file too (docs/engines.md#out-of-bounds)
    assert _SERVING_CODES == SERVING_CODES == {"SG312", "SG313", "SG314", "SG315"}


def test_a_yaml_tag_the_reader_does_not_settle_is_the_repositorys(tmp_path: Path) -> None:
    # `!!int 0o10`: PyYAML's construct_yaml_int reads it otherwise than an untagged value
    # (docs/engines.md#command-lines-and-launchers): not settled, set by the file itself
    config = (
        "speculative_config:\n  method: ngram\n  num_speculative_tokens: !!int 0o10\n"
        "  prompt_lookup_max: 4\n"
    )
    code, report = check(tmp_path, {"vllm.yaml": config})
    assert code == 1
    (hit,) = findings(report, "SG314")
    assert (hit["file"], hit["line"]) == ("vllm.yaml", 3)


def test_a_variable_in_a_dict_is_named_not_cut(tmp_path: Path) -> None:
    # new-user trial defect 4: DRAFT (line 4) reads the environment and reaches the
    # engine inside speculative_config's dict (line 6): the message names DRAFT and its
    # read, never a cut of the dict; the whole dict goes to the details
    spec = "{'method': 'draft_model', 'model': DRAFT, 'num_speculative_tokens': 5}"
    script = (
        "import os\nfrom vllm import LLM\n\nDRAFT = os.environ['DRAFT_MODEL']\n"
        "llm = LLM(model='meta-llama/Llama-3.1-8B-Instruct',\n"
        f"          speculative_config={spec})\n"
    )
    code, report = check(tmp_path, {"serve.py": script}, mechanism="draft_model", d=5)
    assert code == 0
    (hit,) = findings(report, "SG313")
    assert (hit["file"], hit["line"]) == ("serve.py", 6)
    assert hit["message"] == (
        "`DRAFT` (os.environ['DRAFT_MODEL'], serve.py:4) is set outside the repository (the "
        "deployment supplies it); specgate used the claims file's mechanism draft_model and D 5"
    )
    assert spec in hit["details"]
    assert "state the mechanism and D" not in hit["details"]


def test_a_computed_value_in_a_dict_is_named(tmp_path: Path) -> None:
    script = (
        "from vllm import LLM\ndef pick():\n    return 4\n"
        "llm = LLM(model='m', speculative_config={'method': 'ngram', 'prompt_lookup_max': 4, "
        "'num_speculative_tokens': pick()})\n"
    )
    code, report = check(tmp_path, {"serve.py": script})
    assert code == 1
    (hit,) = findings(report, "SG314")
    assert hit["message"].startswith(
        "the repository decides D at serve.py:4 in a way specgate cannot read (`pick()`);"
    )


TF_HEAD = (
    "import os\nimport sys\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
    "tok = AutoTokenizer.from_pretrained('meta-llama/Llama-3.1-8B-Instruct')\n"
    "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B-Instruct')\n"
    "draft = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-0.5B-Instruct')\n"
    "inputs = tok('hi', return_tensors='pt')\n"
)


def _tf(value: str, head: str = "") -> str:
    """A transformers script: the head (lines 1-7), ``head`` lines, then generate() with
    num_assistant_tokens=``value``."""
    return TF_HEAD + head + (
        f"out = model.generate(**inputs, assistant_model=draft, num_assistant_tokens={value})\n"
    )


def test_a_transformers_keyword_from_argv_warns_and_uses_the_claims(tmp_path: Path) -> None:
    # new-user trial defect 3: sys.argv[2] is the caller's (Python: IndexError with no
    # arguments, the argument's text with them): SG313, the claims file's D 5 is used,
    # and the next action does not ask to state what the claims file states
    code, report = check(tmp_path, {"gen.py": _tf("int(sys.argv[2])")},
                         mechanism="draft_model", d=5)
    assert code == 0
    (hit,) = findings(report, "SG313")
    assert (hit["file"], hit["line"]) == ("gen.py", 8)
    assert hit["message"].startswith("`sys.argv[2]` at gen.py:8 is set outside the repository")
    assert "mechanism draft_model and D 5" in hit["message"]
    (actions,) = [d["next_actions"] for f in report["files"] for d in f["deployments"]]
    assert any(a.startswith("Keep speculation.mechanism and speculation.draft_length")
               for a in actions)
    assert not any(a.startswith("State speculation.mechanism") for a in actions)
    assert findings(report, "SG314") == []


def test_a_transformers_keyword_through_an_environment_name(tmp_path: Path) -> None:
    code, report = check(tmp_path, {"gen.py": _tf("K", "K = int(os.environ['K'])\n")},
                         mechanism="draft_model", d=5)
    assert code == 0
    (hit,) = findings(report, "SG313")
    assert (hit["file"], hit["line"]) == ("gen.py", 9)
    assert hit["message"].startswith(
        "`K` (os.environ['K'], gen.py:8) is set outside the repository"
    )


def test_a_computed_transformers_keyword_fails(tmp_path: Path) -> None:
    code, report = check(tmp_path, {"gen.py": _tf("pick()", "def pick():\n    return 5\n")},
                         mechanism="draft_model", d=5)
    assert code == 1
    (hit,) = findings(report, "SG314")
    assert (hit["file"], hit["line"]) == ("gen.py", 10)
    assert "(`pick()`)" in hit["message"]


def test_a_transformers_default_is_the_scripts_value(tmp_path: Path) -> None:
    # os.getenv('K', '3') with no K in the environment is '3'; int('3') = 3: settled, so
    # prompt lookup's D 3 is read and differs from the claims file's D 5 (SG301, naming
    # 3), no SG313/SG314
    script = TF_HEAD + (
        "out = model.generate(**inputs, prompt_lookup_num_tokens=int(os.getenv('K', '3')))\n"
    )
    code, report = check(tmp_path, {"gen.py": script}, mechanism="ngram", d=5)
    assert code == 1  # SG301: a D the serving file sets that differs from the stated D fails
    assert findings(report, "SG313") == findings(report, "SG314") == []
    (hit,) = findings(report, "SG301")
    assert "the claims file says 5 but gen.py says 3" in hit["message"]


def test_a_long_command_substitution_is_marked_cut(tmp_path: Path) -> None:
    # SPEC's $(…) runs past the 40 characters shown: the first 40 ("$(cat " 6 + "/etc/" 5
    # + "spec-config-for-the-deploymen" 29) and a mark that the rest is cut
    script = (
        "#!/bin/bash\nSPEC=$(cat /etc/spec-config-for-the-deployment-with-a-long-name.json)\n"
        'vllm serve m --speculative-config "$SPEC"\n'
    )
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 1
    (hit,) = findings(report, "SG314")
    # the message names line 2, where $(…) sets SPEC (docs/engines.md#unsettled-values)
    assert hit["message"].startswith(
        "the repository decides D at run.sh:3 in a way specgate cannot read (`$SPEC` (set "
        "from `$(cat /etc/spec-config-for-the-deploymen…` at run.sh:2));"
    )
    assert "`$(cat /etc/spec-config-for-the-deploymen…`" in hit["details"]


def _json_with(d: str) -> str:
    """A launch whose --speculative-config JSON takes D from ``d`` (double-quoted)."""
    return (
        '#!/bin/bash\nvllm serve m --speculative-config "{\\"method\\": \\"ngram\\", '
        f'\\"num_speculative_tokens\\": {d}, \\"prompt_lookup_max\\": 4}}"\n'
    )


def test_an_argument_with_a_default_is_the_callers(tmp_path: Path) -> None:
    # new-user trial D4: bash runs `${1:-4}` as 4 only when the caller passes no
    # argument (POSIX 2.6.2), so $1, from outside the repository, decides D: SG313
    # naming $1, at the expansion's column: `vllm serve m --speculative-config "{\"method\":
    # \"ngram\", \"num_speculative_tokens\": ` is 87 characters, so `${` is at column 88
    code, report = check(tmp_path, {"run.sh": _json_with("${1:-4}")})
    assert code == 0
    (hit,) = findings(report, "SG313")
    assert (hit["file"], hit["line"], hit["column"]) == ("run.sh", 2, 88)
    assert hit["message"].startswith("`$1` (`${1:-4}` at run.sh:2) is set outside")
    assert findings(report, "SG314") == []


def test_a_check_on_an_environment_variable_is_the_deployments(tmp_path: Path) -> None:
    # `${SPEC_TOKENS:?msg}`: bash stops the script when the environment does not set it
    # and passes its value when it does: the deployment's, SG313 naming it (column 88)
    code, report = check(tmp_path, {"run.sh": _json_with("${SPEC_TOKENS:?set it}")})
    assert code == 0
    (hit,) = findings(report, "SG313")
    assert (hit["line"], hit["column"]) == (2, 88)
    assert hit["message"].startswith(
        "`$SPEC_TOKENS` (`${SPEC_TOKENS:?set it}` at run.sh:2) is set outside"
    )


def test_an_expansion_not_followed_is_shown_to_its_closing_brace(tmp_path: Path) -> None:
    # `${D/x/y}` (a bash substitution specgate does not evaluate) as the last JSON
    # value: the excerpt ends at its own brace, never the JSON's `}` after it
    script = (
        '#!/bin/bash\nD=4\nvllm serve m --speculative-config "{\\"method\\": \\"ngram\\", '
        '\\"num_speculative_tokens\\": ${D/x/y}}"\n'
    )
    code, report = check(tmp_path, {"run.sh": script})
    assert code == 1
    (hit,) = findings(report, "SG314")
    assert "(`${D/x/y}`)" in hit["message"]
    assert (hit["line"], hit["column"]) == (3, 88)


def test_a_services_own_variable_in_its_shell_is_the_repositorys(tmp_path: Path) -> None:
    # new-user trial D5: `$$D` is `$D` to the container's `sh -c`, which expands it from
    # the service's environment: D 4, set in the repository (held to Compose and dash
    # in tests/oracle/test_service_shell_oracle.py); no SG313, and no SG301 against D 4
    script = (
        "vllm serve m --speculative-config "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": '$$D', \"prompt_lookup_max\": 4}'"
    )
    compose = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    environment: {D: '4'}\n    entrypoint: [sh, -c]\n"
        f"    command: [{json.dumps(script)}]\n"
    )
    code, report = check(tmp_path, {"compose.yaml": compose})
    assert findings(report, "SG313") == [] and findings(report, "SG301") == []
    assert code == 0
    # the same D from an env_file line Compose's readers read differently: SG314 at the
    # word the shell expands it in (line 6), naming the line that sets it
    (tmp_path / "d.env").write_text('D="${X:-4}"\n')
    compose = compose.replace("environment: {D: '4'}", "env_file: d.env")
    code, report = check(tmp_path, {"compose.yaml": compose})
    (hit,) = findings(report, "SG314")
    assert (hit["file"], hit["line"]) == ("compose.yaml", 6)
    assert "set at d.env:1" in hit["details"]
    assert code == 1
