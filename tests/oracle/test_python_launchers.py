"""Python itself as the oracle of the Python launcher reader (issue 25: never a wrong
settled value).

Generated launchers (import forms ``import vllm``, ``import vllm as v``, ``from vllm import
LLM as E``, ``getattr(vllm, "LLM")``, an alias ``E = vllm.LLM``; the real call at top level,
under ``if __name__ == "__main__":`` or in a called ``main()``; decoys in a function nothing
calls, under ``if False:``/``if 0:``/``while False:``) are run in a throwaway subprocess with
stub ``vllm``/``sglang`` modules on ``PYTHONPATH`` that record each launcher call's
arguments. specgate (which never runs them) must read the calls that ran, or refuse the
file as not settled: never another D.

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

from specgate.core.errors import InputError
from specgate.load.python_launcher import load_python_launcher

CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "120"))

STUB = '''import json, os
def _record(name):
    def call(*args, **kwargs):
        if args:
            kwargs = {"model": args[0], **kwargs}
        with open(os.environ["SPECGATE_STUB_LOG"], "a") as out:
            out.write(json.dumps(kwargs) + "\\n")
    call.__name__ = name
    return call
LLM = _record("LLM")
EngineArgs = _record("EngineArgs")
AsyncEngineArgs = _record("AsyncEngineArgs")
Engine = _record("Engine")
'''

IMPORTS = {
    # import line, how the launcher is called
    "plain": ("from vllm import LLM", "LLM"),
    "as": ("from vllm import LLM as E", "E"),
    "module": ("import vllm", "vllm.LLM"),
    "module_as": ("import vllm as v", "v.LLM"),
    "getattr": ("import vllm", 'getattr(vllm, "LLM")'),
    "alias": ("import vllm\nE = vllm.LLM", "E"),
    "sglang": ("import sglang as sgl", "sgl.Engine"),
}


def _call(form: str, d: int) -> str:
    return f'{form}("m", speculative_config={{"method": "ngram", "num_speculative_tokens": {d}}})'


def _decoy(rng: random.Random, form: str, n: int) -> str:
    kind = rng.choice(["def", "false", "zero", "while", "not_true", "main_else"])
    call = _call(form, 4)
    return {
        "def": f"def unused_{n}():\n    {call}\n",
        "false": f"if False:\n    {call}\n",
        "zero": f"if 0:\n    {call}\n",
        "while": f"while False:\n    {call}\n",
        "not_true": f"if not True:\n    {call}\n",
        "main_else": f'if __name__ == "__main__":\n    pass\nelse:\n    {call}\n',
    }[kind]


def _script(rng: random.Random) -> str:
    imports, form = IMPORTS[rng.choice(sorted(IMPORTS))]
    real = _call(form, 7)
    place = rng.choice(["top", "main_guard", "main_fn"])
    body = {
        "top": real + "\n",
        "main_guard": f'if __name__ == "__main__":\n    {real}\n',
        "main_fn": f'def main():\n    {real}\n\nif __name__ == "__main__":\n    main()\n',
    }[place]
    decoys = [_decoy(rng, rng.choice([form, "LLM"]), n) for n in range(rng.randint(0, 2))]
    parts = [*decoys, body]
    rng.shuffle(parts)
    return imports + "\n" + "\n".join(parts)


def _run(script: str, tmp: Path) -> list[dict[str, object]]:
    path = tmp / "launch.py"
    path.write_text(script, encoding="utf-8")
    log = tmp / "calls.jsonl"
    log.unlink(missing_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(tmp / "stubs"),
        "SPECGATE_STUB_LOG": str(log),
    }
    subprocess.run(
        [sys.executable, str(path)], env=env, check=True, timeout=30, capture_output=True,
        cwd=tmp,
    )
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _stubs(tmp: Path) -> None:
    for module in ("vllm", "sglang"):
        (tmp / "stubs" / module).mkdir(parents=True, exist_ok=True)
        (tmp / "stubs" / module / "__init__.py").write_text(STUB, encoding="utf-8")


def run_corpus(cases: int, tmp: Path, seed: int = 25) -> dict[str, object]:
    """Counts over ``cases`` generated launchers: agreed, unsettled, and the wrong ones."""
    _stubs(tmp)
    rng = random.Random(seed)
    agreed = unsettled = 0
    wrong: list[str] = []
    for _ in range(cases):
        script = _script(rng)
        ran = _run(script, tmp)
        try:
            data = load_python_launcher(script, "launch.py").data
        except InputError:
            unsettled += 1
            continue
        read = data if isinstance(data, list) else [data]
        if read == ran:
            agreed += 1
        else:
            wrong.append(script)
    return {"agreed": agreed, "unsettled": unsettled, "wrong": wrong}


def test_launcher_reader_agrees_with_python_or_is_unsettled(tmp_path: Path) -> None:
    counts = run_corpus(CASES, tmp_path)
    wrong = counts["wrong"]
    assert isinstance(wrong, list)
    assert not wrong, f"{len(wrong)} of {CASES} read otherwise than Python ran:\n{wrong[0]}"
    assert isinstance(counts["agreed"], int) and counts["agreed"] > CASES // 2


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("from vllm import LLM as E\n" + _call("E", 7) + "\n", 7),
        ("import vllm\n" + _call('getattr(vllm, "LLM")', 7) + "\n", 7),
        ("from vllm import LLM\ndef unused():\n    " + _call("LLM", 4) + "\n"
         + _call("LLM", 7) + "\n", 7),
        ("from vllm import LLM\nif False:\n    " + _call("LLM", 4) + "\n"
         + _call("LLM", 7) + "\n", 7),
    ],
)
def test_the_call_that_runs_is_read(script: str, expected: int) -> None:
    data = load_python_launcher(script, "launch.py").data
    assert isinstance(data, dict)
    assert data["speculative_config"]["num_speculative_tokens"] == expected


@pytest.mark.parametrize(
    "script",
    [
        # a launcher name re-bound: LLM(...) calls the local function, not vLLM's
        "from vllm import LLM\ndef LLM(**kw):\n    pass\n" + _call("LLM", 4) + "\n",
        # getattr with a computed name: which class runs is not settled
        'import vllm\nname = "LL" + "M"\n' + _call("getattr(vllm, name)", 7) + "\n",
        'exec("from vllm import LLM; LLM(\'m\')")\n' + _call("LLM", 4) + "\n",
        "import functools\nfrom vllm import LLM\nf = functools.partial(LLM, 'm')\nf()\n",
    ],
)
def test_routes_not_followed_are_unsettled(script: str) -> None:
    with pytest.raises(InputError, match="not settled"):
        load_python_launcher(script, "launch.py")
