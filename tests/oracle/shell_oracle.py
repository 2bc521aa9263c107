"""bash and dash as the oracle of specgate's shell reader (issue 25, "never a wrong
settled value").

Each generated launcher (:mod:`tests.oracle.shell_grammar`) runs in a fresh temporary
folder with a minimal environment (``PATH`` = a folder of stub engines + /usr/bin:/bin,
no network use: the stubs only print) under bash, and under dash when it is of the
POSIX subset, twice: once as is and once with ``DEBUG=1`` (a variable the launcher
reads from its environment). The stub engine prints the argv it received as JSON.
What the engine runs is read by specgate from those words written literally (one
quoted word each: nothing left to a shell), and compared with specgate's reading of
the script itself:

- the script's reading is refused (an input error: the value is unsettled) — agrees;
- it equals every reading of what the interpreters ran — agrees;
- anything else — a *wrong settled value* (a disagreement).

A script whose engine command never runs under some interpreter (its line failed) is
skipped for that interpreter and counted. Readings compare the engine, the method,
D, the tokens verified per step, the draft model and whether D is a maximum.

Run by hand for a count: ``python -m tests.oracle.shell_oracle [COUNT] [SEED]``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.oracle.shell_grammar import Case, generate

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_config
from specgate.load.document import Document

MARK = "@@stub-argv@@"
STUB = f"""#!/usr/bin/python3 -S
import json, os, sys
print({MARK!r} + json.dumps([os.path.basename(sys.argv[0]), *sys.argv[1:]]), flush=True)
"""
ENGINES = ("vllm", "python3", "llama-server", "trtllm-serve")
#: a reading: (engine, method, D, verify tokens, draft model, D is a maximum) or why refused
Reading = tuple[object, ...]


def reading(text: str, file: str) -> Reading:
    """specgate's reading of ``text`` (a launcher named ``file``), or ("refused", why)."""
    doc = Document(file=file, data=text)
    try:
        c = read_engine_config(doc, shown=file, pointer=None, engine=None, text=text)
    except InputError as exc:
        return ("refused", str(exc))
    return (
        c.engine,
        c.mechanism,
        c.draft_length,
        c.verify_tokens,
        c.draft_model,
        c.draft_length_is_max,
    )


def literal(argv: list[str]) -> str:
    """``argv`` as a one-line script of single-quoted words (the program unquoted)."""
    return " ".join([argv[0], *(shlex.quote(w) for w in argv[1:])]) + "\n"


@dataclass
class Tally:
    """Counts of one fuzzing run, per oracle."""

    scripts: int = 0
    runs: Counter[str] = field(default_factory=Counter)
    not_run: Counter[str] = field(default_factory=Counter)
    settled: int = 0
    refused: int = 0
    wrong: list[tuple[int, str, str]] = field(default_factory=list)
    wrong_by: Counter[str] = field(default_factory=Counter)


def _stubs(folder: Path) -> Path:
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    for name in ENGINES:
        stub = bin_dir / name
        stub.write_text(STUB)
        stub.chmod(0o755)
    return bin_dir


def run_shell(shell: str, case: Case, bin_dir: Path, env_extra: dict[str, str]) -> list[str] | None:
    """The argv the stub engine last received when ``shell`` runs ``case`` (None when
    no engine ran), in a fresh folder of its own."""
    with tempfile.TemporaryDirectory(prefix="sgfuzz-") as where:
        folder = Path(where)
        for name, text in case.files.items():
            (folder / name).write_text(text)
        (folder / "serve.sh").write_bytes(case.script.encode())
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": where, "LC_ALL": "C", **env_extra}
        try:
            run = subprocess.run(
                [shell, "serve.sh"],
                cwd=folder,
                env=env,
                capture_output=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
    calls = [
        line for line in run.stdout.decode(errors="replace").splitlines() if line.startswith(MARK)
    ]
    if not calls:
        return None
    argv: list[str] = json.loads(calls[-1][len(MARK) :])
    return argv


def oracle_runs(case: Case, bin_dir: Path) -> list[tuple[str, list[str] | None]]:
    """Per interpreter and environment, the argv its engine received (None: none ran)."""
    shells = ["bash", "dash"] if case.posix else ["bash"]
    return [
        (shell, run_shell(shell, case, bin_dir, env))
        for shell in shells
        for env in ({}, {"DEBUG": "1"})
    ]


def check(seed: int, case: Case, runs: list[tuple[str, list[str] | None]], tally: Tally) -> None:
    """Record how specgate's reading of case ``seed`` fares against its oracles' runs."""
    tally.scripts += 1
    ours = reading(case.script, "serve.sh")
    if ours[0] == "refused":
        tally.refused += 1
    else:
        tally.settled += 1
    wrong: set[str] = set()
    for shell, argv in runs:
        tally.runs[shell] += 1
        if argv is None:
            tally.not_run[shell] += 1
            continue
        theirs = reading(literal(argv), "engine.sh")
        if ours[0] != "refused" and ours != theirs and shell not in wrong:
            wrong.add(shell)
            tally.wrong.append((seed, shell, f"specgate {ours[:4]} vs {shell} {theirs[:4]}"))
            tally.wrong_by[shell] += 1


def fuzz(count: int, seed: int = 0) -> Tally:
    """Check ``count`` cases from ``seed`` on (the interpreters run four at a time)."""
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="sgstubs-") as where:
        bin_dir = _stubs(Path(where))
        cases = [generate(index) for index in range(seed, seed + count)]
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = pool.map(lambda c: oracle_runs(c, bin_dir), cases)
            for index, (case, runs) in enumerate(zip(cases, results, strict=True)):
                check(seed + index, case, runs, tally)
    return tally


def main() -> None:
    count = (
        int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("SPECGATE_FUZZ_COUNT", "200"))
    )
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    tally = fuzz(count, seed)
    print(
        f"scripts {tally.scripts}; runs {dict(tally.runs)}; engine not run "
        f"{dict(tally.not_run)}; specgate settled {tally.settled}, refused {tally.refused}"
    )
    print(f"wrong settled values: {len(tally.wrong)} {dict(tally.wrong_by)}")
    for seed_, shell, what in tally.wrong[:40]:
        print(f"  seed {seed_} [{shell}] {what}")


if __name__ == "__main__":
    main()
