"""Path errors reveal nothing outside the repository (hostile review defect 7), and
validators match whole texts (defect 6).

7: "leaves the repository" against "does not exist" told a pull request which files
exist on the runner. A path is now refused by where it leads, judged before anything
outside is asked about, with one message whatever exists there: ``..`` chains, an
in-repository symlink to a file or a folder outside, a Compose volume mapping ``../..``.

6: Python's ``$`` matches before a trailing line break, so ``^…$`` with ``match`` let
``"0.32.0\\n"`` through ``measure``'s version check, and the claims schema's patterns
(digests, dates, histogram keys) let it through ``check``. Every such validator now
matches the whole text (``fullmatch``, or ``$(?!\\n)`` in the schema, which is the end
of the text in ECMA-262 and in Python alike).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from specgate.core.paths import OUTSIDE, PathEscape, PathProblem, confined

from .conftest import InProcess

ROOT = Path(__file__).resolve().parents[2]

CLAIMS = """\
version: 1
deployments:
  - name: d1
    model: {{name: x}}
    speculation: {{enabled: true, engine: vllm, engine_config: {config}}}
    evidence: {{accept_length: 2.0, cache_coherence_eval: true}}
"""


@pytest.fixture
def runner(tmp_path: Path) -> tuple[Path, Path]:
    """A repository and, beside it, an outside folder holding one existing file."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("speculative_config: {}\n", "utf-8")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy").mkdir()
    return repo, outside


def _error(sg: InProcess, repo: Path, config: str) -> str:
    (repo / "c.specgate.yaml").write_text(CLAIMS.format(config=config), "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], repo)
    assert result.code == 2, result.out
    return str(result.json()["files"][0]["error"])


def _probe(error: str, name: str) -> str:
    """The message with the probed name taken out: what the PR author can compare."""
    return error.replace(name, "NAME")


@pytest.mark.parametrize(
    ("existing", "missing"),
    [
        ("../outside/secret.yaml", "../outside/nope.yaml"),
        ("deploy/../../outside/secret.yaml", "deploy/../../outside/nope.yaml"),
        ("../../../../../../../../etc/passwd", "../../../../../../../../etc/nonexistent-zz"),
        ("../outside", "../nowhere"),  # a folder outside, or nothing
    ],
)
def test_a_dotdot_chain_gets_one_message(
    sg: InProcess, runner: tuple[Path, Path], existing: str, missing: str
) -> None:
    repo, _ = runner
    assert _probe(_error(sg, repo, existing), existing) == _probe(
        _error(sg, repo, missing), missing
    )
    assert "leaves the repository" in _error(sg, repo, missing)


def test_symlinks_out_get_one_message(sg: InProcess, runner: tuple[Path, Path]) -> None:
    repo, outside = runner
    (repo / "deploy" / "file-link.yaml").symlink_to(outside / "secret.yaml")
    (repo / "deploy" / "dangling.yaml").symlink_to(outside / "nope.yaml")
    (repo / "deploy" / "dir-link").symlink_to(outside, target_is_directory=True)
    errors = {
        _probe(_error(sg, repo, name), name)
        for name in (
            "deploy/file-link.yaml",
            "deploy/dangling.yaml",
            "deploy/dir-link/secret.yaml",
            "deploy/dir-link/nope.yaml",
            "deploy/dir-link/../outside/secret.yaml",
        )
    }
    assert len(errors) == 1, errors
    # inside the repository, "does not exist" is still said (it reveals nothing outside)
    assert "does not exist" in _error(sg, repo, "deploy/absent.yaml")


@pytest.mark.parametrize(
    "volume", ["../..:/cfg", "./x/../../..:/cfg", "..:/cfg"]
)
def test_compose_volumes_out_get_one_message(
    sg: InProcess, runner: tuple[Path, Path], volume: str
) -> None:
    repo, _ = runner
    errors = set()
    for name in ("outside/secret.yaml", "outside/nope.yaml"):
        compose = (
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n"
            f"    volumes: [\"{volume}\"]\n"
            f"    command: [\"vllm\", \"serve\", \"m\", \"--config\", \"/cfg/{name}\"]\n"
        )
        (repo / "deploy" / "compose.yaml").write_text(compose, "utf-8")
        errors.add(_probe(_error(sg, repo, "deploy/compose.yaml"), name))
    assert len(errors) == 1, errors


def test_confined_decides_before_it_looks(runner: tuple[Path, Path]) -> None:
    repo, _ = runner
    for name in ("secret.yaml", "nope.yaml"):
        for path in (repo / ".." / "outside" / name, repo / "deploy" / ".." / ".." / name):
            with pytest.raises(PathEscape) as caught:
                confined(path, top=repo)
            assert str(caught.value) == OUTSIDE
    (repo / "deploy" / "in.yaml").write_text("x: 1\n", "utf-8")
    assert confined(repo / "deploy" / ".." / "deploy" / "in.yaml", top=repo) == (
        repo / "deploy" / "in.yaml"
    ).resolve()
    with pytest.raises(PathProblem, match="no such file"):
        confined(repo / "deploy" / "absent.yaml", top=repo)


# --- 6: validators match whole texts ---------------------------------------------------


@pytest.mark.parametrize("text", ["0.32.0\n", "0.32.0\r\n", "0.32.0 ", "\n0.32.0", "0" * 65])
def test_measure_refuses_a_version_with_a_line_break(text: str) -> None:
    from specgate.measure import engine_info

    assert engine_info._VERSION.fullmatch("0.32.0")
    assert not engine_info._VERSION.fullmatch(text)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("engine_version", "0.32.0\n"),
        ("measured_at", "2025-01-01\n"),
        ("measured_at", "2025-01-01T10:00:00Z\n"),
        ("config_digest", "sha256:0123456789abcdef\n"),
        ("chat_template", "sha256:0123456789abcdef\n"),
    ],
)
def test_check_refuses_provenance_with_a_trailing_line_break(
    sg: InProcess, tmp_path: Path, key: str, value: str
) -> None:
    text = (
        "version: 1\ndeployments:\n  - name: d\n    speculation: {enabled: false}\n"
        f"    evidence:\n      provenance: {{{key}: {json.dumps(value)}}}\n"
    )
    (tmp_path / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], tmp_path)
    assert result.code == 1
    findings = result.json()["files"][0]["deployments"][0]["findings"]
    assert [(f["code"], f["line"]) for f in findings if key in f["message"]] == [("SG001", 6)]
    # the same value without the line break is accepted by the schema
    (tmp_path / "c.specgate.yaml").write_text(text.replace("\\n", ""), "utf-8")
    result = sg(["check", "--format", "json", "c.specgate.yaml"], tmp_path)
    findings = result.json()["files"][0]["deployments"][0]["findings"]
    assert not [f for f in findings if f["code"] == "SG001"], findings


def test_a_histogram_key_with_a_line_break_is_refused(sg: InProcess, tmp_path: Path) -> None:
    text = (
        "version: 1\ndeployments:\n  - name: d\n    speculation: {enabled: true, "
        "draft_length: 3, draft_depth_ratio: 0.05}\n    evidence:\n      metrics: "
        '{format: histogram, histogram: {"3\\n": 5, "3": 4, "0": 1}}\n'
    )
    (tmp_path / "c.specgate.yaml").write_text(text, "utf-8")
    result = sg(["check", "c.specgate.yaml"], tmp_path)
    assert result.code == 1 and "SG001" in result.out


def test_no_dollar_anchor_validates_in_the_schema() -> None:
    """Every pattern of the claims schema that ends the text ends it for Python too."""
    schema = (ROOT / "src/specgate/data/claims-v1.schema.json").read_text("utf-8")
    patterns = [json.loads(f'"{p}"') for p in re.findall(r'"pattern": "((?:[^"\\]|\\.)*)"', schema)]
    assert patterns
    for pattern in patterns:
        if "$" in pattern:
            assert pattern.endswith("$(?!\\n)"), pattern
