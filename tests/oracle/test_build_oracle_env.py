"""scripts/build_oracle_env.sh keeps each SGLang environment by release and by what it
installs (issue 27): TARGET/sglang-X-KEY, KEY a hash of its pins, reached by the link
TARGET/sglang-X. Built once, it is reused: the script does not run an interpreter again
(PYTHON=false here: any build step would fail). A transformers environment is reused by
its pins too, whatever its marker adds after them (a requirement left out, a reuse)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_oracle_env.sh"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("sha256sum") is None,
    reason="needs bash and sha256sum",
)


def _pins(version: str, target: Path) -> str:
    """The pins the script asks for an SGLang release, as the script itself spells them
    (its definitions run, its builds not)."""
    text = SCRIPT.read_text(encoding="utf-8")
    definitions = text[: text.index("\nfor env in ")]
    probe = (
        definitions
        + f'\nprintf "%s" "$TORCH_PIN transformers==5.19.0 tokenizers==0.23.2 sglang=={version} '
        '${SGLANG_EXTRAS[*]}"\n'
    )
    out = subprocess.run(
        ["bash", "-c", probe, "build", str(target)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return out.stdout


def _run(target: Path, *envs: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": "false"}
    return subprocess.run(
        ["bash", str(SCRIPT), str(target), *envs],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip


def test_a_built_sglang_environment_is_kept_by_its_pins_and_reused(tmp_path: Path) -> None:
    pins = _pins("0.5.23", tmp_path)
    # an environment built before environments were keyed: its marker holds the pins
    # and then the release's own pins, on one line
    old = tmp_path / "sglang-0.5.23"
    (old / "bin").mkdir(parents=True)
    (old / ".oracle-built").write_text(f"{pins} transformers==5.3.0 xgrammar==0.1.32\n")
    for _ in range(2):
        run = _run(tmp_path, "sglang-0.5.23")
        assert run.returncode == 0, run.stderr
        assert "already built" in run.stdout
    link = tmp_path / "sglang-0.5.23"
    assert link.is_symlink()
    name = os.readlink(link)
    assert re.fullmatch(r"sglang-0\.5\.23-[0-9a-f]{12}", name), name  # relative: no path
    kept = tmp_path / name
    assert (kept / ".oracle-built").read_text() == pins + "\n"
    assert (kept / ".oracle-own").read_text() == "transformers==5.3.0 xgrammar==0.1.32\n"


def test_changed_pins_build_beside_the_kept_environment(tmp_path: Path) -> None:
    pins = _pins("0.5.23", tmp_path)
    stale = tmp_path / "sglang-0.5.23-000000000000"
    (stale / "bin").mkdir(parents=True)
    (stale / ".oracle-built").write_text(pins.replace("sglang==", "sglang=~") + "\n")
    (tmp_path / "sglang-0.5.23").symlink_to(stale.name)
    run = _run(tmp_path, "sglang-0.5.23")
    # not reused: a build starts (and fails here, PYTHON=false, at its first step); the
    # kept folder stays as it was, and the link still names it (it moves only to a
    # finished build)
    assert run.returncode != 0
    assert "already built" not in run.stdout
    assert (stale / ".oracle-built").read_text().startswith("torch==")
    assert os.readlink(tmp_path / "sglang-0.5.23") == stale.name


@pytest.mark.parametrize(
    "marker",
    [
        "torch==2.13.0+cpu transformers==5.19.0",
        # a release whose pin of kernels the index does not serve (5.25.0: kernels>=0.19.1)
        # is built with it left out, and the marker says so
        "torch==2.13.0+cpu transformers==5.25.0 (kernels left out)",
        "torch==2.13.0+cpu transformers==4.46.0 (reused: transformers==4.48.0)",
    ],
)
def test_a_built_transformers_environment_is_reused(tmp_path: Path, marker: str) -> None:
    version = marker.split("transformers==", maxsplit=1)[1].split(maxsplit=1)[0]
    env = tmp_path / f"transformers-{version}"
    (env / "bin").mkdir(parents=True)
    (env / ".oracle-built").write_text(marker + "\n")
    run = _run(tmp_path, f"transformers-{version}")
    assert run.returncode == 0, run.stderr
    assert "already built" in run.stdout


def test_a_transformers_environment_of_other_pins_is_rebuilt(tmp_path: Path) -> None:
    env = tmp_path / "transformers-5.25.0"
    (env / "bin").mkdir(parents=True)
    (env / ".oracle-built").write_text("torch==2.13.0+cpu transformers==5.19.0\n")
    run = _run(tmp_path, "transformers-5.25.0")
    assert run.returncode != 0  # a build starts and fails at its first step (PYTHON=false)
    assert "already built" not in run.stdout
