"""Compose interpolation that Compose itself would not settle from the repository is a
finding on that deployment, not exit 2 for the claims file (issue 24, degrade never
stop): a form Compose refuses (`${SPEC/x/y}`: SG312) and a required variable `.env`
leaves empty (`${SPEC:?msg}`, which the environment Compose runs in may set: SG313).
docker-compose 1.29.2 is the oracle (checked here when installed); columns counted by
hand in `    command: ["m", "--speculative-config", "${SPEC…}"]`: the quote at 44, the
`$` at 45."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file

CLAIMS = """\
version: 1
deployments:
  - name: a
    speculation: {enabled: true, engine_config: compose.yaml, mechanism: ngram, draft_length: 4}
    evidence: {accept_length: 2}
  - name: b
    speculation: {enabled: true, mechanism: ngram, draft_length: 3}
    evidence: {accept_length: 2}
"""
COMPOSE = """\
services:
  v:
    image: vllm/vllm-openai:v0.10.0
    command: ["m", "--speculative-config", "{value}"]
"""
FORMS = {
    # (the value, .env, code, column, severity)
    "refused": ("${SPEC/x/y}", None, "SG312", 44, "warn"),
    "required-empty": ("${SPEC:?need it}", "SPEC=\n", "SG313", 45, "warn"),
}


def _write(root: Path, value: str, env: str | None) -> None:
    (root / ".git").mkdir(exist_ok=True)
    (root / "s.yaml").write_text(CLAIMS, "utf-8")
    (root / "compose.yaml").write_text(COMPOSE.replace("{value}", value), "utf-8")
    if env is not None:
        (root / ".env").write_text(env, "utf-8")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_compose_value_compose_does_not_settle_is_a_finding(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    value, env, code, column, severity = FORMS[form]
    _write(tmp_path, value, env)
    monkeypatch.chdir(tmp_path)
    report = check_file(Path("s.yaml"), "s.yaml", CheckOptions())
    assert report.error is None, report.error
    first, other = report.deployments
    (found,) = [f for f in first.findings if f.code == code]
    assert (found.file, found.line, found.column, found.severity) == (
        "compose.yaml", 4, column, severity,
    )
    # the other deployment of the file is still judged
    assert other.name == "b" and other.metrics.accept_length == 2


#: docker-compose 1.29 and Compose v2 (SPECGATE_COMPOSE2, as the oracle tests name it)
COMPOSES = [c for c in (shutil.which("docker-compose"), os.environ.get("SPECGATE_COMPOSE2")) if c]


def _config(compose: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [compose, "config"], check=False, cwd=root, capture_output=True, text=True,
        timeout=120, env={**os.environ, **env},
    )


@pytest.mark.skipif(not COMPOSES, reason="no docker-compose installed")
@pytest.mark.parametrize("compose", COMPOSES)
def test_compose_refuses_one_and_takes_the_other_from_the_environment(
    compose: str, tmp_path: Path
) -> None:
    value, env, *_ = FORMS["refused"]
    _write(tmp_path, value, env)
    # refused: no model printed (the v2 wrapper exits 0 with the error on stderr)
    done = _config(compose, tmp_path, {})
    assert "services" not in done.stdout
    assert "invalid interpolation format" in done.stderr.lower()
    value, env, *_ = FORMS["required-empty"]
    _write(tmp_path, value, env)
    assert "services" not in _config(compose, tmp_path, {}).stdout  # .env's SPEC= stops it
    done = _config(compose, tmp_path, {"SPEC": "abc"})
    assert done.returncode == 0 and "- abc" in done.stdout
