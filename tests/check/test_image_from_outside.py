"""A container runner line whose IMAGE is a variable set outside the repository.

``docker run [OPTIONS] IMAGE [COMMAND] [ARG...]``: the IMAGE is the first word after
the options (docker/cli ``cli/command/container/run.go@v29.7.2``: ``copts.Image =
args[0]``, options not interspersed), so in ``docker run --gpus all $IMAGE …`` the
image, and with it the engine release the container runs (and its ENTRYPOINT/CMD), is
whatever the environment that runs the script holds: the deployment's value, SG313 at
that word, and the engine version is not pinned (docs/engines.md#containers,
docs/trust.md). The column is counted by hand: ``docker run --gpus all `` is 22
characters, so ``$IMAGE`` starts at column 23 (in ``"$IMAGE"`` the ``$`` is at 24).
vLLM's D is ``num_speculative_tokens`` of ``--speculative-config``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.check.options import CheckOptions
from specgate.check.run import check_file

SPEC = """'{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'"""
CLAIMS = """\
version: 1
deployments:
  - name: d
    speculation:
      enabled: true
      engine: vllm
      engine_config: serve.sh
      mechanism: ngram
      draft_length: 3
    workload:
      name: chat
"""


def _report(top: Path, script: str) -> dict[str, tuple[object, ...]]:
    (top / ".git").mkdir(parents=True)
    (top / "serve.sh").write_text(script, "utf-8")
    (top / "c.specgate.yaml").write_text(CLAIMS, "utf-8")
    report = check_file(top / "c.specgate.yaml", "c.specgate.yaml", CheckOptions())
    assert report.error is None
    (deployment,) = report.deployments
    return {f.code: (f.message, f.file, f.line, f.column, f.details)
            for f in deployment.findings}


@pytest.mark.parametrize(
    ("image", "column"),
    [("$IMAGE", 23), ("${IMAGE}", 23), ('"$IMAGE"', 24)],
)
def test_an_image_from_the_environment_is_the_deployments(
    tmp_path: Path, image: str, column: int
) -> None:
    for name, rest in (("flags", f"--model /m --speculative-config {SPEC}"),
                       ("nothing", "")):
        script = f"#!/bin/sh\ndocker run --gpus all {image} {rest}\n"
        found = _report(tmp_path / name, script)
        message, file, line, col, details = found["SG313"]
        # named as written (the expansion, without its quotes)
        assert f"`{image.strip(chr(34))}`" in str(message)
        assert (file, line, col) == ("serve.sh", 2, column)
        assert "image the container runs" in str(details)
        assert "not pinned" in str(details)


def test_an_image_the_script_sets_is_no_finding(tmp_path: Path) -> None:
    script = (f"#!/bin/sh\nIMAGE=vllm/vllm-openai:v0.26.0\n"
              f"docker run --gpus all $IMAGE --model /m --speculative-config {SPEC}\n")
    found = _report(tmp_path, script)
    assert "SG313" not in found


def test_the_version_is_not_pinned_and_no_file_pins_it(tmp_path: Path) -> None:
    from specgate.inputs.version import detect_version

    # a tag elsewhere in the script and a requirements pin beside it are not the image
    # the container runs (the environment's): the version stays unknown
    (tmp_path / "requirements.txt").write_text("vllm==0.26.0\n", "utf-8")
    text = "# vllm/vllm-openai:v0.26.0\ndocker run $IMAGE --model /m\n"
    found = detect_version("vllm", None, text, tmp_path / "serve.sh", image_outside="$IMAGE")
    assert (found.version, found.source) == (None, "assumed-newest")
    assert "image not pinned: set by $IMAGE, outside the repository" in (found.note or "")


COMPOSE = f"""\
services:
  vllm:
    image: ${{IMAGE}}
    command: [/models/m, --speculative-config, {SPEC}]
"""


def test_a_compose_service_image_from_the_environment_is_the_deployments(
    tmp_path: Path,
) -> None:
    # Compose interpolates ${IMAGE} from the .env of the project folder, else from the
    # environment docker compose runs in (compose-spec 12-interpolation.md); the
    # service's command then follows the image's ENTRYPOINT, which is not known. The
    # value starts at line 3, column 12 (`    image: ` is 11 characters).
    top = tmp_path / "outside"
    top.mkdir()
    (top / "compose.yaml").write_text(COMPOSE, "utf-8")
    found = _report(top, "docker compose run vllm\n")
    message, file, line, column, details = found["SG313"]
    assert "`${IMAGE}`" in str(message)
    assert (file, line, column) == ("compose.yaml", 3, 12)
    assert "not pinned" in str(details)
    # set by the .env beside it: the image is the repository's, the service is read
    top = tmp_path / "dotenv"
    top.mkdir()
    (top / "compose.yaml").write_text(COMPOSE, "utf-8")
    (top / ".env").write_text("IMAGE=vllm/vllm-openai:v0.26.0\n", "utf-8")
    found = _report(top, "docker compose run vllm\n")
    assert "SG313" not in found and "SG312" not in found
