"""What vLLM 0.34.0 changed, pinned at each side of the boundary (issue 27).

Read in the vllm 0.34.0 wheel and the vllm 0.33.0 wheel, and answered by each release
itself (tests/data/engine_oracle/vllm-0.34.0.json, vllm-0.33.0.json):

- ``parallel_drafting: true`` outside dflash/dspark is refused from 0.34.0
  (SpeculativeConfig._verify_args, vllm/config/speculative.py:1688-1693 at 0.34.0:
  "parallel_drafting is only supported by the dflash and dspark methods, not 'ngram'.";
  0.33.0 accepts it:
  the parallel cases, e.g. vllm-0547-parallel);
- a ``draft_model`` draft at tensor parallel size 1 beside a target at 2 is refused at
  start through 0.33.0 (DraftModelProposer._raise_if_draft_tp_mismatch,
  vllm/v1/spec_decode/draft_model.py:63 at 0.33.0) and runs at 0.34.0, whose V1 proposers
  are gone (Model Runner V2's standalone_ar speculator builds the draft with its own
  draft_parallel_config; its answers accept it, vllm-0324-draft-tp);
- suffix decoding with num_speculative_tokens unset drafts its tree depth (24) through
  0.33.0 and min(8, depth) from 0.34.0 (vllm/v1/worker/gpu/spec_decode/suffix/config.py:25-28;
  vllm-0017-method-no-d: 24 at 0.33.0, 8 at 0.34.0).
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401


def _run(check: Run, block: str, version: str, extra: str = "") -> dict[str, object]:  # noqa: F811
    serve = f"vllm serve meta-llama/Llama-3.1-8B-Instruct {extra}--speculative-config '{block}'\n"
    _code, dep = check(
        {"c.specgate.yaml": claims("vllm", "serve.txt", version=version), "serve.txt": serve}
    )
    return dep


@pytest.mark.parametrize(("version", "refused"), [("0.33.0", False), ("0.34.0", True)])
def test_parallel_drafting_outside_dflash_dspark(
    check: Run,  # noqa: F811
    version: str,
    refused: bool,
) -> None:
    block = '{"method": "ngram", "num_speculative_tokens": 3, "parallel_drafting": true}'
    dep = _run(check, block, version)
    fails = [m for s, _, m in found(dep, "SG307") if s == "fail" and "parallel_drafting" in m]
    assert bool(fails) == refused, found(dep, "SG307")


@pytest.mark.parametrize(("version", "refused"), [("0.33.0", True), ("0.34.0", False)])
def test_draft_model_at_tp_1_beside_target_tp_2(
    check: Run,  # noqa: F811
    version: str,
    refused: bool,
) -> None:
    block = (
        '{"method": "draft_model", "model": "d", "num_speculative_tokens": 3, '
        '"draft_tensor_parallel_size": 1}'
    )
    dep = _run(check, block, version, extra="--tensor-parallel-size 2 ")
    fails = [m for s, _, m in found(dep, "SG307") if s == "fail" and "must run at the" in m]
    assert bool(fails) == refused, found(dep, "SG307")


@pytest.mark.parametrize(("version", "d"), [("0.33.0", 24), ("0.34.0", 8)])
def test_suffix_draft_length_unset(check: Run, version: str, d: int) -> None:  # noqa: F811
    dep = _run(check, '{"method": "suffix"}', version)
    engine = dep["inputs"]["engine"]  # type: ignore[index]
    assert engine["draft_length"] == d, engine  # type: ignore[index]
