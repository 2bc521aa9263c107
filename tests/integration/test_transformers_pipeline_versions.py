"""A hub id string given to ``pipeline()`` as ``assistant_model`` implies transformers
4.48.0 or later (the pipeline loads it from there: ``pipelines/base.py``
``load_assistant_model`` is in the 4.48.0 wheel, absent from 4.47.1, where the string
reaches ``generate()``, which cannot use it as a model). With the version unknown, a
refusal that holds at every release the settings allow fails (docs/trust.md,
docs/engines.md#versions); notes cite no default outside those releases. Columns are
counted by hand on the script's line 3.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from specgate.check.run import CheckOptions, check_file

PIPE = (
    'pipe = pipeline("text-generation", model="meta-llama/Llama-3.1-8B-Instruct", '
    'assistant_model={assistant}, batch_size=4)\n'
)
SCRIPT = 'from transformers import AutoModelForCausalLM, pipeline\n{bind}' + PIPE + (
    'print(pipe(["a", "b", "c", "d"]))\n'
)
CLAIMS = """\
version: 1
deployments:
  - name: hf
    speculation:
      enabled: true
      mechanism: draft_model
      engine: transformers
{pin}      engine_config: gen.py
"""


def _check(
    root: Path, monkeypatch: pytest.MonkeyPatch, *, assistant: str, bind: str = "", pin: str = ""
) -> Any:
    (root / ".git").mkdir()
    (root / "gen.py").write_text(SCRIPT.format(assistant=assistant, bind=bind), "utf-8")
    (root / "specgate.yaml").write_text(CLAIMS.format(pin=pin), "utf-8")
    monkeypatch.chdir(root)
    report = check_file(Path("specgate.yaml"), "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    (deployment,) = report.deployments
    return deployment


HUB_ID = '"meta-llama/Llama-3.2-1B-Instruct"'


def test_a_hub_id_on_pipeline_implies_4_48_and_the_batch_refusal_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deployment = _check(tmp_path, monkeypatch, assistant=HUB_ID, bind="\n")
    (sg307,) = [f for f in deployment.findings if f.code == "SG307"]
    # line 3 (line 2 is blank); `pipe = pipeline(` 16, `"text-generation"` 17, `, ` 2,
    # `model="…8B-Instruct"` 40, `, ` 2, `assistant_model=` 16, the id 34, `, ` 2,
    # `batch_size=` 11 ⇒ the 4 at column 141
    assert (sg307.file, sg307.line, sg307.column, sg307.severity) == ("gen.py", 3, 141, "fail")
    engine = deployment.deployment.inputs.engine
    assert dict(engine.implied_versions) == {
        "from": "4.48.0", "before": None, "newest_confirmed": None,
    }
    notes = " ".join(engine.notes)
    # the 4.45.0 boundary (5 drafts, the 'heuristic' schedule) lies outside 4.48.0+
    assert "4.45.0" not in notes and "heuristic" not in notes
    assert "default is 20 at every release the settings allow (4.48.0 or later)" in notes


def test_a_hub_id_on_pipeline_at_4_47_1_is_sg310(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin = '      engine_version: "4.47.1"\n'
    deployment = _check(tmp_path, monkeypatch, assistant=HUB_ID, bind="\n", pin=pin)
    (sg310,) = [f for f in deployment.findings if f.code == "SG310"]
    # the id's opening quote: 16 + 17 + 2 + 40 + 2 + 16 = 93 ⇒ column 94
    assert (sg310.line, sg310.column, sg310.severity) == (3, 94, "fail")
    assert "added in 4.48.0" in sg310.message


def test_a_model_object_on_pipeline_narrows_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 4.47.1 passes a model object on to generate() as a generate keyword
    # (TextGenerationPipeline._sanitize_parameters), so no release is ruled out: the
    # refusal, recorded from 4.48.0 only, still warns with the version unknown
    bind = 'helper = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")\n'
    deployment = _check(tmp_path, monkeypatch, assistant="helper", bind=bind)
    (sg307,) = [f for f in deployment.findings if f.code == "SG307"]
    assert sg307.severity == "warn"
    assert deployment.deployment.inputs.engine.implied_versions is None
