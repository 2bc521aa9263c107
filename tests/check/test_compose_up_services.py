"""``docker compose up SERVICE...`` starts the named services and what they
``depends_on`` (``cmd/compose/up.go@v5.5.0`` → ``ToProject(services)``, compose-go
``types/project.go@e70e961c`` ``WithSelectedServices``; held against Docker Compose
v2 in ``tests/oracle/test_compose_up_services_oracle.py``), so the configuration read
is the named service's, not another service's of the file. llama.cpp's D is
``--draft-max`` (common/arg.cpp). docs/engines.md#containers.
"""

from __future__ import annotations

from pathlib import Path

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

COMPOSE = """\
services:
  small:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b7000
    command: ["-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "3"]
  big:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b7000
    command: ["-m", "/m.gguf", "-md", "/d.gguf", "--draft-max", "6"]
    depends_on: [cache]
  cache:
    image: redis:7
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


def _check(top: Path, script: str) -> dict[str, str]:
    (top / ".git").mkdir(parents=True)
    (top / "compose").mkdir()
    (top / "compose" / "compose.yaml").write_text(COMPOSE, "utf-8")
    (top / "compose" / "deploy.sh").write_text(script, "utf-8")
    (top / "c.specgate.yaml").write_text(CLAIMS, "utf-8")
    report = check_file(top / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    return {f.code: f.message for f in report.deployments[0].findings}


def test_up_reads_the_named_service(tmp_path: Path) -> None:
    # big and the cache it depends on start; small does not: D is big's 6
    found = _check(tmp_path / "big", "docker compose up -d --pull never big\n")
    assert "says 6" in found["SG301"]
    # small alone (options between and after the name, read by up's table)
    found = _check(tmp_path / "small", "docker compose up --wait small -t 5\n")
    assert "says 3" in found["SG301"]


def test_up_naming_no_service_or_both_is_not_one_configuration(tmp_path: Path) -> None:
    for name, script in (("all", "docker compose up -d\n"),
                         ("both", "docker compose up -d small big\n")):
        found = _check(tmp_path / name, script)
        assert "SG301" not in found, (name, found)
