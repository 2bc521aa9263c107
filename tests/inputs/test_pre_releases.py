"""A pre-release pins no release (docs/engines.md#pre-releases).

PEP 440 ("Pre-releases", "Summary of permitted suffixes and relative ordering") orders a
candidate before its release and after the release before it: 0.5.22 < 0.5.23rc0 <
0.5.23. A candidate holds some but not all of its release's changes, so it is read between
the listed release before it and its release, as a requirement range is: a refusal fails
only where it holds at both, and one whose lifetime starts or ends at the release warns.
The neighbours come from the engines' own ``releases`` lists (PyPI's release pages, in
``specgate/data/engines/ENGINE.json``): vLLM 0.10.2 → 0.11.0 → 0.11.1; 0.8.2 → 0.8.3;
0.8.5.post1 → 0.9.0; SGLang 0.5.22 → 0.5.23.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version as PyVersion
from tests.integration.test_engine_checks import Run, check, found  # noqa: F401

from specgate.inputs.pep440 import release_of
from specgate.inputs.version import detect_version


@pytest.mark.parametrize(
    ("text", "release"),
    [
        ("v0.11.0rc1", "0.11.0"),  # packaging reads a leading v (PEP 440 "Preceding v")
        ("0.5.23rc0", "0.5.23"),
        ("0.34.0rc2", "0.34.0"),
        ("1.2.0rc6", "1.2.0"),
        ("0.5.23c1", "0.5.23"),  # c is rc spelled otherwise (PEP 440 normalization)
        ("0.11.0.dev0", "0.11.0"),  # a development release comes before its release too
        ("1.0.0rc4.post1", "1.0.0"),  # a post-release of a candidate is still a candidate
        ("0.4.4.post1.dev0", "0.4.4.post1"),  # a development release of a post-release
        ("0.5.23", None),
        ("0.4.4.post4", None),
        ("v0.5.3rc1-cu126", None),  # not PEP 440: the tag's release part is given instead
        ("1!0.5rc1", None),  # an epoch: no engine numbers its releases so
    ],
)
def test_release_of_a_pre_release(text: str, release: str | None) -> None:
    assert release_of(text) == release
    if release is not None:  # PEP 440's own order, asked of packaging
        assert PyVersion(text) < PyVersion(release)


@pytest.mark.parametrize(
    ("engine", "stated", "bounds"),
    [
        # vLLM's releases: 0.10.2, 0.11.0, 0.11.1
        ("vllm", "0.11.0rc1", ((0, 10, 2), (0, 11, 1), (0, 11, 0))),
        # SGLang's: 0.5.22, 0.5.23 (the last listed: nothing after it)
        ("sglang", "0.5.23rc0", ((0, 5, 22), None, (0, 5, 23))),
        # TensorRT-LLM lists no releases: the release before 1.2.0 is not known
        ("trtllm", "1.2.0rc6", (None, None, (1, 2, 0))),
    ],
)
def test_a_stated_pre_release_is_read_between_releases(
    engine: str, stated: str, bounds: object
) -> None:
    found = detect_version(engine, stated, None, None)
    assert (found.version, found.text, found.source, found.bounds) == (
        None, stated, "claims", bounds
    )


def test_a_candidate_of_a_release_newer_than_known_is_read_as_that_release() -> None:
    # 0.35.0 is newer than vLLM's newest known (0.34.0): read as a newer release is
    found = detect_version("vllm", "0.35.0rc1", None, None)
    assert (found.version, found.source) == ((0, 35, 0), "claims")


SERVE = "vllm serve m --speculative-model d --num-speculative-tokens 3\n"


def _files(where: str, version: str) -> dict[str, str]:
    pin = f'      engine_version: "{version}"\n' if where == "claims" else ""
    files = {
        "c.specgate.yaml": "version: 1\ndeployments:\n  - name: d\n    model:\n      name: m\n"
        "    speculation:\n      enabled: true\n"
        f"      engine: vllm\n{pin}      engine_config: serve.sh\n",
        "serve.sh": SERVE,
    }
    if where == "requirement":
        files["requirements.txt"] = f"vllm=={version}\n"
    if where == "image":
        files["serve.sh"] = f"docker run vllm/vllm-openai:v{version} --model m " + SERVE.split(
            " m ", 1
        )[1]
    return files


@pytest.mark.parametrize("where", ["claims", "requirement", "image"])
@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # --speculative-model is in vLLM 0.8.0 to 0.8.2 and gone from 0.8.3
        # (docs/engines.md#versions, vllm/engine/arg_utils.py in the PyPI wheels):
        # 0.9.0rc1 lies between 0.8.5.post1 and 0.9.0, both without it: it fails
        ("0.9.0rc1", "fail"),
        # 0.8.3rc1 lies between 0.8.2 (with it) and 0.8.3 (without): not known, a warning
        ("0.8.3rc1", "warn"),
        # the release itself is pinned, as before
        ("0.8.3", "fail"),
    ],
)
def test_a_removed_flag_at_a_candidate(
    check: Run,  # noqa: F811
    where: str,
    version: str,
    severity: str,
) -> None:
    _code, dep = check(_files(where, version))
    flagged = [s for s, _, m in found(dep, "SG310") if "--speculative-model" in m]
    assert flagged == [severity], found(dep, "SG310")
    engine = dep["inputs"]["engine"]
    assert engine["version_source"] == where
    assert engine["version"] == (version if "rc" not in version else None)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("uv.lock", 'version = 1\n\n[[package]]\nname = "sglang"\nversion = "0.5.23rc0"\n'),
        ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["sglang==0.5.23rc0"]\n'),
        ("requirements.txt", "sglang[all]==0.5.23rc0\n"),
    ],
)
def test_a_pinned_pre_release_in_the_project_files(
    tmp_path: Path, name: str, text: str
) -> None:
    # SGLang's releases: 0.5.22, 0.5.23 (the last listed)
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(text, "utf-8")
    (tmp_path / "serve.sh").write_text("python -m sglang.launch_server --model-path m\n", "utf-8")
    found = detect_version("sglang", None, "", tmp_path / "serve.sh")
    assert (found.version, found.text, found.source, found.bounds) == (
        None, "0.5.23rc0", "requirement", ((0, 5, 22), None, (0, 5, 23))
    )
