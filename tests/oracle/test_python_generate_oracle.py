"""Python itself as the oracle of the transformers-script reader
(:mod:`specgate.load.python_generate`; docs/engines.md#transformers-scripts): never a wrong
settled value.

Random hostile scripts (tests/oracle/generate_scripts.py) run in a throwaway subprocess
with a stub ``transformers`` on ``PYTHONPATH`` (tests/oracle/transformers_stub.py) that
records, for each ``generate()``/pipeline call that runs, what transformers would run with:
an assistant or not, ``prompt_lookup_num_tokens``, ``assistant_early_exit``,
``cache_implementation``, the assistant's ``num_assistant_tokens`` (D) and the batch size.
specgate (which never runs them) must read each value it settles as every run of that call
had it, or leave it unsettled (an input error, or a note saying it is not read).

A fixed seed and :data:`CASES` scripts in CI; ``SPECGATE_ORACLE_CASES=5000`` runs more.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from tests.oracle.generate_scripts import script as random_script
from tests.oracle.transformers_stub import SOURCE

from specgate.core.errors import InputError
from specgate.load.document import Document
from specgate.load.python_generate import load_transformers_script

CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "60"))
#: transformers' defaults at 5.19.0 of the fields compared (generation/configuration_utils.py)
DEFAULTS: dict[str, object] = {
    "prompt_lookup_num_tokens": None,
    "assistant_early_exit": None,
    "cache_implementation": None,
}
#: notes that say a setting of the call may be hidden from the reader
_HIDDEN = ("**", "generation_config", "not a literal")


def stub(tmp: Path) -> Path:
    root = tmp / "stubs"
    (root / "transformers").mkdir(parents=True, exist_ok=True)
    (root / "transformers" / "__init__.py").write_text(SOURCE, encoding="utf-8")
    return root


def run(text: str, tmp: Path) -> list[dict[str, object]]:
    """The stub's records of ``text`` run as ``__main__`` (a crash ends the records)."""
    path = tmp / "gen.py"
    path.write_text(text, encoding="utf-8")
    log = tmp / "calls.jsonl"
    log.unlink(missing_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(tmp / "stubs"),
        "SPECGATE_STUB_LOG": str(log),
    }
    subprocess.run(
        [sys.executable, str(path)], env=env, check=False, timeout=30, capture_output=True,
        cwd=tmp,
    )
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def disagreements(doc: Document, ran: list[dict[str, object]]) -> list[str]:
    """Each settled value of ``doc`` that some run of its call had otherwise."""
    data = doc.data
    mappings = data if isinstance(data, list) else ([data] if data else [])
    hidden = any(word in note for note in doc.notes for word in _HIDDEN)
    wrong: list[str] = []
    lines: dict[int, dict[str, object]] = {}
    for index, mapping in enumerate(mappings):
        assert isinstance(mapping, dict)
        lines[doc.positions[(index,) if isinstance(data, list) else ()].value.line] = mapping
    for record in ran:
        line = record["line"]
        assert isinstance(line, int)
        mapping = lines.get(line)
        speculates = record["assistant"] or record["prompt_lookup_num_tokens"] is not None or (
            record["assistant_early_exit"] is not None
        )
        if mapping is None:
            if speculates and not hidden:
                wrong.append(f"missed: line {line} ran assisted generation, not read")
            continue
        read_assistant = "assistant_model" in mapping
        if (read_assistant or not hidden) and read_assistant != record["assistant"]:
            wrong.append(f"assistant at line {line}: read {read_assistant}")
        for key, default in DEFAULTS.items():
            if (key in mapping or not hidden) and mapping.get(key, default) != record[key]:
                wrong.append(f"{key} at line {line}: read {mapping.get(key, default)!r}, "
                             f"ran {record[key]!r}")
        if record["assistant"] and "assistant_model" in mapping:
            own = mapping.get("assistant_generation_config")
            d = own.get("num_assistant_tokens", 20) if isinstance(own, dict) else 20
            if d != record["d"]:
                wrong.append(f"D at line {line}: read {d!r}, ran {record['d']!r}")
        if "batch_size" in mapping and mapping["batch_size"] != record["batch_size"]:
            wrong.append(f"batch_size at line {line}: read {mapping['batch_size']!r}, "
                         f"ran {record['batch_size']!r}")
    return wrong


def run_corpus(cases: int, tmp: Path, seed: int = 24) -> dict[str, object]:
    """Counts over ``cases`` generated scripts: agreed, unsettled, and the wrong ones."""
    stub(tmp)
    rng = random.Random(seed)
    agreed = unsettled = 0
    wrong: list[tuple[str, list[str]]] = []
    for _ in range(cases):
        text = random_script(rng)
        ran = run(text, tmp)
        try:
            doc = load_transformers_script(text, "gen.py")
        except InputError:
            unsettled += 1
            continue
        assert doc is not None, text
        found = disagreements(doc, ran)
        if found:
            wrong.append((text, found))
        else:
            agreed += 1
    return {"agreed": agreed, "unsettled": unsettled, "wrong": wrong}


def test_generate_reader_agrees_with_python_or_is_unsettled(tmp_path: Path) -> None:
    counts = run_corpus(CASES, tmp_path)
    wrong = counts["wrong"]
    assert isinstance(wrong, list)
    assert not wrong, (
        f"{len(wrong)} of {CASES} read otherwise than Python ran:\n{wrong[0][0]}\n{wrong[0][1]}"
    )
    assert isinstance(counts["agreed"], int) and counts["agreed"] > CASES // 4


HEAD = (
    "from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, pipeline\n"
    'tok = AutoTokenizer.from_pretrained("tok")\n'
    'model = AutoModelForCausalLM.from_pretrained("target")\n'
    'draft = AutoModelForCausalLM.from_pretrained("draft")\n'
)


@pytest.mark.parametrize(
    ("body", "line"),
    [
        # found by the oracle, each worked by hand against transformers@v5.19.0:
        # an assistant that may be None (generate() then runs no assisted generation)
        ('model.generate(tok("x").input_ids, assistant_model=draft if X else None)\n', 5),
        ('helper = None\nmodel.generate(tok("x").input_ids, assistant_model=helper)\n', 6),
        # the model's config changed by a route not followed: update(), setattr, by name
        ("model.generation_config.update(prompt_lookup_num_tokens=3)\n"
         'model.generate(tok("x").input_ids)\n', 5),
        ('setattr(model.generation_config, "prompt_lookup_num_tokens", 3)\n'
         'model.generate(tok("x").input_ids)\n', 5),
        ('getattr(model, "generation_config").prompt_lookup_num_tokens = 3\n'
         'model.generate(tok("x").input_ids)\n', 5),
        ('vars(model.generation_config)["cache_implementation"] = "static"\n'
         'model.generate(tok("x").input_ids, assistant_model=draft)\n', 5),
        # a generation config changed after it is made (gc.update, gc.KEY = …)
        ("gc = GenerationConfig(max_new_tokens=4)\ngc.prompt_lookup_num_tokens = 3\n"
         'model.generate(tok("x").input_ids, generation_config=gc)\n', 6),
        # a call's keyword not read over a generation config's: the keyword runs
        ('gc = GenerationConfig(cache_implementation="dynamic")\n'
         'model.generate(tok("x").input_ids, generation_config=gc, '
         'cache_implementation="sta" + "tic", assistant_model=draft)\n', 6),
        # a model name re-bound: the field set may be another model's (the swap runs
        # the draft, whose prompt_lookup_num_tokens is None)
        ("model.generation_config.prompt_lookup_num_tokens = 1\n"
         "model, draft = draft, model\n"
         'model.generate(tok("x").input_ids)\n', 5),
        # names re-bound through a scope's mapping or a computed attribute name
        ('kw = {"prompt_lookup_num_tokens": 3}\nglobals()["kw"] = {}\n'
         'model.generate(tok("x").input_ids, **kw)\n', 6),
        ('setattr(model, "generation" + "_config", GenerationConfig())\n'
         'model.generate(tok("x").input_ids, assistant_model=draft)\n', 5),
        # a pipeline name bound twice (global in main()): which pipeline runs is open
        ("def main():\n    global pipe\n"
         '    pipe = pipeline("text-generation", model="t", prompt_lookup_num_tokens=3)\n'
         '    pipe("x")\nmain()\n', 8),
    ],
)
def test_routes_the_oracle_found_read_wrongly_are_unsettled(body: str, line: int) -> None:
    with pytest.raises(InputError) as caught:
        load_transformers_script(HEAD + "X = 0\n" + body if "X" in body else HEAD + body,
                                 "s.py")
    assert caught.value.line == line + (1 if "X" in body else 0)


def test_an_assistant_of_none_is_no_assistant() -> None:
    # generate(assistant_model=None) is generate() without one: greedy search, nothing drafted
    doc = load_transformers_script(
        HEAD + 'model.generate(tok("x").input_ids, assistant_model=None)\n', "s.py"
    )
    assert doc is not None and doc.data == {"model": "target"}
    doc = load_transformers_script(
        HEAD + 'pipeline("text-generation", model="t", assistant_model=None)("x")\n', "s.py"
    )
    assert doc is not None and isinstance(doc.data, dict)
    assert "assistant_model" not in doc.data


def test_a_pipeline_over_a_model_object_runs_that_models_config() -> None:
    # Pipeline.__call__ → model.generate(…) with no generation_config: the model's own,
    # prompt lookup 6 from line 5 (the pipeline's batch of one string: 1)
    body = (
        "model.generation_config.prompt_lookup_num_tokens = 6\n"
        'pipe = pipeline("text-generation", model=model)\n'
        'pipe("x")\n'
    )
    doc = load_transformers_script(HEAD + body, "s.py")
    assert doc is not None and isinstance(doc.data, dict)
    assert doc.data["prompt_lookup_num_tokens"] == 6
    assert doc.data["batch_size"] == 1
    # and the assistant's own config is where D is read: 3 from line 5
    body = (
        "draft.generation_config.num_assistant_tokens = 3\n"
        'pipe = pipeline("text-generation", model="t", assistant_model=draft)\n'
        'pipe("x")\n'
    )
    doc = load_transformers_script(HEAD + body, "s.py")
    assert doc is not None and isinstance(doc.data, dict)
    assert doc.data["assistant_generation_config"] == {"num_assistant_tokens": 3}


_PY_HEAD = (
    "from transformers import AutoModelForCausalLM\n"
    'm = AutoModelForCausalLM.from_pretrained("t")\n'
)
_CALL = "m.generate(prompt_lookup_num_tokens=3)\n"


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ((_PY_HEAD + "x = " + "-" * 100000 + "1\n" + _CALL).encode(), None),  # recursion
        ((_PY_HEAD + "x = m" + ".to()" * 30000 + "\n" + _CALL).encode(), None),
        ((_PY_HEAD + "x = " + "(" * 5000 + ")" * 5000 + "\n" + _CALL).encode(), 3),
        ((_PY_HEAD + "".join(" " * i + "if 1:\n" for i in range(120)) + _CALL).encode(), 103),
        (_PY_HEAD.encode() + b"x = '\xff'\n" + _CALL.encode(), 3),  # not UTF-8
        (_PY_HEAD.encode() + b"x = 1\x00\n" + _CALL.encode(), None),  # a NUL byte
        ((_PY_HEAD + "m.generate(prompt_lookup_num_tokens=3\nx = 1\n").encode(), 3),
        ((_PY_HEAD + "m.generate(prompt_lookup_num_tokens=" + "9" * 5000 + ")\n").encode(), 3),
    ],
)
def test_a_hostile_script_is_one_line_and_exit_2(
    source: bytes, line: int | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from specgate.cli.main import main

    (tmp_path / "gen.py").write_bytes(source)
    (tmp_path / "specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n"
        "    model: {name: m, query_heads: 32, kv_heads: 8, parameters_b: 8}\n"
        "    speculation: {enabled: true, engine: transformers, engine_config: gen.py}\n"
        "    evidence: {accept_length: 3.0}\n",
        encoding="utf-8",
    )
    assert main(["check", str(tmp_path / "specgate.yaml")]) == 2
    captured = capsys.readouterr()
    err = "\n".join(
        line for line in (captured.out + captured.err).splitlines() if "gen.py" in line
    )
    assert "Traceback" not in captured.out + captured.err
    assert len(err.splitlines()) == 1, captured
    assert "gen.py" in err
    if line is not None:
        assert f"gen.py:{line}:" in err, err
