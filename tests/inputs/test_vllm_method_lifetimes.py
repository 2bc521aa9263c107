"""The methods each vLLM release accepts (new-user trial M3; docs/engines.md#versions).

``SpeculativeConfig.method`` is the ``SpeculativeMethod`` Literal, validated by pydantic
from 0.9.1 (``@config @dataclass`` from ``pydantic.dataclasses``; 0.8.5 and 0.9.0 put it
on a stdlib dataclass). Each boundary below was read in the Literal of the PyPI wheels on
both sides (``pip download --no-deps vllm==V``, the Literal read with Python's ``ast``):
vllm/config.py:2340-2341 (0.9.1), vllm/config/__init__.py:1882-1884 (0.10.2, no ``mtp``),
vllm/config/speculative.py:32-35 (0.11.0, ``mtp``, ``mimo_mtp`` and
``longcat_flash_mtp`` added), :43-50 (0.11.1 and 0.14.0), :45-52 (0.15.0), :46-53
(0.15.1, 0.16.0), :50-57 (0.17.0, 0.17.1), :51-59 (0.18.0) and :52-60 (0.19.0).
"""

from __future__ import annotations

import pytest
from tests.inputs.test_vllm_old_releases import serve


def _method_refusals(method: str, version: str) -> list[str | None]:
    block = f'{{"method": "{method}", "model": "d", "num_speculative_tokens": 1}}'
    return [
        i.severity for i in serve(f"--speculative-config '{block}'", version).issues
        if i.code == "SG307" and f"speculative method {method!r}" in i.message
    ]


@pytest.mark.parametrize(
    ("method", "last_without", "first_with"),
    [
        ("ernie_mtp", "0.10.1.1", "0.10.2"),
        ("qwen3_next_mtp", "0.10.1.1", "0.10.2"),
        ("mtp", "0.10.2", "0.11.0"),
        ("mimo_mtp", "0.10.2", "0.11.0"),
        ("longcat_flash_mtp", "0.10.2", "0.11.0"),
        ("suffix", "0.11.0", "0.11.1"),
        ("glm4_moe_mtp", "0.11.0", "0.11.1"),
        ("pangu_ultra_moe_mtp", "0.11.0", "0.11.1"),
        ("exaone_moe_mtp", "0.13.0", "0.14.0"),
        ("glm4_moe_lite_mtp", "0.14.1", "0.15.0"),
        ("step3p5_mtp", "0.15.0", "0.15.1"),
        ("glm_ocr_mtp", "0.15.1", "0.16.0"),
        ("extract_hidden_states", "0.16.0", "0.17.0"),
        ("nemotron_h_mtp", "0.16.0", "0.17.0"),
        ("qwen3_5_mtp", "0.16.0", "0.17.0"),
        ("ngram_gpu", "0.17.1", "0.18.0"),
    ],
)
def test_a_method_fails_before_its_first_release_and_passes_from_it(
    method: str, last_without: str, first_with: str
) -> None:
    assert _method_refusals(method, last_without) == [None]  # a fail
    assert _method_refusals(method, first_with) == []


@pytest.mark.parametrize("method", ["eagle3", "deepseek_mtp", "medusa", "draft_model"])
def test_the_methods_of_0_9_1_pass_there(method: str) -> None:
    assert _method_refusals(method, "0.9.1") == []


def test_a_method_newer_than_every_release_read_fails_at_0_19_0() -> None:
    # dflash: not in any Literal from 0.9.1 to 0.19.0 (nor 0.19.1, vllm.json versions)
    assert _method_refusals("dflash", "0.19.0") == [None]
    assert _method_refusals("dflash", "0.9.2") == [None]


def test_before_pydantic_validated_the_method_it_is_not_known() -> None:
    # 0.9.0 declares the Literal on a stdlib dataclass (vllm/config.py:2263-2264, 2269-2271):
    # not validated, so not recorded: a warning, never a fail
    assert _method_refusals("mtp", "0.9.0") == ["warn"]
