"""The digest's ``target_model`` from the forms users write (docs/change-gate.md#config-digest: "the
engine config's model, else model.name").

Each expected digest is computed here, independently of specgate: SHA-256 over the
canonical JSON written out by hand (keys sorted: draft_length, draft_length_is_max,
draft_model, draft_passes, engine, lossy_acceptance, mechanism, target_model,
tensor_parallel_size, verify_tokens; no spaces). The claims file names its model
``claims-name``, so a digest carrying the served model proves it came from the
engine config.

Engine sources (the flag spellings live in specgate/data/engines/*.json):
- vLLM ``vllm/entrypoints/cli/serve.py`` @00a5fdd: ``vllm serve [model_tag]``; the
  positional tag replaces ``--model``;
- SGLang ``python/sglang/cli/serve.py`` @0298b5b: ``sglang serve <model>`` becomes a
  leading ``--model-path``, so an explicit ``--model-path`` wins;
- TensorRT-LLM ``tensorrt_llm/commands/serve.py`` @00209af: ``trtllm-serve [serve]
  MODEL``; the options YAML's keys are merged over it, so its ``model:`` wins;
- llama.cpp ``common/arg.cpp`` @145b628: ``-m/--model``, ``-hf/-hfr/--hf-repo``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from specgate.check.run import CheckOptions, check_file

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3_HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
SC = (
    '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", '
    '"num_speculative_tokens": 3}'
)
CLAIMS = """\
version: 1
deployments:
  - name: d
    model: {{name: claims-name}}
    speculation: {{enabled: true, engine: {engine}, engine_config: serving/{file}}}
    evidence: {{accept_length: 2.6}}
"""


def _hashed(canonical: str) -> str:
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _digest(tmp_path: Path, engine: str, file: str, text: str) -> str:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "serving").mkdir(exist_ok=True)
    (tmp_path / "serving" / file).write_text(text, encoding="utf-8")
    (tmp_path / "specgate.yaml").write_text(
        CLAIMS.format(engine=engine, file=file), encoding="utf-8"
    )
    report = check_file(tmp_path / "specgate.yaml", "specgate.yaml", CheckOptions())
    assert report.error is None, report.error
    return str(report.deployments[0].config_digest)


# vLLM EAGLE-3, D 3 → N 4, per-token drafting, TP unknown: docs/change-gate.md#config-digest's
# worked example.
def _vllm(target: str) -> str:
    return _hashed(
        '{"draft_length":3,"draft_length_is_max":false,'
        '"draft_model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","draft_passes":"per_token",'
        '"engine":"vllm","lossy_acceptance":false,"mechanism":"eagle3",'
        f'"target_model":"{target}","tensor_parallel_size":null,"verify_tokens":4}}'
    )


def test_the_hand_written_vllm_canonical_json_is_the_design_example() -> None:
    assert _vllm(LLAMA) == "sha256:24babb0907610e78"  # docs/change-gate.md#config-digest


@pytest.mark.parametrize(
    ("file", "text", "target"),
    [
        # vllm serve MODEL (command line in a text file)
        ("serve.sh", f"vllm serve {LLAMA} \\\n  --speculative-config '{SC}'\n", LLAMA),
        # the same as an argv list in a launcher YAML
        (
            "launch.yaml",
            f"command: [vllm, serve, {LLAMA}, --speculative-config, '{SC}']\n",
            LLAMA,
        ),
        # the positional tag replaces --model (ServeSubcommand.cmd)
        ("both.sh", f"vllm serve {LLAMA} --model other/model --speculative-config '{SC}'\n", LLAMA),
        # the API server module with --model (no positional)
        (
            "api.sh",
            f"python -m vllm.entrypoints.openai.api_server --model {LLAMA} "
            f"--speculative-config '{SC}'\n",
            LLAMA,
        ),
        # a `vllm serve --config` YAML with a model key
        (
            "serve.yaml",
            f"model: {LLAMA}\nspeculative-config:\n  method: eagle3\n"
            f"  model: {EAGLE3_HEAD}\n  num_speculative_tokens: 3\n",
            LLAMA,
        ),
        # a bare speculative block names no target (its model is the draft): model.name
        (
            "block.yaml",
            f"method: eagle3\nmodel: {EAGLE3_HEAD}\nnum_speculative_tokens: 3\n",
            "claims-name",
        ),
        # a flag's value is never taken for the positional model
        (
            "flag.sh",
            f"vllm serve --speculative-config '{SC}' --served-model-name x\n",
            "claims-name",
        ),
    ],
)
def test_vllm_target_model(tmp_path: Path, file: str, text: str, target: str) -> None:
    assert _digest(tmp_path, "vllm", file, text) == _vllm(target)


# SGLang EAGLE-3: --speculative-num-steps 3 (D), --speculative-num-draft-tokens 4 (N).
SGLANG_SPEC = (
    "--speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B "
    "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
)


def _sglang(target: str) -> str:
    return _hashed(
        '{"draft_length":3,"draft_length_is_max":false,'
        '"draft_model":"jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B",'
        '"draft_passes":"per_token","engine":"sglang","lossy_acceptance":false,'
        f'"mechanism":"eagle3","target_model":"{target}","tensor_parallel_size":null,'
        '"verify_tokens":4}'
    )


@pytest.mark.parametrize(
    ("text", "target"),
    [
        (f"python -m sglang.launch_server --model-path {LLAMA} {SGLANG_SPEC}\n", LLAMA),
        (f"python -m sglang.launch_server --model {LLAMA} {SGLANG_SPEC}\n", LLAMA),
        (f"sglang serve {LLAMA} {SGLANG_SPEC}\n", LLAMA),
        # serve MODEL becomes a leading --model-path: the explicit one wins
        (f"sglang serve other/model --model-path {LLAMA} {SGLANG_SPEC}\n", LLAMA),
    ],
)
def test_sglang_target_model(tmp_path: Path, text: str, target: str) -> None:
    assert _digest(tmp_path, "sglang", "launch.sh", text) == _sglang(target)


TRT_BLOCK = (
    "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n"
    f"  speculative_model_dir: {EAGLE3_HEAD}\n"
)


def _trtllm(target: str) -> str:
    return _hashed(
        '{"draft_length":3,"draft_length_is_max":false,'
        '"draft_model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","draft_passes":"per_token",'
        '"engine":"trtllm","lossy_acceptance":false,"mechanism":"eagle3",'
        f'"target_model":"{target}","tensor_parallel_size":null,"verify_tokens":4}}'
    )


def _indented(block: str) -> str:
    return "".join(f"  {line}\n" for line in block.splitlines())


@pytest.mark.parametrize(
    ("text", "target"),
    [
        # the LLM-API options YAML states the model
        (f"model: {LLAMA}\n{TRT_BLOCK}", LLAMA),
        # trtllm-serve MODEL beside the options block in the same launcher file
        (
            f"command: trtllm-serve {LLAMA} --extra_llm_api_options /cfg/spec.yaml\n"
            f"options:\n{_indented(TRT_BLOCK)}",
            LLAMA,
        ),
        # trtllm-serve serve MODEL (the explicit subcommand), as an argv list
        (
            f"args: [trtllm-serve, serve, {LLAMA}, --config, /cfg/spec.yaml]\n"
            f"options:\n{_indented(TRT_BLOCK)}",
            LLAMA,
        ),
        # the YAML's keys are merged over the command's: its model wins
        (
            "command: trtllm-serve other/model --config /cfg/spec.yaml\n"
            f"options:\n  model: {LLAMA}\n{_indented(TRT_BLOCK)}",
            LLAMA,
        ),
        # no model stated anywhere: model.name
        (TRT_BLOCK, "claims-name"),
    ],
)
def test_trtllm_target_model(tmp_path: Path, text: str, target: str) -> None:
    assert _digest(tmp_path, "trtllm", "serve.yaml", text) == _trtllm(target)


def test_two_commands_naming_different_models_name_no_target(tmp_path: Path) -> None:
    text = (
        "prefill: trtllm-serve a/model --config x.yaml\n"
        "decode: trtllm-serve b/model --config x.yaml\n"
        f"options:\n{_indented(TRT_BLOCK)}"
    )
    assert _digest(tmp_path, "trtllm", "serve.yaml", text) == _trtllm("claims-name")


# llama.cpp draft model, --spec-draft-n-max 16 → D 16, N 17 (newest builds: p-min 0).
def _llamacpp(target: str) -> str:
    return _hashed(
        '{"draft_length":16,"draft_length_is_max":false,"draft_model":"models/draft-0.5b.gguf",'
        '"draft_passes":"per_token","engine":"llamacpp","lossy_acceptance":false,'
        f'"mechanism":"draft_model","target_model":"{target}","tensor_parallel_size":null,'
        '"verify_tokens":17}'
    )


QWEN_HF = "ggml-org/Qwen2.5-Coder-7B-Instruct-Q8_0-GGUF"


@pytest.mark.parametrize(
    ("model_flags", "target"),
    [
        ("-m models/qwen2.5-7b-q8_0.gguf", "models/qwen2.5-7b-q8_0.gguf"),
        ("--model models/qwen2.5-7b-q8_0.gguf", "models/qwen2.5-7b-q8_0.gguf"),
        (f"-hf {QWEN_HF}", QWEN_HF),
        (f"--hf-repo {QWEN_HF}", QWEN_HF),
        # with -hf, -m names the file inside the repository: the repository is the target
        (f"-hfr {QWEN_HF} -m qwen2.5-coder-7b-instruct-q8_0.gguf", QWEN_HF),
    ],
)
def test_llamacpp_target_model(tmp_path: Path, model_flags: str, target: str) -> None:
    text = f"llama-server {model_flags} -md models/draft-0.5b.gguf --spec-draft-n-max 16\n"
    assert _digest(tmp_path, "llamacpp", "server.sh", text) == _llamacpp(target)


def test_transformers_generation_config_names_no_target(tmp_path: Path) -> None:
    # prompt lookup, 10 tokens: n-gram, D 10 (a maximum), N 11; no model in the file.
    text = '{"max_new_tokens": 64, "prompt_lookup_num_tokens": 10}\n'
    expected = _hashed(
        '{"draft_length":10,"draft_length_is_max":true,"draft_model":null,'
        '"draft_passes":"per_token","engine":"transformers","lossy_acceptance":false,'
        '"mechanism":"ngram","target_model":"claims-name","tensor_parallel_size":null,'
        '"verify_tokens":11}'
    )
    assert _digest(tmp_path, "transformers", "generation_config.json", text) == expected
