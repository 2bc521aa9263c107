"""``--changed`` / ``--staged`` count every file the engine reader opens for a claims
file, not only the files it names (issue 25: the hook said "no claims file is
affected" when only the Compose ``.env``, a ``--config`` file named through a
variable, or one written ``cf""g.yaml`` changed, while a plain check of the same tree
read them). Each form below is built alone, and only the file it reads changes; the
claims file names the launcher only. What each launcher reads is worked out by hand:
bash expands ``"$CFG"`` to ``configs/spec.yaml`` and joins ``spec""`` to ``spec``
(POSIX 2.6.2, 2.6.7), and Compose reads the ``.env`` beside the Compose file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.git_repo import Repo

from specgate.change.changed import affected

SPEC4 = '{"method":"eagle3","model":"y","num_speculative_tokens":4}'
CLAIMS = (
    "version: 1\ndeployments:\n  - name: d\n    speculation:\n"
    "      engine_config: serving/{launcher}\n"
)
OPTIONS = 'speculative-config: \'{"method":"eagle3","model":"y","num_speculative_tokens":4}\'\n'
COMPOSE = (
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    command: >-\n"
    "      vllm serve m --speculative-config\n"
    '      \'{"method":"eagle3","model":"y","num_speculative_tokens":${D}}\'\n'
)

#: name -> (files, the file that changes)
FORMS: dict[str, tuple[dict[str, str], str]] = {
    "variable": (
        {
            "serving/serve.sh": 'CFG=configs/spec.yaml\nvllm serve m --config "$CFG"\n',
            "serving/configs/spec.yaml": OPTIONS,
        },
        "serving/configs/spec.yaml",
    ),
    "quoted-piece": (
        {
            "serving/serve.sh": 'vllm serve m --config configs/sp""ec.yaml\n',
            "serving/configs/spec.yaml": OPTIONS,
        },
        "serving/configs/spec.yaml",
    ),
    # specgate reads no sourced file (what it sets is unsettled), but it counts
    "sourced": (
        {
            "serving/serve.sh": ". ./spec.env\nvllm serve m --speculative-config \"$SPEC\"\n",
            "serving/spec.env": f"SPEC='{SPEC4}'\n",
        },
        "serving/spec.env",
    ),
    "compose-env": (
        {"serving/compose.yaml": COMPOSE, "serving/.env": "D=4\n"},
        "serving/.env",
    ),
    # a Compose project (docs/engines.md#containers): the second -f file of `up`, the
    # override of a Compose file found in a parent folder, a file COMPOSE_FILE lists
    "compose-up-files": (
        {
            "serving/serve.sh": "docker compose -f base.yaml -f prod.yaml up -d\n",
            "serving/base.yaml": COMPOSE.replace("${D}", "3"),
            "serving/prod.yaml": "services:\n  vllm:\n    environment: [D=4]\n",
        },
        "serving/prod.yaml",
    ),
    "compose-run-parent": (
        {
            "serving/serve.sh": "docker compose run vllm\n",
            "compose.yaml": COMPOSE.replace("${D}", "3"),
            "compose.override.yaml": "services:\n  vllm:\n    environment: [D=4]\n",
        },
        "compose.override.yaml",
    ),
    "compose-file-listed": (
        {
            "serving/compose.yaml": COMPOSE,
            "serving/.env": "COMPOSE_FILE=compose.yaml:gpu.yaml\nD=3\n",
            "serving/gpu.yaml": "services:\n  vllm:\n    environment: [D=4]\n",
        },
        "serving/gpu.yaml",
    ),
}


@pytest.mark.parametrize("name", FORMS)
def test_a_file_the_reader_opens_selects_its_claims_file(repo: Repo, name: str) -> None:
    files, changes = FORMS[name]
    launcher = next(n for n in files if n.endswith((".sh", "compose.yaml"))).split("/")[-1]
    repo.write({"specgate.yaml": CLAIMS.format(launcher=launcher), **files})
    repo.commit()
    (repo.root / changes).write_text(files[changes].replace("4", "7"), encoding="utf-8")
    found = affected([Path(changes)])
    assert [shown for _, shown in found.claims] == ["specgate.yaml"]
    assert found.ignored == []


@pytest.mark.parametrize("name", FORMS)
def test_a_file_beside_it_that_no_reader_opens_is_ignored(repo: Repo, name: str) -> None:
    files, _ = FORMS[name]
    launcher = next(n for n in files if n.endswith((".sh", "compose.yaml"))).split("/")[-1]
    repo.write({"specgate.yaml": CLAIMS.format(launcher=launcher), **files, "serving/x.yaml": ""})
    repo.commit()
    (repo.root / "serving/x.yaml").write_text("a: 1\n", encoding="utf-8")
    found = affected([Path("serving/x.yaml")])
    assert found.claims == []
    assert found.ignored == ["serving/x.yaml"]
