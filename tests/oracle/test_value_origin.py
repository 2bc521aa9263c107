"""The interpreters as the oracle of where an unsettled value is set (issue 24, "degrade,
never stop"; docs/engines.md#unsettled-values).

specgate calls a value it cannot settle *outside* (the deployment's: SG313 warns and the
claims file's values are used) only when nothing in the repository sets it. Each such
verdict is checked against the interpreter itself, run with an empty environment and no
arguments (``PATH`` to stub engines only):

- bash: a DEBUG trap (``BASH_ENV``, inherited with ``set -T``) prints, just before the
  engine command runs, whether each variable the verdict names as the environment's is
  set (``${NAME+set}``) and how many arguments the script has (``$#``): all must be
  unset, and ``$#`` 0 for "the script's arguments"; run again with the variable set to
  a sentinel, the sentinel must reach the engine (the environment decides the word);
- Python with a stub ``vllm``: the keyword read from ``os.environ``/``os.getenv``/
  ``sys.argv`` is absent in the empty run (the launcher is never called, or is called
  with ``None``), and the sentinel from the environment or argv reaches ``LLM``; a
  default specgate settles (``os.getenv("D", "5")``) is what the empty run passes;
- ``docker-compose config`` (1.29): for a ``${VAR}`` specgate calls outside, Compose
  itself says the variable is not set.

Cases come from the hand-worked forms below and from the shell fuzzer's generated
scripts (:mod:`tests.oracle.shell_grammar`, fixed seed; ``SPECGATE_FUZZ_COUNT`` raises
the count).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from tests.oracle import shell_oracle
from tests.oracle.shell_grammar import Case, generate, spec

from specgate.core.errors import InputError, UnsettledValue
from specgate.inputs.engines import load_engine_document, read_engine_config
from specgate.load.document import Document
from specgate.load.python_launcher import load_python_launcher

M = "vllm serve m"
SC4 = f"--speculative-config '{spec(4)}'"
SENTINEL = "--speculative-config"  # a word an engine would read as a flag


def origin(script: str, file: str = "serve.sh") -> UnsettledValue | None:
    """specgate's verdict on ``script``: the unsettled value it raises, else None."""
    try:
        read_engine_config(
            Document(file=file, data=script), shown=file, pointer=None, engine=None, text=script
        )
    except UnsettledValue as exc:
        return exc
    except InputError:
        return None
    return None


def outside_names(exc: UnsettledValue) -> tuple[set[str], bool]:
    """The variables the verdict names as the environment's, and whether it names the
    script's arguments."""
    names = set(re.findall(r"(\w+) is not set in this script", exc.reason))
    return names, "the script's arguments" in exc.reason


#: name -> (script, origin): each worked out by hand from bash's rules.
SHELL: dict[str, tuple[str, str]] = {
    "env-after": (f"{M} {SC4} $EXTRA\n", "outside"),
    "env-quoted-after": (f'{M} {SC4} "$EXTRA"\n', "outside"),
    "env-empty-default": (f"{M} {SC4} ${{EXTRA:-}}\n", "outside"),
    "env-in-json": (
        f'{M} --speculative-config "{{\\"method\\": \\"ngram\\", '
        f'\\"num_speculative_tokens\\": $NUM}}"\n',
        "outside",
    ),
    "args-after": (f'{M} {SC4} "$@"\n', "outside"),
    "first-arg-after": (f"{M} {SC4} $1\n", "outside"),
    "env-through-name": (f"X=$EXTRA\n{M} {SC4} $X\n", "outside"),
    "env-no-flag": (f"{M} $EXTRA\n", "outside"),
    # the repository's own: a command substitution, a branch, a sourced file
    "command-substitution": (f"X=$(cat x.txt)\n{M} {SC4} $X\n", "repository"),
    "branch": (f'X=""\nif [ -f x ]; then X="{SC4}"; fi\n{M} $X\n', "repository"),
    "sourced": (f". ./x.env\n{M} {SC4} $X\n", "repository"),
    "eval": (f"eval \"$(cat x.env)\"\n{M} {SC4} $X\n", "repository"),
    # arguments the script itself set: `shift` of a count not read (bash refuses
    # `shift x`, so both set words stay), a function's own arguments
    "shift-not-read": (f'set -- a b\nshift x\n{M} {SC4} "$@"\n', "repository"),
    "shift-crlf": (f'set -- a b\r\nshift 0\r\n{M} {SC4} $@\r\n', "repository"),
    "function-args": (f'f() {{\n{M} {SC4} "$@"\n}}\nf --x 1\n', "repository"),
    "set-words": (f'set a b\n{M} {SC4} "$@"\n', "repository"),
    # the script's own arguments, shifted: still the caller's
    "shift-own": (f'shift\n{M} {SC4} "$@"\n', "outside"),
    # new-user trial D4: a default or a check on the caller's argument or the
    # environment; bash runs 4 only when the caller passes none, and stops when
    # SPEC_TOKENS is unset (POSIX 2.6.2): either way the deployment decides D
    "first-arg-default-in-json": (
        f'{M} --speculative-config "{{\\"method\\": \\"ngram\\", '
        f'\\"num_speculative_tokens\\": ${{1:-4}}}}"\n',
        "outside",
    ),
    "first-arg-default-after": (f"{M} {SC4} ${{1:-}}\n", "outside"),
    "env-check-in-json": (
        f'{M} --speculative-config "{{\\"method\\": \\"ngram\\", '
        f'\\"num_speculative_tokens\\": ${{SPEC_TOKENS:?set it}}}}"\n',
        "outside",
    ),
    "env-check-after": (f'{M} {SC4} "${{EXTRA?}}"\n', "outside"),
    # a check on a name the script sets empty: bash stops there, the script's doing
    "empty-check": (f'X=""\n{M} {SC4} ${{X:?empty}}\n', "repository"),
}


@pytest.mark.parametrize("name", SHELL)
def test_shell_origin_worked_by_hand(name: str) -> None:
    script, expected = SHELL[name]
    verdict = origin("#!/bin/bash\n" + script)
    assert verdict is not None and verdict.origin == expected


def _trap_env(folder: Path, names: set[str]) -> dict[str, str]:
    probe = ";".join(f"{n}=${{{n}+set}}" for n in sorted(names))
    rc = folder / "trap.bash"
    rc.write_text(f"set -T\ntrap 'printf \"@@sg-env@@%s|%s\\n\" \"{probe}\" \"$#\"' DEBUG\n")
    return {"BASH_ENV": str(rc)}


def bash_state(script: str, names: set[str], extra: dict[str, str]) -> tuple[str, list[str]]:
    """(the probe printed just before the engine ran, the engine's argv) under bash with
    an empty environment plus ``extra``."""
    with tempfile.TemporaryDirectory(prefix="sgorigin-") as where:
        folder = Path(where)
        bin_dir = shell_oracle._stubs(folder)
        (folder / "serve.sh").write_text(script)
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": where, "LC_ALL": "C",
            **_trap_env(folder, names), **extra,
        }
        run = subprocess.run(
            ["bash", "serve.sh"], cwd=folder, env=env, capture_output=True, timeout=10,
            stdin=subprocess.DEVNULL, check=False,
        )
    probe, argv = "", []
    for line in run.stdout.decode(errors="replace").splitlines():
        if line.startswith("@@sg-env@@"):
            probe = line[len("@@sg-env@@"):]
        elif line.startswith(shell_oracle.MARK):
            argv = json.loads(line[len(shell_oracle.MARK):])
            break
    return probe, argv


def check_outside(script: str, verdict: UnsettledValue) -> list[str]:
    """Disagreements of bash with an ``outside`` verdict on ``script`` ([] agrees)."""
    names, arguments = outside_names(verdict)
    if not names and not arguments:
        return [f"the verdict names no variable: {verdict.reason[:80]}"]
    probe, argv = bash_state(script, names, {})
    if not argv:
        return []  # the engine never runs with an empty environment: nothing to compare
    found, _, count = probe.rpartition("|")
    problems = [f"{part} is set when the engine runs" for part in found.split(";")
                if part.endswith("=set")]
    if arguments and count != "0":
        problems.append(f"the script has {count} arguments when the engine runs")
    for name in sorted(names):  # the environment decides the word: its value reaches it
        _, with_value = bash_state(script, names, {name: SENTINEL})
        if with_value and not any(SENTINEL in word for word in with_value):
            problems.append(f"{name} from the environment does not reach the engine")
    return problems


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the oracle")


@needs_bash
@pytest.mark.parametrize("name", [n for n, (_, o) in SHELL.items() if o == "outside"])
def test_bash_runs_every_outside_value_unset(name: str) -> None:
    script = "#!/bin/bash\n" + SHELL[name][0]
    verdict = origin(script)
    assert verdict is not None
    assert check_outside(script, verdict) == []


#: Expansions of a name no text sets, or of the script's arguments.
REFS = ["$V", '"$V"', "${V}", "${V:-}", "${V-}", '"$@"', "$@", "$1", '"${1}"', "$*", '"$V"x',
        "${1:-4}", '"${1:+--x}"', "${V:?no V}", '"${V?}"']
#: Lines that set nothing the command reads, or set the name (then it is settled).
NOISE = ["A=1", 'if [ -n "$DEBUG" ]; then B=2; fi', "export C=3", "echo hi >/dev/null",
         "set -- a b", "V='--x 1'", "unset V", ": ${W:=4}"]


def outside_script(rng: random.Random) -> str:
    """A launcher whose command holds one expansion of the environment or the
    arguments, maybe through a name (``X=$V``), at a random place, among lines that
    may or may not set it."""
    var = rng.choice(["EXTRA", "SPEC_ARGS", "V"])
    ref = rng.choice(REFS).replace("V", var)
    lines = [rng.choice(NOISE).replace("V", var) for _ in range(rng.randrange(3))]
    if rng.random() < 0.4 and "@" not in ref and "*" not in ref and "1" not in ref:
        lines.append(f"X={ref}")
        ref = rng.choice(["$X", '"$X"'])
    words = [M, SC4] if rng.random() < 0.8 else [M]
    words.insert(rng.randrange(1, len(words) + 1), ref)
    return "#!/bin/bash\n" + "\n".join([*lines, " ".join(words)]) + "\n"


@needs_bash
def test_generated_outside_values_are_unset_in_bash() -> None:
    rng = random.Random(24)
    count = int(os.environ.get("SPECGATE_FUZZ_COUNT", "160"))
    verdicts: Counter[str] = Counter()
    problems: list[str] = []
    for index in range(count):
        script = outside_script(rng)
        verdict = origin(script)
        verdicts[verdict.origin if verdict is not None else "settled"] += 1
        if verdict is not None and verdict.origin == "outside":
            problems += [f"case {index}: {p}\n{script}" for p in check_outside(script, verdict)]
    assert problems == []
    assert verdicts["outside"] > count // 4  # the corpus holds outside values at all


@needs_bash
def test_fuzzed_scripts_never_call_a_repository_value_outside() -> None:
    # the shell fuzzer's scripts hold no expansion of the environment after the
    # speculative flags: every unsettled value there is the repository's, or is
    # checked against bash like the generated ones above
    problems: list[str] = []
    for seed in range(int(os.environ.get("SPECGATE_FUZZ_COUNT", "160"))):
        case: Case = generate(seed)
        verdict = origin(case.script)
        if verdict is not None and verdict.origin == "outside" and not case.files:
            problems += [f"seed {seed}: {p}" for p in check_outside(case.script, verdict)]
    assert problems == []


# --- Python ---------------------------------------------------------------------------

STUB = '''import json, os
def LLM(*args, **kwargs):
    with open(os.environ["SPECGATE_STUB_LOG"], "a") as out:
        out.write(json.dumps(kwargs) + "\\n")
'''

LAUNCH = 'LLM(model="m", speculative_config={{"method": "ngram"}}, num_speculative_tokens={v})'

def _py(head: str, value: str) -> str:
    """A launcher script: ``head`` lines, then the call with D = ``value``."""
    return head + "\n" + LAUNCH.format(v=value) + "\n"


IMPORT = "import os\nfrom vllm import LLM"
#: name -> (script, origin, the variable or argv index the sentinel goes in, settled value)
PYTHON: dict[str, tuple[str, str, str | None, object]] = {
    "environ": (_py(IMPORT, 'os.environ["D"]'), "outside", "D", None),
    "environ-get": (_py(IMPORT, 'os.environ.get("D")'), "outside", "D", None),
    "getenv-int": (
        _py("from os import getenv\nfrom vllm import LLM", 'int(getenv("D"))'),
        "outside", "D", None),
    "through-name": (_py(IMPORT + "\nD = os.environ['D']", "D"), "outside", "D", None),
    "argv": (_py("import sys\nfrom vllm import LLM", "sys.argv[1]"), "outside", "1", None),
    "getenv-default": (_py(IMPORT, 'int(os.getenv("D", "5"))'), "settled", None, 5),
    "computed": (_py("from vllm import LLM\ndef d():\n    return 7", "d()"),
                 "repository", None, None),
    "assigned-twice": (_py(IMPORT + "\nD = os.environ['D']\nD = 7", "D"),
                       "repository", None, None),
    "loop": ("from vllm import LLM\nfor k in [3]:\n    " + LAUNCH.format(v="k") + "\n",
             "repository", None, None),
    "eval": (_py("from vllm import LLM\neval('1')", "4"), "repository", None, None),
    # a name re-bound by no assignment (Python passes 7, the assignment says 4)
    "globals": (_py(IMPORT + "\nD = 4\nglobals()['D'] = 7", "D"), "repository", None, None),
    # a dict changed in place (Python passes D 7 in it, the literal says 4)
    "mutated-dict": (
        IMPORT + "\nS = {'method': 'ngram', 'num_speculative_tokens': 4}\n"
        "S['num_speculative_tokens'] = 7\nLLM(model='m', speculative_config=S)\n",
        "repository", None, None),
    # an immutable value bound once: what Python passes
    "through-constant": (_py(IMPORT + "\nD = 6", "D"), "settled", None, 6),
}


def python_origin(script: str) -> tuple[str, object]:
    try:
        doc = load_python_launcher(script, "serve.py")
    except UnsettledValue as exc:
        return exc.origin, None
    assert isinstance(doc.data, dict)
    return "settled", doc.data.get("num_speculative_tokens")


def run_python(
    script: str, tmp: Path, env: dict[str, str], args: list[str]
) -> list[dict[str, object]]:
    """The keyword arguments each ``LLM`` call received when Python ran ``script``."""
    (tmp / "vllm").mkdir(exist_ok=True)
    (tmp / "vllm" / "__init__.py").write_text(STUB)
    (tmp / "serve.py").write_text(script)
    log = tmp / "calls.jsonl"
    log.unlink(missing_ok=True)
    subprocess.run(
        [sys.executable, "-S", "serve.py", *args], cwd=tmp, capture_output=True, timeout=30,
        env={"PYTHONPATH": str(tmp), "SPECGATE_STUB_LOG": str(log), **env}, check=False,
    )
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("name", PYTHON)
def test_python_origin_agrees_with_python(name: str, tmp_path: Path) -> None:
    script, expected, where, value = PYTHON[name]
    got, settled = python_origin(script)
    assert got == expected
    empty = run_python(script, tmp_path, {}, [])
    if expected == "settled":  # what Python passes with no environment at all
        assert [c["num_speculative_tokens"] for c in empty] == [value] == [settled]
    if expected == "outside":
        assert where is not None
        # unset when nothing supplies it: no call (KeyError, IndexError) or None
        assert all(c.get("num_speculative_tokens") is None for c in empty)
        env, args = ({}, ["9"]) if where.isdigit() else ({where: "9"}, [])
        supplied = run_python(script, tmp_path, env, args)
        assert [str(c["num_speculative_tokens"]) for c in supplied] == ["9"]


# --- Compose ----------------------------------------------------------------------------

COMPOSE = shutil.which("docker-compose")


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose (1.29) not installed")
def test_compose_outside_variable_is_unset_for_compose(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n    command:\n"
        "      - --model\n      - m\n      - --speculative-config\n"
        f"      - '{spec(4)}'\n      - ${{EXTRA}}\n"
    )
    (tmp_path / ".env").write_text("OTHER=1\n")
    doc = load_engine_document(tmp_path / "compose.yaml", "compose.yaml")
    with pytest.raises(UnsettledValue) as raised:
        read_engine_config(doc, shown="compose.yaml", pointer=None, engine=None,
                           text=doc.text)
    assert raised.value.origin == "outside" and "${EXTRA}" in raised.value.what
    assert COMPOSE is not None
    out = subprocess.run(
        [COMPOSE, "config"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}, check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "The EXTRA variable is not set" in out.stderr


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose (1.29) not installed")
def test_compose_required_variable_is_the_environments(tmp_path: Path) -> None:
    # new-user trial D4, in Compose: `${D:?msg}` that no .env sets stops Compose unless
    # the environment it runs in sets it; set there, its value reaches the command. The
    # deployment's (SG313 naming $D), not the end of the run (exit 2 before)
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n    command:\n"
        "      - --speculative-config\n"
        "      - '{\"method\": \"ngram\", \"num_speculative_tokens\": ${D:?set D}}'\n"
    )
    doc = load_engine_document(tmp_path / "compose.yaml", "compose.yaml")
    with pytest.raises(UnsettledValue) as raised:
        read_engine_config(doc, shown="compose.yaml", pointer=None, engine=None,
                           text=doc.text)
    assert (raised.value.origin, raised.value.what, raised.value.line) == ("outside", "$D", 6)
    assert COMPOSE is not None
    base = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    unset = subprocess.run([COMPOSE, "config"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, env=base, check=False)
    assert unset.returncode != 0 and "set D" in unset.stderr
    given = subprocess.run([COMPOSE, "config"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, env={**base, "D": "7"}, check=False)
    assert '"num_speculative_tokens": 7' in given.stdout
