"""Image references, image entrypoints and the argv a container runs.

Expectations come from the sources the module names: Docker's reference grammar
(distribution/reference reference.go), the Dockerfiles recorded in
image-entrypoints.json, and Docker's, Compose's and Kubernetes' documented rules for
ENTRYPOINT/CMD overrides (Kubernetes' "Notes" table in
kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/).
"""

from __future__ import annotations

import json

import pytest

from specgate.core.data import read_data
from specgate.inputs.containers import (
    container_argv,
    image_entry,
    image_version,
    known_repository,
    parse_image,
)


@pytest.mark.parametrize(
    ("text", "repository", "tag", "digest"),
    [
        ("vllm/vllm-openai:v0.26.0", "vllm/vllm-openai", "v0.26.0", None),
        ("docker.io/vllm/vllm-openai:v0.26.0", "vllm/vllm-openai", "v0.26.0", None),
        ("docker.io/library/ubuntu", "ubuntu", None, None),
        ("localhost:5000/vllm/vllm-openai", "localhost:5000/vllm/vllm-openai", None, None),
        ("registry.example.com:5000/team/vllm:v1", "registry.example.com:5000/team/vllm",
         "v1", None),
        ("ghcr.io/ggml-org/llama.cpp:server-cuda-b9733", "ghcr.io/ggml-org/llama.cpp",
         "server-cuda-b9733", None),
        ("lmsysorg/sglang@sha256:" + "a" * 64, "lmsysorg/sglang", None, "sha256:" + "a" * 64),
        ("lmsysorg/sglang:v0.5.4@sha256:" + "b" * 64, "lmsysorg/sglang", "v0.5.4",
         "sha256:" + "b" * 64),
    ],
)
def test_references_split_as_docker_reads_them(
    text: str, repository: str, tag: str | None, digest: str | None
) -> None:
    ref = parse_image(text)
    assert ref is not None
    assert (ref.repository, ref.tag, ref.digest) == (repository, tag, digest)


@pytest.mark.parametrize(
    "text", ["", "${IMAGE}", "Vllm/vllm-openai:v1", "vllm/vllm-openai:-bad", "x@sha256:12"]
)
def test_what_docker_refuses_is_no_reference(text: str) -> None:
    assert parse_image(text) is None


def test_every_entry_names_its_dockerfile_at_a_commit() -> None:
    data = json.loads(read_data("image-entrypoints.json"))
    for item in data["images"]:
        source = item["source"]
        assert source["repo"] and source["file"] and len(source["commit"]) == 40


def _argv(reference: str, *, entrypoint: list[str] | None = None,
          command: list[str] | None = None) -> tuple[str, ...]:
    ref = parse_image(reference)
    assert ref is not None
    argv = container_argv(image_entry(ref), entrypoint=entrypoint, command=command)
    assert argv.unsettled is None
    return argv.words


def test_vllm_openai_command_follows_vllm_serve() -> None:
    # vllm docker/Dockerfile: ENTRYPOINT ["vllm", "serve"], no CMD.
    assert _argv("vllm/vllm-openai:v0.26.0", command=["/models/x", "--port", "8000"]) == (
        "vllm", "serve", "/models/x", "--port", "8000")


def test_llamacpp_server_image_runs_llama_server() -> None:
    # llama.cpp .devops/cuda.Dockerfile, stage server: ENTRYPOINT [ "/app/llama-server" ].
    assert _argv("ghcr.io/ggml-org/llama.cpp:server-cuda-b9733", command=["-m", "m.gguf"]) == (
        "/app/llama-server", "-m", "m.gguf")
    assert _argv("ghcr.io/ggml-org/llama.cpp:server", command=[]) == ("/app/llama-server",)
    # stage light: llama-cli; no stage named 'nightly': no entry.
    assert _argv("ghcr.io/ggml-org/llama.cpp:light-b1", command=[]) == ("/app/llama-cli",)
    ref = parse_image("ghcr.io/ggml-org/llama.cpp:nightly")
    assert ref is not None and image_entry(ref) is None and known_repository(ref)


def test_images_without_entrypoint_run_the_command_itself() -> None:
    # sglang docker/Dockerfile and TensorRT-LLM's release stage set no ENTRYPOINT.
    command = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
    assert _argv("lmsysorg/sglang:v0.5.4-cu129", command=command) == tuple(command)
    assert _argv("nvcr.io/nvidia/tensorrt-llm/release:1.2.0", command=["trtllm-serve", "m"]) == (
        "trtllm-serve", "m")


def test_tgi_entrypoint_script_runs_the_launcher_with_split_arguments() -> None:
    # tgi-entrypoint.sh: `exec text-generation-launcher $@` (unquoted: bash splits).
    assert _argv("ghcr.io/huggingface/text-generation-inference:3.3.7",
                 command=["--model-id", "a b"]) == (
        "text-generation-launcher", "--model-id", "a", "b")
    ref = parse_image("ghcr.io/huggingface/text-generation-inference:3.3.7")
    assert ref is not None
    assert container_argv(image_entry(ref), entrypoint=None, command=["*.json"]).unsettled


@pytest.mark.parametrize(
    ("entrypoint", "command", "expected"),
    [
        # Kubernetes' Notes table, with image ENTRYPOINT [vllm, serve] and (here) no CMD:
        (None, None, ("vllm", "serve")),                    # neither: image's own
        (None, ["m"], ("vllm", "serve", "m")),              # args only: ENTRYPOINT + args
        (["python3", "-m", "x"], None, ("python3", "-m", "x")),  # command only: image CMD dropped
        (["sh", "-c"], ["run.sh"], ("sh", "-c", "run.sh")),  # both: command + args
        ([], ["vllm", "serve", "m"], ("vllm", "serve", "m")),  # Compose `entrypoint: []` clears it
    ],
)
def test_overrides_follow_docker_compose_and_kubernetes(
    entrypoint: list[str] | None, command: list[str] | None, expected: tuple[str, ...]
) -> None:
    assert _argv("vllm/vllm-openai:v0.26.0", entrypoint=entrypoint, command=command) == expected


def test_an_unknown_image_settles_only_with_its_entrypoint_overridden() -> None:
    assert container_argv(None, entrypoint=None, command=["--model", "m"]).unsettled
    assert container_argv(None, entrypoint=["vllm"], command=["serve", "m"]).words == (
        "vllm", "serve", "m")


_VLLM_FORMS = (
    "not a release tag (vLLM's are vX.Y.Z; nightly-COMMIT and feature tags such as gptoss "
    "name no release)"
)
_COMMIT = "the tag is a commit, not a release"


# Contract change (new-user trial 1, F2/F3/V3/V4): a tag pins a release only in its image
# family's own tag forms (data/image-tags.json); a commit SHA says so; a release tag
# beside a digest is read (Renovate's `vX@sha256:` form), `latest` and a bare digest name
# no release. Values: the published tag forms named in each family's source.
@pytest.mark.parametrize(
    ("reference", "version", "reason"),
    [
        ("vllm/vllm-openai:v0.26.0", "0.26.0", None),
        ("vllm/vllm-openai:v0.10.1.1", "0.10.1.1", None),
        ("vllm/vllm-openai:nightly-0123abcd", None, _COMMIT),
        ("vllm/vllm-openai:nightly", None, _VLLM_FORMS),
        ("vllm/vllm-openai:gptoss", None, _VLLM_FORMS),
        ("vllm/vllm-openai:v0.9.0.post1", "0.9.0.post1", None),
        ("vllm/vllm-tpu:v0.12.0", "0.12.0", None),
        # vLLM CI's post-merge images: every tag a main-branch commit (7-40 hex digits)
        ("public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo:21a0fd3b" + "0" * 32, None, _COMMIT),
        ("public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo:0d4f48f", None, _COMMIT),
        # AMD's tags: the vLLM release follows `vllm`/`vllm_`, never ROCm's number
        ("rocm/vllm:rocm6.4.1_vllm_0.10.1_20250909", "0.10.1", None),
        ("rocm/vllm:rocm6.3.1_vllm0.8.5_20250521", "0.8.5", None),
        ("rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4", "0.6.4", None),
        ("rocm/vllm:rocm7.0_vllm_qwen3coder_next", None,
         "not one of AMD's tag forms (rocmR_..._vllm_X.Y.Z[_DATE]), so no vLLM release is named"),
        ("ghcr.io/ggml-org/llama.cpp:server-cuda-b9733", "b9733", None),
        ("ghcr.io/ggml-org/llama.cpp:server-cuda", None,
         "not a build tag (llama.cpp's are server[-VARIANT]-bNNNN)"),
        ("lmsysorg/sglang:v0.5.4-cu129", "0.5.4", None),
        # a release candidate as published (a Truss config, tests/data/published-2026-12/09)
        # the release candidate stays a candidate (docs/engines.md#pre-releases)
        ("lmsysorg/sglang:v0.5.3rc1-cu126", "0.5.3rc1", None),
        ("nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc5", "1.1.0rc5", None),
        # Triton's YY.MM through NVIDIA's compatibility matrix (25.08 holds TensorRT-LLM
        # 0.21.0, 25.12 1.1.0); a release not in the recorded rows pins nothing
        ("nvcr.io/nvidia/tritonserver:25.08-trtllm-python-py3", "0.21.0", None),
        ("nvcr.io/nvidia/tritonserver:25.12-trtllm-python-py3", "1.1.0", None),
        ("nvcr.io/nvidia/tritonserver:25.03-trtllm-python-py3", None,
         "Triton's YY.MM release, not a TensorRT-LLM version, and not in the recorded "
         "Triton/TensorRT-LLM matrix (only the -trtllm-python-py3 containers hold TensorRT-LLM)"),
        ("nvcr.io/nvidia/tritonserver:25.08-py3", None,
         "Triton's YY.MM release, not a TensorRT-LLM version, and not in the recorded "
         "Triton/TensorRT-LLM matrix (only the -trtllm-python-py3 containers hold TensorRT-LLM)"),
        ("vllm/vllm-openai:latest", None, "latest names no release"),
        ("vllm/vllm-openai:latest@sha256:" + "c" * 64, None,
         "latest names no release, and specgate maps no digest to one"),
        ("vllm/vllm-openai", None, "no tag"),
        ("vllm/vllm-openai@sha256:" + "c" * 64, None,
         "a digest, which specgate maps to no release"),
        ("vllm/vllm-openai:v0.26.0@sha256:" + "c" * 64, "0.26.0", None),
        ("example.com/other:v1.0.0", None, "an image of no recorded family"),
    ],
)
def test_version_from_the_tag(reference: str, version: str | None, reason: str | None) -> None:
    ref = parse_image(reference)
    assert ref is not None
    found = image_version(ref)
    assert (found.text, found.pinned, found.reason) == (version, version is not None, reason)


def test_every_engine_image_has_its_tag_forms() -> None:
    # docs/engines.md#versions: a tag pins a release only in its family's own forms, so
    # every image an engine's knowledge names has a family in image-tags.json (no
    # lenient reading of any tag: trial 1, F2/F3)
    from specgate.inputs.containers import tag_form
    from specgate.inputs.knowledge import knowledge

    for engine in ("vllm", "sglang", "llamacpp", "trtllm", "tgi", "transformers", "mlxlm"):
        for name in knowledge(engine).images:
            ref = parse_image(f"{name}:x")
            assert ref is not None, name
            form = tag_form(ref)
            assert form is not None and form.engine == engine, name
            assert form.unpinned and form.source, name


# trial3/14: an image pulled through a registry mirror keeps the upstream repository
# path after the mirror's host (and any path the mirror puts before it), so it is of
# the upstream family: ENTRYPOINT ["vllm", "serve"] (vllm-project/vllm docker/Dockerfile
# @dead20ba) and the release its tag names. A host-less three-part name is not a mirror
# (Docker Hub names have two parts), and a family's path inside another name is not it.
@pytest.mark.parametrize(
    ("reference", "version"),
    [
        ("registry.internal.example.com:5000/mirror/vllm/vllm-openai:v0.30.0", "0.30.0"),
        ("myregistry.local/vllm/vllm-openai:v0.10.1", "0.10.1"),
        ("localhost:5000/vllm/vllm-openai:v0.26.0", "0.26.0"),
        ("docker.io/vllm/vllm-openai:v0.26.0", "0.26.0"),
        ("ghcr.io/acme/vllm/vllm-openai:v0.11.0", "0.11.0"),
    ],
)
def test_a_mirrored_image_is_of_its_upstream_family(reference: str, version: str) -> None:
    ref = parse_image(reference)
    assert ref is not None
    entry = image_entry(ref)
    assert entry is not None and entry.entrypoint == ("vllm", "serve")
    assert image_version(ref).text == version
    from specgate.inputs.containers import images_of

    found = images_of("vllm", f"    image: {reference}\n")
    assert found is not None and [pin.version for pin in found.pinned] == [version]


@pytest.mark.parametrize(
    "reference",
    ["acme/vllm-openai:v0.30.0", "example.com/vllm-openai-fork:v0.30.0",
     "example.com/vllm/vllm-openai-fork:v0.30.0"],
)
def test_a_name_that_only_resembles_a_family_is_not_of_it(reference: str) -> None:
    ref = parse_image(reference)
    assert ref is not None
    assert image_entry(ref) is None and not known_repository(ref)
    from specgate.inputs.containers import images_of

    found = images_of("vllm", f"    image: {reference}\n")
    assert found is not None and found.pinned == ()
