"""Engine versions (docs/engines.md#versions): stated, from an image tag in the config, from a
pinned requirement beside it, else the newest behaviour specgate knows; and readers that
follow the version (removals, defaults, rewrites)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specgate.cli.main import main
from specgate.inputs.engines import read_engine_file
from specgate.inputs.version import detect_version, images_in, requirements_in


@pytest.mark.parametrize(
    ("engine", "text", "tags"),
    [
        # docs/engines.md#versions's examples, as they stand in compose files and manifests.
        ("vllm", "image: vllm/vllm-openai:v0.27.1\n", ["v0.27.1"]),
        ("vllm", "image: docker.io/vllm/vllm-openai:v0.10.1.1\n", ["v0.10.1.1"]),
        ("sglang", "    image: lmsysorg/sglang:v0.5.4-cu126\n", ["v0.5.4-cu126"]),
        ("trtllm", "FROM nvcr.io/nvidia/tensorrt-llm/release:1.2.0\n", ["1.2.0"]),
        ("llamacpp", "image: ghcr.io/ggml-org/llama.cpp:server-b7000\n", ["server-b7000"]),
        # Not a version: a moving tag, another registry's image of the same name part.
        ("vllm", "image: vllm/vllm-openai:latest\n", []),
        ("vllm", "image: myorg/vllm/vllm-openai-fork:v1.0\n", []),
    ],
)
def test_image_tags(engine: str, text: str, tags: list[str]) -> None:
    assert images_in(engine, text) == tags


def test_requirement_pins() -> None:
    text = "torch==2.6.0\nvllm==0.9.2  # serving\nsglang[all]==0.5.4.post1\nvllm>=0.8\n"
    assert requirements_in("vllm", text) == ["0.9.2"]
    assert requirements_in("sglang", text) == ["0.5.4.post1"]
    assert requirements_in("transformers", text) == []


def test_order_claims_image_requirement_newest(tmp_path: Path) -> None:
    config = tmp_path / "compose.yaml"
    config.write_text("image: vllm/vllm-openai:v0.9.1\n", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("vllm==0.8.5\n", encoding="utf-8")
    text = config.read_text(encoding="utf-8")
    stated = detect_version("vllm", "0.10.0", text, config)
    assert (stated.text, stated.version, stated.source) == ("0.10.0", (0, 10, 0), "claims")
    image = detect_version("vllm", None, text, config)
    assert (image.text, image.source) == ("v0.9.1", "image")
    pinned = detect_version("vllm", None, "no image here", config)
    assert (pinned.text, pinned.source) == ("0.8.5", "requirement")
    unknown = detect_version("vllm", None, "no image here", tmp_path / "sub" / "x.yaml")
    assert (unknown.version, unknown.source) == (None, "assumed-newest")
    assert unknown.note is not None
    assert "newest" in unknown.note


def test_two_image_tags_are_not_a_guess() -> None:
    text = "a: vllm/vllm-openai:v0.9.1\nb: vllm/vllm-openai:v0.10.0\n"
    found = detect_version("vllm", None, text, None)
    assert (found.version, found.source) == (None, "assumed-newest")
    assert found.note is not None
    assert "v0.9.1, v0.10.0" in found.note


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")


def test_llamacpp_removed_flags_follow_the_build(tmp_path: Path) -> None:
    command = "llama-server -m t.gguf -md d.gguf --draft-max 8\n"
    _write(tmp_path, {"new.txt": command})
    newest = read_engine_file(tmp_path / "new.txt", "new.txt")
    assert [i.code for i in newest.issues] == ["SG310"]
    assert "--spec-draft-n-max" in newest.issues[0].message
    assert newest.draft_length == 8  # still read: the theory judges what was meant
    old = read_engine_file(tmp_path / "new.txt", "new.txt", engine_version="b4295")
    assert old.issues == ()
    assert (old.version, old.version_source) == ("b4295", "claims")
    # That build's defaults: p-min 0.9f (common/common.h:166 at 26a8406b = b4295)
    # makes D = 8 a maximum.
    assert old.draft_length_is_max


def test_vllm_v0_flags_follow_the_version(tmp_path: Path) -> None:
    command = (
        "python -m vllm.entrypoints.openai.api_server --model m --speculative-model d "
        "--num-speculative-tokens 5\n"
    )
    _write(tmp_path, {"serve.sh": command})
    unknown = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    # Unknown version: the newest vLLM (F12), which refuses both V0 flags; the message
    # says the version was assumed and how to pin it. The values are still read.
    assert [i.code for i in unknown.issues] == ["SG310", "SG310"]
    # Contract change: the version reasoning is in details
    assert all("version unknown" in i.details for i in unknown.issues)
    assert all("speculation.engine_version" in i.details for i in unknown.issues)
    assert (unknown.mechanism, unknown.draft_length) == ("draft_model", 5)
    newer = read_engine_file(tmp_path / "serve.sh", "serve.sh", engine_version="0.9.2")
    assert sorted(i.code for i in newer.issues) == ["SG310", "SG310"]
    older = read_engine_file(tmp_path / "serve.sh", "serve.sh", engine_version="0.6.3")
    assert older.issues == ()


def test_sglang_spec_v2_from_the_image_tag(tmp_path: Path) -> None:
    compose = (
        "services:\n"
        "  sglang:\n"
        "    image: lmsysorg/sglang:v0.5.8\n"
        "    environment:\n"
        "      SGLANG_ENABLE_SPEC_V2: 'True'\n"
        "    command: python3 -m sglang.launch_server --model-path m "
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path d "
        "--speculative-num-steps 5 --speculative-eagle-topk 4 --speculative-num-draft-tokens 16\n"
    )
    _write(tmp_path, {"compose.yaml": compose})
    c = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    # docs/engines.md#versions: version is the engine's own version string, the tag stays in
    # version_raw
    assert (c.version, c.version_raw, c.version_source) == ("0.5.8", "v0.5.8", "image")
    # 0.5.7-0.5.10 refuse spec v2 with topk > 1 (server_args.py of the wheels; issue 27,
    # Contract change: the tag was v0.5.3, a release with no spec v2)
    assert [i.code for i in c.issues] == ["SG307"]


def test_json_report_names_version_and_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(
        tmp_path,
        {
            ".git/HEAD": "",
            "serving/serve.txt": "vllm serve Qwen/Qwen3-8B --spec-method ngram --spec-tokens 4\n",
            "serving/requirements.txt": "vllm==0.11.0\n",
            "a.specgate.yaml": (
                "version: 1\ndeployments:\n  - name: a\n    speculation:\n"
                "      enabled: false\n      engine_config: serving/serve.txt\n"
            ),
            "b.specgate.yaml": (
                "version: 1\ndeployments:\n  - name: b\n    speculation:\n"
                "      enabled: false\n      engine_config: serving/serve.txt\n"
                "      engine_version: 0.12.1\n"
            ),
        },
    )
    monkeypatch.chdir(tmp_path)
    for name, version, source in (
        ("a.specgate.yaml", "0.11.0", "requirement"),
        ("b.specgate.yaml", "0.12.1", "claims"),
    ):
        main(["check", "--format", "json", name])
        report = json.loads(capsys.readouterr().out)
        engine = report["files"][0]["deployments"][0]["inputs"]["engine"]
        assert (engine["version"], engine["version_source"]) == (version, source)
        assert (engine["mechanism"], engine["draft_length"]) == ("ngram", 4)


def test_requirements_symlinked_out_of_the_folder_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("vllm==0.9.2\n", encoding="utf-8")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "requirements.txt").symlink_to(outside)
    found = detect_version("vllm", None, "", tmp_path / "repo" / "serve.yaml")
    assert found.source == "assumed-newest"
