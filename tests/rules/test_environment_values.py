"""Environment values written with interpolation (docs/engines.md#environment-values): a
Compose ``environment:`` value is what Compose gives the container (its ``.env``, its
defaults) or unsettled, never its text as written. ``SGLANG_ENABLE_SPEC_V2: ${SPEC_V2}``
with no ``.env`` was read as the text ``${SPEC_V2}``, "not a value SGLang reads", so spec
v2 off: a wrong settled value that hid SG307.

Expected values, worked by hand: SGLang 0.5.7 refuses eagle_topk above 1 under spec v2
(sglang.json ``spec-v2-topk-refused``: SG307 fail when the variable is settled on, warn when
unsettled); Compose gives ``${SPEC_V2}`` the ``.env`` value, ``${V2:-1}`` ``1`` with no
``.env``, ``$${V2}`` the text ``${V2}`` (held to Compose v2 in
tests/oracle/test_environment_values_oracle.py). llama.cpp reads LLAMA_ARG_DRAFT_MAX as
--draft-max (tests/rules/test_env_files.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.rules.test_env_files import IMAGE as LLAMA_IMAGE
from tests.rules.test_env_files import check, codes

SGLANG = """services:
  sglang:
    image: lmsysorg/sglang:v0.5.7
    environment:
{env}
    command: >
      python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct
      --speculative-algorithm EAGLE --speculative-draft-model-path d/e
      --speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8
"""


def _sg307(dep: Any) -> list[str]:
    return [f["severity"] for f in dep["findings"] if f["code"] == "SG307"]


def _sglang(tmp: Path, env: str, dotenv: str | None = None) -> Any:
    files = {"compose.yaml": SGLANG.format(env=env)}
    if dotenv is not None:
        files[".env"] = dotenv
    return check(tmp, files, "compose.yaml")[1]


def test_a_reference_no_env_file_sets_is_unsettled_not_its_text(tmp_path: Path) -> None:
    dep = _sglang(tmp_path, "      SGLANG_ENABLE_SPEC_V2: ${SPEC_V2}")
    assert _sg307(dep) == ["warn"]
    assert not any("${SPEC_V2}" in note for note in dep["inputs"]["engine"].get("notes", []))


def test_the_env_file_value_is_the_value(tmp_path: Path) -> None:
    dep = _sglang(tmp_path, "      SGLANG_ENABLE_SPEC_V2: ${SPEC_V2}", "SPEC_V2=1\n")
    assert _sg307(dep) == ["fail"]
    (tmp_path / "off").mkdir()
    dep = _sglang(tmp_path / "off", "      SGLANG_ENABLE_SPEC_V2: ${SPEC_V2}", "SPEC_V2=0\n")
    assert _sg307(dep) == []


def test_the_list_form_and_a_default(tmp_path: Path) -> None:
    dep = _sglang(tmp_path, "      - SGLANG_ENABLE_SPEC_V2=${V2:-1}")
    assert _sg307(dep) == ["fail"]
    (tmp_path / "u").mkdir()
    dep = _sglang(tmp_path / "u", "      - SGLANG_ENABLE_SPEC_V2=${V2}")
    assert _sg307(dep) == ["warn"]


def test_an_escaped_dollar_is_the_text(tmp_path: Path) -> None:
    # $${V2}: the container gets the text ${V2}, which SGLang reads as off (it warns)
    dep = _sglang(tmp_path, "      SGLANG_ENABLE_SPEC_V2: $${V2}")
    assert _sg307(dep) == []
    assert any("${V2}" in n and "is not a value SGLang reads" in n
               for n in dep["inputs"]["engine"]["notes"])


LLAMA = f"""services:
  llama:
    image: {LLAMA_IMAGE}
    environment:
      LLAMA_ARG_DRAFT_MAX: ${{D}}
    command: -m /m.gguf -md /d.gguf
"""


def test_a_llamacpp_variable_no_env_file_sets_is_the_deployments(tmp_path: Path) -> None:
    # D from the environment docker compose runs in: SG313 at the value, the claims D used
    code, dep = check(tmp_path, {"compose.yaml": LLAMA}, "compose.yaml",
                      stated="\n      mechanism: draft_model\n      draft_length: 4")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG313"]
    assert (hit["file"], hit["line"], hit["severity"]) == ("compose.yaml", 5, "warn")
    assert hit["message"].startswith("`LLAMA_ARG_DRAFT_MAX` at compose.yaml:5 is set outside")
    assert "SG104" not in codes(dep) and code == 0


def test_a_llamacpp_variable_the_env_file_sets(tmp_path: Path) -> None:
    code, dep = check(tmp_path, {"compose.yaml": LLAMA, ".env": "D=4\n"}, "compose.yaml")
    assert dep["inputs"]["engine"]["draft_length"] == 4
    assert "SG313" not in codes(dep) and code == 0


SGLANG_RUN = (
    "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
    "--speculative-algorithm EAGLE --speculative-draft-model-path d/e "
    "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"
)


def test_an_exported_value_from_the_environment_is_unsettled(tmp_path: Path) -> None:
    # export SGLANG_ENABLE_SPEC_V2=$V2: bash gives the engine what the caller's V2 is
    # (tests/oracle/test_shell_env_values_oracle.py); never the text `$V2`
    script = (f"#!/bin/bash\nexport SGLANG_ENABLE_SPEC_V2=$V2\ndocker run --gpus all "
              f"lmsysorg/sglang:v0.5.7 {SGLANG_RUN}\n")
    _, dep = check(tmp_path, {"run.sh": script}, "run.sh")
    assert _sg307(dep) == []  # not passed into the container (no -e): unset there
    (tmp_path / "e").mkdir()
    _, dep = check(tmp_path / "e", {"run.sh": script.replace(
        "--gpus all", "--gpus all -e SGLANG_ENABLE_SPEC_V2")}, "run.sh")
    assert _sg307(dep) == ["warn"]


def test_a_docker_run_e_value_from_the_environment_is_unsettled(tmp_path: Path) -> None:
    script = (f"#!/bin/bash\ndocker run --gpus all -e SGLANG_ENABLE_SPEC_V2=$V2 "
              f"lmsysorg/sglang:v0.5.7 {SGLANG_RUN}\n")
    _, dep = check(tmp_path, {"run.sh": script}, "run.sh")
    assert _sg307(dep) == ["warn"]
    (tmp_path / "set").mkdir()
    _, dep = check(tmp_path / "set", {"run.sh": script.replace("#!/bin/bash\n",
                                                                "#!/bin/bash\nV2=1\n")}, "run.sh")
    assert _sg307(dep) == ["fail"]


def test_an_env_file_sets_sglangs_variable(tmp_path: Path) -> None:
    # Compose env_file: read for every engine, not only those configured by variables
    compose = (f"services:\n  s:\n    image: lmsysorg/sglang:v0.5.7\n    env_file: s.env\n"
               f"    command: {SGLANG_RUN}\n")
    _, dep = check(tmp_path, {"compose.yaml": compose, "s.env": "SGLANG_ENABLE_SPEC_V2=1\n"},
                   "compose.yaml")
    assert _sg307(dep) == ["fail"]
    # a file outside the repository may set it: not read as unset
    (tmp_path / "out").mkdir()
    _, dep = check(tmp_path / "out", {"compose.yaml": compose.replace("s.env", "/etc/s.env")},
                   "compose.yaml")
    assert _sg307(dep) == ["warn"]


WORKFLOW = f"""on: push
jobs:
  serve:
    runs-on: gpu
    env:
      SGLANG_ENABLE_SPEC_V2: {{value}}
    steps:
      - run: {SGLANG_RUN}
"""


def test_a_workflow_expression_is_unsettled(tmp_path: Path) -> None:
    # GitHub evaluates ${{ vars.V2 }} when the workflow runs (docs.github.com, "Expressions":
    # `env: MY_ENV_VAR: ${{ <expression> }}`): not the text, which SGLang reads as off
    (tmp_path / "w").mkdir()
    _, dep = check(tmp_path / "w", {"serve.yml": WORKFLOW.format(value="${{ vars.V2 }}")},
                   "serve.yml")
    notes = " ".join(dep["inputs"]["engine"].get("notes", []))
    assert "is not a value SGLang reads" not in notes and "${{" not in notes
    (tmp_path / "x").mkdir()  # the text of a value that is no expression is read as written
    _, dep = check(tmp_path / "x", {"serve.yml": WORKFLOW.format(value="'{ vars.V2 }'")},
                   "serve.yml")
    assert "is not a value SGLang reads" in " ".join(dep["inputs"]["engine"]["notes"])


def test_a_compose_run_e_value_from_the_environment_is_unsettled(tmp_path: Path) -> None:
    compose = f"services:\n  s:\n    image: lmsysorg/sglang:v0.5.7\n    command: {SGLANG_RUN}\n"
    script = "#!/bin/bash\ndocker compose run -e SGLANG_ENABLE_SPEC_V2=$V2 s\n"
    _, dep = check(tmp_path, {"compose.yaml": compose, "run.sh": script}, "run.sh")
    assert _sg307(dep) == ["warn"]
    (tmp_path / "set").mkdir()
    _, dep = check(tmp_path / "set", {"compose.yaml": compose, "run.sh": script.replace(
        "#!/bin/bash\n", "#!/bin/bash\nV2=1\n")}, "run.sh")
    assert _sg307(dep) == ["fail"]


def test_a_variable_set_on_some_paths_is_not_composes_to_settle(tmp_path: Path) -> None:
    # bash gives docker compose SPEC_V2=0 or 1 by the branch: Compose's ${SPEC_V2} is
    # unsettled, not 1 (the value as last written)
    compose = SGLANG.format(env="      SGLANG_ENABLE_SPEC_V2: ${SPEC_V2}")
    script = ('#!/bin/bash\nexport SPEC_V2=0\nif [ -n "$X" ]; then SPEC_V2=1; fi\n'
              "docker compose run sglang\n")
    _, dep = check(tmp_path, {"compose.yaml": compose, "run.sh": script}, "run.sh")
    assert _sg307(dep) == ["warn"]
    (tmp_path / "b").mkdir()
    _, dep = check(tmp_path / "b", {"compose.yaml": compose, "run.sh": script.replace(
        'if [ -n "$X" ]; then SPEC_V2=1; fi\n', "SPEC_V2=1\n")}, "run.sh")
    assert _sg307(dep) == ["fail"]
