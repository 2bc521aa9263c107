"""A Compose string ``command:`` split as Docker Compose v2 splits it (trial3/15;
docs/engines.md#containers): go-shellwords, no comments, no shell.

For each string below, ``docker compose config`` (``SPECGATE_COMPOSE2``) prints the
command list Compose gives the container; specgate's
:func:`~specgate.inputs.go_shellwords.shellwords_command` gives the same words, or None
(not settled) for the forms it leaves, and None wherever Compose refuses the string.
Skipped when the binary is not there; :func:`test_shellwords_by_hand` holds values
worked out from go-shellwords v1.0.12's ``Parser.Parse``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from specgate.inputs.go_shellwords import shellwords_command

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None
STRINGS = [
    "m --speculative-config '{\"method\": \"ngram\"}'  # D tuned on 2025-06 traffic",
    "m --x 1 #comment",
    "m 'a b' \"c d\" e\\ f",
    'm "a\\"b" \'a\\b\' "x\\\\y"',
    "m '' \"\" x",
    "m a;b c",
    "m a && echo hi",
    "m a | tee log",
    "m 2>err",
    "m x2>err",
    "m\ta\r\nb\n  c",
    "m 'unterminated",
    "m \\",
    "m $$HOME",
    "m a\\tb a\\nb",
    "m `date`",
    "m (x)",
    "vllm serve m --port 8000 # x\n--seed 1",
]


def _compose(top: Path, text: str, home: Path) -> list[str] | None:
    assert COMPOSE2 is not None
    (top / "compose.yaml").write_text(
        "services:\n  a:\n    image: x\n    command: " + json.dumps(text) + "\n", "utf-8"
    )
    out = subprocess.run(
        [COMPOSE2, "config"], check=False, cwd=top, capture_output=True, text=True,
        timeout=120, env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)},
    )
    if out.returncode != 0:
        return None
    command: list[str] = yaml.safe_load(out.stdout)["services"]["a"]["command"]
    return [word.replace("$$", "$") for word in command]  # config prints a $ as $$


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
@pytest.mark.parametrize("index", range(len(STRINGS)))
def test_a_string_command_splits_as_compose_splits_it(tmp_path: Path, index: int) -> None:
    text = STRINGS[index]
    oracle = _compose(tmp_path, text, tmp_path)
    # Compose interpolates first: $$ is a $ (specgate's Compose reader does it before)
    mine = shellwords_command(text.replace("$$", "$"))
    if oracle is None:
        assert mine is None
        return
    if mine is not None:
        assert list(mine.argv) == oracle


def test_shellwords_by_hand() -> None:
    def words(text: str) -> list[str] | None:
        command = shellwords_command(text)
        return None if command is None else list(command.argv)

    assert words("m --x '{}'  # D tuned") == ["m", "--x", "{}", "#", "D", "tuned"]
    assert words("m a;b c") == ["m", "a"]  # an unquoted ; ends the command
    assert words("m 2>err") == ["m"]  # the 2 of 2> is dropped
    assert words("m x2>err") == ["m", "x2"]
    assert words("m '' \"\" x") == ["m", "", "", "x"]
    assert words('m "a\\"b" \'a\\b\'') == ["m", 'a"b', "a\\b"]
    assert words("m 'open") is None and words("m `date`") is None
    placed = shellwords_command("m\n  --x 1")
    assert placed is not None
    assert (placed.lines, placed.columns) == ((0, 1, 1), (1, 3, 7))
