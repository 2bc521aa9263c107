"""``docker-compose config`` as the oracle of how specgate maps a Compose service's
``volumes:`` (issue 24): for generated short- and long-syntax entries, the host path
each container path is bound to (relative sources resolved against the Compose file's
folder, named volumes none) is the one Compose resolves, never another.

Debian's ``docker-compose`` (1.29; ``config`` needs no daemon) prints every bind source
absolute. Skipped when it is not installed.
"""

from __future__ import annotations

import os
import posixpath
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from specgate.inputs.volumes import compose_binds

COMPOSE = shutil.which("docker-compose")
PROJECTS = int(os.environ.get("SPECGATE_ORACLE_CASES", "3"))

SOURCES = ["./trt", "trt", "../up", ".", "./a/../b", "/abs/dir", "cache", "./x/"]


def _entry(rng: random.Random, i: int) -> Any:
    source = rng.choice(SOURCES)
    target = f"/t{i}" + rng.choice(["", "/", "/sub"])
    if rng.random() < 0.5:
        return f"{source}:{target}" + rng.choice(["", ":ro", ":rw", ":z"])
    bind = source.startswith((".", "/"))
    return {"type": "bind" if bind else "volume", "source": source, "target": target}


def _compose_hosts(out: dict[str, Any]) -> list[tuple[str, str | None]]:
    hosts: list[tuple[str, str | None]] = []
    for volume in out["services"]["s"]["volumes"]:
        if isinstance(volume, str):
            host, target = volume.split(":")[:2]
            hosts.append((posixpath.normpath(target), host if host.startswith("/") else None))
        else:
            source = volume["source"] if volume["type"] == "bind" else None
            hosts.append((posixpath.normpath(volume["target"]), source))
    return hosts


@pytest.mark.skipif(COMPOSE is None, reason="docker-compose is not installed")
@pytest.mark.parametrize("seed", range(PROJECTS))
def test_volume_sources_agree_with_docker_compose(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    folder = tmp_path / "proj" / "serving"
    folder.mkdir(parents=True)
    volumes = [_entry(rng, i) for i in range(12)]
    named = {"trt": {}, "cache": {}}
    data = {"services": {"s": {"image": "x", "volumes": volumes}}, "volumes": named}
    (folder / "compose.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    done = subprocess.run(
        [str(COMPOSE), "config"], cwd=folder, capture_output=True, text=True, timeout=120,
        env={"PATH": os.environ.get("PATH", "")}, check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = _compose_hosts(yaml.safe_load(done.stdout))
    ours = [
        (b.inside, None if b.host is None else posixpath.normpath(
            b.host if b.host.startswith("/") else posixpath.join(str(folder), b.host)))
        for b in compose_binds(volumes)
    ]
    assert ours == expected
