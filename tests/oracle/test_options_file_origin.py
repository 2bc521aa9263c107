"""An options file whose path the launcher holds in a variable (new-user trial, issue 24
leftover; docs/engines.md#unsettled-values): ``--extra_llm_api_options $OPTS``,
``--config "$CFG"``, ``--config "$1"``. Which file the engine reads, and so D and the
method in it, is not settled: SG313 when the variable comes from outside the repository
(the deployment supplies it), SG314 when the repository sets it in a way specgate does not
follow (``$(…)``, a branch). Never exit 2 ("file '$OPTS' does not exist", before) and never
silently nothing.

Each origin is worked by hand from bash's rules and, for "outside", checked against bash
itself (:func:`tests.oracle.test_value_origin.check_outside`): run with an empty
environment the variable is unset when the engine runs; set in the environment, its value
reaches the engine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.oracle.test_value_origin import check_outside

from specgate.cli.main import main
from specgate.core.errors import UnsettledValue
from specgate.inputs.engines import read_engine_file

TRT = "trtllm-serve m --extra_llm_api_options"
#: name -> (script, origin, the line of the launch)
CASES: dict[str, tuple[str, str, int]] = {
    "env-unquoted": (f"{TRT} $OPTS\n", "outside", 1),
    "env-quoted": (f'{TRT} "$OPTS"\n', "outside", 1),
    "env-equals": ('trtllm-serve m --extra_llm_api_options="$OPTS"\n', "outside", 1),
    "vllm-config": ('vllm serve m --config "$CFG"\n', "outside", 1),
    "argument": ('vllm serve m --config "$1"\n', "outside", 1),
    "from-env-name": ('CFG="$SPEC_FILE"\nvllm serve m --config "$CFG"\n', "outside", 2),
    "substitution": (f'OPTS=$(ls spec*.yaml | head -1)\n{TRT} "$OPTS"\n', "repository", 2),
    "branch": ('if [ -n "$X" ]; then CFG=cfg.yaml; else CFG=b.yaml; fi\n'
               'vllm serve m --config "$CFG"\n', "repository", 2),
    "sourced": (f'. ./paths.env\n{TRT} "$OPTS"\n', "repository", 2),
}
#: name -> the column of the `$` of the path's expansion on the launch's line, counted by
#: hand (1-based): TRT is 38 characters ("trtllm-serve" 12, " m" 2, " " 1,
#: "--extra_llm_api_options" 23), so an unquoted word starts at 40, a quoted one's `$` at 41;
#: `vllm serve m --config "` is 23 characters, so `$` at 24. A variable set from another
#: expansion (`CFG="$SPEC_FILE"`, `OPTS=$(…)`) is told at its own `$` too (it was told at
#: the quote: the finding points at the expansion's line and column,
#: docs/engines.md#unsettled-values).
COLUMNS = {
    "env-unquoted": 40, "env-quoted": 41, "env-equals": 41, "vllm-config": 24,
    "argument": 24, "from-env-name": 24, "substitution": 41, "branch": 24, "sourced": 41,
}
SPEC_YAML = "speculative_config:\n  decoding_type: NGram\n  max_draft_len: 4\n"
CFG_YAML = "speculative-config:\n  method: ngram\n  num_speculative_tokens: 4\n"


def _folder(tmp: Path, script: str) -> Path:
    (tmp / "spec.yaml").write_text(SPEC_YAML)
    (tmp / "cfg.yaml").write_text(CFG_YAML)
    (tmp / "serve.sh").write_text("#!/bin/bash\n" + script)
    return tmp / "serve.sh"


@pytest.mark.parametrize("name", CASES)
def test_an_options_file_in_a_variable_is_unsettled(name: str, tmp_path: Path) -> None:
    script, expected, line = CASES[name]
    with pytest.raises(UnsettledValue) as caught:
        read_engine_file(_folder(tmp_path, script), "serve.sh")
    assert (caught.value.origin, caught.value.line) == (expected, line + 1)
    # at the `$` of the word naming the file, not column 1 of the line (new-user trial:
    # `--extra_llm_api_options "$SPEC_FILE"` was reported at trt.sh:2:1)
    assert caught.value.column == COLUMNS[name]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the oracle")
@pytest.mark.parametrize("name", [n for n, (_, o, _) in CASES.items() if o == "outside"])
def test_bash_runs_every_outside_path_unset(name: str, tmp_path: Path) -> None:
    script = "#!/bin/bash\n" + CASES[name][0]
    with pytest.raises(UnsettledValue) as caught:
        read_engine_file(_folder(tmp_path, CASES[name][0]), "serve.sh")
    assert check_outside(script, caught.value) == []


@pytest.mark.parametrize(("name", "code"), [("env-quoted", "SG313"), ("substitution", "SG314")])
def test_the_check_goes_on_with_a_finding(name: str, code: str, tmp_path: Path) -> None:
    _folder(tmp_path, CASES[name][0])
    (tmp_path / "claims.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    model: {name: m, parameters_b: 8}\n"
        "    speculation: {enabled: true, mechanism: ngram, draft_length: 4, "
        "engine_config: serve.sh, draft_depth_ratio: 0.05}\n"
        "    evidence: {accept_length: 2.0}\n"
    )
    out = tmp_path / "report.json"
    code_run = main(["check", str(tmp_path / "claims.specgate.yaml"), "--format", "json",
                     "--output", str(out)])
    assert code_run != 2
    findings = json.loads(out.read_text())["files"][0]["deployments"][0]["findings"]
    hits = [f for f in findings if f["code"] == code]
    assert len(hits) == 1
    assert (hits[0]["line"], hits[0]["column"]) == (CASES[name][2] + 1, COLUMNS[name])


POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n"
    "    - name: trt\n      image: nvcr.io/nvidia/tensorrt-llm/release:1.2.0\n{env}"
    '      command: ["trtllm-serve", "m", "--extra_llm_api_options", "$(OPTS)"]\n'
)


def test_a_kubernetes_path_from_the_containers_env_is_followed(tmp_path: Path) -> None:
    # kubernetes.io "Define a Command and Arguments for a Container": $(OPTS) in command
    # is the container's variable OPTS: spec.yaml, whose max_draft_len is 4
    (tmp_path / "spec.yaml").write_text(SPEC_YAML)
    (tmp_path / "pod.yaml").write_text(
        POD.format(env="      env:\n        - name: OPTS\n          value: spec.yaml\n")
    )
    config = read_engine_file(tmp_path / "pod.yaml", "pod.yaml")
    assert (config.engine, config.draft_length) == ("trtllm", 4)


def test_a_kubernetes_path_envfrom_may_set_is_outside(tmp_path: Path) -> None:
    # envFrom imports every key of a ConfigMap this file does not hold: OPTS may be any
    (tmp_path / "pod.yaml").write_text(
        POD.format(env="      envFrom:\n        - configMapRef:\n            name: paths\n")
    )
    with pytest.raises(UnsettledValue) as caught:
        read_engine_file(tmp_path / "pod.yaml", "pod.yaml")
    assert (caught.value.origin, caught.value.line) == ("outside", 12)
