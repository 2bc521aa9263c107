"""Python itself as the oracle of SGLang's keywords read one by one
(:func:`specgate.load.python_launcher.sglang_keywise`, docs/engines.md#unsettled-values).

Generated ``sgl.Engine(...)`` calls take some keywords from the environment (directly or
through a name), some from a call of the repository, the rest as literals, at top level
or in ``main()``. Each runs under two environments with a stub ``sglang`` whose
``Engine`` records the keywords it is given (the stub of tests/oracle/
test_python_launchers.py). Every keyword specgate settles must be what each run passed;
a deferred one must be one the runs passed; the keywords read and deferred together must
be the ones passed. A call specgate leaves unsettled as a whole is never wrong.
"""

from __future__ import annotations

import contextlib
import os
import random
from pathlib import Path

from tests.oracle.test_python_constants_oracle import _run_env
from tests.oracle.test_python_launchers import STUB

from specgate.core.errors import InputError
from specgate.load.python_launcher import load_python_launcher

CASES = int(os.environ.get("SPECGATE_ORACLE_CASES", "80"))
ENVS = ({"SG_D": "org/one", "SG_S": "3", "SG_A": "EAGLE3"},
        {"SG_D": "org/two", "SG_S": "5", "SG_A": "EAGLE"})


def script(rng: random.Random) -> str:
    before = ["import os", "import sglang as sgl", "def make_map():\n    return 'map.pt'"]
    env_draft = rng.choice(["os.environ['SG_D']", "os.getenv('SG_D')", "DRAFT"])
    if env_draft == "DRAFT":
        before.append(rng.choice(["DRAFT = os.environ['SG_D']", "DRAFT = os.getenv('SG_D')"]))
    words = {
        "speculative_algorithm": rng.choice(["'EAGLE3'", "'EAGLE3'", "'EAGLE'",
                                             "os.environ['SG_A']"]),
        "speculative_draft_model_path": rng.choice([env_draft, env_draft, "'org/lit'"]),
        "speculative_num_steps": rng.choice(["3", "3", "int(os.environ['SG_S'])"]),
        # D-setting keywords from the environment are deferred alone too (issue 24)
        "speculative_eagle_topk": rng.choice(["1", "1", "int(os.environ['SG_S'])"]),
        "speculative_num_draft_tokens": rng.choice(["4", "4", "int(os.environ['SG_S'])"]),
        "speculative_token_map": rng.choice(["'map.pt'", "make_map()",
                                             "os.environ['SG_D']", None]),
        "speculative_draft_model_revision": rng.choice(["'main'", "os.getenv('SG_D')", None]),
    }
    pairs = [(k, v) for k, v in words.items() if v is not None]
    rng.shuffle(pairs)
    args = ", ".join(f"{k}={v}" for k, v in pairs)
    call = f"sgl.Engine(model_path='org/target', {args})"
    if rng.random() < 0.5:
        return "\n".join([*before, call]) + "\n"
    main = f"def main():\n    {call}\nif __name__ == '__main__':\n    main()"
    return "\n".join([*before, main]) + "\n"


def disagreements(text: str, runs: list[list[dict[str, object]]]) -> list[str]:
    try:
        doc = load_python_launcher(text, "serve.py")
    except InputError:
        return []  # unsettled as a whole: never wrong
    read = doc.data
    assert isinstance(read, dict)
    deferred = {str(path[-1]) for path in doc.deferred}
    wrong: list[str] = []
    for ran in runs:
        if not ran:
            continue
        passed = ran[0]
        for key, value in read.items():
            if passed.get(key, "<absent>") != value:
                wrong.append(f"{key} read {value!r}, ran {passed.get(key, '<absent>')!r}")
        if set(passed) != set(read) | deferred:
            wrong.append(f"read {sorted(read)} + deferred {sorted(deferred)}, "
                         f"ran {sorted(passed)}")
    return wrong


def test_sglang_keywords_one_by_one_agree_with_python(tmp_path: Path) -> None:
    (tmp_path / "stubs" / "sglang").mkdir(parents=True)
    (tmp_path / "stubs" / "sglang" / "__init__.py").write_text(STUB, encoding="utf-8")
    rng = random.Random(31)
    wrong: list[tuple[str, list[str]]] = []
    deferred_seen = 0
    for _ in range(CASES):
        text = script(rng)
        found = disagreements(text, [_run_env(text, tmp_path, env) for env in ENVS])
        if found:
            wrong.append((text, found))
        with contextlib.suppress(InputError):
            deferred_seen += bool(load_python_launcher(text, "serve.py").deferred)
    assert not wrong, "\n\n".join(f"{w[0]}{w[1]}" for w in wrong[:5])
    assert deferred_seen > CASES // 10  # the per-key reading is exercised, not only refused
