"""A quoted or escaped ``#`` is a word, not a comment, as bash and dash run it (trial3/15:
``vllm serve M --speculative-config '{…}' '#' was 5`` gives vLLM the words ``#``, ``was``,
``5``, which it refuses). A ``#`` starts a comment only unquoted at a word's start (POSIX
2.3, rule 9). Each line runs under bash and dash as ``set -- LINE`` and its words are
compared with specgate's split (skipped for a shell not installed).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from specgate.inputs.cmdline import split_commands

LINES = [
    "a '#' was 5",
    'a "#" was 5',
    "a \\# was 5",
    "a b#c # d e",
    "a '#x' # y",
    "a #comment 'q",
    'a "x # y" z',
]


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize("line", LINES)
def test_hash_words_as_the_shell_reads_them(shell: str, line: str) -> None:
    program = shutil.which(shell)
    if program is None:
        pytest.skip(f"{shell} not installed")
    run = subprocess.run(
        [program, "-c", f"set -- {line}\nprintf '%s\\0' \"$@\""],
        capture_output=True, check=True, timeout=30,
    )
    words = [w.decode() for w in run.stdout.split(b"\0")[:-1]]
    (command,) = split_commands(f"prog {line}\n", script=True)
    assert list(command.argv[1:]) == words
