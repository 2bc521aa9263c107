"""A container command run on an image with no ENTRYPOINT that starts the server says
so (issue 24: "serving config runs m, which is not an engine specgate reads" left the
reader guessing). lmsysorg/sglang sets no ENTRYPOINT or CMD (sgl-project/sglang
docker/Dockerfile@924d890f, read in full: FROM, ENV, RUN, WORKDIR only; the entry in
data/image-entrypoints.json), so a Kubernetes ``args`` without ``command`` (a Compose
``command`` without ``entrypoint``) is the whole argv: its first word is the program.
The finding names the image, says the first word is the program, and says what to write
(SGLang's launch command, ``python3 -m sglang.launch_server``). Columns counted by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines.unread import UnreadEngine

# line 11: 10 spaces, `args:` at 11-15, a space, `[` at 17, the quote of "m" at 18
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sgl\nspec:\n"
    "  template:\n    spec:\n      containers:\n        - name: sgl\n"
    "          image: lmsysorg/sglang:v0.5.2\n"
    '          args: ["m", "--speculative-algorithm", "EAGLE3"]\n'
)
# line 4: 4 spaces, `command:` at 5-12, a space, `[` at 14, the quote at 15
COMPOSE = (
    "services:\n  sglang:\n    image: lmsysorg/sglang:v0.5.4-cu129\n"
    '    command: ["meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3"]\n'
)


CASES = {
    "deploy.yaml": (DEPLOYMENT, (11, 18), "m", "args"),
    "compose.yaml": (COMPOSE, (4, 15), "meta-llama/Llama-3.1-8B-Instruct", "command"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_first_word_is_the_program(name: str, tmp_path: Path) -> None:
    text, place, program, key = CASES[name]
    (tmp_path / name).write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / name, name)
    error = caught.value
    assert (error.line, error.column) == place
    reason = error.reason
    assert reason.startswith(f"serving config runs `{program}` as the program: image lmsysorg/")
    assert "has no ENTRYPOINT that starts the SGLang server" in reason
    assert f"the first word of {key} is the program the container runs" in reason
    assert f"start {key} with `python3 -m sglang.launch_server`" in reason
    assert "sgl-project/sglang:docker/Dockerfile@924d890f" in reason
    assert error.speculates


def test_an_entrypoint_override_is_not_this_case(tmp_path: Path) -> None:
    # Compose `entrypoint:` replaces the image's: its words are the program, not the
    # image's missing ENTRYPOINT (the message is the plain one)
    text = COMPOSE.replace("    command:", '    entrypoint: ["m2"]\n    command:')
    (tmp_path / "compose.yaml").write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert "ENTRYPOINT" not in caught.value.reason
