"""Python itself as the oracle of module constants read statically
(:class:`specgate.load.python_values.Origins`, the one resolver of both Python readers;
docs/engines.md#unsettled-values): never a wrong settled value.

Generated scripts name the served model through a module constant (``MODEL_ID = "…";
LLM(model=MODEL_ID)``, ``AutoModelForCausalLM.from_pretrained(MODEL_ID)``), the draft
(``DRAFT_ID``), D (``generate(prompt_lookup_num_tokens=K)``) and the speculative config
(``SPEC = dict(…)``, ``{…}``), bound in
hostile ways: twice, in a branch or loop, through ``global`` in a function, by an import,
by ``globals()``, after the call that reads it (a ``NameError``), through another
constant, from ``os.getenv`` with a default. Each runs in a throwaway subprocess with the
stub ``vllm`` / ``transformers`` of the other oracles on ``PYTHONPATH``, which record what
each launcher call and ``generate()`` received; specgate (which never runs them) must read
each value it settles as the run had it, and settle none for a call that never ran.

A fixed seed and :data:`CASES` scripts per reader in CI; ``SPECGATE_ORACLE_CASES=5000``
runs more.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.oracle.test_python_launchers import STUB as VLLM_STUB
from tests.oracle.transformers_stub import SOURCE as TRANSFORMERS_STUB

from specgate.core.errors import InputError
from specgate.load.python_generate import load_transformers_script
from specgate.load.python_launcher import load_python_launcher

CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "80"))

CONDITIONS = ["0", "1", '"0"', "[]", "None", '__name__ == "__main__"', "len([])"]


def binding(rng: random.Random, name: str, value: str) -> tuple[list[str], list[str]]:
    """Statements that bind ``name`` (to ``value`` somewhere), hostile at random: the ones
    before the call, and the ones after it (then the call's read of it is a NameError)."""
    plain = f"{name} = {value}"
    cond = rng.choice(CONDITIONS)
    kind = rng.choice([
        "plain", "plain", "plain", "twice", "branch", "loop", "global_fn", "import",
        "globals", "after", "hop", "getenv", "augmented", "annotated", "del_rebind",
        "unused_fn", "class_attr", "walrus",
    ])
    other = value[:-1] + '-other"' if value.endswith('"') else "'other'"
    return {
        "plain": ([plain], []),
        "twice": ([plain, f"{name} = {other}"], []),
        "branch": ([plain, f"if {cond}:\n    {name} = {other}"], []),
        "loop": ([plain, f"for {name} in [{other}]:\n    pass"], []),
        "global_fn": ([plain, f"def _set():\n    global {name}\n    {name} = {other}\n_set()"],
                      []),
        "import": ([f"from os import sep as {name}"], []),
        "globals": ([plain, f"globals()[{name!r}] = {other}"], []),
        "after": ([], [plain]),
        "hop": ([f"_BASE = {value}", f"{name} = _BASE"], []),
        "getenv": (["import os", f"{name} = os.getenv('SPECGATE_UNSET_NAME', {value})"], []),
        "augmented": ([plain, f"{name} += '-x'"], []),
        "annotated": ([f"{name}: str = {value}"], []),
        "del_rebind": ([plain, f"del {name}", f"{name} = {other}"], []),
        "unused_fn": ([plain, f"def _unused():\n    {name} = {other}\n    return {name}"], []),
        "class_attr": ([plain, f"class _C:\n    {name} = {other}"], []),
        "walrus": ([plain, f"if ({name} := {other}):\n    pass"], []),
    }[kind]


def place(rng: random.Random, call: str) -> tuple[str, bool]:
    """``call`` at module level, or in ``main()`` called under the ``__main__`` guard
    (the second item: whether it is deferred to that guard)."""
    if rng.random() < 0.5:
        return call, False
    return f"def main():\n    {call}", True


def _run(script: str, tmp: Path, name: str) -> list[dict[str, object]]:
    path = tmp / name
    path.write_text(script, encoding="utf-8")
    log = tmp / "calls.jsonl"
    log.unlink(missing_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(tmp / "stubs"),
           "SPECGATE_STUB_LOG": str(log)}
    subprocess.run([sys.executable, str(path)], env=env, check=False, timeout=30,
                   capture_output=True, cwd=tmp)
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _stubs(tmp: Path) -> None:
    for module, source in (("vllm", VLLM_STUB), ("transformers", TRANSFORMERS_STUB)):
        (tmp / "stubs" / module).mkdir(parents=True, exist_ok=True)
        (tmp / "stubs" / module / "__init__.py").write_text(source, encoding="utf-8")


def compare(
    read: list[object], ran: list[dict[str, object]], keys: dict[str, str],
    late: dict[str, bool],
) -> list[str]:
    """Each value of ``keys`` (read key → the key the stub records it under) that the
    reader settled otherwise than the run had it. A call that never ran passed nothing; a
    value read for it is wrong when ``late`` says its constant is bound only after the
    call reads it (a NameError; a call that stops earlier for another reason is not
    judged here). A value not settled (absent, ``{"not_read": …}``) is never wrong."""
    wrong: list[str] = []
    for index, mapping in enumerate(read):
        assert isinstance(mapping, dict)
        for key, ran_key in keys.items():
            value = mapping.get(key)
            if value is None or (isinstance(value, dict) and "not_read" in value):
                continue
            if index >= len(ran):
                if late.get(key):
                    wrong.append(f"{key} {value!r} read for a call that never ran")
            elif ran[index].get(ran_key) != value:
                wrong.append(f"{key} read {value!r}, ran {ran[index].get(ran_key)!r}")
    return wrong


# --- vLLM LLM(...) ---------------------------------------------------------------------

def launcher_script(rng: random.Random) -> tuple[str, dict[str, bool]]:
    before, after = binding(rng, "MODEL_ID", '"org/target"')
    model = rng.choice(["model=MODEL_ID", "MODEL_ID"])
    call, deferred = place(
        rng, f"LLM({model}, speculative_config={{'method': 'ngram', "
             "'num_speculative_tokens': 3})"
    )
    lines = ["from vllm import LLM", *before, call, *after]
    if deferred:
        lines.append('if __name__ == "__main__":\n    main()')
    return "\n".join(lines) + "\n", {"model": bool(after)}


def launcher_disagreements(
    script: str, ran: list[dict[str, object]], late: dict[str, bool]
) -> list[str]:
    try:
        data = load_python_launcher(script, "launch.py").data
    except InputError:
        return []  # not settled: never wrong
    read = data if isinstance(data, list) else [data]
    return compare(read, ran, {"model": "model"}, late)


def corpus(
    tmp: Path, seed: int, make: Callable[[random.Random], tuple[str, dict[str, bool]]],
    judge: Callable[[str, list[dict[str, object]], dict[str, bool]], list[str]], name: str,
) -> list[tuple[str, list[str]]]:
    """The scripts ``make`` generates (``CASES``, fixed ``seed``) that ``judge`` finds read
    otherwise than Python ran them, with what it found."""
    _stubs(tmp)
    rng = random.Random(seed)
    wrong: list[tuple[str, list[str]]] = []
    for _ in range(CASES):
        script, late = make(rng)
        found = judge(script, _run(script, tmp, name), late)
        if found:
            wrong.append((script, found))
    return wrong


def test_launcher_constants_agree_with_python(tmp_path: Path) -> None:
    wrong = corpus(tmp_path, 26, launcher_script, launcher_disagreements, "launch.py")
    assert not wrong, f"{len(wrong)} of {CASES} read otherwise:\n{wrong[0][0]}\n{wrong[0][1]}"
    # the plain forms are read, not only refused
    settled = 0
    rng = random.Random(26)
    for _ in range(CASES):
        try:
            data = load_python_launcher(launcher_script(rng)[0], "launch.py").data
        except InputError:
            continue
        settled += isinstance(data, dict) and "model" in data
    assert settled > CASES // 4


# --- vLLM speculative_config as dict(...) or a module dict (D8) ------------------------

def spec_forms(rng: random.Random) -> tuple[list[str], str, list[str]]:
    """(statements before the call, the keyword's value, statements after it): a
    speculative config written as ``dict(k=v, …)``, a dict literal or a module constant
    bound once to either, with D a constant ``K`` bound in hostile ways, and hostile
    changes to the dict or to ``dict`` itself."""
    before, after = binding(rng, "K", str(rng.randint(1, 9)))
    d = rng.choice(["K", str(rng.randint(1, 9))])
    literal = rng.choice([
        f"{{'method': 'ngram', 'num_speculative_tokens': {d}}}",
        f"dict(method='ngram', num_speculative_tokens={d})",
        f"dict(method='ngram', num_speculative_tokens={d}, prompt_lookup_max=2)",
        f"{{'method': 'ngram', 'num_speculative_tokens': 1, 'num_speculative_tokens': {d}}}",
    ])
    value = literal
    if rng.random() < 0.6:
        before.append(f"SPEC = {literal}")
        value = "SPEC"
        if rng.random() < 0.5:
            before.append(rng.choice([
                "SPEC['num_speculative_tokens'] = 7",
                "SPEC.update(num_speculative_tokens=8)",
                "SPEC |= {'num_speculative_tokens': 5}",
                "OTHER = SPEC\nOTHER['num_speculative_tokens'] = 6",
                "def _grow(d):\n    d['num_speculative_tokens'] = 2\n_grow(SPEC)",
                "print(SPEC)",
                "def _g():\n    global SPEC\n    SPEC = {'method': 'ngram'}\n_g()",
                "SPEC = dict(SPEC, num_speculative_tokens=3)",
                "del SPEC['num_speculative_tokens']",
            ]))
    if rng.random() < 0.3:
        before.insert(0, rng.choice([
            "dict = lambda **k: {'method': 'ngram', 'num_speculative_tokens': 9}",
            "def dict(**k):\n    return {'method': 'ngram', 'num_speculative_tokens': 9}",
            "import builtins\nbuiltins.dict = lambda **k: {'num_speculative_tokens': 9}",
            "from collections import OrderedDict as dict",
            "_d = dict\ndict = lambda **k: _d(k, num_speculative_tokens=9)",
        ]))
    return before, value, after


def spec_script(rng: random.Random) -> tuple[str, dict[str, bool]]:
    before, value, after = spec_forms(rng)
    call, deferred = place(rng, f"LLM('m', speculative_config={value})")
    lines = ["from vllm import LLM", *before, call, *after]
    if deferred:
        lines.append('if __name__ == "__main__":\n    main()')
    return "\n".join(lines) + "\n", {"speculative_config": bool(after)}


def spec_disagreements(
    script: str, ran: list[dict[str, object]], late: dict[str, bool]
) -> list[str]:
    try:
        data = load_python_launcher(script, "launch.py").data
    except InputError:
        return []  # not settled (SG313/SG314): never wrong
    read = data if isinstance(data, list) else [data]
    return compare(read, ran, {"speculative_config": "speculative_config"}, late)


def test_speculative_dicts_agree_with_python(tmp_path: Path) -> None:
    wrong = corpus(tmp_path, 28, spec_script, spec_disagreements, "launch.py")
    assert not wrong, f"{len(wrong)} of {CASES} read otherwise:\n{wrong[0][0]}\n{wrong[0][1]}"


# --- transformers from_pretrained(MODEL_ID) ------------------------------------------

def generate_script(rng: random.Random) -> tuple[str, dict[str, bool]]:
    target_before, target_after = binding(rng, "MODEL_ID", '"org/target"')
    draft_before, draft_after = binding(rng, "DRAFT_ID", '"org/draft"')
    lookup = rng.random() < 0.4  # prompt lookup with D a constant K, no assistant
    if lookup:
        draft_before, draft_after = binding(rng, "K", str(rng.randint(1, 9)))
    body = (
        "tok = AutoTokenizer.from_pretrained('tok')\n"
        "model = AutoModelForCausalLM.from_pretrained(MODEL_ID)\n"
        + ("model.generate(tok('x').input_ids, prompt_lookup_num_tokens=K)" if lookup else
           "draft = AutoModelForCausalLM.from_pretrained(DRAFT_ID)\n"
           "model.generate(tok('x').input_ids, assistant_model=draft)")
    )
    if rng.random() < 0.5:
        main = "def main():\n    " + body.replace("\n", "\n    ")
        body = main
        tail = ['if __name__ == "__main__":\n    main()']
    else:
        tail = []
    lines = [
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        *target_before, *draft_before, body, *target_after, *draft_after, *tail,
    ]
    late = {"model": bool(target_after), "assistant_model": bool(draft_after),
            "prompt_lookup_num_tokens": bool(draft_after)}
    return "\n".join(lines) + "\n", late


def generate_disagreements(
    script: str, ran: list[dict[str, object]], late: dict[str, bool]
) -> list[str]:
    try:
        doc = load_transformers_script(script, "gen.py")
    except InputError:
        return []
    assert doc is not None
    data = doc.data
    read = data if isinstance(data, list) else ([data] if data else [])
    keys = {"model": "model", "assistant_model": "assistant_name",
            "prompt_lookup_num_tokens": "prompt_lookup_num_tokens"}
    return compare(read, ran, keys, late)


def test_generate_constants_agree_with_python(tmp_path: Path) -> None:
    wrong = corpus(tmp_path, 27, generate_script, generate_disagreements, "gen.py")
    assert not wrong, f"{len(wrong)} of {CASES} read otherwise:\n{wrong[0][0]}\n{wrong[0][1]}"


# --- a speculative dict with some values from the environment, key by key ------------

ENVS = ({"SG_E": "org/one-eagle3", "SG_N": "3"}, {"SG_E": "org/two", "SG_N": "7"})


def keywise_script(rng: random.Random) -> tuple[str, dict[str, bool]]:
    """A speculative dict (literal, ``dict(...)`` or a module constant) where some values
    read the environment (``SG_E``, ``SG_N``) directly or through a name, with duplicate
    keys, hostile changes to the dict and to ``dict``, placed at top level or in main()."""
    before = ["import os"]
    env_model = rng.choice([
        "os.environ['SG_E']", "os.getenv('SG_E')", "os.environ.get('SG_E')", "DRAFT",
    ])  # os.getenv('X', 'd') is read as its default (docs/engines.md#unsettled-values)
    if env_model == "DRAFT":
        before.append(rng.choice(["DRAFT = os.environ['SG_E']", "DRAFT = os.getenv('SG_E')"]))
    model = rng.choice([env_model, env_model, "'org/lit'"])
    d = rng.choice(["5", "5", "int(os.environ['SG_N'])", "K"])
    if d == "K":
        before.append(rng.choice(["K = 4", "K = int(os.environ['SG_N'])", "K = 4\nK = 6"]))
    method = rng.choice(["'eagle3'", "'eagle3'", "'draft_model'", "os.environ['SG_E']"])
    pairs = [("method", method), ("model", model), ("num_speculative_tokens", d)]
    rng.shuffle(pairs)
    if rng.random() < 0.25:  # a later duplicate wins, as in Python
        key = rng.choice(["model", "num_speculative_tokens"])
        pairs.append((key, rng.choice(["'org/late'", "9", env_model])))
    if rng.random() < 0.15:
        pairs = [p for p in pairs if p[0] != rng.choice(["method", "num_speculative_tokens"])]
    if rng.random() < 0.5:
        literal = "{" + ", ".join(f"{k!r}: {v}" for k, v in pairs) + "}"
    else:
        last = dict(pairs)  # dict(k=v) cannot repeat a keyword: the last value each
        literal = "dict(" + ", ".join(f"{k}={v}" for k, v in last.items()) + ")"
    value = literal
    if rng.random() < 0.5:
        before.append(f"SPEC = {literal}")
        value = "SPEC"
        if rng.random() < 0.4:
            before.append(rng.choice([
                "SPEC['num_speculative_tokens'] = 7",
                "SPEC.update(model='org/changed')",
                "def _grow(d):\n    d['method'] = 'ngram'\n_grow(SPEC)",
                "print(SPEC)",
                "SPEC = dict(SPEC, num_speculative_tokens=3)",
            ]))
    if rng.random() < 0.15:
        before.insert(0, rng.choice([
            "dict = lambda **k: {'method': 'ngram', 'num_speculative_tokens': 9}",
            "import builtins\nbuiltins.dict = lambda **k: {'num_speculative_tokens': 9}",
        ]))
    call, deferred = place(rng, f"LLM('m', speculative_config={value})")
    lines = ["from vllm import LLM", *before, call]
    if deferred:
        lines.append('if __name__ == "__main__":\n    main()')
    return "\n".join(lines) + "\n", {}


def _run_env(script: str, tmp: Path, env: dict[str, str]) -> list[dict[str, object]]:
    path = tmp / "launch.py"
    path.write_text(script, encoding="utf-8")
    log = tmp / "calls.jsonl"
    log.unlink(missing_ok=True)
    subprocess.run(
        [sys.executable, str(path)], check=False, timeout=30, capture_output=True, cwd=tmp,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(tmp / "stubs"),
             "SPECGATE_STUB_LOG": str(log), **env},
    )
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def keywise_disagreements(script: str, runs: list[list[dict[str, object]]]) -> list[str]:
    """Each key specgate settles must be what every run passed, for every environment;
    a key it neither settles nor defers must be one no run passed (absent is a reading
    too); a deferred key must be one the runs passed."""
    try:
        doc = load_python_launcher(script, "launch.py")
    except InputError:
        return []  # unsettled as a whole: never wrong
    assert isinstance(doc.data, dict)
    read = doc.data.get("speculative_config")
    if not isinstance(read, dict):
        return []
    deferred = {str(path[-1]) for path in doc.deferred}
    wrong: list[str] = []
    for ran in runs:
        if not ran:
            continue  # the run stopped before the call (a KeyError, a NameError)
        passed = ran[0].get("speculative_config")
        assert isinstance(passed, dict)
        for key, value in read.items():
            if passed.get(key, "<absent>") != value:
                wrong.append(f"{key} read {value!r}, ran {passed.get(key, '<absent>')!r}")
        if set(passed) != set(read) | deferred:
            wrong.append(f"keys read {sorted(read)} + deferred {sorted(deferred)}, "
                         f"ran {sorted(passed)}")
    return wrong


def test_speculative_dicts_key_by_key_agree_with_python(tmp_path: Path) -> None:
    _stubs(tmp_path)
    rng = random.Random(29)
    wrong: list[tuple[str, list[str]]] = []
    deferred_seen = 0
    for _ in range(CASES):
        script, _late = keywise_script(rng)
        runs = [_run_env(script, tmp_path, env) for env in ENVS]
        found = keywise_disagreements(script, runs)
        if found:
            wrong.append((script, found))
        with contextlib.suppress(InputError):
            deferred_seen += bool(load_python_launcher(script, "launch.py").deferred)
    assert not wrong, "\n\n".join(f"{w[0]}{w[1]}" for w in wrong[:5])
    assert deferred_seen > CASES // 10  # the per-key reading is exercised, not only refused
