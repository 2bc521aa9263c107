"""SG312 for a launch specgate does not read sits at the word it is about, never
column 1 of the line (new-user trial: a Compose `command:` at column 5 whose program
word is at column 15 was reported at docker-compose.yml:6:1). Columns counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.unread import UnreadEngine

# line 3: 4 spaces, `command:` at 5-12, a space, `[` at 14, the quote of the word at 15
COMPOSE = (
    "services:\n  sglang:\n"
    '    command: ["meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3"]\n'
)
# line 2: `FOO=1 ` is 6 characters, so the program word `rapid-mlx` starts at column 7
SCRIPT = "#!/bin/sh\nFOO=1 rapid-mlx serve m --speculative-config '{}'\n"


@pytest.mark.parametrize(
    ("name", "text", "place"),
    [("docker-compose.yml", COMPOSE, (3, 15)), ("serve.sh", SCRIPT, (2, 7))],
)
def test_unread_program_at_its_word(
    name: str, text: str, place: tuple[int, int], tmp_path: Path
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / name, name)
    assert (caught.value.line, caught.value.column) == place
