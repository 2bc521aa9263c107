"""Python as the oracle of a launcher that writes its own environment before reading it
(trial 3 finding 18; docs/engines.md#unsettled-values).

Each launcher reads D with ``int(os.getenv("NUM_SPEC", "4"))`` (or ``os.environ[…]``)
after a statement that may write ``NUM_SPEC``: python-dotenv's ``load_dotenv`` of the
folder's ``.env`` (``NUM_SPEC=7``), ``os.environ[...] = "7"`` and its kin. Python (this
interpreter, with python-dotenv from the project's environment and a stub ``vllm``
that logs its keyword arguments) runs each with an empty environment; the verdict of
each case was worked out by hand: a write the reader does not follow leaves the value
the repository's (SG314), never the default 4, and a write of another key, or
``os.putenv`` (which does not change ``os.environ``), leaves the default settled.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from specgate.core.errors import UnsettledValue
from specgate.load.python_launcher import load_python_launcher

STUB = '''import json, os
def LLM(*args, **kwargs):
    with open(os.environ["SPECGATE_STUB_LOG"], "a") as out:
        out.write(json.dumps(kwargs) + "\\n")
'''
HEAD = "import os\nfrom vllm import LLM\n"
READ = 'D = int(os.getenv("NUM_SPEC", "4"))\n'
LAUNCH = 'LLM(model="m", speculative_config={"method": "ngram", "num_speculative_tokens": D})\n'

#: name -> (the lines between the imports and the read, the verdict worked by hand: the
#: D settled or the origin of an unsettled one, the D Python runs)
CASES: dict[str, tuple[str, object, int]] = {
    "load-dotenv": ("from dotenv import load_dotenv\nload_dotenv()\n", "repository", 7),
    "dotenv-module": ("import dotenv\ndotenv.load_dotenv('.env')\n", "repository", 7),
    "dotenv-alias": ("from dotenv import load_dotenv as ld\nld()\n", "repository", 7),
    "update-values": ("from dotenv import dotenv_values\n"
                      "os.environ.update(dotenv_values('.env'))\n", "repository", 7),
    # a literal written once at the top, before the read: followed (Python runs it)
    "setitem": ('os.environ["NUM_SPEC"] = "7"\n', 7, 7),
    "setitem-in-branch": ('if True:\n    os.environ["NUM_SPEC"] = "7"\n', "repository", 7),
    "setitem-twice": ('os.environ["NUM_SPEC"] = "7"\nos.environ["NUM_SPEC"] = "5"\n',
                      "repository", 5),
    "setitem-computed": ('os.environ["NUM_SPEC"] = str(3 + 4)\n', "repository", 7),
    "setdefault": ('os.environ.setdefault("NUM_SPEC", "7")\n', "repository", 7),
    "update-keywords": ('os.environ.update(NUM_SPEC="7")\n', "repository", 7),
    "or-assign": ('os.environ |= {"NUM_SPEC": "7"}\n', "repository", 7),
    "handed-on": ('def setup(env):\n    env["NUM_SPEC"] = "7"\nsetup(os.environ)\n',
                  "repository", 7),
    "in-function": ('def setup():\n    os.environ["NUM_SPEC"] = "7"\nsetup()\n',
                    "repository", 7),
    "computed-key": ('K = "NUM_" + "SPEC"\nos.environ[K] = "7"\n', "repository", 7),
    "pop": ('os.environ["NUM_SPEC"] = "7"\nos.environ.pop("NUM_SPEC")\n', "repository", 4),
    # another key, and writes that leave os.environ as it is: the default runs
    "other-key": ('os.environ["HF_HOME"] = "/data"\n', 4, 4),
    "other-setdefault": ('os.environ.setdefault("VLLM_LOGGING_LEVEL", "INFO")\n', 4, 4),
    "putenv": ('os.putenv("NUM_SPEC", "7")\n', 4, 4),
    "membership": ('if "NUM_SPEC" in os.environ:\n    pass\n', 4, 4),
    "read-only": ('E = os.environ.copy()\nE["NUM_SPEC"] = "7"\n', 4, 4),
}


def verdict(script: str) -> object:
    try:
        doc = load_python_launcher(script, "serve.py")
    except UnsettledValue as exc:
        return exc.origin
    for path, exc in doc.deferred.items():  # a key set outside, read on its own
        if path[-1] == "num_speculative_tokens":
            return exc.origin
    assert isinstance(doc.data, dict)
    spec = doc.data.get("speculative_config")
    assert isinstance(spec, dict)
    return spec.get("num_speculative_tokens")


def python_d(script: str, folder: Path) -> int | None:
    """The D the stub ``LLM`` receives when Python runs ``script`` in ``folder`` with
    an empty environment (python-dotenv importable, ``.env`` holding NUM_SPEC=7)."""
    (folder / "vllm").mkdir(exist_ok=True)
    (folder / "vllm" / "__init__.py").write_text(STUB)
    (folder / ".env").write_text("NUM_SPEC=7\n")
    (folder / "serve.py").write_text(script)
    log = folder / "calls.jsonl"
    subprocess.run(
        [sys.executable, "serve.py"], cwd=folder, capture_output=True, timeout=30, check=False,
        env={"PYTHONPATH": str(folder), "SPECGATE_STUB_LOG": str(log)},
    )
    if not log.exists():
        return None
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return int(calls[-1]["speculative_config"]["num_speculative_tokens"])


@pytest.mark.parametrize("name", CASES)
def test_reader_verdict_worked_by_hand(name: str) -> None:
    lines, expected, _ = CASES[name]
    assert verdict(HEAD + lines + READ + LAUNCH) == expected


@pytest.mark.parametrize("name", CASES)
def test_python_runs_the_case_as_worked(name: str, tmp_path: Path) -> None:
    pytest.importorskip("dotenv")  # python-dotenv, as the launchers use it
    lines, expected, ran = CASES[name]
    assert python_d(HEAD + lines + READ + LAUNCH, tmp_path) == ran
    if isinstance(expected, int):  # a settled value is the interpreter's
        assert expected == ran


def test_an_outside_read_of_a_written_key_is_the_repositorys() -> None:
    # os.environ["NUM_SPEC"] alone is the deployment's (SG313); once the file may write
    # it (load_dotenv), the repository's (SG314)
    read = 'D = int(os.environ["NUM_SPEC"])\n'
    assert verdict(HEAD + read + LAUNCH) == "outside"
    assert verdict(HEAD + "import dotenv\ndotenv.load_dotenv()\n" + read + LAUNCH) == (
        "repository"
    )


def test_a_literal_written_after_the_read_is_not_the_reads() -> None:
    # Python runs the default 4 here (the write comes after the read); the reader does not
    # order a write after a read, so the value is unsettled, never the 7 written later
    script = HEAD + READ + 'os.environ["NUM_SPEC"] = "7"\n' + LAUNCH
    assert verdict(script) == "repository"


def test_a_read_in_a_function_run_after_the_write_is_followed(tmp_path: Path) -> None:
    # main() runs after the write: its read gets the written 7 (bound_before's rule for a
    # module constant read in a function)
    script = (HEAD + "def main():\n    "
              + LAUNCH.replace(": D}", ": int(os.getenv('NUM_SPEC', '4'))}")
              + 'os.environ["NUM_SPEC"] = "7"\nmain()\n')
    assert python_d(script, tmp_path) == 7
    assert verdict(script) == 7
    # called before the write, it gets the default: the reader does not settle 7 there
    early = script.replace("main()\n", "").replace(
        'os.environ["NUM_SPEC"] = "7"\n', 'main()\nos.environ["NUM_SPEC"] = "7"\n')
    assert python_d(early, tmp_path) == 4
    assert verdict(early) == "repository"
