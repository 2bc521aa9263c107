"""``speculation.engine_version`` as a user writes it (F13, F14; docs/engines.md#versions).

Not a version ⇒ SG001 at its line; an unquoted YAML number ⇒ SG001 telling to quote it;
a version newer than the newest specgate knows ⇒ read as that newest, and the report's
``inputs.engine.notes`` says so. The engine config is a ``vllm serve`` command with the
V0 flags removed in vLLM 0.8.3 (data/engines/vllm.json), so the behaviour applied shows
in SG310's message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specgate.cli.main import main
from specgate.inputs.engines import read_engine_file
from specgate.inputs.knowledge import knowledge

SERVE = (
    "vllm serve meta-llama/Llama-3.1-8B-Instruct "
    "--speculative-model yuhuili/EAGLE-LLaMA3-Instruct-8B --num-speculative-tokens 4\n"
)


def run(
    tmp_path: Path,
    version_line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, dict[str, Any]]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving/v0plain.txt").write_text(SERVE, encoding="utf-8")
    (tmp_path / "c.specgate.yaml").write_text(
        "version: 1\ndeployments:\n  - name: d\n    speculation:\n      enabled: true\n"
        "      engine: vllm\n      engine_config: serving/v0plain.txt\n"
        f"      {version_line}\n"
        # speculation on (off over a config that speculates is SG301's), with evidence
        "      draft_depth_ratio: 0\n"
        "    evidence: {accept_length: 2, cache_coherence_eval: true}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--format", "json", "c.specgate.yaml"])
    report = json.loads(capsys.readouterr().out)
    (file,) = report["files"]
    (dep,) = file["deployments"]
    return code, dep


@pytest.mark.parametrize("written", ["banana", "'latest'", "''"])
def test_a_version_that_is_not_one_is_sg001_at_its_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    written: str,
) -> None:
    code, dep = run(tmp_path, f"engine_version: {written}", monkeypatch, capsys)
    assert code == 1
    (finding,) = [f for f in dep["findings"] if f["code"] == "SG001"]
    assert finding["line"] == 8
    assert "engine_version" in finding["message"]


@pytest.mark.parametrize("written", ["0.10", "0.9", "7000"])
def test_an_unquoted_number_says_to_quote_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    written: str,
) -> None:
    code, dep = run(tmp_path, f"engine_version: {written}", monkeypatch, capsys)
    assert code == 1
    (finding,) = [f for f in dep["findings"] if f["code"] == "SG001"]
    assert finding["line"] == 8
    message = finding["message"]
    assert "quote it as written" in message
    assert "got 0.1" not in message  # the number YAML made of 0.10 is not what was written


def test_a_quoted_version_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, dep = run(tmp_path, "engine_version: '0.7.3'", monkeypatch, capsys)
    assert code == 0
    engine = dep["inputs"]["engine"]
    assert (engine["version"], engine["version_source"]) == ("0.7.3", "claims")
    assert [f["code"] for f in dep["findings"] if f["code"] == "SG310"] == []


def test_a_version_newer_than_the_newest_known_is_read_as_it_and_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    newest = knowledge("vllm").newest_text
    code, dep = run(tmp_path, "engine_version: '9.0.0'", monkeypatch, capsys)
    assert code == 1  # the newest vLLM has neither V0 flag: 2 × SG310
    assert sorted(f["code"] for f in dep["findings"] if f["code"] == "SG310") == ["SG310"] * 2
    engine = dep["inputs"]["engine"]
    assert (engine["version"], engine["version_source"]) == ("9.0.0", "claims")
    assert (
        f"vllm 9.0.0 is newer than the newest version specgate knows ({newest}): "
        f"read with {newest}'s behaviour"
    ) in engine["notes"]


def test_an_image_tag_newer_than_the_newest_known_is_noted(tmp_path: Path) -> None:
    compose = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v99.1.0\n    command: >\n"
        "      --model m --speculative-config '{\"method\": \"ngram\", "
        '"num_speculative_tokens": 4}\'\n'
    )
    (tmp_path / "compose.yaml").write_text(compose, encoding="utf-8")
    c = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert (c.version, c.version_raw, c.version_source) == ("99.1.0", "v99.1.0", "image")
    assert any("v99.1.0 is newer than the newest version" in n for n in c.notes)
    known = read_engine_file(tmp_path / "compose.yaml", "compose.yaml", engine_version="0.11.0")
    assert not any("newer than the newest" in n for n in known.notes)


def test_latest_image_tag_is_the_newest_and_v0_flags_are_removed(tmp_path: Path) -> None:
    # F12's report: a compose file on vllm/vllm-openai:latest with the V0 flags.
    compose = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:latest\n    command: >\n"
        "      --model meta-llama/Llama-3.1-8B-Instruct\n"
        "      --speculative-model yuhuili/EAGLE-LLaMA3-Instruct-8B\n"
        "      --num-speculative-tokens 4\n"
    )
    (tmp_path / "compose4.yaml").write_text(compose, encoding="utf-8")
    c = read_engine_file(tmp_path / "compose4.yaml", "compose4.yaml")
    assert (c.version, c.version_source) == (None, "assumed-newest")
    removed = sorted((c.spans[i.field].line, i.field) for i in c.issues if i.code == "SG310")
    assert removed == [(6, "setting:--speculative-model"), (7, "setting:--num-speculative-tokens")]
    assert (c.mechanism, c.draft_length) == ("eagle", 4)  # still read


@pytest.mark.parametrize(
    ("engine", "text", "pinned", "oldest"),
    [
        # real-r4 defect 5: vLLM 0.10.1 (before PR #24243 vLLM refused EAGLE3 on a
        # minicpm target: eagle3_target_supported = ["llama", "qwen"]); specgate's vLLM
        # checks were read from 0.22.1 on (data/engines/vllm.json oldest_read; contract
        # change: 0.27.1 before vLLM 0.22.1 answered the corpus, tests/data/engine_oracle/)
        ("vllm",
         "vllm serve m --speculative-config '{\"method\": \"ngram\", "
         "\"num_speculative_tokens\": 4, \"prompt_lookup_max\": 3}'\n", "0.10.1", "0.22.1"),
        # Tencent/AngelSlim #9 ran SGLang 0.4.9.post2; SGLang's data was read at 0.5.23
        ("sglang",
         "python3 -m sglang.launch_server --model-path m --speculative-algorithm NGRAM\n",
         "0.4.9.post2", "0.5.23"),
        # a llama.cpp build older than the oldest check's build (b3281, seen_in)
        ("llamacpp", "llama-server -m t.gguf -md d.gguf --draft 8\n", "b2000",
         "b3281"),
    ],
)
def test_a_version_older_than_the_data_is_noted(
    tmp_path: Path, engine: str, text: str, pinned: str, oldest: str
) -> None:
    file = "serve.txt"
    (tmp_path / file).write_text(text, encoding="utf-8")
    c = read_engine_file(tmp_path / file, file, engine=engine, engine_version=pinned)
    name = knowledge(engine).display_name
    newest = knowledge(engine).newest_text
    # Contract change (newcomer defect 8): "read at as a whole (0.5.23 to 0.5.23)" named
    # one release twice; one release is named once, a range as "X to Y"
    read = oldest if oldest == newest else f"{oldest} to {newest}"
    wanted = (
        f"{name} {pinned} is older than the releases specgate's engine data was read "
        f"from ({read}): what that release refuses is not checked"
    )
    assert any(n.startswith(wanted) for n in c.notes), c.notes
    assert not any("0.5.23 to 0.5.23" in n for n in c.notes)
    # at the oldest version read, nothing of the kind
    at = read_engine_file(tmp_path / file, file, engine=engine, engine_version=oldest)
    assert not any("is older than the releases" in n for n in at.notes)
