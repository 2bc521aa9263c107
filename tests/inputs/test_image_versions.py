"""The engine version an image reference pins, through Compose's ``.env`` and
variables: worked out from the tag (the image's published tag scheme) and from
Compose's interpolation rules (compose-spec 12-interpolation.md; the project folder's
``.env``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs.containers import interpolate, read_dotenv
from specgate.inputs.version import detect_version


@pytest.mark.parametrize(
    ("engine", "text", "version"),
    [
        ("llamacpp", "image: ghcr.io/ggml-org/llama.cpp:server-cuda-b9733\n", (9733,)),
        ("llamacpp", "docker run ghcr.io/ggml-org/llama.cpp:server-b7000 -m m.gguf\n", (7000,)),
        ("vllm", 'IMAGE="${IMAGE:-vllm/vllm-openai:v0.27.1}"\ndocker run "$IMAGE"\n',
         (0, 27, 1)),
    ],
)
def test_tag_pins_the_version(engine: str, text: str, version: tuple[int, ...]) -> None:
    found = detect_version(engine, None, text, None)
    assert (found.source, found.version) == ("image", version)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # "latest" is said once: the tag shows why (new-user trial 2026-12-02, defect 8).
        # Contract change (trial 1, V4/F2): a bare digest and a tag of no release form say
        # why in the image family's own words (data/image-tags.json)
        ("image: vllm/vllm-openai:latest\n", "image not pinned: vllm/vllm-openai:latest)"),
        ("image: vllm/vllm-openai\n", "image not pinned: vllm/vllm-openai (no tag))"),
        (
            "image: vllm/vllm-openai@sha256:" + "a" * 64 + "\n",
            "image not pinned: vllm/vllm-openai@sha256:" + "a" * 64
            + " (a digest, which specgate maps to no release))",
        ),
        (
            "image: vllm/vllm-openai:nightly\n",
            "image not pinned: vllm/vllm-openai:nightly (not a release tag (vLLM's are vX.Y.Z;",
        ),
    ],
)
def test_not_pinned_says_why(text: str, why: str) -> None:
    found = detect_version("vllm", None, text, None)
    assert found.source == "assumed-newest" and found.version is None
    assert found.note is not None and why in found.note
    assert found.note.count("latest") == text.count("latest")


def test_compose_image_from_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("# images\nSGLANG_IMAGE=lmsysorg/sglang:v0.5.4-cu129\n")
    compose = tmp_path / "compose.yaml"
    text = "services:\n  sglang:\n    image: ${SGLANG_IMAGE}\n"
    compose.write_text(text)
    found = detect_version("sglang", None, text, compose)
    assert (found.source, found.version) == ("image", (0, 5, 4))


def test_compose_image_set_outside_the_repository(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    text = "services:\n  sglang:\n    image: lmsysorg/sglang:${TAG}\n"
    compose.write_text(text)
    found = detect_version("sglang", None, text, compose)
    assert found.source == "assumed-newest"
    assert found.note is not None and "$TAG" in found.note


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("a:${T}", {"T": "v1"}, ("a:v1", ())),
        ("a:$T", {"T": "v1"}, ("a:v1", ())),
        ("a:${T:-v2}", {}, ("a:v2", ())),
        ("a:${T:-v2}", {"T": ""}, ("a:v2", ())),  # :- also replaces an empty value
        ("a:${T-v2}", {"T": ""}, ("a:", ())),     # - replaces only an unset one
        ("a$$b", {}, ("a$b", ())),
        ("a:${T}", {}, (None, ("T",))),
        ("a:${T:?need T}", {"T": "x"}, (None, ("T",))),
    ],
)
def test_interpolation_as_compose(
    text: str, env: dict[str, str], expected: tuple[str | None, tuple[str, ...]]
) -> None:
    assert interpolate(text, env) == expected


def test_dotenv_lines() -> None:
    text = 'A=1\nexport B="two words"\n# C=3\nD=x # note\nE=\'$lit\'\nF=$A\n'
    assert read_dotenv(text) == {"A": "1", "B": "two words", "D": "x", "E": "$lit"}


# Compose runs each service from its own `image:` (compose-spec 05-services.md, image);
# production-stack renders each modelSpec as its own Deployment whose container image is
# that item's `repository:tag` (vllm-project/production-stack:
# helm/templates/deployment-vllm-multi.yaml, as recorded in specgate/data/helm-charts.json).
# So the version is the image of the service that runs the speculative configuration,
# never another service's in the same file (new-user trial, issue 24).
SPEC = '\'{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}\''
TWO_SERVICES = f"""services:
  chat:
    image: vllm/vllm-openai:{{chat}}
    command: ["meta-llama/Llama-3.1-8B-Instruct", "--speculative-config", {SPEC}]
  embed:
    image: vllm/vllm-openai:v0.30.0
    command: ["BAAI/bge-m3"]
"""


@pytest.mark.parametrize(
    ("chat", "version", "source"),
    [
        ("v0.27.1", "0.27.1", "image"),
        # the served service runs whatever `latest` is: not pinned, although the other
        # service's tag is
        ("latest", None, "assumed-newest"),
    ],
)
def test_the_version_is_the_serving_services_image(
    tmp_path: Path, chat: str, version: str | None, source: str
) -> None:
    from specgate.inputs.engines import read_engine_file

    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yaml").write_text(TWO_SERVICES.replace("{chat}", chat), "utf-8")
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert (config.version, config.version_source) == (version, source)
    if version is None:
        assert any("vllm/vllm-openai:latest" in note for note in config.notes)
        assert not any("v0.30.0" in note for note in config.notes)


def test_the_version_is_the_served_model_specs_tag(tmp_path: Path) -> None:
    from specgate.inputs.engines import read_engine_file

    values = """servingEngineSpec:
  modelSpec:
  - name: "embed"
    repository: "vllm/vllm-openai"
    tag: "v0.30.0"
    modelURL: "BAAI/bge-m3"
  - name: "chat"
    repository: "vllm/vllm-openai"
    tag: "v0.27.1"
    modelURL: "meta-llama/Llama-3.1-8B-Instruct"
    vllmConfig:
      extraArgs: ["--speculative-config", SPEC]
""".replace("SPEC", SPEC)
    (tmp_path / ".git").mkdir()
    (tmp_path / "values.yaml").write_text(values, "utf-8")
    config = read_engine_file(tmp_path / "values.yaml", "values.yaml")
    assert (config.version, config.version_source) == ("0.27.1", "image")


def test_an_options_files_version_is_its_launching_services_image(tmp_path: Path) -> None:
    # trtllm-serve in the `trt` service reads /cfg/spec.yaml (./trt through the volume);
    # the service runs release:1.2.0, the other service's 1.0.0 is not its image
    from specgate.inputs.engines import read_engine_file

    (tmp_path / ".git").mkdir()
    (tmp_path / "trt").mkdir()
    (tmp_path / "trt" / "spec.yaml").write_text(
        "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n"
        "  speculative_model_dir: /models/eagle3\n",
        "utf-8",
    )
    (tmp_path / "compose.yaml").write_text(
        """services:
  trt:
    image: nvcr.io/nvidia/tensorrt-llm/release:1.2.0
    volumes: ["./trt:/cfg"]
    command: trtllm-serve meta-llama/Llama-3.1-8B-Instruct --extra_llm_api_options /cfg/spec.yaml
  other:
    image: nvcr.io/nvidia/tensorrt-llm/release:1.0.0
    command: sleep infinity
""",
        "utf-8",
    )
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert (config.version, config.version_source, config.draft_length) == ("1.2.0", "image", 3)


@pytest.mark.parametrize(
    ("chat", "version"),
    [("v0.27.1", "0.27.1"), ("latest", None)],
)
def test_a_run_lines_version_is_its_own_image(
    tmp_path: Path, chat: str, version: str | None
) -> None:
    # two `docker run` lines: each container runs the image its own line names
    # (docker run [OPTIONS] IMAGE [COMMAND]); the embedding line's v0.30.0 is not the
    # speculative server's
    from specgate.inputs.engines import read_engine_file

    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text(
        "#!/bin/sh\n"
        "docker run -d vllm/vllm-openai:v0.30.0 BAAI/bge-m3 --port 8001\n"
        f"docker run -d vllm/vllm-openai:{chat} meta-llama/Llama-3.1-8B-Instruct "
        f"--speculative-config {SPEC}\n",
        "utf-8",
    )
    config = read_engine_file(tmp_path / "run.sh", "run.sh")
    assert config.version == version
    assert config.draft_length == 4


# New-user trial 1, F2: vLLM CI's post-merge images are tagged with the main-branch commit
# (vLLM's docs: `export VLLM_COMMIT=… # use full commit hash from the main branch`), which
# the lenient parse read as vLLM 21 (so medusa failed as removed) or vLLM 0. A commit pins
# nothing: medusa, accepted to 0.32.0 and refused from 0.33.0, then warns
# (docs/engines.md#versions).
POSTMERGE = """services:
  vllm:
    image: public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo:{tag}
    entrypoint: ["vllm", "serve"]
    command: >
      meta-llama/Llama-3.1-8B-Instruct
      --speculative-config '{{"method":"medusa","model":"m","num_speculative_tokens":3}}'
"""


@pytest.mark.parametrize(
    "tag", ["21a0fd3b3a1b2c3d4e5f60718293a4b5c6d7e8f9", "0d4f48f3a1b2c3d4e5f60718293a4b5c6d7e8f90"]
)
def test_a_commit_tag_pins_no_release(tmp_path: Path, tag: str) -> None:
    from specgate.inputs.engines import read_engine_file

    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yaml").write_text(POSTMERGE.format(tag=tag), "utf-8")
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert (config.version, config.version_source) == (None, "assumed-newest")
    assert any("the tag is a commit" in note for note in config.notes)
    assert [(i.code, i.severity) for i in config.issues] == [("SG307", "warn")]


# Trial 1, F3: Triton's 25.08 is its YY.MM. NVIDIA's Triton compatibility matrix lists
# TensorRT-LLM 0.21.0 in nvcr.io/nvidia/tritonserver:25.08-trtllm-python-py3, older than
# 1.2.0, where the EAGLE-1/2 LLaMA-only refusal's recorded lifetime starts: a warn.
def test_a_triton_tag_pins_the_trtllm_it_holds(tmp_path: Path) -> None:
    from specgate.inputs.engines import read_engine_file

    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yml").write_text(
        "services:\n  trt:\n    image: nvcr.io/nvidia/tritonserver:25.08-trtllm-python-py3\n"
        "    volumes: [\"./extra.yaml:/cfg/extra.yaml\"]\n"
        "    command: trtllm-serve Qwen/Qwen3-8B --extra_llm_api_options /cfg/extra.yaml\n",
        "utf-8",
    )
    (tmp_path / "extra.yaml").write_text(
        "backend: tensorrt\nspeculative_config:\n  decoding_type: Eagle\n  max_draft_len: 3\n"
        "  speculative_model_dir: /models/eagle\n",
        "utf-8",
    )
    config = read_engine_file(tmp_path / "compose.yml", "compose.yml")
    assert (config.version, config.version_source) == ("0.21.0", "image")
    assert any("25.08-trtllm-python-py3 holds TensorRT-LLM 0.21.0" in n for n in config.notes)
    found = detect_version(
        "trtllm", None, "image: nvcr.io/nvidia/tritonserver:25.04-trtllm-python-py3\n", None
    )
    assert (found.version, found.source) == (None, "assumed-newest")
    assert found.note is not None and "not in the recorded Triton/TensorRT-LLM matrix" in found.note


def test_amd_rocm_tag_pins_the_vllm_inside() -> None:
    # AMD's tag form rocmR_vllm_X.Y.Z_DATE (trial 1, V3): the vLLM release, not ROCm's 6.4.1
    found = detect_version("vllm", None, "image: rocm/vllm:rocm6.4.1_vllm_0.10.1_20250909\n", None)
    assert (found.version, found.source) == ((0, 10, 1), "image")


def test_an_unpinned_range_names_no_made_up_release(tmp_path: Path) -> None:
    # Trial 1, U2: an unpinned config is read at a listed release, never a made-up
    # "0.7.9999". vLLM's V0 flat flags are in the 0.8.0-0.8.2 wheels (arg_utils.py:779-878
    # at 0.8.0) and gone from 0.8.3: releases before 0.8.3, the newest listed 0.8.2
    from specgate.inputs.engines import read_engine_file

    (tmp_path / ".git").mkdir()
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:latest\n    command: --model m "
        "--speculative-model d --num-speculative-tokens 3\n",
        "utf-8",
    )
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml")
    assert config.implied_versions == {"from": None, "before": "0.8.3", "newest_confirmed": "0.8.2"}
    assert not any("9999" in note for note in config.notes)
    assert any("imply 0.8.2 or earlier; read as 0.8.2" in note for note in config.notes)


HELM_VALUES = """image:
{image}
args:
  - "--model"
  - "meta-llama/Llama-3.1-8B-Instruct"
  - "--speculative-config"
  - '{{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}}'
"""


@pytest.mark.parametrize(
    ("image", "version"),
    [
        # helm create's template (helm/helm pkg/chartutil/create.go@0052fe64) renders
        # "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
        ('  repository: vllm/vllm-openai\n  tag: "v0.10.2"', "0.10.2"),
        ("  repository: vllm/vllm-openai\n  tag: v0.10.2\n  pullPolicy: IfNotPresent", "0.10.2"),
        ("  registry: docker.io\n  repository: vllm/vllm-openai\n  tag: v0.27.1", "0.27.1"),
        # no tag, an empty one, or a YAML number (0.10 prints as 0.1): the chart decides
        ('  repository: vllm/vllm-openai\n  tag: ""', None),
        ("  repository: vllm/vllm-openai\n  tag: 0.10", None),
    ],
)
def test_helm_values_image_repository_and_tag(
    tmp_path: Path, image: str, version: str | None
) -> None:
    # Trial 1, V1: the common chart shape `image: {repository, tag}` was "not pinned (no tag)"
    from specgate.inputs.engines import read_engine_file

    (tmp_path / ".git").mkdir()
    (tmp_path / "values.yaml").write_text(HELM_VALUES.format(image=image), "utf-8")
    config = read_engine_file(tmp_path / "values.yaml", "values.yaml")
    assert (config.version, config.version_source) == (
        version, "image" if version else "assumed-newest"
    )
