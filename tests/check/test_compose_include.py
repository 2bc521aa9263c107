"""Compose ``include:`` in a checked repository: a service an included file defines is
the one Compose runs, and its value is placed in that file; an include specgate does
not follow is a finding on the deployment (SG312), never exit 2.

Compose's rules: compose-go ``loader/include.go@75fb1ab`` (v2.9.1, Docker Compose
v2.40.3) and ``@e70e961c``: a relative path is taken from the including file's
working folder; a remote path (``oci://``, a git URL) goes to a remote loader,
which specgate does not follow; ``tests/oracle/test_compose_include_oracle.py``
holds the values against Compose itself. The served D is llama.cpp's
``--draft-max`` (common/arg.cpp); the included ``"6"`` stands at line 4, column 65 of
``compose/inc/llama.yaml`` (counted by hand below). docs/engines.md#containers.
"""

from __future__ import annotations

import os
from pathlib import Path

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

MAIN = """\
include:
  - {include}
services: {{}}
"""
INCLUDED = """\
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b7000
    command: ["-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "6"]
"""
CLAIMS = """\
version: 1
deployments:
  - name: d
    speculation:
      enabled: true
      engine: llamacpp
      engine_config: {config}
      draft_length: 4
    workload:
      name: chat
"""


def _check(top: Path, files: dict[str, str], config: str) -> dict[str, tuple[object, ...]]:
    (top / ".git").mkdir(parents=True)
    for name, text in {**files, "c.specgate.yaml": CLAIMS.format(config=config)}.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text, "utf-8")
    report = check_file(top / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    return {f.code: (f.message, f.file, f.line, f.column, f.related)
            for f in report.deployments[0].findings}


def test_an_included_service_is_read_where_it_is_written(tmp_path: Path) -> None:
    files = {"compose/compose.yaml": MAIN.format(include="inc/llama.yaml"),
             "compose/inc/llama.yaml": INCLUDED}
    for config in ("compose/compose.yaml", "compose/deploy.sh"):
        files["compose/deploy.sh"] = "docker compose up -d\n"
        found = _check(tmp_path / config.replace("/", "-"), files, config)
        message, _, _, _, related = found["SG301"]
        assert "compose/inc/llama.yaml says 6" in str(message)
        assert related == (("compose/inc/llama.yaml", 4, 65),)


def test_an_include_not_followed_is_a_finding_not_an_exit(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(INCLUDED, "utf-8")
    cases = {
        "remote": "oci://registry.example/llama:1",
        "git": "https://github.com/example/deploy.git#main:compose.yaml",
        "absolute": str(outside),
        "climbs-out": "../../outside.yaml",
        "symlink-out": "link.yaml",
        "missing": "gone.yaml",
    }
    for name, include in cases.items():
        top = tmp_path / name
        top.mkdir()
        files = {"compose/compose.yaml": MAIN.format(include=include)}
        (top / "compose").mkdir()
        if name == "symlink-out":
            os.symlink(outside, top / "compose" / "link.yaml")
        found = _check(top, files, "compose/compose.yaml")
        assert "SG312" in found, (name, found)
        # at the include entry: line 2 of compose/compose.yaml
        assert found["SG312"][1:3] == ("compose/compose.yaml", 2), (name, found["SG312"])
        assert "SG301" not in found, name


def test_an_include_path_variable_is_split_by_where_it_is_set(tmp_path: Path) -> None:
    # compose-go loadIncludeConfig interpolates each include entry with the project's
    # variables (Docker Compose v2.40.3 asked: tests/oracle/test_compose_include_oracle.py)
    files = {"compose/compose.yaml": MAIN.format(include="${INC}/llama.yaml"),
             "compose/inc/llama.yaml": INCLUDED}
    # no .env, no default: the environment docker compose runs in sets it (SG313, a
    # warn, the claims file's D 4 used: no SG301); at its $, line 2 column 5 ("  - ")
    found = _check(tmp_path / "outside", files, "compose/compose.yaml")
    assert "SG312" not in found and "SG301" not in found, found
    message, file, line, column, _ = found["SG313"]
    assert (file, line, column) == ("compose/compose.yaml", 2, 5)
    assert "${INC}" in str(message)
    # the project's .env sets it plainly: followed, the included D 6 read (SG301)
    found = _check(tmp_path / "dotenv", {**files, "compose/.env": "INC=inc\n"},
                   "compose/compose.yaml")
    assert "SG313" not in found and "SG312" not in found, found
    assert "compose/inc/llama.yaml says 6" in str(found["SG301"][0])
    # the file's own default settles it
    found = _check(tmp_path / "default",
                   {**files, "compose/compose.yaml": MAIN.format(include="${INC:-inc}/llama.yaml")},
                   "compose/compose.yaml")
    assert "compose/inc/llama.yaml says 6" in str(found["SG301"][0])


def test_an_include_path_the_script_sets_unfollowed_is_the_repositorys(tmp_path: Path) -> None:
    # `export INC=$(…)` before `docker compose up`: the repository sets INC in a way
    # specgate does not follow (SG314 at the include's $)
    files = {"compose/compose.yaml": MAIN.format(include="${INC}/llama.yaml"),
             "compose/inc/llama.yaml": INCLUDED,
             "compose/deploy.sh": "export INC=$(cat which)\ndocker compose up -d\n"}
    found = _check(tmp_path, files, "compose/deploy.sh")
    assert "SG301" not in found, found
    message, file, line, column, _ = found["SG314"]
    assert (file, line, column) == ("compose/compose.yaml", 2, 5), found
    assert "${INC}" in str(message)
