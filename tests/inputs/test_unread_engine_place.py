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
# An engine specgate does not read named by its image (LMDeploy: openmmlab/lmdeploy,
# data/unread-launchers.json): the finding sits at the image word.
# line 10: 10 spaces, `image:` at 11-16, a space, the image word at 18
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: lmd\nspec:\n"
    "  template:\n    spec:\n      containers:\n        - name: lmd\n"
    "          image: openmmlab/lmdeploy:v0.6.0\n"
    '          args: ["lmdeploy", "serve", "api_server", "m", '
    '"--speculative-algorithm", "eagle3"]\n'
)
# Helm values, line 3: 4 spaces, `repository:` at 5-15, a space, the image word at 17
# (the tag on line 4 is not the word that names the engine)
VALUES = "server:\n  image:\n    repository: openmmlab/lmdeploy\n    tag: v0.6.0\n"
# Compose, line 3: 4 spaces, `image:` at 5-10, a space, the opening quote at 12 (a
# quoted scalar's span opens at its quote, as every YAML value's does here)
COMPOSE_IMAGE = 'services:\n  lmd:\n    image: "openmmlab/lmdeploy:v0.6.0"\n'


@pytest.mark.parametrize(
    ("name", "text", "place"),
    [
        ("docker-compose.yml", COMPOSE, (3, 15)),
        ("serve.sh", SCRIPT, (2, 7)),
        ("deploy.yaml", DEPLOYMENT, (10, 18)),
        ("values.yaml", VALUES, (3, 17)),
        ("compose.yaml", COMPOSE_IMAGE, (3, 12)),
    ],
)
def test_unread_program_at_its_word(
    name: str, text: str, place: tuple[int, int], tmp_path: Path
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(UnreadEngine) as caught:
        read_engine_file(tmp_path / name, name)
    assert (caught.value.line, caught.value.column) == place
    assert "which specgate does not read" in str(caught.value) or "not an engine" in str(
        caught.value
    )


def test_sg312_of_an_unread_image_at_its_word_in_the_check(tmp_path: Path) -> None:
    # the check's finding carries the same place as the input error (deploy.yaml 10:18)
    from tests.rules.test_env_files import check

    _, dep = check(tmp_path, {"deploy.yaml": DEPLOYMENT}, "deploy.yaml")
    (hit,) = [f for f in dep["findings"] if f["code"] == "SG312"]
    assert (hit["file"], hit["line"], hit["column"]) == ("deploy.yaml", 10, 18)
    assert "LMDeploy" in hit["message"]
