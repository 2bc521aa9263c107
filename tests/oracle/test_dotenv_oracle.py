"""A project's ``.env`` read as Docker Compose v2 reads it (trial3/04;
docs/engines.md#containers): compose-go's dotenv parser (``dotenv/parser.go``@e70e961c).

For each ``.env`` below (hand-picked lines, then files drawn from :data:`FRAGMENTS`
with a fixed seed), ``docker compose config --environment`` (``SPECGATE_COMPOSE2``)
either prints the variables it interpolates with, and specgate's
:func:`~specgate.load.compose_env.parse_dotenv` gives the same names and values, or
refuses the project, and specgate refuses the ``.env`` (an input error at a line).
Skipped when the binary is not there; :func:`test_dotenv_by_hand` holds values worked
out from the parser's source without it.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.load.compose_env import parse_dotenv

COMPOSE2 = os.environ.get("SPECGATE_COMPOSE2") or None
OUTER = {"BAR": "bar", "HOME": "/nowhere"}

CASES = [
    'HF_TOKEN=hf_x\nSYSTEM_PROMPT="You are a helpful assistant.\nAnswer briefly."\nNUM=4\n',
    "FOO\nNUM=4\n",
    "export FOO\nNUM=4\n",
    "export BAR\nNUM=4\n",
    "FOO: bar\nNUM: 4\n",
    "=5\nNUM=4\n",
    "X='it''s'\nNUM=4\n",
    "A=1\nB=${A}2\nC=\"$A\\t${B}\"\nD='$A'\n",
    "E=\"\\0101\\0\\01\\q\\$Q\\a\"\n",
    "F='a\\'b' junk\nG=1\n",
    "H=\"unterminated\nI=1\n",
    "J K=1\n",
    "L.M-N[0]=1\n",
    "\ufeffO=1\r\nP=2 # two\r\nQ=3#three\n",
    "R=\"x\" # c\nS=  spaced  \n",
    "T\tU=1\n",
    "V=1\nV\n",
    "W=${HOME}\nX=${BAR}\n",
    "export\tY=1\nexport=2\n",
    "Z=é\nÉ=1\n",
    "a-b:c\n",
    "last-without-newline",
    "AA=\"\\\"q\\\"\"\nAB='\\\\'\n",
]
FRAGMENTS = [
    "A=1", "B=2 # c", "C: 3", "export D=4", "E", "export F", "G='x y'", 'H="x\\ny"',
    'I="two\nlines"', "J=${A}", "K=$$A", "# comment", "", "  L = 5 ", "M='", 'N="\\$A"',
    "O.P=6", "Q=a#b", "R=\t", "S=${UNSET:-d}", "BAR", "T='a\\'b'", "U=\"x\"y", "V W=1",
]


def _cases() -> list[str]:
    rng = random.Random(2703)
    drawn = [
        "\n".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 6))) + "\n"
        for _ in range(40)
    ]
    return CASES + drawn


def _render(env: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in sorted(env.items()))


def _compose(top: Path) -> str | None:
    assert COMPOSE2 is not None
    out = subprocess.run(
        [COMPOSE2, "config", "--environment"], check=False, cwd=top, capture_output=True,
        text=True, timeout=120, env={"PATH": os.environ.get("PATH", ""), **OUTER},
    )
    return out.stdout if out.returncode == 0 else None


@pytest.mark.skipif(COMPOSE2 is None, reason="Docker Compose v2 (SPECGATE_COMPOSE2) not set")
@pytest.mark.parametrize("index", range(len(_cases())))
def test_dotenv_reads_as_compose_reads_it(tmp_path: Path, index: int) -> None:
    text = _cases()[index]
    top = tmp_path / f"p{index}"
    top.mkdir()
    (top / "compose.yaml").write_text("services:\n  a:\n    image: x\n", "utf-8")
    (top / ".env").write_text(text, "utf-8")
    oracle = _compose(top)
    outer = {"PATH": os.environ.get("PATH", ""), **OUTER}
    if oracle is None:
        with pytest.raises(InputError) as caught:
            parse_dotenv(text, ".env", outer)
        assert caught.value.line is not None
        return
    loose: set[str] = set()
    env = parse_dotenv(text, ".env", outer, None, loose)
    for name in loose:  # unsettled (the environment may set what it reads): not compared
        kept = [line for line in oracle.split("\n") if line and not line.startswith(f"{name}=")]
        oracle = "".join(f"{line}\n" for line in kept)
        del env[name]
    env.update(outer)  # the environment Compose runs in wins over .env
    env.update(PWD=str(top), COMPOSE_PROJECT_NAME=top.name)
    assert _render(env) == oracle


def test_dotenv_by_hand() -> None:
    """Values worked out from compose-go ``dotenv/parser.go``@e70e961c."""
    two = parse_dotenv('P="a\nb"\nN=4\n', ".env")
    assert two == {"P": "a\nb", "N": "4"}  # a double-quoted value over two lines
    assert parse_dotenv("FOO\nN=4\n", ".env") == {"N": "4"}  # from the environment: unset
    assert parse_dotenv("export FOO\nN=4\n", ".env", {"FOO": "f"}) == {"FOO": "f", "N": "4"}
    assert parse_dotenv("FOO: bar\nN: 4\n", ".env") == {"FOO": "bar", "N": "4"}
    assert parse_dotenv("=5\nN=4\n", ".env") == {"": "5", "N": "4"}  # a name no ${} reaches
    with pytest.raises(InputError, match="unexpected character \"'\"") as caught:
        parse_dotenv("N=4\nX='it''s'\n", ".env")  # 'it' closes; 's' opens a bad name
    assert caught.value.line == 2
    # \0101 is octal A; \0 then \01 lose their 0; \q stays; \$ is a literal $
    assert parse_dotenv('E="\\0101\\0\\01\\q\\$Q"\n', ".env") == {"E": "A\\\\1\\q$Q"}
    lines: dict[str, int] = {}
    parse_dotenv('A=1\nB="x\ny"\nC=3\n', ".env", None, lines)
    assert lines == {"A": 1, "B": 2, "C": 4}
    # ${X} that nothing here sets: the environment Compose runs in may; so is B's
    loose: set[str] = set()
    parse_dotenv("A=${X}\nB=${A}\nC=${X:-3}\n", ".env", None, None, loose)
    assert loose == {"A", "B"}
