"""A value a Compose file merged over the config sets is named and placed in that file.

The merged model is Compose's: ``override/merge.go@00be3c8c`` (compose-spec/compose-go)
replaces ``command`` with the override's, and ``docker-compose config`` (1.29, when
installed) prints the override's words for these projects (checked below). The served D is
llama.cpp's ``--draft-max`` (common/arg.cpp). The lines and columns are counted by hand
in the texts below: the override's ``"6"`` stands at line 3, column 65; its string form
``command:`` value starts at line 3, column 14; the ``"${D:-3}"`` item at line 10, column 9.
Compose interpolates ``${D:-3}`` from the ``.env`` beside the file (compose-spec
``12-interpolation.md``): ``D=7`` there gives 7 (``docker-compose config``), no ``D`` the
default. docs/reports.md#finding-locations.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

BASE = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b7000
    command: ["-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "4"]
"""
PROD = """\
services:
  llama:
    command: ["-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "6"]
"""
PROD_STRING = """\
services:
  llama:
    command: -m /m.gguf -md /d.gguf --draft-max 6
"""
IMAGE_ONLY = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b7001
"""
CLAIMS = """\
version: 1
deployments:
  - name: d
    speculation:
      enabled: true
      engine: llamacpp
      engine_config: compose/deploy.sh
      draft_length: 4
    workload:
      name: chat
"""
COMPOSE = shutil.which("docker-compose")


def _check(top: Path, files: dict[str, str]) -> dict[str, tuple[str, str | None, int | None,
                                                                 int | None, object]]:
    (top / ".git").mkdir()
    (top / "compose").mkdir()
    for name, text in {**files, "c.specgate.yaml": CLAIMS}.items():
        (top / name).write_text(text, "utf-8")
    report = check_file(top / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    return {f.code: (f.message, f.file, f.line, f.column, f.related)
            for f in report.deployments[0].findings}


def _compose_command(folder: Path, *args: str) -> object:
    if COMPOSE is None:
        return None
    done = subprocess.run([COMPOSE, *args, "config"], cwd=folder, capture_output=True,
                          text=True, timeout=60, check=True)
    return yaml.safe_load(done.stdout)["services"]["llama"]["command"]


def test_the_override_named_by_f_is_the_file_that_says_d(tmp_path: Path) -> None:
    found = _check(tmp_path, {
        "compose/compose.yaml": BASE, "compose/compose.prod.yaml": PROD,
        "compose/deploy.sh": "docker compose -f compose.yaml -f compose.prod.yaml up -d\n",
    })
    message, file, line, column, related = found["SG301"]
    assert "compose/compose.prod.yaml says 6" in message
    assert (file, line, column) == ("c.specgate.yaml", 8, 21)
    assert related == (("compose/compose.prod.yaml", 3, 65),)
    assert found["SG308"][1:4] == ("compose/compose.prod.yaml", 3, 65)
    words = _compose_command(tmp_path / "compose", "-f", "compose.yaml", "-f",
                             "compose.prod.yaml")
    assert words in (None, ["-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "6"])


def test_the_default_override_file_is_the_file_that_says_d(tmp_path: Path) -> None:
    found = _check(tmp_path, {
        "compose/compose.yaml": BASE, "compose/compose.override.yaml": PROD_STRING,
        "compose/deploy.sh": "docker compose up -d\n",
    })
    message, _, _, _, related = found["SG301"]
    assert "compose/compose.override.yaml says 6" in message
    # a string command: its value's start in the override file
    assert related == (("compose/compose.override.yaml", 3, 14),)
    words = _compose_command(tmp_path / "compose")
    assert words in (None, "-m /m.gguf -md /d.gguf --draft-max 6")


def test_a_value_only_the_base_sets_stays_in_the_base(tmp_path: Path) -> None:
    found = _check(tmp_path, {
        "compose/compose.yaml": BASE.replace('"4"', '"6"'),
        "compose/compose.prod.yaml": IMAGE_ONLY,
        "compose/deploy.sh": "docker compose -f compose.yaml -f compose.prod.yaml up -d\n",
    })
    message, _, _, _, related = found["SG301"]
    assert "compose/compose.yaml says 6" in message
    assert related == (("compose/compose.yaml", 4, 65),)


LISTED = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b7000
    command:
      - -m
      - /m.gguf
      - -md
      - /d.gguf
      - --draft-max
      - "${D:-3}"
"""
DOTENV = "# drafts\nD=7\n"


def test_a_dotenv_line_that_sets_d_is_named(tmp_path: Path) -> None:
    # Compose interpolates ${D:-3} from the .env beside the file: 7 (docker-compose config)
    found = _check(tmp_path, {
        "compose/compose.yaml": LISTED, "compose/.env": DOTENV,
        "compose/deploy.sh": "docker compose up -d\n",
    })
    message, _, _, _, related = found["SG301"]
    assert "compose/.env:2 (D), read by compose/compose.yaml, says 7" in message
    # the location stays at the ${D:-3} that reads it (line 10, column 9)
    assert related == (("compose/compose.yaml", 10, 9),)
    words = _compose_command(tmp_path / "compose")
    assert words in (None, ["-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "7"])


def test_a_dotenv_variable_in_a_string_command_is_named(tmp_path: Path) -> None:
    command = "    command: -m /m.gguf -md /d.gguf --draft-max ${D:-3}\n"
    text = LISTED.split("    command:", maxsplit=1)[0] + command
    found = _check(tmp_path, {
        "compose/compose.yaml": text, "compose/.env": DOTENV,
        "compose/deploy.sh": "docker compose up -d\n",
    })
    assert "compose/.env:2 (D), read by compose/compose.yaml, says 7" in found["SG301"][0]


def test_a_default_the_dotenv_does_not_set_is_the_files_own(tmp_path: Path) -> None:
    found = _check(tmp_path, {
        "compose/compose.yaml": LISTED.replace("${D:-3}", "${D:-6}"),
        "compose/.env": "# no D here\nM=1\n",
        "compose/deploy.sh": "docker compose up -d\n",
    })
    message, _, _, _, related = found["SG301"]
    assert "compose/compose.yaml says 6" in message and ".env" not in message
    assert related == (("compose/compose.yaml", 10, 9),)
