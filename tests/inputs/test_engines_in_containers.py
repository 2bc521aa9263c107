"""Engine configurations launched in containers: a runner command (``docker run …
IMAGE CMD``) and a Compose service / Kubernetes container whose ``command``/``args``
follow the image's ENTRYPOINT.

Expected values: the words the container runs by Docker's, Compose's and Kubernetes'
rules (ENTRYPOINT from the image's Dockerfile: vllm-project/vllm docker/Dockerfile
``ENTRYPOINT ["vllm", "serve"]``; TensorRT-LLM's release stage sets none, so the command
is the program), and the settings written in those words.
"""

from __future__ import annotations

from pathlib import Path

from specgate.inputs.engines import read_engine_file
from specgate.inputs.engines._source import commands_of
from specgate.inputs.engines.in_container import in_container
from specgate.load.document import Document

SPEC = (
    "speculative_config:\n  decoding_type: Eagle\n  max_draft_len: 3\n"
    "  speculative_model_dir: /models/eagle\n"
)
EAGLE3 = '{"method": "eagle3", "model": "/models/eagle", "num_speculative_tokens": 4}'


def test_docker_run_trtllm_serve_follows_its_options_file(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "serve.sh").write_text(
        "docker run --gpus all -v /models:/models -e HF_TOKEN -p 8000:8000 --rm \\\n"
        "  nvcr.io/nvidia/tensorrt-llm/release:1.2.0 \\\n"
        "  trtllm-serve /models/llama --extra_llm_api_options spec.yaml\n"
    )
    config = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    assert (config.engine, config.mechanism, config.draft_length) == ("trtllm", "eagle3", 3)
    assert config.target_model == "/models/llama"


def test_docker_run_vllm_image_runs_vllm_serve(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text(
        "docker run --runtime nvidia --gpus all -p 8000:8000 --ipc=host "
        f"vllm/vllm-openai:v0.26.0 /models/llama --speculative-config '{EAGLE3}'\n"
    )
    config = read_engine_file(tmp_path / "serve.sh", "serve.sh")
    assert (config.engine, config.mechanism, config.draft_length) == ("vllm", "eagle3", 4)
    assert config.target_model == "/models/llama"


def test_compose_command_follows_the_image_entrypoint(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n"
        f"    command: [\"/models/llama\", \"--speculative-config\", '{EAGLE3}']\n"
    )
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert (config.engine, config.mechanism, config.draft_length) == ("vllm", "eagle3", 4)
    assert config.target_model == "/models/llama"


def test_kubernetes_args_follow_the_image_entrypoint(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(
        "spec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:v0.26.0\n"
        f"      args: [\"/models/llama\", \"--speculative-config\", '{EAGLE3}']\n"
    )
    config = read_engine_file(tmp_path / "deploy.yaml", "deploy.yaml")
    assert (config.engine, config.mechanism, config.draft_length) == ("vllm", "eagle3", 4)


def test_container_words_keep_their_places() -> None:
    text = "docker run -e A=1 --rm \\\n  vllm/vllm-openai:v0.26.0 \\\n  /m --port 1\n"
    doc = Document(file="serve.sh", data=text)  # a .sh file is read as its text
    runner = commands_of(doc.data, doc, (), text)[0]
    source = in_container(runner)
    assert source.command.argv == ("vllm", "serve", "/m", "--port", "1")
    # vllm and serve are placed at the image word (index 5), the rest where written.
    image, *rest = runner.spans[5:]
    assert source.spans == (image, image, *rest)
    # -e A=1 is the container's environment (docker/cli opts.go "env").
    assert source.command.env == {"A": "1"}
