"""Python launchers read as literal keyword arguments, never run (real.md defect 5).

The launcher below is nebius/EAGLE3-gpt-oss-120b's "Usage with vLLM" as published on
its Hugging Face card (real.md deployment 11): EAGLE-3, K = 6 ⇒ D 6, N_verify 7.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rules.test_rules import claims, dep

from specgate.check.report import FileReport
from specgate.core.errors import InputError
from specgate.load.python_launcher import MAX_DEPTH, load_python_launcher

NEBIUS = '''from vllm import LLM, SamplingParams

llm = LLM(
    model="openai/gpt-oss-120b",
    speculative_config={
        "method": "eagle3",
        "model": "nebius/EAGLE3-gpt-oss-120b",
        "num_speculative_tokens": 6,
    },
)
outputs = llm.generate(["Explain."], SamplingParams(temperature=0.7))
'''


def test_literal_keywords_are_read_with_their_lines() -> None:
    doc = load_python_launcher(NEBIUS, "offline.py")
    assert doc.data == {
        "model": "openai/gpt-oss-120b",
        "speculative_config": {
            "method": "eagle3",
            "model": "nebius/EAGLE3-gpt-oss-120b",
            "num_speculative_tokens": 6,
        },
    }
    # "num_speculative_tokens": 6 stands on line 8, its value at column 35
    assert doc.locate(("speculative_config", "num_speculative_tokens")) == (8, 35)
    assert doc.locate(("model",)) == (4, 11)


def test_a_positional_model_and_a_variable_keyword() -> None:
    text = 'import os\nLLM("facebook/opt-125m", tensor_parallel_size=int(os.environ["TP"]),\n' \
           '    speculative_config={"method": "ngram", "num_speculative_tokens": 3})\n'
    doc = load_python_launcher(text, "p.py")
    assert doc.data == {
        "model": "facebook/opt-125m",
        "speculative_config": {"method": "ngram", "num_speculative_tokens": 3},
    }
    assert doc.notes == ("tensor_parallel_size not read: not a literal (p.py:2)",)


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ('LLM(model="a/b",\n  speculative_config={"method": "ngram"\n',
         "Python syntax error: '{' was never closed", 2),
        ('spec = {"method": "ngram"}\nspec["num_speculative_tokens"] = 3\n'
         'LLM(model="a/b", speculative_config=spec)\n',
         "speculative_config not read: not a literal (spec)", 3),
        ('LLM(model="a/b", speculative_config=' + '[' * 250 + ']' * 250 + ')\n',
         "Python syntax error: too many nested parentheses", 1),
        ('LLM(model="a/b", speculative_config=' + '{"a":' * 40 + '1' + '}' * 40 + ')\n',
         f"speculative_config not read: a literal nested deeper than {MAX_DEPTH} levels", 1),
        # a form not read (UnreadForm: SG312 on the deployment, issue 24), not the end
        ("print('no launcher here')\n",
         "specgate does not read how this script starts the engine: no LLM(...)", None),
        ("x = 1\x00\n", "Python syntax error: source code string cannot contain null bytes", None),
    ],
)
def test_unreadable_launchers_are_one_line_input_errors(
    text: str, reason: str, line: int | None
) -> None:
    with pytest.raises(InputError) as caught:
        load_python_launcher(text, "p.py")
    assert caught.value.reason.startswith(reason)
    assert caught.value.line == line


def test_the_file_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f'open({str(marker)!r}, "w").close()\nLLM(model="a/b", ' \
           'speculative_config={"method": "ngram", "num_speculative_tokens": 3})\n'
    load_python_launcher(text, "p.py")
    assert not marker.exists()


Check = Callable[..., FileReport]


def test_the_published_launcher_gets_a_verdict(tmp_path: Path, check_text: Check) -> None:
    # real.md deployment 11: τ 2.81 ≤ 1 + 6; before, "YAML syntax error", exit 2
    (tmp_path / ".git").mkdir()
    (tmp_path / "offline.py").write_text(NEBIUS, encoding="utf-8")
    report = check_text(claims(dep(
        al=2.81, rho=0.05, speculation={"engine_config": "offline.py"},
    )))
    (deployment,) = report.deployments
    engine = deployment.deployment.inputs.engine
    assert (engine.engine, engine.mechanism, engine.draft_length, engine.verify_tokens) == (
        "vllm", "eagle3", 6, 7
    )
    assert engine.target_model == "openai/gpt-oss-120b"
    assert engine.spans["draft_length"] == (8, 35)


def test_several_launcher_calls_follow_the_several_configs_rule(
    tmp_path: Path, check_text: Check
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "two.py").write_text(
        'EngineArgs(model="m/a", speculative_config={"method": "ngram", '
        '"num_speculative_tokens": 4, "prompt_lookup_max": 4})\n'
        'AsyncEngineArgs(model="m/a", speculative_config={"method": "ngram", '
        '"num_speculative_tokens": 5, "prompt_lookup_max": 4})\n',
        encoding="utf-8",
    )
    report = check_text(claims(dep(al=2.0, speculation={"engine_config": "two.py"})))
    assert report.status == "error" and report.error_file == "two.py"
    assert report.error is not None and "2 speculative configurations" in report.error
    assert "differ in D (4 and 5)" in report.error
