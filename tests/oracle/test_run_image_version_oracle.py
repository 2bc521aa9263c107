"""The engine version of a ``docker``/``podman``/``nerdctl run`` line whose image
reference holds a shell variable (``release:$TAG``), against bash.

The oracle is bash: each script runs under ``bash`` with stub ``docker``, ``podman``
and ``nerdctl`` programs on ``PATH`` that print the argv they received, so the image
word is what bash expands it to. specgate's version for the script must equal its
version for the same script with that word written literally (docs/engines.md#versions:
the image of a run line is read as the shell expands it), for every engine and for a
command that keeps its speculative configuration in an options file
(``trtllm-serve --extra_llm_api_options``, ``vllm serve --config``) as well as inline.
Where bash gives different images in different runs (``TAG`` chosen by ``DEBUG``), or
the variable is not set in the script, the version must not be settled
(``assumed-newest``) or the line not read, never one of the two.

The pinned versions are also written by hand: ``nvcr.io/nvidia/tensorrt-llm/release:1.0.0``
pins TensorRT-LLM 1.0.0, ``vllm/vllm-openai:v0.10.0`` vLLM 0.10.0 (the version pattern of
``image-entrypoints.json``), ``ghcr.io/ggml-org/llama.cpp:server-cuda-b7000`` b7000.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_file

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

STUB = """#!/usr/bin/python3 -S
import json, sys
print(json.dumps(sys.argv[1:]))
"""
TRT_SPEC = (
    "speculative_config:\n  decoding_type: Eagle\n  max_draft_len: 3\n"
    "  speculative_model_dir: /models/eagle\n"
)
VLLM_SPEC = (
    'speculative-config: {"method": "eagle3", "model": "/models/eagle", '
    '"num_speculative_tokens": 4}\n'
)
EAGLE3 = '\'{"method": "eagle3", "model": "/models/eagle", "num_speculative_tokens": 4}\''
TRT = "nvcr.io/nvidia/tensorrt-llm/release"
# (engine, image before the variable, tag, command after the image, version by hand)
CASES = [
    ("trtllm", f"{TRT}:", "1.2.0",
     "trtllm-serve $MODEL --extra_llm_api_options /cfg/spec.yaml", "1.2.0"),
    ("trtllm", f"{TRT}:", "1.0.0",
     "trtllm-serve $MODEL --extra_llm_api_options /cfg/spec.yaml", "1.0.0"),
    ("vllm", "vllm/vllm-openai:", "v0.10.0", "$MODEL --config /cfg/v.yaml", "0.10.0"),
    ("vllm", "vllm/vllm-openai:", "v0.10.0", f"$MODEL --speculative-config {EAGLE3}", "0.10.0"),
    ("llamacpp", "ghcr.io/ggml-org/llama.cpp:server-cuda-", "b7000",
     "-m /m.gguf -md /d.gguf --draft-max 6", "b7000"),
]
RUNNERS = ["docker", "podman", "nerdctl"]
#: how the image reference spells the variable (bash expands each the same)
SPELLINGS = ["$TAG", "${TAG}", '"$TAG"']


def _project(folder: Path) -> Path:
    (folder / "cfg").mkdir()
    (folder / "cfg" / "spec.yaml").write_text(TRT_SPEC)
    (folder / "cfg" / "v.yaml").write_text(VLLM_SPEC)
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    for runner in RUNNERS:
        (bin_dir / runner).write_text(STUB)
        (bin_dir / runner).chmod(0o755)
    return bin_dir


def _bash_image(script: Path, bin_dir: Path, prefix: str, env: dict[str, str]) -> str:
    """The image word bash passes to the runner (the word starting with ``prefix``'s
    repository)."""
    assert BASH is not None
    done = subprocess.run(
        [BASH, script.name], cwd=script.parent, capture_output=True, text=True, timeout=30,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", **env}, check=True,
    )
    argv = json.loads(done.stdout.strip().splitlines()[-1])
    repository = prefix.split(":", maxsplit=1)[0]
    return next(word for word in argv if word.startswith(repository + ":"))


def _script(runner: str, image: str, command: str, head: str) -> str:
    return (
        f"{head}MODEL=meta-llama/Llama-3.1-8B-Instruct\n"
        f"{runner} run --gpus all -v $PWD/cfg:/cfg {image} {command}\n"
    )


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("case", CASES)
def test_the_image_is_read_as_bash_expands_it(
    tmp_path: Path, runner: str, spelling: str, case: tuple[str, ...]
) -> None:
    engine, prefix, tag, command, by_hand = case
    bin_dir = _project(tmp_path)
    script = tmp_path / "serve.sh"
    script.write_text(_script(runner, prefix + spelling, command, f"TAG={tag}\n"))
    image = _bash_image(script, bin_dir, prefix, {})
    assert image == prefix + tag  # bash's expansion
    literal = tmp_path / "literal.sh"
    literal.write_text(_script(runner, image, command, ""))
    config = read_engine_file(script, "serve.sh")
    oracle = read_engine_file(literal, "literal.sh")
    assert config.engine == oracle.engine == engine
    assert (config.version, config.version_source) == (oracle.version, oracle.version_source)
    assert config.version_source == "image"
    assert oracle.version is not None and config.version == oracle.version
    assert config.version == by_hand


@pytest.mark.parametrize("case", CASES[:3])
def test_a_tag_bash_sets_two_ways_is_not_pinned(tmp_path: Path, case: tuple[str, ...]) -> None:
    engine, prefix, tag, command, _ = case
    bin_dir = _project(tmp_path)
    script = tmp_path / "serve.sh"
    other = "9.9.9" if engine == "trtllm" else "v9.9.9"
    head = f'if [ -n "$DEBUG" ]; then TAG={other}; else TAG={tag}; fi\n'
    script.write_text(_script("docker", prefix + "$TAG", command, head))
    seen = {_bash_image(script, bin_dir, prefix, {}),
            _bash_image(script, bin_dir, prefix, {"DEBUG": "1"})}
    assert seen == {prefix + tag, prefix + other}  # bash runs two different images
    try:
        config = read_engine_file(script, "serve.sh")
    except InputError:
        return  # the run line is not read at all (its image is unsettled): agrees
    assert (config.version, config.version_source) == (None, "assumed-newest")


def test_a_tag_from_the_environment_is_not_pinned(tmp_path: Path) -> None:
    _project(tmp_path)
    script = tmp_path / "serve.sh"
    command = f"$MODEL --speculative-config {EAGLE3}"
    script.write_text(_script("docker", "vllm/vllm-openai:$TAG", command, ""))
    config = read_engine_file(script, "serve.sh")
    assert (config.version, config.version_source) == (None, "assumed-newest")
    assert "TAG" in " ".join(config.notes)
