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

from specgate.core.errors import InputError
from specgate.load.document import Document
from specgate.load.python_generate import load_transformers_script
from tests.oracle.generate_scripts import script as random_script
from tests.oracle.transformers_stub import SOURCE

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
        if "assistant_model" in mapping or not hidden:
            if ("assistant_model" in mapping) != record["assistant"]:
                wrong.append(f"assistant at line {line}: read {'assistant_model' in mapping}")
        for key, default in DEFAULTS.items():
            if key in mapping or not hidden:
                if mapping.get(key, default) != record[key]:
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
